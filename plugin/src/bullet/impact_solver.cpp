#include <simpact/bullet/impact_solver.h>

#include "bullet/cluster_stages.h"
#include "bullet/clustering.h"
#include "bullet/joint_rows.h"
#include "bullet/proximity.h"
#include "bullet/sparse_assembly.h"
#include "core/separation.h"

#include <Eigen/Geometry>

#include <BulletCollision/BroadphaseCollision/btDispatcher.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btContactSolverInfo.h>
#include <BulletDynamics/ConstraintSolver/btTypedConstraint.h>
#include <BulletDynamics/Dynamics/btDiscreteDynamicsWorld.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <initializer_list>
#include <limits>
#include <numeric>
#include <ostream>
#include <stdexcept>
#include <unordered_map>

namespace simpact::bullet {

namespace {

constexpr std::array<std::pair<ImpactLaw, const char*>, 6> kLawNames = {{
    {ImpactLaw::kPropagative, "propagative"},
    {ImpactLaw::kRouth, "routh"},
    {ImpactLaw::kAuto, "auto"},
    {ImpactLaw::kVariational, "variational"},
    {ImpactLaw::kPasquero, "pasquero"},
    {ImpactLaw::kRouthRestitution, "routh_restitution"},
}};

// ImpactReport::law values.

using Vector6 = Eigen::Matrix<double, 6, 1>;
using Block6 = Eigen::Matrix<double, 6, 6>;
using Triplet = Eigen::Triplet<double>;
using internal::is_dynamic;
using internal::to_bullet;
using internal::to_eigen;

// Velocity of the material point of `body` at world position `point`.
Eigen::Vector3d point_velocity(const btRigidBody* body, const btVector3& point) {
  if (body == nullptr) return Eigen::Vector3d::Zero();
  return to_eigen(body->getVelocityInLocalPoint(point - body->getCenterOfMassPosition()));
}

using internal::VelocitySource;

// Velocity of the material point of `body` (null: the world) at `point`, as
// `source` reads the body.
inline Eigen::Vector3d velocity_at(const VelocitySource& source, const btRigidBody* body, const btVector3& point) {
  if (body == nullptr) return Eigen::Vector3d::Zero();
  return to_eigen(source.at_relative(*body, point - body->getCenterOfMassPosition()));
}

internal::StrikeThresholds strike_thresholds(const ImpactSolverConfig& config, double gravity, double h) {
  return internal::strike_thresholds(config.impact_threshold, config.sustained_threshold, gravity, h);
}

// The larger gravity magnitude of the dynamic ones of `a` and `b` (either
// may be null or static) [m/s²]. Inline, one square root: collect_points
// calls it for every manifold of a resting pile, every step.
inline double largest_gravity(const btRigidBody* a, const btRigidBody* b = nullptr) {
  const double on_a = is_dynamic(a) ? double(a->getGravity().length2()) : 0.0;
  const double on_b = is_dynamic(b) ? double(b->getGravity().length2()) : 0.0;
  return std::sqrt(std::max(on_a, on_b));
}

// ½ m v² + ½ ωᵀ I ω of one body at the 6-vector [v, ω]; a zero inverse
// principal moment is an infinite moment about which the body cannot spin.
double body_kinetic_energy(const btRigidBody& body, const Vector6& v) {
  const double inverse_mass = double(body.getInvMass());
  double energy = inverse_mass > 0.0 ? v.head<3>().squaredNorm() / inverse_mass : 0.0;
  const btVector3 local = body.getCenterOfMassTransform().getBasis().transpose() *
                          btVector3(btScalar(v[3]), btScalar(v[4]), btScalar(v[5]));
  const btVector3& inverse_inertia = body.getInvInertiaDiagLocal();
  for (int axis = 0; axis < 3; ++axis)
    if (inverse_inertia[axis] > 0) energy += double(local[axis]) * double(local[axis]) / double(inverse_inertia[axis]);
  return 0.5 * energy;
}

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("simpact::bullet::ImpactSolverConfig: " + message);
}

}  // namespace

const char* to_string(ImpactLaw law) {
  for (const auto& [value, name] : kLawNames)
    if (value == law) return name;
  return "unknown";
}

const char* to_string(AppliedLaw law) {
  switch (law) {
    case AppliedLaw::kPropagative: return "propagative";
    case AppliedLaw::kRouth: return "routh";
    case AppliedLaw::kRouthRestitution: return "routh_restitution";
    case AppliedLaw::kVariational: return "variational";
    case AppliedLaw::kPasquero: return "pasquero";
    case AppliedLaw::kBaseSolver: return "base_solver";
  }
  return "unknown";
}

std::ostream& operator<<(std::ostream& out, AppliedLaw law) { return out << to_string(law); }

ImpactLaw parse_impact_law(const std::string& name) {
  for (const auto& [value, law_name] : kLawNames)
    if (name == law_name) return value;
  throw std::invalid_argument("unknown impact law \"" + name +
                              "\" (expected propagative, routh, auto, variational, pasquero or routh_restitution)");
}

void validate(const ImpactSolverConfig& config) { validate(static_cast<const ImpactSettings&>(config)); }

void validate(const ImpactSettings& config) {
  require(std::isfinite(config.touch_tolerance) && config.touch_tolerance >= 0.0,
          "touch_tolerance must be finite and >= 0, got " + std::to_string(config.touch_tolerance));
  require(!std::isnan(config.impact_threshold), "impact_threshold must not be NaN");
  require(!std::isnan(config.sustained_threshold), "sustained_threshold must not be NaN");
  require(config.policy != OrderPolicy::kAll,
          "policy must be a simulation order (most_negative, least_negative, time_of_impact, index "
          "or random), got all: use compute_indeterminacy to measure the spread of outcomes");
  require(config.max_reflections >= 0,
          "max_reflections must be >= 0 (0 = automatic), got " + std::to_string(config.max_reflections));
  bool known_law = false;
  for (const auto& entry : kLawNames) known_law = known_law || entry.first == config.law;
  require(known_law, "law is not a valid ImpactLaw");
  const RouthSettings& routh = config.routh;
  require(std::isfinite(routh.step) && routh.step >= 0.0,
          "routh.step must be finite and >= 0 (0 = automatic), got " + std::to_string(routh.step));
  require(routh.max_steps >= 1, "routh.max_steps must be >= 1, got " + std::to_string(routh.max_steps));
  require(routh.cone_directions >= 3 && routh.cone_directions <= kMaxConeDirections,
          "routh.cone_directions must be in [3, " + std::to_string(kMaxConeDirections) + "], got " +
              std::to_string(routh.cone_directions));
  require(routh.sampler == ImpulseSampler::kUniform || routh.sampler == ImpulseSampler::kLowDiscrepancy,
          "routh.sampler is not a valid ImpulseSampler");
  require(routh.max_contacts >= 1,
          "routh.max_contacts must be >= 1, got " + std::to_string(routh.max_contacts));
  require(config.variational_budget >= 1,
          "variational_budget must be >= 1, got " + std::to_string(config.variational_budget));
}

namespace {
void check_sample(const PredictedImpact& p, int sample, int body) {
  if (sample < 0 || sample >= p.set.velocities.cols())
    throw std::out_of_range("PredictedImpact: sample " + std::to_string(sample) + " outside [0, " +
                            std::to_string(p.set.velocities.cols()) + ")");
  if (body < 0 || body >= static_cast<int>(p.bodies.size()))
    throw std::out_of_range("PredictedImpact: body " + std::to_string(body) + " outside [0, " +
                            std::to_string(p.bodies.size()) + ")");
}
}  // namespace

btVector3 PredictedImpact::linear_velocity(int sample, int body) const {
  check_sample(*this, sample, body);
  const Eigen::Index c = 6 * static_cast<Eigen::Index>(body);
  const Eigen::Vector3d change = set.velocities.col(sample).segment<3>(c) - velocity.segment<3>(c);
  return to_bullet(Eigen::Vector3d(pre_force.segment<3>(c) + change));
}

btVector3 PredictedImpact::angular_velocity(int sample, int body) const {
  check_sample(*this, sample, body);
  const Eigen::Index c = 6 * static_cast<Eigen::Index>(body) + 3;
  const Eigen::Vector3d change = set.velocities.col(sample).segment<3>(c) - velocity.segment<3>(c);
  return to_bullet(Eigen::Vector3d(pre_force.segment<3>(c) + change));
}

struct ImpactSolver::Impl {
  // One candidate contact point of the batch.
  struct Point {
    btPersistentManifold* manifold = nullptr;
    int index = 0;  // in the manifold
    int batch = -1;  // its manifold's position in the array collect_points read; −1: synthetic
    btManifoldPoint* point = nullptr;
    const btCollisionObject* object_a = nullptr;
    const btCollisionObject* object_b = nullptr;
    const btRigidBody* body_a = nullptr;  // may be static/kinematic
    const btRigidBody* body_b = nullptr;
    int a = -1, b = -1;  // dynamic-body indices, -1 for static/kinematic
    double u = 0.0;      // relative normal velocity, > 0 separating
  };

  // One cluster's rows and velocities (cluster layout, impact_solver.h):
  // the law's rows (internal::LawRows; `admissible` is v_a, the
  // joint-admissible part of v* that the law resolves, impact_solver.h
  // stage 3, v* itself without joints) and what the rigid adapter keeps
  // besides; reused from cluster to cluster.
  struct Rows : internal::LawRows {
    int k = 0, m = 0;
    Eigen::VectorXd velocity;       // v*, mid-step
    Eigen::VectorXd pre_force;      // v, without this step's forces
    // G, the bilateral joint rows on the cluster (sparse: each reads at
    // most two bodies), with their offsets c: G v + c = 0 keeps the joints.
    std::vector<internal::JointRow> joint_rows;
    bool jointed() const { return !joint_rows.empty(); }
    // E_c = ½ cᵀ(G M⁻¹ Gᵀ)⁺c [J], the kinetic energy the joints demand for
    // following their moving kinematic partners, and E_ref [J], the
    // cluster's energy if every body moved and turned at the partners'
    // largest joint speed |c|∞ (RigidCluster::assemble, kJointDemandFactor).
    double joint_demand = 0.0;
    double joint_demand_reference = 0.0;
  };

