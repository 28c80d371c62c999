// libFuzzer target: the core laws on small impact problems decoded from the
// input bytes (simpact::resolve, resolve_plastic), checking what a law
// promises when it reports success (helper notes of issue #10, and
// propagative.h):
//   1. every velocity and impulse is finite, and every impulse is >= 0;
//   2. no contact approaches afterwards: u+ = J v+ + b >= 0;
//   3. no kinetic energy is gained (problems without offsets, where the
//      energy is the bodies' own; an offset is a moving partner's velocity,
//      whose work is not the bodies' energy).
// Each within the tolerances below. A law may also refuse, with any status
// other than success; invalid problems (a zero normal row, say) throw
// InvalidProblem, which is fine. Anything else escaping is a crash.
//
// The problems stay in the well-scaled region the laws are specified for:
// n <= 6 dofs, m <= 6 contacts, masses in [1e-2, 1e2], a PSD inverse mass
// (diagonal plus a rank-one coupling), entries of J, v and b of order 1-10.
#include <simpact/impact_problem.h>
#include <simpact/propagative.h>

#include <Eigen/Cholesky>
#include <fuzzer/FuzzedDataProvider.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace {

using simpact::ImpactProblem;
using simpact::ImpactResult;
using simpact::OrderPolicy;
using simpact::PropagativeParameters;

// The laws accept an approach of ~1e-10 × the problem's velocity scale
// (PropagativeParameters::approach_tolerance); the fuzzer checks a thousand
// times more loosely, so that it reports broken promises, not the laws'
// own rounding budget.
constexpr double kApproachTolerance = 1e-7;
// Energy: each reflection changes ½vᵀMv by ~1e-16 relative through
// rounding; even a cap's worth of reflections (~1e5 here) stays below 1e-10.
// The fuzzer allows 1e-8 relative.
constexpr double kEnergyTolerance = 1e-8;
// Impulses: a negative impulse beyond rounding (relative to the largest)
// would be a pull, not a push.
constexpr double kImpulseTolerance = 1e-9;

[[noreturn]] void broken(const char* promise, const ImpactResult& result) {
  std::fprintf(stderr, "broken promise: %s (status %s, %s)\n", promise,
               simpact::to_string(result.status), result.message.c_str());
  std::abort();
}

double in_range(FuzzedDataProvider& fuzz, double low, double high) {
  return low + (high - low) * fuzz.ConsumeProbability<double>();
}

// Often exactly 0, +1 or -1 (the degenerate and symmetric cases), else any
// value in [-scale, scale].
double entry(FuzzedDataProvider& fuzz, double scale) {
  switch (fuzz.ConsumeIntegralInRange<int>(0, 5)) {
    case 0:
    case 1:
      return 0.0;
    case 2:
      return 1.0;
    case 3:
      return -1.0;
    default:
      return in_range(fuzz, -scale, scale);
  }
}

void check(const ImpactProblem& problem, const ImpactResult& result, bool has_offsets) {
  if (result.status != simpact::Status::kSuccess) return;
  if (result.outcomes.empty()) broken("success has an outcome", result);
  const Eigen::MatrixXd inverse_mass(problem.inverse_mass);
  const Eigen::MatrixXd mass = inverse_mass.ldlt().solve(
      Eigen::MatrixXd::Identity(problem.dofs(), problem.dofs()));
  const Eigen::MatrixXd normals(problem.normals);
  const Eigen::VectorXd offsets =
      problem.offsets.size() > 0 ? problem.offsets : Eigen::VectorXd::Zero(problem.contacts());
  const Eigen::VectorXd u_before = normals * problem.velocity + offsets;
  // maxCoeff of an empty vector is undefined: m may be 0 (n is >= 1).
  const double contact_scale = u_before.size() > 0 ? u_before.cwiseAbs().maxCoeff() : 0.0;
  const double velocity_scale =
      std::max({contact_scale, problem.velocity.cwiseAbs().maxCoeff(), 1e-300});
  const double energy_before = 0.5 * problem.velocity.dot(mass * problem.velocity);
  for (const simpact::Outcome& outcome : result.outcomes) {
    if (!outcome.velocity.allFinite() || !outcome.impulses.allFinite()) {
      broken("finite velocities and impulses", result);
    }
    if (outcome.impulses.size() > 0 &&
        outcome.impulses.minCoeff() < -kImpulseTolerance * outcome.impulses.cwiseAbs().maxCoeff()) {
      broken("impulses >= 0", result);
    }
    const Eigen::VectorXd u_after = normals * outcome.velocity + offsets;
    if (u_after.size() > 0 && u_after.minCoeff() < -kApproachTolerance * velocity_scale) {
      broken("no contact approaches after success", result);
    }
    const double energy_after = 0.5 * outcome.velocity.dot(mass * outcome.velocity);
    if (!has_offsets && energy_after > energy_before * (1.0 + kEnergyTolerance)) {
      broken("no energy gained", result);
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  FuzzedDataProvider fuzz(data, size);
  const int n = fuzz.ConsumeIntegralInRange<int>(1, 6);
  const int m = fuzz.ConsumeIntegralInRange<int>(0, 6);
  Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Zero(n, n);
  double smallest_inverse = 1e300;
  for (int i = 0; i < n; ++i) {
    inverse_mass(i, i) = std::pow(10.0, in_range(fuzz, -2.0, 2.0));
    smallest_inverse = std::min(smallest_inverse, inverse_mass(i, i));
  }
  if (fuzz.ConsumeBool()) {  // a rank-one coupling keeps M⁻¹ PSD
    Eigen::VectorXd w(n);
    for (int i = 0; i < n; ++i) w[i] = entry(fuzz, 1.0);
    inverse_mass += in_range(fuzz, 0.0, smallest_inverse) * w * w.transpose();
  }
  Eigen::MatrixXd normals(m, n);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) normals(i, j) = entry(fuzz, 2.0);
  }
  Eigen::VectorXd velocity(n);
  for (int i = 0; i < n; ++i) velocity[i] = entry(fuzz, 10.0);
  ImpactProblem problem = ImpactProblem::from_dense(inverse_mass, normals, velocity);
  const bool has_offsets = fuzz.ConsumeBool();
  if (has_offsets) {
    problem.offsets.resize(m);
    for (int i = 0; i < m; ++i) problem.offsets[i] = entry(fuzz, 1.0);
  }
  switch (fuzz.ConsumeIntegralInRange<int>(0, 3)) {
    case 0: problem.restitution = 0.0; break;
    case 1: problem.restitution = 1.0; break;
    default: problem.restitution = fuzz.ConsumeProbability<double>(); break;
  }
  PropagativeParameters parameters;
  constexpr OrderPolicy kPolicies[] = {OrderPolicy::kMostNegative, OrderPolicy::kLeastNegative,
                                       OrderPolicy::kIndex, OrderPolicy::kRandom, OrderPolicy::kAll};
  parameters.policy = fuzz.PickValueInArray(kPolicies);
  parameters.seed = fuzz.ConsumeIntegral<std::uint64_t>();
  // Policy all explores every order; a small budget keeps each run fast.
  parameters.enumeration_budget = 2'000;
  const bool plastic = fuzz.ConsumeBool();
  try {
    const ImpactResult result = plastic ? simpact::resolve_plastic(problem, parameters)
                                        : simpact::resolve(problem, parameters);
    check(problem, result, has_offsets);
  } catch (const simpact::InvalidProblem&) {
    // A malformed problem (a zero normal row) is rejected: that is the promise.
  }
  return 0;
}
