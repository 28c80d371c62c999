// Principal pivoting for box-constrained convex quadratic programs
//     min ½ xᵀ W x + qᵀ x   subject to   lo ≤ x ≤ hi,      W = A Aᵀ,
// equivalently the box LCP: w = W x + q and, for every variable j,
//     lo_j < x_j < hi_j ⇒ w_j = 0,   x_j = lo_j ⇒ w_j ≥ 0,   x_j = hi_j ⇒ w_j ≤ 0.
// A is sparse (n × r): W is symmetric positive SEMI-definite of rank ≤ r.
// Up to kBoxDenseGramLimit variables W is formed once, densely, and a drive
// step reads its entries and columns; above, W is never formed and every
// product with it goes through A (W v = A (Aᵀ v)).
//
// Method: the principal pivoting of R. W. Cottle and G. B. Dantzig
// ("Complementary pivot theory of mathematical programming", Linear Algebra
// Appl. 1, 1968) in the form D. Baraff gave it for contact forces ("Fast
// contact force computation for nonpenetrating rigid bodies", SIGGRAPH 1994):
// variables are CLAMPED (w_j = 0, the set C), at their LOWER bound or at
// their UPPER bound. Variables that violate their condition are DRIVEN one at
// a time: x_j moves towards w_j = 0 while the clamped ones move so that w_C
// stays 0, until the first event — j reaches w_j = 0 (joins C) or a bound,
// a clamped variable reaches a bound (leaves C), or a bounded variable's w
// reaches 0 (joins C). Every variable already processed keeps its condition,
// so each drive ends with one more variable satisfied. The variable driven
// next is the free one whose |w_j| is largest in units of its tolerance
// (Dantzig's rule; ties to the lowest index): settling the contacts that
// carry the impact first, before the ones they will move anyway, halved the
// pivoting of a struck 32-contact column (docs/scaling.md).
//
// Dependent rows. W_CC is kept nonsingular: a variable whose Schur complement
// s_j = W_jj − W_jC W_CC⁻¹ W_Cj is at or below kBoxPivotTolerance · W_jj is
// DEPENDENT on C (driving it leaves w_j unchanged up to rounding), never
// joins C, and goes to the bound its w asks for. Contact problems are full
// of such rows (four corners of a face, rank three); this is how the method
// picks one vertex of their solution set, as Lemke's method does, where a
// minimum-norm solution would spread impulses over dependent rows.
//
// Factorization: W_CC = L Lᵀ (Cholesky), grown by one row when a variable
// joins C and repaired by a rank-one update when one leaves (O(|C|²) each);
// |C| ≤ rank W ≤ r. A drive step costs O(|C|² + nnz(A)), or O(|C|² + n |C|)
// through W's columns when W is kept densely (kBoxDenseGramLimit) and that
// is the cheaper of the two (kBoxIndexedCost).
//
// Warm start: the states of the last solve are kept; the next solve (same A,
// new q or bounds) starts from them, re-establishes w_C = 0, demotes every
// variable whose condition no longer holds and drives only those.
//
// Degeneracy. A clamped variable that leaves C at a bound with a zero-length
// step may not re-enter C at zero length within the same drive (it would
// cycle). Theory guarantees termination for positive definite W; for the
// semi-definite case the step limit bounds the work and the caller falls
// back. Results are bitwise deterministic (fixed orders, no threads).
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <functional>
#include <vector>

