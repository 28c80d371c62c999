// Impact design (design.h; Seghete & Murphey 2014, §VII): the billiard break's
// inner product against eq. (31), ξ vanishing exactly where the normals are
// g-orthogonal, the optimizer finding θ = π/2 from either side and closing
// an open gap on the way, and bad arguments named.
#include <simpact/design.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/trex.h>

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <string>

namespace simpact {
namespace {

constexpr double kPi = 3.14159265358979323846;
/// Inner products of unit-length rows with diagonal M⁻¹: a few roundings.
constexpr double kClosedForm = 1e-14;
/// θ where cos θ = c: |Δθ| = |c| / sin θ ≈ |c| near π/2, and the optimizer
/// stops at |c| ≤ 1e-10 (DesignParameters::tolerance).
constexpr double kAngle = 1e-9;
/// ξ at a g-orthogonal strike: the two orders give one outcome (Theorem 2),
/// equal up to rounding of a handful of reflections.
constexpr double kNoIndeterminacy = 1e-12;

TEST(AnalyzeStrike, BilliardInnerProductIsCosThetaOverMc) {
  // Eq. (31): independent of the other masses and of every radius.
  for (double theta : {1.2, kPi / 2, 2.0, 3.0})
    for (double mc : {0.5, 1.0, 3.0}) {
      const ImpactProblem p = scenes::billiard_break(theta, 0.3, 0.5, 0.4, 2.0, 7.0, mc, 1.0);
      const StrikeAnalysis a = analyze_strike(p);
      EXPECT_NEAR(a.inner_products(0, 1), std::cos(theta) / mc, kClosedForm)
          << "theta " << theta << ", mc " << mc;
      const double cosine = std::cos(theta) / mc /
                            std::sqrt(a.inner_products(0, 0) * a.inner_products(1, 1));
      EXPECT_NEAR(a.cosines(0, 1), cosine, kClosedForm);
      EXPECT_NEAR(a.max_abs_cosine, std::abs(cosine), kClosedForm);
    }
}

TEST(AnalyzeStrike, IndeterminacyVanishesOnlyAtOrthogonalNormals) {
  const StrikeAnalysis skew =
      analyze_strike(scenes::billiard_break(1.2, 1, 1, 1, 1, 1, 1, 1.0));
  ASSERT_TRUE(skew.indeterminacy.has_value());
  EXPECT_EQ(skew.outcomes, 2) << "the two orders differ";
  EXPECT_GT(*skew.indeterminacy, 0.05);
  const StrikeAnalysis right =
      analyze_strike(scenes::billiard_break(kPi / 2, 1, 1, 1, 1, 1, 1, 1.0));
  ASSERT_TRUE(right.indeterminacy.has_value());
  EXPECT_EQ(right.outcomes, 1);
  EXPECT_LE(*right.indeterminacy, kNoIndeterminacy);
  // At rest there is nothing to resolve: no ξ, but the geometry is reported.
  const StrikeAnalysis rest = analyze_strike(scenes::billiard_break(1.2, 1, 1, 1, 1, 1, 1, 0.0));
  EXPECT_FALSE(rest.indeterminacy.has_value());
  EXPECT_GT(rest.max_abs_cosine, 0.1);
}

DesignModel billiard_model() {
  return [](const Eigen::VectorXd& x) {
    DesignPoint point;
    point.problem = scenes::billiard_break(x[0], 0.3, 0.5, 0.4, 2.0, 7.0, 1.5, 1.0);
    return point;
  };
}

TEST(DesignForUniqueness, BilliardBreakFindsARightAngleFromEitherSide) {
  for (double start : {1.2, 2.6}) {
    const DesignResult r = design_for_uniqueness(billiard_model(), Eigen::VectorXd::Constant(1, start));
    ASSERT_TRUE(r.converged) << r.message;
    EXPECT_NEAR(r.parameters[0], kPi / 2, kAngle) << "start " << start << ": " << r.message;
    EXPECT_GT(r.initial.max_abs_cosine, 0.1);
    EXPECT_LE(r.final.max_abs_cosine, DesignParameters{}.tolerance);
    ASSERT_TRUE(r.final.indeterminacy.has_value());
    EXPECT_LE(*r.final.indeterminacy, kNoIndeterminacy);
    EXPECT_GT(*r.initial.indeterminacy, 0.01);
  }
}

TEST(DesignForUniqueness, ClosesAnOpenContactWhileOrthogonalizing) {
  // x = [θ, d]: ball a at distance d from c; its gap is d − (r_a + r_c).
  // The normals do not depend on d, so only the gap row fixes it.
  const double ra = 0.3, rc = 0.4;
  const DesignModel model = [&](const Eigen::VectorXd& x) {
    DesignPoint point;
    point.problem = scenes::billiard_break(x[0], ra, 0.5, rc, 2.0, 7.0, 1.5, 1.0);
    point.constraints = Eigen::VectorXd::Constant(1, x[1] - (ra + rc));
    return point;
  };
  DesignParameters params;
  params.scales = Eigen::Vector2d(1.0, 0.1);
  const DesignResult r = design_for_uniqueness(model, Eigen::Vector2d(1.3, ra + rc + 0.02), params);
  ASSERT_TRUE(r.converged) << r.message;
  EXPECT_NEAR(r.parameters[0], kPi / 2, kAngle);
  EXPECT_NEAR(r.parameters[1], ra + rc, params.gap_tolerance);
  EXPECT_NEAR(r.initial_constraints[0], 0.02, 1e-15);
  EXPECT_LE(std::abs(r.final_constraints[0]), params.gap_tolerance);
}

TEST(DesignForUniqueness, FrozenParametersStayPut) {
  const DesignModel model = [](const Eigen::VectorXd& x) {
    DesignPoint point;
    point.problem = scenes::billiard_break(x[0], 1, 1, 1, 1, 1, x[1], 1.0);
    return point;
  };
  DesignParameters params;
  params.free = {0};
  const DesignResult r = design_for_uniqueness(model, Eigen::Vector2d(2.2, 3.0), params);
  ASSERT_TRUE(r.converged) << r.message;
  EXPECT_EQ(r.parameters[1], 3.0);
  EXPECT_NEAR(r.parameters[0], kPi / 2, kAngle);
  // With only the mass free nothing can change the cosine's sign: reported.
  params.free = {1};
  const DesignResult stuck = design_for_uniqueness(model, Eigen::Vector2d(2.2, 3.0), params);
  EXPECT_FALSE(stuck.converged);
  EXPECT_NE(stuck.message.find("did not converge"), std::string::npos) << stuck.message;
  EXPECT_EQ(stuck.parameters[0], 2.2);
}

TEST(DesignForUniqueness, BadArgumentsNameTheProblem) {
  const DesignModel good = billiard_model();
  auto message = [](auto&& call) {
    try {
      call();
    } catch (const InvalidProblem& e) {
      return std::string(e.what());
    }
    return std::string("no exception");
  };
  const Eigen::VectorXd x0 = Eigen::VectorXd::Constant(1, 1.2);
  DesignParameters p;
  p.free = {1};
  EXPECT_NE(message([&] { design_for_uniqueness(good, x0, p); }).find("index 1"), std::string::npos);
  p.free = {0, 0};
  EXPECT_NE(message([&] { design_for_uniqueness(good, x0, p); }).find("twice"), std::string::npos);
  p = {};
  p.scales = Eigen::Vector2d(1, 1);
  EXPECT_NE(message([&] { design_for_uniqueness(good, x0, p); }).find("scales"), std::string::npos);
  p = {};
  p.tolerance = 0.0;
  EXPECT_NE(message([&] { design_for_uniqueness(good, x0, p); }).find("tolerance"), std::string::npos);
  EXPECT_NE(message([&] { design_for_uniqueness(DesignModel{}, x0); }).find("empty"),
            std::string::npos);
  const DesignModel one_contact = [](const Eigen::VectorXd&) {
    DesignPoint point;
    point.problem = ImpactProblem::from_dense(Eigen::MatrixXd::Identity(2, 2),
                                              Eigen::RowVector2d(1, 0), Eigen::Vector2d(-1, 0));
    return point;
  };
  EXPECT_NE(message([&] { design_for_uniqueness(one_contact, x0); }).find(">= 2"), std::string::npos);
  const DesignModel nan_gap = [](const Eigen::VectorXd& x) {
    DesignPoint point = billiard_model()(x);
    point.constraints = Eigen::Vector2d(std::nan(""), 0.0);
    return point;
  };
  EXPECT_NE(message([&] { design_for_uniqueness(nan_gap, x0); }).find("non-finite constraints"),
            std::string::npos);
  // A model whose constraint count changes with x: caught on the first
  // trial step away from x₀.
  const DesignModel changing = [](const Eigen::VectorXd& x) {
    DesignPoint point = billiard_model()(x);
    point.constraints = Eigen::VectorXd::Zero(x[0] == 1.2 ? 1 : 2);
    return point;
  };
  DesignResult r;
  EXPECT_NO_THROW(r = design_for_uniqueness(changing, x0));
  EXPECT_FALSE(r.converged) << "every trial point is invalid: nothing to accept";
  EXPECT_EQ(r.parameters[0], 1.2);
}

// ── The TREX-like biped (trex.h) ───────────────────────────────────────────

TEST(TrexModel, MassMatrixAndContactRowsAreConsistent) {
  const scenes::TrexDesign d;
  const Eigen::VectorXd q = scenes::trex_initial_stance(d);
  const Eigen::MatrixXd mass = scenes::trex_mass_matrix(q, d);
  EXPECT_NEAR((mass - mass.transpose()).cwiseAbs().maxCoeff(), 0.0, 1e-15);
  EXPECT_GT(Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(mass).eigenvalues().minCoeff(), 0.0);
  // Translation: M_xx = M_yy = total mass = two spheres (1 g/cm³) + tail,
  // thighs and shanks (0.25 kg/m).
  const double spheres = 1000.0 * 4.0 / 3.0 * kPi * (std::pow(d.r1, 3) + std::pow(d.r2, 3));
  const double rods = 0.25 * (scenes::trex_tail_length(d) + 2.0 * (d.thigh + d.shank));
  EXPECT_NEAR(mass(0, 0), spheres + rods, 1e-12);
  EXPECT_NEAR(mass(1, 1), spheres + rods, 1e-12);
  // The stance is a double strike: foot and tail on the ground, the left
  // foot clear.
  EXPECT_NEAR(scenes::trex_right_foot(q, d).y(), 0.0, 1e-15);
  EXPECT_NEAR(scenes::trex_tail_tip(q, d).y(), 0.0, 1e-15);
  EXPECT_GT(scenes::trex_left_foot(q, d).y(), 0.01);
  // Contact rows are ∂y/∂q: central differences agree to their own error
  // (h² · |∂³y| ~ 1e-12 with h = 1e-6, plus rounding 1e-16 / h).
  const DesignPoint point = scenes::trex_double_strike(q, d, scenes::trex_drop_velocity());
  const Eigen::MatrixXd rows = Eigen::MatrixXd(point.problem.normals);
  constexpr double kStep = 1e-6, kDifference = 1e-9;
  for (int k = 0; k < 8; ++k) {
    Eigen::VectorXd up = q, down = q;
    up[k] += kStep;
    down[k] -= kStep;
    EXPECT_NEAR(rows(0, k),
                (scenes::trex_right_foot(up, d).y() - scenes::trex_right_foot(down, d).y()) / (2 * kStep),
                kDifference) << "foot, coordinate " << k;
    EXPECT_NEAR(rows(1, k),
                (scenes::trex_tail_tip(up, d).y() - scenes::trex_tail_tip(down, d).y()) / (2 * kStep),
                kDifference) << "tail, coordinate " << k;
  }
  EXPECT_THROW(scenes::trex_tail_length({0.04, 0.07, 0.08, 0.1}), std::invalid_argument);
}

// Seghete & Murphey 2014, §VII-B: the double strike of foot and tail loses ≥ 5
// orders of magnitude of indeterminacy once the stance and design are optimized
// (the impact_design demo prints the table).
TEST(TrexDesign, DoubleStrikeLosesFiveOrdersOfIndeterminacy) {
  const scenes::TrexDesign design;
  const Eigen::VectorXd q0 = scenes::trex_initial_stance(design);
  const Eigen::VectorXd v0 = scenes::trex_drop_velocity();
  const double clearance = scenes::trex_left_foot(q0, design).y();
  const DesignModel model = [&](const Eigen::VectorXd& x) {
    Eigen::VectorXd q(8);
    q << 0.0, x.head(7);
    const scenes::TrexDesign d{x[7], x[8], x[9], x[10]};
    DesignPoint point = scenes::trex_double_strike(q, d, v0);
    point.constraints.conservativeResize(3);
    point.constraints[2] = scenes::trex_left_foot(q, d).y() - clearance;
    return point;
  };
  Eigen::VectorXd x0(11);
  x0 << q0.tail(7), design.r1, design.r2, design.thigh, design.shank;
  DesignParameters params;
  params.length_scale = 0.1;
  params.scales = Eigen::VectorXd::Ones(11);
  params.scales[0] = 0.1;
  params.scales.tail(4).setConstant(0.05);
  const DesignResult r = design_for_uniqueness(model, x0, params);
  ASSERT_TRUE(r.converged) << r.message;
  ASSERT_TRUE(r.initial.order_spread && r.final.order_spread);
  EXPECT_GT(*r.initial.order_spread, 1e-3) << "the unoptimized strike is indeterminate";
  EXPECT_LE(*r.final.order_spread, 1e-5 * *r.initial.order_spread) << r.message;
  EXPECT_LE(std::abs(r.final.inner_products(0, 1)), 1e-5 * std::abs(r.initial.inner_products(0, 1)));
  EXPECT_LE(r.final_constraints.cwiseAbs().maxCoeff(), params.gap_tolerance);
  // Still a plausible biped: radii ordered, lengths within 20 % of the start.
  EXPECT_GT(r.parameters[7], r.parameters[8]);
  for (int k = 7; k < 11; ++k) EXPECT_NEAR(r.parameters[k], x0[k], 0.2 * x0[k]) << "parameter " << k;
}

}  // namespace
}  // namespace simpact
