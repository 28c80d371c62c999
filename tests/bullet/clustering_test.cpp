// The adapters' shared internals (plugin/src/bullet/clustering.h) on their
// own: the union–find clustering of a batch, the Routh tangent frame, the
// seed mixing and the per-cluster strike rule. (Point hiding is tested
// through solveGroup in handoff_test.cpp.)
#include "bullet/clustering.h"

#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletCollision/NarrowPhaseCollision/btManifoldPoint.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btPoint2PointConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <cmath>
#include <cstdint>
#include <memory>
#include <set>
#include <unordered_map>
#include <utility>
#include <vector>

namespace {

namespace internal = simpact::bullet::internal;

/// Orthonormality of computed frames: a few roundings of unit vectors.
constexpr double kFrameTolerance = 1e-14;

// A batch as build_clusters sees it: nodes are the rigid bodies added so
// far, points join two nodes (or a node and an immovable partner, −1).
struct FakeBatch {
  std::vector<const btRigidBody*> nodes;
  std::unordered_map<const btRigidBody*, int> index;
  std::vector<std::pair<int, int>> points;
  int num_nodes() const { return static_cast<int>(nodes.size()); }
  int node(const btRigidBody* body) const {
    ++lookups;
    const auto it = index.find(body);
    return it == index.end() ? -1 : it->second;
  }
  mutable std::int64_t lookups = 0;  // node() calls, for the walk's cost
  void add(btRigidBody* body) {
    if (index.emplace(body, num_nodes()).second) nodes.push_back(body);
  }
  int num_points() const { return static_cast<int>(points.size()); }
  int end_a(int k) const { return points[static_cast<size_t>(k)].first; }
  int end_b(int k) const { return points[static_cast<size_t>(k)].second; }
};

struct Bodies {
  btSphereShape shape{0.1};
  std::vector<std::unique_ptr<btRigidBody>> body;
  explicit Bodies(int n) {
    for (int i = 0; i < n; ++i) {
      btRigidBody::btRigidBodyConstructionInfo info(1, nullptr, &shape, btVector3(1, 1, 1));
      body.push_back(std::make_unique<btRigidBody>(info));
    }
  }
};

// A chain of J bodies on J − 1 joints, touching nothing but the first
// body, with its joints listed from the far end (Bullet hands joints over
// sorted by island, in no particular order within one): every body is
// pulled in, in one cluster, in walk order, and the walk asks O(J) node
// lookups (repeated scans until nothing grew asked ~J²).
TEST(Clustering, JointsPullInAChainListedFromItsFarEnd) {
  constexpr int kBodies = 200;
  Bodies b(kBodies);
  FakeBatch batch;
  batch.add(b.body[0].get());
  batch.points = {{0, -1}};
  std::vector<std::unique_ptr<btPoint2PointConstraint>> links;
  for (int i = kBodies - 1; i >= 1; --i)
    links.push_back(std::make_unique<btPoint2PointConstraint>(*b.body[static_cast<size_t>(i - 1)],
                                                              *b.body[static_cast<size_t>(i)], btVector3(0.1, 0, 0),
                                                              btVector3(-0.1, 0, 0)));
  std::vector<btTypedConstraint*> joints;
  for (const auto& link : links) joints.push_back(link.get());
  internal::Clusters out;
  internal::build_clusters(batch, joints.data(), static_cast<int>(joints.size()), out);
  const std::int64_t lookups = batch.lookups;
  ASSERT_EQ(out.num_nodes, kBodies);
  for (int i = 0; i < kBodies; ++i) EXPECT_EQ(batch.node(b.body[static_cast<size_t>(i)].get()), i) << "walk order";
  EXPECT_EQ(out.members[0].size(), static_cast<size_t>(kBodies));
  // Per joint: two lookups in the scan, two more when each of its bodies
  // is walked, two in the union pass.
  EXPECT_LE(lookups, 8 * static_cast<std::int64_t>(joints.size()));
}

TEST(Clustering, UnionFindRootsAreTheLowestIndex) {
  std::vector<int> parent = {0, 1, 2, 3, 4};
  internal::unite(parent, 4, 2);
  internal::unite(parent, 3, 4);
  internal::unite(parent, 1, 0);
  EXPECT_EQ(internal::find_root(parent, 3), 2);
  EXPECT_EQ(internal::find_root(parent, 4), 2);
  EXPECT_EQ(internal::find_root(parent, 1), 0);
  EXPECT_EQ(internal::find_root(parent, 0), 0);
  internal::unite(parent, 4, 1);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(internal::find_root(parent, i), 0) << i;
}

// Bodies 0–1 touch, 2 touches the ground only, 3 hangs from 2 by a joint
// and touches nothing (pulled in), 4 is jointed to 5 by a DISABLED joint
// (neither pulled in nor joined). Clusters: {0, 1}, {2, 3} and points by root.
TEST(Clustering, ContactsAndEnabledJointsJoinNodesAndPullInPartners) {
  Bodies b(6);
  FakeBatch batch;
  for (int i : {0, 1, 2, 4}) batch.add(b.body[static_cast<size_t>(i)].get());
  // node indices: 0→0, 1→1, 2→2, 4→3
  batch.points = {{0, 1}, {2, -1}, {-1, 3}};
  btPoint2PointConstraint hang(*b.body[2], *b.body[3], btVector3(0, -0.1, 0), btVector3(0, 0.1, 0));
  btPoint2PointConstraint off(*b.body[4], *b.body[5], btVector3(0, 0, 0), btVector3(0, 0, 0));
  off.setEnabled(false);
  btTypedConstraint* joints[] = {&hang, &off};
  internal::Clusters out;
  internal::build_clusters(batch, joints, 2, out);
  ASSERT_EQ(out.num_nodes, 5) << "body 3 is pulled in by its enabled joint, body 5 is not";
  EXPECT_EQ(batch.node(b.body[3].get()), 4);
  EXPECT_EQ(batch.node(b.body[5].get()), -1);
  EXPECT_EQ(out.members[0], (std::vector<int>{0, 1}));
  EXPECT_EQ(out.members[2], (std::vector<int>{2, 4}));
  EXPECT_EQ(out.members[3], (std::vector<int>{3}));
  EXPECT_TRUE(out.members[1].empty());
  EXPECT_EQ(out.points[0], (std::vector<int>{0}));
  EXPECT_EQ(out.points[2], (std::vector<int>{1}));
  EXPECT_EQ(out.points[3], (std::vector<int>{2}));
}

// Without a slip above kSlipFrameTolerance × approach, the frame is
// btPlaneSpace1's; with one, t1 follows it. Either way (n, t1, t2) is
// right-handed and orthonormal.
TEST(TangentFrame, FollowsASlipAboveTheToleranceElsePlaneSpace) {
  const Eigen::Vector3d n = Eigen::Vector3d(0.3, 0.9, -0.2).normalized();
  Eigen::Vector3d p, q;
  internal::plane_space(n, p, q);
  const double approach = 2.0;
  for (const double slip_size : {0.0, 0.5 * simpact::bullet::kSlipFrameTolerance * approach, 0.1, 3.0}) {
    Eigen::Vector3d slip = Eigen::Vector3d(1, 0, 0.5);
    slip = (slip - slip.dot(n) * n).normalized() * slip_size;
    Eigen::Vector3d t1, t2;
    internal::tangent_frame(n, slip, approach, t1, t2);
    EXPECT_NEAR(t1.norm(), 1.0, kFrameTolerance);
    EXPECT_NEAR(t2.norm(), 1.0, kFrameTolerance);
    EXPECT_NEAR(t1.dot(n), 0.0, kFrameTolerance);
    EXPECT_NEAR(t1.dot(t2), 0.0, kFrameTolerance);
    EXPECT_NEAR((n.cross(t1) - t2).norm(), 0.0, kFrameTolerance) << "t2 = n × t1";
    if (slip_size > simpact::bullet::kSlipFrameTolerance * approach) {
      EXPECT_NEAR((t1 - slip.normalized()).norm(), 0.0, kFrameTolerance) << "slip " << slip_size;
    } else {
      EXPECT_EQ(t1, p) << "slip " << slip_size;
      EXPECT_EQ(t2, q);
    }
  }
}

// btPlaneSpace1 in double: the same branches and formulas as Bullet's.
TEST(TangentFrame, PlaneSpaceMatchesBullet) {
  for (const Eigen::Vector3d& n : {Eigen::Vector3d(0, 0, 1), Eigen::Vector3d(0.6, 0.8, 0),
                                   Eigen::Vector3d(0.2, -0.3, 0.9).normalized()}) {
    Eigen::Vector3d p, q;
    internal::plane_space(n, p, q);
    btVector3 bp, bq;
    btPlaneSpace1(btVector3(btScalar(n.x()), btScalar(n.y()), btScalar(n.z())), bp, bq);
    const double tolerance = sizeof(btScalar) == sizeof(double) ? 1e-15 : 1e-6;
    for (int i = 0; i < 3; ++i) {
      EXPECT_NEAR(p[i], double(bp[i]), tolerance);
      EXPECT_NEAR(q[i], double(bq[i]), tolerance);
    }
  }
}

// SplitMix64's finalizer (Steele, Lea & Flood 2014) written out here from
// its published constants, against the adapters' mix_seed; and the Routh
// seed as documented: mix(mix(seed, steps), key).
std::uint64_t SplitMix64(std::uint64_t state) {
  std::uint64_t z = state + 0x9E3779B97F4A7C15ULL;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

TEST(Seeds, MixIsSplitMix64AtTheCountersStateAndRouthSeedsNestIt) {
  std::set<std::uint64_t> seen;
  for (std::uint64_t seed : {0ULL, 1ULL, 2027ULL, ~0ULL}) {
    for (std::uint64_t counter : {0ULL, 1ULL, 7ULL, 1ULL << 40}) {
      const std::uint64_t expected = SplitMix64(seed + 0x9E3779B97F4A7C15ULL * counter);
      EXPECT_EQ(internal::mix_seed(seed, counter), expected);
      seen.insert(internal::mix_seed(seed, counter));
    }
    EXPECT_EQ(internal::routh_seed(seed, 12, 3), internal::mix_seed(internal::mix_seed(seed, 12), 3));
    // A negative key (an object outside any world) is a valid, distinct key.
    EXPECT_NE(internal::routh_seed(seed, 12, -1), internal::routh_seed(seed, 12, 1));
  }
  EXPECT_EQ(seen.size(), 16u) << "every (seed, counter) pair above gives its own stream";
}

// A cluster strikes when a point approaches faster than the threshold; its
// restitution is the least of the striking points'. Slower points count for
// nothing.
TEST(StrikeRule, LeastRestitutionOfTheStrikingPoints) {
  btManifoldPoint fast_lively, fast_dull, slow_dead;
  fast_lively.m_combinedRestitution = 0.9;
  fast_dull.m_combinedRestitution = 0.4;
  slow_dead.m_combinedRestitution = 0.0;
  bool impact = false;
  double restitution = 1.0;
  const double threshold = 0.01;
  internal::note_strike(-0.005, threshold, double(slow_dead.m_combinedRestitution), impact, restitution);
  EXPECT_FALSE(impact);
  internal::note_strike(-1.0, threshold, double(fast_lively.m_combinedRestitution), impact, restitution);
  EXPECT_TRUE(impact);
  EXPECT_DOUBLE_EQ(restitution, double(btScalar(0.9)));
  internal::note_strike(-0.5, threshold, double(fast_dull.m_combinedRestitution), impact, restitution);
  EXPECT_DOUBLE_EQ(restitution, double(btScalar(0.4)));
  internal::note_strike(-0.001, threshold, double(slow_dead.m_combinedRestitution), impact, restitution);
  EXPECT_DOUBLE_EQ(restitution, double(btScalar(0.4))) << "a slow point does not lower it";
}

// Bullet's CCD gives its predictive points restitution 0; point_restitution
// gives them the pair's own (the default callback: the product) and leaves
// every other point's, including one a user's callback changed.
TEST(StrikeRule, PredictivePointsTakeThePairsRestitution) {
  btSphereShape shape(btScalar(0.1));
  btCollisionObject fast, ground;
  fast.setCollisionShape(&shape);
  ground.setCollisionShape(&shape);
  fast.setWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0, 2, 0)));
  fast.setRestitution(btScalar(0.8));
  ground.setRestitution(btScalar(0.5));
  fast.setCcdMotionThreshold(btScalar(1e-7));
  btPersistentManifold manifold(&fast, &ground, 0, btScalar(0.02), btScalar(0.02));
  // As createPredictiveContactsInternal makes it: no local point on A, A's
  // origin as its world point, restitution 0.
  btManifoldPoint predictive(btVector3(0, 0, 0), btVector3(0, 1, 0), btVector3(0, 1, 0), btScalar(0.3));
  predictive.m_positionWorldOnA = fast.getWorldTransform().getOrigin();
  predictive.m_combinedRestitution = 0;
  EXPECT_DOUBLE_EQ(internal::point_restitution(&manifold, predictive), double(btScalar(0.8) * btScalar(0.5)));
  // A real point lies on A's surface; a user's callback set its value.
  btManifoldPoint real(btVector3(0, btScalar(-0.1), 0), btVector3(0, 1, 0), btVector3(0, 1, 0), btScalar(0));
  real.m_positionWorldOnA = btVector3(0, btScalar(1.9), 0);
  real.m_combinedRestitution = btScalar(0.25);
  EXPECT_DOUBLE_EQ(internal::point_restitution(&manifold, real), double(btScalar(0.25)));
  // Without CCD on A, or without a manifold, the point's own value.
  fast.setCcdMotionThreshold(0);
  EXPECT_DOUBLE_EQ(internal::point_restitution(&manifold, predictive), 0.0);
  EXPECT_DOUBLE_EQ(internal::point_restitution(nullptr, real), double(btScalar(0.25)));
}

