#include <simpact/diagnostics.h>
#include <simpact/propagative.h>

#include "core/approach_queue.h"
#include "core/active_set_lcp.h"
#include "core/box_qp.h"
#include "core/contact_space.h"
#include "core/inertia.h"
#include "core/lcp.h"
#include "core/names.h"
#include "core/outcome_check.h"
#include "core/rng.h"
#include "core/validation.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <sstream>
#include <stdexcept>

namespace simpact {

const char* to_string(Status status) {
  switch (status) {
    case Status::kSuccess: return "success";
    case Status::kReflectionCapReached: return "reflection_cap_reached";
    case Status::kBudgetExhausted: return "budget_exhausted";
    case Status::kInfeasible: return "infeasible";
    case Status::kLcpFailed: return "lcp_failed";
    case Status::kStepLimitReached: return "step_limit_reached";
    case Status::kFinishedByFallback: return "finished_by_fallback";
    case Status::kNonFinite: return "non_finite";
    case Status::kEnergyGain: return "energy_gain";
    case Status::kStillApproaching: return "still_approaching";
    case Status::kImpulseOutsideCone: return "impulse_outside_cone";
  }
  return "unknown";
}

bool keeps_input_velocity(Status status) {
  switch (status) {
    case Status::kInfeasible:
    case Status::kLcpFailed:
    case Status::kNonFinite:
    case Status::kEnergyGain:
    case Status::kStillApproaching:
    case Status::kImpulseOutsideCone: return true;
    case Status::kSuccess:
    case Status::kReflectionCapReached:
    case Status::kBudgetExhausted:
    case Status::kStepLimitReached:
    case Status::kFinishedByFallback: return false;
  }
  return true;
}

namespace {
constexpr std::pair<OrderPolicy, const char*> kPolicyNames[] = {
    {OrderPolicy::kMostNegative, "most_negative"}, {OrderPolicy::kLeastNegative, "least_negative"},
    {OrderPolicy::kTimeOfImpact, "time_of_impact"}, {OrderPolicy::kIndex, "index"},
    {OrderPolicy::kRandom, "random"},               {OrderPolicy::kAll, "all"},
};
}  // namespace

const char* to_string(OrderPolicy policy) { return internal::name_of(policy, kPolicyNames); }

OrderPolicy parse_order_policy(const std::string& name) {
  return internal::parse_name(name, kPolicyNames, "order policy");
}

namespace {

// A contact whose W_ii is at most this × the magnitude of the terms summing
// to it (ContactSpace::diagonal_magnitude) is "inert": its normal lies in
// the null space of M⁻¹, so no impulse changes its velocity (both sides
// infinitely massive along it). What survives such cancellation is rounding,
// ~n·1e-16 of the magnitude; 1e-12 is well above that and far below any
// real effective inverse mass.
constexpr double kInertTolerance = 1e-12;
// A contact is inert too when W_ii ≤ kRankTolerance × ‖J_i‖² × max_k M⁻¹_kk:
// its effective inverse mass is below the rank tolerance of the problem's
// inverse inertia (impact_problem.h: a 10¹²:1 mass ratio is not a
// simulation), e.g. a factor-locked axis or the rounding residue of a
// joint-constrained metric without exact cancellation. Such a contact counts
// as infinitely massive: it takes no impulse (else impulses of ~1/W_ii, 10¹¹
// and more, follow). The bound is relative to the problem's data and
// invariant to scaling M⁻¹ or a row of J.

// An inert contact is infeasible when it approaches by more than rounding:
// u_i is a sum of terms J_ik v_k and b_i, exact to ~n·1e-16 of Σ|terms|;
// 1e-9 of that sum is far above rounding and far below a real approach.
constexpr double kInertApproachTolerance = 1e-9;

}  // namespace

struct PropagativeSolver::Workspace {
  internal::ContactSpace space;
  internal::InertiaBlocks inertia;
  internal::ApproachHeap heap;
  internal::ApproachSet set;
  Eigen::VectorXd u0, u, v, lambda_elastic, lambda_plastic, v_plastic, inv_sqrt_diag, threshold;
  Eigen::VectorXd magnitude, w_diag, u_after;  // a_i, W_ii (0 if inert), scratch
  internal::OutcomeScales scales;
  std::vector<char> inert;
  std::vector<int> sequence;
  ImpactResult result;
  std::multimap<double, size_t> dedup_index;  // kAll: key → leaf
  Eigen::VectorXd dedup_direction;            // g / ‖r‖_g

  struct Leaf {
    Eigen::VectorXd lambda, velocity;
    std::vector<int> sequence;
  };
  // Leaves are reused across calls (their vectors keep their storage), so a
  // solver that has seen a size allocates nothing; leaf_count are live.
  std::vector<Leaf> leaves;
  size_t leaf_count = 0;

