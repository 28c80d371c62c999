// simpact::bullet::ImpactSolver — an impact phase in front of any stock
// Bullet constraint solver (btConstraintSolver). Two lines put it into an
// existing btDiscreteDynamicsWorld:
//
//     simpact::bullet::ImpactSolver solver(&stock_solver);   // e.g. btSequentialImpulseConstraintSolver
//     world.setConstraintSolver(&solver);
//
// Reference for the contract below; the reasons, deviations and
// measurements are in docs/rigid_adapter.md. Papers as in README "Papers":
// Seghete & Murphey 2014 ("A propagative model of simultaneous impact:
// existence, uniqueness, and design consequences", IEEE T-ASE 11(1), 2014,
// arXiv:1709.02296) and Halm & Posa ("Set-Valued Rigid-Body Dynamics for
// Simultaneous, Inelastic, Frictional Impacts", arXiv:2103.15714).
//
// ── Stages of one solveGroup call ───────────────────────────────────────────
//  1. Collect: contact points touching (distance ≤ touch_tolerance) or
//     closing within the step (distance + u·h ≤ touch_tolerance) between a
//     dynamic body and any other; when one strikes, the struck bodies' pairs
//     within min(contact-breaking threshold, S·h) that have no manifold
//     point get Bullet's own closest-point query (synthetic points, never
//     written to Bullet's manifolds).
//  2. Cluster: union–find over dynamic bodies through those contacts and
//     enabled joints. Static and kinematic bodies are infinitely massive and
//     join no cluster.
//  3. Assemble: a cluster with a contact approaching faster than its strike
//     threshold (impact_threshold, or sustained_threshold for a point of a
//     manifold that carried load in the last base solve) is an impact, with
//       v   = [v_A, ω_A, v_B, ω_B, …], 6 per dynamic body, world frame, SI,
//             at mid-step: v* = v + ½ h M⁻¹ f_ext (v without this step's forces);
//       M⁻¹ = blockdiag(D_l m⁻¹ D_l, D_a I⁻¹_world D_a), D the linear or
//             angular factors;
//       J   row of contact (A, B), n = m_normalWorldOnB (from B to A):
//             [n, r_A × n] on A, [−n, −(r_B × n)] on B; J v > 0 separates;
//       b   = −n·(v_K + ω_K × r_K) for a kinematic body K on side B (+ on A);
//       M⁻¹_G = M⁻¹ − M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ G M⁻¹ for the bilateral rows G of
//             the cluster's joints (rows with infinite bounds, from getInfo2);
//     the law resolves the joint-admissible part v_a of v*
//     (v* = v_a + v_g, v_g = M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁺(G v* + c)) and v_g passes
//     through; velocity along a locked factor axis passes through too.
//     Contacts with w = J_r M⁻¹_G J_rᵀ below kInertContactTolerance of
//     their free value are inert (no impulse; the base solver's).
//  4. Resolve and apply: the law (ImpactSolverConfig::law) gives v⁺; the
//     bodies get v + (v⁺ − v*); overlaps the outcome leaves closed are
//     cleared at position level by the least push Δq = M⁻¹_G Jᵀμ, μ ≥ 0,
//     W μ ≥ d (no velocity changes); in the next step so are the overlaps
//     of the pairs the outcome left closed.
//  5. Hand off: the base solver runs on the whole batch with every visible
//     point's restitution 0 (restored after), except points of clusters
//     that failed, which keep Bullet's. Points the impact left separating —
//     over MLCP bases every point of a "complete" cluster — are hidden from
//     it for this call and put back at their own indices after.
// Per cluster, plan → assemble → resolve → check → apply → report is one
// pipeline (plugin/src/bullet/cluster_stages.h, internal::run_cluster) that
// MultiBodyImpactSolver runs too; only assembly, checks and write-back know
// the kind of body.
//
// Restitution of a cluster: the least m_combinedRestitution of its contacts
// approaching faster than the threshold.
//
// ── Laws (ImpactSolverConfig::law) ──────────────────────────────────────────
// propagative (default): Seghete & Murphey 2014's minimal-sequence law on
//   the normals (propagative.h) with the cluster's restitution; the law is
//   frictionless (friction is the base solver's at the points left closed),
//   and a frictional cluster with 0 < R < 1 then gets Coulomb friction on
//   its impulses and the law once more (propagative_friction; tangent rows
//   as for routh). R = 0 clusters are the base solver's unless
//   resolve_plastic_impacts.
// routh: one Halm & Posa Routh sample per impact (routh.h,
//   RouthSampler::sample(0)); inelastic and frictional (μ =
//   m_combinedFriction); the cluster's restitution is ignored. Tangent rows
//   [t, r_A × t] / [−t, −(r_B × t)] with t1 along the mid-step slip when it
//   exceeds kSlipFrameTolerance × the largest approach speed, else
//   btPlaneSpace1's frame; t2 = n × t1.
// routh_restitution: one Routh sample per impact with Stronge's energetic
//   coefficient e = R on every contact of the cluster (routh.h,
//   "Restitution"; Halm & Posa's extension via Stronge 1990 and Mirtich
//   1996): frictional, partially elastic, never gains energy; R = 0 is
//   routh, bitwise. Rows as for routh.
// auto: frictionless or R = 1 clusters propagative; frictional R = 0 routh;
//   frictional 0 < R < 1 routh_restitution (reported kRouthRestitution).
// variational, pasquero: the elastic laws of variational.h (Seghete &
//   Murphey 2010's projection onto the hull of every sequence's outcome)
//   and pasquero.h (Pasquero's frame-independent law) on clusters with
//   R = 1; clusters with R < 1 as under propagative. Frictionless.
// Cluster cap: a cluster due for Routh with more than
//   RouthSettings::max_contacts contacts is left to the base solver (R = 0)
//   or the propagative law (R > 0, auto), reported and counted
//   (ImpactStats::routh_oversized).
// Seeds: an impact's sample uses seed mix(mix(config.seed, step), key),
//   `step` the allSolved count since reset(), `key` the smallest
//   getWorldArrayIndex() of the cluster's bodies: same seed and world →
//   bitwise-identical simulation, whatever the island batching.
//
// ── Failures (never fail the host) ──────────────────────────────────────────
// No exception leaves solveGroup. A cluster whose law returns a status
// other than success, throws, sees or produces a non-finite value, or whose
// outcome would raise its kinetic energy (status kEnergyGain) gets nothing
// from the impact phase and is handed, for this step, to the base solver
// with Bullet's own restitution; its report says which cluster, why and
// with which fallback, and ImpactStats::fallbacks_to_base counts it.
// Nothing non-finite is ever written to a body. Joint rows with finite
// bounds (limits, motors, springs, breakable joints) and disabled joints are
// the base solver's.
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
  /// Seghete & Murphey 2010's variational projection (variational.h) on
  /// elastic clusters (R = 1); other clusters as kPropagative.
  kVariational,
  /// Pasquero's frame-independent law (pasquero.h) on elastic clusters
  /// (R = 1); other clusters as kPropagative.
  kPasquero,
  /// Routh sampling with Stronge's energetic restitution R (routh.h,
  /// "Restitution"): frictional, one sample per impact, every cluster.
  kRouthRestitution,
};

