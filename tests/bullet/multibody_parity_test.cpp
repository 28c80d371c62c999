// The rigid adapter's scenario tests (scenario_test.cpp) on every scene that
// can be expressed for the multibody adapter: free balls and a ground plane.
// Each scene runs in three hosts —
//   rigid       BulletWorld + ImpactSolver (the rigid adapter),
//   mb_rigid    MultiBodyWorld + MultiBodyImpactSolver, the balls rigid bodies
//               (the multibody adapter's rigid nodes),
//   mb_free     MultiBodyWorld + MultiBodyImpactSolver, every ball a free-base
//               multibody without links (the ABA metric path) —
// and must meet the same closed forms of classical mechanics (never numbers
// copied from a run). Scenes that need rigid joints, kinematic bodies,
// boxes or locked axes have no multibody form (MultiBodyWorld) and stay in
// scenario_test.cpp.
#include <simpact/bullet/impact_solver.h>
#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact_worlds/bullet_world.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <cmath>
#include <memory>
#include <string>
#include <tuple>
#include <vector>

namespace {

namespace worlds = simpact::worlds;
using simpact::bullet::ImpactReport;
using simpact::bullet::ImpactSettings;

/// As scenario_test.cpp: the impact is exact in the core (~1e-15) and Bullet
/// stores velocities in btScalar; double: 1e-9 m/s at 1 m/s strikes is a
/// wide margin over one rounding per step; float: 2e-6.
constexpr bool kDouble = sizeof(btScalar) == sizeof(double);
constexpr double kVelocityTolerance = kDouble ? 1e-9 : 2e-6;
/// Ball–ball contacts left touching in float overlap by a few position ulps
/// (~6e-8 m near 0.5 m), which a base solver's Baumgarte term (erp 0.2) turns
/// into velocity erp · 4 ulp / h (scenario_test.cpp); zero in double.
double PositionRoundingVelocity(double rate) { return kDouble ? 0.0 : 0.2 * 4 * 6e-8 * rate; }

enum class Host { kRigid, kMultibodyRigidNodes, kMultibodyFreeBases };

std::string HostName(Host host) {
  switch (host) {
    case Host::kRigid: return "rigid";
    case Host::kMultibodyRigidNodes: return "mb_rigid";
    case Host::kMultibodyFreeBases: return "mb_free";
  }
  return "unknown";
}

/// The base solver behind simpact, named alike in both worlds.
enum class Base { kSequentialImpulse, kMlcpDantzig, kMlcpLemke };

std::string BaseName(Base base) {
  switch (base) {
    case Base::kSequentialImpulse: return "si";
    case Base::kMlcpDantzig: return "dantzig";
    case Base::kMlcpLemke: return "lemke";
  }
  return "unknown";
}

struct Ball {
  double mass = 1.0;
  double radius = 0.05;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  double restitution = 1.0;
};

/// One scene in one host. Restitutions combine by product in every host
/// (MultiBodyWorld's only combiner), contacts are frictionless.
class ParityWorld {
 public:
  ParityWorld(Host host, const ImpactSettings& settings, const Eigen::Vector3d& gravity,
              Base base = Base::kSequentialImpulse)
      : host_(host) {
    if (host == Host::kRigid) {
      worlds::WorldOptions options;
      options.solver = worlds::SolverKind::kSimpact;
      options.base = base == Base::kSequentialImpulse ? worlds::SolverKind::kStockSi
                     : base == Base::kMlcpDantzig    ? worlds::SolverKind::kStockMlcpDantzig
                                                     : worlds::SolverKind::kStockMlcpLemke;
      options.gravity = gravity;
      static_cast<ImpactSettings&>(options.simpact) = settings;
      options.simpact.on_impact = [this](const ImpactReport& r) { record(r); };
      rigid_ = std::make_unique<worlds::BulletWorld>(options);
    } else {
      worlds::MultiBodyWorldOptions options;
      options.gravity = gravity;
      static_cast<ImpactSettings&>(options.config) = settings;
      options.config.base = base == Base::kSequentialImpulse ? simpact::bullet::MultiBodyBaseSolver::kSequentialImpulse
                            : base == Base::kMlcpDantzig    ? simpact::bullet::MultiBodyBaseSolver::kMlcpDantzig
                                                            : simpact::bullet::MultiBodyBaseSolver::kMlcpLemke;
      options.config.on_impact = [this](const simpact::bullet::MultiBodyImpactReport& r) { record(r); };
      multibody_ = std::make_unique<worlds::MultiBodyWorld>(options);
    }
  }

