// simpact::bullet — the impact phase for Featherstone multibodies
// (btMultiBodyDynamicsWorld). MultiBodyImpactSolver IS a
// btMultiBodyConstraintSolver (what the world takes): it resolves the
// impacts of a batch with a core law and then hands the whole batch to a
// BASE multibody solver that it owns (sustained contact, friction, joint
// limits, motors, btMultiBodyConstraints, rigid joints):
//
//     btMultiBodyDynamicsWorld world(&dispatcher, &broadphase, &stock, &collision_config);
//     simpact::bullet::MultiBodyImpactSolver solver(world, config);
//
// The constructor installs the solver in `world` (setMultiBodyConstraintSolver)
// and the destructor gives the world back the solver it had (`stock` above),
// so a MultiBodyImpactSolver is never without its world (see "Step order":
// it needs the world for the pre-force snapshot and gravity).
//
// ── The base solver (MultiBodyImpactSolverConfig::base) ─────────────────────
//   kSequentialImpulse  Bullet's btMultiBodyConstraintSolver (the default);
//   kMlcpDantzig        btMultiBodyMLCPConstraintSolver with btDantzigSolver;
//   kMlcpLemke          btMultiBodyMLCPConstraintSolver with btLemkeSolver.
// The adapter creates and owns the base (and its MLCP interface); set_config
// with another kind replaces it (between steps). btMultiBodyDynamicsWorld
// calls prepareSolve, solveMultiBodyGroup (per batch, through its island
// callback) and allSolved on the solver it was given; the adapter forwards
// each of them, and reset(), to the base, and copies the base's
// m_analyticsData back after each batch (the island callback reads it from
// the solver it holds). The adapter's own inherited btSequentialImpulse-
// ConstraintSolver state is not used: configure the base through
// base_solver() (e.g. btMultiBodyMLCPConstraintSolver::getNumFallbacks — an
// MLCP that fails falls back to sequential-impulse iterations silently).
// getSolverType() stays btMultiBodyConstraintSolver's (BT_SEQUENTIAL_IMPULSE_
// SOLVER) whatever the base. solveGroup (the
// rigid-only entry point btMultiBodyConstraintSolver documents as "should
// not be called") is not forwarded and has no impact phase.
// Every base builds its contact rows through btMultiBodyConstraintSolver's
// setup (btMultiBodyMLCPConstraintSolver::solveGroupCacheFriendlySetup calls
// it, then turns the rows' right-hand sides into its MLCP), so restitution
// off via m_combinedRestitution (stage 5) holds for each of them.
//
// ── What one solveMultiBodyGroup call does ─────────────────────────────────
//  1. Contact points touching (distance ≤ touch_tolerance) or closing within
//     the step are collected from the batch's manifolds. A side of a point is
//     a NODE when it moves under impulses: a dynamic rigid body, or a
//     btMultiBodyLinkCollider whose multibody has a free coordinate reaching
//     it (see "Generalized velocities"). Static and kinematic rigid bodies,
//     and fixed/kinematic bases, are infinitely massive partners. When one
//     strikes, pairs within a small gap that Bullet gave no point (links
//     placed by a loop) join as synthetic points, as in ImpactSolver
//     (impact_solver.h, stage 1; plugin/src/bullet/proximity.h).
//  2. Union–find over nodes (through contacts, and through enabled rigid
//     btTypedConstraints) gives clusters; a whole multibody is one node.
//  3. Plan: a cluster with a contact approaching faster than its strike
//     threshold (measured on the PRE-force velocities, see "Step order";
//     ImpactSettings::sustained_threshold for a point of a manifold that
//     carried load in the last base solve) is an impact; its restitution is
//     the smallest m_combinedRestitution of its striking points, and its
//     law follows ImpactSettings::law exactly as in the rigid adapter
//     (impact_solver.h, "Laws" and "Cluster cap": propagative, Routh, or
//     auto's choice and blend by friction and R).
//     Plan, law and fallback reports are the rigid adapter's own stages
//     (plugin/src/bullet/cluster_stages.h).
//  4. Assemble the cluster's rows in generalized coordinates (below) and
//     resolve it with the planned law.
//  5. Only if every check passed ("Never fail the host"): generalized
//     velocities are written back, overlap the impact leaves closed is
//     removed at position level ("Deviations and limitations"); the
//     resolved points' warm start is cleared and their penetration is not
//     pushed out in this step (m_distance1 clamped to 0), and the points the
//     impact leaves separating faster than the threshold are hidden from the
//     base solve, as in the rigid adapter.
//  6. Hand off: every point the base solver sees has m_combinedRestitution
//     0 for the base solve (restored right after), as in the rigid adapter:
//     the laws resolved every impact, and a sustained contact gets no bounce
//     (Bullet's multibody rows measure restitution on post-force velocities:
//     a resting link at 30 Hz, g·h = 0.33 m/s, would bounce). The manifolds
//     of failed clusters keep Bullet's restitution.
//  7. The base solver's solveMultiBodyGroup runs on the batch.
//
// ── Generalized velocities (cluster layout) ─────────────────────────────────
//   multibody with a free base: its whole velocity vector
//       [ω_base (world), v_base (world), q̇_0 … q̇_{n−1}]   (6 + n)
//   multibody with a fixed or kinematic base (hasFixedBase /
//       isBaseStaticOrKinematic): only q̇ (n); the base part of every row
//       times the base velocity goes into the offset b (zero for a fixed
//       base, the prescribed motion for a kinematic one);
//   rigid body: [v, ω] (6, world), as impact_solver.h.
//   Blocks are concatenated in the order MultiBodyImpactReport lists the
//   multibodies, then the rigid bodies.
//
// ── Symbols and sign convention (impact_problem.h) ──────────────────────────
//   n̂  = m_normalWorldOnB, from body B toward body A.
//   J  row of a contact: on a multibody side, Bullet's own contact Jacobian
//        fillContactJacobianMultiDof(link, point, ±n̂) (A: point on A, +n̂;
//        B: point on B, −n̂) restricted to the free coordinates; on a rigid
//        side [n̂, r × n̂] / [−n̂, −(r × n̂)] (r from the centre of mass).
//        u = J v + b > 0 SEPARATES, u < 0 approaches.
//   M⁻¹ block of a multibody: column k = calcAccelerationDeltasMultiDof(e_k)
//        — the articulated-body algorithm with this step's cache, i.e. the
//        exact inverse of the joint-space mass matrix at the current
//        configuration — restricted to the free coordinates and symmetrized
//        (½(A + Aᵀ); the ABA is symmetric to rounding, kAbaAsymmetryTolerance
//        bounds what is accepted). Rigid blocks as the rigid adapter
//        (joint-constrained metric M⁻¹_G when rigid joints bind the cluster).
//   W = J M⁻¹ Jᵀ is therefore exact in generalized coordinates.
//   E = ½ vᵀ (M⁻¹)⁺ v, the cluster's kinetic energy.
//
// ── Step order (the external-force increment) ───────────────────────────────
// When the solver runs, a multibody's velocity ALREADY holds this step's
// increment Δ_mb = h M⁻¹(τ − C q̇ − damping) (btMultiBodyDynamicsWorld::
// solveExternalForces ran the ABA with dt = h), while a rigid body's velocity
// does NOT hold h M⁻¹ f_ext (Bullet's SI adds it). The rule here is the
// rigid adapter's, applied to both:
//   * DETECTION on the pre-force velocity: the multibody's velocity vector is
//     snapshotted in prepareSolve — which btMultiBodyDynamicsWorld calls after
//     forwardKinematics and BEFORE adding gravity and stepping velocities —
//     and the rigid body's current velocity is pre-force anyway. A resting
//     contact is not an impact, whatever gravity does during the step.
//   * RESOLUTION on the mid-step velocity v* = v_pre + ½ Δ:
//       multibody: v* = ½ (v_pre + v_post), v_post the current velocity;
//       rigid:     v* = v + ½ h M⁻¹ f_ext, its coordinates along an axis
//                  whose linear or angular factor is 0 set to 0 (no impulse
//                  changes them; they pass through, as in impact_solver.h).
//   * WRITE-BACK of the change δ = v⁺ − v*:
//       multibody: v_post + δ (the base solver adds nothing more);
//       rigid:     v + δ (the base solver then adds h M⁻¹ f_ext).
//   Both bodies of a mixed cluster thus enter the law at the same instant
//   (mid-step) and leave it with the same end-of-step accounting, so momentum
//   exchanged between them is consistent; an elastic impact conserves the
//   symplectic-Euler shadow energy, as explained in impact_solver.h. A
//   multibody without a snapshot (one the world did not hold when the step
//   began) is not resolved: its cluster is reported (law kBaseSolver,
//   message says why), counted in fallbacks_to_base, and keeps Bullet's
//   restitution. (Bullet's multibody solver measures restitution on
//   post-force velocities; simpact does not.)
//
// ── Joints and multibody constraints ────────────────────────────────────────
//   * Link joints of every btMultibodyLink type (revolute, prismatic,
//     spherical, planar, fixed) are exact by construction: the impact lives
//     in the generalized velocities and the ABA metric. Links of one
//     multibody striking each other (btMultiBody::setHasSelfCollision) are
//     contacts whose two sides are the same node; multibody–rigid clusters
//     are resolved together (layout above). Tested per joint type against
//     the closed-form 1-D outcome, and each btMultiBodyConstraint kind
//     (tests/bullet/multibody_robustness_test.cpp).
//   * Single-joint limits and motors (btMultiBodyJointLimitConstraint,
//     btMultiBodyJointMotor, btMultiBodySphericalJointMotor,
//     btMultiBodySphericalJointLimit) are sustained constraints: the impact
//     is resolved without them and the base solver enforces them in the
//     same step (a limit reached during the impact acts as a plastic stop
//     after it; a motor pulls toward its target within its impulse cap).
//   * btMultiBodyPoint2Point, btMultiBodyFixedConstraint and
//     btMultiBodySliderConstraint BETWEEN TWO MULTIBODIES (or two links of
//     one) enter the impact metric exactly: their rows G are Bullet's own
//     (createConstraintRows, each multibody's companion id saved and
//     restored around it), the coupled multibodies join one cluster (a
//     partner that touches nothing is pulled in), and the cluster's metric
//     is M⁻¹_G = M⁻¹ − M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁺G M⁻¹ (pseudo-inverse on the row-scaled
//     Gram matrix, kCouplingRankTolerance in the source; redundant rows are
//     harmless). Bullet's constraints are soft, so v* may violate them: it is
//     first projected M-orthogonally onto G v + c = 0 (the plastic
//     correction, which never adds energy; c is the part of the rows on
//     fixed or kinematic coordinates), and δ = v⁺ − v* includes that
//     correction. The constraint's impulse cap (m_maxAppliedImpulse) is not
//     modelled in the impact: the coupling is rigid there. A constraint
//     whose cap is 0 (Bullet bounds its rows to [0, 0]: it does nothing) is
//     ignored, whatever its kind.
//   * Rigid bodies of the cluster jointed by btTypedConstraints: the
//     joint-constrained metric (bilateral rows, as impact_solver.h), and v*
//     projected onto the joints first, as for couplings. A cluster jointed
//     to a MOVING kinematic body falls back (its offset is not modelled).
//   * btMultiBodyGearConstraint (its target velocity may follow an
//     auxiliary link it does not expose), the three kinds above when their
//     partner is a rigid body or the world (Bullet's rows for those need its
//     solver-body pool), and any btMultiBodyConstraint of a type not listed
//     here are NOT in the impact metric. A cluster one of them binds (a
//     multibody of the cluster is its A or B; or, for one whose partner is a
//     rigid body, a rigid body of the cluster is in that partner's simulation
//     island — conservative) falls back to the base solver with Bullet's
//     restitution (see "Never fail the host"), and its report names the
//     constraint type.
//
// ── Never fail the host ─────────────────────────────────────────────────────
// Nothing simpact does escapes solveMultiBodyGroup: each cluster is resolved
// under a catch of std::exception and of anything else, and so is the batch's
// point collection. A cluster FAILS when its law returns any status other
// than kSuccess (a reflection cap, infeasible, LCP failure, Routh's step
// limit: whatever the law's own fallback would have applied), when it
// throws, when its input (velocities, ABA metric, rows, restitution,
// friction) or its outcome is not finite or exceeds Bullet's coordinate
// velocity clamp ("Deviations"), when its outcome would raise the energy of
// a cluster no impact may give energy to (no moving partner or coupling:
// status kEnergyGain, beyond kClusterEnergyGainTolerance of E(v*), 1e-8 in
// double and 1.2e-4 in float, in the law's metric), when a btMultiBodyConstraint
// above binds it, or without a snapshot ("Step order"). A failed cluster gets
// NOTHING from the impact phase — resolve() writes velocities and turns
// restitution off only after every check passed, with operations that
// cannot throw — and for this step it is handed to the base solver with
// Bullet's own restitution. Its report says which cluster (multibodies,
// rigid bodies, contacts), why (status, message) and which fallback
// (fallback_to_base, law kBaseSolver, attempted_law);
// MultiBodyImpactStats::fallbacks_to_base counts it. An exception from
// on_impact is caught (MultiBodyImpactStats::callback_exceptions); the
// impact it reported stands. Bullet's own solvers do not throw (its
// allocator returns null), so the base solve is not wrapped.
//
// ── Deviations and limitations (reasons: docs/multibody_adapter.md) ─────────
//   * Kinematic links are not special-cased; rows with no free coordinate
//     are dropped (kZeroRowTolerance).
//   * An outcome with a coordinate beyond btMultiBody::
//     getMaxCoordinateVelocity() (Bullet would clamp it) is not written:
//     the cluster falls back ("Never fail the host").
//   * Overlaps the outcome leaves closed are removed at position level in
//     the impact step, q ⊕ M⁻¹_G Jᵀμ with the least μ ≥ 0, W μ ≥ depth
//     (core/separation.h, shared with the rigid adapter), through
//     btMultiBody::stepPositionsMultiDof; no velocity changes.
//   * Routh's tangent rows: t1 along the mid-step slip, else btPlaneSpace1's
//     frame; t2 = n̂ × t1.
#pragma once

