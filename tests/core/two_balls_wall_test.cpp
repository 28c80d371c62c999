// Two balls on a line against a wall, Seghete & Murphey 2010, §III-B.1 and
// §III-B.3.
// q = [x1, x2]; contact u = [1, 0] (wall–ball 1), v = [−1, 1] (ball 1–ball 2).
// Both approach when v1 < 0 and v2 < v1.
//
// NOTE on the paper's printed G_u: for M = diag(1.1, 1) the paper prints
// G_u = −I. That is a typo: G_u = I − 2 M⁻¹ uᵀ u /(u M⁻¹ uᵀ) = diag(−1, 1)
// for u = [1, 0] with ANY diagonal M (the wall only reverses ball 1). With
// −I the printed products G_v G_u G_v G_u = G_v² would be the identity,
// contradicting the printed results; with diag(−1, 1) they match to all four
// printed decimals (PaperTypo* tests below).
#include "support/compare.h"
#include "support/policies.h"
#include "support/reference.h"

#include <simpact/diagnostics.h>
#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/random_problems.h>

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cmath>
#include <vector>

namespace simpact {
namespace {

using testing::MatricesNear;
using testing::OutcomeVelocitiesAre;
using testing::Parameters;
using testing::Reflection;
using testing::VectorsNear;

/// Four reflections of a 2-vector, each rounding ~1e-16 relative: 1e-12
/// relative to |v0| is a 10⁴ margin.
constexpr double kVelocityTolerance = 1e-12;
/// The paper prints four decimals: a printed entry is within 5e-5 of the true one
/// (plus a hair for the binary representation of the printed value).
constexpr double kPrintedFourDecimals = 5e-5 + 1e-12;

const Eigen::RowVector2d kWall(1.0, 0.0);
const Eigen::RowVector2d kBalls(-1.0, 1.0);

Eigen::Matrix2d InverseMass(double m1, double m2) {
  return Eigen::Vector2d(1.0 / m1, 1.0 / m2).asDiagonal();
}

/// A velocity strictly inside the approach cone {v1 < 0, v2 < v1}.
Eigen::Vector2d RandomApproach(scenes::Random& rng) {
  const double v1 = -rng.uniform(0.1, 2.0);
  return {v1, v1 - rng.uniform(0.1, 2.0)};
}

/// Resolves with contact `first` (0 wall, 1 balls) reflected first, through
/// the time-of-impact policy; the outcome must be a success.
Outcome ResolveFirst(ImpactProblem problem, int first) {
  problem.time_of_impact = first == 0 ? Eigen::Vector2d(0.0, 1.0) : Eigen::Vector2d(1.0, 0.0);
  const ImpactResult result = resolve(problem, Parameters(OrderPolicy::kTimeOfImpact));
  EXPECT_EQ(result.status, Status::kSuccess) << result.message;
  return result.outcomes.at(0);
}

TEST(TwoBallsWallEqualMasses, EveryOrderReversesTheVelocity) {
  // §III-B.1: G_v G_u G_v G_u = G_u G_v G_u G_v = −I. The mirrors of u
  // and v meet at π/4, so from inside the approach cone both orders take
  // exactly four reflections (dihedral group of order 8, −I its longest
  // element).
  scenes::Random rng(42);
  for (int trial = 0; trial < 100; ++trial) {
    const Eigen::Vector2d v0 = RandomApproach(rng);
    SCOPED_TRACE("v0 = [" + std::to_string(v0[0]) + ", " + std::to_string(v0[1]) + "]");
    const ImpactProblem problem = scenes::two_balls_wall({1.0, 1.0}, v0);
    const double tol = kVelocityTolerance * v0.norm();

    const ImpactResult all = resolve(problem, Parameters(OrderPolicy::kAll));
    ASSERT_EQ(all.status, Status::kSuccess) << all.message;
    EXPECT_EQ(all.sequences_explored, 2);  // the only choice is the first contact
    ASSERT_EQ(all.outcomes.size(), 1u);
    EXPECT_TRUE(VectorsNear(all.outcomes[0].velocity, -v0, tol, kVelocityTolerance));

    // Both first choices explicitly, through the time-of-impact hints.
    const Outcome wall_first = ResolveFirst(problem, 0), balls_first = ResolveFirst(problem, 1);
    EXPECT_EQ(wall_first.sequence, (std::vector<int>{0, 1, 0, 1}));
    EXPECT_EQ(balls_first.sequence, (std::vector<int>{1, 0, 1, 0}));
    EXPECT_TRUE(VectorsNear(wall_first.velocity, -v0, tol, kVelocityTolerance));
    EXPECT_TRUE(VectorsNear(balls_first.velocity, -v0, tol, kVelocityTolerance));
  }
}

TEST(TwoBallsWallEqualMasses, PaperExamplesOfTheText) {
  // The paper: "if the two balls are moving together towards the wall, they will
  // bounce together"; "if one is sitting touching the wall and the other hits
  // it, all the momentum will go into the moving ball".
  for (const Eigen::Vector2d& v0 : {Eigen::Vector2d(-1.0, -1.0),    // together
                                    Eigen::Vector2d(0.0, -1.0)}) {  // second hits first
    SCOPED_TRACE("v0 = [" + std::to_string(v0[0]) + ", " + std::to_string(v0[1]) + "]");
    const ImpactResult all =
        resolve(scenes::two_balls_wall({1.0, 1.0}, v0), Parameters(OrderPolicy::kAll));
    ASSERT_EQ(all.status, Status::kSuccess) << all.message;
    ASSERT_EQ(all.outcomes.size(), 1u);
    EXPECT_TRUE(VectorsNear(all.outcomes[0].velocity, -v0, kVelocityTolerance, kVelocityTolerance));
  }
}

class TwoBallsWallUnequalMasses : public ::testing::Test {
 protected:
  const Eigen::Matrix2d minv_ = InverseMass(1.1, 1.0);
  const Eigen::Matrix2d g_u_ = Reflection(minv_, kWall);
  const Eigen::Matrix2d g_v_ = Reflection(minv_, kBalls);
  /// §III-B.3: v4a = G_v G_u G_v G_u v0 (wall first), v4b the other.
  const Eigen::Matrix2d wall_first_ = g_v_ * g_u_ * g_v_ * g_u_;
  const Eigen::Matrix2d balls_first_ = g_u_ * g_v_ * g_u_ * g_v_;
};

TEST_F(TwoBallsWallUnequalMasses, ReflectionProductsMatchThePaper) {
  Eigen::Matrix2d printed_a, printed_b, printed_g_v;
  printed_a << -0.9955, -0.0907, 0.0998, -0.9955;
  printed_b << -0.9955, 0.0907, -0.0998, -0.9955;
  printed_g_v << 0.0476, 0.9524, 1.0476, -0.0476;
  EXPECT_TRUE(MatricesNear(wall_first_, printed_a, kPrintedFourDecimals, 0.0));
  EXPECT_TRUE(MatricesNear(balls_first_, printed_b, kPrintedFourDecimals, 0.0));
  EXPECT_TRUE(MatricesNear(g_v_, printed_g_v, kPrintedFourDecimals, 0.0));
}

TEST_F(TwoBallsWallUnequalMasses, PaperTypoWallReflectionIsNotMinusIdentity) {
  // G_u = diag(−1, 1), not the printed −I.
  EXPECT_TRUE(MatricesNear(g_u_, Eigen::Vector2d(-1.0, 1.0).asDiagonal().toDenseMatrix(),
                           kVelocityTolerance, 0.0));
  // With the printed −I the four-reflection product collapses to G_v² = I,
  // far (> 1 in an entry) from the printed result.
  const Eigen::Matrix2d minus_i = -Eigen::Matrix2d::Identity();
  const Eigen::Matrix2d with_typo = g_v_ * minus_i * g_v_ * minus_i;
  EXPECT_TRUE(MatricesNear(with_typo, Eigen::Matrix2d::Identity(), kVelocityTolerance, 0.0));
  EXPECT_GT((with_typo - wall_first_).cwiseAbs().maxCoeff(), 1.0);
  // The law agrees with diag(−1, 1): the wall alone reverses ball 1 and
  // leaves ball 2 alone.
  const ImpactProblem wall_only =
      ImpactProblem::from_dense(minv_, Eigen::MatrixXd(kWall), Eigen::Vector2d(-1.0, 0.7));
  const ImpactResult result = resolve(wall_only);
  ASSERT_EQ(result.status, Status::kSuccess) << result.message;
  EXPECT_TRUE(VectorsNear(result.outcomes[0].velocity, Eigen::Vector2d(1.0, 0.7),
                          kVelocityTolerance, kVelocityTolerance));
}

TEST_F(TwoBallsWallUnequalMasses, AllOrdersGiveExactlyTheTwoPaperOutcomes) {
  // Velocities deep inside the approach cone, where both orders need four
  // reflections (checked through the sequences). Near the cone's edge one
  // order can finish after three (e.g. v0 = (−1, −1.05)).
  for (const Eigen::Vector2d& v0 :
       {Eigen::Vector2d(-1.0, -2.0), Eigen::Vector2d(-0.3, -2.0), Eigen::Vector2d(-1.0, -5.0)}) {
    SCOPED_TRACE("v0 = [" + std::to_string(v0[0]) + ", " + std::to_string(v0[1]) + "]");
    const ImpactProblem problem = scenes::two_balls_wall({1.1, 1.0}, v0);
    const Eigen::Vector2d v4a = wall_first_ * v0, v4b = balls_first_ * v0;
    const double tol = kVelocityTolerance * v0.norm();

    const ImpactResult all = resolve(problem, Parameters(OrderPolicy::kAll));
    ASSERT_EQ(all.status, Status::kSuccess) << all.message;
    ASSERT_EQ(all.outcomes.size(), 2u);
    EXPECT_TRUE(OutcomeVelocitiesAre(all.outcomes, {v4a, v4b}, tol, kVelocityTolerance));
    for (const Outcome& outcome : all.outcomes) {
      const std::vector<int> expected = outcome.sequence.front() == 0
                                            ? std::vector<int>{0, 1, 0, 1}
                                            : std::vector<int>{1, 0, 1, 0};
      EXPECT_EQ(outcome.sequence, expected);
    }
    // ξ = ‖p_a − p_b‖_g / ‖p0‖_g with ‖p‖²_g = vᵀ M v.
    const Eigen::Matrix2d mass = minv_.inverse();
    const Eigen::Vector2d d = v4a - v4b;
    const double xi = std::sqrt(d.dot(mass * d) / v0.dot(mass * v0));
    ASSERT_TRUE(all.indeterminacy.has_value());
    EXPECT_NEAR(*all.indeterminacy, xi, kVelocityTolerance);

    EXPECT_TRUE(VectorsNear(ResolveFirst(problem, 0).velocity, v4a, tol, kVelocityTolerance));
    EXPECT_TRUE(VectorsNear(ResolveFirst(problem, 1).velocity, v4b, tol, kVelocityTolerance));
  }
}

TEST_F(TwoBallsWallUnequalMasses, DiagnosticsReportNonUniqueness) {
  // c = −(1/1.1) / √((1/1.1)(1/1.1 + 1)) = −1/√2.1.
  const ImpactProblem problem = scenes::two_balls_wall({1.1, 1.0}, {-1.0, -2.0});
  const UniquenessReport report = analyze_uniqueness(problem);
  EXPECT_NEAR(report.inner_products(0, 1), -1.0 / std::sqrt(2.1), kVelocityTolerance);
  EXPECT_FALSE(report.unique);
  EXPECT_FALSE(report.three_stage);
  EXPECT_FALSE(report.pairwise_orthogonal);
}

}  // namespace
}  // namespace simpact
