#include "core/inertia.h"

#include <Eigen/Eigenvalues>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <sstream>

namespace simpact::internal {

namespace {

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) {
    int& p = parent[i];
    p = parent[p];  // path halving
    i = p;
  }
  return i;
}

[[noreturn]] void throw_indefinite(const std::vector<int>& dofs, double eigenvalue, double scale) {
  std::ostringstream os;
  os << "inverse_mass is not positive semi-definite: the block of DOFs {";
  for (size_t k = 0; k < dofs.size() && k < 8; ++k) os << (k ? "," : "") << dofs[k];
  if (dofs.size() > 8) os << ",...";
  os << "} has eigenvalue " << eigenvalue << " (largest magnitude " << scale << ")";
  throw InvalidProblem(os.str());
}

}  // namespace

void InertiaBlocks::analyze(const SparseColMatrix& inverse_mass, bool check_definiteness) {
  const int n = static_cast<int>(inverse_mass.rows());
  parent_.resize(n);
  std::iota(parent_.begin(), parent_.end(), 0);
  for (int col = 0; col < inverse_mass.outerSize(); ++col)
    for (SparseColMatrix::InnerIterator it(inverse_mass, col); it; ++it) {
      if (it.value() == 0.0) continue;
      const int a = find_root(parent_, static_cast<int>(it.row()));
      const int b = find_root(parent_, col);
      if (a != b) parent_[std::max(a, b)] = std::min(a, b);
    }

  // Group DOFs by root with a counting sort, so blocks are ordered by their
  // smallest DOF and DOFs ascend within a block (deterministic layout).
  std::vector<int>& block_of = block_of_;
  std::vector<int>& root_block = root_block_;
  block_of.resize(n);
  root_block.assign(n, -1);
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const int r = find_root(parent_, i);
    if (root_block[r] < 0) root_block[r] = count++;
    block_of[i] = root_block[r];
  }
  block_start_.assign(count + 1, 0);
  for (int i = 0; i < n; ++i) ++block_start_[block_of[i] + 1];
  std::partial_sum(block_start_.begin(), block_start_.end(), block_start_.begin());
  dofs_.resize(n);
  std::vector<int>& fill = fill_;
  fill.assign(block_start_.begin(), block_start_.end() - 1);
  for (int i = 0; i < n; ++i) dofs_[fill[block_of[i]]++] = i;

  mass_start_.assign(count + 1, 0);
  for (int b = 0; b < count; ++b) {
    const int size = block_start_[b + 1] - block_start_[b];
    mass_start_[b + 1] = mass_start_[b] + size * size;
  }
  mass_.assign(mass_start_.back(), 0.0);

  Eigen::MatrixXd& block = block_;
  for (int b = 0; b < count; ++b) {
    const int begin = block_start_[b];
    const int size = block_start_[b + 1] - begin;
    double* out = mass_.data() + mass_start_[b];
    if (size == 1) {
      const int d = dofs_[begin];
      const double x = inverse_mass.coeff(d, d);
      if (check_definiteness && x < 0.0) throw_indefinite({d}, x, std::abs(x));
      out[0] = x > 0.0 ? 1.0 / x : 0.0;  // exact zero: infinitely massive DOF
      continue;
    }
    block.resize(size, size);
    for (int c = 0; c < size; ++c)
      for (int r = 0; r < size; ++r)
        block(r, c) = inverse_mass.coeff(dofs_[(begin + r)],
                                         dofs_[(begin + c)]);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(block);
    const Eigen::VectorXd& ev = eig.eigenvalues();  // ascending
    const double scale = ev.cwiseAbs().maxCoeff();
    if (check_definiteness && ev[0] < -kDefinitenessTolerance * scale)
      throw_indefinite(std::vector<int>(dofs_.begin() + begin, dofs_.begin() + begin + size), ev[0],
                       scale);
    Eigen::Map<Eigen::MatrixXd> mass(out, size, size);
    mass.setZero();
    for (int k = 0; k < size; ++k)
      if (ev[k] > kRankTolerance * scale)
        mass.noalias() += (1.0 / ev[k]) * eig.eigenvectors().col(k) * eig.eigenvectors().col(k).transpose();
  }
}

double InertiaBlocks::kinetic_energy(const Eigen::VectorXd& v) const {
  double twice = 0.0;
  for (int b = 0; b + 1 < static_cast<int>(block_start_.size()); ++b) {
    const int begin = block_start_[b];
    const int size = block_start_[b + 1] - begin;
    const double* mass = mass_.data() + mass_start_[b];
    for (int c = 0; c < size; ++c) {
      const double vc = v[dofs_[(begin + c)]];
      if (vc == 0.0) continue;
      for (int r = 0; r < size; ++r) twice += v[dofs_[(begin + r)]] * mass[c * size + r] * vc;
    }
  }
  return 0.5 * twice;
}

}  // namespace simpact::internal