#include <simpact/bullet/impact_solver.h>
#include <simpact/propagative.h>
#include <simpact/routh.h>

#include <Eigen/Core>

#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class btMultiBody;
class btMultiBodyDynamicsWorld;
class btRigidBody;

namespace simpact::bullet {

/// One resolved (or deliberately unresolved) impact of MultiBodyImpactSolver:
/// the rigid adapter's report (ImpactReport, same fields and meanings) plus
/// the multibody layout. ImpactReport::bodies and body_ids hold the
/// cluster's dynamic RIGID bodies (after the multibodies in the layout);
/// the multibodies are listed here. Energies are ½ vᵀ (M⁻¹)⁺ v in the
/// cluster's metric (mid-step v*, see "Step order"). The POINTERS
/// (multibodies, bodies, Contact::a, Contact::b) are valid only inside the
/// on_impact callback: Bullet may delete or move the objects afterwards. To
/// identify bodies later use the IDS (multibody_ids, body_ids, and the
/// contacts' ids), plain ints safe to keep.
struct MultiBodyImpactReport : ImpactReport {
  std::vector<const btMultiBody*> multibodies;  ///< cluster layout order, then the rigid `bodies`
  /// Index of each multibody in the world's multibody array
  /// (btMultiBodyDynamicsWorld::getMultiBody(i)) at the impact. Same order
  /// as `multibodies`.
  std::vector<int> multibody_ids;
  std::vector<int> offsets;  ///< first coordinate of each node's block (multibodies, then rigid)
  Eigen::VectorXd velocity_before;  ///< v*, mid-step, cluster layout
  Eigen::VectorXd velocity_after;   ///< v⁺ (empty when not resolved)
  Eigen::MatrixXd normals;          ///< J (m × n)
  Eigen::VectorXd normal_offsets;   ///< b (m)
};

/// One cluster's approximated Routh outcome set, from
/// MultiBodyImpactSolver::predict_outcome_sets: what the NEXT step's impact
/// phase would see, in its cluster layout (header, "Generalized
/// velocities"). Velocities are mid-step (v*, after the projections onto
/// couplings and joints, "Step order"): the impact maps `velocity` to a
/// column of `set.velocities`, and the step writes δ = v⁺ − v* on top of its
/// post-force velocities.
struct MultiBodyPredictedImpact {
  std::vector<const btMultiBody*> multibodies;  ///< layout order, then the rigid `bodies`
  std::vector<const btRigidBody*> bodies;       ///< the cluster's dynamic rigid bodies
  std::vector<int> offsets;  ///< first coordinate of each node's block (multibodies, then rigid)
  std::vector<ImpactReport::Contact> contacts;  ///< rows of the problem (impulses 0)
  /// What the next step applies to this cluster (as ImpactReport::law).
  /// With kRouth, the next step applies exactly sample 0 of `set`, unless
  /// sample 0 gains energy by rounding: then the step's "restore energy"
  /// stage scales its change by at most 1e-8 (docs/pipeline.md, stage 5).
  AppliedLaw law = AppliedLaw::kPropagative;
  double restitution = 1.0;
  std::uint64_t sample_seed = 0;  ///< the Routh seed the next step uses
  Eigen::VectorXd velocity;       ///< v*, mid-step, before the impact (cluster layout)
  /// false when the cluster has more than RouthSettings::max_contacts
  /// contacts or cannot be assembled (then `set` is empty and `message`
  /// says why).
  bool sampled = false;
  std::string message;
  RouthOutcomeSet set;  ///< Algorithm 2; velocities: n × M
};

/// The base multibody solver that runs after the impact phase (header, "The
/// base solver").
enum class MultiBodyBaseSolver {
  kSequentialImpulse,  ///< btMultiBodyConstraintSolver (default)
  kMlcpDantzig,        ///< btMultiBodyMLCPConstraintSolver + btDantzigSolver
  kMlcpLemke,          ///< btMultiBodyMLCPConstraintSolver + btLemkeSolver
};

/// "sequential_impulse", "mlcp_dantzig", "mlcp_lemke" ("unknown" otherwise).
const char* to_string(MultiBodyBaseSolver base);
/// The inverse of to_string; throws std::invalid_argument for another name.
MultiBodyBaseSolver parse_multibody_base_solver(const std::string& name);

struct MultiBodyImpactSolverConfig : ImpactSettings {
  // ImpactSettings: the same meanings as in ImpactSolverConfig;
  // impact_threshold negative = automatic, with |g| of the world for
  // multibodies and the body's gravity for rigid bodies.
  /// Bullet solver the batch goes to after the impact phase.
  MultiBodyBaseSolver base = MultiBodyBaseSolver::kSequentialImpulse;
  std::function<void(const MultiBodyImpactReport&)> on_impact;
};

/// Throws std::invalid_argument naming the first bad field (the shared
/// settings as validate(ImpactSettings), plus: base a MultiBodyBaseSolver
/// value).
void validate(const MultiBodyImpactSolverConfig& config);

/// Largest relative asymmetry max|A − Aᵀ| / max|A| of an ABA-built M⁻¹
/// block accepted. The ABA evaluates each column by a different sequence of
/// btScalar operations: asymmetry ~1e-16 (double) or ~1e-7 (float) relative
/// times the tree depth; 1e-3 is four orders above float rounding and flags
/// only a stale or broken articulated-body cache (then the cluster is left
/// to the base solver with a message).
inline constexpr double kAbaAsymmetryTolerance = 1e-3;

/// A contact row whose largest absolute entry on the cluster's free
/// coordinates is at most this value is zero (the contact touches only
/// fixed or kinematic coordinates) and is dropped. Absolute, in the row's
/// units: an entry is a component of the unit normal (translational
/// coordinates, dimensionless) or a lever arm projected on it (rotational
/// and joint coordinates, m), so 1e-9 is a lever arm under a nanometre —
/// far above the rounding of O(1) entries in double (~1e-16), and far
/// below any genuine lever arm of a body of millimetre size or more.
inline constexpr double kZeroRowTolerance = 1e-9;

/// The rigid adapter's counters, same type and meanings (ImpactStats).
using MultiBodyImpactStats = ImpactStats;

class MultiBodyImpactSolver : public btMultiBodyConstraintSolver {
 public:
  /// Installs this solver in `world` (setMultiBodyConstraintSolver),
  /// keeping the world's previous multibody solver to give it back on
  /// destruction. The world is not owned and must outlive the solver.
  /// Throws std::invalid_argument (validate) before touching the world.
  explicit MultiBodyImpactSolver(btMultiBodyDynamicsWorld& world, MultiBodyImpactSolverConfig config = {});
  /// Gives the world back the multibody solver it had before, if this one
  /// is still installed.
  ~MultiBodyImpactSolver() override;
  MultiBodyImpactSolver(const MultiBodyImpactSolver&) = delete;
  MultiBodyImpactSolver& operator=(const MultiBodyImpactSolver&) = delete;

