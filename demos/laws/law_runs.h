// Every impact law of simpact as one callable on the same frictionless
// ImpactProblem, for the side-by-side demo (compare_laws) and the core
// benchmark. Demo code: it links the core only, never the adapters.
//
// Laws (README.md, "Papers"; "Which law when"):
//   simultaneous Newton  the baseline a time-stepping engine solves at an
//                        impact: one LCP over all contacts at once with
//                        Newton's restitution on each, λ ≥ 0 ⊥ u⁺ + R·min(u⁻, 0) ≥ 0
//                        (Bullet's step converges to it). Not a simpact law.
//   propagative          Seghete & Murphey's minimal sequences (propagative.h),
//                        default order policy; its outcome set from kAll.
//   variational          Seghete & Murphey 2010's projection (variational.h),
//                        both readings.
//   Pasquero             the frame-independent law (pasquero.h).
//   Routh                Halm & Posa's set-valued law (routh.h), with μ = 0; it
//                        is inelastic (the paper's), so it ends the impact
//                        plastically whatever R.
#pragma once

#include <simpact/frictional_problem.h>
#include <simpact/impact_problem.h>
#include <simpact/propagative.h>

#include <Eigen/Core>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace simpact::demos {

/// One law's answer to one problem.
struct LawReading {
  Status status = Status::kSuccess;
  std::string message;
  Eigen::VectorXd velocity;  ///< v⁺ (n): the law's outcome (its first, for a set-valued law)
  Eigen::VectorXd impulses;  ///< λ (m)
  double energy_before = 0.0;  ///< ½ v⁻ᵀ M v⁻
  double energy_after = 0.0;   ///< ½ v⁺ᵀ M v⁺
  /// The spread of the law's outcome set, ξ = max_ij ‖p_i − p_j‖_g / ‖p⁻‖_g
  /// (Seghete & Murphey 2014, §VII-A; propagative.h): the propagative law's
  /// sequences, Routh's samples. Empty for a single-valued law.
  std::optional<double> spread;
  int outcomes = 1;  ///< distinct outcomes (sequences, samples) behind `spread`
  /// Every impulse vector of the outcome set behind `spread` (m ×
  /// outcomes), for plots; empty for a single-valued law.
  Eigen::MatrixXd set_impulses;
};

struct LawOptions {
  int routh_samples = 256;   ///< Routh outcome-set samples per problem
  std::uint64_t seed = 0;    ///< Routh's sample stream
};

struct LawRun {
  std::string name;  ///< short, for tables and legends
  /// The outcome, and the outcome set where the law has one.
  std::function<LawReading(const ImpactProblem&)> resolve;
  /// One impact as a simulation runs it (single outcome, no set), for
  /// timing; empty for the baseline (solved by brute force here).
  std::function<void(const ImpactProblem&)> impact;
};

/// The laws above, in the order of the tables.
std::vector<LawRun> all_laws(const LawOptions& options = {});

/// ½ vᵀ M v with M = (M⁻¹)⁻¹ (the demos' problems have finite masses).
double kinetic_energy(const ImpactProblem& problem, const Eigen::VectorXd& velocity);

/// ξ of a set of impulse vectors (columns): max_ij √(Δλᵀ W Δλ) / √(2 E⁻).
double set_spread(const ImpactProblem& problem, const Eigen::MatrixXd& impulses);

/// The frictionless problem as Routh's input: each contact gets its own
/// fictitious tangent DOF (unit mass, at rest, J_t = its unit row), so that
/// planar and 1-D problems alike have valid tangent rows; with μ = 0 no
/// tangent impulse acts, and the first n DOFs move exactly as the problem's.
FrictionalProblem frictionless_routh_problem(const ImpactProblem& problem);

/// Most contacts the baseline's brute-force LCP enumerates (2^m active sets).
inline constexpr int kMaxBaselineContacts = 16;

/// The simultaneous Newton baseline (see above), by active-set enumeration.
LawReading resolve_simultaneous_newton(const ImpactProblem& problem);

}  // namespace simpact::demos
