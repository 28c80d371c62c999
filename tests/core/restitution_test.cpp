// RestitutionTest: the restitution blend v⁺ = α v_e + (1 − α) v_p
// (Seghete & Murphey 2014, eq. (17), α from definition (16), see propagative.h)
// and the plastic law (eq. (10)–(11), Moreau).
#include "support/compare.h"
#include "support/policies.h"

#include "core/inertia.h"

#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/frictional_scenes.h>
#include <simpact_scenes/random_problems.h>

#include <gtest/gtest.h>

#include <Eigen/Cholesky>
#include <Eigen/Eigenvalues>

#include <cmath>

namespace simpact {
namespace {

using testing::Parameters;
using testing::VectorsNear;

/// One reflection/projection of a small problem: a few roundings of ~1e-16
/// relative; 1e-12 relative keeps a 10⁴ margin.
constexpr double kTolerance = 1e-12;
/// Random SPD problems with eigenvalues in [0.1, 10] and Gaussian normals:
/// the projection (11) is a small dense solve whose error grows with the
/// conditioning of W; 1e-9 relative covers conditions up to ~10⁶.
constexpr double kProjectionTolerance = 1e-9;
constexpr int kRandomProblems = 500;
/// Two rebound speeds count as different when they differ by more than this
/// (ten orders above kTolerance, below the smallest gap 0.042 at R = 0.7).
constexpr double kDistinguishable = 1e-2;

class SingleContact : public ::testing::TestWithParam<double> {};

TEST_P(SingleContact, ReboundsAtMinusRTimesTheApproachSpeed) {
  const double r = GetParam();
  // Two balls, masses 1 and 3, closing at 3: u⁻ = J v = −3.
  ImpactProblem problem = scenes::newtons_cradle(2, 0, 0.0, Eigen::Vector2d(1.0, 3.0));
  problem.velocity = Eigen::Vector2d(2.0, -1.0);
  problem.restitution = r;
  const double u_before = -3.0;
  // Newton's law u⁺ = −R u⁻: λ = (1 + R)(−u⁻)/W, W = 1/1 + 1/3.
  const double w = 1.0 + 1.0 / 3.0;
  const double lambda = (1.0 + r) * (-u_before) / w;
  const Eigen::Vector2d expected(2.0 - lambda, -1.0 + lambda / 3.0);

  for (const auto& run : testing::SingleOutcomePolicies()) {
    if (run.policy == OrderPolicy::kTimeOfImpact) continue;  // no hints here
    SCOPED_TRACE(run.name());
    const ImpactResult result = resolve(problem, Parameters(run.policy, run.seed));
    ASSERT_EQ(result.status, Status::kSuccess) << result.message;
    const Eigen::VectorXd& v = result.outcomes[0].velocity;
    const double u_after = v[1] - v[0];
    EXPECT_NEAR(u_after, -r * u_before, kTolerance);
    EXPECT_TRUE(VectorsNear(v, expected, kTolerance, kTolerance));
    EXPECT_NEAR(result.outcomes[0].impulses[0], lambda, kTolerance);
    // The paper's α = √(1 − R²) would rebound at √(1 − R²)·3 instead: different
    // for every R except 1/√2 (R = 0.7 comes within 0.042 of it).
    EXPECT_GT(std::abs(u_after - std::sqrt(1.0 - r * r) * 3.0), kDistinguishable);
    // Eq. (16): E⁻ − E⁺ = (1 − R²) (E⁻ − E_p); here E_p (plastic, common
    // velocity 1/4) is computed by hand.
    const double e_before = 0.5 * (1.0 * 4.0 + 3.0 * 1.0);
    const double e_plastic = 0.5 * (1.0 + 3.0) * 0.25 * 0.25;
    const double e_after = 0.5 * (v[0] * v[0] + 3.0 * v[1] * v[1]);
    EXPECT_NEAR(e_before - e_after, (1.0 - r * r) * (e_before - e_plastic), kTolerance);
    EXPECT_NEAR(result.energy_before, e_before, kTolerance * e_before);
    EXPECT_NEAR(result.energy_after, e_after, kTolerance * e_before);
  }
}

TEST_P(SingleContact, RandomInertiaReboundsAtMinusR) {
  const double r = GetParam();
  scenes::Random rng(77);
  for (int trial = 0; trial < 100; ++trial) {
    const int n = rng.integer(1, 6);
    const scenes::RandomProblem random =
        scenes::random_problem(1, n, scenes::InertiaKind::kFullRank, rng);
    ImpactProblem problem = random.problem;
    const double u_before = (random.normals * problem.velocity)(0);
    if (!(u_before < 0.0)) continue;  // separating: nothing to do
    problem.restitution = r;
    const ImpactResult result = resolve(problem);
    ASSERT_EQ(result.status, Status::kSuccess) << result.message;
    const Eigen::VectorXd& v_after = result.outcomes[0].velocity;
    const double u_after = (random.normals * v_after)(0);
    // u is a dot product: its rounding scales with Σ|J_k| (|v⁻_k| + |v⁺_k|).
    const double dot_scale =
        (random.normals.cwiseAbs() * (problem.velocity.cwiseAbs() + v_after.cwiseAbs()))(0);
    EXPECT_NEAR(u_after, -r * u_before, kTolerance * dot_scale) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(R, SingleContact, ::testing::Values(0.0, 0.3, 0.7, 1.0),
                         [](const auto& test_info) {
                           return "R" +
                                  std::to_string(static_cast<int>(test_info.param * 10 + 0.5)) +
                                  "tenths";
                         });

/// Problem with SPD M⁻¹, m ≤ n and full-row-rank J, and the momentum built so
/// that the equality projection (11) needs the impulses `lambda_eq`:
/// u⁻ = −W λ_eq, i.e. p = Jᵀ y + r with y = −λ_eq − W⁻¹ J M⁻¹ r.
struct ProjectionCase {
  ImpactProblem problem;
  Eigen::MatrixXd minv, j;
  Eigen::VectorXd lambda_eq, v_eq;
};

ProjectionCase MakeProjectionCase(scenes::Random& rng, bool all_positive) {
  const int n = rng.integer(1, 7);
  const int m = rng.integer(1, n);
  ProjectionCase c;
  c.minv = scenes::random_inverse_mass(n, scenes::InertiaKind::kFullRank, rng);
  c.j = scenes::random_normals(m, n, rng);
  const Eigen::MatrixXd w = c.j * c.minv * c.j.transpose();
  c.lambda_eq.resize(m);
  for (int i = 0; i < m; ++i)
    c.lambda_eq[i] = all_positive ? rng.uniform(0.1, 2.0) : rng.uniform(-2.0, 2.0);
  const Eigen::VectorXd r = rng.normal_vector(n);
  const Eigen::VectorXd y = -c.lambda_eq - w.ldlt().solve(c.j * c.minv * r);
  const Eigen::VectorXd p = c.j.transpose() * y + r;
  c.problem = ImpactProblem::from_dense(c.minv, c.j, c.minv * p);
  c.problem.restitution = 0.0;
  // Eq. (11) as a projection, computed independently: p⁺ = p − Jᵀ W⁻¹ J M⁻¹ p.
  c.v_eq = c.minv * (p - c.j.transpose() * w.ldlt().solve(c.j * c.minv * p));
  return c;
}

/// Smallest/largest eigenvalue of W for a constructed case to be used: with
/// condition ≤ 10³ the dense solves above lose ≤ 10³ε, far inside
/// kProjectionTolerance, so a mismatch is the law's.
constexpr double kMinConditionRatio = 1e-3;

bool WellConditioned(const ProjectionCase& c) {
  const Eigen::MatrixXd w = c.j * c.minv * c.j.transpose();
  const Eigen::VectorXd eig = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(w).eigenvalues();
  return eig.minCoeff() > kMinConditionRatio * eig.maxCoeff();
}

/// The plastic LCP's solvers (PlasticSolver): each must give the projection
/// the closed forms below describe.
class PlasticBySolver : public ::testing::TestWithParam<PlasticSolver> {
 protected:
  PropagativeParameters parameters() const {
    PropagativeParameters p;
    p.plastic_solver = GetParam();
    return p;
  }
};

std::string SolverName(const ::testing::TestParamInfo<PlasticSolver>& info) {
  switch (info.param) {
    case PlasticSolver::kAutomatic: return "Automatic";
    case PlasticSolver::kLemke: return "Lemke";
    case PlasticSolver::kBoxPivoting: return "BoxPivoting";
    case PlasticSolver::kActiveSet: return "ActiveSet";
  }
  return "Unknown";
}

INSTANTIATE_TEST_SUITE_P(Solvers, PlasticBySolver,
                         ::testing::Values(PlasticSolver::kAutomatic, PlasticSolver::kLemke,
                                           PlasticSolver::kBoxPivoting, PlasticSolver::kActiveSet),
                         SolverName);

TEST_P(PlasticBySolver, EqualsTheEqualityProjectionWhenItsImpulsesArePositive) {
  scenes::Random rng(11);
  int checked = 0;
  for (int trial = 0; trial < kRandomProblems; ++trial) {
    const ProjectionCase c = MakeProjectionCase(rng, /*all_positive=*/true);
    if (!WellConditioned(c)) continue;
    ++checked;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const double scale = c.problem.velocity.cwiseAbs().maxCoeff() + c.v_eq.cwiseAbs().maxCoeff();
    for (const ImpactResult& result : {resolve_plastic(c.problem, parameters()), resolve(c.problem, parameters())}) {
      ASSERT_EQ(result.status, Status::kSuccess) << result.message;
      EXPECT_TRUE(
          VectorsNear(result.outcomes[0].velocity, c.v_eq, kProjectionTolerance * scale, 0.0));
      EXPECT_TRUE(VectorsNear(result.outcomes[0].impulses, c.lambda_eq,
                              kProjectionTolerance * c.lambda_eq.cwiseAbs().maxCoeff(), 0.0));
      // u⁺ = 0 for every contact.
      const Eigen::VectorXd u = c.j * result.outcomes[0].velocity;
      EXPECT_LE(u.cwiseAbs().maxCoeff(),
                kProjectionTolerance * (c.j * c.problem.velocity).cwiseAbs().maxCoeff());
    }
  }
  EXPECT_GE(checked, kRandomProblems / 2);
}

TEST_P(PlasticBySolver, NeverAdhesive) {
  scenes::Random rng(12);
  int adhesive_projection = 0;
  for (int trial = 0; trial < kRandomProblems; ++trial) {
    const ProjectionCase c = MakeProjectionCase(rng, /*all_positive=*/false);
    if (!WellConditioned(c)) continue;
    adhesive_projection += c.lambda_eq.minCoeff() < 0.0;
    SCOPED_TRACE("trial " + std::to_string(trial));
    const ImpactResult result = resolve_plastic(c.problem, parameters());
    ASSERT_EQ(result.status, Status::kSuccess) << result.message;
    const Eigen::VectorXd& lambda = result.outcomes[0].impulses;
    const Eigen::VectorXd u = c.j * result.outcomes[0].velocity;
    const double u_scale = (c.j * c.problem.velocity).cwiseAbs().maxCoeff();
    const double l_scale =
        std::max(lambda.cwiseAbs().maxCoeff(), c.lambda_eq.cwiseAbs().maxCoeff());
    for (Eigen::Index i = 0; i < u.size(); ++i) {
      EXPECT_GE(lambda[i], -kProjectionTolerance * l_scale) << "contact " << i;
      EXPECT_GE(u[i], -kProjectionTolerance * u_scale) << "contact " << i;
      // Complementarity: a contact that separates after the impact got no
      // impulse; one that got an impulse ends at rest.
      EXPECT_LE(std::abs(lambda[i] * u[i]), kProjectionTolerance * l_scale * u_scale)
          << "contact " << i;
    }
  }
  EXPECT_GT(adhesive_projection, kRandomProblems / 4);  // the adhesive case is exercised
}

TEST(Plastic, SeparatingBallIsNotPulledBack) {
  // Cradle 1–2–3 with v = (1, 0, 5): ball 1 strikes ball 2 while ball 3
  // races away. Eq. (11) would stop both contacts (u⁺ = 0), pulling ball 3
  // back with a negative impulse; the plastic law merges balls 1–2 at 1/2 and
  // leaves ball 3 alone: λ = (1/2, 0).
  ImpactProblem problem = scenes::newtons_cradle(3, 0, 0.0);
  problem.velocity = Eigen::Vector3d(1.0, 0.0, 5.0);
  const ImpactResult result = resolve_plastic(problem);
  ASSERT_EQ(result.status, Status::kSuccess) << result.message;
  EXPECT_TRUE(VectorsNear(result.outcomes[0].velocity, Eigen::Vector3d(0.5, 0.5, 5.0), kTolerance,
                          kTolerance));
  EXPECT_TRUE(
      VectorsNear(result.outcomes[0].impulses, Eigen::Vector2d(0.5, 0.0), kTolerance, kTolerance));
  // With R = 0.5 the blend of the elastic (0, 1, 5) and plastic outcomes.
  problem.restitution = 0.5;
  const ImpactResult blended = resolve(problem);
  ASSERT_EQ(blended.status, Status::kSuccess) << blended.message;
  EXPECT_TRUE(VectorsNear(blended.outcomes[0].velocity, Eigen::Vector3d(0.25, 0.75, 5.0),
                          kTolerance, kTolerance));
}

// Seghete & Murphey 2014, eq. (18), assumes ⟨p_p, p_e⟩_g = ‖p_p‖²_g, under
// which (16) gives α = R. A point mass (M = I) hits a floor n₁ = (0, 1) and a
// wall n₂ = (0.6, 0.8) at v⁻ = (0.5, −1): both approach (u = (−0.5, −1) in
// the order [wall, floor]).
// Index order strikes the wall first: v_e = (1.1, 0.2) with both impulses
// positive. The plastic projection only needs the floor, v_p = (0.5, 0), and
// releases the wall (u_p,wall = 0.3 > 0), so (18) fails and α = R would
// dissipate the wrong energy. Definition (16) with R = 1/2:
//   ½|v⁺|² = E⁻ − (1 − R²)(E⁻ − E_p) = 0.625 − 0.75 · 0.5 = 0.25,
// with v⁺ = (0.5 + 0.6 α, 0.2 α):  0.4 α² + 0.6 α − 0.25 = 0.
TEST(Restitution, DefinitionSixteenHoldsWhenThePlasticImpactReleasesAStruckContact) {
  Eigen::MatrixXd normals(2, 2);
  normals << 0.6, 0.8,  // wall
      0.0, 1.0;         // floor
  ImpactProblem problem = ImpactProblem::from_dense(Eigen::Matrix2d::Identity(), normals,
                                                    Eigen::Vector2d(0.5, -1.0));
  problem.restitution = 0.5;
  const ImpactResult result = resolve(problem, Parameters(OrderPolicy::kIndex));
  ASSERT_EQ(result.status, Status::kSuccess) << result.message;
  const double alpha = (-0.6 + std::sqrt(0.6 * 0.6 + 4.0 * 0.4 * 0.25)) / (2.0 * 0.4);
  EXPECT_TRUE(VectorsNear(result.outcomes[0].velocity,
                          Eigen::Vector2d(0.5 + 0.6 * alpha, 0.2 * alpha), kTolerance, 0.0));
  EXPECT_NEAR(result.energy_after, 0.25, kTolerance);
  // The paper's α = R would have kept 0.325 of the energy: distinguishable.
  const Eigen::Vector2d paper_alpha_outcome(0.5 + 0.6 * 0.5, 0.2 * 0.5);
  EXPECT_GT(std::abs(0.5 * paper_alpha_outcome.squaredNorm() - result.energy_after),
            kDistinguishable);
}

/// A column of `boxes` boxes falling flat at `speed` onto the ground
/// (scenes::falling_box_stack, frictionless here): four corner contacts per
/// face, rank three each, the dependent rows of every pile of boxes.
ImpactProblem FallingColumn(int boxes, double speed, double restitution) {
  const FrictionalProblem column = scenes::falling_box_stack(boxes, speed);
  ImpactProblem problem;
  problem.inverse_mass = column.inverse_mass;
  problem.normals = column.normals;
  problem.velocity = column.velocity;
  problem.restitution = restitution;
  return problem;
}

/// Pile-scale plastic LCPs (more than kDensePlasticContacts contacts: the
/// automatic solver's box pivoting) have a closed form here: a column that
/// lands flat stops, v⁺ = 0 (every box is held by the one below; the
/// ground stops the lowest). The LCP is accepted at 1e-9 of the data's
/// scales, and its active set of ~3 rows a face is conditioned ~1e2 on a
/// column of ≤ 64 boxes, so 1e-8 × the speed bounds v⁺.
constexpr double kColumnTolerance = 1e-8;

TEST(PlasticAtPileScale, LandingColumnStops) {
  constexpr double kSpeed = 0.44;
  for (const int boxes : {17, 32, 64}) {
    SCOPED_TRACE(std::to_string(boxes) + " boxes");
    const ImpactProblem problem = FallingColumn(boxes, kSpeed, 0.0);
    ASSERT_GT(problem.contacts(), kDensePlasticContacts);
    const ImpactResult result = resolve_plastic(problem);
    ASSERT_EQ(result.status, Status::kSuccess) << result.message;
    const Outcome& outcome = result.outcomes[0];
    EXPECT_LE(outcome.velocity.cwiseAbs().maxCoeff(), kColumnTolerance * kSpeed);
    EXPECT_GE(outcome.impulses.minCoeff(), 0.0);
    EXPECT_LE(result.energy_after, kColumnTolerance * result.energy_before);
  }
}

/// The restitution blend on the box-pivoting path: with the plastic outcome
/// at rest, p_p = 0, so L = D = ‖p_e‖²_g, e = 0 and definition (16) gives
/// α = R: the column keeps exactly R² of its energy whatever its elastic
/// outcome is. λ_p enters α through L and e, so a wrong plastic solve shows.
TEST(PlasticAtPileScale, RestitutionBlendKeepsRSquaredOfALandingColumnsEnergy) {
  constexpr double kSpeed = 0.44;
  for (const int boxes : {17, 32}) {
    for (const double r : {0.3, 0.7}) {
      SCOPED_TRACE(std::to_string(boxes) + " boxes, R = " + std::to_string(r));
      const ImpactResult result = resolve(FallingColumn(boxes, kSpeed, r));
      ASSERT_EQ(result.status, Status::kSuccess) << result.message;
      EXPECT_NEAR(result.energy_after, r * r * result.energy_before, kColumnTolerance * result.energy_before);
    }
  }
}

/// Box pivoting and the dense Lemke reference on the same column give the
/// same (unique) plastic velocity; their impulses may differ (dependent
/// rows), but both satisfy the LCP.
// The plastic outcome by box pivoting, checked against the dense Lemke
// reference's velocity within kColumnTolerance × `speed`.
ImpactResult PlasticByBoxAgreeingWithLemke(const ImpactProblem& problem, double speed) {
  PropagativeParameters lemke, box;
  lemke.plastic_solver = PlasticSolver::kLemke;
  box.plastic_solver = PlasticSolver::kBoxPivoting;
  const ImpactResult by_lemke = resolve_plastic(problem, lemke);
  ImpactResult by_box = resolve_plastic(problem, box);
  EXPECT_EQ(by_lemke.status, Status::kSuccess) << by_lemke.message;
  EXPECT_EQ(by_box.status, Status::kSuccess) << by_box.message;
  if (by_lemke.status == Status::kSuccess && by_box.status == Status::kSuccess) {
    EXPECT_TRUE(VectorsNear(by_box.outcomes[0].velocity, by_lemke.outcomes[0].velocity, kColumnTolerance * speed, 0.0));
  }
  return by_box;
}

TEST(PlasticAtPileScale, BoxPivotingAndLemkeAgreeOnAColumn) {
  constexpr double kSpeed = 0.44;
  PlasticByBoxAgreeingWithLemke(FallingColumn(20, kSpeed, 0.0), kSpeed);
}

/// A chain of `links` boxes (0.3 × 0.1 × 0.1 m, 0.4 kg) lying along x, each
/// held to the next by a ball joint (slightly off the axis), landing flat at 0.5 m/s while turning
/// about its own axis at 0.3 rad/s, on four ground corners each. The joints
/// couple every link: M⁻¹_G = M⁻¹ − M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁻¹ G M⁻¹ is one dense
/// block of 6 × links DOFs (what the Bullet adapter gives a hinged chain
/// lying on the ground, every link touched).
ImpactProblem LyingChain(int links) {
  const int n = 6 * links, m = 4 * links;
  const double mass = 0.4, hx = 0.15, hy = 0.05, hz = 0.05;
  const Eigen::Vector3d inertia = mass / 3.0 * Eigen::Vector3d(hy * hy + hz * hz, hx * hx + hz * hz, hx * hx + hy * hy);
  Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Zero(n, n);
  for (int i = 0; i < links; ++i) {
    inverse_mass.block<3, 3>(6 * i, 6 * i) = Eigen::Matrix3d::Identity() / mass;
    inverse_mass.block<3, 3>(6 * i + 3, 6 * i + 3) = inertia.cwiseInverse().asDiagonal();
  }
  const auto cross = [](const Eigen::Vector3d& r) {  // [r]×: [r]× a = r × a
    Eigen::Matrix3d c;
    c << 0, -r.z(), r.y(), r.z(), 0, -r.x(), -r.y(), r.x(), 0;
    return c;
  };
  // Ball joints at shared points off the axis (so that no DOF decouples
  // exactly): (v_i + ω_i × a) − (v_{i+1} + ω_{i+1} × b) = 0, a = (hx, e_y,
  // e_z), b = (−hx, e_y, e_z); v + ω × r = v − [r]× ω.
  Eigen::MatrixXd G = Eigen::MatrixXd::Zero(3 * (links - 1), n);
  const Eigen::Vector3d a(hx, 0.02, 0.01), b(-hx, 0.02, 0.01);
  for (int i = 0; i + 1 < links; ++i) {
    G.block<3, 3>(3 * i, 6 * i) = Eigen::Matrix3d::Identity();
    G.block<3, 3>(3 * i, 6 * i + 3) = -cross(a);
    G.block<3, 3>(3 * i, 6 * (i + 1)) = -Eigen::Matrix3d::Identity();
    G.block<3, 3>(3 * i, 6 * (i + 1) + 3) = cross(b);
  }
  const Eigen::MatrixXd response = inverse_mass * G.transpose();
  Eigen::MatrixXd constrained = inverse_mass - response * (G * response).ldlt().solve(response.transpose());
  constrained = 0.5 * (constrained + constrained.transpose()).eval();
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(m, n);
  const Eigen::Vector3d up = Eigen::Vector3d::UnitY();
  for (int i = 0; i < links; ++i)
    for (int c = 0; c < 4; ++c) {
      const Eigen::Vector3d arm(c % 2 ? hx : -hx, -hy, c / 2 ? hz : -hz);
      normals.block<1, 3>(4 * i + c, 6 * i) = up.transpose();
      normals.block<1, 3>(4 * i + c, 6 * i + 3) = arm.cross(up).transpose();
    }
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(n);
  for (int i = 0; i < links; ++i) {
    velocity[6 * i + 1] = -0.5;
    velocity[6 * i + 3] = 0.3;  // about x, the chain's axis: equal at both sides of every joint
  }
  ImpactProblem problem = ImpactProblem::from_dense(constrained, normals, velocity);
  problem.restitution = 0.0;
  return problem;
}

/// Box pivoting on a chain lying on the ground: M⁻¹ has one coupled block
/// above kMetricRootBlockLimit, so box pivoting reads W itself
/// (set_contact_rows) instead of forming rows J M^{-1/2} by an O(block³)
/// eigen-decomposition (docs/scaling.md, "Joint groups on the ground"). Its
/// plastic velocity is Lemke's (unique: u⁺ is, and M⁻¹Jᵀλ with it), and
/// leaves no corner approaching.
TEST(PlasticAtPileScale, BoxPivotingOnALyingJointedChainReadsWAndAgreesWithLemke) {
  for (const int links : {17, 24}) {
    SCOPED_TRACE(std::to_string(links) + " links");
    const ImpactProblem problem = LyingChain(links);
    ASSERT_GT(internal::largest_block(problem.inverse_mass), internal::kMetricRootBlockLimit);
    constexpr double kSpeed = 0.5;
    const ImpactResult by_box = PlasticByBoxAgreeingWithLemke(problem, kSpeed);
    ASSERT_EQ(by_box.status, Status::kSuccess) << by_box.message;
    const Eigen::VectorXd after = problem.normals * by_box.outcomes[0].velocity;
    EXPECT_GE(after.minCoeff(), -kColumnTolerance * kSpeed);
    EXPECT_LE(by_box.energy_after, by_box.energy_before);
    EXPECT_GT(by_box.energy_before - by_box.energy_after, 0.5 * by_box.energy_before);  // it lands
  }
}

}  // namespace
}  // namespace simpact