  void clear_leaves() { leaf_count = 0; }
  void add_leaf(const Eigen::VectorXd& lambda, const Eigen::VectorXd& velocity,
                const std::vector<int>& reflected) {
    if (leaf_count == leaves.size()) leaves.emplace_back();
    Leaf& leaf = leaves[leaf_count++];
    leaf.lambda = lambda;
    leaf.velocity = velocity;
    leaf.sequence = reflected;
  }
};

PropagativeSolver::PropagativeSolver(PropagativeParameters parameters)
    : parameters_(parameters), workspace_(std::make_unique<Workspace>()) {}
PropagativeSolver::~PropagativeSolver() = default;
PropagativeSolver::PropagativeSolver(PropagativeSolver&&) noexcept = default;
PropagativeSolver& PropagativeSolver::operator=(PropagativeSolver&&) noexcept = default;

void PropagativeSolver::set_parameters(const PropagativeParameters& parameters) {
  parameters_ = parameters;
}

namespace {

// Everything one resolution needs, so the steps below read as the law.
class Resolution {
 public:
  Resolution(const ImpactProblem& problem, const PropagativeParameters& params,
             PropagativeSolver::Workspace& ws)
      : p_(problem), params_(params), ws_(ws), space_(ws.space), m_(problem.contacts()) {}

  void run(bool plastic_only) {
    internal::require_plastic_residual_tolerance(params_.plastic_residual_tolerance, "PropagativeParameters");
    ImpactResult& r = ws_.result;
    r.status = Status::kSuccess;
    r.message.clear();
    r.energy_before = r.energy_after = 0.0;
    r.reflections = r.sequences_explored = r.reflection_cap = r.comparisons = 0;
    r.indeterminacy.reset();

    bool inertia_ready = false;
    if (params_.validate_input) {
      internal::validate_problem(p_, ws_.inertia);
      inertia_ready = true;
    }
    if (params_.policy == OrderPolicy::kTimeOfImpact && !plastic_only &&
        p_.time_of_impact.size() != m_)
      throw InvalidProblem("order policy time_of_impact needs time_of_impact hints for all " +
                           std::to_string(m_) + " contacts (got " +
                           std::to_string(p_.time_of_impact.size()) + ")");

    space_.build(p_.normals, p_.inverse_mass);
    space_.contact_velocity(p_.normals, p_.velocity, p_.offsets, ws_.u0);
    const bool all = params_.policy == OrderPolicy::kAll && !plastic_only;
    if ((params_.compute_energy || all) && !inertia_ready) ws_.inertia.analyze(p_.inverse_mass, false);
    if (params_.compute_energy || all) r.energy_before = ws_.inertia.kinetic_energy(p_.velocity);

    prepare_contacts();
    r.reflection_cap = params_.max_reflections > 0 ? params_.max_reflections : automatic_cap();

    if (!check_inert_contacts()) return;
    const double restitution = plastic_only ? 0.0 : p_.restitution;
    plastic_ready_ = false;
    if (restitution < 1.0 && !ensure_plastic()) return;

    if (restitution > 0.0 && all) {
      enumerate_all();
      if (ws_.leaf_count == 0) {
        // Every sequence hit the cap (or the budget ran out first): fall back.
        if (!ensure_plastic()) return;
        ws_.add_leaf(ws_.lambda_plastic, ws_.v_plastic, {});
      }
    } else if (restitution > 0.0) {
      ws_.clear_leaves();
      const Stop stop = run_single_policy();
      if (stop == Stop::kDone) {
        ws_.add_leaf(ws_.lambda_elastic, ws_.v, ws_.sequence);
      } else if (stop == Stop::kNonFinite) {
        fail_unchanged(Status::kNonFinite,
                       "reflection " + std::to_string(r.reflections) +
                           " produced a non-finite impulse; velocity left unchanged");
        return;
      } else {
        set_status(Status::kReflectionCapReached,
                   (stop == Stop::kCap ? "reflection cap of " + std::to_string(r.reflection_cap) +
                                             " reached with contacts still approaching"
                                       : jam_message()) +
                       "; returned the plastic outcome");
        if (!ensure_plastic()) return;
        ws_.add_leaf(ws_.lambda_plastic, ws_.v_plastic, {});
      }
    } else {
      ws_.clear_leaves();
      ws_.add_leaf(ws_.lambda_plastic, ws_.v_plastic, {});
    }

    r.outcomes.resize(ws_.leaf_count);
    for (size_t k = 0; k < ws_.leaf_count; ++k) {
      Outcome& o = r.outcomes[k];
      const auto& leaf = ws_.leaves[k];
      if (restitution >= 1.0 || restitution <= 0.0) {
        o.impulses = leaf.lambda;
        o.velocity = leaf.velocity;
      } else {
        // Seghete & Murphey 2014, eq. (17), with α from definition (16), see
        // propagative.h.
        const double alpha = blend_weight(leaf.lambda, restitution);
        o.impulses = alpha * leaf.lambda + (1.0 - alpha) * ws_.lambda_plastic;
        o.velocity = alpha * leaf.velocity + (1.0 - alpha) * ws_.v_plastic;
      }
      o.sequence = leaf.sequence;
    }
    if (!final_check()) return;
    if (params_.compute_energy || all) r.energy_after = ws_.inertia.kinetic_energy(r.outcomes[0].velocity);
    if (all) r.indeterminacy = indeterminacy();
  }

 private:
  void set_status(Status status, std::string message) {
    ws_.result.status = status;
    ws_.result.message = std::move(message);
  }

  // Unchanged velocity, zero impulses: the documented result of a law that
  // cannot produce a physical outcome.
  void fail_unchanged(Status status, std::string message) {
    set_status(status, std::move(message));
    Outcome o;
    o.velocity = p_.velocity;
    o.impulses = Eigen::VectorXd::Zero(m_);
    ws_.result.outcomes.assign(1, o);
    ws_.result.energy_after = ws_.result.energy_before;
  }

