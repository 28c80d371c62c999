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
//     a dynamic, static or kinematic one, are collected. When one of them
//     strikes, the pairs of the struck bodies (and, transitively, of the
//     bodies they touch) that Bullet's narrowphase gave no point although
//     they are within min(contact-breaking threshold, S·h) of each other
//     (S the strike's speed; e.g. balls placed by a loop, 1e-17 m apart)
//     get Bullet's own closest-point/contact query and join as synthetic
//     points; they never enter Bullet's manifolds (plugin/src/bullet/proximity.h).
//     Policy time_of_impact orders contacts by when their gaps close.
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
//  4. The core law resolves it (ImpactSolverConfig::law, see "Laws" below);
//     velocities are written back and the warm start of its contact points
//     is cleared.
//  5. The base solver then runs on the whole batch with restitution off:
//     every visible point's m_combinedRestitution is set to 0 for the base
//     solve and restored right after (Bullet's restitutionCurve then gives 0,
//     exactly what m_restitutionVelocityThreshold = ∞ gave before), EXCEPT
//     the points of manifolds touching a failed cluster (see "Failures"),
//     which keep Bullet's own restitution. Points the impact left separating
//     are hidden from it for this call (some base solvers, e.g. MLCP with
//     btLemkeSolver, would apply adhesive impulses to them); over MLCP bases
//     so is every point of a cluster without joints whose law handled its
//     friction, with the non-closing points of its manifolds ("complete"
//     outcomes, see "Overlaps"); hidden points are put back, at their own
//     indices, right after the base solve. The base solver does not push
//     impacted points out of penetration in the real velocity (that would
//     add energy): their overlaps are cleared at position level instead
//     (see "Overlaps"). It handles sustained contact, friction, joints and
//     the penetration recovery of every other point.
//
// Restitution of a cluster: the smallest m_combinedRestitution among its
// contacts approaching faster than the threshold (Bullet's default combiner
// multiplies the two bodies' restitutions). The smallest never makes an
// impact livelier than its least elastic striking material allows.
//
// ── Laws (ImpactSolverConfig::law) ──────────────────────────────────────────
// Papers (README.md, "Papers"):
//   Seghete & Murphey 2014: Vlad Seghete and Todd D. Murphey, "A propagative
//     model of simultaneous impact: existence, uniqueness, and design
//     consequences", IEEE Transactions on Automation Science and Engineering
//     11(1), 2014; arXiv:1709.02296.
//   Halm & Posa: Mathew Halm and Michael Posa, "Set-Valued Rigid-Body
//     Dynamics for Simultaneous, Inelastic, Frictional Impacts",
//     arXiv:2103.15714.
// propagative (default): the minimal-sequence law of Seghete & Murphey 2014 on
//   the normals (propagative.h) with the cluster's restitution. It is
//   frictionless: friction is the base solver's, during the step, on the
//   points the impact leaves closed. Plastic clusters (R = 0) go to the base
//   solver unless resolve_plastic_impacts.
// routh: Halm & Posa's Routh sampling (routh.h), inelastic and frictional,
//   ONE sample per impact (RouthSampler::sample(0) with the seed below). The
//   cluster's restitution is ignored. Its rows are the normals of point 3
//   plus two orthonormal tangent rows per contact, built the same way
//   ([t, r_A × t] on A, [−t, −(r_B × t)] on B, kinematic partners as
//   offsets b_t), in the same joint-constrained metric, with μ the point's
//   m_combinedFriction (Bullet's combiner: the product of the two bodies'
//   frictions, clamped to 10; rolling, spinning and anisotropic friction
//   are not modelled). Tangent frame: t1 along the contact's pre-impact
//   (mid-step) slip when it exceeds kSlipFrameTolerance × the cluster's
//   largest approach speed — so a sliding contact slides along a vertex of
//   the polyhedral cone and its friction is the circular cone's exactly —
//   otherwise btPlaneSpace1's frame of n (in double); t2 = n × t1.
//   Cone directions RouthSettings::cone_directions (default 4: ±t1, ±t2).
// auto: per cluster,
//   * frictionless (every μ = 0) or elastic (R = 1): propagative;
//   * frictional with R = 0: routh;
//   * frictional with 0 < R < 1: v⁺ = R v_e⁺ + (1 − R) v_r⁺, v_e⁺ the
//     elastic propagative outcome and v_r⁺ the Routh sample — Seghete &
//     Murphey 2014, eq. (17), the propagative law's own restitution blend,
//     with the frictional plastic outcome in place of the frictionless one.
//     Why: it equals the propagative law at R = 1 and Routh at R = 0
//     (continuous in R); a single contact rebounds at exactly −R times its
//     approach speed (Newton), as under the propagative law; it never gains
//     energy (kinetic energy is convex and both outcomes keep or lose it);
//     every contact ends non-approaching (u_n⁺ is a convex combination of
//     two non-negative values); and the total impulse lies in every contact's
//     friction cone (tangential (1 − R) Λ_t,r with |Λ_t,r| ≤ μ Λ_n,r, normal
//     R Λ_n,e + (1 − R) Λ_n,r ≥ (1 − R) Λ_n,r). The bouncing contacts thus get
//     (1 − R) of the Routh friction impulse; "propagative with R, friction
//     to the base solver" would give them none, since the base solver never
//     sees the points an impact leaves separating. Reported as law
//     "routh_restitution".
// Cluster cap: a cluster that would go to Routh with more than
//   RouthSettings::max_contacts contacts is not sampled (each increment is a
//   dense LCP of size (3 + d) m; a pile of touching boxes merges into one
//   cluster of dozens of contacts): with R = 0 it is left to the base solver
//   (like plastic clusters under the propagative law), with R > 0 (auto
//   only) it takes the propagative law. It is reported (law "base_solver" or
//   "propagative", message saying why) and counted in
//   ImpactSolverStats::routh_oversized.
// Seeds: the sample of an impact is RouthSampler::sample(0) with seed
//   mix(mix(config.seed, step), key): `step` counts allSolved calls (one per
//   internal step of btDiscreteDynamicsWorld) and `key` is the smallest
//   btCollisionObject::getWorldArrayIndex() of the cluster's bodies — fixed
//   by the world, not by how Bullet batches islands into solveGroup calls.
//   Same seed and world → bitwise-identical simulation; another seed → other
//   samples. reset() restarts the step count. predict_outcome_sets uses the
//   same seed, so sample 0 of its set is the sample the next step applies.
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
// The base solver does not push the points of a resolved impact out of
// penetration in that step (m_distance1 is clamped to 0 for its solve): the
// impact's velocities separate them, a velocity push-out would add potential
// energy at every bounce, and what the outcome leaves closed is separated
// at position level (see "Overlaps").
//
// ── Overlaps ────────────────────────────────────────────────────────────────
// Bullet finds most impact points only after they have penetrated. Overlaps
// the outcome leaves closed are cleared at position level, Δq = M⁻¹_G Jᵀμ
// with the least μ ≥ 0 that clears them all (W μ ≥ d, complementarity; the
// LCP of core/separation.h, W in the cluster's metric), which changes no
// velocity; a point separating faster than the threshold clears its own. A
// one-sweep push would move a struck row's overlap to the next pair, and the
// base solver's Baumgarte term would then turn it into kinetic energy (+44 %
// in one fuzz world). Bodies keep their velocities while moved; an
// anisotropic body's kinetic energy then changes by O(|Δθ|) (reports give
// the energy before the move). Over MLCP bases the outcome of a cluster
// without joints, whose law handled its friction (Routh) or that has none,
// is complete: an exact base solve adds nothing at its points in this step,
// so they and its manifolds' non-closing points are hidden from the base
// solve. Bullet 3.24's btLemkeSolver inverts the MLCP matrix by Gauss–Jordan
// without pivoting (its zero-pivot guard is never applied), and on singular
// matrices (redundant manifold points, factor-locked axes) its impulses are
// arbitrary: ×19 of a step's energy on one resting point a plastic impact
// left. SI and NNCG still see those points: their pass removes the law's
// residual approach and keeps a resting pile at rest.
// In the step AFTER an impact, the contacts it left closed (resting, or
// separating slower than the threshold) are still simpact's to de-penetrate:
// a body that a plastic or Routh impact left resting turns during the step
// and dips into its partner, and the base solver's Baumgarte term would push
// it out in the real velocity, gaining energy. Their overlaps, on the pairs
// of bodies the last step's outcomes left closed and outside this step's
// resolved clusters, are cleared by the same Δq, grouped by contacts and
// joints, and the base solver sees only what the joint turn cap kept back.
// An overlap no push can clear (a body with locked rotation wedged between
// opposite faces of a mesh) is not pushed by the base solver either, and
// stays protected while it lasts. A resting pile no impact touched keeps
// Bullet's own correction (see split_impulse_for_all_penetrations).
//
// ── Joint-violating velocities ──────────────────────────────────────────────
// Pre-impact velocities may violate the cluster's bilateral joints (G v + c ≠
// 0, c the joint rows' terms of static and kinematic partners: drift the
// base solver has not removed yet, a kinematic partner that moved). The
// impact acts only on the joint-admissible part: v* is split M-orthogonally
//     v* = v_a + v_g,  v_g = M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ (G v* + c),  G v_a + c = 0,
// the law resolves v_a (contact velocities J v_a + b) in the metric M⁻¹_G,
// and v_g is added back unchanged: v⁺ = v_a⁺ + v_g. Every impulse of the
// impact changes v by M⁻¹_G Jᵀλ ∈ ker G, which is M-orthogonal to v_g, so
// the kinetic energy splits as E(v_a) + E(v_g) before and after, and the
// impact never changes (in particular never feeds) the violating part: an
// impact that keeps or loses the energy of v_a keeps or loses the total.
// The base solver's joint rows then remove the drift as they would without
// simpact. Velocity along an axis whose linear or angular factor is 0 (a
// host may set one; Bullet integrates it) is likewise no impulse's to change:
// it is left out of v_a (before the joint split) and added back unchanged —
// resolving it made the law spin a y-locked capsule up to cancel it. (Resolving v* itself in M⁻¹_G let the contacts reflect the
// violating part too: ×26 energy in one impact, issue #10.)
//
// ── Inert contacts ──────────────────────────────────────────────────────────
// A contact whose effective inverse mass in the cluster's metric,
// w = J_r M⁻¹_G J_rᵀ, is below kInertContactTolerance times its free value
// (the same row with every body free: m⁻¹ + |r × n|² λ_max(I⁻¹) per dynamic
// body, no factors, no joints) cannot move along its normal: factors lock it
// (a capsule with linear factor (1, 0, 1) resting on the ground) or joints
// do, and what is left of w is rounding residue of the metric. Impulses u/w
// on such a residue reach 1e12 N·s and feed energy. Such contacts are inert:
// they are left out of the impact (no impulse, not reported as resolved)
// and the base solver handles them as sustained contact; the count is
// ImpactSolverStats::inert_contacts. A cluster none of whose striking
// contacts is left is no impact.
//
// ── Failures ────────────────────────────────────────────────────────────────
// Nothing simpact does escapes solveGroup: every cluster's resolution runs
// under a catch of std::exception and of anything else. A cluster fails when
// its law returns a status other than success (reflection cap, infeasible,
// LCP failure, step limit: every non-success status, whatever the law's own
// fallback would have applied), throws, or its input (velocities, metric,
// rows) or outcome (velocities, position correction) is not finite. A
// failed cluster gets NOTHING from the impact phase (no velocity, position
// or warm-start change; a partial write is undone), and for this step it is
// handed to the base solver with Bullet's own restitution (point 5); its
// report says which cluster (bodies, body_ids, contacts), why (status,
// message) and which fallback (fallback_to_base, attempted_law), and
// ImpactSolverStats::fallbacks_to_base counts it. A cluster whose outcome
// would raise its kinetic energy (beyond 1e-8 relative, when no moving
// kinematic partner and no factor make kinetic energy the wrong invariant)
// fails too, with status energy_gain: the pass-through v_g ("Joint-violating
// velocities") is M-orthogonal to the law's change only up to the joint
// metric's rank decisions, and conflicting joints turned that into +4 % and
// +33 % per impact. Nothing non-finite is ever written to a body by simpact.
// An exception from on_impact is caught too
// (ImpactSolverStats::callback_exceptions); the impact it reported stands.
// Joints: the bilateral rows of every btTypedConstraint (point-to-point,
// hinge, slider, cone-twist, 6-DoF, 6-DoF spring 2, fixed, gear, hinge 2,
// universal) are read through getInfo1/getInfo2 and enter the metric; rows
// with finite bounds (limits, motors, springs, and every row of a breakable
// joint, whose bounds Bullet clamps to its breaking threshold) and disabled
// joints are the base solver's, which applies them after the impact.
#pragma once