  std::vector<btRigidBody*> bodies;
  internal::ObjectNumbers index;  // bodies[i] ↦ i
  std::vector<Point> points;
  // Points of `points` that overlap (distance < 0) yet separate faster than
  // the impact threshold (collect_points).
  std::vector<int> separating;
  internal::Clusters clusters;
  std::vector<int> local;  // body → index within the cluster being resolved
  // Bodies of clusters whose resolution failed in this call (1), handed to
  // the base solver with Bullet's restitution (impact_solver.h, "Failures").
  std::vector<char> failed;
  bool all_failed = false;  // the whole batch is the base solver's, restitution on
  // What the base solve sees differently (hidden points, muted
  // restitutions), given back right after it.
  internal::BaseSolverHandoff handoff;
  // Points an impact resolved that the base solver must not see in this
  // call (hide_resolved_points, through the hand-off).
  std::vector<int> hidden;
  // The batch's manifolds (solveGroup's arguments) and, per body, the root
  // of the complete cluster it belongs to (−1: none), for
  // hide_speculative_points.
  btPersistentManifold** manifolds = nullptr;
  int num_manifolds = 0;
  std::vector<int> complete_root;
  // Whether complete clusters are hidden from the base solver: for MLCP
  // bases (btMLCPSolver), whose Lemke solver returns energy-adding impulses
  // at points whose exact impulse is zero (the adapter cannot tell its
  // Lemke from its Dantzig interface, so both). SI and NNCG see them: their
  // pass removes the law's residual approach (≤ kPlasticResidualTolerance
  // of the data's scale: 1e-9, 2⁻²⁴ in single precision)
  // and keeps a pile that a plastic impact left resting at rest, which a
  // hidden point would leave to drift into a new impact next step.
  bool hide_complete = false;
  Rows rows;
  // Assembly scratch, reused: M⁻¹'s entries being gathered and the joint
  // groups (assemble_metric).
  std::vector<Triplet> entries;
  std::vector<int> group, place;
  internal::LawState law;  // the laws' solvers and kRandom counter
  std::uint64_t steps = 0;  // allSolved calls: the Routh seeds' step count
  internal::TouchingPoints touching;  // synthetic points of this batch (proximity.h)
  // Body pairs (lower address first) of the contacts an impact left closed
  // (apply_outcome): recorded during this step (`rested_next`) and, sorted,
  // those of the last step (`rested`), whose overlaps this step clears at
  // position level (separate_rested_overlaps). Addresses are compared,
  // never dereferenced: a pair whose object was deleted matches nothing, or
  // at worst a new object at the same address for one step.
  using BodyPair = std::pair<const btCollisionObject*, const btCollisionObject*>;
  std::vector<BodyPair> rested, rested_next;
  std::vector<char> resolved;  // per body: in a cluster an impact resolved in this call
  internal::Clusters rested_clusters;

  int index_of(const btRigidBody* body) {
    if (!is_dynamic(body)) return -1;
    if (const int known = index.find(body); known >= 0) return known;
    bodies.push_back(const_cast<btRigidBody*>(body));
    return index.add(body);
  }
  /// bodies' index of `object`, or −1 (also for nullptr).
  int number_of(const btCollisionObject* object) const { return object == nullptr ? -1 : index.find(object); }
};

namespace {

using Impl = ImpactSolver::Impl;

// Relative normal velocity n·(v_a(p_a) − v_b(p_b)) of a contact point
// (> 0 separating), with the material point velocities `at(body, point)`
// gives: as they are, as the step will see them, or with this step's forces.
template <class PointVelocity>
double relative_normal_velocity(const btManifoldPoint& p, const btRigidBody* a, const btRigidBody* b,
                                PointVelocity at) {
  return to_eigen(p.m_normalWorldOnB).dot(at(a, p.getPositionWorldOnA()) - at(b, p.getPositionWorldOnB()));
}

// The body pair of a point, lower address first (Impl::rested).
Impl::BodyPair body_pair(const Impl::Point& p) {
  return {std::min(p.object_a, p.object_b), std::max(p.object_a, p.object_b)};
}

// Point c of `manifold` (at position `batch` of the array read) as a candidate point of the batch, at relative
// normal velocity u; `body_a`, `body_b` are the upcasts of its two objects. Written in place (every touching
// point of a resting pile is written here each step).
void set_manifold_point(Impl::Point& point, btPersistentManifold* manifold, int batch, int c, double u,
                        const btRigidBody* body_a, const btRigidBody* body_b) {
  point.manifold = manifold;
  point.index = c;
  point.batch = batch;
  point.point = &manifold->getContactPoint(c);
  point.object_a = manifold->getBody0();
  point.object_b = manifold->getBody1();
  point.body_a = body_a;
  point.body_b = body_b;
  point.u = u;
}

// 1. Candidate points of a batch: touching, or closing within this step.
// Returns whether one of them strikes: approaches faster than its strike
// threshold (impact or sustained, StrikeThresholds) with a law that
// resolves it (`rule`), velocities read from `source`. Also records in
// s.separating the points that still overlap (distance < 0) yet separate
// faster than the impact threshold (solveGroup shows them to the base solver
// without their overlap). Writes nothing to Bullet.
struct StrikeRule {
  bool plastic = false;     // R = 0 contacts strike (resolve_plastic_impacts, laws routh, routh_restitution)
  bool frictional = false;  // R = 0 contacts with μ > 0 strike (law auto)
};

bool collect_points(Impl& s, const ImpactSolverConfig& config, btPersistentManifold** manifolds,
                    int num_manifolds, const VelocitySource& source, StrikeRule rule) {
  const double h = double(source.h);
  bool any_strike = false;
  size_t most = s.points.size();  // room for every point at once: no regrowth copies
  for (int k = 0; k < num_manifolds; ++k) most += static_cast<size_t>(manifolds[k]->getNumContacts());
  s.points.reserve(most);
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    const btRigidBody* body_a = btRigidBody::upcast(manifold->getBody0());
    const btRigidBody* body_b = btRigidBody::upcast(manifold->getBody1());
    if (!is_dynamic(body_a) && !is_dynamic(body_b)) continue;
    if (manifold->getNumContacts() == 0) continue;
    // The manifold's strike thresholds, computed for the first point that
    // needs them (one that approaches, or separates while overlapping).
    bool thresholds_known = false;
    internal::StrikeThresholds thresholds;
    const auto known_thresholds = [&]() -> const internal::StrikeThresholds& {
      if (!thresholds_known) thresholds = strike_thresholds(config, largest_gravity(body_a, body_b), h);
      thresholds_known = true;
      return thresholds;
    };
    const auto strikes = [&](double u) { return known_thresholds().strikes(u, manifold); };
    const auto velocity = [&](const btRigidBody* body, const btVector3& at) { return velocity_at(source, body, at); };
    for (int c = 0; c < manifold->getNumContacts(); ++c) {
      btManifoldPoint& p = manifold->getContactPoint(c);
      const double u = relative_normal_velocity(p, body_a, body_b, velocity);
      const double gap = double(p.getDistance());
      if (!(gap <= config.touch_tolerance || (u < 0.0 && gap + u * h <= config.touch_tolerance)))
        continue;
      // The restitution the cluster will use (point_restitution: a CCD
      // predictive point's 0 is Bullet's speculative constraint, not the
      // pair's), so a fast CCD body strikes under every law alike.
      any_strike = any_strike ||
                   (u < 0.0 && strikes(u) &&
                    (internal::point_restitution(manifold, p) > 0 || rule.plastic ||
                     (rule.frictional && p.m_combinedFriction > 0)));
      set_manifold_point(s.points.emplace_back(), manifold, k, c, u, body_a, body_b);
      if (gap < 0.0 && u > 0.0 && u > known_thresholds().impact)
        s.separating.push_back(static_cast<int>(s.points.size()) - 1);
    }
  }
  return any_strike;
}

// 2. Clusters: contacts and joints between dynamic bodies, in
// s.clusters.members / s.clusters.points by root (the lowest body index).
// Joints may pull in dynamic bodies that touch nothing (a pendulum's arm).
// internal::build_clusters' view of the batch: every point of s.points, or
// only those of `ids` (the rested points, separate_rested_overlaps).
struct BodyGraph {
  Impl& s;
  const std::vector<int>* ids = nullptr;
  int num_nodes() const { return static_cast<int>(s.bodies.size()); }
  int node(const btRigidBody* body) const {
    return s.number_of(body);
  }
  void add(btRigidBody* body) { s.index_of(body); }
  int num_points() const { return static_cast<int>(ids != nullptr ? ids->size() : s.points.size()); }
  const Impl::Point& point(int k) const {
    return s.points[static_cast<size_t>(ids != nullptr ? (*ids)[static_cast<size_t>(k)] : k)];
  }
  int end_a(int k) const { return point(k).a; }
  int end_b(int k) const { return point(k).b; }
};

int build_clusters(Impl& s, btTypedConstraint** constraints, int num_constraints) {
  for (Impl::Point& p : s.points) {
    p.a = s.index_of(p.body_a);
    p.b = s.index_of(p.body_b);
  }
  BodyGraph graph{s};
  internal::build_clusters(graph, constraints, num_constraints, s.clusters);
  return s.clusters.num_nodes;
}

// 3. Plan (cluster_stages.h): whether a cluster is an impact, its
// threshold, restitution, friction and law. Also writes the members'
// cluster-local numbers into s.local (only members' entries are read).
internal::ClusterPlan plan_of(Impl& s, const ImpactSolverConfig& config, const std::vector<int>& members,
                              const std::vector<int>& ids, double h) {
  std::vector<int>& local = s.local;
  local.resize(s.bodies.size());
  double gravity = 0.0;
  for (int j = 0; j < static_cast<int>(members.size()); ++j) {
    local[members[j]] = j;
    gravity = std::max(gravity, largest_gravity(s.bodies[members[j]]));
  }
  internal::ClusterPlan plan(strike_thresholds(config, gravity, h));
  for (const int id : ids) plan.add(s.points[id].u, *s.points[id].point, s.points[id].manifold);
  internal::decide_law(config, static_cast<int>(ids.size()), plan);
  return plan;
}

// The seed of a cluster's Routh sample (impact_solver.h, "Seeds").
std::uint64_t routh_seed(const Impl& s, const ImpactSolverConfig& config,
                         const std::vector<int>& members) {
  int key = s.bodies[members.front()]->getWorldArrayIndex();
  for (const int j : members) key = std::min(key, s.bodies[j]->getWorldArrayIndex());
  return internal::routh_seed(config.seed, s.steps, key);
}