  void prepare_contacts() {
    ws_.inert.assign(m_, 0);
    ws_.inv_sqrt_diag.resize(m_);
    ws_.threshold.resize(m_);
    ws_.magnitude.resize(m_);
    ws_.w_diag.resize(m_);
    // Largest diagonal entry of M⁻¹: the inverse-inertia scale of the data.
    double max_inverse_mass = 0.0;
    for (int c = 0; c < p_.inverse_mass.outerSize(); ++c)
      for (SparseColMatrix::InnerIterator it(p_.inverse_mass, c); it; ++it)
        if (it.row() == c) max_inverse_mass = std::max(max_inverse_mass, it.value());
    double speed_scale = 0.0;  // S: largest g-normalized pre-impact speed
    for (int i = 0; i < m_; ++i) {
      double magnitude = p_.offsets.size() ? std::abs(p_.offsets[i]) : 0.0;
      double row_norm2 = 0.0;
      for (SparseRowMatrix::InnerIterator it(p_.normals, i); it; ++it) {
        magnitude += std::abs(it.value() * p_.velocity[it.col()]);
        row_norm2 += it.value() * it.value();
      }
      ws_.magnitude[i] = magnitude;
      const double wii = space_.diagonal(i);
      if (!(wii > kInertTolerance * space_.diagonal_magnitude(i)) ||
          !(wii > kRankTolerance * row_norm2 * max_inverse_mass)) {
        ws_.inert[i] = 1;
        ws_.inv_sqrt_diag[i] = 0.0;
        ws_.w_diag[i] = 0.0;
        continue;
      }
      ws_.w_diag[i] = wii;
      ws_.inv_sqrt_diag[i] = 1.0 / std::sqrt(wii);
      speed_scale = std::max(speed_scale, std::abs(ws_.u0[i]) * ws_.inv_sqrt_diag[i]);
    }
    for (int i = 0; i < m_; ++i)
      ws_.threshold[i] = ws_.inert[i] ? 0.0 : params_.approach_tolerance * speed_scale / ws_.inv_sqrt_diag[i];
    // The final check's approach allowance is 10× the looser of the law's
    // two tolerances (for every outcome: the scales are built once): a
    // plastic outcome is as feasible as its LCP's residual.
    ws_.scales.build(ws_.w_diag, ws_.magnitude, speed_scale,
                     std::max(params_.approach_tolerance, params_.plastic_residual_tolerance));
  }

  // The final check (outcome_check.h) of every outcome. A single outcome
  // that fails is replaced by the input velocity with the failed check's
  // status; kAll drops failed outcomes (the message counts them) and fails
  // only if none is left. Returns false when the result failed.
  bool final_check() {
    ImpactResult& r = ws_.result;
    std::vector<Outcome> kept;
    Status first_failure = Status::kSuccess;
    std::string first_message;
    size_t dropped = 0;
    for (Outcome& o : r.outcomes) {
      space_.contact_velocity(p_.normals, o.velocity, p_.offsets, ws_.u_after);
      internal::OutcomeView view;
      view.velocity = &o.velocity;
      view.u_after = &ws_.u_after;
      view.normal_impulses = &o.impulses;
      view.energy_change = 0.5 * o.impulses.dot(ws_.u0 + ws_.u_after);
      view.sequence_length = static_cast<std::int64_t>(o.sequence.size());
      std::string why;
      const Status status = internal::check_outcome(view, ws_.scales, why);
      if (status == Status::kSuccess) {
        kept.push_back(std::move(o));
        continue;
      }
      if (first_failure == Status::kSuccess) {
        first_failure = status;
        first_message = why;
      }
      ++dropped;
    }
    if (kept.empty()) {
      fail_unchanged(first_failure, "final check failed: " + first_message +
                                        (r.status != Status::kSuccess ? " (after: " + r.message + ")" : "") +
                                        "; velocity left unchanged");
      return false;
    }
    r.outcomes = std::move(kept);
    if (dropped > 0) {
      const std::string note = std::to_string(dropped) + " outcome(s) failed the final check (" +
                               first_message + ") and were dropped";
      r.message = r.message.empty() ? note : r.message + "; " + note;
      if (r.status == Status::kSuccess) r.status = Status::kBudgetExhausted;
    }
    return true;
  }

  bool check_inert_contacts() {
    for (int i = 0; i < m_; ++i) {
      if (!ws_.inert[i]) continue;
      double magnitude = p_.offsets.size() ? std::abs(p_.offsets[i]) : 0.0;
      for (SparseRowMatrix::InnerIterator it(p_.normals, i); it; ++it)
        magnitude += std::abs(it.value() * p_.velocity[it.col()]);
      if (ws_.u0[i] < -kInertApproachTolerance * magnitude) {
        std::ostringstream os;
        os << "contact " << i << " approaches at " << ws_.u0[i]
           << " but no impulse can move it (zero effective inverse mass along its normal); "
              "velocity left unchanged";
        fail_unchanged(Status::kInfeasible, os.str());
        return false;
      }
    }
    return true;
  }