namespace simpact::internal {

/// What BoxQp's callers pass as its tolerances, per variable: decisions
/// (signs of w, "at a bound", and for the Routh increments the convergence of
/// the staggered bounds) are made at this × the data's velocity and impulse
/// scales — three orders below the 1e-9 residual every solution is then
/// checked against (the Routh increments, the plastic LCP), and well above
/// the rounding of w (~1e-15 of its terms).
inline constexpr double kBoxDecisionTolerance = 1e-12;

/// A variable whose Schur complement against the clamped set is at or below
/// this × W_jj is dependent and never clamped. A clamped set admitted at
/// 1e-10 has a Cholesky factor of condition ≤ ~1e5 per admitted row, so the
/// clamped solve loses at most ~1e-11 relative per pivot in double; much
/// smaller thresholds admit rows that are dependent up to rounding (4 corners
/// of one face differ at ~1e-16) and wreck the factor.
inline constexpr double kBoxPivotTolerance = 1e-10;

/// A bounded variable is a blocker of a drive only when its w moves faster
/// than this × the largest |Δw| of the step direction: slower changes are the
/// rounding of a dependent row (its exact change is zero) and, taken as
/// events, would stop the drive with zero-length steps.
inline constexpr double kBoxDegenerateSlope = 1e-12;

/// W is kept densely (n² doubles, filled once per set_rows from the sparse
/// product A Aᵀ, and W_:C beside it, n × min(n, r)) when n is at most this:
/// 1024 variables — 341 contacts in 3-D — take at most 16 MB, twice the
/// clamped factor's own n × n bound. Every entry a drive step reads (W_Cj,
/// the column Δw) is then a load instead of a sparse dot product of two
/// rows of A, which was a third of a 32-contact cluster's time. (W_:C is
/// kept up to date on every clamp and release, O(n) and O(n |C|), also
/// while the drives form Δw through A.) Above it the entries are formed from
/// A on demand and memory stays linear in nnz(A).
inline constexpr int kBoxDenseGramLimit = 1024;

/// What one indexed multiply-add of a sparse product (A g, Aᵀ dx) costs in
/// contiguous ones of a dense column update, for choosing how a drive forms
/// Δw. Measured on Routh samples of falling box columns (core scene
/// falling_box_stack, 12 entries per row of A): 32 contacts (n = 96,
/// |C| ≈ 45) are 7 % faster through W's columns; 200 contacts (n = 600)
/// take 70 ms per increment through W's columns and 45 ms through A.
/// 3 puts the switch between the two.
inline constexpr double kBoxIndexedCost = 3.0;

/// BoxQp::solve's automatic step limit, per variable: kBoxStepsPerVariable ×
/// (n + 10) drive steps. A solve takes O(n) of them when it finishes (each
/// drive settles one variable, with a few events); 50 per variable leaves
/// room for degenerate stalls and still bounds a failing solve.
inline constexpr int kBoxStepsPerVariable = 50;
inline int box_step_limit(int variables) { return kBoxStepsPerVariable * (variables + 10); }

class BoxQp {
 public:
  enum class State : char { kFree, kClamped, kLower, kUpper };

  /// Sets A (n × r). Forgets the warm state. W is kept densely when
  /// n ≤ dense_limit (kBoxDenseGramLimit; tests pass 0 to check the sparse
  /// path against the dense one).
  void set_rows(const SparseRowMatrix& a, int dense_limit = kBoxDenseGramLimit);
  /// Sets W itself (n × n, symmetric positive semi-definite), kept densely;
  /// no rows A: every entry, column and product is read from W. For
  /// problems whose A = J R would be dense and costly to form: R R^T = M⁻¹
  /// of a large coupled block (metric_root is an eigen-decomposition,
  /// O(block³)), while W = J M⁻¹ Jᵀ is already at hand. Forgets the warm
  /// state. Precondition: W exactly symmetric (a W_ij read as W_ji would
  /// otherwise differ; callers symmetrize, ½ (W + Wᵀ)). Throws
  /// std::invalid_argument if W is not square.
  void set_gram(const Eigen::MatrixXd& w);
  int size() const { return n_; }

  /// Solves for q, lo ≤ hi (n each; lo finite, hi finite or +∞: a variable
  /// with no upper bound, as in an impact LCP), starting from the state of
  /// the last solve. Tolerances are absolute, per variable: w_tolerance_j for
  /// w_j's sign and zero tests, x_tolerance_j for "at a bound" (a variable
  /// with hi_j − lo_j ≤ x_tolerance_j is fixed at lo_j). Returns false if the
  /// step limit (max_steps, 0 = automatic: box_step_limit(n)) is reached or a
  /// polished solution keeps violating its conditions; the state is then
  /// unspecified (call reset()).
  bool solve(const Eigen::VectorXd& q, const Eigen::VectorXd& lo, const Eigen::VectorXd& hi,
             const Eigen::VectorXd& w_tolerance, const Eigen::VectorXd& x_tolerance, int max_steps = 0);

  /// Forgets the warm state: every variable free at x = 0.
  void reset();

