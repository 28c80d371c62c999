// simpact — propagative minimal-sequence impact law (Seghete & Murphey 2014),
// with its plastic and restitution variants.
//
// Papers (README.md, "Papers"):
//   Seghete & Murphey 2014: Vlad Seghete and Todd D. Murphey, "A propagative
//     model of simultaneous impact: existence, uniqueness, and design
//     consequences", IEEE Transactions on Automation Science and Engineering
//     11(1), 2014; arXiv:1709.02296.
//   Seghete & Murphey 2010: Vlad Seghete and Todd Murphey, "Variational
//     Solutions to Simultaneous Collisions Between Multiple Rigid Bodies",
//     IEEE ICRA 2010.
//
// Symbols as in impact_problem.h (n, m, v, M⁻¹, J, b, u = J v + b, W, λ, R).
//
// ── Elastic law (Seghete & Murphey 2014, §II–III, and 2010, §III) ───────────
// A single contact i with u_i < 0 is resolved by the reflection Γ(Dφ_i) of
// Seghete & Murphey 2014, eq. (7), in the kinetic metric:
//     λ_i = −2 u_i / W_ii,        v ← v + M⁻¹ J_iᵀ λ_i,
// which reverses u_i, conserves E (eq. (4b)) and satisfies λ_i > 0.
// Simultaneous contacts are resolved PROPAGATIVELY: reflect one currently
// approaching contact at a time until no contact approaches (eq. (14)).
// Because every reflection acts through J M⁻¹ Jᵀ, we work in contact space:
//     u ← u + W[:, i] λ_i          (cost: the non-zeros of column i of W)
// and apply v⁺ = v⁻ + M⁻¹ Jᵀ λ once at the end. A reflected contact separates
// (u_i > 0), so the same contact is never chosen twice in a row: the
// sequences produced are exactly those allowed by Lemma 1 (minimal sequences,
// Definition 1, are alternating for two contacts).
//
// Every contact of the problem is "closed" (φ_i = 0): a contact touching at
// zero relative velocity takes part and may be struck later in the sequence
// (the middle ball of a Newton's cradle). This is the set S of §III
// extended to touching contacts, as the cradle example (eq. (15)) requires.
//
// Order policy: which approaching contact to reflect next.
//   kMostNegative   argmin of the g-normalized velocity u_i/√W_ii, i.e.
//                   argmin ⟨w_i, p⟩_g with unit covectors w_i — Seghete &
//                   Murphey 2014, §VII-B, "first run". Normalizing makes the
//                   choice independent of how each row of J is scaled
//                   (Γ(αu) = Γ(u), eq. (9)).
//   kLeastNegative  argmax of the same among approaching contacts — "second run".
//   kTimeOfImpact   smallest time_of_impact hint among approaching contacts.
//   kIndex          smallest contact index among approaching contacts.
//   kRandom         uniform among approaching contacts, from a seeded
//                   SplitMix64 stream (portable: identical on every platform).
//   kAll            enumerate every sequence (the branching of Seghete &
//                   Murphey 2010, §III-B): at each step any approaching
//                   contact. Distinct outcomes are kept (see
//                   dedup_tolerance); the enumeration stops when
//                   enumeration_budget reflections have been spent.
// Ties are broken by the lower contact index, so every policy is
// deterministic.
//
// "Approaching" uses a named tolerance: contact i approaches iff
//     u_i / √W_ii < −approach_tolerance · S,
//     S = max_j |u⁻_j| / √W_jj  (largest g-normalized pre-impact speed).
//
// ── Plastic law (Seghete & Murphey 2014, eq. (10)–(11); Moreau) ─────────────
// The kinetic-metric projection of v⁻ onto {v : J v + b ≥ 0}:
//     u⁺ = u⁻ + W λ ≥ 0,  λ ≥ 0,  λᵀ u⁺ = 0        (an LCP in contact space)
// solved exactly (PropagativeParameters::plastic_solver; automatic by
// default): up to kDensePlasticContacts contacts with Lemke's
// complementary pivoting on the dense W (symmetric PSD, hence copositive-
// plus: Lemke either solves it or proves it infeasible); above, first by a
// primal–dual active-set method on the sparse W (block principal pivoting,
// one sparse LDLᵀ per try of the whole active set: a packed pit's ~900
// contacts settle in ~8 solves), and where that does not settle — and
// where Lemke fails without proving infeasibility — by box pivoting on the
// sparse rows J M^{-1/2} (Cottle–Dantzig principal pivoting, one variable
// at a time, which keeps dependent contacts such as a face's four corners
// out of its factor; on W itself when M⁻¹ has a coupled block of more than
// 96 DOFs, a large joint group, whose root would cost O(block³)). Every
// result passes the same residual check against the data's scales.
// The LCP and the equality projection of eq. (11) (u⁺ = 0 for every
// contact) coincide when the latter's impulses are all non-negative; otherwise eq. (11)
// would need adhesive impulses and the LCP releases the contacts that would
// pull. u⁺ is unique; λ is unique when W is non-singular.
//
// ── Restitution (Seghete & Murphey 2014, §III-A) ────────────────────────────
// v⁺ = α v_e⁺ + (1 − α) v_p⁺  (eq. (17)), elastic and plastic outcomes, with α
// chosen so that the paper's DEFINITION (16) holds:
//     R = √(1 − ΔE/E_p),   E_p = energy a plastic impact dissipates,
//                          ΔE  = energy this impact dissipates.
// With p_e, p_p the elastic and plastic momenta, L = ‖p_e‖²_g − ‖p_p‖²_g,
// D = ‖p_e − p_p‖²_g and e = ⟨p_p, p_e − p_p⟩_g = u_p⁺ᵀ λ_e ≥ 0, (16) reads
//     α² D + 2 α e − R² L = 0,   α = R² L / (e + √(e² + D R² L)) ∈ [0, R].
// DELIBERATE DEVIATIONS from the text of Seghete & Murphey 2014, §III-A:
//  • The paper concludes α = √(1 − R²). That contradicts (16): R = 0 would
//    give the elastic outcome and R = 1 the plastic one, and a single contact
//    would rebound at −√(1 − R²) times its approach speed instead of −R. The
//    text also writes E_p = ½‖p_p‖²_g, which is the energy kept, not lost.
//  • The paper's (18), ⟨p_p, p_e⟩_g = ‖p_p‖²_g (e = 0), under which (16)
//    gives α = R exactly, holds only when every contact the elastic sequence
//    pushes on stays closed in the plastic outcome. When the plastic
//    projection releases a contact (u_p⁺_i > 0) that the elastic sequence
//    struck (λ_e,i > 0), e > 0 and α = R would violate (16); the root above
//    satisfies (16) always and equals R whenever (18) holds — in particular
//    for a single contact, which rebounds at exactly −R times its approach.
// Both points are checked by tests (RestitutionTest). Impulses blend the same
// way: λ = α λ_e + (1 − α) λ_p ≥ 0, and every blend is feasible (a convex
// combination of two feasible outcomes).
//
// ── Termination ─────────────────────────────────────────────────────────────
// Seghete & Murphey 2014, Theorem 1, bounds two contacts u, v by
// n ≤ ⌈π/γ⌉ reflections, with
//     γ = arcsin⟨r₀, u⟩_g = arcsin √((1 + c)/2),   c = ⟨u, v⟩_g/(‖u‖‖v‖).
// No bound is proved for m > 2 contacts. The default cap is
//     ⌈π/max(γ_min, γ_jam)⌉ · max(1, m(m−1)/2),
// γ_min the smallest γ over pairs with W_ij ≠ 0 (uncoupled pairs: γ = π/4),
// i.e. exactly Theorem 1 for m = 2 and one such bound per pair beyond; γ_jam
// = π / kMaxPairRun (see below). The cap is clamped to kMaxReflectionCeiling.
//
// JAMS. A RUN of consecutive reflections alternating between one pair
// (i, j) moves the velocity only in the plane of w_i, w_j. There each
// reflection is a reflection about the line u_i = 0; with offsets (or
// velocity along infinitely massive directions, which acts like one) the
// two lines are shifted, but while the normals are independent they still
// meet in one point, and the pair's reflections are rotations by 2γ_ij
// about it: Theorem 1's ⌈π/γ_ij⌉ bounds the run whatever the offsets, and a
// longer run is rounding. The run is stopped at
//     min(⌈π/γ_ij⌉ + kPairRunSlack, kMaxPairRun)
// reflections. With exactly opposite normals (c = −1: a body between two
// parallel walls, a kinematic vise) the lines never meet: the run never
// ends, and with closing partners every reflection adds energy (the seen
// failure: ~446k reflections, then overflow). Nearly opposite normals
// (⌈π/γ_ij⌉ > kMaxPairRun: a ball in a wedge narrower than ~0.04°) are the
// same jam in finite precision; see kMaxPairRun for why that length is where
// an elastic outcome stops meaning anything.
// When the cap or a jam stops the sequence, the law returns the plastic
// outcome (always feasible, never gains energy) with status
// kReflectionCapReached and a message naming the cause — documented
// fallback, never an endless loop. A reflection that produces a non-finite
// impulse stops the law at once with kNonFinite (input velocity returned).
//
// COST. One reflection costs O(column i of W + column i of M⁻¹Jᵀ). A single
// sequence costs at most the cap: ≤ kMaxPairRun · m(m−1)/2 and
// ≤ kMaxReflectionCeiling reflections.
// kAll: the budget B (enumeration_budget) bounds the reflections; each costs
// O(n + m) (the explored path's state is copied). Duplicate removal keeps the
// distinct outcomes in an ordered index keyed by a 1-Lipschitz linear
// functional of the impulse (k(λ) = ⟨r, Jᵀλ⟩_g / ‖r‖_g for a fixed r), so an
// outcome is compared only with those whose key lies within the dedup
// tolerance: O(log L) per outcome plus the (typically empty) window, L ≤ B
// outcomes. The result set and its order are those of comparing with every
// kept outcome (a window is a necessary condition for a match). The
// indeterminacy ξ compares all pairs when L(L−1)/2 ≤ B; beyond, it is the
// double-sweep estimate (farthest outcome from outcomes[0], then farthest
// from that), a lower bound within a factor 2 of the exact spread, and the
// message says so. Total: O(B (n + m) + L log L + min(L², B) · nnz(W)).
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace simpact {

enum class OrderPolicy {
  kMostNegative,
  kLeastNegative,
  kTimeOfImpact,
  kIndex,
  kRandom,
  kAll,
};

/// Outcome status, shared by every core law. Anything but kSuccess carries a
/// message in the result.
///
/// Every law ends with ONE final check of the outcome it returns (the same
/// code for all laws, plugin/src/core/outcome_check.h), against tolerances
/// relative to the problem's DATA (pre-impact contact velocities, W's
/// diagonal, the impulse scale of the data), never to the solution's size:
///   1. every impulse and velocity entry is finite;
///   2. normal impulses are ≥ 0 and friction impulses inside their cones;
///   3. no contact approaches: u⁺ = J v⁺ + b, recomputed from the returned
///      velocity, is ≥ −tolerance;
///   4. no energy is gained: ΔE = ½ λᵀ (u⁻ + u⁺) (the kinetic-metric energy
///      change, exact in contact space) ≤ tolerance.
/// kSuccess means all four hold for the law's own outcome. The statuses for
/// which keeps_input_velocity() is true mean that NO physical outcome was
/// produced: the result carries the input velocity unchanged and zero
/// impulses, and the caller must resolve the impact another way (the Bullet
/// adapters hand the cluster to their base solver). The other statuses carry
/// a checked outcome that is a documented fallback, not the law's own.
enum class Status {
  kSuccess,               ///< law finished; its outcome passed the final check.
  kReflectionCapReached,  ///< elastic loop hit the cap or was found jammed
                          ///< (see "Termination"): plastic outcome, checked.
  kBudgetExhausted,       ///< kAll stopped early: outcomes (checked) are a subset.
  kInfeasible,            ///< no impulse can stop an approaching contact:
                          ///< velocity returned unchanged, impulses zero.
  kLcpFailed,             ///< an LCP (plastic solve, Routh increment) failed
                          ///< numerically, and so did its fallback: velocity
                          ///< returned unchanged, impulses zero.
  kStepLimitReached,      ///< a frictional law used its max_steps without
                          ///< ending the impact; its fallback is documented
                          ///< in its header (routh.h, frictional_reference.h).
  kFinishedByFallback,    ///< Routh: an increment's LCP failed (after its
                          ///< retries); one Anitescu–Potra LCP from the last
                          ///< good increment ended the impact (checked).
  kNonFinite,             ///< an impulse or velocity overflowed or became NaN:
                          ///< velocity returned unchanged, impulses zero.
  kEnergyGain,            ///< the outcome gained kinetic energy beyond the
                          ///< tolerance (no law here may, restitution ≤ 1):
                          ///< velocity returned unchanged, impulses zero.
  kStillApproaching,      ///< a contact still approaches beyond the tolerance
                          ///< after the law ended: velocity returned
                          ///< unchanged, impulses zero.
  kImpulseOutsideCone,    ///< a negative normal impulse, or a friction impulse
                          ///< outside its cone, beyond the tolerance:
                          ///< velocity returned unchanged, impulses zero.
};

/// True for the statuses whose result carries the INPUT velocity unchanged
/// and zero impulses (kInfeasible, kLcpFailed, kNonFinite, kEnergyGain,
/// kStillApproaching, kImpulseOutsideCone): the law produced no physical
/// outcome and the caller must resolve the impact another way.
bool keeps_input_velocity(Status status);

/// "success", "reflection_cap_reached", "budget_exhausted", "infeasible",
/// "lcp_failed", "step_limit_reached", "finished_by_fallback", "non_finite",
/// "energy_gain", "still_approaching", "impulse_outside_cone".
const char* to_string(Status status);
const char* to_string(OrderPolicy policy);
/// Parses the names used by to_string(OrderPolicy): "most_negative",
/// "least_negative", "time_of_impact", "index", "random", "all". Throws
/// InvalidProblem on an unknown name.
OrderPolicy parse_order_policy(const std::string& name);

/// Upper clamp of the automatic reflection cap (see header comment): three
/// orders above the longest terminating sequences in our tests (a struck
/// 1000-ball chain: 999 reflections), and a bound on the work of one impact
/// (docs/propagative.md gives its cost). Jams of
/// two contacts (exactly or nearly opposite normals) are stopped far sooner,
/// at kMaxPairRun; the clamp bounds what longer cycles among more contacts
/// may cost.
inline constexpr std::int64_t kMaxReflectionCeiling = 1'000'000;

/// Longest run of alternating reflections of one pair of contacts (see
/// "Termination"). A pair run rotates the momentum by 2γ per reflection in
/// the pair's plane, so after N reflections an error δγ in the normals moves
/// the outcome by ~N·δγ. Normals from single-precision geometry carry
/// δγ ~ 1e-7: at N = 10⁴ the outcome is still good to ~1e-3, while longer
/// runs (wedges narrower than 2π/10⁴ ≈ 0.036°) give an outcome that is
/// numerically arbitrary; they are treated as jams, at a hundredth of the
/// work of kMaxReflectionCeiling (docs/propagative.md).
inline constexpr std::int64_t kMaxPairRun = 10'000;

/// Plastic LCPs (see "Plastic law") of up to this many contacts are solved
/// by dense Lemke, the reference; larger ones by the sparse active-set
/// method, then box pivoting on sparse rows where it does not settle. Dense Lemke costs O(m²) memory and O(m²) per pivot; on landing box
/// piles (dependent corner contacts) it failed at 250–370 contacts after
/// 0.5–2.3 s each (a 125-box pile, restitution 0.5), where box pivoting
/// solves them (docs/propagative.md, "Plastic LCP at pile scale").
inline constexpr int kDensePlasticContacts = 64;

/// Extra reflections allowed beyond Theorem 1's ⌈π/γ_ij⌉ before a pair run
/// is declared driven: two absorb the rounding of γ_ij near a boundary
/// (the bound is an integer ceiling of a computed angle).
inline constexpr std::int64_t kPairRunSlack = 2;

/// How the plastic LCP is solved (see "Plastic law").
enum class PlasticSolver {
  /// Dense Lemke up to kDensePlasticContacts contacts; above, the sparse
  /// active-set method, then box pivoting where it does not settle; box
  /// pivoting also wherever Lemke fails without proving the LCP infeasible.
  kAutomatic,
  kLemke,        ///< Dense Lemke always (the reference).
  kBoxPivoting,  ///< Box pivoting always (it cannot prove infeasibility).
  /// The sparse primal–dual active-set method alone (it cannot prove
  /// infeasibility, and fails where it does not settle; for tests and
  /// benchmarks).
  kActiveSet,
};

struct PropagativeParameters {
  OrderPolicy policy = OrderPolicy::kMostNegative;
  std::uint64_t seed = 0;  ///< for kRandom.
  /// Dimensionless, relative to S (see header). Each reflection adds about
  /// one rounding error (~1e-16 relative) to every velocity it touches; 1e-10
  /// leaves room for 10⁶ reflections of drift and is ten orders below any
  /// approach speed worth a bounce.
  double approach_tolerance = 1e-10;
  /// Reflection cap per sequence; 0 = automatic (Theorem 1, see header).
  std::int64_t max_reflections = 0;
  /// kAll: total reflections over all explored sequences before stopping.
  std::int64_t enumeration_budget = 1'000'000;
  /// kAll: two outcomes are the same when their impulses differ by at most
  /// this × the largest impulse g-norm, in the g-norm √(Δλᵀ W Δλ).
  /// Orders of reflections that commute give results equal up to rounding
  /// (~1e-15); 1e-9 merges those and nothing physically distinct.
  double dedup_tolerance = 1e-9;
  /// Validate the problem first (throws InvalidProblem). The Bullet adapter
  /// builds problems itself and turns this off in its hot path.
  bool validate_input = true;
  /// Compute energy_before/energy_after (needs (M⁻¹)⁺ per decoupled block).
  bool compute_energy = true;
  /// The plastic LCP's solver (plastic outcomes, restitution R < 1, and
  /// the plastic fallback of a capped or jammed sequence).
  PlasticSolver plastic_solver = PlasticSolver::kAutomatic;
  /// Residual accepted for the plastic LCP's solution (every plastic_solver),
  /// dimensionless: row i's feasibility −w_i and complementarity
  /// min(z_i, w_i) measured in its own data scales, velocity
  /// V_i = √(2E) √W_ii + a_i (a_i = |b_i| + Σ_k |J_ik v⁻_k|) and impulse
  /// V_i / W_ii (lcp.h, LemkeParameters::w_scale). An accurate solve lands
  /// at 1e-14 (Lemke) to 1e-10 (the iterative solvers), a broken one at 1e-6
  /// and above; 1e-9 sits between. Data that carry less than double
  /// precision want it looser: the Bullet adapter in single precision sets
  /// 2⁻²⁴ (float's unit roundoff, clustering.h kPlasticResidualTolerance),
  /// the relative rounding its write-back puts on every velocity anyway —
  /// the solvers then stop where single-precision contact rows, dependent
  /// only to ~1e-7, let them (docs/scaling.md, "Ball pits", single
  /// precision). The final check's approach allowance follows, for every
  /// outcome (elastic ones too): max(1e-8, 10 × the larger of this and
  /// approach_tolerance) × V_i (outcome_check.h). Its energy allowance does
  /// not (1e-8 E_s): a plastic outcome's complementarity slack adds at most
  /// ~2 × this × E_s to ΔE, far below the dissipation of any impact the
  /// plastic LCP resolves (an impact that dissipates less than 1e-7 of E_s
  /// with this at 2⁻²⁴ could fail that check and fall back). Must lie in
  /// [kMinPlasticResidualTolerance, kMaxPlasticResidualTolerance];
  /// PropagativeSolver::solve and resolve_plastic throw
  /// std::invalid_argument otherwise (NaN included).
  double plastic_residual_tolerance = 1e-9;
};

/// The smallest PropagativeParameters::plastic_residual_tolerance accepted:
/// the plastic solvers decide a row's side at 1e-12 of its scale
/// (kActiveSetDecisionTolerance, box_qp.h's kBoxDecisionTolerance), so a
/// residual below that cannot be reached by design.
inline constexpr double kMinPlasticResidualTolerance = 1e-12;
/// The largest accepted: a solve that ends at 1e-6 of a row's velocity scale
/// is a broken one (above), and a looser tolerance would accept it.
inline constexpr double kMaxPlasticResidualTolerance = 1e-6;

struct Outcome {
  Eigen::VectorXd velocity;  ///< v⁺ (n).
  Eigen::VectorXd impulses;  ///< λ (m), ≥ 0.
  std::vector<int> sequence; ///< contacts reflected, in order (elastic part).
};

struct ImpactResult {
  Status status = Status::kSuccess;
  std::string message;            ///< why, when status != kSuccess.
  std::vector<Outcome> outcomes;  ///< one, or the distinct ones for kAll.
  double energy_before = 0.0;     ///< ½ v⁻ᵀ M v⁻ (0 if !compute_energy).
  double energy_after = 0.0;      ///< same for outcomes[0].
  std::int64_t reflections = 0;   ///< of outcomes[0]; for kAll, all explored.
  std::int64_t sequences_explored = 0;  ///< kAll: complete sequences found.
  std::int64_t reflection_cap = 0;      ///< cap in force.
  /// kAll: impulse-norm evaluations spent comparing outcomes (duplicate
  /// removal and the indeterminacy), the work bounded in "Termination".
  std::int64_t comparisons = 0;
  /// kAll only: ξ = max_ij ‖p_i − p_j‖_g / ‖p⁻‖_g (Seghete & Murphey 2014,
  /// §VII-A). If ‖p⁻‖_g is zero (all motion along offsets or infinitely
  /// massive DOFs) ξ is taken relative to the largest impulse g-norm instead.
  std::optional<double> indeterminacy;
};

/// Reusable solver: keeps its workspace between calls, so resolving many
/// impacts allocates nothing once sizes have been seen. Not thread-safe; use
/// one per thread.
class PropagativeSolver {
 public:
  explicit PropagativeSolver(PropagativeParameters parameters = {});
  ~PropagativeSolver();
  PropagativeSolver(PropagativeSolver&&) noexcept;
  PropagativeSolver& operator=(PropagativeSolver&&) noexcept;

  const PropagativeParameters& parameters() const { return parameters_; }
  void set_parameters(const PropagativeParameters& parameters);

  /// Resolves the impact with the problem's restitution (elastic, plastic or
  /// the blend). The returned reference stays valid until the next call.
  const ImpactResult& solve(const ImpactProblem& problem);

  struct Workspace;  ///< opaque; defined in the implementation.

 private:
  PropagativeParameters parameters_;
  std::unique_ptr<Workspace> workspace_;
};

/// One-shot convenience wrapper around PropagativeSolver.
ImpactResult resolve(const ImpactProblem& problem,
                     const PropagativeParameters& parameters = {});

/// The plastic outcome alone (restitution ignored).
ImpactResult resolve_plastic(const ImpactProblem& problem,
                             const PropagativeParameters& parameters = {});

}  // namespace simpact
