#include "core/lcp.h"

#include <simpact/propagative.h>

#include <Eigen/Cholesky>
#include <Eigen/QR>

#include <algorithm>
#include <cmath>
#include <memory>
#include <sstream>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact::internal {

std::string short_number(double x) {
  std::ostringstream text;
  text.precision(3);
  text << x;
  return text.str();
}

void require_plastic_residual_tolerance(double value, const char* owner) {
  if (value >= kMinPlasticResidualTolerance && value <= kMaxPlasticResidualTolerance) return;
  throw std::invalid_argument(std::string("simpact::") + owner + ": plastic_residual_tolerance must be in [" +
                              short_number(kMinPlasticResidualTolerance) + ", " +
                              short_number(kMaxPlasticResidualTolerance) + "], got " + short_number(value));
}

// Condensed (Tucker) tableau: one column per NONBASIC variable plus the
// right-hand side; row i reads x_B(i) + Σ_{j nonbasic} T_ij x_j = rhs_i.
// Basic columns are unit vectors, so storing them (the full m × (2m + 2)
// tableau) would double every pivot's work for nothing. Variables: w_i = i,
// z_i = m + i, the artificial z0 = 2m. A pivot swaps the entering and
// leaving variables between the basis and the entering column's slot.
// B⁻¹, which the lexicographic rule compares, is the w columns: stored for
// nonbasic w_k, the unit vector at w_k's row for basic ones. Row-major, so
// row updates are contiguous; reset() reuses the storage when the size
// repeats (the Routh sampler solves thousands of same-size LCPs).
class Tableau {
 public:
  // minus_m: −M row-major (m × m); mmax = max |M_ij|.
  void reset(const std::vector<double>& minus_m, double mmax, const Eigen::VectorXd& q,
             const Eigen::VectorXd& covering) {
    m_ = static_cast<int>(q.size());
    width_ = m_ + 2;
    t_.resize(static_cast<size_t>(m_) * static_cast<size_t>(width_));
    basis_.resize(static_cast<size_t>(m_));
    var_slot_.assign(static_cast<size_t>(2 * m_ + 1), -1);
    var_row_.assign(static_cast<size_t>(2 * m_ + 1), -1);
    for (int i = 0; i < m_; ++i) {
      double* r = row_ptr(i);
      std::copy_n(minus_m.data() + static_cast<size_t>(i) * static_cast<size_t>(m_), m_, r);
      r[m_] = covering.size() == 0 ? -1.0 : -covering[i];
      r[rhs_slot()] = q[i];
      set_basic(i, i);
    }
    for (int j = 0; j <= m_; ++j) set_slot(j, m_ + j);  // z_0..z_{m−1}, z0
    // Ties are judged relative to the natural size of z, |q| / |M|, so the
    // method is invariant to scaling q (a 1 mm/s impact is a 1 m/s impact
    // scaled by 1e-3); an absolute floor of 1 made every ratio of a small
    // problem a "tie".
    ratio_floor_ = std::max(q.cwiseAbs().maxCoeff(), 1e-300) / std::max(mmax, 1e-300);
  }

  int z0() const { return 2 * m_; }
  int complement(int var) const { return var < m_ ? var + m_ : var - m_; }
  int basic(int row) const { return basis_[static_cast<size_t>(row)]; }

  // `var` (nonbasic) enters at `row`. The condensed tableau of the Routh
  // and Anitescu–Potra LCPs fills in within a few pivots, so row updates run
  // over the whole width (plain loops on restrict pointers, which the
  // compiler vectorizes; 5 % faster than Eigen maps of dynamic size here);
  // rows with a zero entry in the entering column are skipped.
  void pivot(int row, int var) {
    const int s = var_slot_[static_cast<size_t>(var)];
    const int leaving = basic(row);
    double* __restrict pr = row_ptr(row);
    const double inverse = 1.0 / pr[s];
    pr[s] = 0.0;  // so the row updates below leave column s alone
    for (int j = 0; j < width_; ++j) pr[j] *= inverse;
    for (int i = 0; i < m_; ++i) {
      if (i == row) continue;
      double* __restrict ri = row_ptr(i);
      const double f = ri[s];
      if (f == 0.0) continue;
      for (int j = 0; j < width_; ++j) ri[j] -= f * pr[j];
      ri[s] = -f * inverse;
    }
    pr[s] = inverse;
    set_basic(row, var);
    set_slot(s, leaving);
  }

