// simpact — Bullet's MLCP solvers with the solution checks they lack.
//
// Both classes are drop-in replacements for the btMLCPSolverInterface given
// to btMLCPSolver or btMultiBodyMLCPConstraintSolver: a solve they reject
// returns false with x zeroed, and the MLCP solver then falls back to its
// sequential-impulse iterations for that step, as Bullet does whenever its
// MLCP solver fails. Accepted solutions are returned bit for bit.
// MultiBodyImpactSolver uses them for its MLCP bases; hosts that build their
// own btMLCPSolver should pass them instead of Bullet's, with or without
// simpact (docs/guarantees.md).
//
// ── CheckedDantzigSolver ────────────────────────────────────────────────────
// btDantzigSolver::solveMLCP compares the caller's starting guess x (the
// warm start) with m_acceptableUpperLimitSolution instead of the solution it
// copies into x right after the check. A solution with huge or infinite
// entries — what Dantzig's pivoting returns for a nearly singular MLCP
// matrix, e.g. conflicting joints or a row whose effective inverse mass is
// rounding residue — therefore passes, and btMLCPSolver applies it: the
// island's velocities turn to ±1e300 or NaN in one step. (Reproduced by the
// fuzz harness on stock Bullet: fuzz_worlds --seed 7 --only 882 and
// --seed 2026 --only 681; the same code is in upstream bullet3.)
//
// CheckedDantzigSolver runs the stock solve and then checks the returned
// solution against the same limit (Bullet's default 1000 N·s per row, or the
// constructor's argument).
//
// ── CheckedLemkeSolver ──────────────────────────────────────────────────────
// btLemkeSolver (bounded rows, Bullet 3.24 and upstream) turns the MLCP into
// a 2n LCP through B = A⁻¹, computed by Gauss–Jordan elimination without
// pivoting whose zero-pivot guard sets a variable it never uses; it ignores
// the friction rows' dependency on their normal impulse; and it reports
// success without checking the result. On random contact MLCPs of 3–12 rows
// (one body, A = J Jᵀ), 881 of the 952 solves it called successful violate
// the MLCP by 9–59 % of the data's scale, with negative normal impulses;
// btDantzigSolver solves all 2000 exactly. In simulation these impulses
// multiply a step's kinetic energy (×19 at one resting frictionless point,
// fuzz_worlds seed 21 world 112). CheckedLemkeSolver checks the returned x
// against the MLCP it was given, in Bullet's convention
//     w = A x − b,   lo ≤ x ≤ hi,   x_i = lo_i ⇒ w_i ≥ 0,
//     x_i = hi_i ⇒ w_i ≤ 0,   lo_i < x_i < hi_i ⇒ w_i = 0
// (the bounds as Lemke sees them: lo and hi, not scaled by limitDependency),
// row i measured against its own scale |b_i| + Σ_j |A_ij x_j|, and rejects
// x when a row is off by more than kMlcpResidualTolerance of that scale.
//
// ── Threads ─────────────────────────────────────────────────────────────────
// Neither stock solver is safe to run in two threads at once, even on two
// separate worlds. btSolveDantzigLCP (btDantzigLCP.cpp) reports failure
// through the process-wide `bool s_error`, cleared at the start of each call
// and set on a pivoting failure, so a failure in one thread can reject
// another thread's sound solve (btMLCPSolver then falls back to its
// iterations) and a concurrent reset can hide one. Lemke's btMachEps() and
// btEpsRoot() (btLemkeAlgorithm.cpp) compute their static values lazily and
// unsynchronised: two first calls halve the same static. Found by the fuzz
// harness: the same worlds (seed 2026: 53, 313, 922, all MLCP Dantzig) gave
// different impact counts run to run with 4 threads.
// - CheckedDantzigSolver holds a process-wide mutex for its stock solve
//   (mlcp_solver_mutex()): Dantzig solves of concurrent worlds run one at a
//   time.
// - CheckedLemkeSolver computes Lemke's two statics once, under std::call_once,
//   before its first solve (warm_lemke_statics()); after that they are only
//   read, and its solves run concurrently. A lock here made Lemke, the most
//   expensive stock solve, serialise whole multi-threaded campaigns
//   (docs/mpi.md, "Threads in one process"). The one write left in
//   btLemkeSolver::solveMLCP is the counter of its "resetting N times" message
//   on a failed solve (a function-local static int); it numbers that message
//   and never reaches x, so results still do not depend on the thread count.
//   Precondition: every Lemke solve of the process that may run concurrently
//   goes through CheckedLemkeSolver (a plain btLemkeSolver's first call races
//   with the statics as before).
#pragma once

#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>
#include <BulletDynamics/MLCPSolvers/btLemkeSolver.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <mutex>

