#include <simpact/routh.h>

#include <simpact/frictional_reference.h>

#include "core/frictional_space.h"
#include "core/validation.h"
#include "core/lcp.h"
#include "core/names.h"
#include "core/outcome_check.h"
#include "core/rng.h"
#include "core/routh_box.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <exception>
#include <limits>
#include <mutex>
#include <sstream>
#include <thread>

#include <Eigen/SVD>

namespace simpact {

namespace {
constexpr std::pair<ImpulseSampler, const char*> kSamplerNames[] = {
    {ImpulseSampler::kUniform, "uniform"}, {ImpulseSampler::kLowDiscrepancy, "low_discrepancy"}};
constexpr std::pair<IncrementSolver, const char*> kSolverNames[] = {
    {IncrementSolver::kAutomatic, "automatic"},
    {IncrementSolver::kLemke, "lemke"},
    {IncrementSolver::kBoxPivoting, "box_pivoting"}};
constexpr std::pair<AutomaticStep, const char*> kStepNames[] = {
    {AutomaticStep::kAutomatic, "automatic"},
    {AutomaticStep::kSingleContact, "single_contact"},
    {AutomaticStep::kSimultaneous, "simultaneous"}};
}  // namespace

const char* to_string(ImpulseSampler sampler) { return internal::name_of(sampler, kSamplerNames); }
ImpulseSampler parse_impulse_sampler(const std::string& name) {
  return internal::parse_name(name, kSamplerNames, "sampler");
}

const char* to_string(IncrementSolver solver) { return internal::name_of(solver, kSolverNames); }
IncrementSolver parse_increment_solver(const std::string& name) {
  return internal::parse_name(name, kSolverNames, "increment solver");
}

const char* to_string(AutomaticStep rule) { return internal::name_of(rule, kStepNames); }
AutomaticStep parse_automatic_step(const std::string& name) {
  return internal::parse_name(name, kStepNames, "automatic step");
}

double RouthOutcomeSet::mean_lcps() const {
  if (lcps.empty()) return 0.0;
  double total = 0.0;
  for (int l : lcps) total += l;
  return total / static_cast<double>(lcps.size());
}

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  internal::fail_invalid(parts...);
}

void validate_parameters(const RouthParameters& p) {
  if (!(std::isfinite(p.step) && p.step >= 0.0))
    fail("routh step ", p.step, " must be finite and >= 0 (0 = automatic)");
  if (!(std::isfinite(p.automatic_step_factor) && p.automatic_step_factor > 0.0))
    fail("routh automatic_step_factor ", p.automatic_step_factor, " must be finite and > 0");
  if (p.max_steps < 1) fail("routh max_steps ", p.max_steps, " must be >= 1");
  if (!(std::isfinite(p.separation_tolerance) && p.separation_tolerance >= 0.0))
    fail("routh separation_tolerance ", p.separation_tolerance, " must be finite and >= 0");
  // 0 would let rounding leftovers keep contacts releasing with t = u
  // (no impulse, no work) until max_steps.
  if (!(std::isfinite(p.restitution_tolerance) && p.restitution_tolerance > 0.0))
    fail("routh restitution_tolerance ", p.restitution_tolerance, " must be finite and > 0");
}

// Whether the automatic step takes the simultaneous impulses into account
// (header, "Automatic step").
bool simultaneous_step(AutomaticStep rule, int contacts) {
  return rule == AutomaticStep::kSimultaneous ||
         (rule == AutomaticStep::kAutomatic && contacts > kLemkeIncrementContacts);
}

// The simultaneous automatic step's cap scales (header, "Automatic step"):
// h_i = factor · max(Λ, λ*_i), Λ the largest single-contact stopping
// impulse, λ* the frictionless inelastic simultaneous impulses (computed
// with the data's velocity scales per row of J̄). False, caps untouched,
// when λ* cannot be computed.
bool simultaneous_caps(const FrictionalProblem& problem, const internal::FrictionalSpace& space,
                       const Eigen::VectorXd& velocity_scale, double largest, double factor, Eigen::VectorXd& caps) {
  Eigen::VectorXd simultaneous;
  if (!internal::simultaneous_normal_impulses(problem, space, velocity_scale, largest, simultaneous)) return false;
  caps.resize(simultaneous.size());
  for (Eigen::Index i = 0; i < caps.size(); ++i) caps[i] = factor * std::max(largest, simultaneous[i]);
  return true;
}

// Appends one part to a result's message ("; " between parts).
void append_message(std::string& message, const std::string& part) {
  message += (message.empty() ? "" : "; ") + part;
}

// Independent stream per (seed, sample): two rounds of the SplitMix64
// finalizer on seed and index. Plain seed + index would make sample k's
// stream sample 0's shifted by k draws.
std::uint64_t sample_stream_seed(std::uint64_t seed, std::uint64_t index) {
  internal::SplitMix64 a(seed);
  internal::SplitMix64 b(index ^ 0xD1B54A32D192ED03ULL);
  internal::SplitMix64 c(a.next() ^ b.next());
  return c.next();
}

// φ_D: the real root > 1 of x^{D+1} = x + 1 (Roberts' generalized golden
// ratio), by Newton from 2 (monotone convergence from the right).
double generalized_golden_ratio(int dims) {
  double x = 2.0;
  for (int iteration = 0; iteration < 200; ++iteration) {
    const double p = std::pow(x, dims + 1);
    const double next = x - (p - x - 1.0) / ((dims + 1) * p / x - 1.0);
    if (std::abs(next - x) <= 1e-16 * x) return next;
    x = next;
  }
  return x;
}

// W of Halm & Posa, eq. (75b), variable order z = [β; λ_n; λ_D; γ]: the
// Anitescu–Potra matrix bordered by the β rows of (73)–(74).
Eigen::MatrixXd increment_matrix(const internal::FrictionalSpace& sp) {
  const int m = sp.m, size = (3 + sp.d) * m;
  Eigen::MatrixXd lcp = Eigen::MatrixXd::Zero(size, size);
  lcp.bottomRightCorner(size - m, size - m) = internal::anitescu_potra_matrix(sp, {});
  for (int i = 0; i < m; ++i) {
    lcp(i, m + i) = -1.0;  // β row: λ_max − λ_n
    lcp(m + i, i) = 1.0;   // λ_n row: … + β
  }
  return lcp;
}