  // Minimum-ratio row for an entering variable, lexicographic on ties; -1 if
  // its column has no positive entry (ray). If z0's row is among the tied
  // minimum rows it leaves: that ends Lemke at a solution at once. In
  // degenerate problems (the Routh/Anitescu–Potra LCPs at sticking contacts:
  // many zero rows) z0 can otherwise reach 0 while staying basic, and the
  // path walks on to a secondary ray although it already holds a solution.
  int ratio_test(int var, const LemkeParameters& p) const {
    const int col = var_slot_[static_cast<size_t>(var)];
    double scale = 0.0;
    for (int i = 0; i < m_; ++i) scale = std::max(scale, std::abs(at(i, col)));
    const double eps = p.pivot_tolerance * std::max(scale, 1e-300);
    int best = -1;
    double best_ratio = 0.0;
    auto tied = [&](double ratio) {
      return ratio <= best_ratio + p.tie_tolerance * std::max(ratio_floor_, std::abs(best_ratio));
    };
    for (int i = 0; i < m_; ++i) {
      const double a = at(i, col);
      if (a <= eps) continue;
      const double ratio = at(i, rhs_slot()) / a;
      if (best < 0 || ratio < best_ratio - p.tie_tolerance * std::max(ratio_floor_, std::abs(best_ratio))) {
        best = i;
        best_ratio = ratio;
      } else if (tied(ratio) && lexicographically_smaller(i, best, col)) {
        best = i;
        best_ratio = std::min(best_ratio, ratio);
      }
    }
    if (best >= 0 && basic(best) != z0()) {
      const int i = var_row_[static_cast<size_t>(z0())];
      if (i >= 0) {
        const double a = at(i, col);
        if (a > eps && tied(at(i, rhs_slot()) / a)) return i;
      }
    }
    return best;
  }

  /// Row of z0 while it is basic, else −1.
  int z0_row() const { return var_row_[static_cast<size_t>(z0())]; }

  void z(Eigen::VectorXd& out) const {
    out.setZero(m_);
    for (int i = 0; i < m_; ++i) {
      const int var = basic(i);
      if (var >= m_ && var < 2 * m_) out[var - m_] = std::max(0.0, at(i, rhs_slot()));
    }
  }

  double rhs_at(int row) const { return at(row, rhs_slot()); }

 private:
  // Entry (row, w_k) of B⁻¹.
  double inverse_basis(int row, int k) const {
    const int slot = var_slot_[static_cast<size_t>(k)];
    if (slot >= 0) return at(row, slot);
    return var_row_[static_cast<size_t>(k)] == row ? 1.0 : 0.0;
  }

  bool lexicographically_smaller(int a, int b, int col) const {
    const double pa = at(a, col), pb = at(b, col);
    for (int k = 0; k < m_; ++k) {
      const double va = inverse_basis(a, k) / pa, vb = inverse_basis(b, k) / pb;
      if (va < vb) return true;
      if (va > vb) return false;
    }
    return a < b;
  }

  int rhs_slot() const { return m_ + 1; }
  void set_basic(int row, int var) {
    basis_[static_cast<size_t>(row)] = var;
    var_row_[static_cast<size_t>(var)] = row;
    var_slot_[static_cast<size_t>(var)] = -1;
  }
  void set_slot(int slot, int var) {
    var_slot_[static_cast<size_t>(var)] = slot;
    var_row_[static_cast<size_t>(var)] = -1;
  }
  double* row_ptr(int i) { return t_.data() + static_cast<size_t>(i) * static_cast<size_t>(width_); }
  double at(int i, int j) const {
    return t_[static_cast<size_t>(i) * static_cast<size_t>(width_) + static_cast<size_t>(j)];
  }

  int m_ = 0, width_ = 2;
  double ratio_floor_ = 1.0;
  std::vector<double> t_;       // row-major m × (m + 2): m + 1 nonbasic slots, rhs
  std::vector<int> basis_;      // row → basic variable
  std::vector<int> var_slot_;   // variable → slot, −1 if basic
  std::vector<int> var_row_;    // variable → row, −1 if nonbasic
};

double scaled_violation(const Eigen::VectorXd& z, const Eigen::VectorXd& w, const Eigen::VectorXd& w_scale,
                        const Eigen::VectorXd& z_scale, Eigen::Index* where) {
  double worst = 0.0;
  Eigen::Index at = 0;
  for (Eigen::Index i = 0; i < z.size(); ++i) {
    const double wi = w[i] / w_scale[i];
    const double zi = z[i] / z_scale[i];
    const double violation = std::max(-wi, std::min(std::abs(zi), std::abs(wi)));
    if (!(violation <= worst)) {  // also catches NaN
      worst = violation;
      at = i;
    }
  }
  if (where) *where = at;
  return worst;
}

