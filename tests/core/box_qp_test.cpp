// BoxQp (core/box_qp.h): principal pivoting for box-constrained convex QPs
// with W = A Aᵀ. Checked by the box LCP's own conditions (the KKT conditions
// of the convex QP, which every optimum satisfies and only optima satisfy),
// on random rank-deficient problems with near-duplicate rows — the structure
// of contact problems — from cold and warm starts.
#include "core/box_qp.h"

#include "core/inertia.h"

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>
#include <vector>

namespace simpact::internal {
namespace {

// Residual tolerance of the conditions, relative to max |q|: the solver
// decides signs at 1e-12 of the data and polishes the clamped block with a
// fresh Cholesky factor, so an accurate solve lands within ~1e-12; 1e-9 is
// the residual Lemke's solutions are held to (lcp.h).
constexpr double kConditionTolerance = 1e-9;

struct Problem {
  SparseRowMatrix a;
  Eigen::VectorXd q, lo, hi;
};

// The problem of rows `a` with a random right-hand side; about a third of
// the variables are bounded below by 0 (normal impulses), the rest
// two-sided.
Problem with_random_data(const Eigen::MatrixXd& a, std::mt19937& rng) {
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  const Eigen::Index n = a.rows();
  Problem p;
  p.a = a.sparseView();
  p.q.resize(n);
  p.lo.resize(n);
  p.hi.resize(n);
  for (Eigen::Index i = 0; i < n; ++i) {
    p.q[i] = 10.0 * normal(rng);
    p.lo[i] = i % 3 == 0 ? 0.0 : -3.0 * uniform(rng);
    p.hi[i] = 3.0 * uniform(rng);
  }
  return p;
}

// n variables, rank r; every fourth row repeats the one before up to a
// perturbation `near` (0: exactly dependent).
Problem random_problem(std::mt19937& rng, int n, int r, double near) {
  std::normal_distribution<double> normal(0.0, 1.0);
  Eigen::MatrixXd a(n, r);
  for (int i = 0; i < n; ++i)
    for (int j = 0; j < r; ++j) a(i, j) = normal(rng);
  for (int i = 1; i < n; i += 4)
    for (int j = 0; j < r; ++j) a(i, j) = a(i - 1, j) + near * normal(rng);
  return with_random_data(a, rng);
}

// Worst violation of the box LCP's conditions, relative to max |q|.
double worst_violation(const Problem& p, const Eigen::VectorXd& x) {
  const Eigen::MatrixXd a(p.a);
  const Eigen::VectorXd w = a * (a.transpose() * x) + p.q;
  const double scale = p.q.cwiseAbs().maxCoeff();
  const double at_bound = 1e-12 * (p.hi - p.lo).cwiseAbs().maxCoeff();
  double worst = 0.0;
  for (Eigen::Index i = 0; i < x.size(); ++i) {
    double v;
    if (x[i] < p.lo[i] - at_bound || x[i] > p.hi[i] + at_bound) v = 1.0;
    else if (x[i] <= p.lo[i] + at_bound) v = std::max(0.0, -w[i]) / scale;
    else if (x[i] >= p.hi[i] - at_bound) v = std::max(0.0, w[i]) / scale;
    else v = std::abs(w[i]) / scale;
    worst = std::max(worst, v);
  }
  return worst;
}

bool solve(BoxQp& qp, const Problem& p) {
  const Eigen::Index n = p.q.size();
  const Eigen::VectorXd wtol = Eigen::VectorXd::Constant(n, 1e-12 * p.q.cwiseAbs().maxCoeff());
  const Eigen::VectorXd xtol = Eigen::VectorXd::Constant(n, 1e-13);
  return qp.solve(p.q, p.lo, p.hi, wtol, xtol);
}

struct Shape {
  int n, r;
  double near;
};

class BoxQpRandom : public ::testing::TestWithParam<Shape> {};

TEST_P(BoxQpRandom, SolvesTheBoxLcpFromColdAndWarmStarts) {
  const Shape shape = GetParam();
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 60; ++trial) {
    Problem p = random_problem(rng, shape.n, shape.r, shape.near);
    BoxQp qp;
    qp.set_rows(p.a);
    ASSERT_TRUE(solve(qp, p)) << "trial " << trial;
    EXPECT_LE(worst_violation(p, qp.x()), kConditionTolerance) << "trial " << trial;
    EXPECT_LE(static_cast<int>(qp.clamped().size()), shape.r);
    // Warm: new right-hand side and bounds, same rows.
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Eigen::Index i = 0; i < p.q.size(); ++i) {
      p.q[i] += normal(rng);
      p.hi[i] *= 0.5 + 0.5 * std::abs(normal(rng));
    }
    ASSERT_TRUE(solve(qp, p)) << "warm, trial " << trial;
    EXPECT_LE(worst_violation(p, qp.x()), kConditionTolerance) << "warm, trial " << trial;
  }
}