// w = W z + q of eq. (75) without forming W (z, q and w in its layout).
void increment_w(const internal::FrictionalSpace& sp, const Eigen::VectorXd& z, const Eigen::VectorXd& q,
                 Eigen::VectorXd& w) {
  const int m = sp.m, d = sp.d, rows = sp.rows();
  w = q;
  w.segment(m, rows).noalias() += sp.apply_w(z.segment(m, rows));
  for (int i = 0; i < m; ++i) {
    w[i] -= z[m + i];           // λ_max − λ_n
    w[m + i] += z[i];           // u_n′ + β
    double directions = 0.0;
    for (int k = 0; k < d; ++k) {
      const int row = sp.direction_row(i, k);
      w[m + row] += z[m + rows + i];  // J_D v′ + E γ
      directions += z[m + row];
    }
    w[m + rows + i] += sp.mu[i] * z[m + i] - directions;  // μ λ_n − Eᵀ λ_D
  }
}

}  // namespace

// ── Implementation ──────────────────────────────────────────────────────────

struct RouthSampler::Impl {
  FrictionalProblem problem;
  internal::FrictionalSpace space;
  Eigen::MatrixXd lcp;        // W of (75), size (3 + d) m
  double step = 0.0;
  std::vector<double> alpha;  // R_D increments, D = m·N
  bool infeasible = false;    // a colliding contact no impulse can move
  std::string infeasible_message;
  internal::OutcomeScales scales;       // the final check's thresholds
  Eigen::VectorXd lcp_w_scale, lcp_z_scale;  // data scales of the increment LCP
  Eigen::MatrixXd lcp_scaled;                // D_w⁻¹ W D_z: the LCP in those units
  // Box pivoting (header, "LCP solvers"): the primary solver when `box`;
  // lcp and lcp_scaled are then left empty and each workspace builds them
  // only if one of its increments falls back to Lemke.
  bool box = false;
  // Lemke primary and box pivoting its rescue (header, "LCP solvers"): when
  // both Lemke runs of an increment fail and the cone allows the box form.
  bool box_rescue = false;
  internal::RouthBoxIncrement box_solver;  // built, warm state empty: copied per workspace
  // Restitution (header, "Restitution"):
  Eigen::VectorXd restitution;  // e (m), zeros when the problem has none
  bool restitutive = false;     // some e_i > 0
  double spent_budget = 0.0;    // a budget at or below this is spent
  Eigen::VectorXd cap_scale;    // h_i (m): contact i's caps are h_i · U_i; step = max_i h_i
  // Contact i collides while u_n,i < −approach_threshold_i (header,
  // "Colliding"): the separation tolerance relative to the approach scale,
  // but never below what the increment LCP resolves — its residual
  // tolerance times the row's data scale V_i, the slack an accepted
  // solution may leave on u_n,i′ ≥ 0.
  Eigen::VectorXd approach_threshold;
  bool approaching(const Eigen::VectorXd& u, Eigen::Index i) const { return u[i] < -approach_threshold[i]; }
  bool colliding(const Eigen::VectorXd& u) const {
    for (Eigen::Index i = 0; i < approach_threshold.size(); ++i)
      if (approaching(u, i)) return true;
    return false;
  }
  // The simultaneous step as a retry (header, "Automatic step"): when the
  // automatic rule chose the single-contact step, a sample whose increments
  // run out is drawn again with the simultaneous caps, computed then from
  // these (the increment LCP's velocity scales and the largest
  // single-contact stopping impulse).
  bool simultaneous_retry = false;
  double largest_single = 0.0;
};