  // Seghete & Murphey 2014, Theorem 1: the bound for the most oblique coupled
  // pair, one per pair.
  std::int64_t automatic_cap() const {
    double c_min = 0.0;  // uncoupled pairs: c = 0, γ = π/4
    const internal::SparseColumns& w = space_.w();
    for (int i = 0; i < m_; ++i) {
      if (ws_.inert[i]) continue;
      for (int k = w.begin(i); k < w.end(i); ++k) {
        const int j = w.index[k];
        if (j == i || ws_.inert[j]) continue;
        c_min = std::min(c_min, w.value[k] * ws_.inv_sqrt_diag[i] * ws_.inv_sqrt_diag[j]);
      }
    }
    const std::int64_t pairs = m_ > 1 ? static_cast<std::int64_t>(m_) * (m_ - 1) / 2 : 1;
    const std::int64_t bound = std::min(pair_reflection_bound(c_min), kMaxPairRun);
    if (bound >= kMaxReflectionCeiling / pairs) return kMaxReflectionCeiling;
    return bound * pairs;
  }

  bool approaching(const Eigen::VectorXd& u, int j) const {
    return !ws_.inert[j] && u[j] < -ws_.threshold[j];
  }

  double key(const Eigen::VectorXd& u, int j) const {
    switch (params_.policy) {
      case OrderPolicy::kMostNegative: return u[j] * ws_.inv_sqrt_diag[j];
      case OrderPolicy::kLeastNegative: return -u[j] * ws_.inv_sqrt_diag[j];
      case OrderPolicy::kTimeOfImpact: return p_.time_of_impact[j];
      default: return static_cast<double>(j);
    }
  }

  // One reflection Γ(Dφ_i) (Seghete & Murphey 2014, eq. (7)). The velocity v is
  // updated along with the contact velocities u: u steers the order policy in
  // O(column of W), while the impulse is computed from u_i = J_i v + b_i
  // afresh, so the kinetic energy of v stays exact to rounding per reflection
  // however long the sequence (u alone would drift, and v⁻ + M⁻¹Jᵀλ would
  // cancel large accumulated impulses).
  template <typename OnTouched>
  void reflect(Eigen::VectorXd& u, Eigen::VectorXd& lambda, Eigen::VectorXd& v, int i,
               OnTouched&& on_touched) const {
    double fresh = p_.offsets.size() ? p_.offsets[i] : 0.0;
    for (SparseRowMatrix::InnerIterator it(p_.normals, i); it; ++it) fresh += it.value() * v[it.col()];
    u[i] = fresh;
    const double delta = -2.0 * fresh / space_.diagonal(i);
    lambda[i] += delta;
    const internal::SparseColumns& y = space_.y();
    for (int k = y.begin(i); k < y.end(i); ++k) v[y.index[k]] += y.value[k] * delta;
    const internal::SparseColumns& w = space_.w();
    for (int k = w.begin(i); k < w.end(i); ++k) {
      u[w.index[k]] += w.value[k] * delta;
      on_touched(w.index[k]);
    }
  }

  enum class Stop { kDone, kCap, kJam, kNonFinite };

  // W_ab / √(W_aa W_bb) for two non-inert contacts (column a of W searched).
  double normalized_coupling(int a, int b) const {
    const internal::SparseColumns& w = space_.w();
    for (int k = w.begin(a); k < w.end(a); ++k)
      if (w.index[k] == b) return w.value[k] * ws_.inv_sqrt_diag[a] * ws_.inv_sqrt_diag[b];
    return 0.0;
  }

  // Longest allowed run of alternating reflections of the pair (a, b), see
  // propagative.h "Termination"; remembers the pair for jam_message (the
  // message is written only if the run is exceeded: formatting it for every
  // new pair cost more than the reflections of a 1000-ball chain).
  std::int64_t pair_run_limit(int a, int b) {
    jam_ = {a, b, normalized_coupling(a, b), 0};
    jam_.bound = pair_reflection_bound(jam_.coupling);
    return jam_.bound > kMaxPairRun ? kMaxPairRun : jam_.bound + kPairRunSlack;
  }

  // Why the last pair's run was stopped (pair_run_limit).
  std::string jam_message() const {
    std::ostringstream os;
    os.precision(6);
    if (jam_.bound > kMaxPairRun) {
      os << "contacts " << jam_.a << " and " << jam_.b << " are jammed: their normals are nearly opposite (c = "
         << jam_.coupling << ", Theorem 1 bound " << jam_.bound << " > kMaxPairRun = " << kMaxPairRun
         << ") and they alternated " << kMaxPairRun << " times";
    } else {
      os << "contacts " << jam_.a << " and " << jam_.b << " alternated more than Theorem 1's bound of " << jam_.bound
         << " reflections for a pair (+" << kPairRunSlack << "): rounding keeps them in a loop, a jam";
    }
    return os.str();
  }

