// simpact — Bullet's btNNCGConstraintSolver with its conjugate direction in
// impulse units.
//
// btNNCGConstraintSolver (Silcowitz, Niebe & Erleben's nonsmooth nonlinear
// conjugate gradient over Bullet's PGS) builds its direction p and its
// Fletcher–Reeves beta from the values resolveSingleConstraintRow* return,
// and adds beta·p to m_appliedImpulse as an impulse. Since Bullet 2.85 those
// functions return deltaImpulse / m_jacDiagABInv = deltaImpulse · J M⁻¹ Jᵀ,
// a velocity residual (for the least-squares termination), not the impulse
// increment. The momentum step is therefore scaled by J M⁻¹ Jᵀ per row:
// ×1e-3 (no acceleration) on a 1000 kg body, ×100 (overshoot) on a 0.01 kg
// one, in kg⁻¹ so not even unit-consistent. On joint-bound worlds with mass
// ratios of 1e3–1e5 the stock solver multiplies kinetic energy by 1e2–1e7
// in single steps with no contact at all, and whether a run stays finite
// is a matter of chance: fuzz_worlds seed 2026 world 3218 stays finite
// (peak 5.8e7 J from 430 J) unperturbed and reaches 2.6e37 J when one initial
// velocity is changed by 1e-9 m/s; 123 of the first 1500 worlds of seed
// 2026 go non-finite on stock Bullet (3.24, same code upstream).
//
// ImpulseNNCGConstraintSolver runs the same iteration with p and beta built
// from the applied-impulse increments (what the method prescribes) and, by
// default, the momentum step projected onto each row's bounds (normal
// impulse >= 0, |friction| <= mu * normal, joint rows within [lower, upper])
// so it cannot make a contact adhesive. It returns Bullet's residual for
// the termination test. Not supported: m_onlyForNoneContact (ignored) and
// SOLVER_RANDMIZE_ORDER (Bullet's own rows are visited in its order; the
// flag is off by default).
// Drop-in replacement: pass it wherever btNNCGConstraintSolver was used,
// on its own or as simpact::bullet::ImpactSolver's base.
#pragma once

#include <BulletDynamics/ConstraintSolver/btNNCGConstraintSolver.h>

#include <algorithm>

namespace simpact::bullet {

class ImpulseNNCGConstraintSolver : public btNNCGConstraintSolver {
 public:
  /// project: keep the momentum step inside each row's bounds (see above).
  explicit ImpulseNNCGConstraintSolver(bool project = true) : project_(project) {}