namespace {

// Fills w = M z + q and downgrades a kSolved result whose residual is above
// residual_tolerance × the problem's scale max(|q|, |M| z). `abs_m` = |M|;
// `magnitude` is scratch. Allocates nothing once sized: the Routh sampler
// runs it per increment.
void check_solution(const Eigen::MatrixXd& M, const Eigen::MatrixXd& abs_m,
                    const Eigen::VectorXd& q, const LemkeParameters& parameters,
                    Eigen::VectorXd& magnitude, LcpResult& result) {
  result.w = q;
  result.w.noalias() += M * result.z;
  const Eigen::Index m = q.size();
  if (parameters.w_scale.size() == m && parameters.z_scale.size() == m && m > 0) {
    Eigen::Index where = 0;
    const double worst = scaled_violation(result.z, result.w, parameters.w_scale, parameters.z_scale, &where);
    if (!(worst <= parameters.residual_tolerance)) {
      result.status = LcpStatus::kInaccurate;
      result.message = "LCP solution violates w >= 0 or complementarity in row " +
                       std::to_string(where) + " by " + short_number(worst) +
                       " of the data's scale";
    }
    return;
  }
  magnitude.noalias() = abs_m * result.z;
  const double scale = std::max({q.cwiseAbs().maxCoeff(), magnitude.maxCoeff(), 1e-300});
  const double zmax = std::max(result.z.maxCoeff(), 1e-300);
  const double infeasibility = std::max(0.0, -result.w.minCoeff());
  const double complementarity = result.z.cwiseProduct(result.w).cwiseAbs().maxCoeff() / zmax;
  const double worst = std::max(infeasibility, complementarity);
  if (worst > parameters.residual_tolerance * scale) {
    result.status = LcpStatus::kInaccurate;
    result.message = "LCP solution violates w >= 0 or complementarity by " +
                     short_number(worst) + " (scale " + short_number(scale) + ")";
  }
}

void check_solution(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                    const LemkeParameters& parameters, LcpResult& result) {
  Eigen::VectorXd magnitude(q.size());
  check_solution(M, M.cwiseAbs(), q, parameters, magnitude, result);
}

// The principal subsystem M_AA z_A = −q_A of the variables in `active`,
// solved with `solve`; the other entries of z are zero.
template <typename Solve>
Eigen::VectorXd solve_principal(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                                const std::vector<char>& active, Solve&& solve) {
  const int m = static_cast<int>(q.size());
  std::vector<int> idx;
  for (int i = 0; i < m; ++i)
    if (active[i]) idx.push_back(i);
  const int k = static_cast<int>(idx.size());
  Eigen::VectorXd z = Eigen::VectorXd::Zero(m);
  if (k == 0) return z;
  Eigen::MatrixXd maa(k, k);
  Eigen::VectorXd qa(k);
  for (int a = 0; a < k; ++a) {
    qa[a] = q[idx[a]];
    for (int b = 0; b < k; ++b) maa(a, b) = M(idx[a], idx[b]);
  }
  const Eigen::VectorXd za = solve(maa, qa);
  for (int a = 0; a < k; ++a) z[idx[a]] = za[a];
  return z;
}

// Murty's least-index method: the complementary basis is the set `active`
// of variables with z > 0; each iteration re-solves it from scratch (no
// tableau drift) and flips the lowest-index sign violation. Finite for
// P-matrices.
bool murty_least_index(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, int max_iterations,
                       std::vector<char>& active, Eigen::VectorXd& z) {
  const int m = static_cast<int>(q.size());
  active.assign(m, 0);
  // Sign tests ignore violations at rounding level (~1e-16 of the data);
  // 1e-13 keeps the least-index rule from chasing them forever.
  const double slack = 1e-13 * std::max(q.cwiseAbs().maxCoeff(), 1e-300);
  auto ldlt = [](const Eigen::MatrixXd& a, const Eigen::VectorXd& b) -> Eigen::VectorXd {
    return a.ldlt().solve(-b);
  };
  for (int iteration = 0; iteration < max_iterations; ++iteration) {
    z = solve_principal(M, q, active, ldlt);
    const Eigen::VectorXd w = M * z + q;
    int flip = -1;
    for (int i = 0; i < m && flip < 0; ++i)
      if (active[i] ? z[i] < -slack : w[i] < -slack) flip = i;
    if (flip < 0) return true;
    active[flip] = !active[flip];
  }
  return false;
}

}  // namespace