#include <simpact/propagative.h>
#include <simpact/routh.h>

#include <Eigen/Core>

#include <BulletDynamics/ConstraintSolver/btConstraintSolver.h>
#include <LinearMath/btVector3.h>

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

class btCollisionObject;
class btDiscreteDynamicsWorld;
class btPersistentManifold;
class btRigidBody;
class btTypedConstraint;
struct btContactSolverInfo;

namespace simpact::bullet {

/// The impact law of ImpactSolverConfig (see "Laws" above).
enum class ImpactLaw {
  kPropagative,  ///< frictionless minimal-sequence law with restitution (default)
  kRouth,        ///< Routh sampling: frictional, inelastic, one sample per impact
  kAuto,         ///< per cluster, by friction and restitution
};

/// "propagative", "routh", "auto".
const char* to_string(ImpactLaw law);

/// The law a report says was applied to a cluster (ImpactReport::law,
/// MultiBodyImpactReport::law, PredictedImpact::law).
enum class AppliedLaw {
  kPropagative,       ///< Seghete & Murphey's propagative law
  kRouth,             ///< one Routh sample (Halm & Posa)
  kRouthRestitution,  ///< auto's blend for frictional 0 < R < 1 (see "Laws")
  kBaseSolver,        ///< left to the base solver (cap or fallback; see the report)
};
/// "propagative", "routh", "routh_restitution", "base_solver" ("unknown"
/// for a value outside the enum).
const char* to_string(AppliedLaw law);
/// Writes to_string(law) (test and log output).
std::ostream& operator<<(std::ostream& out, AppliedLaw law);
/// The law named by to_string(); throws std::invalid_argument naming the
/// accepted names otherwise.
ImpactLaw parse_impact_law(const std::string& name);

/// One impact cluster, passed to ImpactSolverConfig::on_impact: resolved,
/// left to the base solver by the Routh cap, or handed to the base solver
/// because its resolution failed (`fallback_to_base`).
///
/// Lifetime: the POINTERS (`bodies`, Contact::a, Contact::b) are valid only
/// inside the on_impact callback — afterwards Bullet may delete or move the
/// objects, and a report kept after its world is destroyed holds dangling
/// pointers. To identify bodies later, use the IDS (`body_ids`,
/// Contact::id_a, Contact::id_b): each object's
/// btCollisionObject::getWorldArrayIndex() at the time of the impact, i.e.
/// its index in btCollisionWorld::getCollisionObjectArray(). Ids are plain
/// ints, safe to keep and compare forever; they name the same object as long
/// as no collision object is removed from the world (removal moves the last
/// object into the freed slot). The world array index was chosen over the
/// user index because Bullet assigns it to every object (static, kinematic
/// and the ground included) and keeps it unique, while user indices are the
/// host's to set (−1 by default). Objects not in a world (e.g.
/// btTypedConstraint::getFixedBody()) have id −1.
struct ImpactReport {
  /// Dynamic bodies of the cluster; valid only inside the callback.
  std::vector<const btCollisionObject*> bodies;
  /// getWorldArrayIndex() of each entry of `bodies` (same order).
  std::vector<int> body_ids;
  struct Contact {
    const btCollisionObject* a = nullptr;  ///< Bullet's body 0 of the manifold (callback only)
    const btCollisionObject* b = nullptr;  ///< body 1, may be static/kinematic (callback only)
    int id_a = -1;                         ///< a->getWorldArrayIndex()
    int id_b = -1;                         ///< b->getWorldArrayIndex()
    double approach_speed = 0.0;           ///< −u before the impact, as resolved (mid-step) [m/s]
    double impulse = 0.0;                  ///< λ [N·s] (normal)
    btVector3 point_on_a{0, 0, 0};         ///< world contact point on a [m]
    btVector3 point_on_b{0, 0, 0};         ///< world contact point on b [m]
    btVector3 normal{0, 0, 0};             ///< unit normal from b to a
    double friction = 0.0;                 ///< μ, the point's combined friction
    /// Routh laws: the contact's tangent frame (see "Laws") and the
    /// tangential impulse on a, Λ_t1 t1 + Λ_t2 t2 [N·s]; zero otherwise.
    btVector3 tangent1{0, 0, 0};
    btVector3 tangent2{0, 0, 0};
    btVector3 friction_impulse{0, 0, 0};
  };
  std::vector<Contact> contacts;
  /// The law applied to this cluster: kPropagative, kRouth,
  /// kRouthRestitution (auto's blend for frictional 0 < R < 1) or
  /// kBaseSolver (a Routh cluster over RouthSettings::max_contacts, left to
  /// the base solver with restitution off; or a failed cluster, see
  /// `fallback_to_base`; `message` says why; its contacts carry the approach
  /// speeds without this step's forces and no impulses).
  AppliedLaw law = AppliedLaw::kPropagative;
  /// The cluster's resolution failed (see "Failures" above) and, for this
  /// step, the cluster was handed to the base solver WITH BULLET'S OWN
  /// RESTITUTION (m_combinedRestitution and m_restitutionVelocityThreshold as
  /// the world has them); nothing of the impact phase was applied to its
  /// bodies. `law` is then kBaseSolver, `attempted_law` the law that
  /// failed, `status` and `message` say why (status kSuccess never appears
  /// with it: an exception or an unsupported input reports kInfeasible).
  bool fallback_to_base = false;
  /// With fallback_to_base: the law that was attempted (kPropagative,
  /// kRouth, kRouthRestitution); otherwise equal to `law`.
  AppliedLaw attempted_law = AppliedLaw::kPropagative;
  double restitution = 1.0;
  std::vector<int> sequence;      ///< contacts reflected (indices into contacts)
  double energy_before = 0.0;     ///< kinetic energy of the cluster (mid-step velocities) [J]
  double energy_after = 0.0;
  Status status = Status::kSuccess;
  std::string message;
  std::optional<double> indeterminacy;  ///< when compute_indeterminacy
  // Routh laws only (zero / true otherwise):
  int lcps = 0;                   ///< LCPs the sample took (Algorithm 1, plus a fallback)
  bool terminated = true;         ///< Algorithm 1 ended the impact by itself (routh.h)
  /// The Anitescu–Potra fallback ended it instead (status says why it was
  /// needed); the applied velocity is still non-colliding and dissipative.
  bool finished_by_fallback = false;
  double step = 0.0;              ///< h in force [N·s]
  std::uint64_t sample_seed = 0;  ///< RouthParameters::seed of the sample (index 0)
};

/// Settings of the Routh law (routh.h) inside the adapter.
struct RouthSettings {
  /// h, the normal impulse cap scale [N·s]; 0 = automatic (routh.h: twice
  /// the largest single-contact stopping impulse). Finite, ≥ 0.
  double step = 0.0;
  /// N, LCP increments per sample before the Anitescu–Potra fallback; ≥ 1.
  int max_steps = 100;
  /// d, directions of the polyhedral friction cone per contact, in
  /// [3, kMaxConeDirections]; 4 = ±t1, ±t2.
  int cone_directions = 4;
  ImpulseSampler sampler = ImpulseSampler::kUniform;
  /// Cluster cap (see "Cluster cap" above); ≥ 1. Each increment is a dense
  /// Lemke LCP of size (3 + d) m, and a sample takes more increments as m
  /// grows. Measured by demos/benchmark_routh_clusters (a column of boxes
  /// landing flat from 1 cm, d = 4, double, 2-core development machine; the
  /// whole 240 Hz landing step, median over 5 seeds): m = 4 (one box)
  /// 0.08 ms, 8 (two) 0.37 ms, 12 (three) 0.9 ms, 16 (four) 3.9 ms,
  /// 24 (six) 116 ms, 32 (eight) 353 ms, 40 (ten) 1.7 s, where 6 of 53
  /// impacts still needed the Anitescu–Potra fallback after Lemke's retries.
  /// 8 keeps the worst case within a quarter of a 240 Hz step's wall-clock
  /// budget; raise it for offline runs.
  int max_contacts = 8;
};

/// One cluster's approximated Routh outcome set, from
/// ImpactSolver::predict_outcome_sets. Generalized velocities follow the
/// cluster layout: body j owns coordinates 6j … 6j+5 = [v_j, ω_j] (world
/// frame, SI), and the sets hold MID-STEP velocities (v*, see "External
/// forces"): the impact maps `velocity` to a column of `set.velocities`.
struct PredictedImpact {
  std::vector<const btRigidBody*> bodies;      ///< the cluster's dynamic bodies
  std::vector<ImpactReport::Contact> contacts; ///< rows of the problem (impulses 0)
  /// What the next step applies to this cluster (as ImpactReport::law).
  /// With kRouth, the next step applies exactly sample 0 of `set`.
  AppliedLaw law = AppliedLaw::kPropagative;
  double restitution = 1.0;
  std::uint64_t sample_seed = 0;   ///< the Routh seed the next step uses
  Eigen::VectorXd velocity;        ///< v*, mid-step, before the impact (6k)
  Eigen::VectorXd pre_force;       ///< the bodies' velocities without this step's forces (6k)
  /// false when the cluster has more than RouthSettings::max_contacts
  /// contacts (then `set` is empty and `message` says so).
  bool sampled = false;
  std::string message;
  RouthOutcomeSet set;             ///< Algorithm 2; velocities: 6k × M