  Stop run_single_policy() {
    Eigen::VectorXd& u = ws_.u;
    u = ws_.u0;
    ws_.v = p_.velocity;
    ws_.lambda_elastic.setZero(m_);
    ws_.sequence.clear();
    const bool random = params_.policy == OrderPolicy::kRandom;
    internal::SplitMix64 rng(params_.seed);
    auto refresh = [&](int j) {
      if (random)
        ws_.set.update(j, approaching(u, j));
      else
        ws_.heap.update(j, approaching(u, j), key(u, j));
    };
    if (random)
      ws_.set.reset(m_);
    else
      ws_.heap.reset(m_);
    for (int j = 0; j < m_; ++j) refresh(j);

    std::int64_t& count = ws_.result.reflections;
    int last = -1, before_last = -1;  // the two latest reflected contacts
    // The current pair's run and its limit, computed when the run first
    // grows past 2 (the limit is at least Theorem 1's ⌈π/γ⌉ ≥ 2): a chain's
    // thousand pairs each run once, and their asin was ~2 % of its step.
    constexpr std::int64_t kUnknownLimit = -1;
    std::int64_t run = 0, run_limit = kUnknownLimit;
    int run_a = -1, run_b = -1;
    while (true) {
      int i = random ? ws_.set.pick(rng) : ws_.heap.top();
      if (i < 0) {
        // Confirm with velocities computed afresh from v: u has drifted by
        // rounding over the sequence and must not decide termination.
        space_.contact_velocity(p_.normals, ws_.v, p_.offsets, u);
        for (int j = 0; j < m_; ++j) refresh(j);
        i = random ? ws_.set.pick(rng) : ws_.heap.top();
        if (i < 0) return Stop::kDone;
      }
      if (last >= 0 && i == before_last) {
        if (run_limit == kUnknownLimit) run_limit = pair_run_limit(run_a, run_b);
        if (++run > run_limit) return Stop::kJam;
      } else if (last >= 0) {
        run = 2;
        run_limit = kUnknownLimit;
        run_a = last;
        run_b = i;
      }
      if (count >= ws_.result.reflection_cap) return Stop::kCap;
      reflect(u, ws_.lambda_elastic, ws_.v, i, refresh);
      ws_.sequence.push_back(i);
      ++count;
      if (!std::isfinite(ws_.lambda_elastic[i]) || !std::isfinite(u[i])) return Stop::kNonFinite;
      before_last = last;
      last = i;
    }
  }

  void approaching_list(const Eigen::VectorXd& u, std::vector<int>& out) const {
    out.clear();
    for (int j = 0; j < m_; ++j)
      if (approaching(u, j)) out.push_back(j);
  }

  // Depth-first over every sequence (Seghete & Murphey 2010, §III-B); children
  // in index order, so outcomes[0] is the outcome of OrderPolicy::kIndex.
  void enumerate_all() {
    ImpactResult& r = ws_.result;
    ws_.clear_leaves();
    prepare_dedup();
    struct Frame {
      Eigen::VectorXd u, lambda, v;
      std::vector<int> candidates;
      size_t next = 0;
    };
    std::vector<Frame> frames(1);
    frames[0].u = ws_.u0;
    frames[0].lambda = Eigen::VectorXd::Zero(m_);
    frames[0].v = p_.velocity;
    approaching_list(frames[0].u, frames[0].candidates);
    if (frames[0].candidates.empty()) {
      ws_.add_leaf(frames[0].lambda, frames[0].v, {});
      r.sequences_explored = 1;
      return;
    }
    std::vector<int> path;
    std::int64_t capped = 0;
    bool exhausted = false;
    auto no_op = [](int) {};
    while (!frames.empty()) {
      Frame& f = frames.back();
      if (f.next == f.candidates.size()) {
        frames.pop_back();
        if (!path.empty()) path.pop_back();
        continue;
      }
      if (r.reflections >= params_.enumeration_budget) {
        exhausted = true;
        break;
      }
      const int j = f.candidates[f.next++];
      Frame child;
      child.u = f.u;
      child.lambda = f.lambda;
      child.v = f.v;
      reflect(child.u, child.lambda, child.v, j, no_op);
      ++r.reflections;
      path.push_back(j);
      approaching_list(child.u, child.candidates);
      if (child.candidates.empty()) {  // confirm afresh, as in run_single_policy
        space_.contact_velocity(p_.normals, child.v, p_.offsets, child.u);
        approaching_list(child.u, child.candidates);
      }
      if (!std::isfinite(child.lambda[j])) {
        ++capped;  // overflowed: dropped like a capped sequence
        path.pop_back();
      } else if (child.candidates.empty()) {
        ++r.sequences_explored;
        add_distinct_leaf(child.lambda, child.v, path);
        path.pop_back();
      } else if (static_cast<std::int64_t>(path.size()) >= r.reflection_cap) {
        ++capped;
        path.pop_back();
      } else {
        frames.push_back(std::move(child));  // invalidates f
      }
    }
    if (exhausted) {
      set_status(Status::kBudgetExhausted,
                 "enumeration budget of " + std::to_string(params_.enumeration_budget) +
                     " reflections exhausted after " + std::to_string(r.sequences_explored) +
                     " complete sequences; the outcomes are a subset");
    } else if (capped > 0) {
      set_status(Status::kReflectionCapReached,
                 std::to_string(capped) + " sequences exceeded the reflection cap of " +
                     std::to_string(r.reflection_cap) + " and were dropped" +
                     (ws_.leaf_count == 0 ? "; returned the plastic outcome" : ""));
    }
  }

  // Duplicate removal (propagative.h "Termination", COST): kept outcomes are
  // indexed by k(λ) = gᵀλ / ‖r‖_g, g = W r for a fixed r, a 1-Lipschitz
  // function of λ in the g-norm (|k(a) − k(b)| ≤ ‖a − b‖_g). A match needs
  // ‖λ − λ_k‖_g ≤ tol · max(‖λ‖_g, ‖λ_k‖_g) ≤ tol ‖λ‖_g / (1 − tol), so only
  // outcomes with keys in that window are compared, exactly as before.
  void prepare_dedup() {
    ws_.dedup_index.clear();
    internal::SplitMix64 rng(0x5EEDDEDB1CULL);  // fixed: deterministic keys
    Eigen::VectorXd r(m_);
    for (int i = 0; i < m_; ++i) r[i] = 2.0 * rng.uniform() - 1.0;
    ws_.dedup_direction.setZero(m_);
    const internal::SparseColumns& w = space_.w();
    for (int i = 0; i < m_; ++i)
      for (int k = w.begin(i); k < w.end(i); ++k) ws_.dedup_direction[w.index[k]] += w.value[k] * r[i];
    const double norm = std::sqrt(std::max(0.0, r.dot(ws_.dedup_direction)));
    if (norm > 0.0) ws_.dedup_direction /= norm;
    else ws_.dedup_direction.setZero();
  }