// The cluster-local index of `body`, or −1 when it is not a member of the
// cluster of `members`: static, kinematic, or a dynamic body of the batch
// that belongs to another cluster. s.local holds valid entries only for the
// members (plan writes them), so membership is checked against
// `members` itself; a stale entry of another cluster never leaks out.
int cluster_index(const Impl& s, const std::vector<int>& members, const btRigidBody* body) {
  const int number = s.number_of(body);
  if (number < 0) return -1;
  const int j = s.local[static_cast<size_t>(number)];
  return j >= 0 && j < static_cast<int>(members.size()) && members[static_cast<size_t>(j)] == number
             ? j
             : -1;
}

/// Joint-connected groups of at most this many bodies get the dense joint
/// metric (joint_metric: an eigen-decomposition of the k × k joint Gram
/// matrix, the reference, robust to redundant rows); larger ones, when the
/// law reads M⁻¹_G only through M⁻¹_G Jᵀ, the sparse route
/// (sparse_joint_metric): 16 bodies = 96 coordinates, ~48 rows, where the
/// dense path costs ~0.1 ms; it is cubic (301 hinged links: 2.4 s, 149 MB).
constexpr int kDenseJointGroupBodies = 16;

// M⁻¹ of a cluster (s.rows.inverse_mass, stage 3 of impact_solver.h),
// block-diagonal and sparse: each body's 6×6 block (body_inverse_mass), except on a
// group of bodies that bilateral joint rows connect, whose block is the
// group's joint-constrained M⁻¹_G (joint_metric on the group's own block and
// rows; groups share no row, so the cluster's M⁻¹_G is block-diagonal over
// them and equal to joint_metric on the whole). Per group, also removes the
// joint-violating part of v_a and adds the kinetic energy its joints demand
// (Rows::joint_demand). Memory: Σ (6·group size)², so 36 per free body and
// quadratic only within a joint-connected group (a hinge chain of N links
// is one group: (6N)² entries, the price of instantaneous propagation
// along it). Reads the members' bodies, rows.joint_rows and rows.admissible.
// With `partial` (the law reads M⁻¹_G only through M⁻¹_G Jᵀ) a group of
// more than kDenseJointGroupBodies bodies takes the sparse route instead:
// only the columns (and, by symmetry, rows) of M⁻¹_G at the coordinates of
// the bodies a contact touches (`touched`) are stored, computed with a
// sparse LDLᵀ of the joint Gram matrix, so a struck chain of N hinged links
// costs O(N), not (6N)² memory and (3N)³ work; the other entries are left
// out (they are never read). Redundant joint rows (a singular Gram matrix)
// send the group back to the dense path.
void assemble_metric(Impl& s, const std::vector<int>& members, const std::vector<char>& touched, bool partial) {
  Impl::Rows& rows = s.rows;
  const int k = rows.k;
  std::vector<int>& group = s.group;
  group.resize(static_cast<size_t>(k));
  std::iota(group.begin(), group.end(), 0);
  for (const internal::JointRow& g : rows.joint_rows)
    if (g.a >= 0 && g.b >= 0) internal::unite(group, g.a, g.b);
  const auto root_of = [&](const internal::JointRow& g) { return internal::find_root(group, g.a >= 0 ? g.a : g.b); };
  // Joint rows ordered by group (stable: within a group, Bullet's order).
  std::vector<int> order(rows.joint_rows.size());
  std::iota(order.begin(), order.end(), 0);
  std::vector<int> row_root(rows.joint_rows.size());
  for (size_t i = 0; i < rows.joint_rows.size(); ++i) row_root[i] = root_of(rows.joint_rows[i]);
  std::stable_sort(order.begin(), order.end(), [&](int x, int y) { return row_root[x] < row_root[y]; });
  std::vector<char> jointed(static_cast<size_t>(k), 0);
  for (const int r : row_root) jointed[static_cast<size_t>(r)] = 1;
  double speed = 0.0;
  for (const internal::JointRow& g : rows.joint_rows) speed = std::max(speed, std::abs(g.offset));

  // Each body's 6×6 block of M⁻¹, computed where it is read (storing them
  // all cost 288 bytes a body).
  const auto block_of = [&](int j) { return internal::body_inverse_mass(*s.bodies[members[static_cast<size_t>(j)]]); };
  std::vector<Triplet>& entries = s.entries;
  entries.clear();
  entries.reserve(static_cast<size_t>(6 * k));  // a free ball's diagonal; more as needed
  const auto add_entry = [&](int row, int col, double value) {
    if (value != 0.0) entries.emplace_back(row, col, value);
  };
  for (int j = 0; j < k; ++j) {
    if (jointed[static_cast<size_t>(internal::find_root(group, j))]) continue;
    const Block6 block = block_of(j);
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < 6; ++r) add_entry(6 * j + r, 6 * j + c, block(r, c));
  }
  std::vector<int>& place = s.place;  // body → index within its group
  place.assign(static_cast<size_t>(k), -1);
  // The bodies of each group, in body order, as rows by root (one counting
  // sort, where a scan of all k bodies per group was O(k²) on a cradle of
  // k balls, each its own group).
  std::vector<std::pair<int, int>> by_root(static_cast<size_t>(k));  // (root, body)
  for (int j = 0; j < k; ++j) by_root[static_cast<size_t>(j)] = {internal::find_root(group, j), j};
  std::vector<int> group_begin, group_bodies;
  internal::compressed_rows(by_root, static_cast<size_t>(k), group_begin, group_bodies);
  std::vector<int> bodies;
  for (size_t first = 0; first < order.size();) {
    const int root = row_root[static_cast<size_t>(order[first])];
    size_t last = first;
    while (last < order.size() && row_root[static_cast<size_t>(order[last])] == root) ++last;
    bodies.assign(group_bodies.begin() + group_begin[static_cast<size_t>(root)],
                  group_bodies.begin() + group_begin[static_cast<size_t>(root) + 1]);
    for (size_t q = 0; q < bodies.size(); ++q) place[static_cast<size_t>(bodies[q])] = static_cast<int>(q);
    const Eigen::Index c = static_cast<Eigen::Index>(bodies.size());
    if (c == 1 && last - first <= static_cast<size_t>(internal::kBodyJointRows)) {
      // One body under its own joints (a cradle's ball on its string): the
      // same metric on the stack (body_joint_metric).
      const int j = bodies.front();
      const Eigen::Index count = static_cast<Eigen::Index>(last - first);
      internal::BodyJointRows G = internal::BodyJointRows::Zero(count, 6);
      internal::BodyJointOffsets offsets(count);
      for (Eigen::Index i = 0; i < count; ++i) {
        const internal::JointRow& g = rows.joint_rows[static_cast<size_t>(order[first + static_cast<size_t>(i)])];
        if (g.a >= 0) G.row(i) += g.on_a;
        if (g.b >= 0) G.row(i) += g.on_b;
        offsets[i] = g.offset;
      }
      const internal::BodyJointMetric metric =
          internal::body_joint_metric(block_of(j), G, rows.admissible.segment<6>(6 * j), offsets);
      rows.admissible.segment<6>(6 * j) -= metric.violating;
      for (int cc = 0; cc < 6; ++cc)
        for (int rr = 0; rr < 6; ++rr) add_entry(6 * j + rr, 6 * j + cc, metric.inverse_mass(rr, cc));
      if (speed > 0.0) rows.joint_demand += 0.5 * metric.demand;
      first = last;
      continue;
    }
    Eigen::VectorXd velocity(6 * c);
    for (Eigen::Index q = 0; q < c; ++q)
      velocity.segment<6>(6 * q) = rows.admissible.segment<6>(6 * bodies[static_cast<size_t>(q)]);
    const Eigen::Index count = static_cast<Eigen::Index>(last - first);
    // G of the group, sparse (each row reads at most two bodies), and c.
    std::vector<Triplet> g_entries;
    Eigen::VectorXd offsets(count);
    for (Eigen::Index i = 0; i < count; ++i) {
      const internal::JointRow& g = rows.joint_rows[static_cast<size_t>(order[first + static_cast<size_t>(i)])];
      for (int e = 0; e < 6; ++e) {
        if (g.a >= 0 && g.on_a[e] != 0.0) g_entries.emplace_back(i, 6 * place[static_cast<size_t>(g.a)] + e, g.on_a[e]);
        if (g.b >= 0 && g.on_b[e] != 0.0) g_entries.emplace_back(i, 6 * place[static_cast<size_t>(g.b)] + e, g.on_b[e]);
      }
      offsets[i] = g.offset;
    }
    SparseRowMatrix sparse_g(count, 6 * c);
    sparse_g.setFromTriplets(g_entries.begin(), g_entries.end());
    if (partial && c > kDenseJointGroupBodies) {
      // The sparse route: only the columns the contact rows read.
      std::vector<Eigen::Index> columns;
      for (Eigen::Index q = 0; q < c; ++q)
        if (touched[static_cast<size_t>(bodies[static_cast<size_t>(q)])])
          for (int e = 0; e < 6; ++e) columns.push_back(6 * q + e);
      internal::SparseJointMetric sparse;
      std::vector<Block6> group_blocks;
      for (const int j : bodies) group_blocks.push_back(block_of(j));
      if (internal::sparse_joint_metric(group_blocks, sparse_g, velocity, offsets, columns, sparse)) {
        for (Eigen::Index q = 0; q < c; ++q)
          rows.admissible.segment<6>(6 * bodies[static_cast<size_t>(q)]) -= sparse.violating.segment<6>(6 * q);
        std::vector<char> in_columns(static_cast<size_t>(6 * c), 0);
        for (const Eigen::Index j : columns) in_columns[static_cast<size_t>(j)] = 1;
        const auto global = [&](Eigen::Index local) {
          return 6 * bodies[static_cast<size_t>(local / 6)] + static_cast<int>(local % 6);
        };
        for (size_t col = 0; col < columns.size(); ++col)
          for (Eigen::Index i = 0; i < 6 * c; ++i) {
            const double value = sparse.columns(i, static_cast<Eigen::Index>(col));
            add_entry(global(i), global(columns[col]), value);
            if (!in_columns[static_cast<size_t>(i)]) add_entry(global(columns[col]), global(i), value);
          }
        if (speed > 0.0) rows.joint_demand += 0.5 * sparse.demand;
        first = last;
        continue;
      }
    }
    Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Zero(6 * c, 6 * c);
    for (Eigen::Index q = 0; q < c; ++q)
      inverse_mass.block<6, 6>(6 * q, 6 * q) = block_of(bodies[static_cast<size_t>(q)]);
    const Eigen::MatrixXd G(sparse_g);
    const internal::JointMetric metric = internal::joint_metric(inverse_mass, G);
    const Eigen::VectorXd violating = metric.violating(G, velocity, offsets);
    for (Eigen::Index q = 0; q < c; ++q) {
      const int j = bodies[static_cast<size_t>(q)];
      rows.admissible.segment<6>(6 * j) -= violating.segment<6>(6 * q);
      for (Eigen::Index p = 0; p < c; ++p) {
        const int i = bodies[static_cast<size_t>(p)];
        for (int cc = 0; cc < 6; ++cc)
          for (int rr = 0; rr < 6; ++rr)
            add_entry(6 * i + rr, 6 * j + cc, metric.inverse_mass(6 * p + rr, 6 * q + cc));
      }
    }
    if (speed > 0.0) rows.joint_demand += 0.5 * (metric.reduce * offsets).squaredNorm();
    first = last;
  }
  if (speed > 0.0) {
    for (int j = 0; j < k; ++j) {
      const btRigidBody& body = *s.bodies[members[j]];
      const btVector3& inertia = body.getInvInertiaDiagLocal();
      const double smallest = std::min({inertia.x(), inertia.y(), inertia.z()});
      const double moment = smallest > 0 ? 1.0 / double(smallest) : 0.0;
      rows.joint_demand_reference += 0.5 * (1.0 / double(body.getInvMass()) + moment) * speed * speed;
    }
  }
  internal::set_from_ordered_triplets(entries, 6 * k, 6 * k, rows.inverse_mass);
}

