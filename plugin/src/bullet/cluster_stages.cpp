#include "cluster_stages.h"

#include "proximity.h"

#include <simpact/pasquero.h>
#include <simpact/routh.h>
#include <simpact/variational.h>

#include <BulletCollision/BroadphaseCollision/btDispatcher.h>
#include <BulletCollision/CollisionDispatch/btCollisionObject.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>

namespace simpact::bullet::internal {

// ── plan ────────────────────────────────────────────────────────────────────

void ClusterPlan::add(double u, const btManifoldPoint& point, const btPersistentManifold* manifold) {
  frictional = frictional || point.m_combinedFriction > 0;
  note_strike(u, strikes.of(manifold), point_restitution(manifold, point), impact, restitution);
}

AppliedLaw ClusterPlan::applied() const {
  switch (law) {
    case PlannedLaw::kPropagative: return AppliedLaw::kPropagative;
    case PlannedLaw::kRouth: return AppliedLaw::kRouth;
    case PlannedLaw::kRouthRestitution: return AppliedLaw::kRouthRestitution;
    case PlannedLaw::kVariational: return AppliedLaw::kVariational;
    case PlannedLaw::kPasquero: return AppliedLaw::kPasquero;
    case PlannedLaw::kNone:
    case PlannedLaw::kBaseSolver: break;
  }
  return AppliedLaw::kBaseSolver;
}

void decide_law(const ImpactSettings& settings, int contacts, ClusterPlan& plan) {
  plan.restitution = std::clamp(plan.restitution, 0.0, 1.0);
  plan.law = PlannedLaw::kNone;
  plan.oversized = false;
  if (!plan.impact) return;
  const PlannedLaw propagative = plan.restitution == 0.0 && !settings.resolve_plastic_impacts
                                     ? PlannedLaw::kNone
                                     : PlannedLaw::kPropagative;
  switch (settings.law) {
    case ImpactLaw::kPropagative:
      plan.law = propagative;
      return;
    case ImpactLaw::kVariational:  // elastic laws: elastic clusters only
    case ImpactLaw::kPasquero:
      plan.law = plan.restitution < 1.0 ? propagative
                 : settings.law == ImpactLaw::kVariational ? PlannedLaw::kVariational
                                                           : PlannedLaw::kPasquero;
      return;
    case ImpactLaw::kRouth:
      plan.law = PlannedLaw::kRouth;
      break;
    case ImpactLaw::kRouthRestitution:
      plan.law = PlannedLaw::kRouthRestitution;
      break;
    case ImpactLaw::kAuto:
      if (!plan.frictional || plan.restitution == 1.0) {
        plan.law = propagative;
        return;
      }
      plan.law = plan.restitution == 0.0 ? PlannedLaw::kRouth : PlannedLaw::kRouthRestitution;
      break;
  }
  if (contacts > settings.routh.max_contacts) {
    plan.oversized = true;
    plan.law = settings.law == ImpactLaw::kAuto && plan.restitution > 0.0 ? PlannedLaw::kPropagative
                                                                          : PlannedLaw::kBaseSolver;
  }
}

void report_plan(const ImpactSettings& settings, const ClusterPlan& plan, int contacts,
                 ImpactStats& stats, ImpactReport& report) {
  report.restitution = plan.restitution;
  report.law = report.attempted_law = plan.applied();
  if (!plan.oversized) return;
  ++stats.routh_oversized;
  report.message = "cluster of " + std::to_string(contacts) + " contacts exceeds routh.max_contacts = " +
                   std::to_string(settings.routh.max_contacts) + ": " +
                   (plan.law == PlannedLaw::kBaseSolver
                        ? "left to the base solver"
                        : "resolved by the propagative law, its friction left to the base solver");
}

// ── resolve ─────────────────────────────────────────────────────────────────

namespace {
template <class Sparse>
bool stored_finite(const Sparse& matrix) {
  return Eigen::Map<const Eigen::VectorXd>(matrix.valuePtr(), matrix.nonZeros()).allFinite();
}
}  // namespace

bool LawRows::finite(bool with_tangents) const {
  bool ok = admissible.allFinite() && stored_finite(inverse_mass) && stored_finite(normals) && offsets.allFinite();
  if (with_tangents) ok = ok && stored_finite(tangents) && tangent_offsets.allFinite() && friction.allFinite();
  return ok;
}

namespace {

// The propagative law on `rows` from `velocity` (rows.admissible, or what
// the friction pass left) with restitution R; with `indeterminacy`, also ξ
// (policy kAll, one more resolution).
const ImpactResult& solve_propagative(const LawRows& rows, const Eigen::VectorXd& velocity, double restitution,
                                      const ImpactSettings& settings, const LawInputs& inputs, LawState& state,
                                      std::optional<double>* indeterminacy) {
  ImpactProblem problem = impact_problem(rows.inverse_mass, rows.normals, velocity, rows.offsets, restitution);
  if (settings.policy == OrderPolicy::kTimeOfImpact) {
    if (inputs.distances == nullptr || inputs.distances->size() != rows.contacts())
      throw std::invalid_argument("policy time_of_impact: no contact distances for the hints");
    problem.time_of_impact = time_of_impact_hints(*inputs.distances, rows.normals * velocity + rows.offsets);
  }
  // Validation off: the adapters check the rows for finiteness
  // (LawRows::finite). validate() rejects policy kAll, so the policy is a
  // simulation policy. The core's energies are not used (the adapters
  // measure the cluster's own).
  const PropagativeParameters parameters = propagative_parameters(
      settings.policy, mix_seed(settings.seed, state.impact_counter++), settings.max_reflections, false);
  state.solver.set_parameters(parameters);
  const ImpactResult& result = state.solver.solve(problem);
  if (indeterminacy != nullptr) {
    PropagativeParameters all = parameters;
    all.policy = OrderPolicy::kAll;
    state.enumerator.set_parameters(all);
    *indeterminacy = state.enumerator.solve(problem).indeterminacy;
  }
  return result;
}

// Coulomb friction on the propagative law's normal impulses `lambda`
// (ImpactSettings::propagative_friction): contact by contact, in order, the
// tangential impulse P = α d at contact r, d = −s/|s| opposite its slip
// s = J_t,r v + b_t,r (rows 2r, 2r + 1), α = min(μ_r λ_r, |s| / dᵀW_t,r d)
// with W_t,r = J_t,r M⁻¹ J_t,rᵀ: v += α M⁻¹ J_t,rᵀ d. Each impulse changes the
// kinetic energy by −α|s| + ½α² dᵀW_t,r d ≤ 0 (α ≤ |s| / dᵀW d). Writes each
// contact's impulse on the tangent frame into `tangential` (2m). Returns
// whether any impulse was applied.
bool impact_friction(const LawRows& rows, const Eigen::VectorXd& lambda, Eigen::VectorXd& velocity,
                     Eigen::VectorXd& tangential) {
  const int m = rows.contacts();
  tangential.setZero(2 * m);
  // The adapter assembles these rows when ClusterPlan::tangent_rows says so;
  // without them there is nothing to rub on.
  if (rows.tangents.rows() != 2 * m || rows.tangent_offsets.size() != 2 * m || rows.friction.size() != m)
    return false;
  bool applied = false;
  Eigen::SparseVector<double> direction;
  for (int r = 0; r < m; ++r) {
    const double bound = rows.friction[r] * lambda[r];
    if (!(bound > 0.0)) continue;
    const Eigen::Vector2d slip(rows.tangents.row(2 * r).dot(velocity) + rows.tangent_offsets[2 * r],
                               rows.tangents.row(2 * r + 1).dot(velocity) + rows.tangent_offsets[2 * r + 1]);
    const double speed = slip.norm();
    if (!(speed > 0.0)) continue;
    const Eigen::Vector2d d = -slip / speed;
    direction = d[0] * rows.tangents.row(2 * r).transpose() + d[1] * rows.tangents.row(2 * r + 1).transpose();
    const Eigen::SparseVector<double> change = rows.inverse_mass * direction;
    const double response = direction.dot(change);  // dᵀ W_t,r d
    if (!(response > 0.0)) continue;                // no mobility along the slip
    const double alpha = std::min(bound, speed / response);
    for (Eigen::SparseVector<double>::InnerIterator it(change); it; ++it) velocity[it.index()] += alpha * it.value();
    tangential.segment<2>(2 * r) = alpha * d;
    applied = true;
  }
  return applied;
}

// A contact's report fields of friction: its tangent frame and the
// tangential impulse (components `t1`, `t2` along that frame) [N·s].
void report_friction(const LawRows& rows, int r, double t1, double t2, ImpactReport::Contact& contact) {
  const size_t rr = static_cast<size_t>(r);
  contact.tangent1 = to_bullet(rows.t1[rr]);
  contact.tangent2 = to_bullet(rows.t2[rr]);
  contact.friction_impulse = to_bullet(t1 * rows.t1[rr] + t2 * rows.t2[rr]);
}

// The Routh sampler's problem for a cluster: the rows, friction and, for
// kRouthRestitution, Stronge's e = R on every contact.
FrictionalProblem routh_problem(const LawRows& rows, const ClusterPlan& plan, const ImpactSettings& settings) {
  FrictionalProblem problem =
      frictional_problem(rows.inverse_mass, rows.normals, rows.tangents, rows.admissible, rows.friction, rows.offsets,
                         rows.tangent_offsets, settings.routh.cone_directions);
  if (plan.routh_restitution() > 0.0)
    problem.restitution = Eigen::VectorXd::Constant(rows.contacts(), plan.routh_restitution());
  return problem;
}

}  // namespace

bool resolve_law(const LawRows& rows, const ClusterPlan& plan, const ImpactSettings& settings,
                 const LawInputs& inputs, LawState& state, ImpactStats& stats, ImpactReport& report,
                 Eigen::VectorXd& velocity) {
  const int m = rows.contacts();
  // The per-contact report entries exist only when a callback reads them.
  const bool per_contact = report.contacts.size() == static_cast<size_t>(m);
  if (plan.law == PlannedLaw::kVariational || plan.law == PlannedLaw::kPasquero) {
    // The elastic laws of variational.h and pasquero.h (validation off: the
    // rows are checked by the adapters).
    const ImpactProblem problem =
        impact_problem(rows.inverse_mass, rows.normals, rows.admissible, rows.offsets, 1.0);
    const auto take = [&](auto&& result) {
      report.status = result.status;
      add_message(report, result.message);
      if (result.status != Status::kSuccess) {
        ++stats.fallbacks;
        return false;
      }
      velocity = std::move(result.velocity);
      if (per_contact)
        for (int r = 0; r < m; ++r) report.contacts[static_cast<size_t>(r)].impulse = result.impulses[r];
      return true;
    };
    if (plan.law == PlannedLaw::kPasquero) {
      PasqueroParameters parameters;
      parameters.validate_input = false;
      parameters.plastic_residual_tolerance = kPlasticResidualTolerance;
      return take(resolve_pasquero(problem, parameters));
    }
    VariationalParameters parameters;
    parameters.max_reflections = settings.max_reflections;
    parameters.enumeration_budget = settings.variational_budget;
    parameters.validate_input = false;
    parameters.plastic_residual_tolerance = kPlasticResidualTolerance;
    VariationalResult variational = resolve_variational(problem, parameters);
    if (variational.status != Status::kBudgetExhausted) return take(std::move(variational));
    // Over the budget the hull is partial: the propagative law (R = 1)
    // resolves the cluster instead, and the report says so.
    ++stats.variational_over_budget;
    report.law = AppliedLaw::kPropagative;
    add_message(report, "variational enumeration exceeded variational_budget = " +
                            std::to_string(settings.variational_budget) +
                            " reflections: resolved by the propagative law");
  }
  if (!plan.routh()) {
    const ImpactResult& result = solve_propagative(
        rows, rows.admissible, plan.restitution, settings, inputs, state,
        inputs.compute_indeterminacy ? &report.indeterminacy : nullptr);
    stats.reflections += result.reflections;
    report.status = result.status;
    add_message(report, result.message);
    if (result.status != Status::kSuccess) {
      ++stats.fallbacks;
      return false;
    }
    const Outcome& outcome = result.outcomes.at(0);
    velocity = outcome.velocity;
    report.sequence = outcome.sequence;
    if (per_contact)
      for (int r = 0; r < m; ++r) report.contacts[static_cast<size_t>(r)].impulse = outcome.impulses[r];
    if (!plan.propagative_friction(settings)) return true;
    // Friction in the impact, then the law once more from there (the
    // solver's result above is overwritten by that run: copied first).
    const Eigen::VectorXd lambda = outcome.impulses;
    Eigen::VectorXd rubbed = velocity, tangential;
    if (!impact_friction(rows, lambda, rubbed, tangential)) return true;
    const ImpactResult& again = solve_propagative(rows, rubbed, plan.restitution, settings, inputs, state, nullptr);
    stats.reflections += again.reflections;
    if (again.status != Status::kSuccess) {
      add_message(report, "impact friction left out: the law after it returned " +
                              std::string(to_string(again.status)) + " (" + again.message + ")");
      return true;
    }
    velocity = again.outcomes.at(0).velocity;
    for (int r = 0; per_contact && r < m; ++r) {
      ImpactReport::Contact& contact = report.contacts[static_cast<size_t>(r)];
      contact.impulse += again.outcomes[0].impulses[r];
      report_friction(rows, r, tangential[2 * r], tangential[2 * r + 1], contact);
    }
    return true;
  }
  report.sample_seed = inputs.routh_seed;
  const RouthSampler sampler(routh_problem(rows, plan, settings), routh_parameters(settings.routh, inputs.routh_seed));
  report.step = sampler.step();
  const FrictionalResult sample = sampler.sample(0);
  report.status = sample.status;
  add_message(report, sample.message);
  if (sample.outcomes.empty()) {
    if (report.status == Status::kSuccess) report.status = Status::kInfeasible;
    add_message(report, "Routh sample has no outcome");
    ++stats.fallbacks;
    return false;
  }
  const FrictionalOutcome& outcome = sample.outcomes[0];
  report.lcps = outcome.lcps;
  report.increment_fallbacks = outcome.increment_fallbacks;
  report.increment_rescues = outcome.increment_rescues;
  report.step = outcome.step;  // differs from sampler.step() for a sample drawn again (routh.h)
  report.terminated = outcome.terminated;
  report.finished_by_fallback = outcome.finished_by_fallback;
  ++stats.routh_impacts;
  stats.routh_lcps += outcome.lcps;
  if (sample.status != Status::kSuccess) {
    ++stats.fallbacks;
    return false;
  }
  velocity = outcome.velocity;
  for (int r = 0; per_contact && r < m; ++r) {
    ImpactReport::Contact& contact = report.contacts[static_cast<size_t>(r)];
    contact.impulse = outcome.normal_impulses[r];
    report_friction(rows, r, outcome.tangential_impulses[2 * r], outcome.tangential_impulses[2 * r + 1], contact);
  }
  return true;
}

// ── predict ─────────────────────────────────────────────────────────────────

void check_prediction_arguments(double time_step, const RouthSetParameters& set) {
  if (!(std::isfinite(time_step) && time_step > 0))
    throw std::invalid_argument("predict_outcome_sets: time_step must be positive and finite");
  if (set.samples < 1)
    throw std::invalid_argument("predict_outcome_sets: set.samples must be >= 1, got " +
                                std::to_string(set.samples));
  if (set.threads < 0)
    throw std::invalid_argument("predict_outcome_sets: set.threads must be >= 0 (0 = all cores)");
  if (!(std::isfinite(set.epsilon) && set.epsilon >= 0.0))
    throw std::invalid_argument("predict_outcome_sets: set.epsilon must be finite and >= 0");
}

std::vector<btPersistentManifold*> responding_manifolds(btDispatcher& dispatcher) {
  std::vector<btPersistentManifold*> manifolds;
  for (int i = 0; i < dispatcher.getNumManifolds(); ++i) {
    btPersistentManifold* manifold = dispatcher.getManifoldByIndexInternal(i);
    const btCollisionObject* a = manifold->getBody0();
    const btCollisionObject* b = manifold->getBody1();
    if (a->getActivationState() == ISLAND_SLEEPING && b->getActivationState() == ISLAND_SLEEPING) continue;
    if (!dispatcher.needsResponse(a, b)) continue;
    manifolds.push_back(manifold);
  }
  return manifolds;
}

PredictedSet predict_set(const LawRows& rows, bool finite, const ClusterPlan& plan, const ImpactSettings& settings,
                         std::uint64_t seed, const RouthSetParameters& set) {
  PredictedSet out;
  const int m = rows.contacts();
  if (m > settings.routh.max_contacts) {
    out.message = "cluster of " + std::to_string(m) + " contacts exceeds routh.max_contacts = " +
                  std::to_string(settings.routh.max_contacts) + ": not sampled";
    return out;
  }
  if (!finite) {
    out.message = "non-finite body state: not sampled";
    return out;
  }
  const RouthSampler sampler(routh_problem(rows, plan, settings), routh_parameters(settings.routh, seed));
  out.set = sampler.approximate(set);
  out.sampled = true;
  out.message = out.set.message;
  // The step's fallback rule ("Failures"): law routh applies sample 0, and
  // a sample that does not succeed hands the cluster to the base solver.
  if (plan.routh()) {
    const FrictionalResult sample0 = sampler.sample(0);
    if (sample0.status != Status::kSuccess) {
      out.base_solver = true;
      out.message += std::string(out.message.empty() ? "" : "; ") + "sample 0 ends with " + to_string(sample0.status) +
                     ": the step hands this cluster to the base solver with Bullet's restitution";
    }
  }
  return out;
}

// ── report ──────────────────────────────────────────────────────────────────

void add_message(ImpactReport& report, const std::string& text) {
  if (text.empty()) return;
  report.message = report.message.empty() ? text : report.message + "; " + text;
}

void mark_fallback(ImpactReport& report, std::vector<ImpactReport::Contact> contacts, ImpactStats& stats) {
  report.fallback_to_base = true;
  report.law = AppliedLaw::kBaseSolver;
  if (report.status == Status::kSuccess) report.status = Status::kInfeasible;
  add_message(report, std::string("cluster handed to the base solver with Bullet's restitution (") +
                          to_string(report.attempted_law) + " failed, status " + to_string(report.status) +
                          ")");
  report.sequence.clear();
  report.contacts = std::move(contacts);
  report.energy_after = report.energy_before;
  ++stats.fallbacks_to_base;  // last: counted once the report is complete (nothing after it throws)
}

// ── hand-off ────────────────────────────────────────────────────────────────

void BaseSolverHandoff::hide(std::vector<std::pair<btPersistentManifold*, int>> points) {
  // Per manifold, highest index first, so every swap partner is still visible.
  std::sort(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.first != b.first ? a.first < b.first : a.second > b.second;
  });
  for (const auto& [manifold, index] : points) {
    const int last = manifold->getNumContacts() - 1;
    if (index != last) std::swap(manifold->getContactPoint(index), manifold->getContactPoint(last));
    manifold->setNumContacts(last);
    Change change;
    change.manifold = manifold;
    change.index = index;
    change.last = last;
    log_.push_back(change);
  }
}

