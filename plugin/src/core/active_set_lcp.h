// Sparse solver for the symmetric positive semi-definite LCP
//     find z ≥ 0 with w = W z + q ≥ 0 and zᵀ w = 0,   W sparse (k × k),
// the form of an impact's plastic LCP (W = J M⁻¹ Jᵀ, q = u⁻ = J v⁻ + b) and
// of the separation push (core/separation.h). Every try costs one sparse
// LDLᵀ of a k × k matrix with W's pattern (Eigen's SimplicialLDLT; ordered
// once by AMD and kept permuted, so a try only rewrites values), never a
// dense factor: on the contact LCPs of
// piles and packings, where most rows clamp, it settles in a handful of
// factorisations where Cottle–Dantzig pivoting (box_qp.h) makes one drive
// per clamped row, each O(|C|²) on a dense factor (docs/scaling.md, "Ball
// pits").
//
// 1. Block principal pivoting (the primal–dual active-set method of
// M. Hintermüller, K. Ito and K. Kunisch, "The primal–dual active set
// strategy as a semismooth Newton method", SIAM J. Optim. 13(3), 2003). The
// active set A holds the rows that carry impulse; each try solves
//     W_AA z_A = −q_A,   z_I = 0,
// then moves into A every row outside it left approaching (w_i < 0) and out
// of A every row whose impulse came out negative, each beyond
// kActiveSetDecisionTolerance in the units of the data's scales (ws
// velocity, zs impulse, per row). It starts from every row not separating
// (a struck row of touching bodies settles in one try) and stops when no
// row moves. Full exchanges can cycle when W is not an M-matrix, so the
// safeguard of J. J. Júdice and F. M. Pires ("A block principal pivoting
// algorithm for large-scale strictly monotone linear complementarity
// problems", Comput. Oper. Res. 21(5), 1994) exchanges the whole infeasible
// set only while its size keeps falling (or for kActiveSetBlockGrace tries
// after it last fell), and otherwise one row (Murty's single principal
// pivot on the last infeasible index), within kActiveSetBlockBudget
// factorisations.
//
// Dependent rows. Contact rows of packed bodies are dependent (a ball with
// twelve neighbours has three translational DOFs; a face's four corners
// have rank three), so W_AA is singular. Each try factorises the
// regularised W_AA + ε diag(W_AA), ε = kActiveSetRegularization (rows
// outside A become decoupled rows of the same pattern), and refines the
// solve kActiveSetRefinements times against W_AA itself. When q_A lies in
// the range of W_AA (a plastic LCP without kinematic terms: W_AA =
// J_A M⁻¹ J_Aᵀ has J_A's range) that solves W_AA z_A = −q_A; among the many
// solutions it picks a spread one (near the least-norm one), where pivoting
// picks a vertex. Both give the same outcome v⁺ = v⁻ + M⁻¹Jᵀz: v⁺ is unique
// (the kinetic-metric projection), z is not. NEARLY dependent rows are
// what makes step 1 cycle: a row joining a set it nearly depends on gets
// huge impulses of both signs.
//
// 2. Interior point, where step 1 does not settle: Mehrotra's
// predictor–corrector for the monotone LCP from an infeasible start
// (S. J. Wright, "Primal-Dual Interior-Point Methods", SIAM 1997, ch. 8),
// each Newton system W + diag(w/z) (positive definite) factorised on the
// same pattern; its iterates approach the analytic centre of the solution
// set, so dependent rows share impulses and nothing cycles. Once the mean
// scaled gap z_i w_i / (zs_i ws_i) is below kInteriorCrossoverGap each
// iterate is tried as it is, and as the start of a crossover: step 1 from
// the set {z_i/zs_i ≥ w_i/ws_i}, its solves starting from the iterate (so
// a locked packing keeps the iterate's non-negative impulses instead of a
// least-norm solution of mixed sign), within kActiveSetCrossoverBudget
// factorisations. At most kInteriorIterations iterations.
//
// 3. Polish, where the interior point stalls just short of the residual:
// projected Gauss–Seidel sweeps (C. W. Cryer, "The solution of a quadratic
// programming problem using systematic overrelaxation", SIAM J. Control 9,
// 1971; here unrelaxed) z_i ← max(0, z_i − w_i / W_ii), row by row in index
// order, w updated along W's column i, each sweep O(nnz W). Every sweep
// lowers ½ zᵀWz + qᵀz, whose minimisers are the LCP's solutions, and it
// needs no factorisation, so it is not limited by the Newton systems'
// accuracy: rows dependent only up to rounding (contact geometry from
// single-precision Bullet: normals exact to ~1e-7, W's smallest non-zero
// eigenvalues near the regularisation) leave the iterates and the
// crossovers at a residual of 1–8e-9 against the 1e-9 accepted, which a few
// sweeps remove. Polished: every interior iterate within
// kActiveSetPolishWindow × the tolerance by kActiveSetPolishSweeps sweeps,
// and, when nothing else settled the LCP, the iterate with the smallest
// residual by up to kActiveSetFinalPolishSweeps (checked every
// kActiveSetFinalPolishCheck) — each from a copy. The last one
// is the solver's last resort before its caller's box pivoting, which
// costs 10²–10³ factorisations on the LCPs where it gets that far.
//
// Acceptance. A result is accepted only when it passes the residual check
// callers give (scaled_violation ≤ residual_tolerance, as Lemke's
// solutions: per row, feasibility and min(z_i/zs_i, w_i/ws_i)). An interior
// iterate alone does not reach it on degenerate rows (z_i and w_i both → 0
// like √gap, and the Newton systems stall near a gap of 1e-13 in double):
// a gap-based acceptance, Σ z_i w_i ≥ ½‖v⁺ − v⁺_exact‖²_M, was tried and
// left out, because it bounds the outcome's error only by √gap (3.9e-5 of
// the speed on one random problem at Σ z̃w̃ = 1e-9). Otherwise the result
// is reported unsolved and callers use an exact pivoting method.
// Deterministic: fixed orders, no threads.
#pragma once

