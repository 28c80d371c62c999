// Pasquero's frame-independent law (pasquero.h): the Newton cradle of §4
// Example 1, the single-contact reflection, the law's residuals (energy kept,
// outcome admissible, impulses in the normal cone) on random problems, and
// frame independence through moving constraints (offsets b).
#include <simpact/pasquero.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/random_problems.h>

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <string>
#include <vector>

namespace simpact {
namespace {

/// A handful of unit-scale iterations, each rounding ~1e-16: 1e-12 is a
/// 10⁴ margin.
constexpr double kExact = 1e-12;

// §4 Example 1: five equal disks, the first (or the first two) moving into
// the row: the last ball (two balls) leave at the strikers' speed, the
// others rest. With one incoming disk every iteration involves one contact
// (Step 6), as the paper walks through; with two, the middle disks' swap
// makes two decoupled contacts approach at once (W_bc = 0), and eq. (12)
// then reflects each as alone (Λ = −2).
TEST(Pasquero, NewtonCradleOfFiveDisks) {
  for (const int incoming : {1, 2}) {
    SCOPED_TRACE(std::to_string(incoming) + " incoming");
    const PasqueroResult r = resolve_pasquero(scenes::newtons_cradle(5, incoming, 1.0));
    ASSERT_EQ(r.status, Status::kSuccess) << r.message;
    Eigen::VectorXd expected = Eigen::VectorXd::Zero(5);
    expected.tail(incoming).setOnes();
    EXPECT_LE((r.velocity - expected).cwiseAbs().maxCoeff(), kExact) << r.velocity.transpose();
    if (incoming == 1) {
      for (const auto& set : r.involved) EXPECT_EQ(set.size(), 1u);
    }
    EXPECT_NEAR(r.energy_after, r.energy_before, kExact);
  }
}

// One contact: Step 6 is the elastic reflection λ = −2 u / W.
TEST(Pasquero, SingleContactIsTheElasticReflection) {
  const ImpactProblem problem =
      ImpactProblem::from_dense(Eigen::Matrix2d(Eigen::Vector2d(0.5, 2.0).asDiagonal()),
                                Eigen::RowVector2d(1.0, -1.0), Eigen::Vector2d(-1.0, 0.5));
  const PasqueroResult r = resolve_pasquero(problem);
  const double u = -1.5, w = 2.5;
  ASSERT_EQ(r.impulses.size(), 1);
  EXPECT_NEAR(r.impulses[0], -2.0 * u / w, kExact);
  EXPECT_EQ(r.iterations, 1);
}

// Two contacts struck at once: one Steps 7–9 iteration with eq. (12)'s Λ,
// checked against the formula written out (a cue ball on two touching
// balls, the split shot's geometry, with planar 2-DOF balls).
TEST(Pasquero, SimultaneousStrikeUsesLemma31) {
  const ImpactProblem problem = scenes::billiard_break(M_PI / 3.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0, 1.0);
  const PasqueroResult r = resolve_pasquero(problem);
  ASSERT_EQ(r.status, Status::kSuccess) << r.message;
  ASSERT_FALSE(r.involved.empty());
  ASSERT_EQ(r.involved[0].size(), 2u);
  const Eigen::MatrixXd J(problem.normals);
  const Eigen::MatrixXd Minv(problem.inverse_mass);
  const Eigen::MatrixXd W = J * Minv * J.transpose();
  const Eigen::VectorXd u = J * problem.velocity;
  const Eigen::Vector2d z(u[0] / W(0, 0), u[1] / W(1, 1));
  const double coefficient = -2.0 * (u[0] * z[0] + u[1] * z[1]) / z.dot(W * z);
  ASSERT_EQ(r.involved.size(), 1u) << "both contacts separate after eq. (12)";
  EXPECT_NEAR(r.impulses[0], coefficient * z[0], kExact);
  EXPECT_NEAR(r.impulses[1], coefficient * z[1], kExact);
  EXPECT_NEAR(r.energy_after, r.energy_before, kExact * r.energy_before);
}

// §4 Example 2, the split shot (scenes::split_shot): the cue disk moving
// at v0 (μ, 1) into two touching disks at rest (the paper's
// p_L(S(1,2)) = 2(μ − √3)R v0, p_L(S(1,3)) = −2(μ + √3)R v0). For
// −√3 < μ < √3 both contacts are struck at once, and eq. (12) gives
//     Λ = −(8/3)(μ² + 3)/(μ² + 5)
// in the paper's own parameter (Λ multiplies the sum of the single
// orthogonal velocities, which no row scaling changes). Three checks:
//   1. the law's Λ against the formula;
//   2. the formula on its own, by residuals: v_L + Λ_paper (v⊥_12 + v⊥_13)
//      keeps the kinetic energy and leaves every contact (2–3 included)
//      separating or sliding — so a typo in the printed formula would fail
//      here even if the law reproduced it;
//   3. the law's outcome equals that velocity.
TEST(Pasquero, SplitShotMatchesThePapersCoefficient) {
  const double R = 0.5, v0 = 1.0;
  for (const double mu : {-1.5, -1.0 / std::sqrt(3.0), 0.0, 0.3, 1.0 / std::sqrt(3.0), 1.7}) {
    SCOPED_TRACE("mu = " + std::to_string(mu));
    const ImpactProblem problem = scenes::split_shot(mu, R, v0);
    const Eigen::MatrixXd J(problem.normals);
    const Eigen::VectorXd& v = problem.velocity;
    const PasqueroResult r = resolve_pasquero(problem);
    ASSERT_EQ(r.status, Status::kSuccess) << r.message;
    ASSERT_EQ(r.coefficients.size(), 1u) << "one Steps 7–9 iteration";
    ASSERT_EQ(r.involved[0], (std::vector<int>{0, 1}));
    const double paper = -(8.0 / 3.0) * (mu * mu + 3.0) / (mu * mu + 5.0);
    EXPECT_NEAR(r.coefficients[0], paper, kExact);

    // The single orthogonal velocities (M = I): v⊥_l = J_lᵀ u_l / |J_l|².
    Eigen::VectorXd sum = Eigen::VectorXd::Zero(6);
    for (const int l : {0, 1}) sum += J.row(l).transpose() * (J.row(l).dot(v) / J.row(l).squaredNorm());
    const Eigen::VectorXd formula = v + paper * sum;
    EXPECT_NEAR(0.5 * formula.squaredNorm(), 0.5 * v.squaredNorm(), kExact) << "the formula's energy";
    EXPECT_GE((J * formula).minCoeff(), -kExact) << "the formula leaves a contact approaching";
    EXPECT_LE((r.velocity - formula).cwiseAbs().maxCoeff(), kExact);
    EXPECT_NEAR(r.energy_after, r.energy_before, kExact);
  }
}

// §4 Example 3, the break shot (scenes::break_shot): a cue disk 0 moving at
// v0 along +y strikes disk 1 of a touching triangle 1–2–3 at an angle φ to
// the centre line 0→1. The paper walks the algorithm through:
//   * iteration 1 involves S(0,1) alone (Step 6, Λ = −2): disk 1 leaves
//     along the centre line, the cue disk across it;
//   * iteration 2 is Example 2's split shot with μ = tan φ iff
//     −√3 < tan φ < √3: S(1,2) and S(1,3) together, with that Λ;
//   * that "third" velocity approaches S(0,1) again iff
//     |tan φ| < √(2√3 − 3), and then at least one more iteration follows;
//   * for φ = 0 the outcome is: disk 1 at rest, disks 2 and 3 along the
//     centre lines 1→2 and 1→3, the cue disk back at v0/5.
// Each claim is checked for angles on both sides of both thresholds, and
// the φ = 0 closed form (speed 2√3/5 for disks 2 and 3, from momentum and
// energy) by its own residuals. Every outcome keeps the energy and leaves
// no contact approaching.
TEST(Pasquero, BreakShotFollowsThePapersWalkThrough) {
  const double R = 0.5, v0 = 1.0;
  const double split_bound = std::sqrt(3.0);                       // |tan φ| below: iteration 2 splits
  const double return_bound = std::sqrt(2.0 * std::sqrt(3.0) - 3.0);  // |tan φ| below: S(0,1) again
  for (const double phi : {0.0, 0.2, -0.4, 0.6, -0.7, 0.9, 1.0, -1.1, 1.3}) {
    SCOPED_TRACE("phi = " + std::to_string(phi));
    const double t = std::tan(phi);
    const ImpactProblem problem = scenes::break_shot(phi, R, v0);
    const Eigen::MatrixXd J(problem.normals);
    const PasqueroResult r = resolve_pasquero(problem);
    ASSERT_EQ(r.status, Status::kSuccess) << r.message;
    ASSERT_GE(r.involved.size(), 2u);
    EXPECT_EQ(r.involved[0], std::vector<int>{0});
    EXPECT_NEAR(r.coefficients[0], -2.0, kExact);
    if (std::abs(t) < split_bound) {
      EXPECT_EQ(r.involved[1], (std::vector<int>{1, 2}));
      EXPECT_NEAR(r.coefficients[1], -(8.0 / 3.0) * (t * t + 3.0) / (t * t + 5.0), kExact);
      if (std::abs(t) < return_bound) {
        ASSERT_GE(r.involved.size(), 3u);
        EXPECT_EQ(r.involved[2], std::vector<int>{0});
      } else {
        EXPECT_EQ(r.involved.size(), 2u);
      }
    } else {
      EXPECT_EQ(r.involved[1].size(), 1u) << "disk 1 strikes only one of 2, 3";
    }
    EXPECT_NEAR(r.energy_after, r.energy_before, kExact);
    EXPECT_GE((J * r.velocity).minCoeff(), -kExact);
    EXPECT_GE(r.impulses.minCoeff(), -kExact);
  }

  // φ = 0: the paper's Fig. 5, and the closed form's own residuals.
  const double s = 2.0 * std::sqrt(3.0) / 5.0;
  Eigen::VectorXd paper(8);
  paper << 0.0, -v0 / 5.0, 0.0, 0.0, -0.5 * s * v0, 0.5 * std::sqrt(3.0) * s * v0, 0.5 * s * v0,
      0.5 * std::sqrt(3.0) * s * v0;
  const ImpactProblem symmetric = scenes::break_shot(0.0, R, v0);
  const Eigen::VectorXd& v = symmetric.velocity;
  EXPECT_NEAR(paper.squaredNorm(), v.squaredNorm(), kExact) << "the closed form's energy";
  for (const int axis : {0, 1}) {
    double before = 0.0, after = 0.0;
    for (int disk = 0; disk < 4; ++disk) {
      before += v[2 * disk + axis];
      after += paper[2 * disk + axis];
    }
    EXPECT_NEAR(after, before, kExact) << "the closed form's momentum along axis " << axis;
  }
  const PasqueroResult r = resolve_pasquero(symmetric);
  EXPECT_LE((r.velocity - paper).cwiseAbs().maxCoeff(), kExact) << r.velocity.transpose();
}

// Random problems (b = 0): kinetic energy kept (Remark 4), the outcome
// admissible (no contact approaching), λ ≥ 0 (the normal cone).
TEST(Pasquero, RandomProblemsKeepEnergyAndEndAdmissible) {
  scenes::Random rng(4004);
  int multiple = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const int contacts = rng.integer(1, 5);
    const int dofs = contacts + rng.integer(0, 4);
    const scenes::RandomProblem random =
        scenes::random_problem(contacts, dofs, scenes::random_inertia_kind(rng), rng);
    const PasqueroResult r = resolve_pasquero(random.problem);
    if (r.status != Status::kSuccess) continue;  // capped: the plastic fallback
    SCOPED_TRACE("trial " + std::to_string(trial));
    const double scale = std::max(1.0, r.energy_before);
    EXPECT_NEAR(r.energy_after, r.energy_before, 1e-9 * scale);
    const Eigen::VectorXd u = random.normals * r.velocity;
    const Eigen::VectorXd root_w = (random.normals * random.inverse_mass * random.normals.transpose()).diagonal().cwiseSqrt();
    const Eigen::VectorXd u0 = random.normals * random.problem.velocity;
    double speed = 0.0;
    for (Eigen::Index l = 0; l < u0.size(); ++l)
      if (root_w[l] > 0) speed = std::max(speed, std::abs(u0[l]) / root_w[l]);
    for (Eigen::Index l = 0; l < u.size(); ++l)
      if (root_w[l] > 0) {
        EXPECT_GE(u[l] / root_w[l], -1e-9 * std::max(1.0, speed)) << "contact " << l;
      }
    EXPECT_GE(r.impulses.minCoeff(), -1e-12);
    for (const auto& set : r.involved) multiple += set.size() > 1 ? 1 : 0;
  }
  EXPECT_GT(multiple, 0) << "no random problem exercised eq. (12)";
}

// Frame independence: the same impact seen from a frame moving at c along
// x. Two balls against a wall that moves at w: in the first frame the
// wall's motion is the offset b; in the second everything moves by −c and
// the wall's offset changes to keep u = J v + b. The physical outcome (the
// velocities relative to the frame, shifted back) is the same.
TEST(Pasquero, TheOutcomeDoesNotDependOnTheFrame) {
  const Eigen::Vector2d masses(1.1, 1.0);
  const Eigen::Vector2d v(-1.0, -2.0);
  const double wall = 0.3, c = 0.7;
  ImpactProblem first = scenes::two_balls_wall(masses, v);
  first.offsets = Eigen::Vector2d(-wall, 0.0);  // u_wall = v1 − w
  ImpactProblem second = scenes::two_balls_wall(masses, v - Eigen::Vector2d(c, c));
  second.offsets = Eigen::Vector2d(-(wall - c), 0.0);
  const PasqueroResult a = resolve_pasquero(first);
  const PasqueroResult b = resolve_pasquero(second);
  ASSERT_EQ(a.status, Status::kSuccess) << a.message;
  ASSERT_EQ(b.status, Status::kSuccess) << b.message;
  EXPECT_LE((a.velocity - (b.velocity + Eigen::Vector2d(c, c))).cwiseAbs().maxCoeff(), kExact);
  EXPECT_LE((a.impulses - b.impulses).cwiseAbs().maxCoeff(), kExact);
  // In the wall's frame (v − w) the kinetic energy is kept.
  const Eigen::Vector2d before = v - Eigen::Vector2d(wall, wall), after = a.velocity - Eigen::Vector2d(wall, wall);
  EXPECT_NEAR(0.5 * before.dot(masses.asDiagonal() * before), 0.5 * after.dot(masses.asDiagonal() * after), kExact);
}

TEST(Pasquero, BadParametersNameTheField) {
  PasqueroParameters p;
  p.max_iterations = -1;
  try {
    resolve_pasquero(scenes::newtons_cradle(3, 1, 1.0), p);
    FAIL() << "accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("max_iterations"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace simpact
