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

// Connected blocks of M⁻¹'s sparsity pattern, grouped with a counting sort
// so that blocks are ordered by their smallest DOF and DOFs ascend within a
// block (deterministic layout): block b holds dofs[block_start[b],
// block_start[b + 1]). The other vectors are scratch. Returns the count.
int group_blocks(const SparseColMatrix& inverse_mass, std::vector<int>& parent, std::vector<int>& block_of,
                 std::vector<int>& root_block, std::vector<int>& fill, std::vector<int>& block_start,
                 std::vector<int>& dofs) {
  const int n = static_cast<int>(inverse_mass.rows());
  parent.resize(n);
  std::iota(parent.begin(), parent.end(), 0);
  for (int col = 0; col < inverse_mass.outerSize(); ++col)
    for (SparseColMatrix::InnerIterator it(inverse_mass, col); it; ++it) {
      if (it.value() == 0.0) continue;
      const int a = find_root(parent, static_cast<int>(it.row()));
      const int b = find_root(parent, col);
      if (a != b) parent[std::max(a, b)] = std::min(a, b);
    }
  block_of.resize(n);
  root_block.assign(n, -1);
  int count = 0;
  for (int i = 0; i < n; ++i) {
    const int r = find_root(parent, i);
    if (root_block[r] < 0) root_block[r] = count++;
    block_of[i] = root_block[r];
  }
  block_start.assign(count + 1, 0);
  for (int i = 0; i < n; ++i) ++block_start[block_of[i] + 1];
  std::partial_sum(block_start.begin(), block_start.end(), block_start.begin());
  dofs.resize(n);
  fill.assign(block_start.begin(), block_start.end() - 1);
  for (int i = 0; i < n; ++i) dofs[fill[block_of[i]]++] = i;
  return count;
}

// The dense block of M⁻¹ on dofs[begin, begin + size).
void fill_block(const SparseColMatrix& inverse_mass, const std::vector<int>& dofs, int begin, int size,
                Eigen::MatrixXd& block) {
  block.resize(size, size);
  for (int c = 0; c < size; ++c)
    for (int r = 0; r < size; ++r) block(r, c) = inverse_mass.coeff(dofs[begin + r], dofs[begin + c]);
}

}  // namespace

void InertiaBlocks::analyze(const SparseColMatrix& inverse_mass, bool check_definiteness) {
  const int count = group_blocks(inverse_mass, parent_, block_of_, root_block_, fill_, block_start_, dofs_);

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
    fill_block(inverse_mass, dofs_, begin, size, block);
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

int largest_block(const SparseColMatrix& inverse_mass) {
  std::vector<int> parent, block_of, root_block, fill, block_start, dofs;
  const int count = group_blocks(inverse_mass, parent, block_of, root_block, fill, block_start, dofs);
  int largest = 0;
  for (int b = 0; b < count; ++b) largest = std::max(largest, block_start[b + 1] - block_start[b]);
  return largest;
}

SparseColMatrix metric_root(const SparseColMatrix& inverse_mass) {
  std::vector<int> parent, block_of, root_block, fill, block_start, dofs;
  const int count = group_blocks(inverse_mass, parent, block_of, root_block, fill, block_start, dofs);
  std::vector<Eigen::Triplet<double>> entries;
  int columns = 0;
  Eigen::MatrixXd block;
  for (int b = 0; b < count; ++b) {
    const int begin = block_start[b], size = block_start[b + 1] - begin;
    fill_block(inverse_mass, dofs, begin, size, block);
    Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(block);
    const Eigen::VectorXd& ev = eig.eigenvalues();
    const double scale = ev.cwiseAbs().maxCoeff();
    for (int k = 0; k < size; ++k) {
      if (!(ev[k] > kRankTolerance * scale)) continue;
      const double root = std::sqrt(ev[k]);
      for (int r = 0; r < size; ++r) {
        const double v = eig.eigenvectors()(r, k) * root;
        if (v != 0.0) entries.emplace_back(dofs[begin + r], columns, v);
      }
      ++columns;
    }
  }
  SparseColMatrix out(static_cast<Eigen::Index>(dofs.size()), columns);
  out.setFromTriplets(entries.begin(), entries.end());
  return out;
}

}  // namespace simpact::internal
