// simpact — Routh set-valued sampling of simultaneous, inelastic, frictional
// impacts (Halm & Posa, §4–§5).
//
// Paper (README.md, "Papers"): Halm & Posa = Mathew Halm and Michael Posa,
// "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
// Impacts", arXiv:2103.15714.
//
// Symbols as in frictional_problem.h (J_n, J_D, J̄, λ̄, W̄, μ, d, u_n).
//
// ── The law (Halm & Posa, §4, eq. (39)) ─────────────────────────────────────
// Routh's method extended to several contacts: during the impact the velocity
// moves along v̇ ∈ M⁻¹ FC(q), the contact impulses accumulating at ANY
// relative rates, each contact obeying Coulomb friction at the current slip,
// until no contact approaches. The set of reachable non-colliding velocities
// is the set of physically reasonable outcomes: sequential resolutions in
// every order, the simultaneous one, and everything in between.
//
// ── The increment LCP (Halm & Posa, eq. (72)–(75)) ──────────────────────────
// One increment from v with a normal impulse cap λ_max ≥ 0 (m):
//   z = [β; λ_n; λ_D; γ] ≥ 0,  w = W z + q ≥ 0,  zᵀ w = 0, with
//   q = [λ_max; J̄ v + b̄; 0],
//   W = ⎡ 0   −I        0          0 ⎤     rows: β  ⊥ λ_max − λ_n      (73)
//       ⎢ I   J_nM⁻¹J_nᵀ J_nM⁻¹J_Dᵀ 0 ⎥           λ_n ⊥ u_n′ + β        (74)
//       ⎢ 0   J_DM⁻¹J_nᵀ J_DM⁻¹J_Dᵀ E ⎥           λ_D ⊥ J_D v′ + E γ   (32)
//       ⎣ 0   μ         −Eᵀ        0 ⎦           γ  ⊥ μλ_n − Eᵀλ_D   (33)
//   v′ = v + M⁻¹ J̄ᵀ λ̄                                                (75c)
// with E = blkdiag(1_d, …, 1_d), μ = diag(μ_i). (73)–(74) make each λ_n,i
// either reach its cap or stop contact i (u_n,i′ ≥ 0); friction is enforced
// implicitly at v′ (maximum dissipation on the polyhedral cone).
// W is copositive (not symmetric, not PSD); the LCP always has a solution and
// Lemke's method finds one (Theorem 6). Every solution dissipates kinetic
// energy (Theorem 7).
//
// LCP solvers (RouthParameters::increment_solver). Lemke: our own dense
// Lemke (plugin/src/core/lcp.cpp): covering vector 1, lexicographic ratio
// test, so the degenerate rows (the γ rows have q = 0) cannot cycle; its
// residual check turns a numerically broken pivot sequence into a reported
// failure instead of a returned z (see docs/core.md, "LCP solver"). It is the
// reference: O(size²) per pivot and O(size) pivots on the (3 + d) m
// variables. Box pivoting (plugin/src/core/routh_box.h): for d = 4 in 3-D and
// the planar d = 2 the increment is EXACTLY a box-constrained problem in 3m
// (planar 2m) variables — the polyhedral cone's maximum dissipation over the
// diamond |Λ₁| + |Λ₂| ≤ μλ_n is a square in the frame turned by 45° — solved
// by principal pivoting on W = (B M^{1/2})(B M^{1/2})ᵀ with the friction
// bounds tied to the normal impulses. Its solution is mapped back to eq.
// (75)'s z and must pass the same data-scaled residual check as Lemke's; when
// it does not (or the pivoting runs out of steps) Lemke solves the increment
// (FrictionalOutcome::increment_fallbacks counts them). When the LCP has
// several solutions the two solvers may pick different ones; every one is an
// increment of the law. The automatic choice keeps Lemke up to
// kLemkeIncrementContacts contacts, so every small cluster — Halm & Posa's
// examples, the validated cube tosses — resolves bit for bit as before; and
// where both Lemke runs fail there (their pivots stopped just above the
// residual tolerance, seen on 5–8 box-corner contacts with dependent rows),
// box pivoting from a cold start is tried before the increment fails
// (FrictionalOutcome::increment_rescues counts them; IncrementSolver::kLemke
// keeps Lemke alone, the reference).
//
// ── Algorithm 1, Sim(h, x₀, N) (Halm & Posa, §5.1) ──────────────────────────
//   while some u_n,i < −tol and fewer than N increments:
//       λ_max ~ h · p(·) on [0, h]^m;   solve the LCP;   v ← v′.
// p is uniform (scaled per contact by h_i / h under the simultaneous
// automatic step, see below; a seeded SplitMix64 stream: portable,
// bit-identical everywhere) or, with ImpulseSampler::kLowDiscrepancy, the Kronecker
// sequence R_D of Roberts (α_j = frac(φ_D^{-j}), φ_D the real root of
// x^{D+1} = x + 1, D = m·N) with a seeded Cranley–Patterson shift.
// Sample k of a seed is the same number whatever the thread count and
// whatever other samples were drawn: its stream is SplitMix64(mix(seed, k)).
//
// Colliding: u_n,i < −max(separation_tolerance · S √W_nn,ii, r V_i), with
// S = max_j |u⁻_n,j| / √W_nn,jj (largest g-normalized approach speed), as in
// propagative.h, so the test ignores how each row of J_n is scaled. The
// second term is what an increment LCP resolves: its accepted solutions
// satisfy u_n,i′ ≥ −r V_i, r = 1e-9 the residual tolerance and V_i the
// row's data scale (S' √W̄_ii + a_i, S' over every row of J̄, tangential
// ones included: "LCP solvers" below). Without it a contact left at such an
// approach by an increment (seen: −2.2e-10 m/s, with S √W_nn,ii ≈ 0.03 and
// a corner sliding at 5 m/s, so V_i ≈ 0.5) counts as colliding while every
// later increment solves to λ = 0 — Algorithm 1 spun until its N
// increments ran out. The final check's approach tolerance (outcome_check.h,
// 1e-8 V_i) lies above both terms.
//
// Automatic step (h = 0; RouthParameters::automatic_step). h is a free
// parameter of Algorithm 1 (the paper sets it per example); its caps'
// distribution h·p only needs a finite density on the unit box, so any rule
// for h gives samples of the law. Two rules:
//   kSingleContact: h = automatic_step_factor · max_i Λ_i, where Λ_i =
//     max(0, −u⁻_n,i) / W_nn,ii is the impulse that would stop contact i
//     alone without friction. With the factor 2 the mean cap h/2 equals the
//     largest such impulse, so a sample of a few contacts takes a handful
//     of LCPs (the paper's four examples: see demos/routh_examples and the
//     docs/laws.md).
//   kSimultaneous: per contact h_i = automatic_step_factor · max(max_j Λ_j,
//     λ*_i), λ* the normal impulses of the frictionless, inelastic
//     simultaneous impact, LCP(W_nn, u⁻_n) (one box-pivoting solve of m
//     variables; a vertex of its solution set when rows are dependent).
//     Contact i's caps are h_i · U_i: p is a product of uniforms on
//     [0, h_i / h], h = max_i h_i, a finite density on the unit box as
//     Algorithm 1 allows. Where contacts act in series — a column or pile
//     whose ground contacts must stop the momentum of every body above them
//     — λ*_i exceeds every Λ_j by about the number of bodies in series, and
//     the single-contact rule needs O(m) increments (Halm & Posa's Theorem
//     8: increments grow with ‖v⁻‖_M / h); with h_i those contacts' caps
//     match what they must deliver (a landing column of 32 contacts: ~35 →
//     ~7 LCPs, docs/routh.md). The other contacts keep the single-contact
//     scale, so most still reach their caps and their friction bounds stay
//     fixed within the increment: one h = 2 max λ* for all contacts took
//     fewer increments on columns but made pile increments much harder to
//     solve (docs/routh.md). The samples' spread does not shrink: many small
//     random increments average their random rates out, a few large ones do
//     not. If the solve fails, the single-contact rule stands.
//   kAutomatic (default): single-contact up to kLemkeIncrementContacts
//     contacts — so Halm & Posa's examples, the validated cube tosses and
//     every small cluster resolve bit for bit as before — simultaneous above.
//     A small-cluster sample whose N increments do not end the impact under
//     the single-contact step is drawn again (same seed and index) under
//     the simultaneous step before any fallback: contacts that push against
//     each other (a jointed cluster's, or two nearly opposed ones) need
//     impulses far above each one's own Λ_i (W_nn = [[1, −0.99], [−0.99,
//     1]]: 100 against 1). Its message says so, its lcps count both draws and
//     its FrictionalOutcome::step is the simultaneous step's h.
//     If that draw does not end it either, the first draw and its fallback
//     stand. Seen in fuzzed Bullet worlds: 14 of 17 step-limit fallbacks
//     among 1000 worlds ended this way, 2 more with the termination test of
//     "Colliding" (docs/routh.md).
//
// FALLBACK when N increments did not end the impact (Status
// kStepLimitReached, outcome.terminated = false): with
// finish_with_anitescu_potra (default) one Anitescu–Potra LCP (eq. (31),
// frictional_reference.h) from the last velocity finishes it — dissipative
// and non-colliding, but no longer a Routh sample; without it the colliding
// velocity is returned as is (Algorithm 1 verbatim).
// If Lemke fails on an increment (its retries included): the same fallback
// from the last successful increment; when it ends the impact the status is
// kFinishedByFallback (outcome.finished_by_fallback). When the fallback
// fails too the status is kLcpFailed and the result carries the INPUT
// velocity and zero impulses (keeps_input_velocity(), propagative.h): no
// physical outcome was found. Lemke's solutions are accepted only with
// residuals small in the units of the DATA: velocity rows against
// V_j = S √W̄_jj + a_j, impulse rows against the step h (outcome_check.h),
// not against the size of the solution (which let an 8.7e15 kg body take
// 4e16 N·s and gain 1.5e16 J). Every sample then passes the final check
// of propagative.h "Status" (finite; normal impulses ≥ 0; Σ_k λ_D,ik ≤ μ_i
// λ_n,i; no contact approaching, except with finish_with_anitescu_potra =
// false after the step limit; ΔE ≤ 0 to rounding); a failure returns the
// input velocity with the failed check's status. A contact whose W̄_ii is
// below kRankTolerance ‖J_n,i‖² max_k M⁻¹_kk is inert (infinitely massive
// along its normal): its cap is 0, so it takes no impulse; if it
// approaches, the sample is kInfeasible. How often increments fail on large
// clusters of redundant contacts, and what the retries recover, is measured
// in docs/routh.md.
//
// ── Restitution: Stronge's energetic coefficient at arbitrary rates ─────────
// Halm & Posa's law is inelastic. With FrictionalProblem::restitution e_i > 0
// the sampler follows the extension Halm & Posa name as future work (§7):
// Routh's method with Stronge's energetic coefficient of restitution (W. J.
// Stronge, "Rigid body collisions with friction", Proc. R. Soc. Lond. A 431,
// 1990), as Mirtich combined them for one contact (B. Mirtich,
// "Impulse-based dynamic simulation of rigid body systems", PhD thesis, UC
// Berkeley, 1996), resolved at arbitrary relative rates like the
// compression. The derivation is in docs/routh_restitution.md.
//   Work. dE = u·dλ̄ along any impulse path, so the normal work of contact i,
//   W_i = ∫ u_n,i dλ_n,i, splits the kinetic energy change exactly with the
//   friction work. On an increment the law takes the straight path from u to
//   u′ = u + W̄ Δλ̄, on which w_i = ½ (u_n,i + u_n,i′) Δλ_n,i (exact for
//   that path; Σ_i w_i + friction terms = ΔE of the increment).
//   Budget. Contact i stores S_i += e_i² |w_i| when w_i < 0 (compression) and
//   spends S_i −= w_i when w_i > 0 (restitution). Stronge's law for one
//   contact — restitution work = e² × compression work — is S_i = 0 at the
//   end.
//   Increment. Every contact keeps its row of eq. (74) with its cap; a
//   contact that does not approach and has S_i above restitution_tolerance
//   RELEASES: its row targets the speed that would spend S_i if it acted
//   alone without friction,
//       λ_n,i ⊥ u_n,i′ − t_i + β_i ≥ 0,   t_i = √(max(u_n,i, 0)² + 2 W̄_ii S_i)
//   (q's λ_n row holds u_n,i − t_i), so it pushes until it separates at t_i
//   or reaches its cap. When friction or other contacts make the estimate
//   miss, the target is corrected (t_i² ← u_n,i² + (t_i² − u_n,i²) S_i / w_i,
//   exact while the contact's slip mode does not change; bisection within
//   the bracket found so far where it does) and the increment re-solved, at
//   most kReleaseCorrections times; a final solve over some budget is
//   replaced by the last one under every budget or, when there was none,
//   re-solved with the contacts over budget as plain rows and their budgets
//   dropped (they cannot spend them by pushing); what is left
//   over is spent in the next increments. Budgets still unspent when
//   max_steps ends the sample are lost energy, said in the message.
//   A contact that takes impulse on a plain row while separating (pushed by
//   others) has that work charged to its budget too, which may go negative;
//   its later compression repays it first. The impact ends when no contact approaches
//   and every budget is spent.
//   Guarantees. e = 0: S stays 0, every q and draw is Halm & Posa's, and the
//   sample is bitwise Routh's. One frictionless contact: u_n⁺ = −e u_n⁻
//   exactly (Newton = Poisson = Stronge there). Frictionless contacts that
//   do not interact (W̄_ij = 0): each rebounds at −e_i u_n,i⁻, which is the
//   propagative law's outcome (propagative.h, "Restitution"). Energy: Σ_i
//   w_i = Σ_i (e_i² − 1) C_i − S_i ≤ 0 when the budgets are spent, and
//   an increment that would lift the kinetic energy above v⁻'s is retried
//   with its caps halved (up to kGuardHalvings times), and if it still
//   would, replaced by a plain Routh increment with the budgets dropped (a
//   dissipative step; counted in the message) — no sample gains energy.
//   Cones: every increment is an LCP solution of (32)–(33).
//   Set-valued: the caps, hence the relative rates of compression and
//   restitution across contacts, are drawn as for the inelastic law.
//   With coupled frictionless contacts the set differs from the propagative
//   law's single blend (propagative.h), which is why the adapters' `auto`
//   keeps the propagative law on frictionless clusters.
//
// ── Algorithm 2, Approximate(h, x₀, ε, N, M) (Halm & Posa, §5.3) ────────────
// M independent samples on all cores; sample k is always sample(k), so the
// set is bitwise identical for any thread count. With epsilon > 0 each sample
// then takes the final increment of line 5, f(v, ε/(3ψ)·1) with
// ψ = σ_max(M⁻¹J̄ᵀ) m (1 + max μ) + 1, and samples still colliding are
// flagged (line 8 drops them; we keep them, flagged, so nothing is lost).
//
// ── Deliberate deviations from Halm & Posa / their MATLAB code ──────────────
// * Samples of the MATLAB code come from a Sobol net and PATH; ours from a
//   seeded stream (or R_D) and Lemke. The reachable set is the same; which
//   LCP solution is picked when several exist (Assumption 6 fails, e.g. the
//   compass gait) may differ.
// * The MATLAB code stops at min(J_n v) ≥ −1e-8 (absolute); we use the
//   scale-free test above.
// * The fallback above (the paper leaves unterminated samples colliding).
// * h: the paper sets it by hand per example; ours is derived from the
//   impact when not given ("Automatic step"), from the simultaneous
//   impulses above kLemkeIncrementContacts contacts.
#pragma once

