// Position-level separation of the overlaps an impact leaves closed — shared
// by both Bullet adapters (impact_solver.h and multibody_impact_solver.h,
// "Overlaps"), in contact space only (no Bullet type).
//
// An impact resolved by simpact replaces the base solver's velocity-level
// push-out (Bullet's Baumgarte term, which turns an overlap into kinetic
// energy) for the points it resolved. The points it leaves closed but
// overlapping are separated instead by a displacement of the positions,
//   Δq = M⁻¹ Jᵀ μ,   μ ≥ 0,   W μ − d ≥ 0,   μ_r (W μ − d)_r = 0,
// with W = J M⁻¹ Jᵀ (the same metric the impact law used, joint-constrained
// when joints bind the cluster) and d_r the depth still to clear at point r.
// It is the least push in the kinetic-energy metric that clears every
// overlap (the LCP's solution is the M-norm-minimal Δq with J Δq ≥ d), and
// it changes no velocity. A row of touching bodies needs it whole: one
// Gauss–Seidel sweep moves the overlap from the struck pair to the next.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

namespace simpact::internal {

/// Passes of the active-set fallback (separation_impulses): each pass adds
/// or drops rows, and the pass cap bounds the work (32 dense solves of the
/// active rows) when the LCP has no solution.
inline constexpr int kSeparationIterations = 32;

/// The fallback adds an inactive row back when more than this fraction of
/// the largest depth is left at it: 1e-9 of a millimetre is a picometre,
/// far below anything Bullet's Baumgarte push turns into measurable energy.
inline constexpr double kSeparationConvergence = 1e-9;

/// μ (size m) of the least push above, for W (m × m, symmetric positive
/// semidefinite) and depths d (m). Returns zero when no depth is positive.
/// The LCP (W, −d) is solved by the plastic impact's solver (lcp.h,
/// solve_psd_lcp: Lemke, with its regularised and principal-pivoting
/// retries for dependent rows). When it has no solution — overlaps no push
/// can clear, a body wedged between two fixed walls — an active-set
/// iteration (least-squares solves of the rows still overlapping, at most
/// kSeparationIterations passes) gives the best push it finds. Entries are
/// ≥ 0; the result is a function of (W, d) alone.
Eigen::VectorXd separation_impulses(const Eigen::MatrixXd& W, const Eigen::VectorXd& depth);

/// Components of the sparse separation_impulses up to this many rows are
/// solved densely (Lemke, as separation_impulses on a dense W); larger ones
/// by the plastic law's sparse LCP solver (active_set_lcp.h: block
/// principal pivoting, then an interior point, one sparse LDLᵀ per try),
/// falling back to the dense LCP when it finds no solution. Lemke costs
/// ~m³ (a touching chain of 1000 balls with rounding-level overlaps at every
/// contact: 1.5 s); the sparse solve of a chain's tridiagonal W costs O(m),
/// and a packed pit's dependent rows no longer send it to Lemke
/// (docs/scaling.md, "Ball pits"). 64 rows keep every cluster of a few
/// bodies on the reference path (Lemke on 64 rows: ~0.3 ms).
inline constexpr Eigen::Index kDenseSeparationRows = 64;

/// A large component goes to the sparse solver only when one factorisation
/// of its W costs at most this × m³ multiply-adds (active_set_lcp.h,
/// max_flop_ratio): its alternative here is dense Lemke, ~m pivots of m²
/// each, and the sparse solver takes 5–20 factorisations on the pits
/// measured (at most ~65: its block, interior and crossover budgets). A joint group lying
/// on the ground (W dense, ratio ~1/3) stays on Lemke; packed pits (2e-4 –
/// 3e-3) and box piles (≤ 6e-3) take the sparse solver.
inline constexpr double kSparseSeparationFlopRatio = 1.0 / 30.0;

/// μ of the same LCP for a sparse W (symmetric PSD), solved only where it
/// has to be: an active set S starts as the rows with d_r > 0 and splits
/// into the connected components of W restricted to S; each component's
/// LCP is solved as kDenseSeparationRows says; a row outside S whose depth the push
/// leaves above kSeparationConvergence × max d joins S, and the components
/// are solved again (each round adds a row, so at most m rounds; one in a
/// pile where pushes clear the neighbours). With μ_r = 0 off S, the result
/// satisfies the whole LCP (W μ − d ≥ 0 off S by the join rule), so for a
/// positive definite W it is the solution of separation_impulses(W, d) up
/// to rounding, at a cost that follows the overlapping rows and their
/// neighbours, not m³: a pile of a thousand contacts with three overlaps
/// solves three 1 × 1 problems.
Eigen::VectorXd separation_impulses(const SparseColMatrix& W, const Eigen::VectorXd& depth);

/// Δq = M⁻¹ Jᵀ μ for the contact rows J (m × n), the (possibly
/// joint-constrained) inverse mass M⁻¹ (n × n) and the depths d (m), with μ
/// from the sparse separation_impulses(J M⁻¹ Jᵀ, d). Zero (size n) when no
/// depth is positive. Work and memory follow the non-zeros of J, M⁻¹ and W.
Eigen::VectorXd separation_displacement(const SparseRowMatrix& normals,
                                        const SparseColMatrix& inverse_mass,
                                        const Eigen::VectorXd& depth);

}  // namespace simpact::internal
