// The shared scenes (demos/scenes) build the problems their documentation
// describes, and the random generators deliver what the property tests rely
// on (PSD, exact symmetry, singular kinds really singular, v = M⁻¹ p).
#include "support/compare.h"
#include "support/policies.h"
#include "support/reference.h"

#include <simpact/propagative.h>
#include <simpact_scenes/core_scenes.h>
#include <simpact_scenes/random_problems.h>

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>

#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace simpact {
namespace {

using testing::Dense;
using testing::MatricesNear;
using testing::Parameters;
using testing::VectorsNear;

constexpr double kPi = 3.14159265358979323846;
/// Scene entries are exact or one trigonometric evaluation away: ~1e-16.
constexpr double kExact = 1e-14;
/// Eigenvalues of a random M⁻¹ with λ ∈ [0.1, 10] (or 0) from a Q D Qᵀ
/// product: rounding ~1e-15 × λ_max; "zero" means below 1e-12 × λ_max
/// (kRankTolerance), "negative" beyond −1e-12 × λ_max would be a bug.
constexpr double kEigenRounding = 1e-12;

TEST(Scenes, CradleStructure) {
  const Eigen::VectorXd masses = Eigen::Vector4d(1.0, 2.0, 4.0, 8.0);
  const ImpactProblem p = scenes::newtons_cradle(4, 2, 3.0, masses);
  ASSERT_EQ(p.dofs(), 4);
  ASSERT_EQ(p.contacts(), 3);
  EXPECT_EQ(p.normals.nonZeros(), 6);
  EXPECT_EQ(p.inverse_mass.nonZeros(), 4);
  Eigen::MatrixXd j(3, 4);
  j << -1, 1, 0, 0, 0, -1, 1, 0, 0, 0, -1, 1;
  EXPECT_TRUE(MatricesNear(Dense(p.normals), j, 0.0, 0.0));
  EXPECT_TRUE(VectorsNear(Dense(p.inverse_mass).diagonal(), masses.cwiseInverse(), 0.0, 0.0));
  EXPECT_TRUE(VectorsNear(p.velocity, Eigen::Vector4d(3.0, 3.0, 0.0, 0.0), 0.0, 0.0));
  EXPECT_NO_THROW(validate(p));
  // Contact 1 (balls 1–2) approaches at −3, the others touch.
  EXPECT_TRUE(
      VectorsNear(Dense(p.normals) * p.velocity, Eigen::Vector3d(0.0, -3.0, 0.0), 0.0, 0.0));
}

TEST(Scenes, RejectInvalidArguments) {
  EXPECT_THROW(scenes::newtons_cradle(1, 1, 1.0), std::invalid_argument);
  EXPECT_THROW(scenes::newtons_cradle(3, 4, 1.0), std::invalid_argument);
  EXPECT_THROW(scenes::newtons_cradle(3, 1, 1.0, Eigen::Vector2d(1.0, 1.0)), std::invalid_argument);
  EXPECT_THROW(scenes::newtons_cradle(2, 1, 1.0, Eigen::Vector2d(1.0, 0.0)), std::invalid_argument);
  EXPECT_THROW(scenes::two_balls_wall({-1.0, 1.0}, {0.0, 0.0}), std::invalid_argument);
  EXPECT_THROW(scenes::billiard_break(0.0, 1, 1, 1, 1, 1, 1, 1), std::invalid_argument);
  EXPECT_THROW(scenes::billiard_break(1.0, 1, 1, 1, 1, 0, 1, 1), std::invalid_argument);
  EXPECT_THROW(scenes::split_shot(0.0, 0.0, 1.0), std::invalid_argument);
  EXPECT_THROW(scenes::break_shot(kPi / 2, 1.0, 1.0), std::invalid_argument);
}

// Pasquero's §4 Example 2: the gap S = |Δq|² − 4R² has p_L(S) = 2 Δq·Δv =
// 4R u for the unit-gradient row, so the paper's p_L(S(1,2)) = 2(μ − √3)R v0,
// p_L(S(1,3)) = −2(μ + √3)R v0 and p_L(S(2,3)) = 0 are u = (μ − √3)v0/2,
// −(μ + √3)v0/2 and 0. Example 3 with φ: only S(0,1) approaches, at
// −v0 cos φ.
TEST(Scenes, PasquerosShotsHaveThePapersContactVelocities) {
  const double R = 0.7, v0 = 1.3;
  for (const double mu : {-1.0, 0.0, 0.4}) {
    const ImpactProblem p = scenes::split_shot(mu, R, v0);
    const Eigen::VectorXd u = p.normals * p.velocity;
    EXPECT_NEAR(4 * R * u[0], 2 * (mu - std::sqrt(3.0)) * R * v0, kExact);
    EXPECT_NEAR(4 * R * u[1], -2 * (mu + std::sqrt(3.0)) * R * v0, kExact);
    EXPECT_NEAR(u[2], 0.0, kExact);
  }
  for (const double phi : {-0.5, 0.0, 1.2}) {
    const ImpactProblem p = scenes::break_shot(phi, R, v0);
    const Eigen::VectorXd u = p.normals * p.velocity;
    EXPECT_NEAR(u[0], -v0 * std::cos(phi), kExact);
    EXPECT_EQ(u.tail<3>(), Eigen::Vector3d::Zero());
  }
}

TEST(Scenes, LongBallChainTransfersTheMomentumToTheLastBall) {
  // Seghete & Murphey 2014, eq. (15), for N balls: one incoming ball, N − 1
  // swaps in order.
  for (const int balls : {3, 10, 100, 1000}) {
    SCOPED_TRACE(std::to_string(balls) + " balls");
    const ImpactProblem p = scenes::ball_chain(balls, 2.0);
    EXPECT_EQ(p.normals.nonZeros(), 2 * (balls - 1));
    EXPECT_EQ(p.inverse_mass.nonZeros(), balls);
    Eigen::VectorXd expected = Eigen::VectorXd::Zero(balls);
    expected[balls - 1] = 2.0;
    std::vector<int> sequence(static_cast<size_t>(balls - 1));
    std::iota(sequence.begin(), sequence.end(), 0);
    for (const OrderPolicy policy :
         {OrderPolicy::kMostNegative, OrderPolicy::kLeastNegative, OrderPolicy::kIndex}) {
      SCOPED_TRACE(to_string(policy));
      const ImpactResult r = resolve(p, Parameters(policy));
      ASSERT_EQ(r.status, Status::kSuccess) << r.message;
      EXPECT_TRUE(VectorsNear(r.outcomes[0].velocity, expected, kExact, 0.0));
      EXPECT_EQ(r.outcomes[0].sequence, sequence);
      EXPECT_TRUE(VectorsNear(r.outcomes[0].impulses, Eigen::VectorXd::Constant(balls - 1, 2.0),
                              kExact, 0.0));
    }
  }
}

TEST(Scenes, TwoBallsWall) {
  const ImpactProblem p = scenes::two_balls_wall({1.1, 1.0}, {-1.0, -2.0});
  Eigen::Matrix2d j;
  j << 1, 0, -1, 1;
  EXPECT_TRUE(MatricesNear(Dense(p.normals), j, 0.0, 0.0));
  EXPECT_TRUE(
      VectorsNear(Dense(p.inverse_mass).diagonal(), Eigen::Vector2d(1.0 / 1.1, 1.0), 0.0, 0.0));
  // Both approach: ball 1 towards the wall, ball 2 towards ball 1.
  EXPECT_TRUE(VectorsNear(j * p.velocity, Eigen::Vector2d(-1.0, -1.0), 0.0, 0.0));
}

TEST(Scenes, BilliardBreakGeometry) {
  const double ra = 1.0, rb = 1.5, rc = 0.8;
  for (const double theta : {1.4, kPi / 2.0, 2.5}) {
    SCOPED_TRACE("theta " + std::to_string(theta));
    const ImpactProblem p = scenes::billiard_break(theta, ra, rb, rc, 1.0, 2.0, 3.0, 1.5);
    const Eigen::MatrixXd j = Dense(p.normals);
    ASSERT_EQ(j.rows(), 2);
    ASSERT_EQ(j.cols(), 6);
    // Unit gradients; ball c's part is minus the other ball's part.
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(j.row(i).segment<2>(2 * i).norm(), 1.0, kExact);
      EXPECT_TRUE(VectorsNear(j.row(i).segment<2>(4).transpose(),
                              -j.row(i).segment<2>(2 * i).transpose(), 0.0, 0.0));
      EXPECT_EQ(j.row(i).segment<2>(2 * (1 - i)).squaredNorm(), 0.0);
    }
    // The centre lines c→a and c→b are θ apart.
    EXPECT_NEAR(j.row(0).head<2>().dot(j.row(1).segment<2>(2)), std::cos(theta), kExact);
    // c moves along the bisector: both contacts approach at cos(θ/2)·speed.
    EXPECT_TRUE(VectorsNear(j * p.velocity, Eigen::Vector2d::Constant(-std::cos(theta / 2.0) * 1.5),
                            kExact, 0.0));
    EXPECT_TRUE(VectorsNear(Dense(p.inverse_mass).diagonal(),
                            (Eigen::VectorXd(6) << 1, 1, 0.5, 0.5, 1.0 / 3, 1.0 / 3).finished(),
                            kExact, 0.0));
  }
  EXPECT_NEAR(scenes::billiard_min_angle(1.0, 1.0, 1.0), kPi / 3.0, kExact);
  // At the minimum angle a and b touch: |q_a − q_b| = r_a + r_b.
  const double theta_min = scenes::billiard_min_angle(ra, rb, rc);
  const double da = ra + rc, db = rb + rc;
  EXPECT_NEAR(da * da + db * db - 2 * da * db * std::cos(theta_min), (ra + rb) * (ra + rb), kExact);
}