// Up to kBoxDenseGramLimit variables W is read from a dense copy; above it
// every entry is a sparse dot product of two rows of A. Both paths must read
// the same entries (bit for bit: entry()'s contract, which the tied system
// of routh_box.cpp relies on whichever path a cluster's size takes) and both
// must solve the problem; the drives form Δw differently (columns of W, or
// A Aᵀ dx), so their solutions agree to the conditions, not to the bit.
TEST_P(BoxQpRandom, DenseAndSparseGramReadTheSameEntriesAndSolve) {
  const Shape shape = GetParam();
  std::mt19937 rng(4321);
  for (int trial = 0; trial < 20; ++trial) {
    const Problem p = random_problem(rng, shape.n, shape.r, shape.near);
    BoxQp dense, sparse;
    dense.set_rows(p.a);
    sparse.set_rows(p.a, 0);
    ASSERT_TRUE(dense.dense());
    ASSERT_FALSE(sparse.dense());
    for (int j = 0; j < shape.n; ++j)
      for (int k = 0; k < shape.n; ++k) ASSERT_EQ(dense.entry(j, k), sparse.entry(j, k)) << j << ", " << k;
    ASSERT_TRUE(solve(dense, p)) << "trial " << trial;
    ASSERT_TRUE(solve(sparse, p)) << "trial " << trial;
    EXPECT_LE(worst_violation(p, dense.x()), kConditionTolerance) << "trial " << trial;
    EXPECT_LE(worst_violation(p, sparse.x()), kConditionTolerance) << "trial " << trial;
  }
}

// set_gram: W given directly (no rows A), for problems whose rows B R would
// be dense (a large joint group's metric). It must read the entries it was
// given and solve the same problems, from cold and warm starts; with the
// W that set_rows forms from A, its entries are those of the rows' path bit
// for bit.
TEST_P(BoxQpRandom, GramGivenDirectlySolvesTheSameProblems) {
  const Shape shape = GetParam();
  std::mt19937 rng(2468);
  for (int trial = 0; trial < 20; ++trial) {
    Problem p = random_problem(rng, shape.n, shape.r, shape.near);
    const Eigen::MatrixXd gram(SparseRowMatrix(p.a * p.a.transpose()));
    BoxQp rows, given;
    rows.set_rows(p.a);
    given.set_gram(gram);
    ASSERT_TRUE(given.gram_only());
    ASSERT_FALSE(rows.gram_only());
    for (int j = 0; j < shape.n; ++j)
      for (int k = 0; k < shape.n; ++k) ASSERT_EQ(given.entry(j, k), rows.entry(j, k)) << j << ", " << k;
    ASSERT_TRUE(solve(given, p)) << "trial " << trial;
    EXPECT_LE(worst_violation(p, given.x()), kConditionTolerance) << "trial " << trial;
    EXPECT_LE(static_cast<int>(given.clamped().size()), shape.r) << "trial " << trial;
    Eigen::VectorXd product;
    given.multiply(given.x(), product);
    EXPECT_LE((product + p.q - given.w()).cwiseAbs().maxCoeff(), 1e-9 * p.q.cwiseAbs().maxCoeff());
    std::normal_distribution<double> normal(0.0, 1.0);
    for (Eigen::Index i = 0; i < p.q.size(); ++i) p.q[i] += normal(rng);
    ASSERT_TRUE(solve(given, p)) << "warm, trial " << trial;
    EXPECT_LE(worst_violation(p, given.x()), kConditionTolerance) << "warm, trial " << trial;
  }
}

TEST(BoxQp, GramMustBeSquare) {
  BoxQp qp;
  EXPECT_THROW(qp.set_gram(Eigen::MatrixXd::Zero(3, 2)), std::invalid_argument);
}