  void add_ball(const Ball& ball) {
    if (host_ == Host::kMultibodyFreeBases) {
      worlds::FreeBase base;
      base.center = ball.position;
      base.mass = ball.mass;
      base.inertia = Eigen::Vector3d::Constant(0.4 * ball.mass * ball.radius * ball.radius);
      base.velocity = ball.velocity;
      worlds::SphereCollider collider;
      collider.center = ball.position;
      collider.radius = ball.radius;
      collider.restitution = ball.restitution;
      collider.friction = 0.0;
      free_bases_.push_back(multibody_->add_free_base_tree(base, {}, {collider}));
      return;
    }
    worlds::BodyOptions options;
    options.mass = ball.mass;
    options.position = ball.position;
    options.velocity = ball.velocity;
    options.restitution = ball.restitution;
    options.friction = 0.0;
    options.never_sleep = true;
    bodies_.push_back(rigid_ ? rigid_->add_sphere(ball.radius, options)
                             : multibody_->add_sphere(ball.radius, options));
  }

  /// The plane y = 0.
  void add_ground(double restitution) {
    if (rigid_) {
      worlds::BodyOptions ground;
      ground.mass = 0.0;
      ground.restitution = restitution;
      ground.friction = 0.0;
      rigid_->add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
    } else {
      multibody_->add_plane(Eigen::Vector3d::UnitY(), 0.0, restitution, 0.0);
    }
  }

  void step(double h) {
    approach_ = -1.0;
    if (rigid_)
      rigid_->step(h);
    else
      multibody_->step(h);
  }

  Eigen::Vector3d velocity(int ball) const {
    if (host_ == Host::kMultibodyFreeBases)
      return worlds::MultiBodyWorld::link_velocity(*free_bases_[static_cast<size_t>(ball)], -1);
    return worlds::velocity(*bodies_[static_cast<size_t>(ball)]);
  }
  Eigen::Vector3d position(int ball) const {
    if (host_ == Host::kMultibodyFreeBases)
      return worlds::MultiBodyWorld::link_position(*free_bases_[static_cast<size_t>(ball)], -1);
    return worlds::position(*bodies_[static_cast<size_t>(ball)]);
  }
  double kinetic_energy() const {
    double energy = 0.0;
    for (const btMultiBody* mb : free_bases_) energy += worlds::MultiBodyWorld::kinetic_energy(*mb);
    for (const btRigidBody* body : bodies_) {
      const Eigen::Vector3d v = worlds::velocity(*body);
      energy += 0.5 * v.squaredNorm() / double(body->getInvMass());
    }
    return energy;
  }
  std::int64_t impacts() const {
    return rigid_ ? rigid_->impacts() : multibody_->impact_solver()->stats().impacts;
  }
  /// The first contact's approach speed of this step's impact (−1: none).
  double approach() const { return approach_; }
  int fallbacks() const { return fallbacks_; }
  int reports() const { return reports_; }
  /// The law of every report, in order, and the law each attempted.
  const std::vector<simpact::bullet::AppliedLaw>& laws() const { return laws_; }
  const std::vector<simpact::bullet::AppliedLaw>& attempted_laws() const { return attempted_laws_; }
  std::int64_t variational_over_budget() const {
    return rigid_ ? rigid_->impact_solver()->stats().variational_over_budget
                  : multibody_->impact_solver()->stats().variational_over_budget;
  }
  /// ξ of every report that carried one.
  const std::vector<double>& indeterminacies() const { return indeterminacies_; }

