// Position-level separation (core/separation.h): the least push μ ≥ 0 with
// W μ ≥ d and complementarity, shared by both Bullet adapters.
#include "core/separation.h"

#include <simpact_scenes/core_scenes.h>

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <algorithm>
#include <random>

namespace {

using simpact::internal::separation_displacement;
using simpact::internal::separation_impulses;

/// Residual tolerance of the LCP conditions: the active-set solve is a
/// dense least-squares solve of a system of at most 8 rows with entries of
/// order 1, so its rounding is ~1e-15; 1e-12 leaves room for conditioning
/// without accepting a wrong active set (errors of a wrong set are O(d)).
constexpr double kLcpTolerance = 1e-12;

void expect_lcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& d, const Eigen::VectorXd& mu) {
  const Eigen::VectorXd w = W * mu - d;
  for (Eigen::Index r = 0; r < d.size(); ++r) {
    EXPECT_GE(mu[r], 0.0) << "row " << r;
    EXPECT_GE(w[r], -kLcpTolerance) << "row " << r << " still overlaps";
    EXPECT_NEAR(mu[r] * w[r], 0.0, kLcpTolerance) << "row " << r << " pushed further than needed";
  }
}

// Three unit balls in a row on a line; the striker (0) overlaps the middle
// one by d, the middle one just touches the third. One Gauss–Seidel sweep
// (the rigid adapter's former rule) pushes ball 1 into ball 2; the least
// push moves balls 1 and 2 together: Δx = (−2d/3, d/3, d/3).
TEST(Separation, RowOfTouchingBallsIsClearedToTheFarEnd) {
  const double d = 0.01;
  Eigen::MatrixXd J(2, 3);
  J << -1, 1, 0,
        0, -1, 1;
  const Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Identity(3, 3);
  const Eigen::Vector2d depth(d, 0.0);
  const Eigen::VectorXd dx = separation_displacement(J.sparseView(), inverse_mass.sparseView(), depth);
  EXPECT_NEAR(dx[0], -2.0 * d / 3.0, 1e-15);
  EXPECT_NEAR(dx[1], d / 3.0, 1e-15);
  EXPECT_NEAR(dx[2], d / 3.0, 1e-15);
  const Eigen::VectorXd gaps = J * dx - depth;
  EXPECT_GE(gaps.minCoeff(), -1e-15);
}

TEST(Separation, NoOverlapNoPush) {
  const Eigen::MatrixXd W = Eigen::MatrixXd::Identity(3, 3);
  EXPECT_EQ(separation_impulses(W, Eigen::Vector3d(-1e-3, 0.0, -2.0)), Eigen::VectorXd::Zero(3));
  const simpact::SparseRowMatrix none(0, 6);
  const simpact::SparseColMatrix identity = Eigen::MatrixXd::Identity(6, 6).sparseView();
  EXPECT_EQ(separation_displacement(none, identity, Eigen::VectorXd()),
            Eigen::VectorXd::Zero(6));
}

// Random well-posed problems (m ≤ n rows, positive-definite metric, depths
// of both signs): the result is the LCP's unique solution.
TEST(Separation, RandomProblemsSatisfyTheComplementarityConditions) {
  std::mt19937_64 rng(20261124);
  std::uniform_real_distribution<double> unit(-1.0, 1.0);
  for (int trial = 0; trial < 200; ++trial) {
    const int n = 3 + trial % 6;
    const int m = 1 + trial % std::min(n, 5);  // m ≤ n
    Eigen::MatrixXd J(m, n);
    for (int r = 0; r < m; ++r)
      for (int c = 0; c < n; ++c) J(r, c) = unit(rng);
    Eigen::MatrixXd A(n, n);
    for (int r = 0; r < n; ++r)
      for (int c = 0; c < n; ++c) A(r, c) = unit(rng);
    const Eigen::MatrixXd inverse_mass = A * A.transpose() + 0.1 * Eigen::MatrixXd::Identity(n, n);
    Eigen::VectorXd depth(m);
    for (int r = 0; r < m; ++r) depth[r] = 0.01 * unit(rng);
    Eigen::MatrixXd W = J * inverse_mass * J.transpose();
    W = (0.5 * (W + W.transpose())).eval();
    SCOPED_TRACE("trial " + std::to_string(trial));
    // m ≤ n and a positive-definite metric: W is positive definite, so the
    // LCP has exactly one solution and the active set must find it.
    expect_lcp(W, depth, separation_impulses(W, depth));
  }
}