// Velocity of the material point of a cluster member (`body`, numbered as
// in s.bodies) at world position `point` under the cluster velocities `v`
// (6 per member, s.local order): v + ω × r.
Eigen::Vector3d member_point_velocity(const Impl& s, const Eigen::VectorXd& v, int body, const btRigidBody* rigid,
                                      const btVector3& point) {
  const Eigen::Index c = 6 * static_cast<Eigen::Index>(s.local[static_cast<size_t>(body)]);
  const Eigen::Vector3d arm = to_eigen(point - rigid->getCenterOfMassPosition());
  return v.segment<3>(c) + v.segment<3>(c + 3).cross(arm);
}

// Rows and velocities of a cluster (impact_solver.h, stage 3): s.rows. With
// `tangents`, also the Routh laws' tangent rows, offsets and μ. Velocities
// and forces from `source`.
void assemble_rows(Impl& s, const std::vector<int>& members, const std::vector<int>& ids,
                   btTypedConstraint** constraints, int num_constraints, const btContactSolverInfo& info,
                   const VelocitySource& source, bool tangents, bool partial) {
  Impl::Rows& rows = s.rows;
  const std::vector<int>& local = s.local;
  const int k = static_cast<int>(members.size());
  const int m = static_cast<int>(ids.size());
  const btScalar h = info.m_timeStep;
  rows.k = k;
  rows.m = m;
  rows.velocity.resize(6 * k);
  rows.pre_force.resize(6 * k);
  // The impact acts on the mid-step velocity v* = v + ½ h M⁻¹ f_ext, and its
  // change Δv = v⁺ − v* is added to the pre-force velocity v (Bullet's rigid
  // velocity here excludes this step's force increment; the base solver
  // adds it). Why mid-step: symplectic Euler, Bullet's integrator, conserves
  // the shadow energy ½vᵀMv − fᵀx + ½h fᵀv between impacts, not ½vᵀMv − fᵀx;
  // an elastic impact that conserves ½v*ᵀMv* conserves exactly that shadow
  // energy, so a ball dropped with R = 1 returns to its drop height bounce
  // after bounce (reflecting v instead loses h·|g| of speed per bounce,
  // reflecting the end-of-step velocity gains it).
  for (int j = 0; j < k; ++j) {
    const btRigidBody& body = *s.bodies[members[j]];
    rows.pre_force.segment<3>(6 * j) = to_eigen(source.linear(body));
    rows.pre_force.segment<3>(6 * j + 3) = to_eigen(source.angular(body));
    const btVector3 force = source.force(body);
    const btVector3 torque = body.getTotalTorque();
    rows.velocity.segment<3>(6 * j) =
        rows.pre_force.segment<3>(6 * j) + to_eigen(force * body.getInvMass() * (0.5 * h));
    rows.velocity.segment<3>(6 * j + 3) =
        rows.pre_force.segment<3>(6 * j + 3) +
        to_eigen(body.getInvInertiaTensorWorld() * torque * (0.5 * h));
  }
  const auto partner_velocity = [&](const btRigidBody* body, const btVector3& point) {
    return velocity_at(source, body, point);
  };
  rows.offsets.setZero(m);
  // [n, r × n] on the side's body, negated on side B, into the row `out`
  // is writing. A coordinate whose linear or angular factor is 0 gets no
  // entry: M⁻¹ is zero in its row and column and its admissible velocity
  // is 0 (below), so the entry would change no product the laws form, and
  // on a ball that may not turn, r × n is rounding (~1e-18) that doubled
  // the row and every product over it.
  const auto add_row = [&](internal::OuterVectorWriter<SparseRowMatrix>& out, int body, const btRigidBody* rigid,
                           const btVector3& point, const Eigen::Vector3d& direction, double sign) {
    const Eigen::Vector3d arm = to_eigen(point - rigid->getCenterOfMassPosition());
    const Eigen::Vector3d turn = arm.cross(direction);
    const btVector3& linear = rigid->getLinearFactor();
    const btVector3& angular = rigid->getAngularFactor();
    for (int i = 0; i < 3; ++i) {
      if (linear[i] != btScalar(0)) out.add(6 * local[body] + i, sign * direction[i]);
      if (angular[i] != btScalar(0)) out.add(6 * local[body] + 3 + i, sign * turn[i]);
    }
  };
  internal::OuterVectorWriter<SparseRowMatrix> normals(rows.normals, m, 6 * k, 12 * m);
  for (int r = 0; r < m; ++r) {
    const auto& p = s.points[ids[r]];
    const Eigen::Vector3d n = to_eigen(p.point->m_normalWorldOnB);
    const btVector3& on_a = p.point->getPositionWorldOnA();
    const btVector3& on_b = p.point->getPositionWorldOnB();
    if (p.a >= 0) {
      add_row(normals, p.a, p.body_a, on_a, n, 1.0);
    } else {
      rows.offsets[r] += n.dot(partner_velocity(p.body_a, on_a));
    }
    if (p.b >= 0) {
      add_row(normals, p.b, p.body_b, on_b, n, -1.0);
    } else {
      rows.offsets[r] -= n.dot(partner_velocity(p.body_b, on_b));
    }
    normals.next();
  }
  normals.finish();
  rows.joint_rows.clear();
  internal::collect_bilateral_joint_rows(
      constraints, num_constraints,
      [&](const btRigidBody* body) { return cluster_index(s, members, body); },
      k, info, rows.joint_rows);
  // What no impulse can change is not the law's: velocity along an axis
  // whose linear or angular factor is 0 (a host may set one anyway; the
  // law would otherwise spin the body up to cancel it, ~1e4 N·s on a
  // y-locked capsule), then the joint-violating part (impact_solver.h,
  // stage 3). Both are added back unchanged.
  rows.admissible = rows.velocity;
  for (int j = 0; j < k; ++j) internal::clear_locked_axes(*s.bodies[members[j]], rows.admissible.segment<6>(6 * j));
  rows.joint_demand = 0.0;
  rows.joint_demand_reference = 0.0;
  std::vector<char> touched(static_cast<size_t>(k), 0);  // bodies a contact row reads
  for (const int id : ids)
    for (const int body : {s.points[static_cast<size_t>(id)].a, s.points[static_cast<size_t>(id)].b})
      if (body >= 0) touched[static_cast<size_t>(local[body])] = 1;
  assemble_metric(s, members, touched, partial);
  if (!tangents) return;

  // Tangent rows (impact_solver.h, "Laws"). The slip of a contact is the
  // tangential part of the relative velocity of its two material points at
  // v*; the frame follows it when it exceeds kSlipFrameTolerance × S.
  internal::OuterVectorWriter<SparseRowMatrix> tangent_rows(rows.tangents, 2 * m, 6 * k, 24 * m);
  rows.tangent_offsets.setZero(2 * m);
  rows.friction.resize(m);
  rows.t1.resize(static_cast<size_t>(m));
  rows.t2.resize(static_cast<size_t>(m));
  const Eigen::VectorXd u = rows.normals * rows.admissible + rows.offsets;
  const double approach = std::max(0.0, -u.minCoeff());
  const auto material_velocity = [&](int body, const btRigidBody* rigid, const btVector3& point) {
    return body < 0 ? partner_velocity(rigid, point) : member_point_velocity(s, rows.admissible, body, rigid, point);
  };
  for (int r = 0; r < m; ++r) {
    const auto& p = s.points[ids[r]];
    const btVector3& on_a = p.point->getPositionWorldOnA();
    const btVector3& on_b = p.point->getPositionWorldOnB();
    const Eigen::Vector3d n = to_eigen(p.point->m_normalWorldOnB).normalized();
    const Eigen::Vector3d relative =
        material_velocity(p.a, p.body_a, on_a) - material_velocity(p.b, p.body_b, on_b);
    const Eigen::Vector3d slip = relative - relative.dot(n) * n;
    Eigen::Vector3d t1, t2;
    internal::tangent_frame(n, slip, approach, t1, t2);
    rows.t1[static_cast<size_t>(r)] = t1;
    rows.t2[static_cast<size_t>(r)] = t2;
    rows.friction[r] = std::max(0.0, double(p.point->m_combinedFriction));
    for (int e = 0; e < 2; ++e) {
      const Eigen::Vector3d& t = e == 0 ? t1 : t2;
      const int row = 2 * r + e;
      if (p.a >= 0) {
        add_row(tangent_rows, p.a, p.body_a, on_a, t, 1.0);
      } else {
        rows.tangent_offsets[row] += t.dot(partner_velocity(p.body_a, on_a));
      }
      if (p.b >= 0) {
        add_row(tangent_rows, p.b, p.body_b, on_b, t, -1.0);
      } else {
        rows.tangent_offsets[row] -= t.dot(partner_velocity(p.body_b, on_b));
      }
      tangent_rows.next();
    }
  }
  tangent_rows.finish();
}

