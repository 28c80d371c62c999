// Lemke's complementary pivoting for the linear complementarity problem
//     find z ≥ 0 with w = M z + q ≥ 0 and zᵀ w = 0,
// with covering vector d = (1, …, 1) and lexicographic ratio tests, so
// degenerate problems cannot cycle. Lemke solves every LCP whose matrix is
// copositive-plus (e.g. symmetric PSD, as the Delassus matrix) or proves it
// infeasible by ray termination; for merely copositive matrices (the Routh
// increment LCP of Halm & Posa, arXiv:2103.15714; see routh.h) ray
// termination means no solution was found.
// Condensed (Tucker) tableau, m × (m + 2): O(m²) per pivot; meant for the
// small LCPs of one impact.
#pragma once

#include <Eigen/Core>

#include <memory>
#include <string>

namespace simpact::internal {

enum class LcpStatus { kSolved, kRayTermination, kPivotLimit, kInaccurate };

/// x with three significant digits ("3.2e-08"): residuals in messages, where
/// std::to_string's fixed six decimals print every small violation as 0.
std::string short_number(double x);

/// Throws std::invalid_argument("simpact::<owner>: plastic_residual_tolerance
/// must be in [...]") unless `value` lies in [kMinPlasticResidualTolerance,
/// kMaxPlasticResidualTolerance] (propagative.h; NaN is refused). One check
/// for every law that takes the parameter (propagative, Pasquero,
/// variational).
void require_plastic_residual_tolerance(double value, const char* owner);

struct LemkeParameters {
  /// Column entries at or below this × the column's largest magnitude are not
  /// pivoted on. 1e-12 rejects entries that are rounding noise (≈ m·1e-16
  /// relative after m pivots) while keeping every entry a well-posed problem
  /// needs.
  double pivot_tolerance = 1e-12;
  /// Ratios within this relative distance count as ties and go to the
  /// lexicographic rule; rounding makes exact ties inexact at ~1e-15.
  double tie_tolerance = 1e-9;
  /// Accepted residual of the returned solution, relative to the problem's
  /// scale max(|q|, |M| |z|). Lemke is a direct method: an accurate solve
  /// lands at ~1e-14; 1e-9 flags a numerically broken one.
  double residual_tolerance = 1e-9;
  /// Optional DATA-relative scales of the residual check (both or neither,
  /// m entries each, > 0): row i of w = M z + q is measured against
  /// w_scale_i and z_i against z_scale_i, and the solution is accepted when
  ///     max_i max( −w_i / w_scale_i,  min(z_i / z_scale_i, w_i / w_scale_i) )
  /// ≤ residual_tolerance (feasibility and complementarity, each in the
  /// units of its own row). Without them the scale is max(|q|, |M| |z|),
  /// which grows with the solution: a huge z (an infeasible problem made
  /// solvable by rounding) then passes with huge residuals. The impact laws
  /// pass the velocity and impulse scales of their data.
  Eigen::VectorXd w_scale, z_scale;
  /// 0 = automatic: 100 (m + 10). Lemke typically needs O(m) pivots.
  int max_pivots = 0;
  /// Covering vector d > 0 of the artificial variable z0; empty = (1, …, 1).
  Eigen::VectorXd covering;
  /// With the default covering vector: if Lemke fails, this many more
  /// attempts with the fixed alternatives d_i = 1 + i/m and 2 − i/m (other
  /// pivot paths through the same degenerate vertices); attempts beyond two
  /// cycle through the same two vectors. A given covering vector is used
  /// alone.
  int retries = 2;
};

struct LcpResult {
  LcpStatus status = LcpStatus::kSolved;
  Eigen::VectorXd z;  ///< solution (clamped ≥ 0) when kSolved.
  Eigen::VectorXd w;  ///< M z + q.
  int pivots = 0;
  std::string message;
};

LcpResult solve_lcp_lemke(const Eigen::MatrixXd& M, const Eigen::VectorXd& q,
                          const LemkeParameters& parameters = {});

/// The data-scaled residual of LemkeParameters (w_scale, z_scale): the worst
/// max(−w_i / w_scale_i, min(|z_i| / z_scale_i, |w_i| / w_scale_i)) over the
/// rows (NaN counts as the worst); `where` gets its row. Lemke's solutions
/// and every other solver's (routh_box.h) are accepted by the same test.
double scaled_violation(const Eigen::VectorXd& z, const Eigen::VectorXd& w, const Eigen::VectorXd& w_scale,
                        const Eigen::VectorXd& z_scale, Eigen::Index* where = nullptr);

/// The same Lemke method, keeping its matrix and tableau between calls:
/// solving many LCPs with one M (the Routh sampler's increments) allocates
/// nothing after the first and prepares M once. Not thread-safe; one per
/// thread.
class LemkeSolver {
 public:
  LemkeSolver();
  ~LemkeSolver();
  LemkeSolver(const LemkeSolver&) = delete;
  LemkeSolver& operator=(const LemkeSolver&) = delete;
  /// Keeps a copy of M (and |M|, −M row-major) for the following solves.
  void set_matrix(const Eigen::MatrixXd& M);
  /// Solves with the matrix of the last set_matrix; throws
  /// std::invalid_argument if q's size does not match it.
  void solve(const Eigen::VectorXd& q, const LemkeParameters& parameters, LcpResult& result);
  /// set_matrix(M), then solve(q, …).
  void solve(const Eigen::MatrixXd& M, const Eigen::VectorXd& q, const LemkeParameters& parameters,
             LcpResult& result);

 private:
  struct Scratch;
  void run(const Eigen::VectorXd& q, const LemkeParameters& parameters, LcpResult& result);
  std::unique_ptr<Scratch> scratch_;
};

/// Symmetric positive semi-definite LCPs (the plastic impact, with M = W).
/// Lemke first. Dependent contacts make W singular and the solution
/// degenerate (exact ties in the ratio test that rounding breaks the wrong
/// way), which can send Lemke onto a ray although a solution exists. Then:
/// Lemke on W + εI (a P-matrix), or Murty's least-index principal pivoting
/// on it if that fails too (finite, no tie-breaking), followed by a polish of
/// its active set on the exact W (minimum-norm least squares). The result is
/// accepted only if it passes the residual check against the exact W;
/// otherwise the status is kRayTermination (Lemke's proof of infeasibility
/// stands) or kInaccurate.
LcpResult solve_psd_lcp(const Eigen::MatrixXd& W, const Eigen::VectorXd& q,
                        const LemkeParameters& parameters = {});

}  // namespace simpact::internal
