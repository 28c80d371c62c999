#include <simpact/design.h>

#include <simpact/diagnostics.h>
#include <simpact/propagative.h>

#include "core/contact_space.h"
#include "core/validation.h"

#include <unsupported/Eigen/LevenbergMarquardt>
#include <unsupported/Eigen/NumericalDiff>

#include <algorithm>
#include <cmath>
#include <limits>
#include <exception>
#include <set>
#include <sstream>
#include <string>

namespace simpact {

namespace {

template <typename... Parts>
[[noreturn]] void fail(const Parts&... parts) {
  internal::fail_invalid(parts...);
}

double max_abs_off_diagonal(const Eigen::MatrixXd& c) {
  double worst = 0.0;
  for (Eigen::Index i = 0; i < c.rows(); ++i)
    for (Eigen::Index j = i + 1; j < c.cols(); ++j) worst = std::max(worst, std::abs(c(i, j)));
  return worst;
}

/// Residual entries at a point where the model throws: cosines are ≤ 1 and
/// the other rows O(1) near the start, so 1e6 is never a real value.
constexpr double kOutsideDomain = 1e6;

double max_abs(const Eigen::VectorXd& v) { return v.size() ? v.cwiseAbs().maxCoeff() : 0.0; }

// One evaluation of the model, checked: the optimizer must never see a
// malformed point (it would turn it into NaN steps).
DesignPoint evaluate(const DesignModel& model, const Eigen::VectorXd& x, int contacts,
                     Eigen::Index constraints) {
  DesignPoint point = model(x);
  validate(point.problem);
  const int m = point.problem.contacts();
  if (m < 2) fail("design model returned ", m, " contacts at parameters ", x.transpose(),
                  "; a strike to design needs >= 2");
  if (contacts >= 0 && m != contacts)
    fail("design model returned ", m, " contacts at parameters ", x.transpose(), ", but ",
         contacts, " at the start: the set of contacts must not change");
  if (constraints >= 0 && point.constraints.size() != constraints)
    fail("design model returned ", point.constraints.size(), " constraints at parameters ",
         x.transpose(), ", but ", constraints, " at the start");
  if (!point.constraints.allFinite())
    fail("design model returned non-finite constraints at ", x.transpose());
  return point;
}

// r(x) of the header: cosines of every pair, constraints / L, proximity.
struct Residual : Eigen::DenseFunctor<double> {
  struct Setup {
    const DesignModel* model;
    Eigen::VectorXd full;            // every parameter; the free ones are overwritten
    const std::vector<int>* free;
    const Eigen::VectorXd* scales;
    double length_scale, weight;
    int contacts, constraint_rows;
  };
  explicit Residual(const Setup& s)
      : Eigen::DenseFunctor<double>(static_cast<int>(s.free->size()),
                                    s.contacts * (s.contacts - 1) / 2 + s.constraint_rows +
                                        static_cast<int>(s.free->size())),
        setup(s), anchor(Eigen::VectorXd::Zero(inputs())) {}

  Eigen::VectorXd expand(const Eigen::VectorXd& x) const {
    Eigen::VectorXd out = setup.full;
    for (size_t k = 0; k < setup.free->size(); ++k)
      out[(*setup.free)[k]] = x[static_cast<Eigen::Index>(k)];
    return out;
  }

  int operator()(const Eigen::VectorXd& x, Eigen::VectorXd& r) const {
    ++*evaluations;
    DesignPoint point;
    Eigen::MatrixXd c;
    try {
      point = evaluate(*setup.model, expand(x), setup.contacts, setup.constraint_rows);
      c = normalized_inner_products(point.problem);
    } catch (const std::exception&) {
      // A trial step outside the model's domain (an angle past its range, a
      // negative length): a residual far above any real one makes
      // Levenberg–Marquardt reject the step and shrink its trust region.
      r.setConstant(kOutsideDomain);
      return 0;
    }
    Eigen::Index row = 0;
    for (int i = 0; i < setup.contacts; ++i)
      for (int j = i + 1; j < setup.contacts; ++j) r[row++] = c(i, j);
    for (Eigen::Index g = 0; g < point.constraints.size(); ++g)
      r[row++] = point.constraints[g] / setup.length_scale;
    for (Eigen::Index k = 0; k < x.size(); ++k)
      r[row++] = setup.weight * (x[k] - anchor[k]) /
                 (*setup.scales)[(*setup.free)[static_cast<size_t>(k)]];
    return 0;
  }

