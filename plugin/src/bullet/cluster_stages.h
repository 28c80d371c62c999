// The stages of the impact pipeline that do not depend on the kind of body,
// written once for both Bullet adapters (ImpactSolver for rigid bodies,
// MultiBodyImpactSolver for Featherstone multibodies and the rigid bodies
// they touch; docs/pipeline.md). One batch:
//
//   collect   Bullet's manifold points → candidate points     (adapter)
//   cluster   union–find over nodes (clustering.h)            (shared)
//   per cluster, run_cluster under resolve_safely:
//     plan      strike, restitution, friction → the law        (ClusterPlan, decide_law)
//     assemble  node kinds → LawRows in generalized coordinates (adapter's Cluster)
//     resolve   the core law on LawRows → v⁺, impulses, report  (resolve_law)
//     check     what the adapter must not write                (adapter's Cluster)
//     apply     v⁺ and the position-level separation → bodies   (adapter's Cluster)
//     report    on_impact, fallbacks                            (notify, mark_fallback)
//   hand-off  what the base solver sees of the batch           (BaseSolverHandoff)
//   predict   the same collect, plan and assemble on the next step's state
//             (check_prediction_arguments, responding_manifolds, predict_set)
//
// Internal to simpact::bullet; never installed.
#pragma once

#include "clustering.h"
#include "core/outcome_check.h"

#include <simpact/bullet/impact_solver.h>
#include <simpact/propagative.h>
#include <simpact/routh.h>

#include <Eigen/Core>

#include <LinearMath/btScalar.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <exception>
#include <limits>
#include <string>
#include <utility>
#include <vector>

class btDispatcher;
class btManifoldPoint;
class btPersistentManifold;

namespace simpact::bullet::internal {

// ── plan ────────────────────────────────────────────────────────────────────

/// The law a cluster is planned for (impact_solver.h, "Laws" and "Cluster
/// cap"): none (not an impact, or a plastic impact left to the base solver
/// by ImpactSettings::resolve_plastic_impacts), the propagative law, one
/// Routh sample (inelastic, or with Stronge's restitution R), or the base
/// solver (a Routh law due on a cluster over RouthSettings::max_contacts,
/// reported).
enum class PlannedLaw { kNone, kPropagative, kRouth, kRouthRestitution, kBaseSolver, kVariational, kPasquero };

/// Whether a cluster is an impact, and what resolves it.
struct ClusterPlan {
  bool impact = false;       ///< some point strikes (StrikeThresholds::strikes)
  StrikeThresholds strikes;  ///< impact and sustained thresholds [m/s]
  double restitution = 1.0;  ///< R, smallest m_combinedRestitution of the striking points, in [0, 1]
  bool frictional = false;   ///< some point has μ > 0
  PlannedLaw law = PlannedLaw::kNone;
  bool oversized = false;    ///< a Routh law was due but the cluster is over the cap