// set_contact_rows: rows B under M⁻¹. Block-diagonal M⁻¹ with blocks of at
// most kMetricRootBlockLimit DOFs keeps the rows B R (W never given); one
// coupled block above it (a joint group) gives W = B M⁻¹ Bᵀ itself. Either
// way the solution solves the box LCP of W = B M⁻¹ Bᵀ.
TEST(BoxQp, ContactRowsTakeTheRootOrTheGramByTheLargestBlock) {
  std::mt19937 rng(97531);
  std::normal_distribution<double> normal(0.0, 1.0);
  for (const int block : {6, kMetricRootBlockLimit, kMetricRootBlockLimit + 6}) {
    const int bodies = 4, n = bodies * block, contacts = 3 * block;
    // M⁻¹: `bodies` dense SPD blocks of `block` DOFs (a coupled group each).
    std::vector<Eigen::Triplet<double>> entries;
    for (int b = 0; b < bodies; ++b) {
      Eigen::MatrixXd g(block, block);
      for (int i = 0; i < block; ++i)
        for (int j = 0; j < block; ++j) g(i, j) = normal(rng);
      const Eigen::MatrixXd spd = g * g.transpose() / block + 0.1 * Eigen::MatrixXd::Identity(block, block);
      for (int i = 0; i < block; ++i)
        for (int j = 0; j < block; ++j) entries.emplace_back(b * block + i, b * block + j, spd(i, j));
    }
    SparseColMatrix inverse_mass(n, n);
    inverse_mass.setFromTriplets(entries.begin(), entries.end());
    ASSERT_EQ(largest_block(inverse_mass), block);
    // Contact rows reading two blocks' first 12 DOFs, as a contact of two bodies.
    entries.clear();
    for (int c = 0; c < contacts; ++c) {
      const int a = c % bodies, b = (c + 1) % bodies;
      for (int e = 0; e < 6; ++e) {
        entries.emplace_back(c, a * block + (c + e) % block, normal(rng));
        entries.emplace_back(c, b * block + (c + 2 * e) % block, normal(rng));
      }
    }
    SparseRowMatrix rows(contacts, n);
    rows.setFromTriplets(entries.begin(), entries.end());
    BoxQp qp;
    set_contact_rows(qp, rows, inverse_mass);
    EXPECT_EQ(qp.gram_only(), block > kMetricRootBlockLimit) << "block " << block;
    const Eigen::MatrixXd w = Eigen::MatrixXd(rows) * Eigen::MatrixXd(inverse_mass) * Eigen::MatrixXd(rows).transpose();
    for (int j = 0; j < contacts; ++j)
      for (int k = 0; k < contacts; ++k)
        ASSERT_NEAR(qp.entry(j, k), w(j, k), 1e-10 * w.diagonal().maxCoeff()) << "block " << block;
    Problem p = with_random_data(Eigen::MatrixXd::Zero(contacts, 1), rng);
    ASSERT_TRUE(solve(qp, p)) << "block " << block;
    const Eigen::VectorXd residual = w * qp.x() + p.q;
    Problem check = p;
    // worst_violation reads W as A Aᵀ: A = W^{1/2} by Cholesky of the SPD W.
    check.a = Eigen::MatrixXd(Eigen::LLT<Eigen::MatrixXd>(w).matrixL()).sparseView();
    EXPECT_LE(worst_violation(check, qp.x()), kConditionTolerance) << "block " << block;
    EXPECT_LE((qp.w() - residual).cwiseAbs().maxCoeff(), 1e-9 * p.q.cwiseAbs().maxCoeff()) << "block " << block;
  }
}

// Contact-like rows: each row of A touches two "bodies" of 6 columns, as a
// contact row does. With 300 variables over 20 bodies the clamped set grows
// past the point where a drive forms Δw through A rather than through W's
// columns (kBoxIndexedCost), so one solve takes both paths; it must solve
// the problem, and agree with the all-sparse solve to the conditions.
TEST(BoxQp, ContactLikeRowsSolveThroughBothDrivePaths) {
  std::mt19937 rng(77);
  std::normal_distribution<double> normal(0.0, 1.0);
  std::uniform_int_distribution<int> body(0, 19);
  constexpr int n = 300, bodies = 20;
  for (int trial = 0; trial < 5; ++trial) {
    Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, 6 * bodies);
    for (int i = 0; i < n; ++i) {
      const int first = body(rng);
      const int second = (first + 1 + body(rng) % (bodies - 1)) % bodies;
      for (const int b : {first, second})
        for (int c = 0; c < 6; ++c) a(i, 6 * b + c) = normal(rng);
    }
    const Problem p = with_random_data(a, rng);
    BoxQp dense, sparse;
    dense.set_rows(p.a);
    sparse.set_rows(p.a, 0);
    ASSERT_TRUE(dense.dense());
    ASSERT_TRUE(solve(dense, p)) << "trial " << trial;
    ASSERT_TRUE(solve(sparse, p)) << "trial " << trial;
    // Past the switch: n·|C| > kBoxIndexedCost · (nnz(A_C) + nnz(A)).
    const double clamped = static_cast<double>(dense.clamped().size());
    EXPECT_GT(n * clamped, kBoxIndexedCost * (12.0 * clamped + 12.0 * n)) << "trial " << trial;
    EXPECT_LE(worst_violation(p, dense.x()), kConditionTolerance) << "trial " << trial;
    EXPECT_LE(worst_violation(p, sparse.x()), kConditionTolerance) << "trial " << trial;
  }
}

