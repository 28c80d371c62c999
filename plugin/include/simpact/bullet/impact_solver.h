// simpact::bullet — an impact phase in front of any stock Bullet constraint
// solver. Two lines put it into an existing btDiscreteDynamicsWorld:
//
//     simpact::bullet::ImpactSolver solver(&stock_solver);   // e.g. btSequentialImpulseConstraintSolver
//     world.setConstraintSolver(&solver);
//
// What happens in every solveGroup call (Bullet may call it several times per
// step, once per batch of islands):
//  1. Contact points touching (distance ≤ touch_tolerance), or closing within
//     this step (distance + u·h ≤ touch_tolerance), between a dynamic body and
//     a dynamic, static or kinematic one, are collected.
//  2. Union–find over dynamic bodies, through those contacts and through
//     enabled joints, gives impact clusters. Static and kinematic bodies never
//     join clusters: they are infinitely massive.
//  3. A cluster with a contact approaching faster than the impact threshold is
//     an impact. Its problem for the core (impact_problem.h):
//       v  = [v_A, ω_A, v_B, ω_B, …] (6 per dynamic body, world frame, SI);
//       M⁻¹ = blockdiag(D_l m⁻¹ D_l, D_a I⁻¹_world D_a), D = diag(linear or
//             angular factor) — exact for linear factors 0/1 and for angular
//             locks about principal axes of the body's inertia (2-D bodies
//             turning about z, fully locked or free rotation); a tilted body
//             with a partial angular lock would need D (D I D)⁺ D instead
//             (Bullet's own solver applies D² I⁻¹, a third form);
//       J row of contact (A, B) with normal n = m_normalWorldOnB (from B to A):
//             [n, r_A × n] on A and [−n, −(r_B × n)] on B, so J v > 0 separates
//             (r = contact point − centre of mass);
//       b  = −n·(v_K + ω_K × r_K) for a kinematic body K on the B side (and
//             the opposite sign on the A side): the impact conserves energy in
//             the kinematic body's frame.
//     Bilateral joints (btTypedConstraint rows with infinite bounds, G) are
//     kept intact by resolving in the joint-constrained metric
//             M⁻¹_G = M⁻¹ − M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ G M⁻¹,
//     the inverse inertia of the system with its joints locked in.
//  4. The core law resolves it; velocities are written back and the warm
//     start of its contact points is cleared.
//  5. The base solver then runs on the whole batch with restitution off
//     (m_restitutionVelocityThreshold = ∞). Points the impact left separating
//     are hidden from it for this call (some base solvers, e.g. MLCP with
//     btLemkeSolver, would apply adhesive impulses to them), and impacted
//     points are not pushed out of penetration (that would add energy). It
//     handles sustained contact, friction, joints and penetration recovery.
//
// Restitution of a cluster: the smallest m_combinedRestitution among its
// contacts approaching faster than the threshold (Bullet's default combiner
// multiplies the two bodies' restitutions). The smallest never makes an
// impact livelier than its least elastic striking material allows.
//
// External forces: when solveGroup runs, a rigid body's velocity v does NOT
// yet include this step's force increment h M⁻¹ f_ext (the base solver adds
// it). Impacts are DETECTED on v (a resting contact is not approaching,
// whatever gravity does during the step) and RESOLVED on the mid-step
// velocity v* = v + ½ h M⁻¹ f_ext; the change v⁺ − v* is added to v. Bullet
// integrates with symplectic Euler, which conserves the shadow energy
// ½vᵀMv − fᵀx + ½h fᵀv between impacts; an elastic impact on v* conserves it
// too, so a ball dropped with R = 1 keeps its bounce height. (Resolving v
// loses h|g| of rebound speed per bounce; the end-of-step velocity gains it.)
// Points of a resolved impact are not pushed out of penetration in that step:
// the impact's velocities separate them, and a push-out would add potential
// energy at every bounce.
#pragma once

#include <simpact/propagative.h>

#include <BulletDynamics/ConstraintSolver/btConstraintSolver.h>
#include <LinearMath/btVector3.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class btCollisionObject;
class btPersistentManifold;
class btTypedConstraint;
struct btContactSolverInfo;