#include "core/lcp.h"

#include <simpact/impact_problem.h>

#include <Eigen/Core>

namespace simpact::internal {

/// Relative regularisation of W_AA's diagonal in each solve. Large enough
/// that the factorisation of a singular W_AA (dependent contact rows) never
/// meets a zero pivot in double (the factor's condition is ≲ 1/ε = 1e10,
/// far from the ~1e13 where LDLᵀ of a PD matrix breaks down for k ~ 10³),
/// small enough that its bias, ε W_ii z_i ≈ 1e-10 of the row's velocity, is
/// an order below the 1e-9 residual every solution is accepted by, before
/// the refinements remove most of it.
inline constexpr double kActiveSetRegularization = 1e-10;

/// Iterative-refinement steps per solve against the unregularised W_AA: each
/// shrinks the residual on W_AA's range by ε/(σ + ε) for an eigenvalue σ,
/// so one takes a well-conditioned row's bias from 1e-10 to ~1e-20, below
/// rounding. (On the 300-ball pit of docs/scaling.md 0, 1 and 2 all passed
/// every residual check; one keeps a margin for worse-conditioned sets.)
inline constexpr int kActiveSetRefinements = 1;

/// Tries the block exchanges go on after the number of infeasible rows
/// last fell, before single pivots take over (Júdice–Pires). A cycling run
/// shows within a few tries that its count no longer falls.
inline constexpr int kActiveSetBlockGrace = 3;

/// Factorisations the block pivoting may spend from the cold start before
/// the interior point takes over. On the 300-ball pit (docs/scaling.md,
/// "Ball pits") 90 % of the LCPs settled within 9, a tail to 20; 12 leaves
/// the rest (~10 %) to the interior point, which then costs less than the
/// tail would.
inline constexpr int kActiveSetBlockBudget = 12;

/// Factorisations each crossover from an interior iterate may spend: from
/// a near-optimal set the block pivoting settles in 1–3.
inline constexpr int kActiveSetCrossoverBudget = 3;

/// Interior-point iterations before giving up (the caller's pivoting then
/// takes over). On the pits measured Mehrotra's method reached the
/// crossover gap in 7–10 and a crossover succeeded within a few more; 40
/// bounds a failing run at ~4× that.
inline constexpr int kInteriorIterations = 40;

/// Mean scaled complementarity z_i w_i / (zs_i ws_i) below which an
/// interior iterate is first tried as a crossover start, and the factor
/// by which it must fall before the next try. At 1e-6 every row's larger
/// side is ≳ 1e-3 of its scale where the other is ≲ 1e-3, so the set
/// {z_i/zs_i ≥ w_i/ws_i} is the solution's except for nearly degenerate
/// rows, which the block pivoting settles; each try costs up to
/// kActiveSetCrossoverBudget factorisations, so a try per iteration would
/// cost more than the iterations.
inline constexpr double kInteriorCrossoverGap = 1e-6;
inline constexpr double kInteriorCrossoverStep = 1e-2;

/// Fraction of the step to the boundary an interior step takes: the usual
/// 0.99 keeps iterates off the boundary by 1 % of the step, so the Newton
/// systems' diagonals w/z stay finite.
inline constexpr double kInteriorBoundaryFraction = 0.99;

/// Hysteresis of the active-set decisions, in the data's units (z_i/zs_i,
/// w_i/ws_i): a row leaves A only when its impulse is below −this, a row
/// outside joins only when it approaches faster than this. Three orders
/// below the 1e-9 residual the result is accepted by (so a row it leaves
/// undecided cannot fail the check), well above the rounding of the refined
/// solves (~1e-15 relative), which would otherwise toggle rows at z ≈ 0,
/// w ≈ 0 between iterations. The same size as box_qp.h's decision tolerance.
inline constexpr double kActiveSetDecisionTolerance = 1e-12;

/// The solver is for W whose LDLᵀ stays sparse: every try factorises a
/// k × k matrix of W's pattern. Where that factor fills in — a landing pile
/// of boxes (every contact of a box couples with every other, 60 per
/// column), a joint group lying on the ground (W dense through M⁻¹_G) — box
/// pivoting's O(|C|²) per pivot is cheaper. The plastic law asks the solver
/// to run only when one factorisation costs at most this × k³ multiply-adds
/// (Σ c_j² over the columns of L, from the symbolic analysis; its
/// max_flop_ratio), box pivoting taking the rest. Measured per LCP (docs/scaling.md, "Ball pits"):
/// break-even near 2.5e-3 (a 201-contact pile at 2.4e-3: 2.7 against 2.5 ms;
/// an 87-contact pit at 3.4e-3: 0.8 against 0.9 ms); packed pits of 635–900
/// contacts 2e-4–9e-4 (3–9 ms against 47–160 ms); a 165-contact pile 4.5e-3
/// (5.6 against 1.5 ms); the 2000-contact landing of 125 boxes 5.4e-3
/// (110–150 against 10–50 ms); a 100-link rope on the ground ~0.3 (0.9 s
/// against 83 ms for its worst frame).
inline constexpr double kActiveSetFlopRatio = 2e-3;

/// Projected Gauss–Seidel sweeps of one polish (step 3). Each costs about
/// one product with W (~1 % of a factorisation on the pits). Measured on
/// the 528 large plastic LCPs of a mixed 300-body scene in single precision
/// (docs/scaling.md, "Ball pits"): 32 failed without a polish, 31 were
/// solved with 10 sweeps, and 200 sweeps solved the same 31.
inline constexpr int kActiveSetPolishSweeps = 10;

/// Sweeps of the final polish (step 3, the best iterate, only when steps 1
/// and 2 and the iterates' polishes did not settle the LCP). Gauss–Seidel
/// keeps converging where the interior point has stalled, at one product
/// with W a sweep: 1000 sweeps cost about as much as 10–25 factorisations
/// of a 1000–2000-contact pit, against 0.26–0.84 s of box pivoting after a
/// failure. Measured on the LCPs the solver had left (docs/scaling.md,
/// "Ball pits"): a 1951-contact plastic LCP of the 500-body mixed scene in
/// double (interior point stalled at 1.07e-8 on one row) settles from 100
/// sweeps; the five 1100–1300-contact ones of the 300-body scene in single
/// precision (stalled at 2.6e-9–1.8e-7), at 1e-9: 4 of 5 from 100–500
/// sweeps, 5 of 5 from 1000. The LCPs that steps 1–2 settle are unchanged.
inline constexpr int kActiveSetFinalPolishSweeps = 1000;
/// The final polish checks the residual every this many sweeps and stops
/// once it passes (the check, one product with W, costs about one sweep):
/// the LCPs above settle after 100–1000.
inline constexpr int kActiveSetFinalPolishCheck = 50;
static_assert(kActiveSetFinalPolishSweeps % kActiveSetFinalPolishCheck == 0,
              "the final polish runs whole checks");

/// An interior iterate is polished when its residual (scaled_violation) is
/// at most this × the residual tolerance: within three orders of it, where
/// a few sweeps can close the gap. On the same 528 LCPs (tolerance 1e-9)
/// windows from 10 to 1e4 solved the same problems; 1e3 spent the fewest
/// factorisations (7 % fewer than polishing only at the end), since a
/// stalled run stops at its first iterate near enough.
inline constexpr double kActiveSetPolishWindow = 1e3;

struct ActiveSetStats {
  double factor_flops = 0.0;    ///< multiply-adds of one factorisation (symbolic estimate)
  bool skipped = false;         ///< not tried: factor_flops > max_flop_ratio k³
  int factorizations = 0;       ///< sparse LDLᵀ factorisations in all
  bool interior = false;        ///< step 1 did not settle alone
  int interior_iterations = 0;  ///< interior-point iterations
  int polishes = 0;             ///< step 3's polishes tried
  bool polished = false;        ///< the result came from a polish
  bool final_polish = false;    ///< the final polish (kActiveSetFinalPolishSweeps) was tried
};

/// Step 3's polish: `sweeps` projected Gauss–Seidel sweeps
///     z_i ← max(0, z_i − w_i / W_ii),  i = 0 … k−1 in order,
/// on (z, w), w kept equal to W z + q along each change (W's column i);
/// rows with W_ii ≤ 0 are left as they are. Preconditions: W symmetric PSD
/// (k × k, both triangles stored), z ≥ 0, w = W z + q. Each sweep lowers
/// ½ zᵀWz + qᵀz or leaves it; nothing is accepted here (the caller checks).
void polish_lcp(const SparseColMatrix& w_matrix, Eigen::VectorXd& z, Eigen::VectorXd& w,
                int sweeps = kActiveSetPolishSweeps);

/// Solves the LCP (W, q) (see above). W: k × k, symmetric PSD, column-major
/// with both triangles stored; q, w_scale, z_scale: k each (scales > 0, as
/// LemkeParameters'). Returns status kSolved with z ≥ 0 and w = W z + q
/// passing scaled_violation ≤ residual_tolerance; otherwise kPivotLimit
/// with the message saying how far it got (z, w unspecified). With
/// max_flop_ratio > 0 it returns kInaccurate without trying when one
/// factorisation would cost more than max_flop_ratio × k³ multiply-adds
/// (message and stats say so). `stats` (optional) gets counts.
LcpResult solve_lcp_active_set(const SparseColMatrix& w, const Eigen::VectorXd& q, const Eigen::VectorXd& w_scale,
                               const Eigen::VectorXd& z_scale, double residual_tolerance,
                               ActiveSetStats* stats = nullptr, double max_flop_ratio = 0.0);

}  // namespace simpact::internal