RouthSampler::RouthSampler(const FrictionalProblem& problem, RouthParameters parameters)
    : parameters_(parameters), impl_(std::make_unique<Impl>()) {
  validate_parameters(parameters_);
  if (parameters_.validate_input) validate(problem);
  Impl& s = *impl_;
  s.problem = problem;
  const IncrementSolver solver = parameters_.increment_solver;
  s.box = problem.contacts() > 0 &&
          internal::RouthBoxIncrement::applicable(problem.tangent_dimension(), problem.directions()) &&
          (solver == IncrementSolver::kBoxPivoting ||
           (solver == IncrementSolver::kAutomatic && problem.contacts() > kLemkeIncrementContacts));
  s.box_rescue = !s.box && solver == IncrementSolver::kAutomatic && problem.contacts() > 0 &&
                 internal::RouthBoxIncrement::applicable(problem.tangent_dimension(), problem.directions());
  // Box pivoting never needs W̄ as a matrix: the space keeps sparse rows
  // (frictional_space.h, operator mode).
  s.space.build(problem, !s.box);
  const internal::FrictionalSpace& sp = s.space;
  const int m = sp.m, d = sp.d;
  const int size = (3 + d) * m;
  if (!s.box) s.lcp = increment_matrix(sp);

  // Velocity scale V_j = S √W̄_jj + a_j per row of J̄ (outcome_check.h): the
  // unit every velocity decision and residual below is made in.
  const int rows = sp.rows();
  Eigen::VectorXd velocity(rows);
  for (int j = 0; j < rows; ++j) velocity[j] = std::max(sp.speed_scale * sp.scale[j] + sp.magnitude[j], 1e-300);

  // Automatic step (header): factor × the largest single-contact
  // frictionless stopping impulse, or of the simultaneous impulses; and the
  // infeasibility check (a colliding contact whose W̄_ii vanishes cannot be
  // stopped by any impulse).
  double largest = 0.0;
  const double max_diagonal = m > 0 ? std::max(sp.wdiag.maxCoeff(), 1e-300) : 1.0;
  for (int i = 0; i < m; ++i) {
    const double approach = -sp.u0[i];
    if (approach / sp.scale[i] <= parameters_.separation_tolerance * sp.approach_scale) continue;
    if (sp.w_diag(i) <= kRankTolerance * max_diagonal || sp.inert[static_cast<size_t>(i)]) {
      s.infeasible = true;
      s.infeasible_message = "contact " + std::to_string(i) +
                             " approaches but no impulse can move it (J_n M^-1 J_n^T = 0): "
                             "velocity returned unchanged";
    }
    largest = std::max(largest, approach / sp.w_diag(i));
  }
  s.step = parameters_.step > 0.0 ? parameters_.step : parameters_.automatic_step_factor * largest;
  s.cap_scale = Eigen::VectorXd::Constant(m, s.step);
  const bool automatic = parameters_.step == 0.0 && largest > 0.0 && !s.infeasible;
  s.simultaneous_retry = automatic && parameters_.automatic_step == AutomaticStep::kAutomatic &&
                         !simultaneous_step(parameters_.automatic_step, m);
  if (s.simultaneous_retry) s.largest_single = largest;
  if (automatic && simultaneous_step(parameters_.automatic_step, m)) {
    // A solve that fails leaves the single-contact rule in force.
    if (simultaneous_caps(problem, sp, velocity, largest, parameters_.automatic_step_factor, s.cap_scale))
      s.step = s.cap_scale.maxCoeff();
  }

  // Restitution: e per contact and the spent-budget threshold, relative to
  // E_s = Σ ½ (u⁻_n,i)² / W̄_ii over the approaching contacts.
  s.restitution = problem.restitution.size() == m ? problem.restitution : Eigen::VectorXd::Zero(m);
  s.restitutive = m > 0 && s.restitution.maxCoeff() > 0.0;
  {
    double energy = 0.0;
    for (int i = 0; i < m; ++i)
      if (sp.u0[i] < 0.0 && !sp.inert[static_cast<size_t>(i)] && sp.w_diag(i) > 0.0)
        energy += 0.5 * sp.u0[i] * sp.u0[i] / sp.w_diag(i);
    s.spent_budget = parameters_.restitution_tolerance * energy;
  }

  // Data scales (outcome_check.h): velocity V_j = S √W̄_jj + a_j per row of
  // J̄, impulse H = h per increment (no increment takes more than its cap;
  // friction up to μ h). The increment LCP's rows and variables are judged
  // in these units, so an inaccurate solution cannot hide behind its own
  // size (seen: 4e16 impulses with u_n′ = +1.15 passed a check relative to
  // them).
  {
    const double impulse = std::max(s.step, 1e-300);
    s.lcp_w_scale.resize(size);
    s.lcp_z_scale.resize(size);
    for (int i = 0; i < m; ++i) {
      const double friction_impulse = impulse * std::max(1.0, sp.mu[i]);
      double sliding = 0.0;
      for (int k = 0; k < d; ++k) sliding = std::max(sliding, velocity[sp.direction_row(i, k)]);
      s.lcp_z_scale[i] = velocity[i];            // β_i (velocity)
      s.lcp_w_scale[i] = impulse;                // λ_max,i − λ_n,i
      s.lcp_z_scale[m + i] = impulse;            // λ_n,i
      s.lcp_w_scale[m + i] = velocity[i];        // u_n,i′ + β_i
      for (int k = 0; k < d; ++k) {
        const int row = sp.direction_row(i, k);       // in λ̄; in z it is m + row
        s.lcp_z_scale[m + row] = friction_impulse;   // λ_D,ik
        s.lcp_w_scale[m + row] = velocity[row];      // J_D v′ + E γ
      }
      s.lcp_z_scale[m + rows + i] = sliding;     // γ_i (sliding speed)
      s.lcp_w_scale[m + rows + i] = friction_impulse;  // μ λ_n − Eᵀ λ_D
    }
    s.approach_threshold.resize(m);
    const double resolved = internal::LemkeParameters{}.residual_tolerance;
    for (int i = 0; i < m; ++i)
      s.approach_threshold[i] = std::max(parameters_.separation_tolerance * sp.approach_scale * sp.scale[i],
                                         resolved * s.lcp_w_scale[m + i]);
    Eigen::VectorXd w_diag(m), magnitude(m);
    for (int i = 0; i < m; ++i) {
      w_diag[i] = sp.inert[static_cast<size_t>(i)] ? 0.0 : sp.w_diag(i);
      magnitude[i] = sp.magnitude[i];
    }
    s.scales.build(w_diag, magnitude, sp.speed_scale, parameters_.separation_tolerance, s.step);
    // Lemke runs on the LCP in the units of the data: z = D_z z̃,
    // w = D_w w̃, w̃ = D_w⁻¹ W D_z z̃ + D_w⁻¹ q (a positive diagonal scaling
    // keeps complementarity). Every entry is then O(1) — the β rows' ±1, μ,
    // W̄ h / V ~ 2 — so Lemke's relative pivot tolerance no longer discards
    // the W̄ block of a heavy body (W̄ ~ 1e-17 next to the β rows' 1).
    if (!s.box) s.lcp_scaled = s.lcp_w_scale.cwiseInverse().asDiagonal() * s.lcp * s.lcp_z_scale.asDiagonal();
    if (s.box || s.box_rescue) s.box_solver.build(problem, sp, velocity, impulse);
  }

  if (parameters_.sampler == ImpulseSampler::kLowDiscrepancy && m > 0) {
    const int dims = m * parameters_.max_steps;
    const double phi = generalized_golden_ratio(dims);
    s.alpha.resize(static_cast<size_t>(dims));
    double power = 1.0;
    for (int j = 0; j < dims; ++j) {
      power /= phi;
      s.alpha[static_cast<size_t>(j)] = power - std::floor(power);
    }
  }
}

RouthSampler::~RouthSampler() = default;
RouthSampler::RouthSampler(RouthSampler&&) noexcept = default;
RouthSampler& RouthSampler::operator=(RouthSampler&&) noexcept = default;

double RouthSampler::step() const { return impl_->step; }

const Eigen::VectorXd& RouthSampler::cap_scales() const { return impl_->cap_scale; }


