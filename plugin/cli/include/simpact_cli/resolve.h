// simpact CLI — `simpact resolve`: one impact problem in, a law's outcome out.
//
// An input document is one JSON object: the problem keys every law reads
// (problem_keys()), "law" choosing an entry of laws() (default
// "propagative"), and the keys that law reads (Law::keys). Any other key is
// an error: one that another law reads is reported as "applies only to law
// ...", anything else as unknown, so a misspelt optional key ("restitutoin")
// cannot silently fall back to its default.
//
// Laws:
//   propagative     resolve()                    (propagative.h)
//   plastic         resolve_plastic()            (propagative.h): the same
//                   outcome as propagative with "restitution": 0, which
//                   stays accepted; this law only skips the elastic keys.
//   variational     resolve_variational()        (variational.h)
//   pasquero        resolve_pasquero()           (pasquero.h)
//   routh           RouthSampler                 (routh.h)
//   anitescu_potra  solve_anitescu_potra()       (frictional_reference.h)
//   sequential      resolve_sequential()         (frictional_reference.h)
// The last three are frictional: they read a FrictionalProblem
// (read_frictional_problem) and print frictional_result_to_json.
#pragma once

#include <simpact/frictional_problem.h>
#include <simpact/impact_problem.h>
#include <simpact/propagative.h>
#include <simpact/routh.h>
#include <simpact_cli/json_input.h>

#include <string>
#include <vector>

namespace simpact::cli {

/// The keys every law reads: "inverse_mass" | "mass" | "masses" (exactly
/// one), "normals", "velocity", and the optional "offsets".
const std::vector<std::string>& problem_keys();

/// The keys the frictional laws read besides problem_keys(): "tangents",
/// "friction", and the optional "tangent_offsets" and "cone_directions".
const std::vector<std::string>& frictional_problem_keys();

/// Reads the problem keys plus whichever of "restitution" and "toi" are
/// present (only the propagative law allows them). A "mass" is checked for
/// symmetry and inverted by Cholesky (it must be positive definite);
/// "masses" is a diagonal. Throws InputError naming the offending key.
/// Physical validity of the result (symmetric PSD inverse mass, non-zero
/// normals) is left to the core, whose InvalidProblem messages name the
/// field.
ImpactProblem read_problem(const Json& input);

/// Reads the problem keys and frictional_problem_keys(). Checks the shapes
/// ("tangents" has m or 2m rows of n entries, "friction" m entries,
/// "tangent_offsets" one per tangent row); the core validates the rest
/// (μ ≥ 0, non-zero tangent rows, the cone directions in range).
FrictionalProblem read_frictional_problem(const Json& input);

/// An impact law the resolve command can run.
struct Law {
  std::string name;               ///< value of the "law" key.
  std::vector<std::string> keys;  ///< keys it reads besides problem_keys().
  /// Reads its problem and its own keys from `input` (already checked
  /// against problem_keys() and `keys`) and returns the output document.
  Json (*run)(const Json& input);
};

/// Every law, the default first.
const std::vector<Law>& laws();

/// The output document of the propagative and plastic laws: "status",
/// "message" (unless success), "outcomes" [{velocity, impulses, sequence}],
/// "energy_before", "energy_after", "reflections", "reflection_cap" and,
/// when `enumerated` (OrderPolicy::kAll), "sequences_explored" and
/// "indeterminacy".
Json result_to_json(const ImpactResult& result, bool enumerated);

/// The output document of a frictional law: "status", "message" (unless
/// success), "outcomes" [{velocity, normal_impulses, tangential_impulses,
/// normal_velocities, tangential_velocities, energy_change, lcps,
/// terminated, trajectory (only when recorded)}].
Json frictional_result_to_json(const FrictionalResult& result);

/// The output document of a Routh outcome set (one outcome per sample,
/// column k of the set = sample k): as frictional_result_to_json without
/// "tangential_impulses" and "trajectory" (the set stores neither), with
/// "colliding" per outcome, and "step", "samples", "terminated_samples",
/// "lcps_per_sample" (mean).
Json routh_set_to_json(const RouthOutcomeSet& set);

/// The whole command on a parsed document. Throws InputError or
/// InvalidProblem.
Json resolve_json(const Json& input);

/// input["sampler"]: uniform | low_discrepancy (routh.h); an InputError
/// naming the choices otherwise. Shared by resolve and scene.
ImpulseSampler read_sampler(const Json& input);
/// input["increment_solver"]: automatic | lemke | box_pivoting (routh.h,
/// "LCP solvers"); an InputError naming the choices otherwise.
IncrementSolver read_increment_solver(const Json& input);
/// input["automatic_step"]: automatic | single_contact | simultaneous
/// (routh.h, "Automatic step"); an InputError naming the choices otherwise.
AutomaticStep read_automatic_step(const Json& input);

}  // namespace simpact::cli