void BaseSolverHandoff::forget(btManifoldPoint& point) {
  point.m_appliedImpulse = 0;
  point.m_appliedImpulseLateral1 = 0;
  point.m_appliedImpulseLateral2 = 0;
  if (point.m_distance1 < 0) point.m_distance1 = 0;
}

void BaseSolverHandoff::show_overlap(btManifoldPoint& point, double depth) {
  point.m_distance1 = depth > 0.0 ? btScalar(-depth) : btScalar(0);  // +0, never −0
}

void BaseSolverHandoff::mute_restitution(btManifoldPoint& point) {
  if (point.m_combinedRestitution == btScalar(0)) return;
  Change change;
  change.point = &point;
  change.restitution = point.m_combinedRestitution;
  log_.push_back(change);
  point.m_combinedRestitution = btScalar(0);
}

void BaseSolverHandoff::restore() noexcept {
  // Newest first: a restitution muted before a hide is given back after the
  // swap that moved its point is undone, and one muted after, before.
  for (auto it = log_.rbegin(); it != log_.rend(); ++it) {
    if (it->point != nullptr) {
      it->point->m_combinedRestitution = it->restitution;
      continue;
    }
    it->manifold->setNumContacts(it->last + 1);
    if (it->index != it->last)
      std::swap(it->manifold->getContactPoint(it->index), it->manifold->getContactPoint(it->last));
  }
  log_.clear();
}

}  // namespace simpact::bullet::internal