/// "propagative", "routh", "auto", "variational", "pasquero",
/// "routh_restitution".
const char* to_string(ImpactLaw law);

/// The law a report says was applied to a cluster (ImpactReport::law,
/// MultiBodyImpactReport::law, PredictedImpact::law).
enum class AppliedLaw {
  kPropagative,       ///< Seghete & Murphey's propagative law
  kRouth,             ///< one Routh sample (Halm & Posa)
  kRouthRestitution,  ///< Routh with Stronge's restitution (see "Laws")
  kVariational,       ///< Seghete & Murphey 2010's variational projection
  kPasquero,          ///< Pasquero's frame-independent law
  kBaseSolver,        ///< left to the base solver (cap or fallback; see the report)
};
/// "propagative", "routh", "routh_restitution", "variational", "pasquero",
/// "base_solver" ("unknown"
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
  /// kRouthRestitution (Routh with Stronge's restitution) or
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
  /// kRouth, kRouthRestitution, kVariational, kPasquero). kVariational with
  /// `law` kPropagative: the variational enumeration exceeded
  /// ImpactSettings::variational_budget and the propagative law resolved the
  /// cluster. Otherwise equal to `law`.
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
  /// Increments that box pivoting left to Lemke (routh.h, "LCP solvers").
  int increment_fallbacks = 0;
  /// Increments both Lemke runs failed and box pivoting solved (routh.h).
  int increment_rescues = 0;
  bool terminated = true;         ///< Algorithm 1 ended the impact by itself (routh.h)
  /// The Anitescu–Potra fallback ended it instead (status says why it was
  /// needed); the applied velocity is still non-colliding and dissipative.
  bool finished_by_fallback = false;
  double step = 0.0;              ///< h in force [N·s] (the largest cap scale h_i, routh.h)
  std::uint64_t sample_seed = 0;  ///< RouthParameters::seed of the sample (index 0)
};