  /// Velocity of body j after the impact phase if the impact took sample k:
  /// what the step writes back, pre_force + (v⁺_k − v*) (the base solver
  /// then adds this step's forces and contact/joint impulses). Throws
  /// std::out_of_range outside [0, M) × [0, bodies.size()) (or unsampled).
  btVector3 linear_velocity(int sample, int body) const;
  btVector3 angular_velocity(int sample, int body) const;
};

/// The settings both adapters share (ImpactSolverConfig and
/// MultiBodyImpactSolverConfig derive from it): the law and its parameters,
/// with the same meanings and ranges in both.
struct ImpactSettings {
  /// Order policy of the propagative law (propagative.h). kAll is not an
  /// order: use compute_indeterminacy to measure the spread of outcomes.
  OrderPolicy policy = OrderPolicy::kMostNegative;
  /// kRandom: each impact draws from seed and a counter. Routh laws: each
  /// impact's sample seed is mixed from it (see "Seeds" above).
  std::uint64_t seed = 0;
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
  /// Resolve clusters whose restitution is 0 with the core's plastic law. Off
  /// by default: a plastic impact is the LCP the base solver solves anyway
  /// with restitution off (Moreau's projection, approximated by its
  /// iterations), and in piles of resting boxes the touching contacts merge
  /// dozens of bodies into one cluster whose exact LCP costs far more than a
  /// step (benchmark_vs_stock, box pile). Turn it on for exact plastic
  /// outcomes in small systems.
  bool resolve_plastic_impacts = false;
  /// The impact law (see "Laws" above).
  ImpactLaw law = ImpactLaw::kPropagative;
  /// Routh law settings (law routh or auto).
  RouthSettings routh;
};

/// Checks the shared settings: finite touch_tolerance ≥ 0, impact_threshold
/// not NaN, max_reflections ≥ 0, a simulation policy (not kAll), a valid
/// law, and the Routh settings' ranges. Throws std::invalid_argument naming
/// the first bad field.
void validate(const ImpactSettings& settings);

struct ImpactSolverConfig : ImpactSettings {
  /// Also enumerate every outcome (policy kAll) to report the indeterminacy
  /// ξ; costs one more resolution per impact. The applied outcome is still
  /// the one of `policy`.
  bool compute_indeterminacy = false;
  /// Route every penetration through split impulse in the base solver
  /// (m_splitImpulsePenetrationThreshold = +∞), so position correction never
  /// changes real velocities. Off by default, a deliberate deviation: Bullet's
  /// split impulse (erp2) makes a 5-box stack drift 9× more over 2 s (5.1 cm
  /// against stock's 5.7 mm, tests/bullet/scenario_test.cpp) than its default
  /// Baumgarte correction of shallow penetrations, and the points simpact
  /// resolves are already protected (no push-out in the impact step, and
  /// their overlaps cleared at position level in the next one, see
  /// "Overlaps"). What it adds: no Baumgarte gain on contacts no impact
  /// touched either. The energy figures of the cradle demo and tests hold
  /// either way.
  bool split_impulse_for_all_penetrations = false;
  /// Called for every resolved impact (in the solver's thread), and for
  /// every Routh cluster left to the base solver by the cap.
  std::function<void(const ImpactReport&)> on_impact;
};

/// Checks a configuration (its ImpactSettings; the rest has no invalid
/// values). Throws std::invalid_argument naming the first bad field. The
/// ImpactSolver constructor and set_config call it.
void validate(const ImpactSolverConfig& config);

/// Slip speed, relative to the cluster's largest approach speed, above which
/// a contact's tangent frame follows its slip (see "Laws"). Slips of rounding
/// size (~1e-16 relative) must not pick the frame; 1e-6 is ten orders above
/// them, and below it the frame choice changes the sample by at most ~1e-6
/// relative (the cone's anisotropy acts on a slip that small).
inline constexpr double kSlipFrameTolerance = 1e-6;

/// Inert contacts (see "Inert contacts"): effective inverse mass below this
/// fraction of its free value. Same size as the joint metric's rank cut
/// (kJointRankTolerance, 1e-8 of the row-scaled Gram matrix): the metric
/// cannot resolve a response below it — its rounding residue reaches
/// ε/1e-8 ≈ 2e-8 of the free response for a Gram eigenvalue at the cut —
/// and a response of 1e-8 is an effective mass 10⁸ times the bodies' own,
/// an immovable wall for any strike (its rebound is the base solver's).
inline constexpr double kInertContactTolerance = 1e-8;

inline constexpr double kThresholdGravitySteps = 0.25;
/// Floor of the automatic threshold for gravity-free scenes [m/s]: the
/// velocity noise of a resting contact without gravity is rounding,
/// ~1e-12 m/s; 1e-6 m/s is far above it and far below any real strike.
inline constexpr double kMinimumImpactThreshold = 1e-6;

/// Counters since construction (reset() does not clear them), the same
/// type with the same meanings for both adapters (ImpactSolver and
/// MultiBodyImpactSolver); a counter an adapter has no occasion for stays 0.
struct ImpactStats {
  std::int64_t solve_calls = 0;       ///< solveGroup / solveMultiBodyGroup calls
  /// Impact clusters handed to a law (propagative, routh or their blend)
  /// after every check on their input passed, whether the law then
  /// succeeded or not; not the oversized Routh clusters (routh_oversized),
  /// nor plastic clusters the propagative law leaves to the base solver,
  /// nor clusters a check on their input (non-finite state or rows, an
  /// unsupported constraint, no snapshot) handed to the base solver first.
  std::int64_t impacts = 0;
  std::int64_t reflections = 0;       ///< propagative reflections of those impacts
  /// Impacts whose law returned a status other than success (every one of
  /// them is also a fallback_to_base).
  std::int64_t fallbacks = 0;
  /// Clusters handed to the base solver with Bullet's own restitution
  /// because their resolution failed or cannot be done: a non-success
  /// status, an exception, a non-finite input or outcome, an unsupported
  /// btMultiBodyConstraint, no snapshot (see "Failures"). ≥ fallbacks.
  std::int64_t fallbacks_to_base = 0;
  /// Exceptions thrown by the config's on_impact, caught by the solver (the
  /// impact stands; the host's callback failed, not the law).
  std::int64_t callback_exceptions = 0;
  /// Rigid adapter: contacts of impact clusters left out as inert (effective
  /// inverse mass below kInertContactTolerance of its free value, see
  /// "Inert contacts").
  std::int64_t inert_contacts = 0;
  std::int64_t routh_impacts = 0;     ///< clusters resolved with a Routh sample (routh, blend)
  std::int64_t routh_lcps = 0;        ///< LCPs those samples took
  /// Rigid adapter: Routh clusters over RouthSettings::max_contacts.
  std::int64_t routh_oversized = 0;
};
using ImpactSolverStats = ImpactStats;

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
  /// Throws std::invalid_argument (validate) and keeps the old config then.
  void set_config(ImpactSolverConfig config);