// Rows and the rigid adapter's own velocities are finite.
bool rows_finite(const Impl::Rows& rows, bool tangents) {
  return rows.finite(tangents) && rows.velocity.allFinite() && rows.pre_force.allFinite();
}

using internal::move_body;

/// The largest turn [rad] the position-level separation may give a body of
/// a cluster bound by joints (apply_outcome): the joint drift it leaves is
/// then below ½·0.05² = 1.25e-3 of the lever arm, and a genuine overlap of a
/// few millimetres at a lever of centimetres or more needs less.
constexpr double kSeparationMaxRotation = 0.05;

// The position-level push that clears the overlaps `depth` (m, ≥ 0 to
// clear) of the rows s.rows: Δq = M⁻¹ Jᵀ μ (core/separation.h), in the
// metric of the rows (joint-constrained when joints bind them). May be
// non-finite; the callers check before they move a body.
// Δq = M⁻¹_G Jᵀ μ keeps the joints (G Δq = 0) only to first order in the
// bodies' turns; the drift grows as ½|Δθ|² times the lever arm. A contact
// that joints or factors leave almost immobile — a tiny effective inverse
// mass, yet above the inert cut — needs a huge μ, and Δq then turns bodies
// by radians and drags their partners by metres: the joints break and the
// base solver's joint correction turns the break into kinetic energy
// (fuzz_worlds seed 2026 world 2370: 7e3 → 9.5e4 J in one step, then
// non-finite). In a cluster bound by joints the push is scaled down so no
// body turns more than kSeparationMaxRotation; the overlap left is the
// base solver's, as without simpact. Without joints nothing breaks, and a
// body whose factors lock its translation can only clear an overlap by
// turning (capping it left a y-locked capsule's overlap to the base
// solver's Baumgarte push, which sped it up from 1.1 to 2.4 m/s).
Eigen::VectorXd separation_push(const Impl::Rows& rows, const Eigen::VectorXd& depth) {
  Eigen::VectorXd displacement = simpact::internal::separation_displacement(
      rows.normals, rows.inverse_mass, internal::without_negligible_overlaps(depth));
  if (rows.jointed()) {
    double turn = 0.0;
    for (int j = 0; j < rows.k; ++j) turn = std::max(turn, displacement.segment<3>(6 * j + 3).norm());
    if (turn > kSeparationMaxRotation) displacement *= kSeparationMaxRotation / turn;
  }
  return displacement;
}

// n·(v_A(p_A) − v_B(p_B)) + b of each contact row under the cluster
// velocities `v` (6 per member). Computed from the points, not as J v: J
// leaves out the coordinates a body's factors lock (the law never changes
// them), but a body a host set moving along one still moves there, and
// whether a point is left separating must see it.
Eigen::VectorXd normal_velocities(const Impl& s, const std::vector<int>& ids, const Eigen::VectorXd& v) {
  const Impl::Rows& rows = s.rows;
  Eigen::VectorXd u = rows.offsets;
  for (int r = 0; r < rows.m; ++r) {
    const Impl::Point& p = s.points[static_cast<size_t>(ids[static_cast<size_t>(r)])];
    const Eigen::Vector3d n = to_eigen(p.point->m_normalWorldOnB);
    if (p.a >= 0) u[r] += n.dot(member_point_velocity(s, v, p.a, p.body_a, p.point->getPositionWorldOnA()));
    if (p.b >= 0) u[r] -= n.dot(member_point_velocity(s, v, p.b, p.body_b, p.point->getPositionWorldOnB()));
  }
  return u;
}

// Writes v⁺ (`after`) back as v + (v⁺ − v*), hides the points it leaves
// separating (all of them when the outcome is `complete`) from the base
// solver and separates the ones it leaves overlapping at position level
// (core/separation.h). Returns false, writing nothing, when a velocity or
// displacement it would write is not finite.
bool apply_outcome(Impl& s, const std::vector<int>& members, const std::vector<int>& ids,
                   const Eigen::VectorXd& after, double threshold, double h, bool complete) {
  const Impl::Rows& rows = s.rows;
  const int k = rows.k, m = rows.m;
  const Eigen::VectorXd velocity = rows.pre_force + (after - rows.velocity);
  if (!velocity.allFinite()) return false;
  // Points the impact leaves separating, and every point of a cluster
  // without joints, are hidden from the base solver (hide_resolved_points).
  // Overlaps — Bullet found the points only after they penetrated, e.g. the
  // striker and the ball it stopped against — are separated at position
  // level, x += M⁻¹ Jᵀ μ with the least μ ≥ 0 that clears them all
  // (separation_impulses), which changes no velocity: the base solver's
  // Baumgarte push would otherwise turn the overlap into kinetic energy. A
  // point clears u⁺h of its overlap during the step, and the rest counts —
  // also for a point left separating faster than the impact threshold: a
  // cube bouncing at 0.07 m/s off a corner 1 mm deep (148 Hz) clears only
  // 0.45 mm, and when its spin brings the corner back next step it sank
  // step after step through the board (demos/validate_cube_toss found it).
  // In clusters with joints a fast point still counts 0 (it joins only if
  // the push would close it further): counting it there sent the hinge
  // chain of bullet_examples to ×1e21 through the joint-constrained
  // metric's near-singular rows. (The multibody adapter counts the rest of
  // every point.)
  const size_t hidden_before = s.hidden.size();
  const bool joints = rows.jointed();
  const Eigen::VectorXd u_after = normal_velocities(s, ids, after);
  Eigen::VectorXd depth(m);
  for (int r = 0; r < m; ++r) {
    const double u = u_after[r];
    if (u > threshold || complete) s.hidden.push_back(ids[r]);
    depth[r] = u > threshold && joints ? 0.0 : -double(s.points[ids[r]].point->getDistance()) - std::max(0.0, u) * h;
  }
  const Eigen::VectorXd displacement = separation_push(rows, depth);
  if (!displacement.allFinite()) {
    s.hidden.resize(hidden_before);
    return false;
  }
  for (int j = 0; j < k; ++j)
    internal::set_body_velocity(*s.bodies[members[j]], velocity.segment<6>(6 * j));
  if (displacement.squaredNorm() > 0.0)
    for (int j = 0; j < k; ++j) move_body(*s.bodies[members[j]], displacement.segment<6>(6 * j));
  if (s.resolved.size() < s.bodies.size()) s.resolved.resize(s.bodies.size(), 0);
  for (const int j : members) s.resolved[static_cast<size_t>(j)] = 1;
  for (int r = 0; r < m; ++r) {
    if (u_after[r] > threshold) continue;  // left separating
    const Impl::Point& p = s.points[ids[r]];
    s.rested_next.push_back(body_pair(p));
  }
  return true;
}

ImpactReport::Contact report_contact(const Impl::Point& p, double approach_speed) {
  return internal::contact_report(p.object_a, p.object_b, *p.point, approach_speed);
}

/// Whether kinetic energy is what the cluster's impact may not increase: no
/// partner moves (a moving kinematic or static body is infinitely massive
/// and may give energy) and no body has a linear or angular factor other
/// than 1 (Bullet scales velocity changes by the factors, so the law keeps
/// a factor-weighted energy instead).
bool kinetic_energy_is_invariant(const Impl& s, const std::vector<int>& members,
                                 const std::vector<int>& ids) {
  for (const int j : members) {
    const btRigidBody& body = *s.bodies[static_cast<size_t>(j)];
    if (body.getLinearFactor() != btVector3(1, 1, 1) || body.getAngularFactor() != btVector3(1, 1, 1))
      return false;
  }
  const auto still = [](const btRigidBody* body) {
    return body == nullptr || is_dynamic(body) ||
           (body->getLinearVelocity().isZero() && body->getAngularVelocity().isZero());
  };
  for (const int id : ids) {
    const Impl::Point& p = s.points[static_cast<size_t>(id)];
    if (!still(p.body_a) || !still(p.body_b)) return false;
  }
  return true;
}

// The velocity the base solver starts from at a material point of `body`
// after an impact phase: the body's velocity plus this step's external
// impulse h M⁻¹ F (scaled by the factors), as btSequentialImpulseConstraint-
// Solver's convertBodies adds it.
Eigen::Vector3d velocity_with_forces(const btRigidBody* body, const btVector3& point, btScalar h) {
  if (body == nullptr) return Eigen::Vector3d::Zero();
  if (!is_dynamic(body)) return point_velocity(body, point);
  const btVector3 linear = body->getLinearVelocity() +
                           body->getTotalForce() * (body->getInvMass() * h) * body->getLinearFactor();
  const btVector3 angular = body->getAngularVelocity() +
                            (body->getInvInertiaTensorWorld() * body->getTotalTorque()) * h *
                                body->getAngularFactor();
  return to_eigen(linear + angular.cross(point - body->getCenterOfMassPosition()));
}

// A complete cluster (RigidCluster::apply) needs nothing from the base solver in
// this step, and neither do the other points of its manifolds — with the
// world or between its own bodies — that do not close within the step
// under the outcome's velocities (gap + u⁺h above the touch tolerance: the
// points collect_points left out, speculative or separating). An exact base
// solve leaves them at zero, but Bullet's MLCP Lemke does not (it returns
// adhesive impulses there), so they are hidden with the cluster's own
// (hide_resolved_points). Points shared with a dynamic body outside the
// cluster stay visible: that body's own base solve may still push it there.
// One pass over the batch's manifolds, after every cluster is resolved.
void hide_speculative_points(Impl& s, double touch_tolerance, double h) {
  if (s.manifolds == nullptr) return;
  bool any = false;
  for (const int root : s.complete_root) any = any || root >= 0;
  if (!any) return;
  // The points collected from each manifold of the batch, one bit each.
  static_assert(MANIFOLD_CACHE_SIZE <= 8, "one byte of flags per manifold");
  std::vector<unsigned char> collected(static_cast<size_t>(s.num_manifolds), 0);
  for (const Impl::Point& q : s.points)
    if (q.batch >= 0) collected[static_cast<size_t>(q.batch)] |= static_cast<unsigned char>(1u << q.index);
  // The complete cluster of a body (its root), −1 for none, −2 for a
  // static or kinematic body (part of every cluster it touches).
  const auto cluster_of = [&](const btCollisionObject* object) {
    const btRigidBody* body = btRigidBody::upcast(object);
    if (!is_dynamic(body)) return -2;
    const int number = s.number_of(body);
    return number < 0 ? -1 : s.complete_root[static_cast<size_t>(number)];
  };
  for (int k = 0; k < s.num_manifolds; ++k) {
    btPersistentManifold* manifold = s.manifolds[k];
    const btCollisionObject* a = manifold->getBody0();
    const btCollisionObject* b = manifold->getBody1();
    const int ca = cluster_of(a), cb = cluster_of(b);
    const bool within = (ca >= 0 && (cb == ca || cb == -2)) || (cb >= 0 && ca == -2);
    if (!within) continue;
    for (int c = 0; c < manifold->getNumContacts(); ++c) {
      const btManifoldPoint& p = manifold->getContactPoint(c);
      if ((collected[static_cast<size_t>(k)] >> c) & 1u) continue;
      const auto with_forces = [&](const btRigidBody* body, const btVector3& at) {
        return velocity_with_forces(body, at, btScalar(h));
      };
      const double u =
          relative_normal_velocity(p, btRigidBody::upcast(a), btRigidBody::upcast(b), with_forces);
      if (!(double(p.getDistance()) + std::min(0.0, u) * h > touch_tolerance)) continue;
      set_manifold_point(s.points.emplace_back(), manifold, k, c, u, btRigidBody::upcast(a), btRigidBody::upcast(b));
      s.hidden.push_back(static_cast<int>(s.points.size()) - 1);
    }
  }
}