#include <simpact/frictional_problem.h>

#include <cstdint>
#include <memory>
#include <vector>

namespace simpact {

enum class ImpulseSampler {
  kUniform,         ///< i.i.d. uniform caps from a seeded SplitMix64 stream.
  kLowDiscrepancy,  ///< Kronecker sequence R_D with a seeded random shift.
};

const char* to_string(ImpulseSampler sampler);  ///< "uniform", "low_discrepancy"
/// Parses "uniform" / "low_discrepancy"; throws InvalidProblem otherwise.
ImpulseSampler parse_impulse_sampler(const std::string& name);

/// Re-solves per increment that may correct a releasing contact's target
/// speed (see "Restitution"). The first correction is exact while the
/// contact's slip mode holds; where the mode changes the work is not smooth
/// in the target, and the further ones bisect the bracket the earlier solves
/// found; what a last solve leaves unspent is spent by later increments,
/// and a last solve over the budget is replaced by the last one under it.
inline constexpr int kReleaseCorrections = 4;

/// Halvings of an increment's caps the energy guard tries before it drops
/// the restitution budgets (see "Restitution"). The straight path's error
/// shrinks with the increment (first order where a slip reverses), so four
/// halvings (1/16 of the increment) absorb what the random problems of
/// tests/core/routh_restitution_test.cpp show; the last resort stays.
inline constexpr int kGuardHalvings = 4;

/// How each increment LCP is solved (header, "LCP solvers").
enum class IncrementSolver {
  /// Lemke up to kLemkeIncrementContacts contacts or for cones the box form
  /// does not cover (3-D with d ≠ 4); box pivoting above, Lemke as its
  /// fallback.
  kAutomatic,
  kLemke,        ///< Lemke always (the reference).
  kBoxPivoting,  ///< Box pivoting whenever the cone allows it, Lemke as its fallback.
};

const char* to_string(IncrementSolver solver);  ///< "automatic", "lemke", "box_pivoting"
/// Parses the names of to_string; throws InvalidProblem otherwise.
IncrementSolver parse_increment_solver(const std::string& name);

/// Box pivoting's fallback: Lemke solves an increment (or the Anitescu–
/// Potra LCP) that box pivoting could not, on at most this many variables.
/// Lemke costs O(size³) (dense pivots on (3 + d) m variables): 448 is a
/// 64-contact cluster with d = 4 (its measured cost, and why a larger one
/// would stall a simulation: docs/routh.md, "Costs behind the defaults").
/// Beyond it the increment
/// fails, and so does the sample (status kLcpFailed, the input velocity):
/// the Bullet adapters then hand the cluster to the base solver and say so.
inline constexpr int kLemkeFallbackVariables = 448;

/// The automatic choices' limit: Lemke and the single-contact step up to
/// this many contacts (IncrementSolver::kAutomatic, AutomaticStep::
/// kAutomatic). Eight is the cluster size the Bullet adapters capped Routh
/// clusters at before box pivoting existed, so every cluster they resolved
/// then resolves bit for bit as before; above it box pivoting is faster
/// (docs/routh.md, "Costs behind the defaults") and its cost grows far more
/// slowly, and the simultaneous step keeps the increments few.
inline constexpr int kLemkeIncrementContacts = 8;

/// How the automatic step h is chosen (header, "Automatic step").
enum class AutomaticStep {
  kAutomatic,      ///< kSingleContact up to kLemkeIncrementContacts contacts, kSimultaneous above.
  kSingleContact,  ///< factor × the largest single-contact stopping impulse.
  kSimultaneous,   ///< per contact: factor × the larger of that and its simultaneous impulse.
};

const char* to_string(AutomaticStep rule);  ///< "automatic", "single_contact", "simultaneous"
/// Parses the names of to_string; throws InvalidProblem otherwise.
AutomaticStep parse_automatic_step(const std::string& name);

struct RouthParameters {
  /// h, the normal impulse cap scale [impulse units, N·s in SI]. 0 =
  /// automatic (see header). Must be ≥ 0 and finite.
  double step = 0.0;
  /// Factor of the automatic step (dimensionless, > 0).
  double automatic_step_factor = 2.0;
  /// The automatic step's rule (header, "Automatic step"); unused when
  /// step > 0.
  AutomaticStep automatic_step = AutomaticStep::kAutomatic;
  /// N, increments per sample before the fallback. 100 is far above what
  /// the automatic step needs (2–10 LCPs in our examples) and bounds the
  /// cost of a pathological sample.
  int max_steps = 100;
  std::uint64_t seed = 0;
  ImpulseSampler sampler = ImpulseSampler::kUniform;
  /// Dimensionless, relative to S (see header). Lemke returns u_n′ = 0 to
  /// ~1e-15 relative for a contact it stops; 1e-9 is six orders above that
  /// and far below any approach speed that matters.
  double separation_tolerance = 1e-9;
  /// Dimensionless, relative to E_s = Σ_i ½ (u⁻_n,i)² / W̄_ii over the
  /// approaching contacts: a release budget S_i at or below this × E_s is
  /// spent (see "Restitution"). 1e-14 leaves a rebound speed short by at most
  /// √(1e-14) = 1e-7 of the approach speeds, and is a hundred times the
  /// rounding (~1e-16 E_s) that subtracting a contact's work leaves. Must
  /// be > 0.
  double restitution_tolerance = 1e-14;
  /// Finish an unterminated sample with one Anitescu–Potra LCP.
  bool finish_with_anitescu_potra = true;
  /// Keep the velocity after every increment in outcome.trajectory.
  bool record_trajectory = false;
  /// The increment LCP's solver (header, "LCP solvers").
  IncrementSolver increment_solver = IncrementSolver::kAutomatic;
  /// Validate the problem first (throws InvalidProblem).
  bool validate_input = true;
};

struct RouthSetParameters {
  int samples = 1024;  ///< M, ≥ 1.
  int threads = 0;     ///< 0 = std::thread::hardware_concurrency().
  /// ε of Algorithm 2 line 5 (velocity units); 0 = no final increment.
  double epsilon = 0.0;
};

/// Algorithm 2's output, stored flat (column k = sample k) so that 2²⁰
/// samples cost tens of MB, not millions of allocations.
struct RouthOutcomeSet {
  Status status = Status::kSuccess;  ///< worst status over the samples.
  std::string message;
  double step = 0.0;                       ///< h in force.
  Eigen::MatrixXd velocities;              ///< n × M, v⁺ of each sample.
  Eigen::MatrixXd normal_velocities;       ///< m × M, u_n⁺.
  Eigen::MatrixXd tangential_velocities;   ///< (rows of J_t) × M, u_t⁺.
  Eigen::MatrixXd normal_impulses;         ///< m × M, Λ_n.
  Eigen::VectorXd energy_change;           ///< M, ΔE ≤ 0.
  std::vector<int> lcps;                   ///< M, LCPs per sample.
  std::vector<char> terminated;            ///< M, Algorithm 1 ended the impact.
  std::vector<char> colliding;             ///< M, still colliding at the end.
  int terminated_count = 0;
  int threads_used = 0;
  double mean_lcps() const;
};

/// Precomputes W̄, the LCP matrix and h for one problem; then samples are
/// cheap. sample() and approximate() are const and thread-safe.
class RouthSampler {
 public:
  explicit RouthSampler(const FrictionalProblem& problem, RouthParameters parameters = {});
  ~RouthSampler();
  RouthSampler(RouthSampler&&) noexcept;
  RouthSampler& operator=(RouthSampler&&) noexcept;

