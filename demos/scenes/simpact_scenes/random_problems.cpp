#include "simpact_scenes/random_problems.h"

#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace simpact::scenes {

namespace {

constexpr double kTwoPi = 6.28318530717958647692;
/// Eigenvalues of a random M⁻¹ are log-uniform in [kMinEigen, kMaxEigen]:
/// a 100:1 spread of inverse masses exercises the metric without making the
/// tests' rounding tolerances depend on ill-conditioning.
constexpr double kMinEigen = 0.1;
constexpr double kMaxEigen = 10.0;
/// Fraction of entries of J set to zero.
constexpr double kNormalSparsity = 0.25;

Eigen::MatrixXd spd_block(int n, Random& rng, int zero_eigenvalues) {
  const Eigen::MatrixXd q = random_orthogonal(n, rng);
  Eigen::VectorXd eigen(n);
  for (int i = 0; i < n; ++i)
    eigen[i] = std::exp(rng.uniform(std::log(kMinEigen), std::log(kMaxEigen)));
  for (int i = 0; i < zero_eigenvalues; ++i) eigen[i] = 0.0;
  Eigen::MatrixXd a = q * eigen.asDiagonal() * q.transpose();
  return 0.5 * (a + a.transpose());  // exactly symmetric
}

/// `count` distinct indices of [0, n), in random order.
std::vector<int> random_subset(int n, int count, Random& rng) {
  std::vector<int> all(static_cast<std::size_t>(n));
  std::iota(all.begin(), all.end(), 0);
  for (int i = n - 1; i > 0; --i)
    std::swap(all[static_cast<std::size_t>(i)], all[static_cast<std::size_t>(rng.integer(0, i))]);
  all.resize(static_cast<std::size_t>(count));
  return all;
}

}  // namespace

double Random::uniform() { return static_cast<double>(engine_() >> 11) * 0x1.0p-53; }

double Random::uniform(double lo, double hi) { return lo + (hi - lo) * uniform(); }

int Random::integer(int lo, int hi) {
  if (lo > hi) throw std::invalid_argument("Random::integer: lo > hi");
  const std::uint64_t span = static_cast<std::uint64_t>(hi - lo) + 1;
  const std::uint64_t limit = UINT64_MAX - UINT64_MAX % span;  // reject the biased tail
  std::uint64_t x = engine_();
  while (x >= limit) x = engine_();
  return lo + static_cast<int>(x % span);
}

double Random::normal() {
  const double u1 = 1.0 - uniform();  // (0, 1]: log is finite
  const double u2 = uniform();
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(kTwoPi * u2);
}

bool Random::chance(double p) { return uniform() < p; }

Eigen::VectorXd Random::normal_vector(int size) {
  Eigen::VectorXd x(size);
  for (int i = 0; i < size; ++i) x[i] = normal();
  return x;
}

Eigen::MatrixXd Random::normal_matrix(int rows, int cols) {
  Eigen::MatrixXd a(rows, cols);
  for (int j = 0; j < cols; ++j)
    for (int i = 0; i < rows; ++i) a(i, j) = normal();
  return a;
}

InertiaKind random_inertia_kind(Random& rng) {
  return static_cast<InertiaKind>(rng.integer(0, kInertiaKinds - 1));
}

Eigen::MatrixXd random_orthogonal(int n, Random& rng) {
  const Eigen::HouseholderQR<Eigen::MatrixXd> qr(rng.normal_matrix(n, n));
  Eigen::MatrixXd q = qr.householderQ();
  // Sign fix (diag of R positive) makes the distribution uniform.
  for (int i = 0; i < n; ++i)
    if (qr.matrixQR()(i, i) < 0.0) q.col(i) = -q.col(i);
  return q;
}

Eigen::MatrixXd random_inverse_mass(int n, InertiaKind kind, Random& rng) {
  if (n < 1) throw std::invalid_argument("random_inverse_mass: n must be >= 1");
  if (n == 1 && kind != InertiaKind::kBlockDiagonal) kind = InertiaKind::kFullRank;
  switch (kind) {
    case InertiaKind::kFullRank:
      return spd_block(n, rng, 0);
    case InertiaKind::kRankDeficient:
      return spd_block(n, rng, rng.integer(1, n - 1));
    case InertiaKind::kBlockDiagonal: {
      Eigen::MatrixXd a = Eigen::MatrixXd::Zero(n, n);
      for (int start = 0; start < n;) {
        const int size = rng.integer(1, std::min(3, n - start));
        a.block(start, start, size, size) = spd_block(size, rng, 0);
        start += size;
      }
      return a;
    }
    case InertiaKind::kLockedDofs: {
      Eigen::MatrixXd a = spd_block(n, rng, 0);
      for (int dof : random_subset(n, rng.integer(1, n - 1), rng)) {
        a.row(dof).setZero();
        a.col(dof).setZero();
      }
      return a;
    }
  }
  throw std::invalid_argument("random_inverse_mass: unknown kind");
}

Eigen::MatrixXd random_normals(int m, int n, Random& rng) {
  Eigen::MatrixXd j(m, n);
  for (int i = 0; i < m; ++i) {
    for (int k = 0; k < n; ++k) j(i, k) = rng.chance(kNormalSparsity) ? 0.0 : rng.normal();
    if (j.row(i).cwiseAbs().maxCoeff() == 0.0) {
      const double magnitude = rng.uniform(0.5, 2.0);
      j(i, rng.integer(0, n - 1)) = rng.chance(0.5) ? magnitude : -magnitude;
    }
  }
  return j;
}

RandomProblem random_problem(int contacts, int dofs, InertiaKind kind, Random& rng) {
  RandomProblem out;
  out.kind = kind;
  out.inverse_mass = random_inverse_mass(dofs, kind, rng);
  out.normals = random_normals(contacts, dofs, rng);
  // p = r − Jᵀ μ with μ ≥ 0: u = J M⁻¹ r − W μ leans towards approaching.
  Eigen::VectorXd mu(contacts);
  for (int i = 0; i < contacts; ++i) mu[i] = rng.uniform(0.0, 2.0);
  out.momentum = rng.normal_vector(dofs) - out.normals.transpose() * mu;
  out.problem =
      ImpactProblem::from_dense(out.inverse_mass, out.normals, out.inverse_mass * out.momentum);
  return out;
}

}  // namespace simpact::scenes
