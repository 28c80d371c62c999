// Lemke's method (core/lcp.h, internal), the LCP solver under the plastic,
// Routh and Anitescu–Potra laws: closed-form answers on 2 × 2 problems, the
// unique solution of random P-matrix LCPs found by enumerating every
// complementary basis, infeasibility reported as a ray, degenerate problems
// (dependent rows, tied right-hand sides) solved, invariance to scaling q,
// and a reused LemkeSolver giving bit-for-bit the answers of fresh solves.
#include "support/compare.h"

#include "core/lcp.h"

#include <gtest/gtest.h>

#include <Eigen/LU>

#include <cstdint>
#include <random>
#include <stdexcept>
#include <vector>

namespace simpact::internal {
namespace {

using simpact::testing::VectorsNear;

/// Lemke lands at ~1e-15 relative on these well-conditioned problems (≤ 7
/// variables, condition ≲ 1e3); 1e-10 leaves room for that conditioning and
/// still catches a wrong basis, which is off by O(1).
constexpr double kSolution = 1e-10;
/// A reported solution's own residual (w ≥ 0, z·w = 0), relative to the
/// problem's scale: the solver's acceptance is 1e-9; an exact solve is
/// ~1e-15.
constexpr double kResidual = 1e-12;

// Every solution of LCP(M, q), by trying all 2^m complementary bases. Each
// principal block solved with full-pivoting LU; singular blocks skipped.
std::vector<Eigen::VectorXd> enumerate_solutions(const Eigen::MatrixXd& M, const Eigen::VectorXd& q) {
  const int m = static_cast<int>(q.size());
  std::vector<Eigen::VectorXd> out;
  for (std::uint32_t set = 0; set < (1u << m); ++set) {
    std::vector<int> idx;
    for (int i = 0; i < m; ++i)
      if (set & (1u << i)) idx.push_back(i);
    const int k = static_cast<int>(idx.size());
    Eigen::VectorXd z = Eigen::VectorXd::Zero(m);
    if (k > 0) {
      Eigen::MatrixXd maa(k, k);
      Eigen::VectorXd qa(k);
      for (int a = 0; a < k; ++a) {
        qa[a] = q[idx[a]];
        for (int b = 0; b < k; ++b) maa(a, b) = M(idx[a], idx[b]);
      }
      Eigen::FullPivLU<Eigen::MatrixXd> lu(maa);
      if (!lu.isInvertible()) continue;
      const Eigen::VectorXd za = lu.solve(-qa);
      for (int a = 0; a < k; ++a) z[idx[a]] = za[a];
    }
    const Eigen::VectorXd w = M * z + q;
    const double slack = 1e-12 * (1.0 + q.cwiseAbs().maxCoeff());
    if (z.minCoeff() >= -slack && w.minCoeff() >= -slack) out.push_back(z.cwiseMax(0.0));
  }
  return out;
}

const char* to_string(LcpStatus status) {
  switch (status) {
    case LcpStatus::kSolved: return "solved";
    case LcpStatus::kRayTermination: return "ray_termination";
    case LcpStatus::kPivotLimit: return "pivot_limit";
    case LcpStatus::kInaccurate: return "inaccurate";
  }
  return "unknown";
}

::testing::AssertionResult SolvesLcp(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                     const LcpResult& r) {
  if (r.status != LcpStatus::kSolved)
    return ::testing::AssertionFailure() << "status " << to_string(r.status) << ": " << r.message;
  const Eigen::VectorXd w = M * r.z + q;
  const double scale = std::max(q.cwiseAbs().maxCoeff(), (M.cwiseAbs() * r.z).maxCoeff());
  if (r.z.minCoeff() < 0.0) return ::testing::AssertionFailure() << "negative z " << r.z.transpose();
  if (w.minCoeff() < -kResidual * scale)
    return ::testing::AssertionFailure() << "w = " << w.transpose() << " is negative";
  const double complementarity = r.z.cwiseProduct(w).cwiseAbs().maxCoeff();
  if (complementarity > kResidual * scale * std::max(r.z.maxCoeff(), 1e-300))
    return ::testing::AssertionFailure() << "z.w = " << complementarity;
  if (!VectorsNear(r.w, w, kResidual * scale, 0.0))
    return ::testing::AssertionFailure() << "reported w differs from M z + q";
  return ::testing::AssertionSuccess();
}

TEST(Lemke, TwoByTwoClosedForms) {
  Eigen::MatrixXd M(2, 2);
  M << 2, 1, 1, 2;
  // Both variables active: z = M⁻¹ (5, 6) = (4/3, 7/3).
  LcpResult both = solve_lcp_lemke(M, Eigen::Vector2d(-5, -6));
  ASSERT_TRUE(SolvesLcp(M, Eigen::Vector2d(-5, -6), both));
  EXPECT_TRUE(VectorsNear(both.z, Eigen::Vector2d(4.0 / 3.0, 7.0 / 3.0), kSolution, kSolution));
  // Only the first: z₁ = 1/2, w₂ = 1/2 + 3.
  LcpResult one = solve_lcp_lemke(M, Eigen::Vector2d(-1, 3));
  ASSERT_TRUE(SolvesLcp(M, Eigen::Vector2d(-1, 3), one));
  EXPECT_TRUE(VectorsNear(one.z, Eigen::Vector2d(0.5, 0.0), kSolution, kSolution));
  EXPECT_TRUE(VectorsNear(one.w, Eigen::Vector2d(0.0, 3.5), kSolution, kSolution));
  // q ≥ 0: z = 0 at once, no pivot.
  LcpResult none = solve_lcp_lemke(M, Eigen::Vector2d(1, 0));
  EXPECT_EQ(none.status, LcpStatus::kSolved);
  EXPECT_EQ(none.pivots, 0);
  EXPECT_TRUE(VectorsNear(none.z, Eigen::Vector2d::Zero(), 0.0, 0.0));
}

// Positive definite (not necessarily symmetric) matrices are P-matrices:
// their LCP has exactly one solution for every q.
TEST(Lemke, FindsTheUniqueSolutionOfRandomPMatrixProblems) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  for (int trial = 0; trial < 300; ++trial) {
    const int m = 1 + trial % 7;
    Eigen::MatrixXd a(m, m), skew(m, m);
    Eigen::VectorXd q(m);
    for (int i = 0; i < m; ++i) {
      q[i] = u(rng);
      for (int j = 0; j < m; ++j) {
        a(i, j) = u(rng);
        skew(i, j) = u(rng);
      }
    }
    const bool symmetric = trial % 2 == 0;
    Eigen::MatrixXd M = a * a.transpose() + 0.1 * Eigen::MatrixXd::Identity(m, m);
    if (!symmetric) M += skew - skew.transpose();
    const std::vector<Eigen::VectorXd> all = enumerate_solutions(M, q);
    ASSERT_EQ(all.size(), 1u) << "trial " << trial << ": a P-matrix LCP has one solution";
    const LcpResult r = solve_lcp_lemke(M, q);
    ASSERT_TRUE(SolvesLcp(M, q, r)) << "trial " << trial;
    EXPECT_TRUE(VectorsNear(r.z, all[0], kSolution, kSolution)) << "trial " << trial;
  }
}

TEST(Lemke, ReportsInfeasibleProblemsAsARay) {
  // w = −z − 1 < 0 for every z ≥ 0.
  const LcpResult scalar = solve_lcp_lemke(Eigen::MatrixXd::Constant(1, 1, -1.0),
                                           Eigen::VectorXd::Constant(1, -1.0));
  EXPECT_EQ(scalar.status, LcpStatus::kRayTermination);
  EXPECT_FALSE(scalar.message.empty());
  // PSD (copositive-plus) but w₁ + w₂ = −2 always: Lemke's ray is a proof.
  Eigen::MatrixXd M(2, 2);
  M << 1, -1, -1, 1;
  const LcpResult psd = solve_lcp_lemke(M, Eigen::Vector2d(-1, -1));
  EXPECT_EQ(psd.status, LcpStatus::kRayTermination);
  EXPECT_NE(psd.message.find("also with 2 other covering vectors"), std::string::npos)
      << psd.message;
  EXPECT_TRUE(enumerate_solutions(M, Eigen::Vector2d(-1, -1)).empty());
  // The failed result carries no garbage: z = 0, w = q.
  EXPECT_TRUE(VectorsNear(psd.z, Eigen::Vector2d::Zero(), 0.0, 0.0));
  EXPECT_TRUE(VectorsNear(psd.w, Eigen::Vector2d(-1, -1), 0.0, 0.0));
}

TEST(Lemke, SolvesDegenerateProblems) {
  // Two copies of one contact (W singular, every ratio tied): any split of
  // the unit impulse solves it.
  Eigen::MatrixXd dup(2, 2);
  dup << 1, 1, 1, 1;
  const LcpResult a = solve_lcp_lemke(dup, Eigen::Vector2d(-1, -1));
  ASSERT_TRUE(SolvesLcp(dup, Eigen::Vector2d(-1, -1), a));
  EXPECT_NEAR(a.z.sum(), 1.0, kSolution);
  // Dependent rows, a zero and tied entries in q: the Delassus matrix of
  // four contacts on a 3-DOF body.
  Eigen::MatrixXd j(4, 3);
  j << 1, 0, 0.5, 1, 0, -0.5, 0, 1, 0.25, 1, 0, 0.5;
  const Eigen::MatrixXd w = j * j.transpose();
  const Eigen::Vector4d q(-1, 0, -1, -1);
  const LcpResult b = solve_lcp_lemke(w, q);
  EXPECT_TRUE(SolvesLcp(w, q, b));
  const LcpResult c = solve_psd_lcp(w, q);
  EXPECT_TRUE(SolvesLcp(w, q, c));
}

TEST(Lemke, ScalingQScalesTheSolutionAndKeepsThePivots) {
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int m = 6;
  Eigen::MatrixXd a(m, m);
  Eigen::VectorXd q(m);
  for (int i = 0; i < m; ++i) {
    q[i] = u(rng);
    for (int k = 0; k < m; ++k) a(i, k) = u(rng);
  }
  const Eigen::MatrixXd M = a * a.transpose();
  const LcpResult base = solve_lcp_lemke(M, q);
  ASSERT_TRUE(SolvesLcp(M, q, base));
  for (double s : {1e-6, 1e-3, 1e3}) {
    const LcpResult scaled = solve_lcp_lemke(M, s * q);
    ASSERT_TRUE(SolvesLcp(M, s * q, scaled)) << "scale " << s;
    EXPECT_EQ(scaled.pivots, base.pivots) << "scale " << s;
    EXPECT_TRUE(VectorsNear(scaled.z, s * base.z, kSolution * s, kSolution)) << "scale " << s;
  }
}

TEST(LemkeSolver, ReuseGivesTheBitsOfFreshSolves) {
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  const int m = 8;
  Eigen::MatrixXd a(m, m);
  for (int i = 0; i < m; ++i)
    for (int k = 0; k < m; ++k) a(i, k) = u(rng);
  const Eigen::MatrixXd M = a * a.transpose() + 0.01 * Eigen::MatrixXd::Identity(m, m);
  LemkeSolver solver;
  solver.set_matrix(M);
  LcpResult reused;
  for (int trial = 0; trial < 50; ++trial) {
    Eigen::VectorXd q(m);
    for (int i = 0; i < m; ++i) q[i] = u(rng);
    solver.solve(q, {}, reused);
    const LcpResult fresh = solve_lcp_lemke(M, q);
    ASSERT_TRUE(SolvesLcp(M, q, reused)) << "trial " << trial;
    EXPECT_EQ(reused.pivots, fresh.pivots) << "trial " << trial;
    for (int i = 0; i < m; ++i) EXPECT_EQ(reused.z[i], fresh.z[i]) << "trial " << trial << " z_" << i;
  }
}

TEST(LemkeSolver, RejectsAQOfTheWrongSize) {
  LemkeSolver solver;
  solver.set_matrix(Eigen::MatrixXd::Identity(3, 3));
  LcpResult r;
  EXPECT_THROW(solver.solve(Eigen::VectorXd::Constant(2, -1.0), {}, r), std::invalid_argument);
}

TEST(LemkeSolver, RejectsNegativeRetries) {
  LemkeSolver solver;
  solver.set_matrix(Eigen::MatrixXd::Identity(2, 2));
  LemkeParameters p;
  p.retries = -1;
  LcpResult r;
  EXPECT_THROW(solver.solve(Eigen::Vector2d(-1, -1), p, r), std::invalid_argument);
}

TEST(Lemke, RejectsABadCoveringVector) {
  LemkeParameters p;
  p.covering = Eigen::Vector2d(1.0, 0.0);
  const LcpResult r = solve_lcp_lemke(Eigen::MatrixXd::Identity(2, 2), Eigen::Vector2d(-1, -1), p);
  EXPECT_NE(r.status, LcpStatus::kSolved);
  EXPECT_NE(r.message.find("covering"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace simpact::internal
