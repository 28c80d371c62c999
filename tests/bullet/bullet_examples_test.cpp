// Bullet's own examples as regression scenes (issue #10), re-created in
// simpact_scenes/bullet_examples.h: NewtonsCradle with the example's gaps
// and touching, BasicDemo's pile of boxes, and a hinge chain falling onto a
// ground. simpact (propagative law in front of SI) must never fail the host
// (no exception, finite states) and must get the physics right; the stock
// solver runs the same scenes as the yardstick where a bound is relative.
#include "simpact_scenes/bullet_examples.h"

#include <gtest/gtest.h>

#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

namespace simpact::scenes {
namespace {

// ── Tolerances ──────────────────────────────────────────────────────────────

/// The cradle's first strike must give (0, …, 0, 1) to this much (in units
/// of the striker's speed). The strike is resolved exactly by the
/// propagative law (equal pendula: the joint-constrained metric gives every
/// pendulum the same effective mass at its bottom sphere); what remains is
/// the swing between the strikes of the gapped row: over the ~14 steps the
/// strike takes to cross it, gravity turns the moving sphere's velocity on
/// its 8 m rod by g·t·θ ≈ 9.81 · 0.23 s · 0.03 rad ≈ 0.07 m/s at most, 3.5%
/// of the 2 m/s strike, and much less in the touching cradle (one step).
constexpr double kStrikeTolerance = 0.035;
/// Swing energy S = E − E_rest may grow by at most this fraction of its
/// initial value over the cradle's 20 s (issue #10: "simpact keeps energy
/// within +5% over 20 s" with the example's gaps; stock SI gains ×5.9 with
/// gaps and ×2.0 touching). Measured: +4.4% with gaps at ba6ab6f; +0.7%
/// with gaps and +0.8% touching with the adapter's issue #10 fixes.
constexpr double kCradleEnergyBound = 0.05;
/// The stock solver must do measurably worse than this factor of swing
/// energy (measured ×5.9 with gaps, ×2.0 touching at ba6ab6f), or the scene
/// no longer tells the two apart.
constexpr double kStockCradleGain = 1.5;
/// A pile or a chain at rest: every body slower than one step of gravity
/// (g·h = 0.16 m/s at 60 Hz), the velocity noise of a resting contact
/// before the solver removes it.
constexpr double kRestSpeed = kStandardGravity / 60.0;
/// The dropped scenes start at rest and only lose energy after that, save
/// for Bullet's own penetration recovery (Baumgarte, erp 0.2 on shallow
/// penetrations), which lifts landed bodies by a few mm. Their mechanical
/// energy may therefore never rise above its running minimum by more than
/// this fraction of the initial energy. Measured at ba6ab6f with stock SI:
/// pile 0.66%, hinge chain 0.25%; 1% leaves room for that and catches any
/// real gain of an impact (a chain link's bounce is ~5% of E0).
constexpr double kEnergyRiseFraction = 0.01;
/// BasicDemo's block lands flat and stays a block: its top face (5 layers
/// of 0.2 m) ends within 5 cm of 1 m (penetration and slight settling).
constexpr double kPileTop = 1.0;
constexpr double kPileTopTolerance = 0.05;
/// Boxes of the pile that may still move after 5 s. Bullet alone (stock
/// SI) does not bring every box of the pile to rest: in single precision a
/// few edge boxes keep popping (stock: up to 4 of 125 faster than
/// kRestSpeed at any whole second from 3 s to 15 s; simpact the same). The
/// pile has settled when at most 5% of its boxes (6) move.
constexpr double kPileMovingFraction = 0.05;
/// The hinge chain's pivots may come apart by at most this factor of what
/// stock SI allows in the same landing (measured 0.045 m stock, 0.055 m
/// simpact at ba6ab6f: both are Bullet's Baumgarte joint correction).
constexpr double kJointErrorVsStock = 1.5;

WorldOptions simpact_over_si() {
  WorldOptions options;
  options.solver = SolverKind::kSimpact;
  options.base = SolverKind::kStockSi;
  return options;
}

WorldOptions stock_si() {
  WorldOptions options;
  options.solver = SolverKind::kStockSi;
  return options;
}

// The largest rise of a sequence of energies above its running minimum.
struct EnergyRise {
  explicit EnergyRise(double initial) : minimum(initial) {}
  void add(double energy, int at) {
    if (energy - minimum > largest) {
      largest = energy - minimum;
      step = at;
    }
    minimum = std::min(minimum, energy);
  }
  double minimum;
  double largest = 0.0;
  int step = -1;
};

struct CradleRun {
  std::vector<double> strike;
  double max_swing = 0.0;  ///< max S/S0 over the run
  std::string failure;
};

// 20 s of the cradle; exceptions and non-finite states are recorded.
CradleRun run_cradle(const WorldOptions& solver, double spacing) {
  CradleRun run;
  BulletCradleOptions options;
  options.spacing = spacing;
  auto cradle = bullet_newtons_cradle(solver, options);
  const double e0 = cradle->world->energy();
  const double s0 = cradle->world->kinetic_energy();  // starts at the bottom of its swing
  constexpr int kSteps = 20 * 60;
  try {
    const CradleStrike strike = cradle_first_strike(*cradle, options, kSteps);
    run.strike = strike.outcome;
    run.max_swing = 1.0 + (cradle->world->energy() - e0) / s0;
    for (int step = strike.steps; step < kSteps; ++step) {
      cradle->world->step(cradle->dt);
      if (!example_state_finite(*cradle)) {
        run.failure = "non-finite state at step " + std::to_string(step);
        break;
      }
      run.max_swing = std::max(run.max_swing, 1.0 + (cradle->world->energy() - e0) / s0);
    }
  } catch (const std::exception& error) {
    run.failure = std::string("exception escaped stepSimulation: ") + error.what();
  }
  return run;
}

void expect_ideal_strike(const std::vector<double>& strike) {
  ASSERT_EQ(strike.size(), 5u) << "the striker never slowed";
  for (std::size_t i = 0; i + 1 < strike.size(); ++i) {
    EXPECT_NEAR(strike[i], 0.0, kStrikeTolerance) << "bottom sphere " << i;
  }
  EXPECT_NEAR(strike.back(), 1.0, kStrikeTolerance) << "the last bottom sphere";
}

TEST(BulletExamples, NewtonsCradleWithTheExamplesGaps) {
  const CradleRun ours = run_cradle(simpact_over_si(), 2.1);
  EXPECT_EQ(ours.failure, "");
  expect_ideal_strike(ours.strike);
  EXPECT_LE(ours.max_swing, 1.0 + kCradleEnergyBound);
  const CradleRun stock = run_cradle(stock_si(), 2.1);
  EXPECT_GT(stock.max_swing, kStockCradleGain) << "stock no longer gains: the scene has changed";
}

TEST(BulletExamples, NewtonsCradleTouching) {
  const CradleRun ours = run_cradle(simpact_over_si(), 2.0);
  EXPECT_EQ(ours.failure, "");
  expect_ideal_strike(ours.strike);
  EXPECT_LE(ours.max_swing, 1.0 + kCradleEnergyBound);
  const CradleRun stock = run_cradle(stock_si(), 2.0);
  EXPECT_GT(stock.max_swing, kStockCradleGain) << "stock no longer gains: the scene has changed";
}

TEST(BulletExamples, BasicDemoPileLandsAndRests) {
  auto pile = bullet_box_pile(simpact_over_si());
  const double e0 = pile->world->energy();
  EnergyRise rise(e0);
  try {
    for (int step = 0; step < 5 * 60; ++step) {
      pile->world->step(pile->dt);
      ASSERT_TRUE(example_state_finite(*pile)) << "step " << step;
      rise.add(pile->world->energy(), step);
    }
  } catch (const std::exception& error) {
    FAIL() << "exception escaped stepSimulation: " << error.what();
  }
  EXPECT_LE(rise.largest, kEnergyRiseFraction * e0) << "at step " << rise.step;
  double top = -INFINITY;
  for (const btRigidBody* box : pile->bodies) {
    top = std::max(top, double(box->getCenterOfMassPosition().y()) + 0.1);
  }
  EXPECT_NEAR(top, kPileTop, kPileTopTolerance);
  int moving = 0;
  for (const btRigidBody* box : pile->bodies) {
    moving += double(box->getLinearVelocity().length()) >= kRestSpeed ? 1 : 0;
  }
  EXPECT_LE(moving, int(kPileMovingFraction * double(pile->bodies.size())));
}

TEST(BulletExamples, HingeChainFallsOntoTheGround) {
  struct ChainRun {
    double joint_error = 0.0;
    double rise = 0.0;
    int rise_step = -1;
    double e0 = 0.0;
    double final_speed = 0.0;
  };
  auto run = [](const WorldOptions& solver) {
    ChainRun result;
    auto chain = bullet_hinge_chain(solver);
    result.e0 = chain->world->energy();
    EnergyRise rise(result.e0);
    for (int step = 0; step < 5 * 60; ++step) {
      chain->world->step(chain->dt);
      EXPECT_TRUE(example_state_finite(*chain)) << "step " << step;
      result.joint_error = std::max(result.joint_error, hinge_chain_joint_error(*chain));
      rise.add(chain->world->energy(), step);
    }
    result.rise = rise.largest;
    result.rise_step = rise.step;
    result.final_speed = example_max_speed(*chain);
    return result;
  };
  ChainRun ours;
  try {
    ours = run(simpact_over_si());
  } catch (const std::exception& error) {
    FAIL() << "exception escaped stepSimulation: " << error.what();
  }
  const ChainRun stock = run(stock_si());
  EXPECT_LE(ours.rise, kEnergyRiseFraction * ours.e0) << "at step " << ours.rise_step;
  EXPECT_LE(ours.joint_error, kJointErrorVsStock * stock.joint_error);
  EXPECT_LT(ours.final_speed, kRestSpeed) << "the chain should lie still on the ground after 5 s";
}

}  // namespace
}  // namespace simpact::scenes