  void add_distinct_leaf(const Eigen::VectorXd& lambda, const Eigen::VectorXd& velocity,
                         const std::vector<int>& sequence) {
    const double norm = space_.impulse_norm(lambda);
    const double key = ws_.dedup_direction.dot(lambda);
    const double key_magnitude = ws_.dedup_direction.cwiseAbs().dot(lambda.cwiseAbs());
    // The window of the comment above, widened by the rounding of the keys
    // and norms (~m·1e-16 of their magnitudes; 1e-12 covers m up to 10⁴).
    const double tol = params_.dedup_tolerance;
    const double half = tol * norm / std::max(1.0 - tol, 1e-300) * (1.0 + 1e-9) + 1e-12 * key_magnitude;
    for (auto it = ws_.dedup_index.lower_bound(key - half);
         it != ws_.dedup_index.end() && it->first <= key + half; ++it) {
      const auto& leaf = ws_.leaves[it->second];
      ++ws_.result.comparisons;
      const double scale = std::max(norm, space_.impulse_norm(leaf.lambda));
      if (space_.impulse_norm(lambda - leaf.lambda) <= tol * scale) return;
    }
    ws_.dedup_index.emplace(key, ws_.leaf_count);
    ws_.add_leaf(lambda, velocity, sequence);
  }

  double indeterminacy() {
    const auto& outcomes = ws_.result.outcomes;
    const size_t count = outcomes.size();
    double spread = 0.0, largest = 0.0;
    for (size_t a = 0; a < count; ++a) largest = std::max(largest, space_.impulse_norm(outcomes[a].impulses));
    const double pairs = 0.5 * static_cast<double>(count) * static_cast<double>(count - 1);
    if (pairs <= static_cast<double>(params_.enumeration_budget)) {
      for (size_t a = 0; a < count; ++a)
        for (size_t b = a + 1; b < count; ++b) {
          ++ws_.result.comparisons;
          spread = std::max(spread, space_.impulse_norm(outcomes[a].impulses - outcomes[b].impulses));
        }
    } else {
      // Double sweep: d(x, far(x)) ≤ diameter ≤ 2 d(x, far(x)).
      size_t far = 0;
      for (int sweep = 0; sweep < 2; ++sweep) {
        const size_t from = far;
        double best = -1.0;
        for (size_t b = 0; b < count; ++b) {
          ++ws_.result.comparisons;
          const double d = space_.impulse_norm(outcomes[from].impulses - outcomes[b].impulses);
          if (d > best) {
            best = d;
            far = b;
          }
        }
        spread = std::max(spread, best);
      }
      const std::string note = "indeterminacy estimated by a double sweep over " +
                               std::to_string(count) +
                               " outcomes (a lower bound within a factor 2 of the exact spread): "
                               "comparing all pairs would exceed the enumeration budget";
      ws_.result.message = ws_.result.message.empty() ? note : ws_.result.message + "; " + note;
    }
    if (spread == 0.0) return 0.0;
    const double momentum = std::sqrt(2.0 * ws_.result.energy_before);  // ‖p⁻‖_g
    return spread / (momentum > 0.0 ? momentum : largest);
  }

  // α solving α² D + 2 α e − R² L = 0 (propagative.h), in the stable form
  // α = R² L / (e + √(e² + D R² L)), with every term in contact space:
  //   L = λ_pᵀ W λ_p           (= ‖p_e‖² − ‖p_p‖², twice the plastic loss)
  //   D = Δλᵀ W Δλ, Δλ = λ_e − λ_p   (= ‖p_e − p_p‖²)
  //   e = (u⁻ + W λ_p)ᵀ Δλ = u_p⁺ᵀ λ_e ≥ 0   (= ⟨p_p, p_e − p_p⟩)
  double blend_weight(const Eigen::VectorXd& lambda_elastic, double restitution) const {
    const Eigen::VectorXd delta = lambda_elastic - ws_.lambda_plastic;
    const double plastic_loss = std::pow(space_.impulse_norm(ws_.lambda_plastic), 2);
    const double spread = std::pow(space_.impulse_norm(delta), 2);
    Eigen::VectorXd u_plastic = ws_.u0;
    const internal::SparseColumns& w = space_.w();
    for (int i = 0; i < m_; ++i)
      for (int k = w.begin(i); k < w.end(i); ++k)
        u_plastic[w.index[k]] += w.value[k] * ws_.lambda_plastic[i];
    const double overlap = std::max(0.0, u_plastic.dot(delta));
    const double r2l = restitution * restitution * plastic_loss;
    const double denominator = overlap + std::sqrt(overlap * overlap + spread * r2l);
    if (!(denominator > 0.0)) return restitution;  // p_e = p_p: any α gives the same outcome
    return std::min(1.0, r2l / denominator);
  }