  /// The approximated Routh outcome set (routh.h, Algorithm 2: set.samples
  /// samples on set.threads threads) of every impact the next step of
  /// `world` would resolve, WITHOUT stepping it: no body's state (transform,
  /// velocity, force, activation) changes. It runs the world's collision
  /// detection (AABBs, pairs, manifolds: what the next step's own detection
  /// recomputes from the same positions), then builds the clusters, rows and
  /// mid-step velocities exactly as that step's solveGroup calls will, for a
  /// step of `time_step` (stepSimulation(time_step, 1, time_step)): every
  /// active body's gravity is added to its pending force, damping applied
  /// as predictUnconstraintMotion does (not the optional "additional
  /// damping"), kinematic bodies at their current velocities, CCD's
  /// predictive contacts left out. An impact cluster is returned whatever
  /// law the step would apply to it (PredictedImpact::law says which); its
  /// set is the inelastic Routh set with this config's Routh settings and
  /// the step's seed, so with law "routh" sample 0 is the step's outcome
  /// (with set.epsilon = 0). Touching pairs join the clusters as in the step
  /// ("Touching means touching"); when sample 0 does not succeed, `law` is
  /// "base_solver", as the step's fallback ("Failures") would make it. The
  /// step's other fallbacks (a non-finite outcome, an energy gain through
  /// the joint split) are not predicted. Side effects: contact points are refreshed
  /// (their m_lifeTime grows), bilateral joints' cached Jacobians are
  /// rebuilt (as the stock solver does in every step). Throws
  /// std::invalid_argument for time_step ≤ 0 or not finite, or bad `set`.
  std::vector<PredictedImpact> predict_outcome_sets(btDiscreteDynamicsWorld& world,
                                                    btScalar time_step,
                                                    const RouthSetParameters& set = {});
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