// Per-thread scratch: the increment solvers (the Lemke tableau, the box
// pivoting's warm state) and the LCP vectors, reused by every increment of
// every sample the thread draws.
struct RouthSampler::Workspace {
  explicit Workspace(const Impl& s) {
    if (s.box || s.box_rescue) box = s.box_solver;
    if (!s.box) prepare_lemke(s);
  }
  internal::LemkeSolver lemke, scaled_lemke;
  internal::LemkeParameters lemke_parameters, scaled_parameters;
  Eigen::VectorXd scaled_q;
  bool lemke_ready = false;
  Eigen::MatrixXd own_lcp;  // W of (75) when Impl keeps none (box primary)
  internal::RouthBoxIncrement box;
  int box_fallbacks = 0;    // increments box pivoting left to Lemke
  int box_rescues = 0;      // increments both Lemke runs failed and box pivoting solved
  internal::LcpResult lcp;
  Eigen::VectorXd q;

  const Eigen::MatrixXd& matrix(const Impl& s) const { return s.box ? own_lcp : s.lcp; }

  // The Lemke solvers' matrices; built on first use when box pivoting is the
  // primary solver (a large cluster then never forms W's (3 + d)² m² entries
  // unless an increment needs Lemke).
  void prepare_lemke(const Impl& s) {
    if (lemke_ready) return;
    if (s.box) own_lcp = increment_matrix(s.space);
    const Eigen::MatrixXd& w = matrix(s);
    lemke.set_matrix(w);
    lemke_parameters.w_scale = s.lcp_w_scale;
    lemke_parameters.z_scale = s.lcp_z_scale;
    if (s.box) {
      scaled_lemke.set_matrix(s.lcp_w_scale.cwiseInverse().asDiagonal() * w * s.lcp_z_scale.asDiagonal());
    } else {
      scaled_lemke.set_matrix(s.lcp_scaled);
    }
    // The scaled LCP is already in data units: its residual scales are 1.
    scaled_parameters.w_scale = Eigen::VectorXd::Ones(w.rows());
    scaled_parameters.z_scale = scaled_parameters.w_scale;
    lemke_ready = true;
  }

  // The right-hand side of the increment LCP with no caps (λ_max = ∞) from
  // contact velocities u: the Anitescu–Potra LCP in the box solver's form.
  static Eigen::VectorXd uncapped(const internal::FrictionalSpace& sp, const Eigen::VectorXd& u) {
    Eigen::VectorXd rhs = Eigen::VectorXd::Zero((3 + sp.d) * sp.m);
    rhs.head(sp.m).setConstant(std::numeric_limits<double>::infinity());
    rhs.segment(sp.m, sp.rows()) = u;
    return rhs;
  }

  // The Anitescu–Potra LCP (Halm & Posa, eq. (31)) from contact velocities
  // u: the increment without caps. Box pivoting first when it is the
  // primary solver (from a cold start: this is a different problem), then
  // Lemke within kLemkeFallbackVariables.
  bool anitescu_potra(const Impl& s, const Eigen::VectorXd& u, Eigen::VectorXd& lambda, std::string& why) {
    const internal::FrictionalSpace& sp = s.space;
    const int m = sp.m, rows = sp.rows();
    if (s.box) {
      const Eigen::VectorXd rhs = uncapped(sp, u);
      box.reset();
      Eigen::VectorXd z, w;
      if (box.solve(rhs, z)) {
        increment_w(sp, z, rhs, w);
        if (internal::scaled_violation(z, w, s.lcp_w_scale, s.lcp_z_scale) <= lemke_parameters.residual_tolerance) {
          lambda = z.segment(m, rows);
          box.reset();
          return true;
        }
      }
      box.reset();
      ++box_fallbacks;
      if ((2 + sp.d) * m > kLemkeFallbackVariables) {
        why = "box pivoting did not solve it and Lemke is not run on more than " +
              std::to_string(kLemkeFallbackVariables) + " variables";
        return false;
      }
    }
    if (internal::anitescu_potra_lemke(sp, u, {}, lambda, &why)) return true;
    if (!s.box_rescue) return false;
    internal::LcpResult r;
    r.message = why;
    if (!rescue(s, uncapped(sp, u), r)) {
      why = r.message;
      return false;
    }
    lambda = r.z.segment(m, rows);
    return true;
  }

  // One increment LCP. Box pivoting first when it is the primary solver; its
  // solution is accepted by Lemke's own data-scaled residual test. Then (or
  // only) Lemke on W as stated (the paths of Halm & Posa's examples,
  // unchanged), and if its solution fails the data-scaled residual check,
  // Lemke on the LCP in data units, whose O(1) entries survive the relative
  // pivot tolerance on badly scaled problems. All are fixed, so the result
  // stays a function of the data.
  void solve(const Impl& s, const Eigen::VectorXd& rhs, internal::LcpResult& r) {
    if (s.box) {
      // From the warm state, then once from a cold start (a warm state far
      // from this increment's solution can stall the pivoting) unless the
      // first attempt started cold: the solve is deterministic, a second
      // cold start would repeat it step for step.
      const int attempts = box.warm() ? 2 : 1;
      for (int attempt = 0; attempt < attempts; ++attempt) {
        if (attempt == 1) box.reset();
        if (box.solve(rhs, r.z)) {
          increment_w(s.space, r.z, rhs, r.w);
          r.pivots = box.steps();
          if (internal::scaled_violation(r.z, r.w, s.lcp_w_scale, s.lcp_z_scale) <=
              lemke_parameters.residual_tolerance) {
            r.status = internal::LcpStatus::kSolved;
            r.message.clear();
            return;
          }
        }
      }
      ++box_fallbacks;
      box.reset();  // its state may be what failed
      if (rhs.size() > kLemkeFallbackVariables) {
        // Lemke would take seconds here (O(size³)); the sample fails
        // instead and the caller's fallback takes over (routh.h).
        r.status = internal::LcpStatus::kPivotLimit;
        r.message = "box pivoting did not solve the increment and its " + std::to_string(rhs.size()) +
                    " variables exceed the " + std::to_string(kLemkeFallbackVariables) +
                    " Lemke takes over";
        return;
      }
      prepare_lemke(s);
    }
    lemke.solve(rhs, lemke_parameters, r);
    if (r.status == internal::LcpStatus::kSolved) return;
    const std::string first = r.message;
    const int pivots = r.pivots;
    scaled_q = rhs.cwiseQuotient(s.lcp_w_scale);
    scaled_lemke.solve(scaled_q, scaled_parameters, r);
    r.pivots += pivots;
    if (r.status == internal::LcpStatus::kSolved) {
      r.z.array() *= s.lcp_z_scale.array();
      r.w = rhs;
      r.w.noalias() += matrix(s) * r.z;
      return;
    }
    r.message = first + "; in data units too: " + r.message;
    if (s.box_rescue && rescue(s, rhs, r)) return;
  }

