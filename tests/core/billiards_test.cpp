// Billiard break, Seghete & Murphey 2014, §VII-A (Fig. 4–5, eq. (31)).
//
// Derivation of the inner product (checked below): with unit rows
// ∇φ_a = [d_a, 0, −d_a], ∇φ_b = [0, d_b, −d_b] (d = unit centre directions
// c→a, c→b) and M⁻¹ = diag(1/m_a I, 1/m_b I, 1/m_c I), only ball c is shared:
//     W_ab = ⟨Dφ_a, Dφ_b⟩_g = d_a·d_b / m_c = cos θ / m_c          (eq. (31))
//     W_aa = 1/m_a + 1/m_c,  W_bb = 1/m_b + 1/m_c,
//     c_ab = cos θ / (m_c √(W_aa W_bb)).
// (The middle, law-of-cosines expression printed in (31) has the opposite
// sign: (|ab|² − d_a² − d_b²)/(2 d_a d_b) = −cos θ; its first and last
// expressions agree with the above.) For equal balls c_ab = cos θ / 2, so
// the outcome is unique at θ = π/2 (Theorem 2) and tends to c = −1/2
// (Theorem 3) at the grazing angle θ = π. With unequal balls c also crosses
// −cos(π/3) and −cos(π/4) — mirror angles π/3 and π/4 at which the two
// reflections generate a finite dihedral group whose longest element both
// orders reach — so ξ vanishes there too.
#include "support/compare.h"
#include "support/policies.h"
#include "support/reference.h"

#include <simpact/diagnostics.h>
#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>

#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