  explicit ClusterPlan(const StrikeThresholds& thresholds) : strikes(thresholds) {}
  /// The cluster's impact threshold [m/s] (strikes.impact): what "left
  /// separating" is measured against after the impact.
  double threshold() const { return strikes.impact; }
  /// Folds in one candidate point: u, its relative normal velocity before
  /// this step's forces (> 0 separating), Bullet's point and its manifold
  /// (null for a synthetic point): note_strike against strikes.of(manifold)
  /// with point_restitution; μ > 0 makes the cluster frictional.
  void add(double u, const btManifoldPoint& point, const btPersistentManifold* manifold);
  /// Whether the law is a Routh law (kRouth, kRouthRestitution).
  bool routh() const { return law == PlannedLaw::kRouth || law == PlannedLaw::kRouthRestitution; }
  /// Whether the propagative law gets Coulomb friction in its impacts
  /// (ImpactSettings::propagative_friction): a frictional cluster with
  /// 0 < R < 1. Elastic clusters keep the papers' frictionless, energy-
  /// conserving law; plastic ones end with their contacts closed, where the
  /// base solver's friction acts.
  bool propagative_friction(const ImpactSettings& settings) const {
    return law == PlannedLaw::kPropagative && frictional && restitution > 0.0 && restitution < 1.0 &&
           settings.propagative_friction;
  }
  /// Whether the adapters assemble the tangent rows: a Routh law, or the
  /// propagative law with friction.
  bool tangent_rows(const ImpactSettings& settings) const { return routh() || propagative_friction(settings); }
  /// The e the Routh sample gets on every contact: R for
  /// kRouthRestitution, 0 (inelastic) for kRouth.
  double routh_restitution() const { return law == PlannedLaw::kRouthRestitution ? restitution : 0.0; }
  /// The law as a report names it (kNone reads as kBaseSolver).
  AppliedLaw applied() const;
};

/// After every point is folded in: clamps R to [0, 1] and picks the law
/// from `settings.law` (ImpactLaw), R, friction and the number of contacts.
/// A cluster that is not an impact keeps kNone.
void decide_law(const ImpactSettings& settings, int contacts, ClusterPlan& plan);

/// Fills a report's plan fields (restitution, law, attempted law) and, for
/// an oversized cluster, counts it (ImpactStats::routh_oversized) and says
/// which way it went.
void report_plan(const ImpactSettings& settings, const ClusterPlan& plan, int contacts,
                 ImpactStats& stats, ImpactReport& report);

// ── resolve ─────────────────────────────────────────────────────────────────

/// The law's view of one cluster in its generalized coordinates (n of
/// them; m contacts). Sign convention of impact_problem.h: u = J v + b > 0
/// separates. Sparse, so memory and work follow the non-zeros: a contact row
/// touches the 6 (rigid) or tree (multibody) coordinates of its two bodies,
/// and M⁻¹ is block-diagonal over the bodies (rigid), the joint-connected
/// groups of bodies (rigid, M⁻¹_G per group) or the coupled trees
/// (multibody). A touching chain of N balls stores O(N), never (6N)².
struct LawRows {
  SparseColMatrix inverse_mass;  ///< M⁻¹ (n × n), joint-constrained M⁻¹_G where joints bind
  /// v_a (n): the velocity the law resolves, the mid-step v* without what
  /// no impulse can change (impact_solver.h, stage 3).
  Eigen::VectorXd admissible;
  SparseRowMatrix normals;  ///< J (m × n)
  Eigen::VectorXd offsets;  ///< b (m): partners' velocities along the normals
  // Routh laws only:
  SparseRowMatrix tangents;         ///< 2m × n, rows 2r, 2r + 1 along t1, t2 of contact r
  Eigen::VectorXd tangent_offsets;  ///< 2m
  Eigen::VectorXd friction;         ///< μ (m), ≥ 0
  std::vector<Eigen::Vector3d> t1, t2;  ///< the contacts' tangent frames (world)