  // Box pivoting from a cold start on an increment both Lemke runs failed
  // (the first's message kept if it fails too). Seen on clusters of 5–8
  // contacts of capsules and boxes, where both Lemke runs stopped just
  // above the residual tolerance (docs/routh.md, "Small clusters"). A cold
  // start: the outcome stays a function of this increment's data alone.
  bool rescue(const Impl& s, const Eigen::VectorXd& rhs, internal::LcpResult& r) {
    box.reset();
    const bool solved = box.solve(rhs, rescue_z);
    r.pivots += box.steps();
    box.reset();
    if (!solved) {
      r.message += "; box pivoting did not solve it either";
      return false;
    }
    increment_w(s.space, rescue_z, rhs, rescue_w);
    const double violation = internal::scaled_violation(rescue_z, rescue_w, s.lcp_w_scale, s.lcp_z_scale);
    if (!(violation <= lemke_parameters.residual_tolerance)) {
      r.message += "; box pivoting's solution violates it by " + internal::short_number(violation) + " too";
      return false;
    }
    r.z = rescue_z;
    r.w = rescue_w;
    r.status = internal::LcpStatus::kSolved;
    r.message.clear();
    ++box_rescues;
    return true;
  }
  Eigen::VectorXd rescue_z, rescue_w;
};

FrictionalResult RouthSampler::sample(std::uint64_t index) const {
  Workspace workspace(*impl_);
  return run(index, 0.0, workspace);
}

FrictionalResult RouthSampler::run(std::uint64_t index, double final_cap, Workspace& workspace) const {
  const Impl& s = *impl_;
  FrictionalResult result = draw(index, final_cap, workspace, s.cap_scale);
  if (result.status != Status::kStepLimitReached || !s.simultaneous_retry) return result;
  // The single-contact caps were too small for this impact (contacts that
  // push against each other need far more than each alone: a jointed
  // cluster's 3 contacts took 37 N·s each where h was 0.18). The same
  // sample under the simultaneous step; if it does not end the impact
  // either, the first draw (with its fallback) stands.
  // The velocity scales per row of J̄ are the increment LCP's velocity-row
  // scales (the constructor sets both from the same values).
  const Eigen::VectorXd velocity_scale = s.lcp_w_scale.segment(s.space.m, s.space.rows());
  Eigen::VectorXd caps;
  if (!simultaneous_caps(s.problem, s.space, velocity_scale, s.largest_single, parameters_.automatic_step_factor,
                         caps)) {
    append_message(result.message, "the simultaneous step's impulses could not be computed for a second draw");
    return result;
  }
  FrictionalResult again = draw(index, final_cap, workspace, caps);
  if (again.status != Status::kSuccess) {
    append_message(result.message, std::string("drawn again under the simultaneous step: ") +
                                       to_string(again.status) + " too");
    result.outcomes[0].lcps += again.outcomes[0].lcps;
    return result;
  }
  append_message(again.message, "drawn under the simultaneous step (" + internal::short_number(caps.maxCoeff()) +
                                    " N s): the single-contact step's " + std::to_string(parameters_.max_steps) +
                                    " increments did not end the impact");
  FrictionalOutcome& first = result.outcomes[0];
  FrictionalOutcome& second = again.outcomes[0];
  second.lcps += first.lcps;
  second.increment_fallbacks += first.increment_fallbacks;
  second.increment_rescues += first.increment_rescues;
  return again;
}