 private:
  void record(const ImpactReport& r) {
    laws_.push_back(r.law);
    attempted_laws_.push_back(r.attempted_law);
    if (r.fallback_to_base) ++fallbacks_;
    if (r.indeterminacy) indeterminacies_.push_back(*r.indeterminacy);
    ++reports_;
    if (!r.contacts.empty()) approach_ = r.contacts[0].approach_speed;
  }

  Host host_;
  std::unique_ptr<worlds::BulletWorld> rigid_;
  std::unique_ptr<worlds::MultiBodyWorld> multibody_;
  std::vector<btRigidBody*> bodies_;
  std::vector<btMultiBody*> free_bases_;
  double approach_ = -1.0;
  int fallbacks_ = 0;
  int reports_ = 0;
  std::vector<double> indeterminacies_;
  std::vector<simpact::bullet::AppliedLaw> laws_;
  std::vector<simpact::bullet::AppliedLaw> attempted_laws_;
};

// ── Newton's cradle, free balls (scenario_test.cpp, Cradle) ─────────────────

struct CradleCase {
  Host host;
  int balls;
  int incoming;
  double gap;
};

class CradleParity : public ::testing::TestWithParam<CradleCase> {};

// Equal masses: the incoming balls stop and as many leave the far end at the
// strikers' speed (Seghete & Murphey 2014, eq. (15)); energy is conserved.
constexpr double kCradleRate = 240.0, kCradleSpeed = 1.0;

// `balls` touching (or `gap` apart) along x, the first `incoming` of them
// touching each other and approaching the row at kCradleSpeed.
void AddCradle(ParityWorld& world, int balls, int incoming, double gap) {
  constexpr double kRadius = 0.05;
  constexpr double kApproach = 0.01;  // [m] between the strikers and the row at t = 0
  for (int i = 0; i < balls; ++i) {
    Ball ball;
    ball.radius = kRadius;
    const bool striker = i < incoming;
    const double x = striker ? double(i) * 2.0 * kRadius
                             : double(incoming) * 2.0 * kRadius + kApproach +
                                   double(i - incoming) * (2.0 * kRadius + gap);
    ball.position = Eigen::Vector3d(x, 0.5, 0.0);
    ball.velocity = Eigen::Vector3d(striker ? kCradleSpeed : 0.0, 0.0, 0.0);
    world.add_ball(ball);
  }
}

// Steps until the last `incoming` balls leave and the others have stopped
// (at most 1 s); the steps taken.
int RunCradle(ParityWorld& world, int balls, int incoming) {
  int steps = 0;
  for (; steps < static_cast<int>(kCradleRate); ++steps) {
    world.step(1.0 / kCradleRate);
    bool done = true;
    for (int i = 0; i < balls; ++i) {
      const double v = world.velocity(i).x();
      done = done && (i >= balls - incoming ? v > 0.5 : std::abs(v) < 0.5);
    }
    if (done) break;
  }
  return steps;
}

TEST_P(CradleParity, LastBallsLeaveAtTheStrikersSpeed) {
  const CradleCase& c = GetParam();
  constexpr double kRate = kCradleRate, kSpeed = kCradleSpeed;
  ParityWorld world(c.host, ImpactSettings{}, Eigen::Vector3d::Zero());
  AddCradle(world, c.balls, c.incoming, c.gap);
  const double energy_before = world.kinetic_energy();
  const int steps = RunCradle(world, c.balls, c.incoming);
  const double tolerance = kVelocityTolerance + PositionRoundingVelocity(kRate);
  for (int i = 0; i < c.balls; ++i) {
    const double expected = i >= c.balls - c.incoming ? kSpeed : 0.0;
    EXPECT_NEAR(world.velocity(i).x(), expected, tolerance) << "ball " << i << " after " << steps << " steps";
  }
  EXPECT_GE(world.impacts(), 1);
  EXPECT_EQ(world.fallbacks(), 0);
  EXPECT_NEAR(world.kinetic_energy(), energy_before, kVelocityTolerance * energy_before);
}

std::vector<CradleCase> CradleCases() {
  std::vector<CradleCase> cases;
  for (Host host : {Host::kRigid, Host::kMultibodyRigidNodes, Host::kMultibodyFreeBases})
    for (int balls : {3, 5})
      for (int incoming : {1, 2})
        for (double gap : {0.0, 0.002}) cases.push_back({host, balls, incoming, gap});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Hosts, CradleParity, ::testing::ValuesIn(CradleCases()),
                         [](const ::testing::TestParamInfo<CradleCase>& param_info) {
                           const CradleCase& c = param_info.param;
                           return HostName(c.host) + "_" + std::to_string(c.balls) + "balls_" +
                                  std::to_string(c.incoming) + "in_" + (c.gap > 0 ? "gap" : "touching");
                         });

// ── A dropped ball (scenario_test.cpp, BallDrop) ────────────────────────────

class BallDropParity : public ::testing::TestWithParam<std::tuple<Host, double>> {};

// Each bounce reverses the mid-step approach speed times R.
TEST_P(BallDropParity, ReboundsAtMinusRTimesTheApproachSpeed) {
  const auto [host, restitution] = GetParam();
  constexpr double kRate = 240.0, kGravity = 9.81;
  ParityWorld world(host, ImpactSettings{}, Eigen::Vector3d(0.0, -kGravity, 0.0));
  world.add_ground(1.0);
  Ball ball;
  ball.radius = 0.1;
  ball.position = Eigen::Vector3d(0.0, 1.1, 0.0);
  ball.restitution = restitution;
  world.add_ball(ball);
  int bounces = 0;
  for (int k = 0; k < static_cast<int>(3.0 * kRate) && bounces < 4; ++k) {
    world.step(1.0 / kRate);
    if (world.approach() < 0.0) continue;
    // The impact acts on the mid-step velocity; at the end of the step
    // gravity has acted for the second half step since.
    const double rebound = world.velocity(0).y() + 0.5 * kGravity / kRate;
    EXPECT_NEAR(rebound, restitution * world.approach(), 10.0 * kVelocityTolerance) << "bounce " << bounces;
    ++bounces;
  }
  EXPECT_GE(bounces, 2);
  EXPECT_EQ(world.fallbacks(), 0);
}

INSTANTIATE_TEST_SUITE_P(Hosts, BallDropParity,
                         ::testing::Combine(::testing::Values(Host::kRigid, Host::kMultibodyRigidNodes,
                                                              Host::kMultibodyFreeBases),
                                            ::testing::Values(1.0, 0.5)),
                         [](const ::testing::TestParamInfo<std::tuple<Host, double>>& param_info) {
                           return HostName(std::get<0>(param_info.param)) +
                                  (std::get<1>(param_info.param) == 1.0 ? "_elastic" : "_half");
                         });

// ── Head-on, unequal masses (scenario_test.cpp, HeadOn) ─────────────────────

class HeadOnParity : public ::testing::TestWithParam<Host> {};

// Newton's law of restitution with momentum conservation:
//   v1' = (m1 v1 + m2 v2 + m2 e (v2 − v1)) / (m1 + m2),
//   v2' = (m1 v1 + m2 v2 + m1 e (v1 − v2)) / (m1 + m2).
TEST_P(HeadOnParity, UnequalMassesMatchTheClassicalFormulas) {
  for (const double e : {1.0, 0.6, 0.0}) {
    ImpactSettings settings;
    settings.resolve_plastic_impacts = true;  // e = 0 by the core's law too
    ParityWorld world(GetParam(), settings, Eigen::Vector3d::Zero());
    const double m1 = 3.0, m2 = 1.0, v1 = 1.0, v2 = -2.0;
    Ball a, b;
    a.mass = m1;
    a.position = Eigen::Vector3d(-0.06, 0.5, 0.0);
    a.velocity = Eigen::Vector3d(v1, 0.0, 0.0);
    a.restitution = e;  // the product e · 1 is the pair's e
    b.mass = m2;
    b.position = Eigen::Vector3d(0.06, 0.5, 0.0);
    b.velocity = Eigen::Vector3d(v2, 0.0, 0.0);
    b.restitution = 1.0;
    world.add_ball(a);
    world.add_ball(b);
    for (int k = 0; k < 240; ++k) world.step(1.0 / 240.0);
    const double p = m1 * v1 + m2 * v2;
    EXPECT_NEAR(world.velocity(0).x(), (p + m2 * e * (v2 - v1)) / (m1 + m2), kVelocityTolerance) << "e = " << e;
    EXPECT_NEAR(world.velocity(1).x(), (p + m1 * e * (v1 - v2)) / (m1 + m2), kVelocityTolerance) << "e = " << e;
    EXPECT_EQ(world.impacts(), 1) << "e = " << e;
    EXPECT_EQ(world.fallbacks(), 0);
  }
}

INSTANTIATE_TEST_SUITE_P(Hosts, HeadOnParity,
                         ::testing::Values(Host::kRigid, Host::kMultibodyRigidNodes, Host::kMultibodyFreeBases),
                         [](const ::testing::TestParamInfo<Host>& param_info) { return HostName(param_info.param); });

}  // namespace