double cluster_kinetic_energy(const Impl& s, const std::vector<int>& members,
                              const Eigen::VectorXd& v) {
  double energy = 0.0;
  for (int j = 0; j < static_cast<int>(members.size()); ++j)
    energy += body_kinetic_energy(*s.bodies[members[j]], v.segment<6>(6 * j));
  return energy;
}

// Touching means touching (proximity.h): synthetic points for the pairs of
// the struck bodies, and transitively of the bodies they touch, that are
// within the gap tolerance but have no manifold point there. They join
// s.points like Bullet's own (manifold = nullptr, index −1).
void add_touching_points(Impl& s, const ImpactSolverConfig& config, btPersistentManifold** manifolds,
                         int num_manifolds, btScalar time_step, btDispatcher* dispatcher) {
  if (dispatcher == nullptr) return;
  const double h = double(time_step);
  std::vector<const btCollisionObject*> struck;
  std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>> touching;
  double strike_speed = 0.0;
  for (const Impl::Point& p : s.points) {
    touching.emplace_back(p.object_a, p.object_b);
    if (!strike_thresholds(config, largest_gravity(p.body_a, p.body_b), h).strikes(p.u, p.manifold)) continue;
    strike_speed = std::max(strike_speed, -p.u);
    struck.push_back(p.object_a);
    struck.push_back(p.object_b);
  }
  const auto moves = [](const btCollisionObject* o) { return is_dynamic(btRigidBody::upcast(o)); };
  s.touching.find(*dispatcher, manifolds, num_manifolds, struck, touching, moves, strike_speed, h);
  for (internal::TouchingPoint& touch : s.touching.points()) {
    Impl::Point point;
    point.index = -1;
    point.point = &touch.point;
    point.object_a = touch.object_a;
    point.object_b = touch.object_b;
    point.body_a = btRigidBody::upcast(touch.object_a);
    point.body_b = btRigidBody::upcast(touch.object_b);
    point.u = relative_normal_velocity(touch.point, point.body_a, point.body_b, point_velocity);
    s.points.push_back(point);
  }
}

// The contacts' distances [m], for policy time_of_impact (proximity.h,
// "time_of_impact hints").
Eigen::VectorXd contact_distances(const Impl& s, const std::vector<int>& ids) {
  Eigen::VectorXd distance(static_cast<Eigen::Index>(ids.size()));
  for (size_t r = 0; r < ids.size(); ++r)
    distance[static_cast<Eigen::Index>(r)] = double(s.points[static_cast<size_t>(ids[r])].point->getDistance());
  return distance;
}

// Inert contacts (impact_solver.h, stage 3): removes from `ids` the
// contacts of s.rows whose effective inverse mass J_r M⁻¹_G J_rᵀ is below
// kInertContactTolerance of their free value; returns how many.
int drop_inert_contacts(const Impl& s, std::vector<int>& ids) {
  const Impl::Rows& rows = s.rows;
  std::vector<double> scratch;
  const Eigen::VectorXd effective = internal::row_quadratic_forms(rows.normals, rows.inverse_mass, scratch);
  std::vector<int> kept;
  kept.reserve(ids.size());
  for (int r = 0; r < rows.m; ++r) {
    const Impl::Point& p = s.points[ids[r]];
    const double w = effective[r];  // J_r M⁻¹ J_rᵀ
    const Eigen::Vector3d n = to_eigen(p.point->m_normalWorldOnB).normalized();
    double free = 0.0;
    const auto add = [&](const btRigidBody* body, const btVector3& point) {
      if (!is_dynamic(body)) return;
      const Eigen::Vector3d arm = to_eigen(point - body->getCenterOfMassPosition());
      const btVector3& inertia = body->getInvInertiaDiagLocal();
      free += double(body->getInvMass()) +
              arm.cross(n).squaredNorm() * double(std::max({inertia.x(), inertia.y(), inertia.z()}));
    };
    add(p.body_a, p.point->getPositionWorldOnA());
    add(p.body_b, p.point->getPositionWorldOnB());
    if (w > kInertContactTolerance * free) kept.push_back(ids[r]);
  }
  const int dropped = rows.m - static_cast<int>(kept.size());
  if (dropped > 0) ids = std::move(kept);
  return dropped;
}

using internal::add_message;
using internal::Resolution;

/// A cluster whose bilateral joints bind it to MOVING kinematic bodies keeps
/// them through the offsets c (G v + c = 0, impact_solver.h stage 3); the
/// kinetic energy the joints demand for that, E_c = ½ cᵀ(G M⁻¹ Gᵀ)⁺c, is at
/// most about the cluster's energy when every body moves and turns at the
/// partners' joint speed |c|∞ (E_ref) for joints that can follow them. When
/// the joint rows are nearly dependent and c is not in their range, the
/// pseudo-inverse (rows scaled by 1/√reach, eigenvalues down to
/// kJointRankTolerance) amplifies c without a useful bound (fuzz_worlds seed
/// 2029 world 6769: E_c = 2.9e39 J from |c| = 5.4 m/s; the law then resolved
/// a 1e18 m/s approach and the world went non-finite 15 steps later). Beyond 100 E_ref (ten times the speed) the
/// joints cannot be followed by any physical motion: such a cluster is the
/// base solver's, whose soft, impulse-limited joints stay bounded.
constexpr double kJointDemandFactor = 100.0;

// One cluster of the batch as the shared pipeline sees it
// (internal::run_cluster, stages 3–4): the rigid adapter's plan inputs,
// assembly (assemble, inert contacts), outcome check and write-back
// (apply_outcome).
struct RigidCluster {
  RigidCluster(Impl& state, const ImpactSolverConfig& settings, const std::vector<int>& cluster_members,
               const std::vector<int>& cluster_points, btTypedConstraint** joints, int num_joints,
               const btContactSolverInfo& solver_info)
      : s(state), config(settings), members(cluster_members), ids_in(cluster_points), ids(cluster_points),
        constraints(joints), num_constraints(num_joints), info(solver_info),
        h(double(solver_info.m_timeStep)), hidden_before(state.hidden.size()) {}

  Impl& s;
  const ImpactSolverConfig& config;
  const std::vector<int>& members;  // bodies
  const std::vector<int>& ids_in;   // the cluster's points
  std::vector<int> ids;             // the points the law resolves (inert ones leave)
  btTypedConstraint** constraints;
  int num_constraints;
  const btContactSolverInfo& info;
  double h;
  size_t hidden_before;             // s.hidden before this cluster (failed() cuts back to it)
  bool tangents = false;            // tangent rows assembled (ClusterPlan::tangent_rows)
  Eigen::VectorXd distances;        // policy time_of_impact

  internal::ClusterPlan plan() { return plan_of(s, config, members, ids, h); }
  // Whether the law reads M⁻¹_G only through M⁻¹_G Jᵀ (assemble_metric's
  // sparse route): the propagative and Routh laws; not the variational and
  // Pasquero laws or the indeterminacy, whose energies read the whole metric.
  bool partial_metric(const internal::ClusterPlan& cluster) const {
    return !config.compute_indeterminacy &&
           (cluster.law == internal::PlannedLaw::kPropagative || cluster.routh());
  }
  int candidates() const { return static_cast<int>(ids.size()); }
  std::vector<ImpactReport::Contact> unresolved_contacts() const {
    std::vector<ImpactReport::Contact> out;
    for (const int id : ids_in) out.push_back(report_contact(s.points[id], -s.points[id].u));
    return out;
  }

  // Rows and velocities (s.rows); inert contacts leave and the cluster is
  // planned again. Joints that would need more than kJointDemandFactor ×
  // the cluster's energy at their kinematic partners' speed to follow them
  // are ill-conditioned: the cluster is the base solver's.
  internal::Assembly assemble(internal::ClusterPlan& cluster, ImpactReport& report, ImpactStats& stats) {
    tangents = cluster.tangent_rows(config);
    assemble_rows(s, members, ids, constraints, num_constraints, info, VelocitySource{false, info.m_timeStep}, tangents,
                  partial_metric(cluster));
    if (s.rows.joint_demand > kJointDemandFactor * s.rows.joint_demand_reference)
      return {internal::Assembly::kFailed,
              "joints to moving kinematic bodies would need " + std::to_string(s.rows.joint_demand) +
                  " J to follow them, more than kJointDemandFactor x " +
                  std::to_string(s.rows.joint_demand_reference) + " J (ill-conditioned joint rows)"};
    const int inert = drop_inert_contacts(s, ids);
    if (inert == 0) return {};
    stats.inert_contacts += inert;
    if (ids.empty()) return {internal::Assembly::kNothing, {}};
    cluster = plan_of(s, config, members, ids, h);
    if (cluster.law == internal::PlannedLaw::kNone || cluster.law == internal::PlannedLaw::kBaseSolver)
      return {internal::Assembly::kNothing, {}};
    report.restitution = cluster.restitution;
    report.law = report.attempted_law = cluster.applied();
    tangents = cluster.tangent_rows(config);
    assemble_rows(s, members, ids, constraints, num_constraints, info, VelocitySource{false, info.m_timeStep}, tangents,
                  partial_metric(cluster));
    add_message(report, std::to_string(inert) +
                            " inert contact(s) (effective inverse mass below kInertContactTolerance) "
                            "left to the base solver");
    return {};
  }

