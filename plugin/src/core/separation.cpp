#include "core/separation.h"

#include "core/active_set_lcp.h"
#include "core/lcp.h"

#include <Eigen/QR>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <vector>

namespace simpact::internal {

namespace {

// The active-set iteration: the fallback when the LCP has no solution
// (overlaps that no push can clear, e.g. a body wedged between two fixed
// walls) or Lemke fails; its result is clamped to μ ≥ 0.
Eigen::VectorXd active_set_impulses(const Eigen::MatrixXd& W, const Eigen::VectorXd& depth,
                                    double largest) {
  const Eigen::Index m = depth.size();
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(m);
  std::vector<char> active(static_cast<size_t>(m));
  for (Eigen::Index r = 0; r < m; ++r) active[static_cast<size_t>(r)] = depth[r] > 0.0;
  std::vector<Eigen::Index> set;
  for (int pass = 0; pass < kSeparationIterations; ++pass) {
    set.clear();
    for (Eigen::Index r = 0; r < m; ++r)
      if (active[static_cast<size_t>(r)]) set.push_back(r);
    const Eigen::Index a = static_cast<Eigen::Index>(set.size());
    Eigen::MatrixXd Waa(a, a);
    Eigen::VectorXd da(a);
    for (Eigen::Index i = 0; i < a; ++i) {
      da[i] = depth[set[static_cast<size_t>(i)]];
      for (Eigen::Index j = 0; j < a; ++j)
        Waa(i, j) = W(set[static_cast<size_t>(i)], set[static_cast<size_t>(j)]);
    }
    const Eigen::VectorXd ma = a > 0 ? Eigen::VectorXd(Waa.completeOrthogonalDecomposition().solve(da))
                                     : Eigen::VectorXd();
    mu.setZero();
    for (Eigen::Index i = 0; i < a; ++i) mu[set[static_cast<size_t>(i)]] = ma[i];
    bool changed = false;
    for (Eigen::Index i = 0; i < a; ++i)
      if (ma[i] < 0.0) {
        active[static_cast<size_t>(set[static_cast<size_t>(i)])] = 0;
        changed = true;
      }
    if (changed) continue;
    const Eigen::VectorXd left = depth - W * mu;
    for (Eigen::Index r = 0; r < m; ++r)
      if (!active[static_cast<size_t>(r)] && left[r] > kSeparationConvergence * largest) {
        active[static_cast<size_t>(r)] = 1;
        changed = true;
      }
    if (!changed) break;
  }
  return mu.cwiseMax(0.0);
}

// The LCP (W, −d) on one large component of a sparse W by the sparse LCP
// solver of the plastic law (active_set_lcp.h: block principal pivoting,
// then an interior point, every try one sparse LDLᵀ; dependent rows
// regularised), accepted at kSeparationConvergence in the units of the
// largest depth (rows) and of that depth over W_rr (pushes). Returns false
// when it finds no such solution; the caller then uses the dense LCP.
// `rows` are the component's rows in W, `mu` gets their μ.
bool sparse_active_set(const SparseColMatrix& W, const std::vector<Eigen::Index>& rows,
                       const Eigen::VectorXd& depth, double largest, Eigen::VectorXd& mu) {
  const Eigen::Index a = static_cast<Eigen::Index>(rows.size());
  Eigen::VectorXd q(a), w_scale = Eigen::VectorXd::Constant(a, largest), z_scale = w_scale;
  // W restricted to the component, in its local numbering.
  std::vector<Eigen::Triplet<double>> entries;
  for (Eigen::Index j = 0; j < a; ++j) {
    const Eigen::Index column = rows[static_cast<size_t>(j)];
    q[j] = -depth[column];
    for (SparseColMatrix::InnerIterator it(W, column); it; ++it) {
      if (it.row() == column) z_scale[j] = it.value() > 0.0 ? largest / it.value() : largest;
      const auto found = std::lower_bound(rows.begin(), rows.end(), it.row());
      if (found != rows.end() && *found == it.row())
        entries.emplace_back(static_cast<Eigen::Index>(found - rows.begin()), j, it.value());
    }
  }
  SparseColMatrix local(a, a);
  local.setFromTriplets(entries.begin(), entries.end());
  const LcpResult lcp =
      solve_lcp_active_set(local, q, w_scale, z_scale, kSeparationConvergence, nullptr, kSparseSeparationFlopRatio);
  if (lcp.status != LcpStatus::kSolved) return false;
  for (Eigen::Index i = 0; i < a; ++i) mu[rows[static_cast<size_t>(i)]] = lcp.z[i];
  return true;
}

}  // namespace

Eigen::VectorXd separation_impulses(const Eigen::MatrixXd& W, const Eigen::VectorXd& depth) {
  const Eigen::Index m = depth.size();
  if (m == 0) return Eigen::VectorXd::Zero(0);
  const double largest = depth.maxCoeff();
  if (!(largest > 0.0)) return Eigen::VectorXd::Zero(m);
  const LcpResult lcp = solve_psd_lcp(W, -depth);
  if (lcp.status == LcpStatus::kSolved && lcp.z.allFinite()) return lcp.z.cwiseMax(0.0);
  return active_set_impulses(W, depth, largest);
}

Eigen::VectorXd separation_impulses(const SparseColMatrix& W, const Eigen::VectorXd& depth) {
  const Eigen::Index m = depth.size();
  Eigen::VectorXd mu = Eigen::VectorXd::Zero(m);
  if (m == 0) return mu;
  const double largest = depth.maxCoeff();
  if (!(largest > 0.0)) return mu;
  std::vector<char> active(static_cast<size_t>(m));
  for (Eigen::Index r = 0; r < m; ++r) active[static_cast<size_t>(r)] = depth[r] > 0.0;
  std::vector<int> parent(static_cast<size_t>(m));
  std::vector<std::vector<Eigen::Index>> components;
  std::vector<int> component_of(static_cast<size_t>(m));
  const auto root = [&](int i) {
    while (parent[static_cast<size_t>(i)] != i)
      i = parent[static_cast<size_t>(i)] = parent[static_cast<size_t>(parent[static_cast<size_t>(i)])];
    return i;
  };
  for (Eigen::Index round = 0; round <= m; ++round) {
    // Components of W on the active rows (union–find, lower index as root,
    // so the split and its order depend on (W, d) alone).
    for (Eigen::Index r = 0; r < m; ++r) parent[static_cast<size_t>(r)] = static_cast<int>(r);
    for (Eigen::Index c = 0; c < W.outerSize(); ++c) {
      if (!active[static_cast<size_t>(c)]) continue;
      for (SparseColMatrix::InnerIterator it(W, c); it; ++it) {
        if (it.value() == 0.0 || !active[static_cast<size_t>(it.row())]) continue;
        const int a = root(static_cast<int>(it.row())), b = root(static_cast<int>(c));
        if (a != b) parent[static_cast<size_t>(std::max(a, b))] = std::min(a, b);
      }
    }
    components.clear();
    for (Eigen::Index r = 0; r < m; ++r) {
      if (!active[static_cast<size_t>(r)]) continue;
      const int top = root(static_cast<int>(r));
      if (top == r) {
        component_of[static_cast<size_t>(r)] = static_cast<int>(components.size());
        components.emplace_back();
      }
      components[static_cast<size_t>(component_of[static_cast<size_t>(top)])].push_back(r);
    }
    mu.setZero();
    for (const std::vector<Eigen::Index>& rows : components) {
      const Eigen::Index a = static_cast<Eigen::Index>(rows.size());
      if (a > kDenseSeparationRows && sparse_active_set(W, rows, depth, largest, mu)) continue;
      Eigen::MatrixXd Waa(a, a);
      Eigen::VectorXd da(a);
      for (Eigen::Index j = 0; j < a; ++j) {
        da[j] = depth[rows[static_cast<size_t>(j)]];
        for (Eigen::Index i = 0; i < a; ++i)
          Waa(i, j) = W.coeff(rows[static_cast<size_t>(i)], rows[static_cast<size_t>(j)]);
      }
      const Eigen::VectorXd ma = separation_impulses(Waa, da);
      for (Eigen::Index j = 0; j < a; ++j) mu[rows[static_cast<size_t>(j)]] = ma[j];
    }
    const Eigen::VectorXd left = depth - W * mu;
    bool joined = false;
    for (Eigen::Index r = 0; r < m; ++r)
      if (!active[static_cast<size_t>(r)] && left[r] > kSeparationConvergence * largest) {
        active[static_cast<size_t>(r)] = 1;
        joined = true;
      }
    if (!joined) break;
  }
  return mu;
}

Eigen::VectorXd separation_displacement(const SparseRowMatrix& normals,
                                        const SparseColMatrix& inverse_mass,
                                        const Eigen::VectorXd& depth) {
  if (depth.size() == 0 || !(depth.maxCoeff() > 0.0)) return Eigen::VectorXd::Zero(inverse_mass.rows());
  const SparseColMatrix transposed = normals.transpose();
  const SparseColMatrix response = inverse_mass * transposed;  // n × m
  const SparseColMatrix product = normals * response;
  const SparseColMatrix W = 0.5 * (product + SparseColMatrix(product.transpose()));
  return response * separation_impulses(W, depth);
}

}  // namespace simpact::internal