FrictionalResult RouthSampler::draw(std::uint64_t index, double final_cap, Workspace& workspace,
                                    const Eigen::VectorXd& caps) const {
  const Impl& s = *impl_;
  const internal::FrictionalSpace& sp = s.space;
  const int m = sp.m, d = sp.d, md = m * d, rows = m + md;
  FrictionalResult result;
  result.outcomes.resize(1);
  FrictionalOutcome& out = result.outcomes[0];
  out.step = m > 0 ? caps.maxCoeff() : s.step;
  Eigen::VectorXd total = Eigen::VectorXd::Zero(rows);
  // W̄ λ and Y λ: the dense products in dense mode (as they always were),
  // sparse ones in operator mode (frictional_space.h).
  const auto contact_change = [&sp](const auto& lambda) -> Eigen::VectorXd {
    if (sp.dense) return sp.wbar * lambda;
    return sp.apply_w(lambda);
  };
  const auto velocity_change = [&sp](const Eigen::VectorXd& lambda) -> Eigen::VectorXd {
    if (sp.dense) return sp.y * lambda;
    return sp.apply_y(lambda);
  };
  if (parameters_.record_trajectory) out.trajectory.push_back(s.problem.velocity);

  if (s.infeasible) {
    result.status = Status::kInfeasible;
    result.message = s.infeasible_message;
    sp.fill_outcome(s.problem, total, out);
    out.terminated = false;
    return result;
  }

  // Sample k never depends on the samples drawn before it in this workspace.
  if (s.box) workspace.box.reset();
  const int fallbacks_before = workspace.box_fallbacks, rescues_before = workspace.box_rescues;

  internal::SplitMix64 rng(sample_stream_seed(parameters_.seed, index));
  Eigen::VectorXd shift;
  if (parameters_.sampler == ImpulseSampler::kLowDiscrepancy) {
    shift.resize(static_cast<Eigen::Index>(s.alpha.size()));
    for (Eigen::Index j = 0; j < shift.size(); ++j) shift[j] = rng.uniform();
  }

  const int size = (3 + d) * m;  // variables of the increment LCP, eq. (75)
  Eigen::VectorXd& q = workspace.q;
  q.setZero(size);
  internal::LcpResult& r = workspace.lcp;
  Eigen::VectorXd u = sp.u0;  // ū, tracked in contact space
  const double kd = static_cast<double>(index);
  int steps = 0;
  bool lcp_failed = false;

  // Restitution (header): budgets S, the work split, the release targets.
  Eigen::VectorXd budget = Eigen::VectorXd::Zero(m);
  out.compression_work = Eigen::VectorXd::Zero(m);
  out.restitution_work = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd target = Eigen::VectorXd::Zero(m);
  Eigen::VectorXd u_next, low, high, kept;
  std::vector<char> releases(static_cast<size_t>(m), 0);
  int dropped = 0;  // increments replaced by plain Routh increments (energy guard)
  int dropped_contacts = 0;  // budgets dropped: over budget in every release solve
  const auto approaching = [&](int i) { return s.approaching(u, i); };
  // Normal work of contact i on the straight path from u to u_next with
  // normal impulse `impulse` (header, "Restitution").
  const auto work_of = [&](int i, double impulse) { return 0.5 * (u[i] + u_next[i]) * impulse; };
  // Marks the releasing contacts and sets their targets; true if any.
  const auto mark_releases = [&]() {
    bool any = false;
    for (int i = 0; i < m; ++i) {
      const bool release = s.restitutive && !sp.inert[static_cast<size_t>(i)] &&
                           budget[i] > s.spent_budget && !approaching(i);
      releases[static_cast<size_t>(i)] = release ? 1 : 0;
      target[i] = release ? std::sqrt(std::max(u[i], 0.0) * std::max(u[i], 0.0) +
                                      2.0 * sp.w_diag(i) * budget[i])
                          : 0.0;
      any = any || release;
    }
    return any;
  };
  const auto set_velocity_rows = [&]() {
    q.segment(m, rows) = u;
    for (int i = 0; i < m; ++i)
      if (releases[static_cast<size_t>(i)]) q[m + i] = u[i] - target[i];
  };
  const auto solve = [&](const char* what) {
    workspace.solve(s, q, r);
    ++out.lcps;
    if (r.status == internal::LcpStatus::kSolved) return true;
    lcp_failed = true;
    result.status = Status::kLcpFailed;
    result.message = std::string(what) + " " + std::to_string(steps) + ": " + r.message;
    return false;
  };

  while (true) {
    const bool release = mark_releases();
    if (!release && !s.colliding(u)) break;
    if (steps >= parameters_.max_steps) break;
    for (int i = 0; i < m; ++i) {
      double unit;
      if (parameters_.sampler == ImpulseSampler::kUniform) {
        unit = rng.uniform();
      } else {
        const size_t j = static_cast<size_t>(steps * m + i);
        const double x = shift[static_cast<Eigen::Index>(j)] + kd * s.alpha[j];
        unit = x - std::floor(x);
      }
      // An inert contact (infinitely massive along its normal) takes no
      // impulse: cap 0 forces λ_n,i = 0 and, by (33), λ_D,i = 0.
      q[i] = sp.inert[static_cast<size_t>(i)] ? 0.0 : caps[i] * unit;
    }
    set_velocity_rows();
    if (!solve("increment")) break;
    if (release) {
      // Correct the targets of uncapped releasing contacts whose work missed
      // their budget (header, "Restitution").
      // Per contact the targets whose work fell short (low) and went over
      // (high) bracket the one that spends the budget; a proposal outside
      // the bracket is replaced by its midpoint (the work is not smooth in
      // the target where the slip mode changes). The last solve in which no
      // contact went over is kept, and restored if the corrections end over.
      const auto correct = [&]() {
        low.setZero(m);
        high.setConstant(m, std::numeric_limits<double>::infinity());
        bool have_under = false;
        for (int correction = 0; correction <= kReleaseCorrections; ++correction) {
          u_next = u + contact_change(r.z.segment(m, rows));
          bool changed = false, over = false;
          for (int i = 0; i < m; ++i) {
            if (!releases[static_cast<size_t>(i)]) continue;
            const double impulse = r.z[m + i];
            const double work = work_of(i, impulse);
            if (!(work > 0.0) || std::abs(work - budget[i]) <= s.spent_budget) continue;
            if (work > budget[i]) {
              over = true;
              high[i] = std::min(high[i], target[i]);
            } else {
              low[i] = std::max(low[i], target[i]);
              // Short of the budget at the cap: the rest comes later.
              if (impulse >= q[i] * (1.0 - 1e-12)) continue;
            }
            if (correction == kReleaseCorrections) continue;
            // Exact while the slip mode holds: work ∝ t² − u², u = max(u_n,i, 0).
            // The ratio is clamped to [1/4, 4]: a push that released almost
            // nothing would otherwise send the target far from the data's scale.
            const double base = std::max(u[i], 0.0);
            const double ratio = std::clamp(budget[i] / work, 0.25, 4.0);
            double next = std::sqrt(std::max(base * base + (target[i] * target[i] - base * base) * ratio, base * base));
            if (!(next > low[i] && next < high[i]) && std::isfinite(high[i])) next = 0.5 * (low[i] + high[i]);
            target[i] = next;
            changed = true;
          }
          if (!over) {
            kept = r.z;
            have_under = true;
          }
          if (!changed) break;
          set_velocity_rows();
          if (!solve("release correction")) return false;
        }
        // Ended over the budget somewhere: back to the last solve that was
        // not; if none was, the contacts still over it (typically already
        // separating fast, t ≈ u, held at u′ ≥ t against friction or
        // coupling) cannot spend their budget by pushing: it is dropped (lost
        // energy, never gained) and they are re-solved as plain rows.
        u_next = u + contact_change(r.z.segment(m, rows));
        bool over = false;
        for (int i = 0; i < m; ++i) {
          if (!releases[static_cast<size_t>(i)]) continue;
          const double work = work_of(i, r.z[m + i]);
          if (work > budget[i] + s.spent_budget) {
            over = true;
            if (!have_under) {
              releases[static_cast<size_t>(i)] = 0;
              budget[i] = 0.0;
              ++dropped_contacts;
            }
          }
        }
        if (!over) return true;
        if (have_under) {
          r.z = kept;
          return true;
        }
        set_velocity_rows();
        return solve("release without the contacts over budget");
      };
      // Energy guard: an increment may not lift E above v⁻'s (it can, by
      // the straight path's work split, when a slip reverses inside a large
      // increment). Smaller increments first — the caps halved, the rates
      // kept — then, if that does not do, the budgets dropped: a plain
      // (dissipative) Routh increment.
      const auto gains = [&]() {
        const Eigen::VectorXd after = total + r.z.segment(m, rows);
        u_next = u + contact_change(r.z.segment(m, rows));
        return 0.5 * after.dot(sp.u0 + u_next) > 0.5 * s.scales.energy;
      };
      if (!correct()) break;
      for (int halving = 0; halving < kGuardHalvings && gains(); ++halving) {
        q.head(m) *= 0.5;
        mark_releases();
        set_velocity_rows();
        if (!solve("smaller increment") || !correct()) break;
      }
      if (lcp_failed) break;
      if (gains()) {
        ++dropped;
        budget.setZero();
        std::fill(releases.begin(), releases.end(), 0);
        set_velocity_rows();
        if (!solve("increment without restitution")) break;
      }
    }
    const auto lambda = r.z.segment(m, rows);
    u_next = u;  // u before the increment, for the work
    if (sp.dense) {
      u += sp.wbar * lambda;
    } else {
      u += sp.apply_w(lambda);
    }
    for (int i = 0; i < m; ++i) {
      const double work = 0.5 * (u_next[i] + u[i]) * lambda[i];
      if (work < 0.0) {
        out.compression_work[i] -= work;
        budget[i] -= s.restitution[i] * s.restitution[i] * work;
      } else {
        out.restitution_work[i] += work;
        budget[i] -= work;
      }
    }
    total += lambda;
    ++steps;
    if (parameters_.record_trajectory)
      out.trajectory.push_back(s.problem.velocity + velocity_change(total));
  }
  if (dropped_contacts > 0)
    append_message(result.message, std::to_string(dropped_contacts) +
                                       " contact budget(s) dropped: every release solve went over them");
  if (dropped > 0)
    append_message(result.message, std::to_string(dropped) +
                                       " increment(s) would have gained energy and dropped the restitution budgets");

  // Algorithm 2 line 5: one more increment with every cap ε/(3ψ).
  if (final_cap > 0.0 && !lcp_failed && s.colliding(u)) {
    for (int i = 0; i < m; ++i) q[i] = sp.inert[static_cast<size_t>(i)] ? 0.0 : final_cap;
    q.segment(m, rows) = u;
    workspace.solve(s, q, r);
    ++out.lcps;
    if (r.status == internal::LcpStatus::kSolved) {
      const auto lambda = r.z.segment(m, rows);
      if (sp.dense) {
        u += sp.wbar * lambda;
      } else {
        u += sp.apply_w(lambda);
      }
      total += lambda;
      if (parameters_.record_trajectory)
        out.trajectory.push_back(s.problem.velocity + velocity_change(total));
    } else {
      lcp_failed = true;
      result.status = Status::kLcpFailed;
      result.message = "final increment (Algorithm 2 line 5): " + r.message;
    }
  }

  // Budgets still unspent at the step limit (coupled contacts re-compressing
  // each other): energy lost, not gained; said in the message.
  if (s.restitutive && !lcp_failed && steps >= parameters_.max_steps) {
    double unspent = 0.0, stored = 0.0;
    for (int i = 0; i < m; ++i) {
      if (budget[i] > s.spent_budget) unspent += budget[i];
      stored += s.restitution[i] * s.restitution[i] * out.compression_work[i];
    }
    if (unspent > 0.0) {
      std::ostringstream text;
      text << "max_steps reached with " << unspent / std::max(stored, 1e-300)
           << " of the restitution budget unspent";
      append_message(result.message, text.str());
    }
  }

  out.terminated = !lcp_failed && !s.colliding(u);
  bool require_separation = true;
  if (!out.terminated) {
    if (!lcp_failed) {
      result.status = Status::kStepLimitReached;
      result.message = "Algorithm 1 used its " + std::to_string(parameters_.max_steps) +
                       " increments without ending the impact" +
                       (result.message.empty() ? "" : "; " + result.message);
    }
    if (parameters_.finish_with_anitescu_potra) {
      Eigen::VectorXd lambda;
      ++out.lcps;
      std::string why;
      if (workspace.anitescu_potra(s, u, lambda, why)) {
        total += lambda;
        out.finished_by_fallback = true;
        if (lcp_failed) result.status = Status::kFinishedByFallback;
        result.message += "; finished with one Anitescu-Potra LCP";
        if (parameters_.record_trajectory)
          out.trajectory.push_back(s.problem.velocity + velocity_change(total));
      } else {
        result.status = Status::kLcpFailed;
        result.message += "; the Anitescu-Potra fallback failed too (" + why + ")";
      }
    } else if (lcp_failed) {
      result.message += "; no fallback requested";
    } else {
      // Algorithm 1 verbatim, as asked: the velocity stays colliding.
      require_separation = false;
      result.message += "; velocity still colliding (no fallback requested)";
    }
  }
  sp.fill_outcome(s.problem, total, out);
  out.increment_fallbacks = workspace.box_fallbacks - fallbacks_before;
  out.increment_rescues = workspace.box_rescues - rescues_before;

  // The final check (outcome_check.h), on velocities recomputed from v⁺.
  if (!keeps_input_velocity(result.status)) {
    const Eigen::VectorXd change = out.velocity - s.problem.velocity;
    Eigen::VectorXd u_after;
    if (sp.dense) {
      u_after = sp.u0 + sp.jbar * change;
    } else {
      u_after = sp.u0 + sp.apply_jbar(change);
    }
    const Eigen::VectorXd normal_after = u_after.head(m);
    Eigen::VectorXd direction_sums = Eigen::VectorXd::Zero(m);
    for (int i = 0; i < m; ++i)
      for (int k = 0; k < d; ++k) direction_sums[i] += total[sp.direction_row(i, k)];
    const Eigen::VectorXd extra = total;
    internal::OutcomeView view;
    view.velocity = &out.velocity;
    view.u_after = &normal_after;
    view.normal_impulses = &out.normal_impulses;
    view.energy_change = 0.5 * total.dot(sp.u0 + u_after);
    view.direction_sums = &direction_sums;
    view.friction = &sp.mu;
    view.extra = &extra;
    view.require_separation = require_separation;
    std::string why;
    const Status status = internal::check_outcome(view, s.scales, why);
    if (status != Status::kSuccess) {
      result.message = "final check failed: " + why +
                       (result.message.empty() ? "" : " (after: " + result.message + ")");
      result.status = status;
    }
  } else if (result.message.find("velocity left unchanged") == std::string::npos) {
    result.message += "; velocity left unchanged";
  }
  if (keeps_input_velocity(result.status)) {
    // No physical outcome: the input velocity, zero impulses.
    total.setZero();
    sp.fill_outcome(s.problem, total, out);
    out.compression_work.setZero(m);
    out.restitution_work.setZero(m);
    out.terminated = false;
    out.finished_by_fallback = false;
  }
  return result;
}