LcpResult solve_psd_lcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& q,
                        const LemkeParameters& parameters) {
  LcpResult lemke = solve_lcp_lemke(W, q, parameters);
  if (lemke.status == LcpStatus::kSolved) return lemke;

  const int m = static_cast<int>(q.size());
  // ε makes W + εI a P-matrix while moving the solution by ~ε|z|; 1e-11 of
  // the largest diagonal stays well above rounding in W (~1e-16 relative)
  // and well inside the residual tolerance, and the polish removes it.
  const double epsilon = 1e-11 * std::max(W.diagonal().maxCoeff(), 1e-300);
  const Eigen::MatrixXd regularized = W + epsilon * Eigen::MatrixXd::Identity(m, m);
  // Lemke again on the P-matrix W + εI first (O(m) pivots, no degenerate
  // ties from dependent contacts), then least-index principal pivoting:
  // finite for P-matrices but exponential in the worst case at O(m³) per
  // iteration, so its budget is 20 (m + 5)² iterations up to 24 contacts
  // (cheap there) and 10 (m + 5) beyond. Each candidate active set is
  // polished on the exact W; the first that passes the residual check wins.
  auto min_norm = [](const Eigen::MatrixXd& a, const Eigen::VectorXd& b) -> Eigen::VectorXd {
    return a.completeOrthogonalDecomposition().solve(-b);
  };
  auto accept = [&](const std::vector<char>& set, const Eigen::VectorXd& raw, LcpResult& out) {
    for (const Eigen::VectorXd& candidate :
         {Eigen::VectorXd(solve_principal(W, q, set, min_norm)), raw}) {
      out = LcpResult{};
      out.pivots = lemke.pivots;
      out.z = candidate.cwiseMax(0.0);
      check_solution(W, q, parameters, out);
      if (out.status == LcpStatus::kSolved) return true;
    }
    return false;
  };
  LcpResult accepted;
  const LcpResult relemke = solve_lcp_lemke(regularized, q, parameters);
  if (relemke.status == LcpStatus::kSolved || relemke.status == LcpStatus::kInaccurate) {
    std::vector<char> active(m, 0);
    for (int i = 0; i < m; ++i) active[i] = relemke.z[i] > 0.0;
    if (accept(active, relemke.z, accepted)) return accepted;
  }
  std::vector<char> active;
  Eigen::VectorXd regularized_z;
  const int budget = m <= 24 ? 20 * (m + 5) * (m + 5) : 10 * (m + 5);
  if (murty_least_index(regularized, q, budget, active, regularized_z) &&
      accept(active, regularized_z, accepted))
    return accepted;
  lemke.message += "; principal pivoting on the regularized problem did not yield an accurate "
                   "solution either";
  if (lemke.status != LcpStatus::kRayTermination) lemke.status = LcpStatus::kInaccurate;
  return lemke;
}

struct LemkeSolver::Scratch {
  Tableau tableau;
  Eigen::MatrixXd m;              // M of set_matrix
  Eigen::MatrixXd abs_m;          // |M|, for the residual's scale
  std::vector<double> minus_m;    // −M row-major: the tableau's initial block
  double mmax = 0.0;              // max |M_ij|
  Eigen::VectorXd magnitude;      // |M| z
};

LemkeSolver::LemkeSolver() : scratch_(std::make_unique<Scratch>()) {}
LemkeSolver::~LemkeSolver() = default;

LcpResult solve_lcp_lemke(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                          const LemkeParameters& parameters) {
  LemkeSolver solver;
  LcpResult result;
  solver.solve(M, q, parameters, result);
  return result;
}

void LemkeSolver::set_matrix(const Eigen::MatrixXd& M) {
  Scratch& s = *scratch_;
  s.m = M;
  s.abs_m = M.cwiseAbs();
  s.mmax = M.size() > 0 ? s.abs_m.maxCoeff() : 1.0;
  const Eigen::Index m = M.rows();
  s.minus_m.resize(static_cast<size_t>(m * m));
  for (Eigen::Index i = 0; i < m; ++i)
    for (Eigen::Index j = 0; j < m; ++j) s.minus_m[static_cast<size_t>(i * m + j)] = -M(i, j);
}

void LemkeSolver::solve(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                        const LemkeParameters& parameters, LcpResult& result) {
  set_matrix(M);
  solve(q, parameters, result);
}