TEST(RandomScenes, SameSeedSameProblem) {
  scenes::Random a(99), b(99);
  const auto pa = scenes::random_problem(4, 6, scenes::InertiaKind::kRankDeficient, a);
  const auto pb = scenes::random_problem(4, 6, scenes::InertiaKind::kRankDeficient, b);
  EXPECT_TRUE(MatricesNear(pa.inverse_mass, pb.inverse_mass, 0.0, 0.0));
  EXPECT_TRUE(MatricesNear(pa.normals, pb.normals, 0.0, 0.0));
  EXPECT_TRUE(VectorsNear(pa.momentum, pb.momentum, 0.0, 0.0));
}

TEST(RandomScenes, DrawsStayInRange) {
  scenes::Random rng(1);
  double sum = 0.0, sum_sq = 0.0;
  constexpr int kDraws = 20000;
  for (int k = 0; k < kDraws; ++k) {
    const double u = rng.uniform(-2.0, 3.0);
    ASSERT_GE(u, -2.0);
    ASSERT_LT(u, 3.0);
    const int i = rng.integer(-3, 4);
    ASSERT_GE(i, -3);
    ASSERT_LE(i, 4);
    const double x = rng.normal();
    ASSERT_TRUE(std::isfinite(x));
    sum += x;
    sum_sq += x * x;
  }
  // Mean 0 and variance 1 within ~5 standard errors (1/√N ≈ 0.007).
  constexpr double kFiveStandardErrors = 0.04;
  EXPECT_NEAR(sum / kDraws, 0.0, kFiveStandardErrors);
  EXPECT_NEAR(sum_sq / kDraws, 1.0, 2 * kFiveStandardErrors);
}