// ── Resting contact is the base solver's, without Bullet's bounce ───────────

class RestingParity : public ::testing::TestWithParam<Host> {};

/// Resting on the ground under gravity, a ball's height stays within this of
/// its start [m]: Bullet's penetration recovery at 30 Hz settles within a
/// millimetre; a bounce off a resting contact (g·h = 0.33 m/s at 30 Hz,
/// above Bullet's 0.2 m/s restitution threshold) lifts it ~5 mm.
constexpr double kRestingDrift = 1e-3;

// An elastic ball resting on an elastic ground at 30 Hz: the contact is
// sustained (its approach speed before this step's forces is ~0), so no
// host may bounce it. Bullet's own restitution measures the post-force
// approach g·h and bounces it every few steps; every host hands the base
// solver the contact with restitution off.
TEST_P(RestingParity, ElasticBallOnElasticGroundStaysAt30Hz) {
  constexpr double kRate = 30.0, kRadius = 0.1;
  const Eigen::Vector3d gravity(0.0, -9.81, 0.0);
  const auto run = [&](auto& world, auto height) {
    double worst = 0.0;
    const double start = height();
    for (int k = 0; k < static_cast<int>(2.0 * kRate); ++k) {
      world.step(1.0 / kRate);
      worst = std::max(worst, std::abs(height() - start));
    }
    return worst;
  };
  Ball ball;
  ball.radius = kRadius;
  ball.position = Eigen::Vector3d(0.0, kRadius, 0.0);
  ball.restitution = 1.0;
  ParityWorld world(GetParam(), ImpactSettings{}, gravity);
  world.add_ground(1.0);
  world.add_ball(ball);
  EXPECT_LT(run(world, [&] { return world.position(0).y(); }), kRestingDrift);
  EXPECT_EQ(world.impacts(), 0);
  // Stock Bullet's btMultiBodyConstraintSolver does bounce a multibody
  // ball (its multibody rows measure the post-force approach; its rigid
  // rows do not): the test can tell.
  worlds::MultiBodyWorldOptions stock_options;
  stock_options.simpact = false;
  stock_options.gravity = gravity;
  worlds::MultiBodyWorld stock(stock_options);
  stock.add_plane(Eigen::Vector3d::UnitY(), 0.0, 1.0, 0.0);
  worlds::FreeBase base;
  base.center = ball.position;
  base.inertia = Eigen::Vector3d::Constant(0.4 * kRadius * kRadius);
  worlds::SphereCollider collider;
  collider.center = ball.position;
  collider.radius = kRadius;
  collider.restitution = 1.0;
  collider.friction = 0.0;
  const btMultiBody* free_ball = stock.add_free_base_tree(base, {}, {collider});
  const double stock_drift = run(stock, [&] { return worlds::MultiBodyWorld::link_position(*free_ball, -1).y(); });
#ifdef SIMPACT_BULLET_PATCH_0003
  // bullet_patches/0003 measures the multibody rows' approach before the
  // forces too: patched Bullet keeps the ball resting as simpact does.
  EXPECT_LT(stock_drift, kRestingDrift);
#else
  EXPECT_GT(stock_drift, kRestingDrift);
#endif
}