  int contacts() const { return static_cast<int>(normals.rows()); }
  /// Whether every entry the law reads is finite (with `tangents`, the
  /// Routh rows too).
  bool finite(bool tangents) const;
};

/// The solvers and counters a law keeps from impact to impact (one per
/// adapter instance; not shared between threads).
struct LawState {
  PropagativeSolver solver;
  PropagativeSolver enumerator;       ///< compute_indeterminacy's kAll pass
  std::uint64_t impact_counter = 0;   ///< kRandom seeds (impact_solver.h, "Seeds")
};

/// What resolve_law needs besides the rows.
struct LawInputs {
  /// Contact distances (m), for policy kTimeOfImpact; may be null otherwise.
  const Eigen::VectorXd* distances = nullptr;
  std::uint64_t routh_seed = 0;         ///< the cluster's Routh seed (routh_seed)
  bool compute_indeterminacy = false;   ///< also ξ (policy kAll, one more resolution)
};

/// Resolves the cluster planned `plan` on `rows`: the propagative law
/// (restitution plan.restitution) or one Routh sample (with Stronge's
/// restitution plan.routh_restitution() on every contact). On success writes v⁺_a, the
/// law's outcome in the coordinates of `rows.admissible`, to `velocity`
/// and returns true. Either way fills the report's law fields (status,
/// message, sequence, impulses and, for Routh laws, the contacts' tangent
/// frames and friction impulses; lcps, terminated, finished_by_fallback,
/// step, sample_seed, indeterminacy) and counts ImpactStats::reflections,
/// routh_impacts, routh_lcps and, when the law's status is not kSuccess,
/// fallbacks. Preconditions: plan.law is kPropagative, kRouth, kRouthRestitution,
/// kVariational or kPasquero;
/// report.contacts holds rows.contacts() entries, in row order, or none
/// (nobody reads the report: the per-contact fields are skipped); rows are
/// finite. May throw (the caller's cluster catch turns it into a fallback).
bool resolve_law(const LawRows& rows, const ClusterPlan& plan, const ImpactSettings& settings,
                 const LawInputs& inputs, LawState& state, ImpactStats& stats, ImpactReport& report,
                 Eigen::VectorXd& velocity);

// ── predict ─────────────────────────────────────────────────────────────────

/// Checks predict_outcome_sets' arguments (both adapters): time_step > 0 and
/// finite, set.samples ≥ 1, set.threads ≥ 0, set.epsilon finite and ≥ 0.
/// Throws std::invalid_argument naming the first bad one.
void check_prediction_arguments(double time_step, const RouthSetParameters& set);

/// The manifolds the next step's solver will get (what the island manager
/// hands over): those of pairs not both asleep that need a response.
std::vector<btPersistentManifold*> responding_manifolds(btDispatcher& dispatcher);

/// One cluster's predicted outcome set: RouthSampler::approximate(`set`)
/// on `rows` (with the Routh tangent rows) and `seed`, unless the cluster
/// has more than RouthSettings::max_contacts contacts or its rows are not
/// `finite` (then not sampled, and `message` says why); with Stronge's
/// restitution plan.routh_restitution(). `base_solver`: the planned law is
/// a Routh law and sample 0 does not succeed, so the step hands
/// the cluster to the base solver (its "Failures" rule).
struct PredictedSet {
  bool sampled = false;
  bool base_solver = false;
  std::string message;
  RouthOutcomeSet set;
};
PredictedSet predict_set(const LawRows& rows, bool finite, const ClusterPlan& plan, const ImpactSettings& settings,
                         std::uint64_t seed, const RouthSetParameters& set);

// ── apply ───────────────────────────────────────────────────────────────────

/// Overlaps the position-level separation (core/separation.h) leaves alone
/// [m]: 1 nm is 7 orders of magnitude below Bullet's collision margin
/// (0.04 m) and contact-breaking threshold (0.02 m), and the base solver's
/// Baumgarte push on it, m_erp·d/h = 0.2 · 1e-9 m · 240 Hz ≈ 5e-8 m/s,
/// gives a 1 kg body ~1e-15 J. Bodies placed exactly touching (a chain, a
/// rack) report rounding-level overlaps (~1e-16 m) at every contact;
/// pushing them apart cost a sparse solve over the whole cluster.
inline constexpr double kNegligibleOverlap = 1e-9;

/// Depths d (positive: overlap still to clear) with the positive ones
/// below kNegligibleOverlap set to 0 (kept closed, not pushed apart).
inline Eigen::VectorXd without_negligible_overlaps(Eigen::VectorXd depth) {
  for (Eigen::Index r = 0; r < depth.size(); ++r)
    if (depth[r] > 0.0 && depth[r] < kNegligibleOverlap) depth[r] = 0.0;
  return depth;
}

// ── report ──────────────────────────────────────────────────────────────────

/// Appends `text` to a report's message ("; " between parts).
void add_message(ImpactReport& report, const std::string& text);

/// Turns `report` into the report of a cluster handed to the base solver
/// with Bullet's restitution ("Failures" in impact_solver.h): law
/// kBaseSolver, fallback_to_base, a status other than kSuccess, the reason
/// appended to the message, no sequence, energy_after = energy_before, and
/// `contacts` as the report's contacts (approach speeds, no impulses).
/// Counts ImpactStats::fallbacks_to_base.
void mark_fallback(ImpactReport& report, std::vector<ImpactReport::Contact> contacts, ImpactStats& stats);

/// Calls the host's on_impact; an exception from it never escapes
/// (ImpactStats::callback_exceptions counts it).
template <class Report, class Callback>
void notify(const Callback& on_impact, ImpactStats& stats, const Report& report) noexcept {
  if (!on_impact) return;
  try {
    on_impact(report);
  } catch (...) {
    ++stats.callback_exceptions;
  }
}

// ── the pipeline ────────────────────────────────────────────────────────────

/// What the pipeline did with one cluster.
enum class Resolution {
  kNone,      ///< no impact (or nothing left to resolve): the base solver's, not reported
  kReported,  ///< left to the base solver by design (Routh cap), reported
  kResolved,  ///< the law's outcome is applied, reported
  kFailed,    ///< handed to the base solver with Bullet's restitution, reported
};

/// How an adapter's assembly of a cluster ended.
struct Assembly {
  enum Kind { kReady, kNothing, kFailed } kind = kReady;
  std::string why;  ///< kFailed: the reason (the report's message)
};

/// Stage "restore energy": gains of an outcome's kinetic energy over
/// E(v*), measured in the adapter's metric (Cluster::energy: the rigid
/// adapter's bodies' own, the multibody adapter's law metric), at or below
/// this fraction of E(v*) are left bit for bit. A law conserves or dissipates energy in ITS
/// metric, the explicit matrix M⁻¹_G; a well-conditioned outcome measured in
/// the bodies' metric reproduces its energy to ~n·ε ≈ 1e-14 relative, which
/// 1e-12 leaves alone.
inline constexpr double kEnergyRestoreThreshold = 1e-12;
/// The largest shrink 1 − s of the outcome's change that restore_energy
/// makes: 1e-8, the outcome check's approach allowance
/// (core/outcome_check.h, kOutcomeApproachTolerance), so no contact velocity
/// moves by more than that fraction of its change. A gain that needs more
/// is not rounding and is left to the stage "check energy" (run_cluster).
inline constexpr double kEnergyRestoreMaxShrink = 1e-8;

/// Stage "check energy": a cluster whose impact may not gain
/// (Cluster::energy_is_invariant) is handed to the base solver when its
/// outcome's energy, in the adapter's metric (Cluster::energy), exceeds
/// E(v*) by more than this fraction. The law's own check
/// (core/outcome_check.h) bounds its gain in v_a by kOutcomeEnergyTolerance
/// (1e-8) of E_s, and E_s ≤ E(v_a) ≤ E(v*) by Cauchy–Schwarz in the M
/// metric (½ u²/W ≤ ½ vᵀMv), so the same fraction of the whole cluster's
/// energy never rejects an outcome the law accepts. The adapters measure
/// with other arithmetic than the law's — the rigid adapter with the bodies'
/// own mass and inertia, the multibody adapter through (M⁻¹)⁺ of the ABA's
/// M⁻¹ — so in single precision the two differ by a few ε_float (a box
/// corner struck under the propagative law measured ~1e-7): the fraction is
/// at least 1000 ε of btScalar (1.2e-4 in float; 2.2e-13 < 1e-8 in double).
/// It catches the cross term of the rigid adapter's pass-through v_g (+4 %,
/// +33 %) and a float ABA metric too ill-conditioned for its outcome to be
/// trusted (fuzz_worlds --multibody --more-shapes seed 20261399 world 661
/// in single precision: +1.8 %, a tree spinning at ~100 rad/s).
const double kClusterEnergyGainTolerance =
    std::max(simpact::internal::kOutcomeEnergyTolerance, 1e3 * double(std::numeric_limits<btScalar>::epsilon()));

/// Stage "restore energy", between complete and check energy. A joint
/// group's M⁻¹_G = M⁻¹ − R Rᵀ (joint_rows.h) is formed with
/// R = M⁻¹Ĝᵀ U Λ^{-1/2}: joint rows that nearly conflict (eigenvalues of
/// the Gram matrix near kJointRankTolerance) give it absolute rounding of
/// ~ε/λ_min per entry, and a contact the joints nearly block (W_ii ≪
/// |J_i|² ‖M⁻¹‖) amplifies rounding by |J_i|² ‖M⁻¹‖ / W_ii. The law, exact
/// in its own metric, then gains a few 1e-9 of E(v*) in the bodies' metric
/// (fuzz_worlds seed 20261207 world 1127: 2.2e-9; seed 20261215 world 669:
/// 3.1e-9, a 9259 N·s impulse on W = 9e-7). A multibody tree's own M⁻¹,
/// ill-conditioned (eigenvalues 9e-5 to 4e3), rounds a reflection M⁻¹jᵀλ
/// with cancellation the same way (fuzz_worlds --multibody seed 20261230
/// world 463: 1.9e-9 in the law's metric). In exact arithmetic the change
/// Δ = v⁺ − v* conserves or dissipates; scaling it by
///     s = −⟨v*, Δ⟩_M / E(Δ),   ⟨v*, Δ⟩_M = E(v⁺) − E(v*) − E(Δ),
/// gives E(v* + sΔ) = E(v*) exactly (E(x) = ½ xᵀMx, `energy`). Applied only
/// when the gain exceeds kEnergyRestoreThreshold · E(v*), `invariant()`
/// holds (no impact of this cluster may raise its energy: run_cluster asks
/// Cluster::energy_is_invariant) and 0 < 1 − s ≤ kEnergyRestoreMaxShrink;
/// then `velocity` and `energy_after` are replaced and it returns true.
/// `invariant()` and `make_before()` (v*) are called only past the
/// threshold, so an outcome that gains nothing costs one comparison;
/// `energy_before` is E(v*).
template <class Energy, class Invariant, class MakeBefore>
bool restore_energy(const Energy& energy, const Invariant& invariant, const MakeBefore& make_before,
                    double energy_before, Eigen::VectorXd& velocity, double& energy_after) {
  if (!(energy_after > energy_before * (1.0 + kEnergyRestoreThreshold)) || !invariant()) return false;
  const Eigen::VectorXd before = make_before();
  const Eigen::VectorXd change = velocity - before;
  const double change_energy = energy(change);
  if (!(change_energy > 0.0)) return false;
  const double cross = energy_after - energy_before - change_energy;
  const double shrink = 1.0 + cross / change_energy;  // 1 − s
  if (!(shrink > 0.0 && shrink <= kEnergyRestoreMaxShrink)) return false;
  Eigen::VectorXd restored = before + (1.0 - shrink) * change;
  const double restored_energy = energy(restored);
  if (!(restored_energy < energy_after)) return false;
  velocity = std::move(restored);
  energy_after = restored_energy;
  return true;
}

/// The stages of one cluster, in order, written once for both adapters:
/// plan → [cap: report] → assemble → check rows → resolve → complete →
/// restore energy → check energy → check outcome → apply. `Cluster` is an adapter's view of one cluster
/// (its nodes' kinds stay inside it):
///   ClusterPlan plan();                     // the plan stage's inputs folded in
///   int candidates() const;                 // candidate contacts (the Routh cap counts them)
///   std::vector<ImpactReport::Contact> unresolved_contacts() const;
///                                           // approach speeds before this step's forces
///   Assembly assemble(ClusterPlan& plan, ImpactReport& report, ImpactStats& stats);
///                                           // law_rows(); may re-plan (contacts leaving)
///   const LawRows& law_rows() const;
///   bool finite() const;                    // rows and the adapter's own velocities
///   ImpactReport::Contact contact(int row, double approach_speed) const;
///   double energy_before() const;           // [J], mid-step
///   LawInputs law_inputs(const ClusterPlan& plan);
///   Eigen::VectorXd complete(const Eigen::VectorXd& law_velocity) const;
///                                           // the cluster's v⁺ from the law's v⁺_a
///   double energy(const Eigen::VectorXd& velocity) const;  // [J]
///   bool energy_is_invariant() const;       // no impact of this cluster may gain
///                                           // in energy(): restore energy applies
///   bool check(const Eigen::VectorXd& velocity, ImpactReport& report, ImpactStats& stats);
///                                           // the adapter's own checks; false:
///                                           // rejected (status and message set)
///   bool apply(const Eigen::VectorXd& velocity, const ClusterPlan& plan);
///                                           // writes v⁺, separation, hand-off; false:
///                                           // non-finite, nothing written
/// Nothing is written to Bullet before apply(), and apply() checks before
/// its first write, so a cluster that fails anywhere holds its pre-impact
/// state. May throw (resolve_safely turns that into a fallback).
/// `observed`: an on_impact callback will read the report, so its
/// per-contact entries are built (one ImpactReport::Contact, ~0.3 kB, per
/// contact: ~5 % of a 1000-contact impact step); without one they are left
/// out and the report carries its cluster-level fields only.
template <class Cluster>
Resolution run_cluster(Cluster& cluster, const ImpactSettings& settings, LawState& law, ImpactStats& stats,
                       ImpactReport& report, bool observed = true) {
  // Plan.
  ClusterPlan plan = cluster.plan();
  if (plan.law == PlannedLaw::kNone) return Resolution::kNone;  // the base solver's
  report_plan(settings, plan, cluster.candidates(), stats, report);
  if (plan.law == PlannedLaw::kBaseSolver) {
    stats.largest_cluster = std::max<std::int64_t>(stats.largest_cluster, cluster.candidates());
    if (observed) report.contacts = cluster.unresolved_contacts();
    return Resolution::kReported;
  }
  // Assemble.
  const Assembly assembly = cluster.assemble(plan, report, stats);
  if (assembly.kind == Assembly::kNothing) return Resolution::kNone;
  if (assembly.kind == Assembly::kFailed) {
    report.status = Status::kInfeasible;
    add_message(report, assembly.why);
    return Resolution::kFailed;
  }
  const LawRows& rows = cluster.law_rows();
  const int m = rows.contacts();
  if (observed) {
    const Eigen::VectorXd u = rows.normals * rows.admissible + rows.offsets;  // as resolved
    report.contacts.reserve(static_cast<std::size_t>(m));
    for (int r = 0; r < m; ++r) report.contacts.push_back(cluster.contact(r, -u[r]));
  }
  if (!cluster.finite()) {
    report.status = Status::kInfeasible;
    add_message(report, "non-finite body state, metric or contact rows");
    return Resolution::kFailed;
  }
  // Resolve.
  ++stats.impacts;  // handed to a law (ImpactStats::impacts)
  stats.largest_cluster = std::max<std::int64_t>(stats.largest_cluster, m);
  report.energy_before = cluster.energy_before();
  const LawInputs inputs = cluster.law_inputs(plan);
  Eigen::VectorXd law_velocity;
  if (!resolve_law(rows, plan, settings, inputs, law, stats, report, law_velocity)) return Resolution::kFailed;
  Eigen::VectorXd velocity = cluster.complete(law_velocity);
  report.energy_after = cluster.energy(velocity);
  // Restore energy (only where no impact may gain: a moving partner or, in
  // the rigid adapter, a body's factors can make a gain legitimate).
  if (restore_energy([&](const Eigen::VectorXd& v) { return cluster.energy(v); },
                     [&] { return cluster.energy_is_invariant(); },
                     [&] { return cluster.complete(rows.admissible); }, report.energy_before, velocity,
                     report.energy_after))
    ++stats.energy_restored;
  // Check energy (a non-finite outcome is the adapter's check's and
  // apply's to reject, as such).
  if (std::isfinite(report.energy_after) &&
      report.energy_after > report.energy_before * (1.0 + kClusterEnergyGainTolerance) &&
      cluster.energy_is_invariant()) {
    report.status = Status::kEnergyGain;
    char energies[96];
    std::snprintf(energies, sizeof energies, "%.9g -> %.9g J", report.energy_before, report.energy_after);
    add_message(report, std::string("the outcome would gain energy (") + energies + " in the adapter's metric)");
    ++stats.fallbacks;
    return Resolution::kFailed;
  }
  // Check outcome.
  if (!cluster.check(velocity, report, stats)) return Resolution::kFailed;
  // Apply.
  if (!velocity.allFinite() || !cluster.apply(velocity, plan)) {
    report.status = Status::kInfeasible;
    add_message(report, "non-finite outcome");
    return Resolution::kFailed;
  }
  return Resolution::kResolved;
}

/// run_cluster under the "Failures" rules (impact_solver.h): nothing
/// escapes; a failed cluster is reported as a fallback (mark_fallback) and
/// `cluster.failed()` hands it to the base solver with Bullet's
/// restitution; every reported cluster gets its bodies
/// (`cluster.describe(report)`, only when there is a callback) and goes to
/// `on_impact`.
template <class Cluster, class Report, class Callback>
Resolution resolve_safely(Cluster& cluster, const ImpactSettings& settings, LawState& law, ImpactStats& stats,
                          Report& report, const Callback& on_impact) noexcept {
  Resolution resolution = Resolution::kNone;
  try {
    try {
      resolution = run_cluster(cluster, settings, law, stats, report, static_cast<bool>(on_impact));
    } catch (const std::exception& e) {
      resolution = Resolution::kFailed;
      report.status = Status::kInfeasible;
      add_message(report, std::string("exception: ") + e.what());
    } catch (...) {
      resolution = Resolution::kFailed;
      report.status = Status::kInfeasible;
      add_message(report, "unknown exception");
    }
    if (resolution == Resolution::kNone) return resolution;
    if (resolution == Resolution::kFailed) {
      cluster.failed();
      mark_fallback(report, on_impact ? cluster.unresolved_contacts() : std::vector<ImpactReport::Contact>{},
                    stats);
    }
    if (!on_impact) return resolution;
    cluster.describe(report);
    notify(on_impact, stats, report);
  } catch (...) {  // std::bad_alloc while reporting: the resolution stands, unreported
  }
  return resolution;
}

// ── hand-off ────────────────────────────────────────────────────────────────

/// Everything the impact phase changes in Bullet's contact state for the
/// base solve of one batch, given back right after it (restore):
///   * hide(): points moved past the end of their manifold's point list, so
///     the base solver does not see them (per manifold, highest index
///     first, so every swap partner is still visible);
///   * mute_restitution(): m_combinedRestitution = 0, so the base solver
///     adds no bounce of its own to what the law resolved;
///   * forget(): no warm start and no push-out in this step (kept: the
///     impact replaced what the point carried from the last step);
///   * show_overlap(): the overlap the base solver sees at a point
///     (m_distance1; kept: collision detection recomputes it next step).
/// restore() undoes the changes newest first, so any interleaving of hide
/// and mute_restitution is given back exactly: every point returns to its
/// index, with what the base solver wrote into the visible ones, and every
/// restitution to its point.
class BaseSolverHandoff {
 public:
  /// Hides the points (manifold, index); each point at most once per batch.
  void hide(std::vector<std::pair<btPersistentManifold*, int>> points);
  /// Sets the point's restitution to 0 until restore() (a point already at
  /// 0 is left alone).
  void mute_restitution(btManifoldPoint& point);
  /// A resolved point carries nothing from the last step into the base
  /// solve: no warm start (applied impulses 0), and its penetration is not
  /// pushed out in this step (m_distance1 clamped to 0).
  static void forget(btManifoldPoint& point);
  /// The base solver sees `depth` ≥ 0 of overlap at the point
  /// (m_distance1 = −depth): 0 where simpact cleared it at position level,
  /// or where the point separates by itself.
  static void show_overlap(btManifoldPoint& point, double depth);
  /// Undoes mute_restitution and hide, newest first; never throws.
  void restore() noexcept;
  bool empty() const { return log_.empty(); }

 private:
  // One change: a muted restitution (point set) or a hidden point (the
  // swap of `index` with `last`, then the count cut to `last`).
  struct Change {
    btManifoldPoint* point = nullptr;
    btScalar restitution = 0;
    btPersistentManifold* manifold = nullptr;
    int index = 0, last = 0;
  };
  std::vector<Change> log_;
};

}  // namespace simpact::bullet::internal