/// Settings of the Routh law (routh.h) inside the adapter.
struct RouthSettings {
  /// h, the normal impulse cap scale [N·s]; 0 = automatic (routh.h,
  /// "Automatic step": twice the largest single-contact stopping impulse,
  /// or per contact the larger of that and its simultaneous impulse).
  /// Finite, ≥ 0.
  double step = 0.0;
  /// The automatic step's rule (routh.h): by default single-contact up to
  /// kLemkeIncrementContacts contacts, simultaneous above (contacts in
  /// series, such as a column's ground corners, then take a few increments,
  /// not O(m)). ImpactReport::step is the largest h_i.
  AutomaticStep automatic_step = AutomaticStep::kAutomatic;
  /// N, LCP increments per sample before the Anitescu–Potra fallback; ≥ 1.
  int max_steps = 100;
  /// d, directions of the polyhedral friction cone per contact, in
  /// [3, kMaxConeDirections]; 4 = ±t1, ±t2.
  int cone_directions = 4;
  ImpulseSampler sampler = ImpulseSampler::kUniform;
  /// How each increment LCP is solved (routh.h, "LCP solvers"): automatic
  /// is Lemke up to kLemkeIncrementContacts contacts, box pivoting above.
  IncrementSolver increment_solver = IncrementSolver::kAutomatic;
  /// Cluster cap (see "Cluster cap" above); ≥ 1. A sample's cost grows with
  /// m per increment (with the default automatic_step a landing column
  /// takes 3–9 increments up to 64 contacts), so the cap bounds the cost of
  /// an impact step; the measured costs behind 32 are in docs/routh.md
  /// ("Costs behind the defaults"). Raise it for offline runs; piles of
  /// ~200 contacts still fail often (docs/scaling.md).
  int max_contacts = 32;
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
  /// With kRouth, the next step applies exactly sample 0 of `set`, unless
  /// sample 0 gains energy by rounding: then the step's "restore energy"
  /// stage scales its change by at most 1e-8 (docs/pipeline.md, stage 5).
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
/// ImpactSettings::variational_budget's default: 10⁴ reflections (what they
/// cost: docs/routh.md, "Costs behind the defaults").
inline constexpr std::int64_t kDefaultVariationalBudget = 10'000;

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
  /// at most the solver residual of the last step, a small fraction of |g|h
  /// for a body resting alone; a quarter of |g|h is above that yet far
  /// below Bullet's 0.2 m/s (60 Hz: 0.041 m/s; 240 Hz: 0.010 m/s; 6 kHz:
  /// 0.0004 m/s). In stacks the residual is larger: sustained_threshold.
  double impact_threshold = -1.0;
  /// The impact threshold of a SUSTAINED contact: a point of a manifold that
  /// carried a normal impulse in the last base solve (a point with
  /// m_appliedImpulse > 0: the two bodies were pressed together, e.g. the
  /// boxes of a resting stack). Such a point approaches only by what the
  /// base solver left unresolved, and Bullet's iterative solvers leave far
  /// more in a stack than impact_threshold assumes: after SI's 10
  /// iterations the loaded corners of a resting column of boxes approach at
  /// up to 0.85 |g|h (8 boxes) and 1.9 |g|h (16) — above a quarter of |g|h,
  /// so every other step was an impact of the whole column
  /// (docs/rigid_adapter.md, "Sustained contact"). [m/s]; negative = automatic: kSustainedGravitySteps · |g| ·
  /// h; never below the impact threshold (a smaller value, e.g. 0, makes
  /// sustained contacts strike like any other). A strike elsewhere in the
  /// cluster still resolves every sustained contact with the law. The cost:
  /// a NEW point of a loaded manifold — the far edge of a rocking box
  /// coming down while its other edge carries load — that approaches
  /// slower than this is the base solver's, with no bounce (restitution is
  /// off in the base solve): 0.08 m/s at 240 Hz, 0.33 m/s at 60 Hz. Where
  /// such slow elastic rocking matters, lower it towards impact_threshold
  /// (and set both to 0 to resolve every approach).
  double sustained_threshold = -1.0;
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
  /// Coulomb friction in the propagative law's impacts. The law is
  /// frictionless (Seghete & Murphey) and the base solver's friction acts
  /// only where a contact stays closed and carries load in its own solve, so
  /// a contact that bounces (R > 0) gets none: a box with restitution sliding
  /// on the ground, whose corners strike in turn as it rocks, slid on at
  /// constant speed. With this on, in a cluster with 0 < R < 1 (elastic
  /// clusters keep the papers' frictionless, energy-conserving law; plastic
  /// ones end closed, where the base solver's friction acts) each contact
  /// the law pushed (λ_r > 0, μ_r > 0), in contact order, then gets the
  /// tangential impulse opposite
  /// its slip, at most μ_r λ_r and at most what stops the slip along that
  /// direction (each impulse dissipates), and the law runs once more from
  /// there to resolve any approach those impulses made (if that run fails,
  /// the frictionless outcome stands and the report says so). Both adapters;
  /// tangent rows as for the Routh laws ("Laws"). Not for the variational
  /// and Pasquero laws (elastic, frictionless by definition).
  bool propagative_friction = true;
  /// Also enumerate every outcome (policy kAll) to report the indeterminacy
  /// ξ (ImpactReport::indeterminacy) of propagative impacts; costs one more
  /// resolution per impact. The applied outcome is still the one of `policy`.
  bool compute_indeterminacy = false;
  /// The impact law (see "Laws" above).
  ImpactLaw law = ImpactLaw::kPropagative;
  /// Routh law settings (law routh or auto).
  RouthSettings routh;
  /// Law variational: the reflections its enumeration of every sequence may
  /// spend on one impact (VariationalParameters::enumeration_budget). The
  /// number of sequences grows combinatorially with a cluster's branching: a
  /// 15-ball billiard rack exhausts 10⁶ reflections in ~0.4 s, while the
  /// cradles and double strikes of compare_laws need 2–40. A cluster over the
  /// budget (its hull would be partial) is resolved by the propagative law
  /// instead: reported (`law` kPropagative, `attempted_law` kVariational,
  /// `message`) and counted (ImpactStats::variational_over_budget). The
  /// default bounds the law at a few ms per impact. Must be ≥ 1.
  std::int64_t variational_budget = kDefaultVariationalBudget;
};