  // Moreau's projection as the LCP (W, u⁻) over the non-inert contacts
  // (inert ones take no impulse); computed at most once, by the solver
  // PropagativeParameters::plastic_solver names (automatic: dense Lemke up
  // to kDensePlasticContacts, box pivoting above and where Lemke fails short
  // of proving the LCP infeasible; propagative.h, "Plastic law"). Either
  // solution is accepted by the same residual check, against the data's
  // scales (outcome_check.h): velocity V_i per row, impulse V_i / W_ii per
  // variable.
  bool ensure_plastic() {
    if (plastic_ready_) return true;
    std::vector<int> active;
    bool approaching_any = false;
    for (int i = 0; i < m_; ++i) {
      if (ws_.inert[i]) continue;
      active.push_back(i);
      if (ws_.u0[i] < 0.0) approaching_any = true;
    }
    ws_.lambda_plastic.setZero(m_);
    if (!approaching_any) {
      ws_.v_plastic = p_.velocity;
      plastic_ready_ = true;
      return true;
    }
    const int k = static_cast<int>(active.size());
    Eigen::VectorXd q(k);
    internal::LemkeParameters lemke;
    lemke.residual_tolerance = params_.plastic_residual_tolerance;
    lemke.w_scale.resize(k);
    lemke.z_scale.resize(k);
    const double speed = ws_.scales.energy_scale > 0.0 ? std::sqrt(2.0 * ws_.scales.energy_scale) : 0.0;
    for (int a = 0; a < k; ++a) {
      const int i = active[static_cast<size_t>(a)];
      q[a] = ws_.u0[i];
      const double velocity = std::max(speed * std::sqrt(ws_.w_diag[i]) + ws_.magnitude[i], 1e-300);
      lemke.w_scale[a] = velocity;
      lemke.z_scale[a] = velocity / ws_.w_diag[i];
    }
    const SparseColMatrix w_active = active_w(active);
    internal::LcpResult lcp;
    lcp.status = internal::LcpStatus::kInaccurate;
    const PlasticSolver solver = params_.plastic_solver;
    if (solver == PlasticSolver::kLemke || (solver == PlasticSolver::kAutomatic && k <= kDensePlasticContacts))
      lcp = plastic_by_lemke(w_active, q, lemke);
    if (solver == PlasticSolver::kActiveSet || (solver == PlasticSolver::kAutomatic && k > kDensePlasticContacts)) {
      lcp = internal::solve_lcp_active_set(w_active, q, lemke.w_scale, lemke.z_scale, lemke.residual_tolerance,
                                           nullptr,
                                           solver == PlasticSolver::kAutomatic ? internal::kActiveSetFlopRatio : 0.0);
    }
    if (solver != PlasticSolver::kLemke && solver != PlasticSolver::kActiveSet &&
        lcp.status != internal::LcpStatus::kSolved && lcp.status != internal::LcpStatus::kRayTermination) {
      internal::LcpResult boxed = plastic_by_box_pivoting(active, w_active, q, lemke);
      if (boxed.status == internal::LcpStatus::kSolved || lcp.message.empty()) {
        lcp = std::move(boxed);
      } else {
        lcp.message += "; box pivoting: " + boxed.message;
      }
    }
    if (lcp.status == internal::LcpStatus::kRayTermination) {
      fail_unchanged(Status::kInfeasible,
                     "no non-negative impulses stop every approaching contact (plastic LCP "
                     "infeasible); velocity left unchanged");
      return false;
    }
    if (lcp.status != internal::LcpStatus::kSolved) {
      fail_unchanged(Status::kLcpFailed, "plastic LCP failed: " + lcp.message +
                                             "; velocity left unchanged");
      return false;
    }
    for (int a = 0; a < k; ++a) ws_.lambda_plastic[active[static_cast<size_t>(a)]] = lcp.z[a];
    space_.apply_impulses(p_.velocity, ws_.lambda_plastic, ws_.v_plastic);
    plastic_ready_ = true;
    return true;
  }

  // W_active: the contact space's W on the `active` contacts (both
  // triangles, column-major), shared by the three plastic solvers.
  SparseColMatrix active_w(const std::vector<int>& active) const {
    const int k = static_cast<int>(active.size());
    std::vector<int> position(static_cast<size_t>(m_), -1);
    for (int a = 0; a < k; ++a) position[static_cast<size_t>(active[static_cast<size_t>(a)])] = a;
    const internal::SparseColumns& w = space_.w();
    std::vector<Eigen::Triplet<double>> entries;
    for (int a = 0; a < k; ++a) {
      const int i = active[static_cast<size_t>(a)];
      for (int e = w.begin(i); e < w.end(i); ++e)
        if (const int b = position[static_cast<size_t>(w.index[e])]; b >= 0) entries.emplace_back(b, a, w.value[e]);
    }
    SparseColMatrix out(k, k);
    out.setFromTriplets(entries.begin(), entries.end());
    return out;
  }

