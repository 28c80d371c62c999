// simpact CLI — `simpact resolve`: one impact problem in, a law's outcome out.
//
// An input document is one JSON object: the problem keys (read_problem),
// "law" choosing an entry of laws() (default "propagative"), and the keys
// that law reads. Any other key is an error, so a misspelt optional key
// ("restitutoin") cannot silently fall back to its default.
#pragma once

#include <simpact/impact_problem.h>
#include <simpact/propagative.h>
#include <simpact_cli/json_input.h>

#include <string>
#include <vector>

namespace simpact::cli {

/// The keys every law reads: "inverse_mass" | "mass" | "masses" (exactly
/// one), "normals", "velocity", and the optional "offsets", "restitution",
/// "toi".
const std::vector<std::string>& problem_keys();

/// Reads the problem keys. A "mass" is checked for symmetry and inverted by
/// Cholesky (it must be positive definite); "masses" is a diagonal. Throws
/// InputError naming the offending key. Physical validity of the result
/// (symmetric PSD inverse mass, non-zero normals) is left to the core, whose
/// InvalidProblem messages name the field.
ImpactProblem read_problem(const Json& input);

/// An impact law the resolve command can run.
struct Law {
  std::string name;               ///< value of the "law" key.
  std::vector<std::string> keys;  ///< keys it reads besides problem_keys().
  /// Reads its own keys from `input` and returns the output document.
  Json (*run)(const Json& input, const ImpactProblem& problem);
};

/// Every law, the default first.
const std::vector<Law>& laws();

/// The output document for a result: "status", "message" (unless success),
/// "outcomes" [{velocity, impulses, sequence}], "energy_before",
/// "energy_after", "reflections", "reflection_cap" and, when `enumerated`
/// (OrderPolicy::kAll), "sequences_explored" and "indeterminacy".
Json result_to_json(const ImpactResult& result, bool enumerated);

/// The whole command on a parsed document. Throws InputError or
/// InvalidProblem.
Json resolve_json(const Json& input);

}  // namespace simpact::cli