INSTANTIATE_TEST_SUITE_P(Hosts, RestingParity,
                         ::testing::Values(Host::kRigid, Host::kMultibodyRigidNodes, Host::kMultibodyFreeBases),
                         [](const ::testing::TestParamInfo<Host>& param_info) { return HostName(param_info.param); });

// ── The base solver behind simpact (scenario_test.cpp, BaseSolver) ──────────

class BaseParity : public ::testing::TestWithParam<std::tuple<Host, Base>> {};

// The same impacts whichever stock solver runs behind simpact: the touching
// 5-ball cradle with 2 incoming leaves as (0, 0, 0, 1, 1).
TEST_P(BaseParity, CradleOutcomeDoesNotDependOnTheBase) {
  const auto [host, base] = GetParam();
  ParityWorld world(host, ImpactSettings{}, Eigen::Vector3d::Zero(), base);
  AddCradle(world, 5, 2, 0.0);
  RunCradle(world, 5, 2);
  const double tolerance = kVelocityTolerance + PositionRoundingVelocity(kCradleRate);
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(world.velocity(i).x(), i >= 3 ? kCradleSpeed : 0.0, tolerance) << "ball " << i;
  EXPECT_EQ(world.fallbacks(), 0);
}

INSTANTIATE_TEST_SUITE_P(Hosts, BaseParity,
                         ::testing::Combine(::testing::Values(Host::kRigid, Host::kMultibodyRigidNodes,
                                                              Host::kMultibodyFreeBases),
                                            ::testing::Values(Base::kSequentialImpulse, Base::kMlcpDantzig,
                                                              Base::kMlcpLemke)),
                         [](const ::testing::TestParamInfo<std::tuple<Host, Base>>& param_info) {
                           return HostName(std::get<0>(param_info.param)) + "_" +
                                  BaseName(std::get<1>(param_info.param));
                         });

