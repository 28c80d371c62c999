#include "law_runs.h"

#include <simpact/pasquero.h>
#include <simpact/routh.h>
#include <simpact/variational.h>

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <memory>
#include <stdexcept>

namespace simpact::demos {
namespace {

/// The baseline's active-set test, relative to the data's velocity scale S =
/// max |q| (and the impulse scale S / min W_ii): a few dense m × m solves
/// round to ~1e-15 relative; 1e-10 is far above that and far below any
/// physical violation.
constexpr double kBaselineResidual = 1e-10;

Eigen::MatrixXd delassus(const ImpactProblem& problem) {
  const Eigen::MatrixXd J(problem.normals);
  return J * Eigen::MatrixXd(problem.inverse_mass) * J.transpose();
}

Eigen::VectorXd contact_velocity(const ImpactProblem& problem, const Eigen::VectorXd& v) {
  Eigen::VectorXd u = problem.normals * v;
  if (problem.offsets.size() == problem.contacts()) u += problem.offsets;
  return u;
}

LawReading with_energies(const ImpactProblem& problem, LawReading reading) {
  reading.energy_before = kinetic_energy(problem, problem.velocity);
  reading.energy_after = kinetic_energy(problem, reading.velocity);
  return reading;
}

/// A single-valued law's result (status, message, velocity, impulses) as a
/// reading.
template <class Result>
LawReading single_outcome(const ImpactProblem& problem, const Result& result) {
  LawReading r;
  r.status = result.status;
  r.message = result.message;
  r.velocity = result.velocity;
  r.impulses = result.impulses;
  return with_energies(problem, r);
}

LawReading propagative_reading(const ImpactProblem& problem) {
  const ImpactResult one = resolve(problem);
  LawReading r;
  r.status = one.status;
  r.message = one.message;
  r.velocity = one.outcomes.at(0).velocity;
  r.impulses = one.outcomes.at(0).impulses;
  PropagativeParameters all;
  all.policy = OrderPolicy::kAll;
  const ImpactResult set = resolve(problem, all);
  r.spread = set.indeterminacy;
  r.outcomes = static_cast<int>(set.outcomes.size());
  r.set_impulses.resize(problem.contacts(), r.outcomes);
  for (int k = 0; k < r.outcomes; ++k) r.set_impulses.col(k) = set.outcomes[static_cast<size_t>(k)].impulses;
  return with_energies(problem, r);
}

LawRun variational_run(VariationalReading reading) {
  VariationalParameters p;
  p.reading = reading;
  return {std::string("variational, ") + to_string(reading),
          [p](const ImpactProblem& problem) { return single_outcome(problem, resolve_variational(problem, p)); },
          [p](const ImpactProblem& problem) { resolve_variational(problem, p); }};
}

LawRun routh_run(const LawOptions& options) {
  RouthParameters p;
  p.seed = options.seed;
  const int samples = std::max(1, options.routh_samples);
  return {"Routh (inelastic)",
          [p, samples](const ImpactProblem& problem) {
            const RouthSampler sampler(frictionless_routh_problem(problem), p);
            const FrictionalResult first = sampler.sample(0);
            LawReading r;
            r.status = first.status;
            r.message = first.message;
            r.velocity = first.outcomes.at(0).velocity.head(problem.dofs());
            r.impulses = first.outcomes.at(0).normal_impulses;
            RouthSetParameters set;
            set.samples = samples;
            set.threads = 1;
            const RouthOutcomeSet outcomes = sampler.approximate(set);
            r.set_impulses = outcomes.normal_impulses;
            r.outcomes = samples;
            r = with_energies(problem, r);
            r.spread = set_spread(problem, r.set_impulses);
            return r;
          },
          [p](const ImpactProblem& problem) { sample_routh(frictionless_routh_problem(problem), p); }};
}

}  // namespace

double kinetic_energy(const ImpactProblem& problem, const Eigen::VectorXd& velocity) {
  const Eigen::MatrixXd mass = Eigen::MatrixXd(problem.inverse_mass).inverse();
  return 0.5 * velocity.dot(mass * velocity);
}

double set_spread(const ImpactProblem& problem, const Eigen::MatrixXd& impulses) {
  const Eigen::MatrixXd W = delassus(problem);
  double widest = 0.0;
  for (Eigen::Index i = 0; i < impulses.cols(); ++i)
    for (Eigen::Index j = i + 1; j < impulses.cols(); ++j) {
      const Eigen::VectorXd d = impulses.col(i) - impulses.col(j);
      widest = std::max(widest, d.dot(W * d));
    }
  const double momentum = std::sqrt(2.0 * kinetic_energy(problem, problem.velocity));
  return momentum > 0.0 ? std::sqrt(widest) / momentum : 0.0;
}

FrictionalProblem frictionless_routh_problem(const ImpactProblem& problem) {
  const int n = problem.dofs(), m = problem.contacts();
  Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Identity(n + m, n + m);
  inverse_mass.topLeftCorner(n, n) = Eigen::MatrixXd(problem.inverse_mass);
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(m, n + m);
  normals.leftCols(n) = Eigen::MatrixXd(problem.normals);
  Eigen::MatrixXd tangents = Eigen::MatrixXd::Zero(m, n + m);
  tangents.rightCols(m).setIdentity();
  Eigen::VectorXd velocity = Eigen::VectorXd::Zero(n + m);
  velocity.head(n) = problem.velocity;
  FrictionalProblem frictional =
      FrictionalProblem::from_dense(inverse_mass, normals, tangents, velocity, Eigen::VectorXd::Zero(m));
  frictional.normal_offsets = problem.offsets;
  return frictional;
}

LawReading resolve_simultaneous_newton(const ImpactProblem& problem) {
  const int m = problem.contacts();
  if (m > kMaxBaselineContacts)
    throw std::invalid_argument("resolve_simultaneous_newton: " + std::to_string(m) + " contacts, at most " +
                                std::to_string(kMaxBaselineContacts) + " are enumerated");
  const Eigen::MatrixXd W = delassus(problem);
  const Eigen::VectorXd u = contact_velocity(problem, problem.velocity);
  // Target u⁺ ≥ −R u⁻ on approaching contacts, u⁺ ≥ 0 on the others:
  // w = W λ + q ≥ 0 ⊥ λ ≥ 0 with q = u + R min(u, 0).
  const Eigen::VectorXd q = u + problem.restitution * u.cwiseMin(0.0);
  const double speed = std::max(q.cwiseAbs().maxCoeff(), 1e-300);
  const double impulse = speed / std::max(W.diagonal().minCoeff(), 1e-300);
  LawReading r;
  r.status = Status::kLcpFailed;
  r.message = "no active set solves the LCP";
  r.velocity = problem.velocity;
  r.impulses = Eigen::VectorXd::Zero(m);
  for (unsigned mask = 0; mask < (1u << m); ++mask) {
    std::vector<int> active;
    for (int i = 0; i < m; ++i)
      if (mask & (1u << i)) active.push_back(i);
    Eigen::VectorXd lambda = Eigen::VectorXd::Zero(m);
    if (!active.empty()) {
      const int a = static_cast<int>(active.size());
      Eigen::MatrixXd Waa(a, a);
      Eigen::VectorXd qa(a);
      for (int i = 0; i < a; ++i) {
        qa[i] = q[active[static_cast<size_t>(i)]];
        for (int j = 0; j < a; ++j) Waa(i, j) = W(active[static_cast<size_t>(i)], active[static_cast<size_t>(j)]);
      }
      const Eigen::VectorXd la = Waa.completeOrthogonalDecomposition().solve(-qa);
      for (int i = 0; i < a; ++i) lambda[active[static_cast<size_t>(i)]] = la[i];
    }
    const Eigen::VectorXd w = W * lambda + q;
    bool ok = lambda.minCoeff() >= -kBaselineResidual * impulse && w.minCoeff() >= -kBaselineResidual * speed;
    for (const int i : active) ok = ok && std::abs(w[i]) <= kBaselineResidual * speed;
    if (!ok) continue;
    r.status = Status::kSuccess;
    r.message.clear();
    r.impulses = lambda;
    r.velocity = problem.velocity + Eigen::MatrixXd(problem.inverse_mass) *
                                        (Eigen::MatrixXd(problem.normals).transpose() * lambda);
    break;
  }
  return with_energies(problem, r);
}

std::vector<LawRun> all_laws(const LawOptions& options) {
  std::vector<LawRun> laws;
  laws.push_back({"simultaneous Newton", resolve_simultaneous_newton, nullptr});
  auto solver = std::make_shared<PropagativeSolver>();
  laws.push_back({"propagative", propagative_reading,
                  [solver](const ImpactProblem& problem) { solver->solve(problem); }});
  laws.push_back(variational_run(VariationalReading::kProjection));
  laws.push_back(variational_run(VariationalReading::kNearestOutcome));
  laws.push_back({"Pasquero",
                  [](const ImpactProblem& problem) { return single_outcome(problem, resolve_pasquero(problem)); },
                  [](const ImpactProblem& problem) { resolve_pasquero(problem); }});
  laws.push_back(routh_run(options));
  return laws;
}

}  // namespace simpact::demos
