#include "core/active_set_lcp.h"

#include <Eigen/SparseCholesky>

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <vector>

namespace simpact::internal {

namespace {

// W's pattern with its diagonal, ordered once (AMD) and factorised with new
// values as often as needed: the active-set systems
//     (W_AA + ε D_AA) x_A = r_A,  inactive rows decoupled (diagonal W_ii),
// and the interior-point systems W + diag(h). D = diag(W). The matrix is
// kept permuted (P W Pᵀ, upper triangle) and the LDLᵀ runs in natural
// order on it, so a factorisation rewrites values in place and permutes
// nothing (Eigen's own ordering would permute the whole matrix again before
// every factorisation: 8–11 % of a ball pit's frame). The ordering is the
// one SimplicialLDLT computes itself (AMD on the symmetric pattern), so the
// fill is the same; the values agree up to rounding (Eigen's permuted copy
// ordered each column's entries differently, and so the sums).
class Factor {
 public:
  explicit Factor(const SparseColMatrix& w) {
    const Eigen::Index k = w.cols();
    SparseColMatrix identity(k, k);
    identity.setIdentity();
    SparseColMatrix pattern = w + 0.0 * identity;
    pattern.makeCompressed();
    diagonal_ = pattern.diagonal();
    for (Eigen::Index i = 0; i < k; ++i)
      if (!(diagonal_[i] > 0.0)) diagonal_[i] = 1.0;  // a zero row: decoupled
    // The ordering as SimplicialLDLT<Lower, AMD> computes it.
    Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> inverse;
    {
      SparseColMatrix full;
      full = pattern.selfadjointView<Eigen::Lower>();
      Eigen::AMDOrdering<int> ordering;
      ordering(full, inverse);
    }
    permutation_ = inverse.inverse();
    // P W Pᵀ's upper triangle from W's lower one. Each entry is first given
    // its index among W's lower entries as its value, to learn where
    // setFromTriplets put it; then the row, column and value of W it came
    // from are stored in system_'s entry order.
    std::vector<Eigen::Triplet<double>> entries;
    std::vector<int> rows, cols;
    std::vector<double> values;
    for (Eigen::Index j = 0; j < k; ++j)
      for (SparseColMatrix::InnerIterator it(pattern, j); it; ++it) {
        const Eigen::Index i = it.row();
        if (i < j) continue;
        const int pi = permutation_.indices()[i], pj = permutation_.indices()[j];
        entries.emplace_back(std::min(pi, pj), std::max(pi, pj), static_cast<double>(rows.size()));
        rows.push_back(static_cast<int>(i));
        cols.push_back(static_cast<int>(j));
        values.push_back(it.value());
      }
    system_.resize(k, k);
    system_.setFromTriplets(entries.begin(), entries.end());
    system_.makeCompressed();
    const size_t count = static_cast<size_t>(system_.nonZeros());
    row_.resize(count);
    col_.resize(count);
    value_.resize(count);
    for (size_t e = 0; e < count; ++e) {
      const size_t source = static_cast<size_t>(system_.valuePtr()[e]);
      row_[e] = rows[source];
      col_[e] = cols[source];
      value_[e] = values[source];
    }
    factor_.analyzePattern(system_);
  }

  // The active-set system of `in`, unless the factor already is its.
  bool factorize_active(const std::vector<char>& in) {
    if (factored_ && in == set_) return true;
    set_ = in;
    double* values = system_.valuePtr();
    for (size_t e = 0; e < value_.size(); ++e) {
      const int i = row_[e], j = col_[e];
      const bool in_j = in[static_cast<size_t>(j)] != 0;
      if (i == j)
        values[e] = in_j ? diagonal_[j] * (1.0 + kActiveSetRegularization) : diagonal_[j];
      else
        values[e] = in_j && in[static_cast<size_t>(i)] ? value_[e] : 0.0;
    }
    return factorize();
  }

  // W + diag(h), h > 0.
  bool factorize_shifted(const Eigen::VectorXd& h) {
    set_.clear();
    double* values = system_.valuePtr();
    for (size_t e = 0; e < value_.size(); ++e) values[e] = row_[e] == col_[e] ? value_[e] + h[col_[e]] : value_[e];
    return factorize();
  }

  // x = W⁻¹ rhs for the factorised system: (P W Pᵀ)(P x) = P rhs.
  Eigen::VectorXd solve(const Eigen::VectorXd& rhs) const {
    permuted_ = permutation_ * rhs;
    permuted_ = factor_.solve(permuted_);
    return permutation_.transpose() * permuted_;
  }
  // Σ_j c_j², c_j the non-zeros of column j of L: the multiply-adds of one
  // numeric factorisation, from the symbolic analysis.
  double flops() const {
    const Eigen::VectorXd counts = factor_.column_counts().cast<double>();
    return counts.squaredNorm();
  }
  const std::vector<char>& set() const { return set_; }
  int factorizations() const { return factorizations_; }

