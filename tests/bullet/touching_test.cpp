// Touching means touching (issue #10): bodies placed by a loop (x = i · d)
// are a rounding error apart (1e-17 m in double, 1e-8 m in single
// precision), where Bullet's sphere–sphere and box–box algorithms make no
// contact point. simpact's closest-point queries (plugin/src/bullet/
// proximity.h) must still resolve a struck chain, cradle or row as ONE
// impact: exactly Newton's cradle's (0, …, 0, 1), energy kept.
// Also: a real gap above the tolerance stays two impacts, and the
// time_of_impact policy follows the order in which gaps close.
#include <simpact/bullet/impact_solver.h>
#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact/propagative.h>
#include <simpact_worlds/bullet_world.h>
#include <simpact_worlds/multibody_world.h>

#include "bullet/proximity.h"

#include <BulletDynamics/Dynamics/btDiscreteDynamicsWorld.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

namespace {

using simpact::OrderPolicy;
using simpact::bullet::ImpactReport;
using simpact::bullet::MultiBodyImpactReport;
using simpact::worlds::BodyOptions;
using simpact::worlds::BulletWorld;
using simpact::worlds::MultiBodyWorld;
using simpact::worlds::MultiBodyWorldOptions;
using simpact::worlds::SolverKind;
using simpact::worlds::WorldOptions;

constexpr bool kDouble = sizeof(btScalar) == sizeof(double);
// Velocities after the impacts: the propagative law is exact to rounding in
// double (each reflection adds ~1e-16). In single precision the contact
// normals and points come from float positions (relative rounding 6e-8), so
// each of the up to 2n reflections leaves ~1e-7 of the speed on bodies that
// should stop: measured at most 4.3e-6 m/s (12 balls of r = 0.15), hence
// 1e-5 there.
constexpr double kExact = kDouble ? 1e-12 : 1e-5;
// Kinetic energy after the impacts, relative: exact to rounding in double;
// in single precision the residual velocities above carry (4e-6)² per ball
// and the velocities are stored as floats: measured at most 6.3e-11.
constexpr double kEnergy = kDouble ? 1e-12 : 1e-10;
constexpr double kStep = 1.0 / 240.0;
// Cradles on strings: after the (exact) impact, the base solver's
// iterations on the point-to-point joints leave velocities of ~5e-10 m/s
// (measured); separate impacts would be off by 1e-2.
// The loop-placed multibody cradle's energy may exceed the exactly
// touching one's by this much (relative): their first impacts are a step
// apart, which shifts symplectic Euler's ~0.5 % oscillation by ~h·ω of it
// (ω = √(g/L) = 3.1/s: 1e-4); the gains of separate impacts were 2e-2 and
// 5e-2.
constexpr double kSwingEnergyError = 1e-3;
constexpr double kJointResidual = kDouble ? 1e-8 : 1e-5;
// Gap a closest-point query reports between balls placed a known gap apart
// near x = 0.3 m: Bullet subtracts the radii from the centres' distance in
// btScalar, a few ulps of 0.3 m (6e-17 in double, 3e-8 in float), and the
// placement's own rounding as much again; 1e-9 and 2e-6 are wide margins
// that still tell a 1e-6 m gap from none.
constexpr double kQueryGap = kDouble ? 1e-9 : 2e-6;

WorldOptions simpact_world(OrderPolicy policy = OrderPolicy::kMostNegative) {
  WorldOptions o;
  o.solver = SolverKind::kSimpact;
  o.gravity = Eigen::Vector3d::Zero();
  o.simpact.policy = policy;
  return o;
}

BodyOptions ball(double x, double speed = 0.0, double mass = 1.0) {
  BodyOptions b;
  b.mass = mass;
  b.position = {x, 0.0, 0.0};
  b.velocity = {speed, 0.0, 0.0};
  b.restitution = 1.0;
  b.friction = 0.0;
  b.never_sleep = true;
  return b;
}

// Largest gap between neighbours of a loop-placed chain, in btScalar as
// Bullet sees it: the test only means something when some gap is > 0.
double largest_gap(const std::vector<btRigidBody*>& bodies, double radius) {
  double gap = -1.0;
  for (size_t i = 1; i < bodies.size(); ++i) {
    const btScalar d = bodies[i]->getCenterOfMassPosition().x() - bodies[i - 1]->getCenterOfMassPosition().x();
    gap = std::max(gap, double(d - btScalar(2 * radius)));
  }
  return gap;
}

struct ChainRun {
  std::vector<double> velocity;  // x velocities at the end
  double energy_before = 0.0, energy_after = 0.0;
  int impacts = 0;
  double gap = 0.0;  // largest loop gap
};

// n balls of `radius` at x = i · spacing (a plain loop), the first at
// `speed`, run for `steps` steps of 1/240 s.
ChainRun chain(int n, double radius, double spacing, double speed = 1.0, int steps = 24) {
  BulletWorld world(simpact_world());
  std::vector<btRigidBody*> bodies;
  for (int i = 0; i < n; ++i) bodies.push_back(world.add_sphere(radius, ball(i * spacing, i == 0 ? speed : 0.0)));
  ChainRun run;
  run.gap = largest_gap(bodies, radius);
  run.energy_before = world.kinetic_energy();
  world.step(kStep, steps);
  run.energy_after = world.kinetic_energy();
  for (btRigidBody* b : bodies) run.velocity.push_back(double(b->getLinearVelocity().x()));
  run.impacts = static_cast<int>(world.impacts());
  return run;
}

void expect_cradle(const std::vector<double>& v, int incoming, double speed) {
  const int n = static_cast<int>(v.size());
  for (int i = 0; i < n; ++i)
    EXPECT_NEAR(v[i], i >= n - incoming ? speed : 0.0, kExact * speed) << "ball " << i;
}

std::string describe(const std::vector<double>& v) {
  std::string s;
  for (double x : v) s += std::to_string(x) + " ";
  return s;
}

// The chain and others: counts, radii, spacings of 2r written as
// the loop writes them. Each is one impact with the cradle's outcome.
TEST(Touching, LoopPlacedChainIsOneExactImpact) {
  struct Case {
    int n;
    double radius, spacing;
  };
  int with_gap = 0;
  for (const Case& c : {Case{10, 0.05, 0.1}, Case{3, 0.05, 0.1}, Case{7, 0.05, 0.1}, Case{25, 0.05, 0.1},
                        Case{10, 0.03, 0.06}, Case{10, 0.07, 0.14}, Case{12, 0.15, 0.3}, Case{6, 0.35, 0.7}}) {
    SCOPED_TRACE(std::to_string(c.n) + " balls, r = " + std::to_string(c.radius));
    const ChainRun run = chain(c.n, c.radius, c.spacing);
    with_gap += run.gap > 0.0;
    std::printf("chain %2d r %.2f: largest loop gap %.3g, impacts %d, energy %+.3g, v = %s\n", c.n, c.radius,
                run.gap, run.impacts, run.energy_after / run.energy_before - 1.0, describe(run.velocity).c_str());
    expect_cradle(run.velocity, 1, 1.0);
    EXPECT_NEAR(run.energy_after, run.energy_before, kEnergy * run.energy_before);
    EXPECT_EQ(run.impacts, 1);
  }
  // The cases are only a test of touching when rounding left gaps.
  EXPECT_GE(with_gap, 4);
}

// Rigid Newton's cradles on strings (point-to-point joints, gravity on):
// the resting balls and their pivots placed by the loop x0 + i · 0.1, the
// striker touching the first of them and swinging in at 1 m/s, so the
// impact is in the first step (a striker that swings for a step first
// meets the joints' drift, a separate matter: issue #10, item 7).
TEST(Touching, LoopPlacedRigidCradleOnStrings) {
  for (const int n : {3, 5}) {
    SCOPED_TRACE(std::to_string(n) + " balls");
    WorldOptions o = simpact_world();
    o.gravity = {0.0, -simpact::worlds::kStandardGravity, 0.0};
    BulletWorld world(o);
    std::vector<ImpactReport> reports;
    simpact::bullet::ImpactSolverConfig config = o.simpact;
    config.on_impact = [&](const ImpactReport& r) { reports.push_back(r); };
    world.impact_solver()->set_config(config);
    const double r = 0.05, length = 1.0, speed = 1.0;
    // x0: the first of a few offsets where rounding leaves a gap between
    // resting balls (1, 2, 3 … times 0.1 are exact multiples).
    double x0 = 0.0;
    for (const double candidate : {0.0, 0.3, 0.7, 1.3, 2.9}) {
      x0 = candidate;
      double gap = -1.0;
      for (int i = 2; i < n; ++i)
        gap = std::max(gap, double(btScalar(x0 + i * 0.1) - btScalar(x0 + (i - 1) * 0.1) - btScalar(2 * r)));
      if (gap > 0.0) break;
    }
    std::vector<btRigidBody*> bodies;
    for (int i = 0; i < n; ++i) {
      BodyOptions b = ball(i == 0 ? x0 + 0.1 - (2 * r - 1e-7) : x0 + i * 0.1, i == 0 ? speed : 0.0);
      if (i == 0) b.angular_velocity.z() = speed / length;
      bodies.push_back(world.add_sphere(r, b));
      world.add_point2point(bodies.back(), b.position + length * Eigen::Vector3d::UnitY());
    }
    ASSERT_GT(largest_gap({bodies.begin() + 1, bodies.end()}, r), 0.0);
    world.step(kStep);
    ASSERT_EQ(reports.size(), 1u);
    const ImpactReport& report = reports[0];
    EXPECT_EQ(report.contacts.size(), static_cast<size_t>(n - 1));
    EXPECT_NEAR(report.energy_after, report.energy_before, kEnergy * report.energy_before);
    std::vector<double> v;
    for (btRigidBody* b : bodies) v.push_back(double(b->getLinearVelocity().x()));
    std::printf("rigid cradle %d (x0 %g): v = %s\n", n, x0, describe(v).c_str());
    // The last ball leaves at the striker's speed (gravity and its string
    // turn it by g·h·θ this step, θ = 0: nothing), the others stay put.
    for (int i = 0; i + 1 < n; ++i) EXPECT_NEAR(v[i], 0.0, kJointResidual) << "ball " << i;
    EXPECT_NEAR(v[n - 1], speed, kJointResidual);
  }
}

// A row of cubes (half extent 0.05) at x = i · 0.1 on rails (translation
// along x only), the first at 1 m/s. Free cubes are not the cradle even
// when they touch exactly: the propagative law reflects the four points of
// a face one by one, which sets the row spinning (5.5 rad/s measured with
// Bullet's own points, overlap 1e-7) — a matter of the law, not of touching.
TEST(Touching, LoopPlacedRowOfBoxes) {
  for (const int n : {4, 8}) {
    SCOPED_TRACE(std::to_string(n) + " boxes");
    BulletWorld world(simpact_world());
    std::vector<btRigidBody*> boxes;
    for (int i = 0; i < n; ++i) {
      BodyOptions b = ball(i * 0.1, i == 0 ? 1.0 : 0.0);
      b.linear_factor = {1, 0, 0};
      b.angular_factor = {0, 0, 0};
      boxes.push_back(world.add_box({0.05, 0.05, 0.05}, b));
    }
    const double gap = largest_gap(boxes, 0.05);
    const double before = world.kinetic_energy();
    world.step(kStep, 24);
    std::vector<double> v;
    double spin = 0.0, sideways = 0.0;
    for (btRigidBody* b : boxes) {
      v.push_back(double(b->getLinearVelocity().x()));
      spin = std::max(spin, double(b->getAngularVelocity().length()));
      sideways = std::max(sideways, double(btVector3(0, b->getLinearVelocity().y(), b->getLinearVelocity().z()).length()));
    }
    std::printf("box row %d: largest loop gap %.3g, impacts %lld, spin %.3g, v = %s\n", n, gap,
                static_cast<long long>(world.impacts()), spin, describe(v).c_str());
    EXPECT_GT(gap, 0.0);
    expect_cradle(v, 1, 1.0);
    EXPECT_NEAR(spin, 0.0, kExact);
    EXPECT_NEAR(sideways, 0.0, kExact);
    EXPECT_EQ(world.impacts(), 1);
    EXPECT_NEAR(world.kinetic_energy(), before, kEnergy * before);
  }
}

// A real gap above the tolerance (1 cm between balls of r = 5 cm, whose
// breaking threshold is 1 mm): two separate impacts, as Bullet's own
// cradle demo with --free --gap 0.01.
TEST(Touching, RealGapStaysTwoImpacts) {
  BulletWorld world(simpact_world());
  std::vector<ImpactReport> reports;
  simpact::bullet::ImpactSolverConfig config = world.options().simpact;
  config.on_impact = [&](const ImpactReport& r) { reports.push_back(r); };
  world.impact_solver()->set_config(config);
  // a touches b (overlapping by 1e-7: Bullet's own point); c is 1 cm beyond b.
  btRigidBody* a = world.add_sphere(0.05, ball(0.0, 1.0));
  btRigidBody* b = world.add_sphere(0.05, ball(0.1 - 1e-7));
  btRigidBody* c = world.add_sphere(0.05, ball(0.21));
  world.step(kStep, 24);
  ASSERT_EQ(reports.size(), 2u);
  EXPECT_EQ(reports[0].contacts.size(), 1u);
  EXPECT_EQ(reports[1].contacts.size(), 1u);
  EXPECT_NEAR(double(a->getLinearVelocity().x()), 0.0, kExact);
  EXPECT_NEAR(double(b->getLinearVelocity().x()), 0.0, kExact);
  EXPECT_NEAR(double(c->getLinearVelocity().x()), 1.0, kExact);
}

// The gap tolerance itself: Bullet's breaking threshold caps it, and a
// slow strike (S·h below the gap) keeps it from reaching a gap nobody
// closes in the step.
TEST(Touching, GapTolerance) {
  using simpact::bullet::internal::gap_tolerance;
  EXPECT_DOUBLE_EQ(gap_tolerance(1e-3, 1.0, kStep), 1e-3);
  EXPECT_DOUBLE_EQ(gap_tolerance(1e-3, 0.01, kStep), 0.01 * kStep);
}

// TouchingPoints::find on its own, on a row of balls of r = 5 cm (breaking
// threshold 1 mm) struck at A at 1 m/s (tolerance min(1 mm, S·h = 4.2 mm)):
// A overlaps B (Bullet's own points), B–C a 1e-6 m gap and C–D a 5e-4 m gap
// (no points: each gets one synthetic point), D–E 3 mm apart (beyond the
// tolerance). D–E and the next-but-one pairs (~0.1 m apart) are within the
// broadphase's grown bounds: 0-point manifolds. Only B–C and C–D are
// queried: A–B has a point at distance ≤ 0 and the other pairs' bounding
// boxes are at least 3 mm apart. The same holds when the objects
// have no world array index, or a stale duplicate one (the walk's hash-map
// path).
TEST(Touching, FindQueriesOnlyPairsWithoutPoints) {
  WorldOptions options;
  options.solver = SolverKind::kStockSi;
  options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  const double r = 0.05;
  std::vector<double> x = {0.0, 2 * r - 1e-4};
  x.push_back(x.back() + 2 * r + 1e-6);
  x.push_back(x.back() + 2 * r + 5e-4);
  x.push_back(x.back() + 2 * r + 3e-3);
  std::vector<btRigidBody*> balls;
  for (size_t i = 0; i < x.size(); ++i) balls.push_back(world.add_sphere(r, ball(x[i], i == 0 ? 1.0 : 0.0)));
  btDiscreteDynamicsWorld& dynamics = world.dynamics_world();
  dynamics.performDiscreteCollisionDetection();
  btDispatcher& dispatcher = *dynamics.getDispatcher();
  std::vector<btPersistentManifold*> manifolds(dispatcher.getInternalManifoldPointer(),
                                               dispatcher.getInternalManifoldPointer() + dispatcher.getNumManifolds());
  ASSERT_GE(manifolds.size(), 4u);  // A–B, B–C, C–D, D–E and the broadphase's farther pairs
  std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>> touching;
  for (btPersistentManifold* m : manifolds)
    for (int c = 0; c < m->getNumContacts(); ++c) touching.emplace_back(m->getBody0(), m->getBody1());
  ASSERT_EQ(touching.size(), 1u);  // A–B only
  const std::vector<const btCollisionObject*> struck = {balls[0], balls[1]};
  const auto moves = [](const btCollisionObject* o) { return !o->isStaticOrKinematicObject(); };
  const auto pair_name = [&](const simpact::bullet::internal::TouchingPoint& t) {
    const auto at = [&](const btCollisionObject* o) {
      return std::find(balls.begin(), balls.end(), o) - balls.begin();
    };
    return std::make_pair(std::min(at(t.object_a), at(t.object_b)), std::max(at(t.object_a), at(t.object_b)));
  };
  const auto check = [&](const char* what) {
    SCOPED_TRACE(what);
    simpact::bullet::internal::TouchingPoints points;
    points.find(dispatcher, manifolds.data(), static_cast<int>(manifolds.size()), struck, touching, moves, 1.0,
                kStep);
    EXPECT_EQ(points.queries(), 2);
    EXPECT_EQ(points.closings(), 2);
    ASSERT_EQ(points.points().size(), 2u);
    EXPECT_EQ(pair_name(points.points()[0]), std::make_pair(std::ptrdiff_t{1}, std::ptrdiff_t{2}));
    EXPECT_EQ(pair_name(points.points()[1]), std::make_pair(std::ptrdiff_t{2}, std::ptrdiff_t{3}));
    EXPECT_NEAR(double(points.points()[0].point.getDistance()), 1e-6, kQueryGap);
    EXPECT_NEAR(double(points.points()[1].point.getDistance()), 5e-4, kQueryGap);
  };
  check("world array indices");
  std::vector<int> indices;
  for (btRigidBody* b : balls) indices.push_back(b->getWorldArrayIndex());
  for (btRigidBody* b : balls) b->setWorldArrayIndex(-1);
  check("no world array index");
  for (btRigidBody* b : balls) b->setWorldArrayIndex(indices[0]);
  check("one stale index for all");
  for (size_t i = 0; i < balls.size(); ++i) balls[i]->setWorldArrayIndex(indices[i]);
}

// time_of_impact: A touches B and strikes it at 1 m/s; B–C is a 2e-4 m gap,
// D closes a 1e-4 m gap on C at 1 m/s. Gaps close in the order A–B (now),
// C–D (1e-4 s), then B–C; most_negative would take B–C second (a tie at
// 1 m/s broken by the lower contact index).
TEST(Touching, TimeOfImpactFollowsTheOrderOfClosing) {
  for (const OrderPolicy policy : {OrderPolicy::kTimeOfImpact, OrderPolicy::kMostNegative}) {
    SCOPED_TRACE(simpact::to_string(policy));
    BulletWorld world(simpact_world(policy));
    std::vector<ImpactReport> reports;
    simpact::bullet::ImpactSolverConfig config = world.options().simpact;
    config.on_impact = [&](const ImpactReport& r) { reports.push_back(r); };
    world.impact_solver()->set_config(config);
    const double r = 0.05;
    btRigidBody* a = world.add_sphere(r, ball(0.0, 1.0));
    btRigidBody* b = world.add_sphere(r, ball(2 * r - 1e-7));
    btRigidBody* c = world.add_sphere(r, ball(4 * r + 2e-4));
    btRigidBody* d = world.add_sphere(r, ball(6 * r + 3e-4, -1.0));
    const double before = world.kinetic_energy();
    world.step(kStep);
    ASSERT_EQ(reports.size(), 1u);
    const ImpactReport& report = reports[0];
    ASSERT_EQ(report.contacts.size(), 3u);
    const auto pair = [&](int contact) {
      const auto* x = report.contacts[static_cast<size_t>(contact)].a;
      const auto* y = report.contacts[static_cast<size_t>(contact)].b;
      const auto name = [&](const btCollisionObject* o) {
        return o == a ? "A" : o == b ? "B" : o == c ? "C" : o == d ? "D" : "?";
      };
      std::string s = std::string(name(x)) + name(y);
      if (s[0] > s[1]) std::swap(s[0], s[1]);
      return s;
    };
    ASSERT_GE(report.sequence.size(), 2u);
    std::string order;
    for (const int k : report.sequence) order += pair(k) + " ";
    std::printf("%s: sequence %s\n", simpact::to_string(policy), order.c_str());
    EXPECT_EQ(pair(report.sequence[0]), "AB");
    EXPECT_EQ(pair(report.sequence[1]), policy == OrderPolicy::kTimeOfImpact ? "CD" : "BC");
    EXPECT_NEAR(world.kinetic_energy(), before, kEnergy * before);
  }
}

// The repro of the audit: policy time_of_impact on a loop-placed 3-ball
// chain (from the fuzzing at commit ba6ab6f, scene_toi_policy.json).
TEST(Touching, TimeOfImpactPolicyResolvesTheChain) {
  BulletWorld world(simpact_world(OrderPolicy::kTimeOfImpact));
  std::vector<btRigidBody*> bodies;
  for (int i = 0; i < 3; ++i) {
    BodyOptions b = ball(i * 0.1, i == 0 ? 1.0 : 0.0);
    b.linear_factor = {1, 0, 0};
    b.angular_factor = {0, 0, 0};
    bodies.push_back(world.add_sphere(0.05, b));
  }
  const double before = world.kinetic_energy();
  world.step(1.0 / 240.0, 24);
  std::vector<double> v;
  for (btRigidBody* b : bodies) v.push_back(double(b->getLinearVelocity().x()));
  expect_cradle(v, 1, 1.0);
  EXPECT_NEAR(world.kinetic_energy(), before, kEnergy * before);
  EXPECT_EQ(world.impacts(), 1);
}

// Featherstone pendulum cradles (r = 5 cm, L = 1 m, 1 kg, e = 1), the first
// bob swinging in at 1 m/s. `overlap` 0: placed by the loop x = i · 0.1;
// > 0: at i · (0.1 − overlap), Bullet's points from the start.
struct MultiBodyCradleRun {
  std::vector<MultiBodyImpactReport> reports;  // of the first impact step
  std::vector<double> rates;                   // after it
  double energy_gain = 0.0;  // largest relative gain of the mechanical energy over 2 s
};

MultiBodyCradleRun multibody_cradle(int n, double overlap) {
  MultiBodyCradleRun run;
  MultiBodyWorldOptions o;
  o.config.on_impact = [&](const MultiBodyImpactReport& r) { run.reports.push_back(r); };
  MultiBodyWorld world(o);
  const double r = 0.05, length = 1.0;
  std::vector<btMultiBody*> pendulums;
  for (int i = 0; i < n; ++i) {
    const double x = i * (0.1 - overlap);
    pendulums.push_back(world.add_pendulum({x, length, 0}, {x, 0, 0}, r, 1.0, 1.0, i == 0 ? 1.0 / length : 0.0));
  }
  const auto mechanical = [&]() {
    double e = 0.0;
    for (btMultiBody* p : pendulums)
      e += MultiBodyWorld::kinetic_energy(*p) +
           simpact::worlds::kStandardGravity * MultiBodyWorld::link_position(*p, 0).y();
    return e;
  };
  const double start = mechanical();
  int step = 0;
  for (; step < 4 && run.reports.empty(); ++step) world.step(kStep);
  for (btMultiBody* p : pendulums) run.rates.push_back(MultiBodyWorld::joint_velocity(*p, 0));
  const std::vector<MultiBodyImpactReport> first = run.reports;
  for (; step < 480; ++step) {
    world.step(kStep);
    run.energy_gain = std::max(run.energy_gain, (mechanical() - start) / start);
  }
  run.reports = first;
  return run;
}

// Loop-placed: one impact, the cradle's outcome, the impact's energy kept;
// over 2 s (the last bob swings out and back, strikes the row, …) the
// energy follows the exactly touching cradle's (symplectic Euler's own
// oscillation, ~0.5 % at 240 Hz), where separate impacts gained 2 % (5
// links) and 5 % (10 links).
TEST(Touching, LoopPlacedMultibodyCradle) {
  for (const int n : {5, 10}) {
    SCOPED_TRACE(std::to_string(n) + " pendulums");
    const MultiBodyCradleRun run = multibody_cradle(n, 0.0);
    const MultiBodyCradleRun touching = multibody_cradle(n, 1e-7);
    std::printf("multibody cradle %d: rates %s; largest energy gain over 2 s %+.4g (exactly touching: %+.4g)\n", n,
                describe(run.rates).c_str(), run.energy_gain, touching.energy_gain);
    ASSERT_EQ(run.reports.size(), 1u);
    EXPECT_EQ(run.reports[0].contacts.size(), static_cast<size_t>(n - 1));
    EXPECT_NEAR(run.reports[0].energy_after, run.reports[0].energy_before, kEnergy * run.reports[0].energy_before);
    for (int i = 0; i + 1 < n; ++i) EXPECT_NEAR(run.rates[i], 0.0, kExact) << "pendulum " << i;
    EXPECT_GT(run.rates[n - 1], 0.99);
    EXPECT_LT(run.energy_gain, touching.energy_gain + kSwingEnergyError);
  }
}

// predict_outcome_sets sees what the step will resolve: the touching pairs
// of a loop-placed row join the prediction's cluster as they join the step's
// (before, the prediction held the striker's pair alone while the step
// resolved the whole row).
TEST(Touching, PredictionIncludesTheTouchingPairs) {
  constexpr int kBalls = 6;
  constexpr double kRadius = 0.05;
  WorldOptions options = simpact_world();
  options.simpact.law = simpact::bullet::ImpactLaw::kRouth;
  BulletWorld world(options);
  std::vector<btRigidBody*> bodies;
  for (int i = 0; i < kBalls; ++i)
    bodies.push_back(world.add_sphere(kRadius, ball(i * 0.1, i == 0 ? 1.0 : 0.0)));
  ASSERT_GT(largest_gap(bodies, kRadius), 0.0) << "the loop must leave gaps for this test to mean anything";
  std::vector<simpact::bullet::PredictedImpact> predicted;
  simpact::RouthSetParameters set;
  set.samples = 2;
  for (int step = 0; step < 48 && predicted.empty(); ++step) {
    predicted = world.impact_solver()->predict_outcome_sets(world.dynamics_world(), btScalar(kStep), set);
    if (predicted.empty()) world.step(kStep);
  }
  ASSERT_EQ(predicted.size(), 1u);
  EXPECT_EQ(predicted[0].bodies.size(), std::size_t(kBalls)) << "every ball of the row is in the cluster";
  EXPECT_EQ(predicted[0].contacts.size(), std::size_t(kBalls - 1));
  EXPECT_EQ(predicted[0].law, simpact::bullet::AppliedLaw::kRouth);
}

}  // namespace