  // The plastic LCP on W_active by dense Lemke (solve_psd_lcp),
  // once more in g-normalized units if that fails short of a ray.
  internal::LcpResult plastic_by_lemke(const SparseColMatrix& w_active, const Eigen::VectorXd& q,
                                       const internal::LemkeParameters& lemke) const {
    const Eigen::MatrixXd w(w_active);
    internal::LcpResult lcp = internal::solve_psd_lcp(w, q, lemke);
    if (lcp.status != internal::LcpStatus::kSolved) {
      // Once more in g-normalized units, D W D with D = diag(1/√W_ii) (unit
      // diagonal, still symmetric PSD; z = D z̃, w̃ = D w): on badly scaled
      // data the relative pivot tolerances then see O(1) entries. Fixed, so
      // the result stays a function of the data.
      const Eigen::VectorXd d = w.diagonal().cwiseSqrt().cwiseInverse();
      internal::LemkeParameters unit = lemke;
      unit.w_scale = lemke.w_scale.cwiseProduct(d);
      unit.z_scale = lemke.z_scale.cwiseQuotient(d);
      const Eigen::MatrixXd scaled = d.asDiagonal() * w * d.asDiagonal();
      internal::LcpResult second = internal::solve_psd_lcp(scaled, q.cwiseProduct(d), unit);
      if (second.status == internal::LcpStatus::kSolved) {
        second.z = second.z.cwiseProduct(d);
        lcp = second;
      } else if (second.status == internal::LcpStatus::kRayTermination) {
        lcp.status = internal::LcpStatus::kRayTermination;  // infeasible in either units
      }
    }
    return lcp;
  }

  // The plastic LCP on the `active` contacts by box pivoting (box_qp.h) on
  // the rows A = J_active R, R R^T = M⁻¹ (metric_root), bounds [0, ∞): W is
  // never formed above box_qp.h's dense limit, and dependent contacts (a
  // face's four corners) never enter the clamped set, where they made dense
  // Lemke fail on box piles of ~250–370 contacts after ~1 s each (a large
  // joint group's block of M⁻¹ gives it W_active instead: set_contact_rows).
  // The result passes the same residual check as Lemke's, against the contact
  // space's W.
  internal::LcpResult plastic_by_box_pivoting(const std::vector<int>& active, const SparseColMatrix& w_active,
                                              const Eigen::VectorXd& q,
                                              const internal::LemkeParameters& lemke) const {
    const int k = static_cast<int>(active.size());
    internal::LcpResult lcp;
    std::vector<Eigen::Triplet<double>> entries;
    for (int a = 0; a < k; ++a)
      for (SparseRowMatrix::InnerIterator it(p_.normals, active[static_cast<size_t>(a)]); it; ++it)
        entries.emplace_back(a, static_cast<int>(it.col()), it.value());
    SparseRowMatrix rows(k, p_.normals.cols());
    rows.setFromTriplets(entries.begin(), entries.end());
    internal::BoxQp qp;
    internal::set_contact_rows(qp, rows, p_.inverse_mass, [&] { return Eigen::MatrixXd(w_active); });
    const Eigen::VectorXd lo = Eigen::VectorXd::Zero(k);
    const Eigen::VectorXd hi = Eigen::VectorXd::Constant(k, std::numeric_limits<double>::infinity());
    // The pivoting's own verdict is not the acceptance: on piles it can end
    // with one dependent contact's w a few decision tolerances negative
    // after its final refactorisation (rounding of a clamped set of ~100
    // near-dependent rows), which the residual check below, three orders
    // looser, accepts; a stalled or unfinished run fails that check.
    const bool finished =
        qp.solve(q, lo, hi, internal::kBoxDecisionTolerance * lemke.w_scale,
                 internal::kBoxDecisionTolerance * lemke.z_scale);
    lcp.pivots = qp.steps();
    lcp.z = qp.x().cwiseMax(0.0);
    // w = W z + q over the active rows, W the contact space's.
    lcp.w = q;
    lcp.w.noalias() += w_active * lcp.z;
    Eigen::Index where = 0;
    const double violation = internal::scaled_violation(lcp.z, lcp.w, lemke.w_scale, lemke.z_scale, &where);
    if (!(violation <= lemke.residual_tolerance)) {
      lcp.status = finished ? internal::LcpStatus::kInaccurate : internal::LcpStatus::kPivotLimit;
      std::ostringstream message;
      message << (finished ? "finished" : "stopped") << " after " << qp.steps()
              << " steps (limit " << internal::box_step_limit(k) << ") with its solution violating row " << where
              << " by " << violation << " of the data's scale";
      lcp.message = message.str();
      return lcp;
    }
    lcp.status = internal::LcpStatus::kSolved;
    return lcp;
  }

  const ImpactProblem& p_;
  const PropagativeParameters& params_;
  PropagativeSolver::Workspace& ws_;
  internal::ContactSpace& space_;
  const int m_;
  bool plastic_ready_ = false;
  struct JamPair {
    int a = -1, b = -1;
    double coupling = 0.0;
    std::int64_t bound = 0;
  } jam_;
};

}  // namespace

const ImpactResult& PropagativeSolver::solve(const ImpactProblem& problem) {
  Resolution(problem, parameters_, *workspace_).run(/*plastic_only=*/false);
  return workspace_->result;
}

ImpactResult resolve(const ImpactProblem& problem, const PropagativeParameters& parameters) {
  PropagativeSolver solver(parameters);
  return solver.solve(problem);
}

ImpactResult resolve_plastic(const ImpactProblem& problem, const PropagativeParameters& parameters) {
  PropagativeSolver::Workspace ws;
  Resolution(problem, parameters, ws).run(/*plastic_only=*/true);
  return ws.result;
}

}  // namespace simpact
