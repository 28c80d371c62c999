#include "core/separation.h"

#include "core/lcp.h"

#include <Eigen/QR>

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

Eigen::VectorXd separation_displacement(const Eigen::MatrixXd& normals,
                                        const Eigen::MatrixXd& inverse_mass,
                                        const Eigen::VectorXd& depth) {
  if (depth.size() == 0 || !(depth.maxCoeff() > 0.0)) return Eigen::VectorXd::Zero(inverse_mass.rows());
  const Eigen::MatrixXd response = inverse_mass * normals.transpose();  // n × m
  Eigen::MatrixXd W = normals * response;
  W = (0.5 * (W + W.transpose())).eval();
  return response * separation_impulses(W, depth);
}

}  // namespace simpact::internal
