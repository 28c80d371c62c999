// simpact — btDantzigSolver with the solution check Bullet 3.24 means to do.
//
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
// solution against the same limit; a rejected solve returns false with x
// zeroed, and btMLCPSolver / btMultiBodyMLCPConstraintSolver then fall back
// to their sequential-impulse iterations for that step, as Bullet intends.
// It is a drop-in replacement (the same limit, Bullet's default 1000 N·s
// per row, or the constructor's argument). MultiBodyImpactSolver uses it
// for MultiBodyBaseSolver::kMlcpDantzig; hosts that build their own
// btMLCPSolver should pass one of these instead of a btDantzigSolver, with
// or without simpact.
#pragma once

#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>

#include <cmath>

namespace simpact::bullet {

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
    if (!btDantzigSolver::solveMLCP(A, b, x, lo, hi, limitDependency, numIterations, useSparsity))
      return false;
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

}  // namespace simpact::bullet