 protected:
  btScalar solveSingleIteration(int iteration, btCollisionObject** /*bodies*/, int /*numBodies*/,
                                btPersistentManifold** /*manifoldPtr*/, int /*numManifolds*/,
                                btTypedConstraint** constraints, int numConstraints,
                                const btContactSolverInfo& infoGlobal,
                                btIDebugDraw* /*debugDrawer*/) override {
    const bool proj = project_;
    const int nNC = m_tmpSolverNonContactConstraintPool.size();
    const int nC = m_tmpSolverContactConstraintPool.size();
    const int nCF = m_tmpSolverContactFrictionConstraintPool.size();
    const int nCRF = m_tmpSolverContactRollingFrictionConstraintPool.size();
    const bool contacts_now = iteration < infoGlobal.m_numIterations;

    btScalar residual = 0;  // Bullet's (velocity units), returned for termination
    btScalar inc2 = 0;      // what beta is built from
    auto row = [&](btSolverConstraint& c, bool lower_only) -> btScalar {
      const btScalar before = c.m_appliedImpulse;
      const btScalar deltaf =
          lower_only ? resolveSingleConstraintRowLowerLimit(m_tmpSolverBodyPool[c.m_solverBodyIdA],
                                                            m_tmpSolverBodyPool[c.m_solverBodyIdB], c)
                     : resolveSingleConstraintRowGeneric(m_tmpSolverBodyPool[c.m_solverBodyIdA],
                                                         m_tmpSolverBodyPool[c.m_solverBodyIdB], c);
      residual += deltaf * deltaf;
      const btScalar d = btScalar(c.m_appliedImpulse) - before;  // impulse increment
      inc2 += d * d;
      return d;
    };

    for (int j = 0; j < nNC; j++) {
      const int i = m_orderNonContactConstraintPool[j];
      btSolverConstraint& c = m_tmpSolverNonContactConstraintPool[i];
      if (iteration < c.m_overrideNumSolverIterations) m_deltafNC[i] = row(c, false);
    }
    if (contacts_now) {
      for (int j = 0; j < numConstraints; j++) {
        if (constraints[j]->isEnabled()) {
          int a = getOrInitSolverBody(constraints[j]->getRigidBodyA(), infoGlobal.m_timeStep);
          int b = getOrInitSolverBody(constraints[j]->getRigidBodyB(), infoGlobal.m_timeStep);
          constraints[j]->solveConstraintObsolete(m_tmpSolverBodyPool[a], m_tmpSolverBodyPool[b],
                                                  infoGlobal.m_timeStep);
        }
      }
      for (int j = 0; j < nC; j++) {
        const int i = m_orderTmpConstraintPool[j];
        m_deltafC[i] = row(m_tmpSolverContactConstraintPool[i], true);
      }
      for (int j = 0; j < nCF; j++) {
        const int i = m_orderFrictionConstraintPool[j];
        btSolverConstraint& f = m_tmpSolverContactFrictionConstraintPool[i];
        const btScalar total = m_tmpSolverContactConstraintPool[f.m_frictionIndex].m_appliedImpulse;
        if (total > btScalar(0)) {
          f.m_lowerLimit = -(f.m_friction * total);
          f.m_upperLimit = f.m_friction * total;
          m_deltafCF[i] = row(f, false);
        } else {
          m_deltafCF[i] = 0;
        }
      }
      for (int j = 0; j < nCRF; j++) {
        btSolverConstraint& r = m_tmpSolverContactRollingFrictionConstraintPool[j];
        const btScalar total = m_tmpSolverContactConstraintPool[r.m_frictionIndex].m_appliedImpulse;
        if (total > btScalar(0)) {
          btScalar mag = r.m_friction * total;
          if (mag > r.m_friction) mag = r.m_friction;
          r.m_lowerLimit = -mag;
          r.m_upperLimit = mag;
          m_deltafCRF[j] = row(r, false);
        } else {
          m_deltafCRF[j] = 0;
        }
      }
    }

    if (iteration == 0) {
      for (int i = 0; i < nNC; i++) m_pNC[i] = m_deltafNC[i];
      for (int i = 0; i < nC; i++) m_pC[i] = m_deltafC[i];
      for (int i = 0; i < nCF; i++) m_pCF[i] = m_deltafCF[i];
      for (int i = 0; i < nCRF; i++) m_pCRF[i] = m_deltafCRF[i];
    } else {
      const btScalar beta = m_deltafLengthSqrPrev > 0 ? inc2 / m_deltafLengthSqrPrev : 2;
      if (beta > 1) {
        for (int i = 0; i < nNC; i++) m_pNC[i] = 0;
        for (int i = 0; i < nC; i++) m_pC[i] = 0;
        for (int i = 0; i < nCF; i++) m_pCF[i] = 0;
        for (int i = 0; i < nCRF; i++) m_pCRF[i] = 0;
      } else {
        auto push = [&](btSolverConstraint& c, btScalar& p, btScalar d, btScalar lo, btScalar hi) {
          btScalar add = beta * p;
          if (proj) {
            const btScalar target = std::min(hi, std::max(lo, btScalar(c.m_appliedImpulse) + add));
            add = target - btScalar(c.m_appliedImpulse);
          }
          c.m_appliedImpulse = btScalar(c.m_appliedImpulse) + add;
          p = beta * p + d;
          btSolverBody& b1 = m_tmpSolverBodyPool[c.m_solverBodyIdA];
          btSolverBody& b2 = m_tmpSolverBodyPool[c.m_solverBodyIdB];
          b1.internalApplyImpulse(c.m_contactNormal1 * b1.internalGetInvMass(), c.m_angularComponentA, add);
          b2.internalApplyImpulse(c.m_contactNormal2 * b2.internalGetInvMass(), c.m_angularComponentB, add);
        };
        for (int i = 0; i < nNC; i++) {
          btSolverConstraint& c = m_tmpSolverNonContactConstraintPool[i];
          if (iteration < c.m_overrideNumSolverIterations)
            push(c, m_pNC[i], m_deltafNC[i], c.m_lowerLimit, c.m_upperLimit);
        }
        if (contacts_now) {
          for (int i = 0; i < nC; i++) {
            btSolverConstraint& c = m_tmpSolverContactConstraintPool[i];
            push(c, m_pC[i], m_deltafC[i], c.m_lowerLimit, BT_LARGE_FLOAT);
          }
          for (int i = 0; i < nCF; i++) {
            btSolverConstraint& f = m_tmpSolverContactFrictionConstraintPool[i];
            const btScalar total = std::max(
                btScalar(0), btScalar(m_tmpSolverContactConstraintPool[f.m_frictionIndex].m_appliedImpulse));
            push(f, m_pCF[i], m_deltafCF[i], -f.m_friction * total, f.m_friction * total);
          }
          for (int i = 0; i < nCRF; i++) {
            btSolverConstraint& r = m_tmpSolverContactRollingFrictionConstraintPool[i];
            const btScalar total = std::max(
                btScalar(0), btScalar(m_tmpSolverContactConstraintPool[r.m_frictionIndex].m_appliedImpulse));
            const btScalar mag = std::min(r.m_friction * total, r.m_friction);
            push(r, m_pCRF[i], m_deltafCRF[i], -mag, mag);
          }
        }
      }
    }
    m_deltafLengthSqrPrev = inc2;
    return residual;
  }

 private:
  bool project_;
};

}  // namespace simpact::bullet