// ── Skimming and indeterminacy (scenario_test.cpp, Predictive and Report) ───

class ReportParity : public ::testing::TestWithParam<Host> {};

// A ball skimming 5 mm above the ground at 5 m/s is never struck: Bullet's
// speculative point is no impact.
TEST_P(ReportParity, SkimmingBallIsNeverStruck) {
  ParityWorld world(GetParam(), ImpactSettings{}, Eigen::Vector3d::Zero());
  world.add_ground(1.0);
  Ball ball;
  ball.radius = 0.1;
  ball.position = Eigen::Vector3d(0.0, 0.1 + 0.005, 0.0);
  ball.velocity = Eigen::Vector3d(5.0, 0.0, 0.0);
  world.add_ball(ball);
  for (int k = 0; k < 60; ++k) world.step(1.0 / 60.0);
  EXPECT_EQ(world.impacts(), 0);
  EXPECT_EQ(world.reports(), 0);
  EXPECT_NEAR(world.velocity(0).x(), 5.0, kVelocityTolerance);
  EXPECT_NEAR(world.velocity(0).y(), 0.0, kVelocityTolerance);
}

// With compute_indeterminacy every report carries ξ, zero for the cradle
// (Seghete & Murphey 2014, Theorem 3).
TEST_P(ReportParity, IndeterminacyOfTheCradleIsZero) {
  ImpactSettings settings;
  settings.compute_indeterminacy = true;
  ParityWorld world(GetParam(), settings, Eigen::Vector3d::Zero());
  AddCradle(world, 3, 1, 0.0);
  RunCradle(world, 3, 1);
  ASSERT_GT(world.reports(), 0);
  ASSERT_EQ(static_cast<int>(world.indeterminacies().size()), world.reports()) << "a report without ξ";
  for (const double xi : world.indeterminacies()) EXPECT_LE(xi, kVelocityTolerance);
}

