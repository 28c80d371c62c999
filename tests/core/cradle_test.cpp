// Newton's cradle with equal masses (Seghete & Murphey 2010, §III-B.2;
// Seghete & Murphey 2014, §III, eq. (15), and Theorem 3). With unit masses
// the reflection in contact i (rows [.., −1, 1, ..]) is
// G = I − 2 M⁻¹ Jᵢᵀ Jᵢ / 2, which SWAPS the velocities of balls i and i+1;
// contact i approaches iff v_i > v_{i+1}. Any propagative sequence is
// therefore a bubble sort, and every order ends in the same outcome: the
// velocities sorted ascending. In particular k incoming balls at speed s
// leave as the last k balls at speed s, the others at rest.
#include "support/compare.h"
#include "support/policies.h"

#include <simpact/diagnostics.h>
#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/random_problems.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <tuple>

namespace simpact {
namespace {

using testing::Parameters;
using testing::SingleOutcomePolicies;
using testing::VectorsNear;

/// Velocities are products of a few swaps: each reflection adds at most one
/// rounding (~1e-16 relative) per entry, so 1e-12 relative to the speed is
/// a 10⁴ margin over the longest sequences here (≤ 10 reflections).
constexpr double kVelocityTolerance = 1e-12;
/// Indeterminacy ξ of a unique outcome is zero up to rounding (~1e-16).
constexpr double kUniqueIndeterminacy = 1e-12;
/// Normalized inner products are computed from exact ±1 entries and unit
/// masses; only the final division and square root round (~1e-16).
constexpr double kInnerProductTolerance = 1e-14;

/// The closed form above: the last `incoming` balls move at `speed`.
Eigen::VectorXd LastBallsMoving(int balls, int incoming, double speed) {
  Eigen::VectorXd v = Eigen::VectorXd::Zero(balls);
  v.tail(incoming).setConstant(speed);
  return v;
}

/// Distinct, arbitrary time-of-impact hints (contact i gets a value that is
/// neither monotone in i nor the index order).
Eigen::VectorXd ScrambledHints(int contacts) {
  Eigen::VectorXd hints(contacts);
  for (int i = 0; i < contacts; ++i) hints[i] = std::fmod(0.37 * (i + 1) * (i + 3), 1.0);
  return hints;
}

class CradleTest : public ::testing::TestWithParam<std::tuple<int, int>> {};

TEST_P(CradleTest, EveryPolicyGivesThePermutation) {
  const auto [balls, incoming] = GetParam();
  constexpr double kSpeed = 1.5;
  ImpactProblem problem = scenes::newtons_cradle(balls, incoming, kSpeed);
  problem.time_of_impact = ScrambledHints(balls - 1);
  const Eigen::VectorXd expected = LastBallsMoving(balls, incoming, kSpeed);

  for (const auto& run : SingleOutcomePolicies()) {
    SCOPED_TRACE(run.name());
    const ImpactResult result = resolve(problem, Parameters(run.policy, run.seed));
    ASSERT_EQ(result.status, Status::kSuccess) << result.message;
    ASSERT_EQ(result.outcomes.size(), 1u);
    EXPECT_TRUE(VectorsNear(result.outcomes[0].velocity, expected, kVelocityTolerance * kSpeed,
                            kVelocityTolerance));
    // Momentum balance fixes λ uniquely for a chain: ball 0 receives −λ_0,
    // ball k receives λ_{k−1} − λ_k, so λ_i = −Σ_{k≤i} m_k Δv_k.
    Eigen::VectorXd impulses(balls - 1);
    double sum = 0.0;
    for (int i = 0; i + 1 < balls; ++i) {
      sum += result.outcomes[0].velocity[i] - problem.velocity[i];
      impulses[i] = -sum;
    }
    EXPECT_TRUE(VectorsNear(result.outcomes[0].impulses, impulses, kVelocityTolerance * kSpeed,
                            kVelocityTolerance));
    const double energy = 0.5 * incoming * kSpeed * kSpeed;
    EXPECT_NEAR(result.energy_before, energy, kVelocityTolerance * energy);
    EXPECT_NEAR(result.energy_after, energy, kVelocityTolerance * energy);
  }
}

TEST_P(CradleTest, AllOrdersGiveOneOutcome) {
  const auto [balls, incoming] = GetParam();
  constexpr double kSpeed = 0.8;
  const ImpactProblem problem = scenes::newtons_cradle(balls, incoming, kSpeed);
  const ImpactResult result = resolve(problem, Parameters(OrderPolicy::kAll));
  ASSERT_EQ(result.status, Status::kSuccess) << result.message;
  ASSERT_EQ(result.outcomes.size(), 1u);
  EXPECT_TRUE(VectorsNear(result.outcomes[0].velocity, LastBallsMoving(balls, incoming, kSpeed),
                          kVelocityTolerance * kSpeed, kVelocityTolerance));
  ASSERT_TRUE(result.indeterminacy.has_value());
  EXPECT_LE(*result.indeterminacy, kUniqueIndeterminacy);
  EXPECT_GE(*result.indeterminacy, 0.0);
  // With 5 balls and 2 incoming, after the first swap (1,0,1,0,0) both
  // contacts 0 and 2 approach: several orders exist and the enumeration must
  // have explored them, not stopped at the first.
  if (balls == 5 && incoming == 2) {
    EXPECT_GT(result.sequences_explored, 1);
  }
}

TEST_P(CradleTest, AdjacentContactsMeetAtMinusOneHalf) {
  const auto [balls, incoming] = GetParam();
  const ImpactProblem problem = scenes::newtons_cradle(balls, incoming, 1.0);
  const Eigen::MatrixXd c = normalized_inner_products(problem);
  ASSERT_EQ(c.rows(), balls - 1);
  ASSERT_EQ(c.cols(), balls - 1);
  // W = J Jᵀ is tridiagonal with 2 on the diagonal and −1 beside it.
  for (int i = 0; i < balls - 1; ++i)
    for (int j = 0; j < balls - 1; ++j) {
      const double expected = i == j ? 1.0 : (std::abs(i - j) == 1 ? -0.5 : 0.0);
      EXPECT_NEAR(c(i, j), expected, kInnerProductTolerance) << "entry (" << i << "," << j << ")";
    }
}

INSTANTIATE_TEST_SUITE_P(BallsAndIncoming, CradleTest,
                         ::testing::Values(std::make_tuple(3, 1), std::make_tuple(3, 2),
                                           std::make_tuple(5, 1), std::make_tuple(5, 2)),
                         [](const auto& test_info) {
                           return std::to_string(std::get<0>(test_info.param)) + "balls_" +
                                  std::to_string(std::get<1>(test_info.param)) + "incoming";
                         });

TEST(CradleDiagnostics, ThreeBallsAreThreeStage) {
  const UniquenessReport report = analyze_uniqueness(scenes::newtons_cradle(3, 1, 1.0));
  EXPECT_TRUE(report.three_stage);
  EXPECT_FALSE(report.pairwise_orthogonal);
  EXPECT_TRUE(report.unique);
  EXPECT_NEAR(report.max_abs_off_diagonal, 0.5, kInnerProductTolerance);
  EXPECT_FALSE(report.explanation.empty());
}

TEST(CradleDiagnostics, UnequalMassesAreNotThreeStage) {
  // Masses 1, 2, 1: W = [[1.5, −0.5], [−0.5, 1.5]], c = −1/3.
  const ImpactProblem problem = scenes::newtons_cradle(3, 1, 1.0, Eigen::Vector3d(1.0, 2.0, 1.0));
  const UniquenessReport report = analyze_uniqueness(problem);
  EXPECT_NEAR(report.inner_products(0, 1), -1.0 / 3.0, kInnerProductTolerance);
  EXPECT_FALSE(report.three_stage);
  EXPECT_FALSE(report.pairwise_orthogonal);
  EXPECT_FALSE(report.unique);
}

TEST(CradleRandomVelocities, EveryPolicySortsTheVelocities) {
  // Equal masses, arbitrary pre-impact velocities: the bubble-sort argument
  // above gives the ascending sort, for every order.
  scenes::Random rng(20240611);
  for (int trial = 0; trial < 50; ++trial) {
    const int balls = rng.integer(2, 6);
    ImpactProblem problem = scenes::newtons_cradle(balls, 0, 0.0);
    problem.velocity = rng.normal_vector(balls);
    problem.time_of_impact = ScrambledHints(balls - 1);
    Eigen::VectorXd sorted = problem.velocity;
    std::sort(sorted.data(), sorted.data() + sorted.size());
    const double scale = problem.velocity.cwiseAbs().maxCoeff();
    SCOPED_TRACE("trial " + std::to_string(trial));
    for (const auto& run : SingleOutcomePolicies()) {
      SCOPED_TRACE(run.name());
      const ImpactResult result = resolve(problem, Parameters(run.policy, run.seed));
      ASSERT_EQ(result.status, Status::kSuccess) << result.message;
      EXPECT_TRUE(VectorsNear(result.outcomes[0].velocity, sorted, kVelocityTolerance * scale,
                              kVelocityTolerance));
    }
    const ImpactResult all = resolve(problem, Parameters(OrderPolicy::kAll));
    ASSERT_EQ(all.status, Status::kSuccess) << all.message;
    EXPECT_EQ(all.outcomes.size(), 1u);
  }
}

}  // namespace
}  // namespace simpact