  btMultiBodyDynamicsWorld& world() const;

  void prepareSolve(int num_bodies, int num_manifolds) override;
  void solveMultiBodyGroup(btCollisionObject** bodies, int num_bodies,
                           btPersistentManifold** manifolds, int num_manifolds,
                           btTypedConstraint** constraints, int num_constraints,
                           btMultiBodyConstraint** multibody_constraints,
                           int num_multibody_constraints, const btContactSolverInfo& info,
                           btIDebugDraw* debug_drawer, btDispatcher* dispatcher) override;
  void allSolved(const btContactSolverInfo& info, btIDebugDraw* debug_drawer) override;
  void reset() override;

  const MultiBodyImpactSolverConfig& config() const { return config_; }
  /// Throws std::invalid_argument (validate) and keeps the old config then.
  /// A different `base` kind replaces the base solver (a fresh instance).
  void set_config(MultiBodyImpactSolverConfig config);
  /// The owned base solver (its kind: config().base); a
  /// btMultiBodyMLCPConstraintSolver for the MLCP kinds.
  btMultiBodyConstraintSolver& base_solver();
  const btMultiBodyConstraintSolver& base_solver() const;
  const MultiBodyImpactStats& stats() const { return stats_; }

  /// The Routh outcome set of every impact cluster the next step of the
  /// world would resolve (Halm & Posa's Algorithm 2, RouthSampler::
  /// approximate with `set`), whatever the configured law: the world's
  /// collision detection runs now, each awake multibody's velocities are
  /// stepped by its forces and the world's gravity exactly as
  /// btMultiBodyDynamicsWorld::solveExternalForces does (the articulated-
  /// body algorithm over `time_step`), rigid bodies are read as the step's
  /// solver will see them (damped, with gravity), and the clusters are
  /// planned and assembled by the step's own stages; then every velocity,
  /// force and torque is given back, bit for bit. Side effects as
  /// ImpactSolver::predict_outcome_sets (manifolds refreshed; each
  /// multibody's articulated-body cache holds the predicted step's, which
  /// the step recomputes). With law kRouth and the same `time_step`, the
  /// next stepSimulation applies sample 0 of each set. Multibodies using
  /// RK4 integration are stepped by the ABA here, not by RK4. Throws
  /// std::invalid_argument for time_step ≤ 0 or not finite, or bad `set`.
  std::vector<MultiBodyPredictedImpact> predict_outcome_sets(btScalar time_step,
                                                             const RouthSetParameters& set = {});

  struct Impl;  ///< opaque

 private:
  MultiBodyImpactSolverConfig config_;
  MultiBodyImpactStats stats_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace simpact::bullet
