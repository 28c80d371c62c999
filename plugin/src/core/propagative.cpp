#include <simpact/diagnostics.h>
#include <simpact/propagative.h>

#include "core/approach_queue.h"
#include "core/contact_space.h"
#include "core/inertia.h"
#include "core/lcp.h"
#include "core/rng.h"
#include "core/validation.h"

#include <algorithm>
#include <cmath>
#include <sstream>

namespace simpact {

const char* to_string(Status status) {
  switch (status) {
    case Status::kSuccess: return "success";
    case Status::kReflectionCapReached: return "reflection_cap_reached";
    case Status::kBudgetExhausted: return "budget_exhausted";
    case Status::kInfeasible: return "infeasible";
    case Status::kLcpFailed: return "lcp_failed";
    case Status::kStepLimitReached: return "step_limit_reached";
  }
  return "unknown";
}

namespace {
constexpr std::pair<OrderPolicy, const char*> kPolicyNames[] = {
    {OrderPolicy::kMostNegative, "most_negative"}, {OrderPolicy::kLeastNegative, "least_negative"},
    {OrderPolicy::kTimeOfImpact, "time_of_impact"}, {OrderPolicy::kIndex, "index"},
    {OrderPolicy::kRandom, "random"},               {OrderPolicy::kAll, "all"},
};
}  // namespace

const char* to_string(OrderPolicy policy) {
  for (const auto& [p, name] : kPolicyNames)
    if (p == policy) return name;
  return "unknown";
}

OrderPolicy parse_order_policy(const std::string& name) {
  for (const auto& [p, n] : kPolicyNames)
    if (name == n) return p;
  throw InvalidProblem("unknown order policy \"" + name +
                       "\" (expected most_negative, least_negative, time_of_impact, index, "
                       "random or all)");
}

namespace {

// A contact whose W_ii is at most this × the magnitude of the terms summing
// to it (ContactSpace::diagonal_magnitude) is "inert": its normal lies in
// the null space of M⁻¹, so no impulse changes its velocity (both sides
// infinitely massive along it). What survives such cancellation is rounding,
// ~n·1e-16 of the magnitude; 1e-12 is well above that and far below any
// real effective inverse mass.
constexpr double kInertTolerance = 1e-12;

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
  std::vector<char> inert;
  std::vector<int> sequence;
  ImpactResult result;

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
    ImpactResult& r = ws_.result;
    r.status = Status::kSuccess;
    r.message.clear();
    r.energy_before = r.energy_after = 0.0;
    r.reflections = r.sequences_explored = r.reflection_cap = 0;
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
      if (run_single_policy()) {
        ws_.add_leaf(ws_.lambda_elastic, ws_.v, ws_.sequence);
      } else {
        set_status(Status::kReflectionCapReached,
                   "reflection cap of " + std::to_string(r.reflection_cap) +
                       " reached with contacts still approaching; returned the plastic outcome");
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
        // 000 eq. (17) with α from definition (16), see propagative.h.
        const double alpha = blend_weight(leaf.lambda, restitution);
        o.impulses = alpha * leaf.lambda + (1.0 - alpha) * ws_.lambda_plastic;
        o.velocity = alpha * leaf.velocity + (1.0 - alpha) * ws_.v_plastic;
      }
      o.sequence = leaf.sequence;
    }
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
    double speed_scale = 0.0;  // S: largest g-normalized pre-impact speed
    for (int i = 0; i < m_; ++i) {
      const double wii = space_.diagonal(i);
      if (!(wii > kInertTolerance * space_.diagonal_magnitude(i))) {
        ws_.inert[i] = 1;
        ws_.inv_sqrt_diag[i] = 0.0;
        continue;
      }
      ws_.inv_sqrt_diag[i] = 1.0 / std::sqrt(wii);
      speed_scale = std::max(speed_scale, std::abs(ws_.u0[i]) * ws_.inv_sqrt_diag[i]);
    }
    for (int i = 0; i < m_; ++i)
      ws_.threshold[i] = ws_.inert[i] ? 0.0 : params_.approach_tolerance * speed_scale / ws_.inv_sqrt_diag[i];
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