void LemkeSolver::solve(const Eigen::VectorXd& q, const LemkeParameters& parameters,
                        LcpResult& result) {
  const Scratch& s = *scratch_;
  const int m = static_cast<int>(q.size());
  if (s.m.rows() != m || s.m.cols() != m)
    throw std::invalid_argument("LemkeSolver: q has " + std::to_string(m) +
                                " entries but the matrix of set_matrix is " +
                                std::to_string(s.m.rows()) + " x " + std::to_string(s.m.cols()));
  if (parameters.retries < 0)
    throw std::invalid_argument("Lemke retries " + std::to_string(parameters.retries) +
                                " must be >= 0");
  run(q, parameters, result);
  if (result.status == LcpStatus::kSolved || parameters.covering.size() != 0) return;
  // Large, highly degenerate LCPs (dozens of redundant contacts) can lose a
  // Lemke path to rounding: a near-tie resolved within tie_tolerance, times
  // a large column entry, leaves a basic variable negative (seen: 1e-4 of
  // the data with 32 stacked-box contacts). Another covering vector starts
  // another path through other ties; on 300 falling-box-stack samples with
  // 32-48 contacts, failures fell from 74 to 1 with two alternatives. Both
  // are fixed, so the result stays a function of (M, q).
  const LcpResult first = result;
  int pivots = result.pivots;
  for (int k = 0; k < parameters.retries; ++k) {
    LemkeParameters alternative = parameters;
    alternative.covering.resize(m);
    for (int i = 0; i < m; ++i) {
      const double t = static_cast<double>(i) / m;
      alternative.covering[i] = k % 2 == 0 ? 1.0 + t : 2.0 - t;
    }
    run(q, alternative, result);
    pivots += result.pivots;
    result.pivots = pivots;
    if (result.status == LcpStatus::kSolved) return;
  }
  result = first;
  result.pivots = pivots;
  if (parameters.retries > 0)
    result.message += " (also with " + std::to_string(parameters.retries) +
                      " other covering vectors)";
}

void LemkeSolver::run(const Eigen::VectorXd& q, const LemkeParameters& parameters,
                      LcpResult& result) {
  Scratch& s = *scratch_;
  const int m = static_cast<int>(q.size());
  result.status = LcpStatus::kSolved;
  result.message.clear();
  result.pivots = 0;
  result.z.setZero(m);
  result.w = q;
  if (m == 0 || q.minCoeff() >= 0.0) return;  // z = 0 is complementary.

  const Eigen::VectorXd& d = parameters.covering;
  if (d.size() != 0 && (d.size() != m || d.minCoeff() <= 0.0)) {
    result.status = LcpStatus::kInaccurate;
    result.message = "Lemke covering vector must have one positive entry per row";
    return;
  }
  Tableau& tab = s.tableau;
  tab.reset(s.minus_m, s.mmax, q, d);
  const int max_pivots = parameters.max_pivots > 0 ? parameters.max_pivots : 100 * (m + 10);

  // First pivot: z0 enters at the row of the smallest q_i / d_i, which makes
  // every right-hand side non-negative. Among exact ties the HIGHEST row
  // keeps every row lexicographically positive: after the pivot, row i reads
  // [q_i − q_r, e_i − e_r] (d = 1), positive for i < r only.
  auto ratio = [&](int i) { return d.size() == 0 ? q[i] : q[i] / d[i]; };
  int row = 0;
  for (int i = 1; i < m; ++i)
    if (ratio(i) <= ratio(row)) row = i;
  int leaving = tab.basic(row);
  tab.pivot(row, tab.z0());
  result.pivots = 1;

  while (true) {
    if (result.pivots >= max_pivots) {
      result.status = LcpStatus::kPivotLimit;
      result.message = "Lemke stopped after " + std::to_string(result.pivots) + " pivots";
      return;
    }
    const int entering = tab.complement(leaving);
    row = tab.ratio_test(entering, parameters);
    if (row < 0) {
      // A ray from a point where z0 is already 0 (degenerate, see
      // ratio_test): that point solves the LCP; check_solution decides.
      const int r0 = tab.z0_row();
      if (r0 >= 0 && std::abs(tab.rhs_at(r0)) <= parameters.tie_tolerance * q.cwiseAbs().maxCoeff()) {
        tab.z(result.z);
        check_solution(s.m, s.abs_m, q, parameters, s.magnitude, result);
        if (result.status == LcpStatus::kSolved) return;
      }
      result.z.setZero();
      result.w = q;
      result.status = LcpStatus::kRayTermination;
      result.message = "Lemke ended on a secondary ray: the LCP has no solution Lemke can reach";
      return;
    }
    leaving = tab.basic(row);
    tab.pivot(row, entering);
    ++result.pivots;
    if (leaving == tab.z0()) break;
  }

  tab.z(result.z);
  check_solution(s.m, s.abs_m, q, parameters, s.magnitude, result);
}

}  // namespace simpact::internal