  Setup setup;
  Eigen::VectorXd anchor;
  int* evaluations = nullptr;
};

}  // namespace

StrikeAnalysis analyze_strike(const ImpactProblem& problem) {
  validate(problem);
  StrikeAnalysis out;
  internal::ContactSpace space;
  space.build(problem.normals, problem.inverse_mass);
  out.inner_products = space.dense_w();
  out.cosines = normalized_inner_products(problem);
  out.max_abs_cosine = max_abs_off_diagonal(out.cosines);

  Eigen::VectorXd approach = problem.normals * problem.velocity;
  if (problem.offsets.size() != 0) approach += problem.offsets;
  if (approach.size() > 0 && approach.minCoeff() < 0.0) {
    ImpactProblem elastic = problem;
    elastic.restitution = 1.0;
    PropagativeParameters all;
    all.policy = OrderPolicy::kAll;
    const ImpactResult r = resolve(elastic, all);
    if (r.status == Status::kSuccess && r.indeterminacy) {
      out.indeterminacy = r.indeterminacy;
      out.outcomes = static_cast<int>(r.outcomes.size());
      PropagativeParameters first, last;
      first.policy = OrderPolicy::kMostNegative;
      last.policy = OrderPolicy::kLeastNegative;
      const ImpactResult a = resolve(elastic, first);
      const ImpactResult b = resolve(elastic, last);
      if (a.status == Status::kSuccess && b.status == Status::kSuccess && a.energy_before > 0.0) {
        // ‖Δp‖_g² = Δλᵀ W Δλ (Δp = Jᵀ Δλ); ‖p⁻‖_g² = 2 E⁻.
        const Eigen::VectorXd dl = a.outcomes[0].impulses - b.outcomes[0].impulses;
        out.order_spread = std::sqrt(std::max(0.0, dl.dot(out.inner_products * dl)) /
                                     (2.0 * a.energy_before));
      }
    }
  }
  return out;
}

DesignResult design_for_uniqueness(const DesignModel& model, const Eigen::VectorXd& initial,
                                   const DesignParameters& p) {
  if (!model) fail("design_for_uniqueness: the model is empty");
  const Eigen::Index n = initial.size();
  if (n == 0) fail("design_for_uniqueness: no parameters");
  if (!initial.allFinite()) fail("design_for_uniqueness: initial parameters must be finite");
  std::vector<int> free = p.free;
  if (free.empty())
    for (int k = 0; k < n; ++k) free.push_back(k);
  std::set<int> seen;
  for (int k : free) {
    if (k < 0 || k >= n) fail("design free parameter index ", k, " is outside [0, ", n, ")");
    if (!seen.insert(k).second) fail("design free parameter index ", k, " is listed twice");
  }
  Eigen::VectorXd scales = p.scales.size() == 0 ? Eigen::VectorXd::Ones(n) : p.scales;
  if (scales.size() != n)
    fail("design scales has ", scales.size(), " entries for ", n, " parameters");
  for (Eigen::Index k = 0; k < n; ++k)
    if (!(std::isfinite(scales[k]) && scales[k] > 0.0))
      fail("design scale ", k, " is ", scales[k], ": must be finite and > 0");
  if (!(std::isfinite(p.length_scale) && p.length_scale > 0.0))
    fail("design length_scale ", p.length_scale, " must be finite and > 0");
  if (!(std::isfinite(p.proximity_weight) && p.proximity_weight > 0.0))
    fail("design proximity_weight ", p.proximity_weight, " must be finite and > 0");
  if (!(std::isfinite(p.tolerance) && p.tolerance > 0.0))
    fail("design tolerance ", p.tolerance, " must be finite and > 0");
  if (!(std::isfinite(p.gap_tolerance) && p.gap_tolerance > 0.0))
    fail("design gap_tolerance ", p.gap_tolerance, " must be finite and > 0");
  if (p.max_rounds < 1) fail("design max_rounds ", p.max_rounds, " must be >= 1");
  if (p.max_evaluations < 1) fail("design max_evaluations ", p.max_evaluations, " must be >= 1");

  DesignResult result;
  result.evaluations = 1;
  const DesignPoint start = evaluate(model, initial, -1, -1);
  const int contacts = start.problem.contacts();
  result.initial = analyze_strike(start.problem);
  result.initial_constraints = start.constraints;
  result.parameters = initial;

  auto reached = [&](const StrikeAnalysis& a, const Eigen::VectorXd& g) {
    return a.max_abs_cosine <= p.tolerance && max_abs(g) <= p.gap_tolerance;
  };
  Eigen::VectorXd constraints_now = start.constraints;
  StrikeAnalysis current = result.initial;

  Residual residual({&model, initial, &free, &scales, p.length_scale, p.proximity_weight, contacts,
                     static_cast<int>(start.constraints.size())});
  residual.evaluations = &result.evaluations;
  // Central differences with steps √1e-10 ≈ 1e-5 of each parameter (about
  // ε^(1/3), the step that balances truncation against rounding): the
  // Jacobian comes out accurate to ~1e-10, enough for Newton-like steps.
  constexpr double kDifferenceStepSquared = 1e-10;
  Eigen::NumericalDiff<Residual, Eigen::Central> functor(residual, kDifferenceStepSquared);
  functor.evaluations = &result.evaluations;
  Eigen::VectorXd x(static_cast<Eigen::Index>(free.size()));
  for (size_t k = 0; k < free.size(); ++k) x[static_cast<Eigen::Index>(k)] = initial[free[k]];

  while (!reached(current, constraints_now) && result.rounds < p.max_rounds &&
         result.evaluations < p.max_evaluations) {
    ++result.rounds;
    functor.anchor = x;
    Eigen::LevenbergMarquardt<Eigen::NumericalDiff<Residual, Eigen::Central>> lm(functor);
    // Stop on the residual only: xtol would end the search as soon as the
    // step gets small, long before a 1e-10 cosine.
    lm.setXtol(0.0);
    lm.setFtol(std::numeric_limits<double>::epsilon());
    lm.setGtol(0.0);
    lm.setMaxfev(std::max<Eigen::Index>(1, (p.max_evaluations - result.evaluations) /
                                               static_cast<Eigen::Index>(2 * free.size() + 1)));
    Eigen::VectorXd trial = x;
    lm.minimize(trial);
    if (!trial.allFinite()) break;
    DesignPoint point;
    StrikeAnalysis analysis;
    try {
      point = evaluate(model, residual.expand(trial), contacts, start.constraints.size());
      analysis = analyze_strike(point.problem);
    } catch (const std::exception&) {
      break;  // LM ended outside the domain: keep the last good round
    }
    ++result.evaluations;
    // Keep the round only if it improved the worse of the two targets.
    const double before = std::max(current.max_abs_cosine / p.tolerance,
                                   max_abs(constraints_now) / p.gap_tolerance);
    const double after = std::max(analysis.max_abs_cosine / p.tolerance,
                                  max_abs(point.constraints) / p.gap_tolerance);
    if (!(after < before)) break;
    x = trial;
    current = analysis;
    constraints_now = point.constraints;
  }

  result.parameters = residual.expand(x);
  result.final = current;
  result.final_constraints = constraints_now;
  result.converged = reached(current, constraints_now);
  std::ostringstream os;
  os.precision(3);
  os << (result.converged ? "converged" : "did not converge") << " after " << result.rounds
     << " rounds and " << result.evaluations << " model evaluations: max |c_ij| "
     << result.initial.max_abs_cosine << " -> " << current.max_abs_cosine << " (target "
     << p.tolerance << "), max |constraint| " << max_abs(result.initial_constraints) << " -> "
     << max_abs(constraints_now)
     << " m (target " << p.gap_tolerance << ")";
  result.message = os.str();
  return result;
}

}  // namespace simpact