// The automatic threshold (ImpactSolverConfig::impact_threshold < 0).
TEST(StrikeRule, AutomaticThresholdIsAQuarterOfGravityTimesTheStepWithAFloor) {
  EXPECT_EQ(internal::impact_threshold(0.3, 9.81, 1.0 / 60.0), 0.3);
  EXPECT_EQ(internal::impact_threshold(0.0, 9.81, 1.0 / 60.0), 0.0);
  EXPECT_DOUBLE_EQ(internal::impact_threshold(-1.0, 9.81, 1.0 / 60.0),
                   simpact::bullet::kThresholdGravitySteps * 9.81 / 60.0);
  EXPECT_EQ(internal::impact_threshold(-1.0, 0.0, 1.0 / 60.0), simpact::bullet::kMinimumImpactThreshold);
}

// The sustained threshold (ImpactSettings::sustained_threshold): automatic
// kSustainedGravitySteps·|g|·h, a configured value as given, and never
// below the impact threshold (so 0 turns the distinction off).
TEST(StrikeRule, SustainedThresholdIsTwoGravityStepsAndNeverBelowTheImpactOne) {
  const double h = 1.0 / 240.0, g = 9.81;
  const internal::StrikeThresholds automatic = internal::strike_thresholds(-1.0, -1.0, g, h);
  EXPECT_DOUBLE_EQ(automatic.impact, simpact::bullet::kThresholdGravitySteps * g * h);
  EXPECT_DOUBLE_EQ(automatic.sustained, simpact::bullet::kSustainedGravitySteps * g * h);
  EXPECT_EQ(internal::strike_thresholds(-1.0, 0.5, g, h).sustained, 0.5);
  EXPECT_EQ(internal::strike_thresholds(-1.0, 0.0, g, h).sustained, automatic.impact);
  EXPECT_EQ(internal::strike_thresholds(0.3, -1.0, g, h).sustained, 0.3);  // 2|g|h = 0.08 < 0.3
  const internal::StrikeThresholds weightless = internal::strike_thresholds(-1.0, -1.0, 0.0, h);
  EXPECT_EQ(weightless.sustained, weightless.impact);
  EXPECT_EQ(weightless.impact, simpact::bullet::kMinimumImpactThreshold);
}

}  // namespace

namespace {

// The plastic residual the adapter asks of the core follows btScalar: the
// core's default in double, float's unit roundoff 2⁻²⁴ in single precision
// (what the write-back rounds every velocity by), never looser than the
// core accepts.
TEST(Clustering, PlasticResidualFollowsThePrecisionOfBtScalar) {
  const double expected = sizeof(btScalar) == sizeof(double) ? simpact::PropagativeParameters{}.plastic_residual_tolerance
                                                             : std::ldexp(1.0, -24);
  EXPECT_EQ(internal::kPlasticResidualTolerance, expected);
  const simpact::PropagativeParameters parameters =
      internal::propagative_parameters(simpact::OrderPolicy::kMostNegative, 0, 0, true);
  EXPECT_EQ(parameters.plastic_residual_tolerance, expected);
  EXPECT_LE(parameters.plastic_residual_tolerance, simpact::kMaxPlasticResidualTolerance);
}

}  // namespace