 private:
  bool factorize() {
    ++factorizations_;
    factor_.factorize(system_);
    factored_ = factor_.info() == Eigen::Success;
    return factored_;
  }

  SparseColMatrix system_;  // P W Pᵀ (upper triangle), values rewritten per factorisation
  Eigen::PermutationMatrix<Eigen::Dynamic, Eigen::Dynamic, int> permutation_;
  std::vector<int> row_, col_;  // per entry of system_: the row and column of W it holds (row ≥ column)
  std::vector<double> value_;   // and W's value there
  Eigen::VectorXd diagonal_;
  mutable Eigen::VectorXd permuted_;
  // SimplicialLDLT in natural order on the permuted matrix, with its
  // symbolic column counts readable.
  struct Ldlt : Eigen::SimplicialLDLT<SparseColMatrix, Eigen::Upper, Eigen::NaturalOrdering<int>> {
    const Eigen::VectorXi& column_counts() const { return m_nonZerosPerCol; }
  };
  Ldlt factor_;
  std::vector<char> set_;
  bool factored_ = false;
  int factorizations_ = 0;
};

struct Problem {
  const SparseColMatrix& w;
  const Eigen::VectorXd& q;
  const Eigen::VectorXd& w_scale;
  const Eigen::VectorXd& z_scale;
};

// z (z_I = 0) with W_AA z_A = −q_A for the factorised active set, from the
// start z₀ (z₀_I ignored): z = z₀ + K⁻¹(−w₀)_A with K the regularised
// W_AA, refined kActiveSetRefinements times against W_AA itself; w = W z + q.
// From z₀ = 0 this is the regularised (near least-norm) solution; from an
// interior iterate it is the nearest solution to it, which keeps the
// iterate's impulses on rows that are dependent (a locked pile has many
// non-negative solutions and its least-norm one may not be among them).
void solve_active(const Problem& p, const Factor& factor, Eigen::VectorXd& z, Eigen::VectorXd& w) {
  const Eigen::Index k = p.q.size();
  const std::vector<char>& in = factor.set();
  for (Eigen::Index i = 0; i < k; ++i)
    if (!in[static_cast<size_t>(i)]) z[i] = 0.0;
  Eigen::VectorXd rhs(k);
  for (int refine = 0;; ++refine) {
    w.noalias() = p.w * z;
    w += p.q;
    if (refine > kActiveSetRefinements) break;
    for (Eigen::Index i = 0; i < k; ++i) rhs[i] = in[static_cast<size_t>(i)] ? -w[i] : 0.0;
    z += factor.solve(rhs);
  }
}

// Block principal pivoting from the set `active` until no row is
// infeasible (true) or `budget` more factorisations are spent (false);
// z, w the last solve's. Each solve starts from z₀ = 0, or when `warm`
// from the z passed in and then from the last solve's, clipped at 0.
bool block_pivoting(const Problem& p, Factor& factor, std::vector<char>& active, int budget, bool warm,
                    Eigen::VectorXd& z, Eigen::VectorXd& w) {
  const Eigen::Index k = p.q.size();
  const double tolerance = kActiveSetDecisionTolerance;
  std::vector<char> next(static_cast<size_t>(k));
  const int limit = factor.factorizations() + budget;
  int best = static_cast<int>(k) + 1, grace = kActiveSetBlockGrace;
  while (true) {
    if (active != factor.set() && factor.factorizations() >= limit) return false;  // budget spent
    if (!factor.factorize_active(active)) return false;
    if (!warm) z.setZero();
    solve_active(p, factor, z, w);
    if (!z.allFinite() || !w.allFinite()) return false;
    int infeasible = 0;
    Eigen::Index last = -1;
    for (Eigen::Index i = 0; i < k; ++i) {
      const bool in = active[static_cast<size_t>(i)] != 0;
      // Hysteresis: rows at z ≈ 0, w ≈ 0 stay where they are.
      const bool keep = in ? z[i] >= -tolerance * p.z_scale[i] : w[i] < -tolerance * p.w_scale[i];
      next[static_cast<size_t>(i)] = keep;
      if (keep != in) {
        ++infeasible;
        last = i;
      }
    }
    if (infeasible == 0) return true;
    if (infeasible < best) {
      best = infeasible;
      grace = kActiveSetBlockGrace;
      active.swap(next);
    } else if (grace > 0) {
      --grace;
      active.swap(next);
    } else {
      active[static_cast<size_t>(last)] = !active[static_cast<size_t>(last)];  // Murty's single pivot
    }
    if (warm) z = z.cwiseMax(0.0);
  }
}

// The data-scaled violation of (z⁺, W z⁺ + q), z⁺ = max(z, 0); z, w are
// overwritten with them.
double violation_of(const Problem& p, Eigen::VectorXd& z, Eigen::VectorXd& w, Eigen::Index* where) {
  z = z.cwiseMax(0.0);
  w.noalias() = p.w * z;
  w += p.q;
  return scaled_violation(z, w, p.w_scale, p.z_scale, where);
}

}  // namespace

void polish_lcp(const SparseColMatrix& w_matrix, Eigen::VectorXd& z, Eigen::VectorXd& w, int sweeps) {
  const Eigen::Index k = z.size();
  const Eigen::VectorXd diagonal = w_matrix.diagonal();
  for (int sweep = 0; sweep < sweeps; ++sweep) {
    for (Eigen::Index i = 0; i < k; ++i) {
      if (!(diagonal[i] > 0.0)) continue;  // no impulse of row i moves its own w
      const double change = std::max(z[i] - w[i] / diagonal[i], 0.0) - z[i];
      if (change == 0.0) continue;
      z[i] += change;
      for (SparseColMatrix::InnerIterator it(w_matrix, i); it; ++it) w[it.row()] += change * it.value();
    }
  }
}

LcpResult solve_lcp_active_set(const SparseColMatrix& w, const Eigen::VectorXd& q, const Eigen::VectorXd& w_scale,
                               const Eigen::VectorXd& z_scale, double residual_tolerance, ActiveSetStats* stats,
                               double max_flop_ratio) {
  const Eigen::Index k = q.size();
  LcpResult lcp;
  lcp.z = Eigen::VectorXd::Zero(k);
  lcp.w = q;
  ActiveSetStats counts;
  const Problem p{w, q, w_scale, z_scale};
  Factor factor(w);
  Eigen::Index where = 0;
  double violation = std::numeric_limits<double>::infinity();
  const auto finish = [&](bool solved) {
    counts.factorizations = factor.factorizations();
    lcp.pivots = counts.factorizations;
    if (stats != nullptr) *stats = counts;
    if (solved) {
      lcp.status = LcpStatus::kSolved;
      return lcp;
    }
    std::ostringstream message;
    message << "active set and interior point: no solution within the residual after "
            << counts.factorizations << " factorisations";
    if (std::isfinite(violation)) message << " (row " << where << " violating by " << short_number(violation) << ")";
    lcp.status = LcpStatus::kPivotLimit;
    lcp.message = message.str();
    return lcp;
  };
  if (k == 0) return finish(true);
  counts.factor_flops = factor.flops();
  const double cube = static_cast<double>(k) * static_cast<double>(k) * static_cast<double>(k);
  if (max_flop_ratio > 0.0 && counts.factor_flops > max_flop_ratio * cube) {
    counts.skipped = true;
    if (stats != nullptr) *stats = counts;
    lcp.status = LcpStatus::kInaccurate;
    lcp.message = "not tried: one factorisation of W's pattern costs " + short_number(counts.factor_flops) +
                  " multiply-adds, above " + short_number(max_flop_ratio) + " k³";
    return lcp;
  }

  // 1. Block principal pivoting from every row not separating (touching
  //    rows at rest included: a struck row of touching bodies settles in one
  //    try).
  std::vector<char> active(static_cast<size_t>(k));
  for (Eigen::Index i = 0; i < k; ++i)
    active[static_cast<size_t>(i)] = q[i] <= kActiveSetDecisionTolerance * w_scale[i];
  if (block_pivoting(p, factor, active, kActiveSetBlockBudget, /*warm=*/false, lcp.z, lcp.w)) {
    violation = violation_of(p, lcp.z, lcp.w, &where);
    if (violation <= residual_tolerance) return finish(true);
  }

  // 2. Interior point (Mehrotra's predictor–corrector for the monotone LCP,
  //    infeasible start; S. J. Wright, "Primal-Dual Interior-Point Methods",
  //    SIAM 1997, ch. 8), every Newton system W + diag(w/z) factorised on
  //    the same pattern; once the complementarity gap is small, a crossover
  //    to block pivoting from the set the iterate points at.
  counts.interior = true;
  const Eigen::VectorXd gap_scale = z_scale.cwiseProduct(w_scale);
  Eigen::VectorXd z = z_scale, s = w_scale;  // s: the slack w, kept > 0
  Eigen::VectorXd residual(k), dz(k), ds(k), rhs(k), h(k);
  const auto step_to_boundary = [&](const Eigen::VectorXd& x, const Eigen::VectorXd& dx) {
    double alpha = 1.0;
    for (Eigen::Index i = 0; i < k; ++i)
      if (dx[i] < 0.0) alpha = std::min(alpha, -x[i] / dx[i]);
    return alpha;
  };
  double crossover_gap = kInteriorCrossoverGap;
  // Step 3 on (pz, pw) in place (pz ≥ 0, pw = W pz + q): `sweeps` sweeps,
  // then pw = W pz + q afresh and the residual check; true, with lcp's z
  // and w set, when it passes. A failure message names the smallest
  // residual a polish reached when it is below the iterate's.
  double best_violation = std::numeric_limits<double>::infinity();
  Eigen::VectorXd best_z, polished_z, polished_w;
  const auto polish = [&](Eigen::VectorXd& pz, Eigen::VectorXd& pw, int sweeps) {
    ++counts.polishes;
    polish_lcp(w, pz, pw, sweeps);
    Eigen::Index at = 0;
    const double result = violation_of(p, pz, pw, &at);
    if (result < violation) {
      violation = result;
      where = at;
    }
    if (!(result <= residual_tolerance)) return false;
    lcp.z = pz;
    lcp.w = pw;
    counts.polished = true;
    return true;
  };
  for (int iteration = 0; iteration < kInteriorIterations; ++iteration) {
    residual.noalias() = w * z;
    residual += q - s;  // W z + q − s
    const double gap = z.cwiseProduct(s).cwiseQuotient(gap_scale).mean();
    // The iterate as it is (a locked packing's iterate already solves it:
    // every row active, w ≈ 0).
    lcp.z = z;
    violation = violation_of(p, lcp.z, lcp.w, &where);
    if (violation <= residual_tolerance) return finish(true);
    if (violation < best_violation) {
      best_violation = violation;
      best_z = lcp.z;
    }
    if (violation <= kActiveSetPolishWindow * residual_tolerance) {
      polished_z = lcp.z;  // from a copy: the iterate stays as it is
      polished_w = lcp.w;
      if (polish(polished_z, polished_w, kActiveSetPolishSweeps)) return finish(true);
    }
    // A crossover from the iterate, each time the gap has fallen 100× more.
    if (gap <= crossover_gap) {
      crossover_gap = kInteriorCrossoverStep * gap;
      for (Eigen::Index i = 0; i < k; ++i) active[static_cast<size_t>(i)] = z[i] / z_scale[i] >= s[i] / w_scale[i];
      lcp.z = z;
      if (block_pivoting(p, factor, active, kActiveSetCrossoverBudget, /*warm=*/true, lcp.z, lcp.w)) {
        violation = violation_of(p, lcp.z, lcp.w, &where);
        if (violation <= residual_tolerance) return finish(true);
      }
    }
    if (!(gap > 0.0)) break;  // on the boundary: nothing left to centre
    h = s.cwiseQuotient(z);
    if (!factor.factorize_shifted(h)) break;
    // (W + Z⁻¹S) Δz = Z⁻¹ g − r,  Δs = W Δz + r,  g the complementarity target.
    const auto newton = [&](const Eigen::VectorXd& g) {
      rhs = g.cwiseQuotient(z) - residual;
      dz = factor.solve(rhs);
      ds.noalias() = w * dz;
      ds += residual;
    };
    newton(-z.cwiseProduct(s));  // affine scaling
    const double affine = std::min(step_to_boundary(z, dz), step_to_boundary(s, ds));
    const double affine_gap = (z + affine * dz).cwiseProduct(s + affine * ds).cwiseQuotient(gap_scale).mean();
    const double sigma = std::pow(std::max(affine_gap, 0.0) / gap, 3);
    newton(sigma * gap * gap_scale - z.cwiseProduct(s) - dz.cwiseProduct(ds));  // centred, corrected
    const double alpha = kInteriorBoundaryFraction * std::min(step_to_boundary(z, dz), step_to_boundary(s, ds));
    z += alpha * dz;
    s += alpha * ds;
    ++counts.interior_iterations;
    if (!z.allFinite() || !s.allFinite()) break;
  }
  // The best iterate, by the long final polish (the loop's short ones
  // may have started from it too; more sweeps go further), checked every
  // kActiveSetFinalPolishCheck sweeps so that it stops once settled.
  if (best_z.size() == k) {
    counts.final_polish = true;
    Eigen::VectorXd final_w;
    violation_of(p, best_z, final_w, nullptr);
    for (int swept = 0; swept < kActiveSetFinalPolishSweeps; swept += kActiveSetFinalPolishCheck)
      if (polish(best_z, final_w, kActiveSetFinalPolishCheck)) return finish(true);
  }
  return finish(false);
}

}  // namespace simpact::internal