INSTANTIATE_TEST_SUITE_P(Shapes, BoxQpRandom,
                         ::testing::Values(Shape{12, 12, 0.0}, Shape{30, 15, 0.0}, Shape{30, 15, 1e-3},
                                           Shape{96, 48, 1e-3}, Shape{96, 48, 1e-6}));

TEST(BoxQp, WarmStartFromTheSolutionTakesNoStep) {
  std::mt19937 rng(7);
  const Problem p = random_problem(rng, 40, 20, 1e-3);
  BoxQp qp;
  qp.set_rows(p.a);
  ASSERT_TRUE(solve(qp, p));
  ASSERT_GT(qp.steps(), 0);
  const Eigen::VectorXd first = qp.x();
  ASSERT_TRUE(solve(qp, p));
  EXPECT_EQ(qp.steps(), 0);
  EXPECT_LE((qp.x() - first).cwiseAbs().maxCoeff(), 1e-12 * first.cwiseAbs().maxCoeff());
}

TEST(BoxQp, IsDeterministic) {
  std::mt19937 rng(9);
  const Problem p = random_problem(rng, 60, 30, 1e-4);
  BoxQp a, b;
  a.set_rows(p.a);
  b.set_rows(p.a);
  ASSERT_TRUE(solve(a, p));
  ASSERT_TRUE(solve(b, p));
  for (Eigen::Index i = 0; i < p.q.size(); ++i) EXPECT_EQ(a.x()[i], b.x()[i]);
}

TEST(BoxQp, DependentRowsTakeAVertexNotASpread) {
  // Two identical rows pushing the same way with room below their caps:
  // one row clamps, its twin is dependent and stays at its bound (a vertex
  // of the solution set), as Lemke's method would choose.
  SparseRowMatrix a(2, 1);
  a.insert(0, 0) = 1.0;
  a.insert(1, 0) = 1.0;
  Problem p{a, Eigen::Vector2d(-1.0, -1.0), Eigen::Vector2d(0.0, 0.0), Eigen::Vector2d(5.0, 5.0)};
  BoxQp qp;
  qp.set_rows(p.a);
  ASSERT_TRUE(solve(qp, p));
  EXPECT_LE(worst_violation(p, qp.x()), kConditionTolerance);
  EXPECT_EQ(qp.clamped().size(), 1u);
  EXPECT_NEAR(qp.x().sum(), 1.0, 1e-14);
  EXPECT_TRUE(qp.x()[0] == 0.0 || qp.x()[1] == 0.0);
}

TEST(BoxQp, CapsBindWhenTheyMust) {
  // One row, w = x − 2, x ∈ [0, 1]: the cap holds with w = −1 < 0.
  SparseRowMatrix a(1, 1);
  a.insert(0, 0) = 1.0;
  Problem p{a, Eigen::VectorXd::Constant(1, -2.0), Eigen::VectorXd::Zero(1), Eigen::VectorXd::Ones(1)};
  BoxQp qp;
  qp.set_rows(p.a);
  ASSERT_TRUE(solve(qp, p));
  EXPECT_EQ(qp.x()[0], 1.0);
  EXPECT_EQ(qp.state(0), BoxQp::State::kUpper);
  EXPECT_NEAR(qp.w()[0], -1.0, 1e-15);
}

TEST(BoxQp, StepLimitIsReported) {
  std::mt19937 rng(3);
  const Problem p = random_problem(rng, 30, 15, 1e-3);
  BoxQp qp;
  qp.set_rows(p.a);
  const Eigen::VectorXd wtol = Eigen::VectorXd::Constant(30, 1e-12 * p.q.cwiseAbs().maxCoeff());
  const Eigen::VectorXd xtol = Eigen::VectorXd::Constant(30, 1e-13);
  EXPECT_FALSE(qp.solve(p.q, p.lo, p.hi, wtol, xtol, 1));
}

}  // namespace
}  // namespace simpact::internal