  const RouthParameters& parameters() const { return parameters_; }
  double step() const;  ///< h in force (the largest of cap_scales()).
  /// h_i per contact (m): increment caps are h_i · U_i, U_i uniform on
  /// [0, 1] (header, "Automatic step"); all equal to step() unless the
  /// simultaneous rule is in force.
  const Eigen::VectorXd& cap_scales() const;

  /// Sample number `index` of the seed's stream (Algorithm 1).
  FrictionalResult sample(std::uint64_t index = 0) const;
  /// Algorithm 2: samples 0 … M−1.
  RouthOutcomeSet approximate(const RouthSetParameters& set = {}) const;

  struct Impl;  ///< opaque; defined in the implementation.

 private:
  struct Workspace;
  // One sample with the retry of "Automatic step"; draw() is one pass of
  // Algorithm 1 (and its fallback) with the given cap scales h_i.
  FrictionalResult run(std::uint64_t index, double final_cap, Workspace& workspace) const;
  FrictionalResult draw(std::uint64_t index, double final_cap, Workspace& workspace,
                        const Eigen::VectorXd& caps) const;

  RouthParameters parameters_;
  std::unique_ptr<Impl> impl_;
};

/// One-shot wrappers.
FrictionalResult sample_routh(const FrictionalProblem& problem,
                              const RouthParameters& parameters = {});
RouthOutcomeSet approximate_routh_set(const FrictionalProblem& problem,
                                      const RouthParameters& parameters = {},
                                      const RouthSetParameters& set = {});

}  // namespace simpact