// The sparse solve (active rows, split into W's components, rows joining
// when a push closes them) against the dense LCP on the same data: a long
// row of touching unit balls (tridiagonal W) with overlaps at a few places,
// some next to each other (one component), some far apart (separate ones),
// and depths of both signs elsewhere. W is positive definite, so both must
// give the unique solution.
TEST(Separation, SparseSolveMatchesTheDenseLcpOnARowOfBalls) {
  std::mt19937_64 rng(20261125);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  for (int trial = 0; trial < 50; ++trial) {
    const int balls = 5 + trial;
    const int m = balls - 1;
    Eigen::MatrixXd J = Eigen::MatrixXd::Zero(m, balls);
    for (int r = 0; r < m; ++r) {
      J(r, r) = -1.0;
      J(r, r + 1) = 1.0;
    }
    Eigen::VectorXd masses(balls);
    for (int b = 0; b < balls; ++b) masses[b] = 0.5 + unit(rng);
    const Eigen::MatrixXd inverse_mass = masses.cwiseInverse().asDiagonal();
    Eigen::VectorXd depth(m);
    // Mostly separated by up to 1 mm, every fourth row overlapping by up to 1 mm.
    for (int r = 0; r < m; ++r) depth[r] = (r % 4 == trial % 4 ? 1e-3 : -1e-3) * unit(rng);
    Eigen::MatrixXd W = J * inverse_mass * J.transpose();
    W = (0.5 * (W + W.transpose())).eval();
    SCOPED_TRACE("trial " + std::to_string(trial));
    const Eigen::VectorXd dense = separation_impulses(W, depth);
    const simpact::SparseColMatrix sparse_w = W.sparseView();
    const Eigen::VectorXd sparse = separation_impulses(sparse_w, depth);
    expect_lcp(W, depth, sparse);
    EXPECT_LE((sparse - dense).cwiseAbs().maxCoeff(), kLcpTolerance);
  }
}

// A push that closes a row that was not overlapping: that row must join
// (the LCP on the overlapping rows alone would leave it overlapping). Three
// balls, the middle one heavy: pushing the overlap of rows 0 apart moves
// ball 1 into ball 2 by more than their gap.
TEST(Separation, ARowThePushClosesJoinsTheSparseSolve) {
  Eigen::MatrixXd J(2, 3);
  J << -1, 1, 0,
        0, -1, 1;
  const Eigen::Vector3d inverse_masses(0.01, 1.0, 1.0);  // a heavy striker
  const Eigen::MatrixXd inverse_mass = inverse_masses.asDiagonal();
  const Eigen::Vector2d depth(0.01, -0.001);  // row 1 is 1 mm open
  const Eigen::MatrixXd W = J * inverse_mass * J.transpose();
  const simpact::SparseColMatrix sparse_w = W.sparseView();
  const Eigen::VectorXd mu = separation_impulses(sparse_w, depth);
  expect_lcp(W, depth, mu);
  EXPECT_GT(mu[1], 0.0);  // joined: the push closed it
}

/// A packed ball pit's overlaps (scenes::ball_pit: nearly dependent rows,
/// a lattice locked by its walls; every third row overlapping by up to
/// 1 mm, the rest open by up to 1 mm). Components above
/// kDenseSeparationRows go to the plastic law's sparse LCP solver; its push
/// must satisfy the LCP's own conditions, which characterise the least push
/// (unique in the kinetic metric) — μ ≥ 0, every overlap cleared, no row
/// pushed open that carries μ — to the solver's acceptance, 1e-9 of the
/// largest depth per row. (The dense path — Lemke, then its active-set
/// fallback — leaves up to 6e-6 of the depth overlapping on these pits.)
TEST(Separation, PackedPitIsClearedByTheLeastPush) {
  constexpr double kAcceptance = 1e-9;  // kSeparationConvergence: per row, relative to the largest depth
  for (const std::uint64_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    const simpact::ImpactProblem pit = simpact::scenes::ball_pit(4, 3, 0.0, 0.0, 1e-3, seed);
    const Eigen::Index m = pit.normals.rows();
    ASSERT_GT(m, simpact::internal::kDenseSeparationRows);
    std::mt19937_64 rng(seed);
    std::uniform_real_distribution<double> unit(0.0, 1.0);
    Eigen::VectorXd depth(m);
    for (Eigen::Index r = 0; r < m; ++r) depth[r] = (r % 3 == 0 ? 1e-3 : -1e-3) * unit(rng);
    const Eigen::MatrixXd J(pit.normals), inverse_mass(pit.inverse_mass);
    Eigen::MatrixXd W = J * inverse_mass * J.transpose();
    W = (0.5 * (W + W.transpose())).eval();
    const Eigen::VectorXd mu = separation_impulses(simpact::SparseColMatrix(W.sparseView()), depth);
    const Eigen::VectorXd left = W * mu - depth;  // how far each row is pushed open (< 0: overlap left)
    const double largest = depth.maxCoeff();
    for (Eigen::Index r = 0; r < m; ++r) {
      EXPECT_GE(mu[r], 0.0) << "row " << r;
      EXPECT_GE(left[r], -kAcceptance * largest) << "row " << r << " still overlaps";
      EXPECT_LE(std::min(mu[r] * W(r, r), std::abs(left[r])), kAcceptance * largest)
          << "row " << r << " pushed further than needed";
    }
    // The push the adapters apply is this μ's.
    const Eigen::VectorXd push = separation_displacement(pit.normals, pit.inverse_mass, depth);
    EXPECT_LE((push - inverse_mass * J.transpose() * mu).cwiseAbs().maxCoeff(), kAcceptance * largest);
  }
}

}  // namespace
