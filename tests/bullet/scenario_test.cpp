// Scenario tests: simpact in real Bullet worlds through the shared
// BulletWorld fixture and scenes (demos/scenes). Expectations are closed
// forms of classical mechanics, never numbers copied from a run.
#include "support/compare.h"

#include <simpact_scenes/bullet_scenes.h>
#include <simpact_worlds/bullet_world.h>

#include <btBulletDynamicsCommon.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <string>
#include <tuple>
#include <vector>

namespace simpact {
namespace {

using scenes::BulletWorld;
using scenes::SolverKind;
using testing::VectorsNear;

/// Free balls: the impact is exact in the core (~1e-15) and Bullet stores and
/// updates velocities in btScalar. Double: one rounding per step, 1e-9 m/s
/// at 1 m/s strikes is a wide margin. Single precision (float: ulp 1.2e-7 at
/// 1 m/s, a few dozen float operations per step in the base solver): 2e-6.
constexpr bool kDoublePrecision = sizeof(btScalar) == sizeof(double);
constexpr double kFreeVelocityTolerance = kDoublePrecision ? 1e-9 : 2e-6;
/// In single precision positions round to ~6e-8 m near 0.5 m, so balls left
/// touching after an impact overlap by up to a few ulps, which Bullet's
/// Baumgarte correction (erp 0.2) turns into velocity: erp · 4 ulp / h.
/// Zero in double precision (1e-16 m ulps).
double PositionRoundingVelocity(double rate) { return kDoublePrecision ? 0.0 : 0.2 * 4 * 6e-8 * rate; }
/// Elastic energy of free balls, relative: same reasoning.
constexpr double kFreeEnergyTolerance = kFreeVelocityTolerance;
/// Balls on strings: measured one step after the impact, when gravity and
/// the string have turned each velocity by at most ω·h = (v/L)·h ≤ 1/6000
/// rad at 6 kHz, ≤ 1/60 at 60 Hz; the joint solver's residual adds less.
/// Relative to the strike speed: 2·(h/L)·v/v + joint residual.
double StringVelocityTolerance(double rate) { return 2.0 / rate + 1e-3; }

struct CradleCase {
  int balls;
  int incoming;
  double gap;
  bool strings;
  double rate;
};

std::string CradleName(const ::testing::TestParamInfo<CradleCase>& info) {
  const CradleCase& c = info.param;
  return std::to_string(c.balls) + "balls_" + std::to_string(c.incoming) + "in_" +
         (c.gap > 0 ? "gap" : "touching") + "_" + (c.strings ? "strings" : "free") + "_" +
         std::to_string(static_cast<int>(c.rate)) + "Hz";
}

scenes::WorldOptions SimpactWorld(SolverKind base = SolverKind::kStockSi) {
  scenes::WorldOptions options;
  options.solver = SolverKind::kSimpact;
  options.base = base;
  options.restitution_combiner = scenes::RestitutionCombiner::kMinimum;
  return options;
}

// Velocities of the balls along the line of the cradle (x).
Eigen::VectorXd LineVelocities(const scenes::Scene& scene) {
  Eigen::VectorXd v(static_cast<Eigen::Index>(scene.bodies.size()));
  for (size_t i = 0; i < scene.bodies.size(); ++i) v[static_cast<Eigen::Index>(i)] = scenes::velocity(*scene.bodies[i]).x();
  return v;
}

class Cradle : public ::testing::TestWithParam<CradleCase> {};

// Equal masses: the incoming balls stop and as many balls leave the far end at
// the striker's speed (Seghete & Murphey 2014, eq. (15); Seghete & Murphey
// 2010, eq. (4)); energy is conserved.
TEST_P(Cradle, LastBallsLeaveAtTheStrikersSpeed) {
  const CradleCase& c = GetParam();
  scenes::WorldOptions options = SimpactWorld();
  if (!c.strings) options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  scenes::CradleOptions cradle;
  cradle.balls = c.balls;
  cradle.incoming = c.incoming;
  cradle.gap = c.gap;
  cradle.strings = c.strings;
  cradle.speed = 1.0;
  const scenes::Scene scene = scenes::newtons_cradle(world, cradle);
  const double h = 1.0 / c.rate;
  const double energy_before = world.energy();
  // Step until every impact is over: the last ball has left its neighbour.
  int steps = 0;
  const int max_steps = static_cast<int>(std::ceil((scene.strike_time + 4.0 * c.gap + 0.02) / h)) + 2;
  while (steps < max_steps) {
    world.step(h);
    ++steps;
    const Eigen::VectorXd v = LineVelocities(scene);
    if (v.tail(c.incoming).minCoeff() > 0.5 && v.head(c.balls - c.incoming).cwiseAbs().maxCoeff() < 0.5)
      break;
  }
  Eigen::VectorXd expected = Eigen::VectorXd::Zero(c.balls);
  expected.tail(c.incoming).setOnes();
  const double tolerance = (c.strings ? StringVelocityTolerance(c.rate) : kFreeVelocityTolerance) +
                           PositionRoundingVelocity(c.rate);
  EXPECT_TRUE(VectorsNear(LineVelocities(scene), expected, tolerance, 0.0))
      << "after " << steps << " steps, " << world.impacts() << " impacts";
  EXPECT_GE(world.impacts(), 1);
  if (!c.strings) {
    EXPECT_NEAR(world.energy(), energy_before, kFreeEnergyTolerance * energy_before);
  }
}

std::vector<CradleCase> CradleCases() {
  std::vector<CradleCase> cases;
  for (int balls : {3, 5})
    for (int incoming : {1, 2})
      for (double gap : {0.0, 0.002})
        for (bool strings : {false, true})
          for (double rate : {60.0, 240.0, 6000.0}) cases.push_back({balls, incoming, gap, strings, rate});
  return cases;
}

INSTANTIATE_TEST_SUITE_P(Cases, Cradle, ::testing::ValuesIn(CradleCases()), CradleName);

// The free chain laid along any line (CradleOptions::axis): the balls touch
// as Bullet computes distances (place_along), and the outcome is the
// cradle's along that line, every velocity component checked.
struct AxisCase {
  const char* name;
  Eigen::Vector3d axis;
  int incoming;
  double gap;
};

void PrintTo(const AxisCase& c, std::ostream* os) { *os << c.name; }

class ChainAlongAxis : public ::testing::TestWithParam<AxisCase> {};

TEST_P(ChainAlongAxis, LastBallsLeaveAlongTheLine) {
  const AxisCase& c = GetParam();
  constexpr int kBalls = 7;
  constexpr double kRate = 240.0;
  scenes::WorldOptions options = SimpactWorld();
  options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  scenes::CradleOptions chain;
  chain.balls = kBalls;
  chain.incoming = c.incoming;
  chain.gap = c.gap;
  chain.strings = false;
  chain.axis = c.axis;
  const scenes::Scene scene = scenes::newtons_cradle(world, chain);
  const double energy_before = world.energy();
  const int steps = static_cast<int>(std::ceil(scene.strike_time * kRate)) + 1;
  world.step(1.0 / kRate, steps);
  const double tolerance = kFreeVelocityTolerance + PositionRoundingVelocity(kRate);
  for (int i = 0; i < kBalls; ++i) {
    const Eigen::Vector3d expected = (i >= kBalls - c.incoming ? 1.0 : 0.0) * c.axis;
    EXPECT_TRUE(VectorsNear(scenes::velocity(*scene.bodies[static_cast<size_t>(i)]), expected, tolerance, 0.0))
        << "ball " << i;
  }
  EXPECT_GE(world.impacts(), 1);
  EXPECT_NEAR(world.energy(), energy_before, kFreeEnergyTolerance * energy_before);
}

INSTANTIATE_TEST_SUITE_P(
    Lines, ChainAlongAxis,
    ::testing::Values(AxisCase{"x_touching", Eigen::Vector3d::UnitX(), 1, 0.0},
                      AxisCase{"diagonal_touching", scenes::kDiagonal, 1, 0.0},
                      AxisCase{"diagonal_two_in", scenes::kDiagonal, 2, 0.0},
                      AxisCase{"diagonal_gap", scenes::kDiagonal, 1, 0.002},
                      AxisCase{"minus_z_touching", -Eigen::Vector3d::UnitZ(), 1, 0.0},
                      AxisCase{"oblique_two_in", Eigen::Vector3d(0.3, -0.5, 0.8).normalized(), 2, 0.0}),
    [](const ::testing::TestParamInfo<AxisCase>& param_info) { return std::string(param_info.param.name); });

TEST(ChainAlongAxis, RejectsAnAxisThatIsNoLineOfBalls) {
  BulletWorld world(SimpactWorld());
  scenes::CradleOptions chain;
  chain.strings = false;
  chain.axis = Eigen::Vector3d(1.0, 1.0, 0.0);  // not unit
  EXPECT_THROW(scenes::newtons_cradle(world, chain), std::invalid_argument);
  chain.axis = Eigen::Vector3d(std::nan(""), 0.0, 0.0);
  EXPECT_THROW(scenes::newtons_cradle(world, chain), std::invalid_argument);
  chain.strings = true;  // strings hang along y: the line must be horizontal
  chain.axis = scenes::kDiagonal;
  EXPECT_THROW(scenes::newtons_cradle(world, chain), std::invalid_argument);
}

// A ball dropped on the ground: each impact reverses the approach speed
// times R (reported by the impact callback), and with R = 1 the bounce apex
// stays at the drop height. The apex of a symplectic-Euler parabola differs
// from the continuous one by ≤ g h²; over ten bounces the contact, resolved
// up to one step early (touch within the step), costs ≤ v h per bounce in
// height, i.e. a few mm at 240 Hz from 1 m.
/// The core's rebound is exact; Bullet stores it in btScalar (see above).
constexpr double kBounceSpeedTolerance = kFreeVelocityTolerance * 10.0;  // ~4.5 m/s impacts
double ApexTolerance(double rate) { return 3.0 * scenes::kStandardGravity / rate / rate + 4.5 / rate; }

class BallDrop : public ::testing::TestWithParam<double> {};

TEST_P(BallDrop, ReboundsAtMinusRTimesTheApproachSpeed) {
  const double restitution = GetParam();
  scenes::WorldOptions options = SimpactWorld();
  std::vector<std::pair<double, double>> bounces;  // approach speed, rebound speed
  double approach = -1.0;  // of the impact in the current step, if any
  options.simpact.on_impact = [&](const bullet::ImpactReport& report) {
    ASSERT_EQ(report.status, Status::kSuccess) << report.message;
    approach = report.contacts.at(0).approach_speed;
  };
  BulletWorld world(options);
  const scenes::Scene scene = scenes::ball_drop(world, 1.0, restitution);
  btRigidBody* ball = scene.bodies.at(0);
  const double rate = 240.0;
  const double drop_y = scenes::position(*ball).y();
  double apex = -1.0, last_y = drop_y;
  double worst_apex_error = 0.0;
  int apexes = 0;
  bool rising = false;
  for (int k = 0; k < static_cast<int>(6.0 * rate) && apexes < 10; ++k) {
    world.step(1.0 / rate);
    // The impact acts on the mid-step velocity (impact_solver.h); at the end
    // of the step gravity has acted for the second half step since.
    if (approach >= 0.0)
      bounces.emplace_back(approach, scenes::velocity(*ball).y() + 0.5 * scenes::kStandardGravity / rate);
    approach = -1.0;
    const double y = scenes::position(*ball).y();
    if (rising && y < last_y) {  // passed an apex
      apex = last_y;
      ++apexes;
      if (restitution == 1.0) worst_apex_error = std::max(worst_apex_error, std::abs(apex - drop_y));
    }
    rising = y >= last_y;  // a step can land exactly on the apex
    last_y = y;
  }
  ASSERT_GE(bounces.size(), 2u);
  for (const auto& [speed, rebound] : bounces)
    EXPECT_NEAR(rebound, restitution * speed, kBounceSpeedTolerance);
  if (restitution == 1.0) {
    EXPECT_GE(apexes, 5);
    EXPECT_LE(worst_apex_error, ApexTolerance(rate)) << "apex drifted from the drop height";
  }
}

INSTANTIATE_TEST_SUITE_P(R, BallDrop, ::testing::Values(1.0, 0.5),
                         [](const ::testing::TestParamInfo<double>& p) {
                           return p.param == 1.0 ? std::string("elastic") : std::string("half");
                         });

// Head-on collision of unequal masses, no gravity: Newton's law of
// restitution with momentum conservation,
//   v1' = (m1 v1 + m2 v2 + m2 e (v2 − v1)) / (m1 + m2),
//   v2' = (m1 v1 + m2 v2 + m1 e (v1 − v2)) / (m1 + m2).
TEST(HeadOn, UnequalMassesMatchTheClassicalFormulas) {
  for (const double e : {1.0, 0.6, 0.0}) {
    scenes::WorldOptions options = SimpactWorld();
    options.gravity = Eigen::Vector3d::Zero();
    options.simpact.resolve_plastic_impacts = true;  // e = 0 by the core's law too
    BulletWorld world(options);
    const double m1 = 3.0, m2 = 1.0, v1 = 1.0, v2 = -2.0;
    const scenes::Scene scene = scenes::head_on(world, m1, m2, v1, v2, e);
    world.step(1.0 / 240.0, 240);
    const double p = m1 * v1 + m2 * v2;
    const Eigen::Vector2d expected((p + m2 * e * (v2 - v1)) / (m1 + m2),
                                   (p + m1 * e * (v1 - v2)) / (m1 + m2));
    const Eigen::Vector2d actual(scenes::velocity(*scene.bodies[0]).x(),
                                 scenes::velocity(*scene.bodies[1]).x());
    EXPECT_TRUE(VectorsNear(actual, expected, kFreeVelocityTolerance, 0.0)) << "e = " << e;
    EXPECT_EQ(world.impacts(), 1) << "e = " << e;
  }
}

// A chain of N balls held by ball joints, struck end-on (scenes::joint_chain):
// the joints make it one rod along x, so the impact is a two-body impact,
// striker (1 − R N)/(1 + N)·speed, every link (1 + R)/(1 + N)·speed. Short
// chains take the dense joint metric, long ones (more than
// kDenseJointGroupBodies links) the sparse route; both must give the
// closed form after the impact step. Stock SI leaves the links at
// different speeds (the chain stretches).
TEST(JointChain, StruckChainMovesAsOneRodWithEitherJointMetric) {
  for (const int links : {8, 40, 200}) {
    for (const double e : {1.0, 0.5}) {
      scenes::WorldOptions options = SimpactWorld();
      BulletWorld world(options);
      const scenes::Scene scene = scenes::joint_chain(world, links, 1.0, e);
      world.step(1.0 / 240.0);
      const double n = links;
      EXPECT_NEAR(scenes::velocity(*scene.bodies[0]).x(), (1.0 - e * n) / (1.0 + n), kFreeVelocityTolerance)
          << links << " links, e = " << e;
      for (size_t i = 1; i < scene.bodies.size(); ++i)
        ASSERT_NEAR(scenes::velocity(*scene.bodies[i]).x(), (1.0 + e) / (1.0 + n), kFreeVelocityTolerance)
            << "link " << i << " of " << links << ", e = " << e;
      EXPECT_EQ(world.impacts(), 1);
    }
  }
}

// A chain of box links joined by point-to-point joints, lying flat on a
// ground box and landing on it at 1 m/s, plastic (resolve_plastic_impacts):
// every link is touched, so the adapter gives the joint group a dense M⁻¹_G
// of 6 × links DOFs, above kMetricRootBlockLimit, and the plastic LCP's box
// pivoting reads W itself (set_contact_rows) — where it used to
// eigen-decompose that block (a hinged chain of 300 links on the ground:
// 6.6 s for one impact, docs/scaling.md). Closed form: the chain stops, and
// the ground's impulses carry exactly its momentum (the joints' impulses are
// internal), Σ λ = links · m · v.
TEST(JointChain, ChainLyingOnTheGroundLandsAndStops) {
  constexpr double kSpeed = 1.0, kMass = 0.4;
  const Eigen::Vector3d half(0.15, 0.05, 0.05);
  for (const int links : {17, 40}) {
    SCOPED_TRACE(std::to_string(links) + " links");
    scenes::WorldOptions options = SimpactWorld();
    options.gravity = Eigen::Vector3d::Zero();  // the impact alone
    options.simpact.resolve_plastic_impacts = true;
    std::vector<bullet::ImpactReport> reports;
    options.simpact.on_impact = [&](const bullet::ImpactReport& r) { reports.push_back(r); };
    BulletWorld world(options);
    scenes::BodyOptions ground;
    ground.mass = 0.0;
    ground.position = Eigen::Vector3d(0.0, -0.5, 0.0);
    world.add_box(Eigen::Vector3d(2.0 * half.x() * links, 0.5, 1.0), ground);  // box–box: four corners a link
    std::vector<btRigidBody*> chain;
    for (int i = 0; i < links; ++i) {
      scenes::BodyOptions link;
      link.mass = kMass;
      link.never_sleep = true;
      link.position = Eigen::Vector3d(2.0 * half.x() * i, half.y(), 0.0);
      link.velocity = Eigen::Vector3d(0.0, -kSpeed, 0.0);
      btRigidBody* body = world.add_box(half, link);
      // Pivots off the links' axis, so that no DOF of the group decouples.
      if (!chain.empty())
        world.add_point2point(chain.back(), body, Eigen::Vector3d(2.0 * half.x() * i - half.x(), 0.07, 0.01));
      chain.push_back(body);
    }
    world.step(1.0 / 240.0);
    ASSERT_EQ(reports.size(), 1u);
    const bullet::ImpactReport& report = reports.front();
    EXPECT_FALSE(report.fallback_to_base) << report.message;
    EXPECT_EQ(report.law, bullet::AppliedLaw::kPropagative);
    EXPECT_EQ(report.contacts.size(), static_cast<size_t>(4 * links));  // every corner
    double total = 0.0;
    for (const bullet::ImpactReport::Contact& c : report.contacts) total += c.impulse;
    EXPECT_NEAR(total, links * kMass * kSpeed, kFreeVelocityTolerance * links * kMass);
    EXPECT_LE(report.energy_after, kFreeVelocityTolerance * report.energy_before);
    for (btRigidBody* body : chain) ASSERT_LT(scenes::velocity(*body).norm(), kFreeVelocityTolerance);
  }
}

// The variational law on a 15-ball billiard rack (scenes::billiard_break):
// its sequences are far too many to enumerate (the 10⁶-reflection budget of
// the core runs out), so under the default variational_budget the cluster
// is resolved by the propagative law — the very velocities the propagative
// law gives, bit for bit — counted, and never handed to the base solver.
TEST(VariationalLaw, BilliardRackOverBudgetTakesThePropagativeLaw) {
  const auto break_shot = [](bullet::ImpactLaw law, bullet::ImpactStats& stats) {
    scenes::WorldOptions options;
    options.solver = SolverKind::kSimpact;
    options.simpact.law = law;
    BulletWorld world(options);
    const scenes::Scene scene = scenes::billiard_break(world);
    world.step(1.0 / 240.0);  // the cue ball strikes the rack in the first step
    stats = world.impact_solver()->stats();
    std::vector<Eigen::Vector3d> velocities;
    for (const btRigidBody* ball : scene.bodies) velocities.push_back(scenes::velocity(*ball));
    return velocities;
  };
  bullet::ImpactStats variational, propagative;
  const auto v = break_shot(bullet::ImpactLaw::kVariational, variational);
  const auto p = break_shot(bullet::ImpactLaw::kPropagative, propagative);
  ASSERT_EQ(propagative.impacts, 1);
  EXPECT_EQ(variational.impacts, 1);
  EXPECT_EQ(variational.variational_over_budget, 1);
  EXPECT_EQ(variational.fallbacks_to_base, 0);
  EXPECT_EQ(propagative.variational_over_budget, 0);
  ASSERT_EQ(v.size(), p.size());
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(v[i], p[i]) << "ball " << i;
}

// A ball at rest struck by a kinematic paddle moving at V: in the paddle's
// frame the ball arrives at −V and leaves at +e V, so it leaves at (1 + e) V.
TEST(KinematicPaddle, BallReboundsRelativeToThePaddle) {
  for (const double e : {1.0, 0.5}) {
    scenes::WorldOptions options = SimpactWorld();
    options.gravity = Eigen::Vector3d::Zero();
    BulletWorld world(options);
    const double paddle_speed = 2.0;
    const scenes::Scene scene = scenes::kinematic_paddle(world, paddle_speed, 0.0, e);
    world.step(1.0 / 240.0, 240);
    const Eigen::Vector3d v = scenes::velocity(*scene.bodies.at(0));
    EXPECT_NEAR(v.x(), (1.0 + e) * paddle_speed, kFreeVelocityTolerance) << "e = " << e;
    EXPECT_GE(world.impacts(), 1);
  }
}

// A moving partner may give energy, so the restore-energy stage must leave
// the outcome alone (kinetic_energy_is_invariant, impact_solver.cpp). A
// kinematic box creeps at δ = 1e-9 m/s into a free ball (unit factors,
// which alone make the stage apply) arriving head-on at 1 m/s: the exact
// elastic outcome 1 + 2δ gains 4δ of the energy, a shrink of the change of
// δ/(1 + δ), within what the stage takes back (kEnergyRestoreMaxShrink =
// 1e-8). Taken for rounding, the ball would leave at 1 m/s. Double only:
// float cannot hold 1 + 2e-9.
TEST(KinematicPartner, CreepingPartnersGainIsNotTakenForRounding) {
  if (!kDoublePrecision) GTEST_SKIP() << "float cannot resolve 2e-9 m/s at 1 m/s";
  constexpr double kCreep = 1e-9;
  // One elastic reflection and Bullet's store: ~1e-16 at 1 m/s. 1e-13 keeps
  // three orders of margin and is 2e4 times below the 2δ at stake.
  constexpr double kOneReflectionTolerance = 1e-13;
  scenes::WorldOptions options = SimpactWorld();
  options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  scenes::BodyOptions paddle;
  paddle.mass = 0.0;
  paddle.kinematic = true;
  paddle.velocity.x() = kCreep;
  paddle.restitution = 1.0;
  paddle.friction = 0.0;
  // Centred at the origin, where the step's move δh = 4e-12 m is exact to
  // ~1e-28 m: Bullet's (x₁ − x₀)/h then gives the paddle δ to ~1e-16 of it.
  world.add_box(Eigen::Vector3d(0.1, 0.5, 0.5), paddle);
  scenes::BodyOptions ball;
  ball.restitution = 1.0;
  ball.friction = 0.0;
  ball.position.x() = 0.6;  // touching the paddle's face at x = 0.1
  ball.velocity.x() = -1.0;
  btRigidBody* body = world.add_sphere(0.5, ball);
  world.step(1.0 / 240.0, 1);
  ASSERT_EQ(world.impacts(), 1);
  const Eigen::Vector3d v = scenes::velocity(*body);
  EXPECT_NEAR(v.x(), 1.0 + 2.0 * kCreep, kOneReflectionTolerance);
  EXPECT_NEAR(v.y(), 0.0, kOneReflectionTolerance);
  EXPECT_NEAR(v.z(), 0.0, kOneReflectionTolerance);
  EXPECT_NEAR(scenes::angular_velocity(*body).norm(), 0.0, kOneReflectionTolerance);
  EXPECT_EQ(world.impact_solver()->stats().energy_restored, 0);
}

// Moving constraints (Pasquero's frame independence, issue #12): the ball
// and the kinematic paddle seen from a second frame moving at c along x
// (paddle at V + c, ball at c) leave as in the first, shifted by c: every
// elastic law reads only the relative velocity u = J v + b, the kinematic
// paddle's motion entering as the offset b. The ball leaves at 2V (+ c).
class KinematicPaddleLaw : public ::testing::TestWithParam<bullet::ImpactLaw> {};

TEST_P(KinematicPaddleLaw, OutcomeDoesNotDependOnTheFrame) {
  const double paddle_speed = 2.0;
  const auto ball_after = [&](double frame_speed) {
    scenes::WorldOptions options = SimpactWorld();
    options.simpact.law = GetParam();
    BulletWorld world(options);
    const scenes::Scene scene =
        scenes::kinematic_paddle(world, paddle_speed + frame_speed, frame_speed, 1.0);
    world.step(1.0 / 240.0, 24);
    EXPECT_EQ(world.impacts(), 1);
    return scenes::velocity(*scene.bodies.at(0));
  };
  const Eigen::Vector3d rest_frame = ball_after(0.0);
  EXPECT_NEAR(rest_frame.x(), 2.0 * paddle_speed, kFreeVelocityTolerance);
  for (const double c : {-3.0, 0.7, 5.0}) {
    const Eigen::Vector3d moving = ball_after(c);
    EXPECT_NEAR(moving.x() - c, rest_frame.x(), kFreeVelocityTolerance) << "frame speed " << c;
    EXPECT_NEAR(moving.y(), rest_frame.y(), kFreeVelocityTolerance);
  }
}

INSTANTIATE_TEST_SUITE_P(Laws, KinematicPaddleLaw,
                         ::testing::Values(bullet::ImpactLaw::kPropagative, bullet::ImpactLaw::kVariational,
                                           bullet::ImpactLaw::kPasquero),
                         [](const ::testing::TestParamInfo<bullet::ImpactLaw>& param_info) {
                           return std::string(bullet::to_string(param_info.param));
                         });

// The same impacts whichever stock solver runs behind simpact.
class BaseSolver : public ::testing::TestWithParam<SolverKind> {};

TEST_P(BaseSolver, CradleOutcomeDoesNotDependOnTheBase) {
  scenes::WorldOptions options = SimpactWorld(GetParam());
  options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  scenes::CradleOptions cradle;
  cradle.balls = 5;
  cradle.incoming = 2;
  cradle.strings = false;
  const scenes::Scene scene = scenes::newtons_cradle(world, cradle);
  world.step(1.0 / 240.0, 48);
  Eigen::VectorXd expected(5);
  expected << 0, 0, 0, 1, 1;
  EXPECT_TRUE(VectorsNear(LineVelocities(scene), expected, kFreeVelocityTolerance, 0.0));
}

INSTANTIATE_TEST_SUITE_P(Stock, BaseSolver,
                         ::testing::Values(SolverKind::kStockSi, SolverKind::kStockNncg,
                                           SolverKind::kStockMlcpDantzig,
                                           SolverKind::kStockMlcpLemke),
                         [](const ::testing::TestParamInfo<SolverKind>& p) {
                           return std::string(scenes::to_string(p.param));
                         });

// Resting contact is the base solver's: a box on the ground neither jitters
// nor creeps, and no impact is ever declared. 1 mm over 2 s bounds both
// Bullet's penetration recovery and any creep.
constexpr double kRestingDrift = 1e-3;

TEST(Resting, BoxOnTheGroundStaysPut) {
  BulletWorld world(SimpactWorld());
  const scenes::Scene scene = scenes::box_on_ground(world);
  btRigidBody* box = scene.bodies.at(0);
  world.step(1.0 / 60.0, 30);  // settle
  const Eigen::Vector3d start = scenes::position(*box);
  const std::int64_t impacts = world.impacts();
  world.step(1.0 / 60.0, 120);
  EXPECT_LE((scenes::position(*box) - start).norm(), kRestingDrift);
  EXPECT_EQ(world.impacts(), impacts) << "a resting box must not be struck";
}

// Largest displacement of any box of a 5-box stack over 2 s after settling.
double StackDrift(const scenes::WorldOptions& options) {
  BulletWorld world(options);
  const scenes::Scene scene = scenes::box_stack(world, 5);
  world.step(1.0 / 60.0, 30);
  std::vector<Eigen::Vector3d> start;
  for (btRigidBody* b : scene.bodies) start.push_back(scenes::position(*b));
  world.step(1.0 / 60.0, 120);
  double drift = 0.0;
  for (size_t i = 0; i < scene.bodies.size(); ++i)
    drift = std::max(drift, (scenes::position(*scene.bodies[i]) - start[i]).norm());
  return drift;
}

// Stock SI at 60 Hz with 10 iterations does not hold a 5-box stack perfectly
// still either (it creeps by millimetres); simpact in front of it must not
// make that worse by more than a factor 2, nor topple it (1 cm).
constexpr double kStackToppled = 0.01;

TEST(Resting, StackOfBoxesStillRests) {
  scenes::WorldOptions stock;
  stock.solver = SolverKind::kStockSi;
  const double stock_drift = StackDrift(stock);
  const double simpact_drift = StackDrift(SimpactWorld());
  std::printf("[ stack ] drift over 2 s: stock SI %.4f m, simpact %.4f m\n", stock_drift,
              simpact_drift);
  EXPECT_LE(simpact_drift, 2.0 * stock_drift + kRestingDrift);
  EXPECT_LE(simpact_drift, kStackToppled);
}

// Locked degrees of freedom: balls that may only move along x (linear factor
// (1, 0, 0)) struck at 45° keep y = z = 0 and conserve energy, and the
// outcome equals the 1-D collision of the x components along the normal's
// projection... which for equal masses and a normal at 45° in the xy plane
// is the head-on exchange of x velocities (effective masses are equal).
TEST(LockedDofs, LinearFactorsAreRespected) {
  scenes::WorldOptions options = SimpactWorld();
  options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  scenes::BodyOptions a, b;
  a.linear_factor = b.linear_factor = Eigen::Vector3d(1, 0, 0);
  a.angular_factor = b.angular_factor = Eigen::Vector3d::Zero();
  a.restitution = b.restitution = 1.0;
  a.friction = b.friction = 0.0;
  a.never_sleep = b.never_sleep = true;
  a.position = Eigen::Vector3d(0, 0, 0);
  b.position = Eigen::Vector3d(0.2 / std::sqrt(2.0) + 0.01, 0.2 / std::sqrt(2.0), 0);
  a.velocity = Eigen::Vector3d(1, 0, 0);
  btRigidBody* ba = world.add_sphere(0.1, a);
  btRigidBody* bb = world.add_sphere(0.1, b);
  world.set_restitution_combiner(scenes::RestitutionCombiner::kMinimum);
  const double energy = world.kinetic_energy();
  world.step(1.0 / 240.0, 60);
  EXPECT_GE(world.impacts(), 1);
  EXPECT_NEAR(scenes::velocity(*ba).y(), 0.0, kFreeVelocityTolerance);
  EXPECT_NEAR(scenes::velocity(*bb).y(), 0.0, kFreeVelocityTolerance);
  EXPECT_NEAR(world.kinetic_energy(), energy, kFreeEnergyTolerance * energy);
  // Both bodies move along x only, so the contact acts along x with equal
  // effective masses: the x velocities are exchanged.
  EXPECT_NEAR(scenes::velocity(*ba).x(), 0.0, kFreeVelocityTolerance);
  EXPECT_NEAR(scenes::velocity(*bb).x(), 1.0, kFreeVelocityTolerance);
}

// Sleeping bodies stay asleep: a box that has come to rest is put to sleep
// by Bullet (after 2 s below its sleeping thresholds) with simpact in front
// exactly as with stock SI, and no impact wakes it.
TEST(Resting, SleepingBoxStaysAsleep) {
  BulletWorld world(SimpactWorld());
  const scenes::Scene scene = scenes::box_on_ground(world);
  btRigidBody* box = scene.bodies.at(0);
  world.step(1.0 / 60.0, 240);  // 4 s: settled and asleep
  ASSERT_EQ(box->getActivationState(), ISLAND_SLEEPING);
  const std::int64_t impacts = world.impacts();
  world.step(1.0 / 60.0, 60);
  EXPECT_EQ(box->getActivationState(), ISLAND_SLEEPING);
  EXPECT_EQ(world.impacts(), impacts);
}

// Contacts Bullet reports at a positive distance (convex–plane pairs, CCD
// and predictive contacts) are not impacts unless they close within the step:
// a ball skimming 5 mm above the ground at 5 m/s, with CCD on, is never
// struck.
TEST(Predictive, SkimmingBallIsNeverStruck) {
  scenes::WorldOptions options = SimpactWorld();
  options.gravity = Eigen::Vector3d::Zero();
  BulletWorld world(options);
  scenes::BodyOptions ground;
  ground.mass = 0.0;
  world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
  scenes::BodyOptions ball;
  ball.position = Eigen::Vector3d(0.0, 0.1 + 0.005, 0.0);
  ball.velocity = Eigen::Vector3d(5.0, 0.0, 0.0);
  ball.never_sleep = true;
  btRigidBody* body = world.add_sphere(0.1, ball);
  body->setCcdMotionThreshold(btScalar(1e-3));
  body->setCcdSweptSphereRadius(btScalar(0.05));
  world.step(1.0 / 60.0, 60);
  EXPECT_EQ(world.impacts(), 0);
  EXPECT_NEAR(scenes::velocity(*body).x(), 5.0, kFreeVelocityTolerance);
  EXPECT_NEAR(scenes::velocity(*body).y(), 0.0, kFreeVelocityTolerance);
}

// A CCD ball striking the ground fast enough for Bullet's predictive
// contacts (30 m/s, 0.125 m per step at 240 Hz, more than its radius):
// Bullet gives the predictive point restitution 0, which used to make the
// whole impact plastic and stop the ball dead. The predictive point now
// takes the pair's restitution (point_restitution), and an elastic ball
// leaves at its approach speed (stock SI, for comparison, leaves 0.3 %
// faster: its restitution target uses the pre-gravity velocity and its
// position correction adds to it).
TEST(Predictive, FastCcdBallBouncesElastically) {
  for (const double e : {1.0, 0.5}) {
    scenes::WorldOptions options = SimpactWorld();
    BulletWorld world(options);
    scenes::BodyOptions ground;
    ground.mass = 0.0;
    ground.restitution = 1.0;
    world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
    scenes::BodyOptions ball;
    ball.position = Eigen::Vector3d(0.0, 0.6, 0.0);
    ball.velocity = Eigen::Vector3d(0.0, -30.0, 0.0);
    ball.restitution = e;
    ball.never_sleep = true;
    btRigidBody* body = world.add_sphere(0.1, ball);
    body->setCcdMotionThreshold(btScalar(1e-7));
    body->setCcdSweptSphereRadius(btScalar(0.05));
    double approach = 0.0, leave = 0.0;
    for (int i = 0; i < 12; ++i) {
      const double before = scenes::velocity(*body).y();
      world.step(1.0 / 240.0);
      const double after = scenes::velocity(*body).y();
      if (before < 0.0 && after > 0.0) {
        approach = -before;
        leave = after;
        break;
      }
    }
    ASSERT_GT(approach, 29.0) << "e = " << e << ": the ball never bounced";
    EXPECT_EQ(world.impacts(), 1);
    // The impact acts on the mid-step velocity (half a step of gravity
    // below the pre-step one) and the step's second half of gravity follows.
    const double g_half_step = 0.5 * 9.81 / 240.0;
    EXPECT_NEAR(leave, e * (approach + g_half_step) - g_half_step, 1e-6) << "e = " << e;
  }
}

// A CCD ball that reaches a thin wall within one step (40 m/s at 60 Hz:
// 0.67 m a step, the wall 0.27 m ahead) meets it first through Bullet's
// predictive point, whose restitution Bullet forces to 0. Every law must
// see the pair's restitution there, as point_restitution gives it: the
// propagative law used to leave that point to SI (plastic, and its
// speculative target cut the ball to 17 m/s before the real contact
// struck), so the ball left at −13.6 m/s instead of −e · 40. The impact is
// resolved where the step starts ("closing within the step"), so the ball
// turns back before the wall and never passes it.
TEST(Predictive, CcdBallReachingAWallWithinAStepReboundsUnderEveryLaw) {
  constexpr double kSpeed = 40.0, kBall = 0.8, kRadius = 0.05, kWallFace = 0.99;
  for (const bullet::ImpactLaw law :
       {bullet::ImpactLaw::kPropagative, bullet::ImpactLaw::kAuto, bullet::ImpactLaw::kRouthRestitution}) {
    SCOPED_TRACE(bullet::to_string(law));
    scenes::WorldOptions options = SimpactWorld();
    options.gravity = Eigen::Vector3d::Zero();
    options.simpact.law = law;
    BulletWorld world(options);
    scenes::BodyOptions wall;
    wall.mass = 0.0;
    wall.restitution = 1.0;  // product combiner: the pair gets the ball's e
    wall.position = Eigen::Vector3d(kWallFace + 0.01, 0.0, 0.0);
    world.add_box(Eigen::Vector3d(0.01, 1.0, 1.0), wall);
    scenes::BodyOptions ball;
    ball.velocity = Eigen::Vector3d(kSpeed, 0.0, 0.0);
    ball.restitution = kBall;
    ball.never_sleep = true;
    btRigidBody* body = world.add_sphere(kRadius, ball);
    body->setCcdMotionThreshold(btScalar(kRadius));
    body->setCcdSweptSphereRadius(btScalar(0.8 * kRadius));
    double furthest = 0.0;
    for (int i = 0; i < 6; ++i) {
      world.step(1.0 / 60.0);
      furthest = std::max(furthest, double(body->getCenterOfMassPosition().x()));
    }
    EXPECT_EQ(world.impacts(), 1);
    EXPECT_NEAR(scenes::velocity(*body).x(), -kBall * kSpeed, kFreeVelocityTolerance * kSpeed);
    EXPECT_LE(furthest + kRadius, kWallFace);
  }
}

// A 0.2 m cube of 1 kg (restitution e, friction μ) resting flat on a
// static plane (restitution 1 and friction 1, so the product combiner
// gives the box's own), sliding along x at `speed` [m/s]; never sleeps.
btRigidBody* add_sliding_box(BulletWorld& world, double e, double friction, double speed) {
  scenes::BodyOptions ground;
  ground.mass = 0.0;
  ground.restitution = 1.0;
  ground.friction = 1.0;
  world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
  scenes::BodyOptions box;
  box.restitution = e;
  box.friction = friction;
  box.position = Eigen::Vector3d(0.0, 0.1, 0.0);
  box.velocity = Eigen::Vector3d(speed, 0.0, 0.0);
  box.never_sleep = true;
  return world.add_box(Eigen::Vector3d::Constant(0.1), box);
}

// A box with restitution sliding on the ground rocks as Bullet's contact
// points come and go, and its corners strike one at a time: every step an
// impact. The propagative law is frictionless and the struck corner leaves
// separating, so the base solver's friction never acted and the box slid
// on at 3 m/s for ever (x = 6 m after 2 s, for any e > 0). With impact
// friction (ImpactSettings::propagative_friction) the friction impulses of
// the impacts and of the resting steps together carry μ times the normal
// impulse that holds the box up against gravity, so it stops as a sliding
// block does: after v²/(2μg) = 0.917 m in v/(μg) = 0.61 s. 10 % on the
// distance covers the rocking (measured: 0.917–0.928 m for e = 0.3–0.8;
// stock SI 0.911 m); the time gets half a stop time more.
TEST(ImpactFriction, BouncyBoxSlidingOnTheGroundStops) {
  constexpr double kSpeed = 3.0, kFriction = 0.5, kGravity = 9.81, kRate = 240.0;
  const double distance = kSpeed * kSpeed / (2 * kFriction * kGravity);
  const double time = kSpeed / (kFriction * kGravity);
  for (const double e : {0.3, 0.5, 0.8}) {
    SCOPED_TRACE("e = " + std::to_string(e));
    BulletWorld world(SimpactWorld());
    btRigidBody* body = add_sliding_box(world, e, kFriction, kSpeed);
    world.step(1.0 / kRate, static_cast<int>(1.5 * time * kRate));
    EXPECT_GT(world.impacts(), 0);  // the rocking strikes: the case this is about
    EXPECT_NEAR(body->getCenterOfMassPosition().x(), distance, 0.1 * distance);
    EXPECT_LT(scenes::velocity(*body).norm(), 0.01 * kSpeed);
  }
}

// The same box at 60 Hz, the rate of most games. Bullet's convex–plane
// algorithm adds one point per step to the box–plane manifold: a rocking
// box's manifold then holds one corner at a time, the law strikes one
// corner per step, and simpact's least push lifts the box out of the other
// corner's overlap every step (2.35 mm, m|g|Δy = the energy each step gives
// back): it rocked on for ever, |ω| growing to 1.45 rad/s (docs/
// rigid_adapter.md, "Laws"). With Bullet's multipoint plane contacts
// (setPlaneConvexMultipointIterations) the manifold holds the whole
// face, and the box settles as stock SI's does: within 2 s.
TEST(ImpactFriction, BouncyBoxSlidingAt60HzSettlesWithMultipointPlaneContacts) {
  constexpr double kSpeed = 3.0, kFriction = 0.5, kRate = 60.0, kSettled = 2.0;
  for (const double e : {0.3, 0.5, 0.8}) {
    SCOPED_TRACE("e = " + std::to_string(e));
    scenes::WorldOptions options = SimpactWorld();
    options.plane_convex_multipoint = true;
    BulletWorld world(options);
    btRigidBody* body = add_sliding_box(world, e, kFriction, kSpeed);
    world.step(1.0 / kRate, static_cast<int>(kSettled * kRate));
    EXPECT_GT(world.impacts(), 0);
    // Settled: a thousandth of the initial speed (and the same in rad/s of
    // a 0.1 m lever), resting flat on the plane (half extent 0.1 m, to
    // Bullet's penetration at rest, a few tenths of a millimetre).
    EXPECT_LT(scenes::velocity(*body).norm(), 1e-3 * kSpeed);
    EXPECT_LT(scenes::angular_velocity(*body).norm() * 0.1, 1e-3 * kSpeed);
    EXPECT_NEAR(body->getCenterOfMassPosition().y(), 0.1, 1e-3);
  }
}

// The report carries the indeterminacy ξ when asked: zero for the cradle
// (Seghete & Murphey 2014, Theorem 3), positive for a cue ball striking two
// balls at 60° (§VII-A, Fig. 5).
TEST(Report, IndeterminacyOfTheCradleIsZero) {
  scenes::WorldOptions options = SimpactWorld();
  options.gravity = Eigen::Vector3d::Zero();
  options.simpact.compute_indeterminacy = true;
  std::vector<double> xi;
  options.simpact.on_impact = [&](const bullet::ImpactReport& report) {
    ASSERT_TRUE(report.indeterminacy.has_value());
    xi.push_back(*report.indeterminacy);
  };
  BulletWorld world(options);
  scenes::CradleOptions cradle;
  cradle.strings = false;
  scenes::newtons_cradle(world, cradle);
  world.step(1.0 / 240.0, 10);
  ASSERT_FALSE(xi.empty());
  for (double x : xi) EXPECT_LE(x, kFreeVelocityTolerance);
}

// A default world (no on_impact) builds no per-contact report: the outcome
// is bit for bit the observed world's, and ImpactStats still gives the
// largest cluster: resolved (a chain) or over the Routh cap (a small wall
// with a cap of 4 contacts, law auto).
TEST(Report, UnobservedWorldsResolveAsObservedOnes) {
  const auto run = [](bool observed, bool pile, std::vector<Eigen::Vector3d>& velocities,
                      std::int64_t& largest_reported) {
    scenes::WorldOptions options = SimpactWorld();
    options.simpact.law = bullet::ImpactLaw::kAuto;
    options.simpact.routh.max_contacts = 4;
    largest_reported = 0;
    if (observed)
      options.simpact.on_impact = [&largest_reported](const bullet::ImpactReport& report) {
        largest_reported = std::max<std::int64_t>(largest_reported, std::int64_t(report.contacts.size()));
      };
    BulletWorld world(options);
    scenes::Scene scene;
    if (pile) {
      scenes::BoxPileOptions wall;
      wall.columns = 3;
      wall.layers = 2;
      scene = scenes::box_pile(world, wall);
      world.step(1.0 / 240.0, 120);
    } else {
      scene = scenes::ball_chain(world, 12, 1.0, 1.0, scenes::kDiagonal);
      world.step(1.0 / 240.0, 3);
    }
    velocities.clear();
    for (const btRigidBody* body : scene.bodies) velocities.push_back(scenes::velocity(*body));
    return world.impact_solver()->stats();
  };
  for (const bool pile : {false, true}) {
    std::vector<Eigen::Vector3d> seen, unseen;
    std::int64_t reported = 0, unreported = 0;
    const bullet::ImpactStats observed = run(true, pile, seen, reported);
    const bullet::ImpactStats unobserved = run(false, pile, unseen, unreported);
    ASSERT_EQ(seen.size(), unseen.size());
    for (size_t i = 0; i < seen.size(); ++i) EXPECT_EQ(seen[i], unseen[i]) << (pile ? "wall" : "chain") << " body " << i;
    EXPECT_EQ(unreported, 0);
    EXPECT_EQ(observed.largest_cluster, reported) << "the stat is the largest report's contact count";
    EXPECT_EQ(unobserved.largest_cluster, observed.largest_cluster);
    if (pile) {
      EXPECT_GT(observed.routh_oversized, 0) << "the wall must have clusters over the cap of 4";
      EXPECT_GT(observed.largest_cluster, 4);
    } else {
      EXPECT_EQ(observed.largest_cluster, 11);  // every contact of the chain
    }
  }
}

}  // namespace
}  // namespace simpact