namespace simpact {
namespace {

using testing::AlternatingReflections;
using testing::Dense;
using testing::OutcomeVelocitiesAre;
using testing::Parameters;
using testing::VectorsNear;

constexpr double kPi = 3.14159265358979323846;
/// W and c come from a few products of unit vectors and masses: rounding
/// ~1e-16, so 1e-13 has a 10³ margin.
constexpr double kInnerProductTolerance = 1e-13;
/// ξ of a unique outcome: the two orders agree to rounding (~1e-16 × a few
/// reflections); the brief's 1e-12.
constexpr double kUniqueXi = 1e-12;
/// "Clearly indeterminate": ξ away from the unique angles is 10⁻²–10⁰
/// (Fig. 5); 1e-3 is far above rounding and below every such value.
constexpr double kClearlyIndeterminate = 1e-3;
/// Law vs dense reference: at most four reflections each, ~1e-16 relative
/// per step; ξ is a ratio of such norms.
constexpr double kXiAgreement = 1e-10;
constexpr double kVelocityTolerance = 1e-12;
/// Neighbourhoods excluded from the "clearly indeterminate" check: around
/// the unique angles (in θ for π/2, in c for the dihedral angles π/k) and the
/// grazing end θ → π where every outcome tends to the pre-impact velocity.
constexpr double kThetaExclusion = 0.05;
constexpr double kCoxeterExclusion = 0.02;
constexpr double kGrazingExclusion = 0.2;

struct Balls {
  double ra, rb, rc, ma, mb, mc;
  std::string name;
};

const Balls kEqual{1.0, 1.0, 1.0, 1.0, 1.0, 1.0, "equal"};
/// Unequal radii, masses ∝ volume as in the paper's Fig. 4.
const Balls kUnequal{1.0, 1.5, 0.8, 1.0, 1.5 * 1.5 * 1.5, 0.8 * 0.8 * 0.8, "unequal"};

ImpactProblem Break(const Balls& b, double theta) {
  return scenes::billiard_break(theta, b.ra, b.rb, b.rc, b.ma, b.mb, b.mc, 1.0);
}

double ExpectedC(const Balls& b, double theta) {
  return std::cos(theta) /
         (b.mc * std::sqrt((1.0 / b.ma + 1.0 / b.mc) * (1.0 / b.mb + 1.0 / b.mc)));
}

/// θ at which c_ab = target (if any in (0, π]).
double ThetaForC(const Balls& b, double target) {
  return std::acos(target * b.mc *
                   std::sqrt((1.0 / b.ma + 1.0 / b.mc) * (1.0 / b.mb + 1.0 / b.mc)));
}

/// ‖v_a − v_b‖_g / ‖v0‖_g with ‖v‖²_g = vᵀ M v (M diagonal here), from the
/// dense reference's two orders (a–c first, b–c first).
struct ReferenceBreak {
  std::vector<Eigen::VectorXd> outcomes;
  double xi;
};
ReferenceBreak Reference(const ImpactProblem& problem) {
  const Eigen::MatrixXd minv = Dense(problem.inverse_mass), j = Dense(problem.normals);
  const double approach = PropagativeParameters{}.approach_tolerance;
  const auto ab = AlternatingReflections(minv, j, problem.velocity, 0, approach, 100);
  const auto ba = AlternatingReflections(minv, j, problem.velocity, 1, approach, 100);
  const Eigen::VectorXd mass = minv.diagonal().cwiseInverse();
  const Eigen::VectorXd d = ab.velocity - ba.velocity;
  const double xi = std::sqrt(d.dot(mass.asDiagonal() * d) /
                              problem.velocity.dot(mass.asDiagonal() * problem.velocity));
  return {{ab.velocity, ba.velocity}, xi};
}

std::vector<double> ThetaGrid(const Balls& b, int points) {
  const double lo = scenes::billiard_min_angle(b.ra, b.rb, b.rc);
  std::vector<double> grid;
  for (int k = 1; k <= points; ++k) grid.push_back(lo + (kPi - lo) * k / (points + 1));
  return grid;
}

class BilliardBreakTest : public ::testing::TestWithParam<Balls> {};

TEST_P(BilliardBreakTest, InnerProductMatchesEquation31) {
  const Balls& b = GetParam();
  for (double theta : ThetaGrid(b, 40)) {
    SCOPED_TRACE("theta = " + std::to_string(theta));
    const ImpactProblem problem = Break(b, theta);
    const Eigen::MatrixXd w =
        Dense(problem.normals) * Dense(problem.inverse_mass) * Dense(problem.normals).transpose();
    EXPECT_NEAR(w(0, 1), std::cos(theta) / b.mc, kInnerProductTolerance);  // (31), unnormalized
    EXPECT_NEAR(w(0, 0), 1.0 / b.ma + 1.0 / b.mc, kInnerProductTolerance);
    EXPECT_NEAR(w(1, 1), 1.0 / b.mb + 1.0 / b.mc, kInnerProductTolerance);
    const Eigen::MatrixXd c = normalized_inner_products(problem);
    EXPECT_NEAR(c(0, 1), ExpectedC(b, theta), kInnerProductTolerance);
    EXPECT_NEAR(c(1, 0), ExpectedC(b, theta), kInnerProductTolerance);
  }
}

TEST_P(BilliardBreakTest, UniqueAtRightAngle) {
  const Balls& b = GetParam();
  const ImpactProblem problem = Break(b, kPi / 2.0);
  const ImpactResult all = resolve(problem, Parameters(OrderPolicy::kAll));
  ASSERT_EQ(all.status, Status::kSuccess) << all.message;
  ASSERT_TRUE(all.indeterminacy.has_value());
  EXPECT_LT(*all.indeterminacy, kUniqueXi);
  EXPECT_TRUE(analyze_uniqueness(problem).pairwise_orthogonal);
  // Orthogonal contacts: each reflected once, λ_i = −2 u_i / W_ii.
  const Eigen::MatrixXd minv = Dense(problem.inverse_mass), j = Dense(problem.normals);
  const Eigen::VectorXd u = j * problem.velocity;
  const Eigen::Vector2d lambda(-2.0 * u[0] / (1.0 / b.ma + 1.0 / b.mc),
                               -2.0 * u[1] / (1.0 / b.mb + 1.0 / b.mc));
  const Eigen::VectorXd expected = problem.velocity + minv * j.transpose() * lambda;
  for (const Outcome& outcome : all.outcomes)
    EXPECT_TRUE(VectorsNear(outcome.velocity, expected, kVelocityTolerance, kVelocityTolerance));
}

TEST_P(BilliardBreakTest, IndeterminacyMatchesTheReferenceAndIsPositiveOffTheUniqueAngles) {
  const Balls& b = GetParam();
  int clearly_positive = 0;
  for (double theta : ThetaGrid(b, 60)) {
    SCOPED_TRACE("theta = " + std::to_string(theta));
    const ImpactProblem problem = Break(b, theta);
    const ReferenceBreak reference = Reference(problem);
    const ImpactResult all = resolve(problem, Parameters(OrderPolicy::kAll));
    ASSERT_EQ(all.status, Status::kSuccess) << all.message;
    ASSERT_TRUE(all.indeterminacy.has_value());
    EXPECT_NEAR(*all.indeterminacy, reference.xi, kXiAgreement * (1.0 + reference.xi));
    std::vector<Eigen::VectorXd> expected = reference.outcomes;
    if (reference.xi <= kXiAgreement) expected.pop_back();  // merged by the law
    EXPECT_TRUE(
        OutcomeVelocitiesAre(all.outcomes, expected, kVelocityTolerance, kVelocityTolerance));

    const double c = ExpectedC(b, theta);
    bool near_unique =
        std::abs(theta - kPi / 2.0) < kThetaExclusion || theta > kPi - kGrazingExclusion;
    for (int k = 3; k <= 6; ++k)
      near_unique = near_unique || std::abs(c + std::cos(kPi / k)) < kCoxeterExclusion;
    if (near_unique) continue;
    ++clearly_positive;
    EXPECT_GT(reference.xi, kClearlyIndeterminate) << "reference; c = " << c;
    EXPECT_GT(*all.indeterminacy, kClearlyIndeterminate) << "c = " << c;
    EXPECT_EQ(all.outcomes.size(), 2u);
  }
  EXPECT_GE(clearly_positive, 30);
}

TEST_P(BilliardBreakTest, UniqueAtDihedralAnglesPiOverThreeAndFour) {
  const Balls& b = GetParam();
  const double theta_min = scenes::billiard_min_angle(b.ra, b.rb, b.rc);
  int checked = 0;
  for (int k : {3, 4}) {
    const double target = -std::cos(kPi / k);
    const double scaled =
        target * b.mc * std::sqrt((1.0 / b.ma + 1.0 / b.mc) * (1.0 / b.mb + 1.0 / b.mc));
    if (scaled < -1.0) continue;  // c never gets that negative for these balls
    const double theta = ThetaForC(b, target);
    if (theta <= theta_min || theta >= kPi) continue;
    SCOPED_TRACE("k = " + std::to_string(k) + ", theta = " + std::to_string(theta));
    ++checked;
    const ImpactProblem problem = Break(b, theta);
    EXPECT_NEAR(normalized_inner_products(problem)(0, 1), target, kInnerProductTolerance);
    const ImpactResult all = resolve(problem, Parameters(OrderPolicy::kAll));
    ASSERT_EQ(all.status, Status::kSuccess) << all.message;
    ASSERT_TRUE(all.indeterminacy.has_value());
    EXPECT_LT(*all.indeterminacy, kUniqueXi);
    EXPECT_EQ(all.outcomes.size(), 1u);
    for (const Outcome& outcome : all.outcomes)
      EXPECT_EQ(outcome.sequence.size(), static_cast<size_t>(k));
    if (k == 3) {
      EXPECT_TRUE(analyze_uniqueness(problem).three_stage);
    }
  }
  if (b.name == "unequal") {  // both angles exist for these balls
    EXPECT_EQ(checked, 2);
  }
}

INSTANTIATE_TEST_SUITE_P(Balls, BilliardBreakTest, ::testing::Values(kEqual, kUnequal),
                         [](const auto& test_info) { return test_info.param.name; });

}  // namespace
}  // namespace simpact