  const internal::LawRows& law_rows() const { return s.rows; }
  bool finite() const { return rows_finite(s.rows, tangents); }
  ImpactReport::Contact contact(int row, double approach) const {
    return report_contact(s.points[ids[static_cast<size_t>(row)]], approach);
  }
  double energy_before() const { return cluster_kinetic_energy(s, members, s.rows.velocity); }
  internal::LawInputs law_inputs(const internal::ClusterPlan& cluster) {
    internal::LawInputs inputs;
    if (config.policy == OrderPolicy::kTimeOfImpact) {
      distances = contact_distances(s, ids);
      inputs.distances = &distances;
    }
    if (cluster.routh()) inputs.routh_seed = routh_seed(s, config, members);
    inputs.compute_indeterminacy = config.compute_indeterminacy;
    return inputs;
  }
  // v_g, the joint-violating part, is added back unchanged.
  Eigen::VectorXd complete(const Eigen::VectorXd& law_velocity) const {
    Eigen::VectorXd after = law_velocity;
    after += s.rows.velocity - s.rows.admissible;
    return after;
  }
  // In the metric the law used: the configuration before the position-level
  // separation (move_body).
  double energy(const Eigen::VectorXd& velocity) const { return cluster_kinetic_energy(s, members, velocity); }
  // Without factors and moving kinematic partners no impact may gain.
  bool energy_is_invariant() const { return kinetic_energy_is_invariant(s, members, ids); }

  // The law's own check covers v_a; the cluster as a whole is checked by
  // the shared stage "check energy" (cluster_stages.h): v_g passes through,
  // and its M-orthogonality to the law's change is exact only up to the
  // joint metric's rank decisions, so a cluster whose joints nearly conflict
  // (a hinge to the world, a slider and a fixed joint on the same pair) can
  // turn a large v_g into a gain through that cross term. Nothing else to
  // check here.
  bool check(const Eigen::VectorXd&, ImpactReport&, ImpactStats&) const { return true; }

  bool apply(const Eigen::VectorXd& after, const internal::ClusterPlan& cluster) {
    // The outcome is complete when the base solver has nothing left to do
    // at these points in this step (hide_resolved_points): no joint binds
    // the cluster, and the law handled friction (Routh, or the propagative
    // law's impact friction: the tangent rows were assembled for it) or
    // there is none (otherwise the propagative law is frictionless; the base
    // solver's friction acts at the points it leaves closed). Complete
    // outcomes are hidden from MLCP bases only (Impl::hide_complete).
    bool complete = s.hide_complete && !s.rows.jointed();
    if (!tangents)
      for (const int id : ids) complete = complete && s.points[static_cast<size_t>(id)].point->m_combinedFriction == 0;
    if (!apply_outcome(s, members, ids, after, cluster.threshold(), h, complete)) return false;
    // The impact replaced whatever these points carried from the last
    // step. Their penetration is not corrected this step: the impact's
    // velocities carry the bodies apart, while a push-out by the base
    // solver would add potential energy at every bounce (a ball that
    // reaches the ground between two steps would climb higher each time).
    // Collision detection recomputes the distance next step.
    for (const int id : ids) internal::BaseSolverHandoff::forget(*s.points[id].point);
    if (complete)
      for (const int j : members) s.complete_root[static_cast<size_t>(j)] = members.front();
    return true;
  }

  // A failed cluster is the base solver's with Bullet's restitution (its
  // bodies' s.failed entries); apply_outcome is the only writer and checks
  // everything before its first write, so the bodies still hold their
  // pre-impact state.
  void failed() {
    s.hidden.resize(hidden_before);
    if (s.failed.size() < s.bodies.size()) s.failed.resize(s.bodies.size(), 0);
    for (const int j : members) s.failed[static_cast<size_t>(j)] = 1;
  }

  void describe(ImpactReport& report) const {
    for (const int j : members) {
      report.bodies.push_back(s.bodies[j]);
      report.body_ids.push_back(s.bodies[j]->getWorldArrayIndex());
    }
  }
};

// 4b. Overlaps of the contacts that the last step's impacts left closed.
// A plastic or Routh impact leaves its contacts resting; over the next step
// a turning body dips a corner into the ground, and the base solver's
// Baumgarte term (SI's m_erp for penetrations shallower than its split
// threshold) would push it out in the real velocity, adding energy (the 6
// conservative worlds of the 10^5-world run that gained after a Routh
// impact, up to 1.8e-3 relative). The same position-level push as the
// impact's own (separation_push, in each group's metric) clears them, and
// the base solver sees what is left (m_distance1 = −rest). Points of
// clusters resolved in this call (their impact did it already), of failed
// clusters (the base solver's, as in stock) and synthetic points are
// skipped. Only pairs an impact left closed in the last step qualify; a
// resting pile no impact touched keeps Bullet's own correction (split
// impulse for every penetration makes a 5-box stack creep 9× more,
// impact_solver.h, split_impulse_for_all_penetrations).
void separate_rested_overlaps(Impl& s, btTypedConstraint** constraints, int num_constraints,
                              const btContactSolverInfo& info) {
  if (s.rested.empty() || s.all_failed) return;
  const auto flagged = [&](const std::vector<char>& flags, int body) {
    return body >= 0 && static_cast<size_t>(body) < flags.size() && flags[static_cast<size_t>(body)] != 0;
  };
  std::vector<int> ids;
  for (int id = 0; id < static_cast<int>(s.points.size()); ++id) {
    Impl::Point& p = s.points[static_cast<size_t>(id)];
    if (p.manifold == nullptr || !(p.point->getDistance() < -internal::kNegligibleOverlap)) continue;
    if (!std::binary_search(s.rested.begin(), s.rested.end(), body_pair(p))) continue;
    p.a = s.index_of(p.body_a);
    p.b = s.index_of(p.body_b);
    if (flagged(s.resolved, p.a) || flagged(s.resolved, p.b) || flagged(s.failed, p.a) ||
        flagged(s.failed, p.b))
      continue;
    ids.push_back(id);
  }
  if (ids.empty()) return;
  BodyGraph graph{s, &ids};
  internal::build_clusters(graph, constraints, num_constraints, s.rested_clusters);
  const internal::Clusters& groups = s.rested_clusters;
  s.local.assign(s.bodies.size(), -1);
  std::vector<int> group_ids;
  for (int root = 0; root < groups.num_nodes; ++root) {
    if (groups.points[root].empty()) continue;
    const std::vector<int>& members = groups.members[root];
    group_ids.clear();
    for (const int k : groups.points[root]) group_ids.push_back(ids[static_cast<size_t>(k)]);
    for (int j = 0; j < static_cast<int>(members.size()); ++j) s.local[members[j]] = j;
    assemble_rows(s, members, group_ids, constraints, num_constraints, info, VelocitySource{false, info.m_timeStep}, false,
                  true);
    const Impl::Rows& rows = s.rows;
    Eigen::VectorXd depth(rows.m);
    for (int r = 0; r < rows.m; ++r) {
      const Impl::Point& p = s.points[group_ids[r]];
      depth[r] = -double(p.point->getDistance()) - std::max(0.0, p.u) * double(info.m_timeStep);
    }
    depth = internal::without_negligible_overlaps(depth);
    if (!rows_finite(rows, false)) continue;
    const Eigen::VectorXd displacement = separation_push(rows, depth);
    if (!displacement.allFinite()) continue;  // left to the base solver, as in stock
    // What is left: with joints, the part the turn cap kept back, the base
    // solver's as in stock; without joints, overlaps no push can clear (a
    // body wedged between opposite mesh faces, whose Baumgarte pushes an
    // MLCP base resolves with a gain: fuzz_worlds seed 2027 world 67266),
    // which the base solver then does not push either.
    const bool keep_rest = rows.jointed();
    const Eigen::VectorXd rest = depth - rows.normals * displacement;
    for (int j = 0; j < rows.k; ++j) move_body(*s.bodies[members[j]], displacement.segment<6>(6 * j));
    // An overlap no push can clear stays protected while it lasts (the
    // pair is rested again next step); a cleared one is Bullet's again.
    for (int r = 0; r < rows.m; ++r) {
      const Impl::Point& p = s.points[group_ids[r]];
      internal::BaseSolverHandoff::show_overlap(*p.point, keep_rest ? std::max(0.0, rest[r]) : 0.0);
      if (!keep_rest && rest[r] > simpact::internal::kSeparationConvergence * depth.maxCoeff())
        s.rested_next.push_back(body_pair(p));
    }
  }
}

// Points an impact resolved that carry no force during the rest of this step
// (apply_outcome): the ones it left separating faster than the impact
// threshold, and, over MLCP bases (Impl::hide_complete), every point of a
// cluster without joints — its outcome already holds this step's forces (v*
// is mid-step) and leaves each point
// separating or at rest, with its overlap cleared at position level, so an
// exact base solve would add nothing there. Some base solvers still act on
// them: Bullet's btMLCPSolver with btLemkeSolver returns adhesive impulses
// that undo the impact (a struck Newton's cradle ends with every ball at the
// common, plastic velocity), and on a single resting frictionless point
// left by a plastic impact it has returned impulses that multiplied the
// body's kinetic energy by 40 (fuzz_worlds seed 21 world 112). So they are
// moved past the end of their manifold's point list for the base solve and
// put back right after (BaseSolverHandoff::restore), in their original order;
// the manifold itself (and the warm start of its other points) is
// untouched. Points of clusters bound by joints stay visible: the base
// solver's joint correction must see the contacts.
void hide_resolved_points(Impl& s) {
  std::vector<std::pair<btPersistentManifold*, int>> points;
  points.reserve(s.hidden.size());
  for (const int id : s.hidden) {
    const Impl::Point& p = s.points[static_cast<size_t>(id)];
    if (p.manifold != nullptr) points.emplace_back(p.manifold, p.index);  // synthetic: in no manifold
  }
  s.handoff.hide(std::move(points));
}

void clear_batch(Impl& s) {
  s.bodies.clear();
  s.index.clear();
  s.points.clear();
  s.separating.clear();
  s.hidden.clear();
  s.failed.clear();
  s.resolved.clear();
}