// Bullet 3.24 defines these two (btLemkeAlgorithm.cpp, global namespace, C++
// linkage) without declaring them in a header; btScalar is the library's
// precision (BT_USE_DOUBLE_PRECISION is part of simpact's interface).
btScalar btMachEps();
btScalar btEpsRoot();

namespace simpact::bullet {

/// Relative residual above which CheckedLemkeSolver rejects a solution:
/// √ε of btScalar (1.5e-8 in double, 3.5e-4 in float). A direct solve of a
/// well-posed MLCP lands at ~n·ε·cond of its scale; the violations Lemke's
/// defects produce are O(1) (≥ 6 % in the measurements above), so √ε
/// separates the two by orders of magnitude either way.
inline const double kMlcpResidualTolerance = std::sqrt(double(std::numeric_limits<btScalar>::epsilon()));

/// Whether x solves the MLCP (A, b, lo, hi) in Bullet's convention above, to
/// `tolerance` of each row's scale; x must be finite.
inline bool mlcp_solution_holds(const btMatrixXu& A, const btVectorXu& b, const btVectorXu& x,
                                const btVectorXu& lo, const btVectorXu& hi, double tolerance) {
  const int n = b.rows();
  double x_scale = 0.0;
  for (int i = 0; i < n; ++i) {
    if (!std::isfinite(double(x[i]))) return false;
    x_scale = std::max(x_scale, std::abs(double(x[i])));
  }
  for (int i = 0; i < n; ++i) {
    double w = -double(b[i]);
    double scale = std::abs(double(b[i]));
    for (int j = 0; j < n; ++j) {
      const double term = double(A(i, j)) * double(x[j]);
      w += term;
      scale += std::abs(term);
    }
    const double slack = tolerance * scale;
    const double x_slack = tolerance * x_scale;
    const double xi = double(x[i]), low = double(lo[i]), high = double(hi[i]);
    if (xi < low - x_slack || xi > high + x_slack) return false;
    const bool at_low = xi <= low + x_slack, at_high = xi >= high - x_slack;
    if (at_low && at_high) continue;  // lo = hi: any w
    if (at_low ? w < -slack : at_high ? w > slack : std::abs(w) > slack) return false;
  }
  return true;
}

/// The process-wide lock of Bullet's MLCP solvers' shared state (see
/// "Threads"): one instance across translation units (an inline function's
/// static).
inline std::mutex& mlcp_solver_mutex() {
  static std::mutex mutex;
  return mutex;
}

/// Computes btLemkeAlgorithm.cpp's lazily cached machine epsilon and its
/// square root exactly once per process (see "Threads"); every
/// CheckedLemkeSolver solve calls it first, so each thread's later reads of
/// those statics happen after their only write.
inline void warm_lemke_statics() {
  static std::once_flag once;
  std::call_once(once, [] {
    ::btMachEps();
    ::btEpsRoot();
  });
}

class CheckedDantzigSolver : public btDantzigSolver {
 public:
  /// `acceptable_upper_limit`: the largest |x_i| accepted [N·s]; Bullet's
  /// default is 1000. Must be positive.
  explicit CheckedDantzigSolver(btScalar acceptable_upper_limit = btScalar(1000)) {
    m_acceptableUpperLimitSolution = acceptable_upper_limit;
  }

  bool solveMLCP(const btMatrixXu& A, const btVectorXu& b, btVectorXu& x, const btVectorXu& lo,
                 const btVectorXu& hi, const btAlignedObjectArray<int>& limitDependency, int numIterations,
                 bool useSparsity = true) override {
    bool solved = false;
    {
      const std::lock_guard<std::mutex> lock(mlcp_solver_mutex());
      solved = btDantzigSolver::solveMLCP(A, b, x, lo, hi, limitDependency, numIterations, useSparsity);
    }
    if (!solved) return false;
    for (int i = 0; i < x.rows(); ++i) {
      // NaN fails the comparison too.
      if (!(std::abs(double(x[i])) < double(m_acceptableUpperLimitSolution))) {
        x.setZero();
        return false;
      }
    }
    return true;
  }
};

class CheckedLemkeSolver : public btLemkeSolver {
 public:
  bool solveMLCP(const btMatrixXu& A, const btVectorXu& b, btVectorXu& x, const btVectorXu& lo,
                 const btVectorXu& hi, const btAlignedObjectArray<int>& limitDependency, int numIterations,
                 bool useSparsity = true) override {
    warm_lemke_statics();
    if (!btLemkeSolver::solveMLCP(A, b, x, lo, hi, limitDependency, numIterations, useSparsity)) return false;
    if (!mlcp_solution_holds(A, b, x, lo, hi, kMlcpResidualTolerance)) {
      x.setZero();
      return false;
    }
    return true;
  }
};

}  // namespace simpact::bullet