// ImpactSettings::variational_budget: a cluster whose enumeration of every
// sequence exceeds it is resolved by the propagative law, reported (law
// propagative, attempted variational, a message) and counted, never handed
// to the base solver. One reflection is below what the 5-ball cradle with 2
// incoming needs; its propagative outcome is (0, 0, 0, 1, 1) as well.
TEST_P(ReportParity, VariationalOverBudgetTakesThePropagativeLaw) {
  ImpactSettings settings;
  settings.law = simpact::bullet::ImpactLaw::kVariational;
  settings.variational_budget = 1;
  ParityWorld world(GetParam(), settings, Eigen::Vector3d::Zero());
  AddCradle(world, 5, 2, 0.0);
  RunCradle(world, 5, 2);
  const double tolerance = kVelocityTolerance + PositionRoundingVelocity(kCradleRate);
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(world.velocity(i).x(), i >= 3 ? kCradleSpeed : 0.0, tolerance) << "ball " << i;
  ASSERT_GT(world.reports(), 0);
  EXPECT_EQ(world.fallbacks(), 0);
  EXPECT_EQ(world.variational_over_budget(), world.reports());
  for (size_t k = 0; k < world.laws().size(); ++k) {
    EXPECT_EQ(world.laws()[k], simpact::bullet::AppliedLaw::kPropagative);
    EXPECT_EQ(world.attempted_laws()[k], simpact::bullet::AppliedLaw::kVariational);
  }
}

INSTANTIATE_TEST_SUITE_P(Hosts, ReportParity,
                         ::testing::Values(Host::kRigid, Host::kMultibodyRigidNodes, Host::kMultibodyFreeBases),
                         [](const ::testing::TestParamInfo<Host>& param_info) { return HostName(param_info.param); });

// ── The other laws (variational.h, pasquero.h) through both adapters ────────

class LawParity : public ::testing::TestWithParam<std::tuple<Host, simpact::bullet::ImpactLaw>> {};

// The touching 5-ball cradle with 2 incoming has one outcome, (0, 0, 0, 1,
// 1), under Seghete & Murphey 2010's projection (a single vertex) and
// Pasquero's law (§4 Example 1): both elastic laws reach it in every host,
// and every report names the law.
TEST_P(LawParity, ElasticLawsOnTheCradle) {
  const auto [host, law] = GetParam();
  ImpactSettings settings;
  settings.law = law;
  ParityWorld world(host, settings, Eigen::Vector3d::Zero());
  AddCradle(world, 5, 2, 0.0);
  RunCradle(world, 5, 2);
  const double tolerance = kVelocityTolerance + PositionRoundingVelocity(kCradleRate);
  for (int i = 0; i < 5; ++i)
    EXPECT_NEAR(world.velocity(i).x(), i >= 3 ? kCradleSpeed : 0.0, tolerance) << "ball " << i;
  EXPECT_GE(world.impacts(), 1);
  EXPECT_EQ(world.fallbacks(), 0);
  const simpact::bullet::AppliedLaw applied = law == simpact::bullet::ImpactLaw::kVariational
                                                  ? simpact::bullet::AppliedLaw::kVariational
                                                  : simpact::bullet::AppliedLaw::kPasquero;
  for (const simpact::bullet::AppliedLaw reported : world.laws()) EXPECT_EQ(reported, applied);
}

INSTANTIATE_TEST_SUITE_P(
    Hosts, LawParity,
    ::testing::Combine(::testing::Values(Host::kRigid, Host::kMultibodyRigidNodes, Host::kMultibodyFreeBases),
                       ::testing::Values(simpact::bullet::ImpactLaw::kVariational,
                                         simpact::bullet::ImpactLaw::kPasquero)),
    [](const ::testing::TestParamInfo<std::tuple<Host, simpact::bullet::ImpactLaw>>& param_info) {
      return HostName(std::get<0>(param_info.param)) + "_" +
             simpact::bullet::to_string(std::get<1>(param_info.param));
    });