// Restitution off for the base solve (impact_solver.h, stage 5): every
// visible point's m_combinedRestitution is set to 0 (by the hand-off, which
// restores it after the base solve), except on manifolds with a body of a
// failed cluster. Bullet's restitutionCurve gives r·(−v_n), which is then
// ≤ 0 and clamped to 0 by the solver exactly as the value 0 that
// m_restitutionVelocityThreshold = ∞ used to give, so the base solve of
// every cluster that did not fail is bit-for-bit what it was.
void mute_restitution(Impl& s, btPersistentManifold** manifolds, int num_manifolds) {
  if (s.all_failed) return;
  bool any_failed = false;
  for (const char f : s.failed) any_failed = any_failed || f != 0;
  const auto failed = [&](const btCollisionObject* object) {
    const int number = s.number_of(btRigidBody::upcast(object));
    return number >= 0 && static_cast<size_t>(number) < s.failed.size() && s.failed[static_cast<size_t>(number)] != 0;
  };
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    if (any_failed && (failed(manifold->getBody0()) || failed(manifold->getBody1()))) continue;
    for (int c = 0; c < manifold->getNumContacts(); ++c) {
      btManifoldPoint& point = manifold->getContactPoint(c);
      s.handoff.mute_restitution(point);
    }
  }
}

}  // namespace

ImpactSolver::ImpactSolver(btConstraintSolver* base, ImpactSolverConfig config)
    : base_(base), config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  if (base_ == nullptr) throw std::invalid_argument("simpact::bullet::ImpactSolver: base solver is null");
  validate(config_);
}

ImpactSolver::~ImpactSolver() = default;

void ImpactSolver::set_config(ImpactSolverConfig config) {
  validate(config);
  config_ = std::move(config);
}

void ImpactSolver::prepareSolve(int num_bodies, int num_manifolds) {
  base_->prepareSolve(num_bodies, num_manifolds);
}

void ImpactSolver::allSolved(const btContactSolverInfo& info, btIDebugDraw* debug_drawer) {
  base_->allSolved(info, debug_drawer);
  ++impl_->steps;
  // This step's closed contacts are the next step's rested pairs.
  Impl& s = *impl_;
  s.rested.swap(s.rested_next);
  s.rested_next.clear();
  std::sort(s.rested.begin(), s.rested.end());
  s.rested.erase(std::unique(s.rested.begin(), s.rested.end()), s.rested.end());
}

void ImpactSolver::reset() {
  base_->reset();
  impl_->law.impact_counter = 0;
  impl_->steps = 0;
  impl_->rested.clear();
  impl_->rested_next.clear();
}

btConstraintSolverType ImpactSolver::getSolverType() const { return base_->getSolverType(); }

btScalar ImpactSolver::solveGroup(btCollisionObject** bodies, int num_bodies,
                                  btPersistentManifold** manifolds, int num_manifolds,
                                  btTypedConstraint** constraints, int num_constraints,
                                  const btContactSolverInfo& info, btIDebugDraw* debug_drawer,
                                  btDispatcher* dispatcher) {
  ++stats_.solve_calls;
  Impl& s = *impl_;
  clear_batch(s);

  // 1. Candidate points. Most calls have no strike at all (resting piles,
  // plastic contacts left to the base solver); they skip clustering, which
  // keeps simpact's overhead to this loop.
  StrikeRule rule;
  rule.plastic = config_.resolve_plastic_impacts || config_.law == ImpactLaw::kRouth ||
                 config_.law == ImpactLaw::kRouthRestitution;
  rule.frictional = config_.law == ImpactLaw::kAuto;
  s.all_failed = false;
  try {
    s.manifolds = manifolds;
    s.num_manifolds = num_manifolds;
    s.hide_complete = base_->getSolverType() == BT_MLCP_SOLVER;
    const bool any_strike =
        collect_points(s, config_, manifolds, num_manifolds, VelocitySource{false, info.m_timeStep}, rule);
    // A point already separating faster than the threshold yet still
    // penetrating (a struck ball that has not cleared its neighbour) would
    // be pushed apart by the base solver's Baumgarte term, feeding energy
    // into a motion that is already separating: the base solver sees no
    // overlap there.
    // (collect_points found them while it read each point: s.separating.)
    for (const int id : s.separating)
      internal::BaseSolverHandoff::show_overlap(*s.points[static_cast<size_t>(id)].point, 0.0);
    if (any_strike) {
      add_touching_points(s, config_, manifolds, num_manifolds, info.m_timeStep, dispatcher);
      const int n_bodies = build_clusters(s, constraints, num_constraints);
      s.complete_root.assign(s.bodies.size(), -1);
      // 3–4. Resolve every cluster that has an impact (each one under its
      // own catch: internal::resolve_safely).
      for (int root = 0; root < n_bodies; ++root)
        if (!s.clusters.points[root].empty())
{
          RigidCluster cluster(s, config_, s.clusters.members[root], s.clusters.points[root], constraints,
                               num_constraints, info);
          ImpactReport report;
          internal::resolve_safely(cluster, config_, s.law, stats_, report, config_.on_impact);
        }
      hide_speculative_points(s, config_.touch_tolerance, double(info.m_timeStep));
    }
  } catch (...) {
    // Collection or clustering failed (in practice only std::bad_alloc)
    // before any cluster was resolved: the whole batch is the base solver's
    // with Bullet's own restitution, as without simpact.
    s.all_failed = true;
    s.hidden.clear();
    ++stats_.fallbacks_to_base;
  }

  // 4b. Overlaps the last step's impacts left (separate_rested_overlaps);
  // on failure (std::bad_alloc) they stay the base solver's, as in stock.
  try {
    separate_rested_overlaps(s, constraints, num_constraints, info);
  } catch (...) {
  }
  hide_resolved_points(s);

  // 5. Everything else is the base solver's, with restitution off, except
  // the failed clusters', which keep Bullet's own (impact_solver.h, stage 5).
  mute_restitution(s, manifolds, num_manifolds);
  btContactSolverInfo base_info = info;
  if (config_.split_impulse_for_all_penetrations) {
    // SI corrects a penetration (distance < 0) in the real velocity
    // (Baumgarte, m_erp) when `distance > m_splitImpulsePenetrationThreshold`
    // and with split impulse (push velocity, m_erp2) otherwise; with the
    // threshold at +∞ every penetration takes the split path and position
    // correction never feeds kinetic energy.
    base_info.m_splitImpulse = 1;
    base_info.m_splitImpulsePenetrationThreshold = BT_LARGE_FLOAT;
  }
  const btScalar residual = base_->solveGroup(bodies, num_bodies, manifolds, num_manifolds,
                                              constraints, num_constraints, base_info,
                                              debug_drawer, dispatcher);
  s.handoff.restore();
  return residual;
}

std::vector<PredictedImpact> ImpactSolver::predict_outcome_sets(btDiscreteDynamicsWorld& world,
                                                                btScalar time_step,
                                                                const RouthSetParameters& set) {
  internal::check_prediction_arguments(double(time_step), set);

  world.performDiscreteCollisionDetection();
  // What the island manager hands to solveGroup: manifolds of awake islands
  // whose pair needs a response, and the world's constraints.
  btDispatcher* dispatcher = world.getDispatcher();
  std::vector<btPersistentManifold*> manifolds = internal::responding_manifolds(*dispatcher);
  std::vector<btTypedConstraint*> constraints;
  for (int i = 0; i < world.getNumConstraints(); ++i) constraints.push_back(world.getConstraint(i));
  btContactSolverInfo info = world.getSolverInfo();
  info.m_timeStep = time_step;

  Impl& s = *impl_;
  clear_batch(s);
  StrikeRule rule;
  rule.plastic = true;  // every impact cluster is returned, whatever its law
  std::vector<PredictedImpact> predictions;
  const VelocitySource next_step{true, time_step};
  if (!collect_points(s, config_, manifolds.data(), static_cast<int>(manifolds.size()), next_step, rule))
    return predictions;
  // The touching pairs the step adds (proximity.h), as solveGroup does.
  add_touching_points(s, config_, manifolds.data(), static_cast<int>(manifolds.size()), time_step,
                      dispatcher);
  btTypedConstraint** joints = constraints.empty() ? nullptr : constraints.data();
  const int num_joints = static_cast<int>(constraints.size());
  const int n_bodies = build_clusters(s, joints, num_joints);
  for (int root = 0; root < n_bodies; ++root) {
    const std::vector<int>& members = s.clusters.members[root];
    const std::vector<int>& ids_in = s.clusters.points[root];
    if (ids_in.empty()) continue;
    if (!plan_of(s, config_, members, ids_in, double(time_step)).impact) continue;
    // Inert contacts leave the problem as they do in the step.
    std::vector<int> ids = ids_in;
    assemble_rows(s, members, ids, joints, num_joints, info, next_step, true, true);
    if (drop_inert_contacts(s, ids) > 0) {
      if (ids.empty()) continue;
      assemble_rows(s, members, ids, joints, num_joints, info, next_step, true, true);
    }
    const internal::ClusterPlan cluster = plan_of(s, config_, members, ids, double(time_step));
    if (!cluster.impact) continue;
    const int m = static_cast<int>(ids.size());
    PredictedImpact prediction;
    prediction.law = cluster.applied();
    prediction.restitution = cluster.restitution;
    prediction.sample_seed = routh_seed(s, config_, members);
    const Impl::Rows& rows = s.rows;
    for (const int j : members) prediction.bodies.push_back(s.bodies[j]);
    const Eigen::VectorXd u_rows = rows.normals * rows.admissible + rows.offsets;
    for (int r = 0; r < m; ++r) {
      const double u = u_rows[r];
      ImpactReport::Contact contact = report_contact(s.points[ids[r]], -u);
      contact.tangent1 = to_bullet(rows.t1[static_cast<size_t>(r)]);
      contact.tangent2 = to_bullet(rows.t2[static_cast<size_t>(r)]);
      prediction.contacts.push_back(contact);
    }
    // The set maps v_a (= v* without joint violation) to its samples; the
    // step writes pre_force + (v⁺_k − v_a) (impact_solver.h, "Joint-violating
    // velocities").
    prediction.velocity = rows.admissible;
    prediction.pre_force = rows.pre_force;
    internal::PredictedSet predicted =
        internal::predict_set(rows, rows_finite(rows, true), cluster, config_, prediction.sample_seed, set);
    prediction.sampled = predicted.sampled;
    prediction.message = std::move(predicted.message);
    prediction.set = std::move(predicted.set);
    if (predicted.base_solver) prediction.law = AppliedLaw::kBaseSolver;
    predictions.push_back(std::move(prediction));
  }
  clear_batch(s);
  return predictions;
}

}  // namespace simpact::bullet