RouthOutcomeSet RouthSampler::approximate(const RouthSetParameters& set) const {
  if (set.samples < 1) fail("routh set samples ", set.samples, " must be >= 1");
  if (set.threads < 0) fail("routh set threads ", set.threads, " must be >= 0 (0 = all cores)");
  if (!(std::isfinite(set.epsilon) && set.epsilon >= 0.0))
    fail("routh set epsilon ", set.epsilon, " must be finite and >= 0");
  const Impl& s = *impl_;
  const internal::FrictionalSpace& sp = s.space;
  const int m = sp.m, count = set.samples;

  RouthOutcomeSet out;
  out.step = s.step;
  out.velocities.resize(sp.n, count);
  out.normal_velocities.resize(m, count);
  out.tangential_velocities.resize(m * sp.tangent_dim, count);
  out.normal_impulses.resize(m, count);
  out.energy_change.resize(count);
  out.lcps.assign(static_cast<size_t>(count), 0);
  out.terminated.assign(static_cast<size_t>(count), 0);
  out.colliding.assign(static_cast<size_t>(count), 0);
  std::vector<Status> statuses(static_cast<size_t>(count), Status::kSuccess);

  // Algorithm 2 line 2: ψ = σ_max(M⁻¹J̄ᵀ) m (1 + max μ) + 1 and the final
  // increment's cap ε / (3ψ) per contact.
  double final_cap = 0.0;
  if (set.epsilon > 0.0 && m > 0) {
    const double sigma = Eigen::JacobiSVD<Eigen::MatrixXd>(sp.dense_y()).singularValues()[0];
    const double psi = sigma * m * (1.0 + sp.mu.maxCoeff()) + 1.0;
    final_cap = set.epsilon / (3.0 * psi);
  }

  const int hardware = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  const int threads = std::min(set.threads > 0 ? set.threads : hardware, count);
  out.threads_used = threads;

  // Each sample is sample(k): the partition of samples over threads cannot
  // change any result. Chunks of 64 keep the atomic traffic negligible.
  constexpr int kChunk = 64;
  std::atomic<int> next{0};
  std::exception_ptr error;
  std::mutex error_mutex;
  auto worker = [&]() {
    try {
      Workspace workspace(s);
      while (true) {
        const int begin = next.fetch_add(kChunk);
        if (begin >= count) return;
        const int end = std::min(count, begin + kChunk);
        for (int k = begin; k < end; ++k) {
          FrictionalResult r = run(static_cast<std::uint64_t>(k), final_cap, workspace);
          FrictionalOutcome& o = r.outcomes[0];
          const size_t kk = static_cast<size_t>(k);
          out.velocities.col(k) = o.velocity;
          out.normal_velocities.col(k) = o.normal_velocities;
          out.tangential_velocities.col(k) = o.tangential_velocities;
          out.normal_impulses.col(k) = o.normal_impulses;
          out.energy_change[k] = o.energy_change;
          out.lcps[kk] = o.lcps;
          out.terminated[kk] = o.terminated ? 1 : 0;
          statuses[kk] = r.status;
          out.colliding[kk] = s.colliding(o.normal_velocities) ? 1 : 0;
        }
      }
    } catch (...) {
      std::lock_guard<std::mutex> lock(error_mutex);
      if (!error) error = std::current_exception();
    }
  };
  std::vector<std::thread> pool;
  for (int t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (std::thread& t : pool) t.join();
  if (error) std::rethrow_exception(error);

  int failed = 0, unterminated = 0, still_colliding = 0;
  Status first_failure = Status::kLcpFailed;
  for (int k = 0; k < count; ++k) {
    const size_t kk = static_cast<size_t>(k);
    out.terminated_count += out.terminated[kk];
    if (keeps_input_velocity(statuses[kk])) {
      if (failed == 0) first_failure = statuses[kk];
      ++failed;
    }
    if (!out.terminated[kk]) ++unterminated;
    if (out.colliding[kk]) ++still_colliding;
  }
  if (failed > 0) {
    out.status = first_failure;
    out.message = std::to_string(failed) + " of " + std::to_string(count) +
                  " samples failed (first: " + std::string(to_string(first_failure)) +
                  "; their velocity is the input's); " +
                  std::to_string(still_colliding) + " samples still colliding after the fallback";
  } else if (unterminated > 0) {
    out.status = Status::kStepLimitReached;
    out.message = std::to_string(unterminated) + " of " + std::to_string(count) +
                  " samples used max_steps = " + std::to_string(parameters_.max_steps) +
                  " without ending the impact";
  }
  return out;
}

FrictionalResult sample_routh(const FrictionalProblem& problem, const RouthParameters& parameters) {
  return RouthSampler(problem, parameters).sample(0);
}

RouthOutcomeSet approximate_routh_set(const FrictionalProblem& problem,
                                      const RouthParameters& parameters,
                                      const RouthSetParameters& set) {
  return RouthSampler(problem, parameters).approximate(set);
}

}  // namespace simpact