  // 000 Theorem 1 bound for the most oblique coupled pair, one per pair.
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
    const std::int64_t bound = pair_reflection_bound(c_min);
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

  // One reflection Γ(Dφ_i) (000 eq. (7)). The velocity v is updated along
  // with the contact velocities u: u steers the order policy in O(column of
  // W), while the impulse is computed from u_i = J_i v + b_i afresh, so the
  // kinetic energy of v stays exact to rounding per reflection however long
  // the sequence (u alone would drift, and v⁻ + M⁻¹Jᵀλ would cancel large
  // accumulated impulses).
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

  // Returns false when the cap stops it with contacts still approaching.
  bool run_single_policy() {
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
    while (true) {
      int i = random ? ws_.set.pick(rng) : ws_.heap.top();
      if (i < 0) {
        // Confirm with velocities computed afresh from v: u has drifted by
        // rounding over the sequence and must not decide termination.
        space_.contact_velocity(p_.normals, ws_.v, p_.offsets, u);
        for (int j = 0; j < m_; ++j) refresh(j);
        i = random ? ws_.set.pick(rng) : ws_.heap.top();
        if (i < 0) return true;
      }
      if (count >= ws_.result.reflection_cap) return false;
      reflect(u, ws_.lambda_elastic, ws_.v, i, refresh);
      ws_.sequence.push_back(i);
      ++count;
    }
  }

  void approaching_list(const Eigen::VectorXd& u, std::vector<int>& out) const {
    out.clear();
    for (int j = 0; j < m_; ++j)
      if (approaching(u, j)) out.push_back(j);
  }

  // Depth-first over every sequence (003 §III-B); children in index order, so
  // outcomes[0] is the outcome of OrderPolicy::kIndex.
  void enumerate_all() {
    ImpactResult& r = ws_.result;
    ws_.clear_leaves();
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
      if (child.candidates.empty()) {
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

  void add_distinct_leaf(const Eigen::VectorXd& lambda, const Eigen::VectorXd& velocity,
                         const std::vector<int>& sequence) {
    const double norm = space_.impulse_norm(lambda);
    for (size_t k = 0; k < ws_.leaf_count; ++k) {
      const auto& leaf = ws_.leaves[k];
      const double scale = std::max(norm, space_.impulse_norm(leaf.lambda));
      if (space_.impulse_norm(lambda - leaf.lambda) <= params_.dedup_tolerance * scale) return;
    }
    ws_.add_leaf(lambda, velocity, sequence);
  }

  double indeterminacy() const {
    const auto& outcomes = ws_.result.outcomes;
    double spread = 0.0, largest = 0.0;
    for (size_t a = 0; a < outcomes.size(); ++a) {
      largest = std::max(largest, space_.impulse_norm(outcomes[a].impulses));
      for (size_t b = a + 1; b < outcomes.size(); ++b)
        spread = std::max(spread, space_.impulse_norm(outcomes[a].impulses - outcomes[b].impulses));
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

  // Moreau's projection as the LCP (W, u⁻); computed at most once.
  bool ensure_plastic() {
    if (plastic_ready_) return true;
    if (m_ == 0 || ws_.u0.minCoeff() >= 0.0) {
      ws_.lambda_plastic.setZero(m_);
      ws_.v_plastic = p_.velocity;
      plastic_ready_ = true;
      return true;
    }
    const internal::LcpResult lcp = internal::solve_psd_lcp(space_.dense_w(), ws_.u0);
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
    ws_.lambda_plastic = lcp.z;
    space_.apply_impulses(p_.velocity, ws_.lambda_plastic, ws_.v_plastic);
    plastic_ready_ = true;
    return true;
  }

  const ImpactProblem& p_;
  const PropagativeParameters& params_;
  PropagativeSolver::Workspace& ws_;
  internal::ContactSpace& space_;
  const int m_;
  bool plastic_ready_ = false;
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