/// Checks the shared settings: finite touch_tolerance ≥ 0, impact_threshold
/// and sustained_threshold not NaN, max_reflections ≥ 0, a simulation
/// policy (not kAll), a valid law, and the Routh settings' ranges. Throws
/// std::invalid_argument naming the first bad field.
void validate(const ImpactSettings& settings);

struct ImpactSolverConfig : ImpactSettings {
  /// Route every penetration through split impulse in the base solver
  /// (m_splitImpulsePenetrationThreshold = +∞), so position correction never
  /// changes real velocities, also on contacts no impact touched. Off by
  /// default, a deliberate deviation: split impulse makes resting stacks
  /// drift far more than Bullet's default Baumgarte correction
  /// (docs/rigid_adapter.md, "Measurements"), and the points simpact
  /// resolves are protected either way (stages 4 and 5 above).
  bool split_impulse_for_all_penetrations = false;
  /// Called for every resolved impact (in the solver's thread), and for
  /// every Routh cluster left to the base solver by the cap. Without one,
  /// no report is built past its cluster-level fields (a per-contact entry
  /// costs ~0.3 kB; ImpactStats keeps the counts, largest_cluster included).
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

/// Inert contacts (stage 3): effective inverse mass below this
/// fraction of its free value. Same size as the joint metric's rank cut
/// (kJointRankTolerance, 1e-8 of the row-scaled Gram matrix): the metric
/// cannot resolve a response below it — its rounding residue reaches
/// ε/1e-8 ≈ 2e-8 of the free response for a Gram eigenvalue at the cut —
/// and a response of 1e-8 is an effective mass 10⁸ times the bodies' own,
/// an immovable wall for any strike (its rebound is the base solver's).
inline constexpr double kInertContactTolerance = 1e-8;

inline constexpr double kThresholdGravitySteps = 0.25;
/// The automatic sustained threshold in units of |g|·h (ImpactSettings::
/// sustained_threshold): above the 0.85 and 1.9 |g|h that loaded contacts of
/// resting 8- and 16-box columns reach under SI (10 iterations), and below
/// any push that is not gravity's own: a contact that carried load last
/// step and now approaches faster than twice what gravity adds in a step
/// was struck (240 Hz: 0.082 m/s; 60 Hz: 0.33 m/s).
inline constexpr double kSustainedGravitySteps = 2.0;
/// Floor of the automatic threshold for gravity-free scenes [m/s]: the
/// velocity noise of a resting contact without gravity is rounding,
/// ~1e-12 m/s; 1e-6 m/s is far above it and far below any real strike.
inline constexpr double kMinimumImpactThreshold = 1e-6;

/// Counters since construction (reset() does not clear them), the same
/// type with the same meanings for both adapters (ImpactSolver and
/// MultiBodyImpactSolver); a counter an adapter has no occasion for stays 0.
struct ImpactStats {
  std::int64_t solve_calls = 0;       ///< solveGroup / solveMultiBodyGroup calls
  /// Impact clusters handed to a law (propagative, routh, routh_restitution)
  /// after every check on their input passed, whether the law then
  /// succeeded or not; not the oversized Routh clusters (routh_oversized),
  /// nor plastic clusters the propagative law leaves to the base solver,
  /// nor clusters a check on their input (non-finite state or rows, an
  /// unsupported constraint, no snapshot) handed to the base solver first.
  std::int64_t impacts = 0;
  std::int64_t reflections = 0;       ///< propagative reflections of those impacts
  /// Contacts of the largest impact cluster: those its law resolved (after
  /// inert ones left), or for a cluster over RouthSettings::max_contacts
  /// its candidate contacts.
  std::int64_t largest_cluster = 0;
  /// Impacts whose law returned a status other than success, or whose
  /// outcome the stage "check energy" rejected (status energy_gain); every
  /// one of them is also a fallback_to_base.
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
  /// stage 3).
  std::int64_t inert_contacts = 0;
  std::int64_t routh_impacts = 0;     ///< clusters resolved with a Routh sample (routh, routh_restitution)
  std::int64_t routh_lcps = 0;        ///< LCPs those samples took
  /// Rigid adapter: Routh clusters over RouthSettings::max_contacts.
  std::int64_t routh_oversized = 0;
  /// Law variational: clusters whose enumeration exceeded
  /// ImpactSettings::variational_budget, resolved by the propagative law.
  std::int64_t variational_over_budget = 0;
  /// Impacts whose outcome gained energy by rounding in the adapter's
  /// measure (more than 1e-12 of the cluster's energy: in the rigid
  /// adapter nearly conflicting joints or contacts the joints nearly block,
  /// in the multibody adapter an ill-conditioned tree metric) and had its change scaled
  /// by at most 1e-8 to conserve it exactly (cluster stage "restore energy",
  /// docs/pipeline.md).
  std::int64_t energy_restored = 0;
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