namespace simpact::bullet {

/// One resolved impact, passed to ImpactSolverConfig::on_impact.
struct ImpactReport {
  std::vector<const btCollisionObject*> bodies;  ///< dynamic bodies of the cluster
  struct Contact {
    const btCollisionObject* a = nullptr;  ///< Bullet's body 0 of the manifold
    const btCollisionObject* b = nullptr;  ///< body 1 (may be static/kinematic)
    double approach_speed = 0.0;           ///< −u before the impact, as resolved (mid-step) [m/s]
    double impulse = 0.0;                  ///< λ [N·s]
    btVector3 point_on_a{0, 0, 0};         ///< world contact point on a [m]
    btVector3 point_on_b{0, 0, 0};         ///< world contact point on b [m]
    btVector3 normal{0, 0, 0};             ///< unit normal from b to a
  };
  std::vector<Contact> contacts;
  const char* law = "propagative";
  double restitution = 1.0;
  std::vector<int> sequence;      ///< contacts reflected (indices into contacts)
  double energy_before = 0.0;     ///< kinetic energy of the cluster [J]
  double energy_after = 0.0;
  Status status = Status::kSuccess;
  std::string message;
  std::optional<double> indeterminacy;  ///< when compute_indeterminacy
};

struct ImpactSolverConfig {
  /// Order policy of the propagative law (propagative.h). kAll is not an
  /// order: use compute_indeterminacy to measure the spread of outcomes.
  OrderPolicy policy = OrderPolicy::kMostNegative;
  std::uint64_t seed = 0;  ///< kRandom: each impact draws from seed and a counter.
  /// Contacts approaching slower than this are sustained contact (no bounce).
  /// [m/s]; negative = automatic: max(kThresholdGravitySteps · |g| · h,
  /// kMinimumImpactThreshold), |g| the largest gravity of the cluster's
  /// bodies and h the step. A resting contact's pre-force approach speed is
  /// at most the solver residual of the last step, a small fraction of |g|h;
  /// a quarter of |g|h is above that yet far below Bullet's 0.2 m/s
  /// (60 Hz: 0.041 m/s; 240 Hz: 0.010 m/s; 6 kHz: 0.0004 m/s).
  double impact_threshold = -1.0;
  /// Points at most this far apart count as touching [m]. Bullet reports
  /// touching spheres at distance ≤ 0 and convex pairs up to its 0.02 m
  /// breaking threshold; 1 mm accepts resting contacts without turning
  /// nearby-but-open pairs into impacts.
  double touch_tolerance = 1e-3;
  /// Reflection cap per impact; 0 = automatic (propagative.h).
  std::int64_t max_reflections = 0;
  /// Also enumerate every outcome (policy kAll) to report the indeterminacy
  /// ξ; costs one more resolution per impact. The applied outcome is still
  /// the one of `policy`.
  bool compute_indeterminacy = false;
  /// Resolve clusters whose restitution is 0 with the core's plastic law. Off
  /// by default: a plastic impact is the LCP the base solver solves anyway
  /// with restitution off (Moreau's projection, approximated by its
  /// iterations), and in piles of resting boxes the touching contacts merge
  /// dozens of bodies into one cluster whose exact LCP costs far more than a
  /// step (benchmark_vs_stock, box pile). Turn it on for exact plastic
  /// outcomes in small systems.
  bool resolve_plastic_impacts = false;
  /// Route every penetration through split impulse in the base solver
  /// (m_splitImpulsePenetrationThreshold = +∞), so position correction never
  /// changes real velocities. Off by default, a deliberate deviation: Bullet's
  /// split impulse (erp2) makes a 5-box stack creep ~10× more than its default
  /// Baumgarte correction of shallow penetrations, and the points simpact
  /// resolves are already protected (no push-out in the impact step). The
  /// energy figures of the cradle demo and tests hold either way.
  bool split_impulse_for_all_penetrations = false;
  /// Called for every resolved impact (in the solver's thread).
  std::function<void(const ImpactReport&)> on_impact;
};

inline constexpr double kThresholdGravitySteps = 0.25;
/// Floor of the automatic threshold for gravity-free scenes [m/s]: the
/// velocity noise of a resting contact without gravity is rounding,
/// ~1e-12 m/s; 1e-6 m/s is far above it and far below any real strike.
inline constexpr double kMinimumImpactThreshold = 1e-6;

struct ImpactSolverStats {
  std::int64_t solve_calls = 0;
  std::int64_t impacts = 0;           ///< clusters resolved
  std::int64_t reflections = 0;
  std::int64_t fallbacks = 0;         ///< impacts whose status was not success
};

class ImpactSolver : public btConstraintSolver {
 public:
  /// `base` is not owned and must outlive this solver.
  explicit ImpactSolver(btConstraintSolver* base, ImpactSolverConfig config = {});
  ~ImpactSolver() override;

  void prepareSolve(int num_bodies, int num_manifolds) override;
  btScalar solveGroup(btCollisionObject** bodies, int num_bodies, btPersistentManifold** manifolds,
                      int num_manifolds, btTypedConstraint** constraints, int num_constraints,
                      const btContactSolverInfo& info, btIDebugDraw* debug_drawer,
                      btDispatcher* dispatcher) override;
  void allSolved(const btContactSolverInfo& info, btIDebugDraw* debug_drawer) override;
  void reset() override;
  btConstraintSolverType getSolverType() const override;

  const ImpactSolverConfig& config() const { return config_; }
  void set_config(ImpactSolverConfig config);
  const ImpactSolverStats& stats() const { return stats_; }
  btConstraintSolver* base() const { return base_; }

  struct Impl;  ///< opaque

 private:
  btConstraintSolver* base_;
  ImpactSolverConfig config_;
  ImpactSolverStats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace simpact::bullet