TEST(RandomScenes, InverseMassesArePsdWithTheRequestedStructure) {
  scenes::Random rng(3);
  for (int trial = 0; trial < 400; ++trial) {
    const int n = rng.integer(1, 8);
    const auto kind = static_cast<scenes::InertiaKind>(trial % scenes::kInertiaKinds);
    SCOPED_TRACE("n = " + std::to_string(n) + ", kind " +
                 std::to_string(trial % scenes::kInertiaKinds));
    const Eigen::MatrixXd minv = scenes::random_inverse_mass(n, kind, rng);
    ASSERT_EQ(minv.rows(), n);
    EXPECT_TRUE(MatricesNear(minv, minv.transpose(), 0.0, 0.0));  // exactly symmetric
    const Eigen::VectorXd eig = Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd>(minv).eigenvalues();
    const double largest = eig.cwiseAbs().maxCoeff();
    EXPECT_GT(largest, 0.0);
    EXPECT_GE(eig.minCoeff(), -kEigenRounding * largest);
    int rank = 0;
    for (Eigen::Index i = 0; i < n; ++i) rank += eig[i] > kEigenRounding * largest;
    int zero_rows = 0;
    for (int i = 0; i < n; ++i) zero_rows += minv.row(i).cwiseAbs().maxCoeff() == 0.0;
    if (n >= 2 &&
        (kind == scenes::InertiaKind::kRankDeficient || kind == scenes::InertiaKind::kLockedDofs)) {
      EXPECT_LT(rank, n);
    }
    if (kind == scenes::InertiaKind::kFullRank || kind == scenes::InertiaKind::kBlockDiagonal) {
      EXPECT_EQ(rank, n);
    }
    if (n >= 2 && kind == scenes::InertiaKind::kLockedDofs) {
      EXPECT_GE(zero_rows, 1);
    }
    EXPECT_NO_THROW(validate(
        ImpactProblem::from_dense(minv, Eigen::MatrixXd::Ones(1, n), Eigen::VectorXd::Zero(n))));
  }
}

TEST(RandomScenes, ProblemsAreValidWithVelocityInTheRangeOfTheInverseMass) {
  scenes::Random rng(4);
  int approaching = 0, contacts = 0;
  for (int trial = 0; trial < 400; ++trial) {
    const int m = rng.integer(1, 6), n = rng.integer(1, 8);
    const auto r = scenes::random_problem(m, n, scenes::random_inertia_kind(rng), rng);
    EXPECT_NO_THROW(validate(r.problem));
    EXPECT_TRUE(VectorsNear(r.problem.velocity, r.inverse_mass * r.momentum, 0.0, 0.0));
    EXPECT_TRUE(MatricesNear(Dense(r.problem.normals), r.normals, 0.0, 0.0));
    for (int i = 0; i < m; ++i) EXPECT_GT(r.normals.row(i).cwiseAbs().maxCoeff(), 0.0);
    const Eigen::VectorXd u = r.normals * r.problem.velocity;
    for (int i = 0; i < m; ++i) approaching += u[i] < 0.0;
    contacts += m;
  }
  // The bias towards −Jᵀ makes most contacts approach, but not all.
  EXPECT_GT(approaching, contacts / 2);
  EXPECT_LT(approaching, contacts);
}

}  // namespace
}  // namespace simpact