  const Eigen::VectorXd& x() const { return x_; }
  const Eigen::VectorXd& w() const { return w_; }  ///< W x + q
  State state(int j) const { return state_[static_cast<size_t>(j)]; }
  const std::vector<int>& clamped() const { return clamped_; }
  int steps() const { return steps_; }  ///< drive steps of the last solve

  /// W_jk = A_j · A_k (the sum over A's columns in ascending order, read
  /// from the dense W when it is kept: the same number either way).
  double entry(int j, int k) const;
  /// True when W is kept densely (set_rows' dense_limit, or set_gram).
  bool dense() const { return gram_.size() > 0; }
  /// True when W was given by set_gram (no rows A).
  bool gram_only() const { return gram_only_; }
  /// out = W v (n).
  void multiply(const Eigen::VectorXd& v, Eigen::VectorXd& out) const;

 private:
  double factor_row(int j);  // s_j; fills y_ = L⁻¹ W_Cj (j's factor row if it joins C)
  double schur(int j);       // s_j; also dxc_ = −W_CC⁻¹ W_Cj
  bool independent(int j);  // schur(j) above the pivot tolerance and room in the factor
  void clamp(int j);    // j joins C (after schur(j))
  void release(int position, State to);
  void refactor();
  void solve_clamped(Eigen::VectorXd& rhs) const;  // rhs ← W_CC⁻¹ rhs
  void set_x(int j, double value);                 // keeps w = W x + q
  void refresh_w();
  void prepare();  // scratch, marks and the factor for n_, r_ (after set_rows / set_gram)
  bool restore_clamped();  // x_C with w_C = 0; releases clamped out of bounds
  bool demote();           // violators → free; true if any
  bool violated(int j) const;
  bool fixed(int j) const { return hi_[j] - lo_[j] <= xtol_[j]; }
  Eigen::Index row_nonzeros(int j) const { return a_.outerIndexPtr()[j + 1] - a_.outerIndexPtr()[j]; }
  int most_violated_free() const;  // the free j of largest |w_j| / w_tolerance_j, −1 if none
  bool drive(int j, int max_steps);

  int n_ = 0, r_ = 0;
  bool gram_only_ = false;  // set_gram: no A, every product through gram_
  SparseRowMatrix a_;
  Eigen::SparseMatrix<double, Eigen::ColMajor> at_;  // Aᵀ (r × n), for W v
  Eigen::VectorXd diagonal_;                          // W_jj
  Eigen::MatrixXd gram_;  // W, when n ≤ kBoxDenseGramLimit (else empty)
  Eigen::MatrixXd clamped_columns_;  // W_:C in clamped_'s order (first |C| columns), when W is dense
  Eigen::VectorXd x_, w_, q_, lo_, hi_, wtol_, xtol_;
  std::vector<State> state_;
  std::vector<int> clamped_;
  Eigen::Index clamped_nonzeros_ = 0;  // Σ nnz(A_c) over C
  Eigen::MatrixXd factor_;  // lower Cholesky factor of W_CC in the top-left |C| block
  int steps_ = 0;
  // scratch
  mutable Eigen::VectorXd g_;
  Eigen::VectorXd scatter_, y_, dxc_, dw_, rhs_;
  std::vector<unsigned> stuck_mark_, dependent_mark_;
  unsigned stamp_ = 0, stuck_stamp_ = 0, dependent_stamp_ = 0;
  int y_owner_ = -1;  // the variable y_ was computed for (−1: stale)
};

/// Gives `qp` the problem of contact rows B under the inverse inertia M⁻¹
/// (W = B M⁻¹ Bᵀ): the rows B R, R R^T = M⁻¹ (metric_root), when every
/// connected block of M⁻¹ has at most kMetricRootBlockLimit DOFs (free
/// bodies, small joint groups: the same rows as ever); otherwise W itself,
/// formed by sparse products and symmetrized (BoxQp::set_gram): a large
/// joint group's root would cost an O(block³) eigen-decomposition and its
/// rows B R would be dense over the block. `gram`, if given, returns that W
/// (n × n for B's n rows) from what the caller already has (the contact
/// space's W), instead of the sparse products.
void set_contact_rows(BoxQp& qp, const SparseRowMatrix& rows, const SparseColMatrix& inverse_mass,
                      const std::function<Eigen::MatrixXd()>& gram = {});

}  // namespace simpact::internal
