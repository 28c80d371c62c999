// Boundary checks shared by validate() and the laws; the laws pass their
// InertiaBlocks so the block analysis done for the definiteness check is
// reused for the kinetic energy.
#pragma once

#include "core/inertia.h"

#include <simpact/impact_problem.h>

#include <sstream>

namespace simpact::internal {

/// Throws InvalidProblem with the parts streamed at full precision, e.g.
/// fail_invalid("friction entry ", i, " is ", mu, ": mu must be >= 0").
template <typename... Parts>
[[noreturn]] void fail_invalid(const Parts&... parts) {
  std::ostringstream os;
  os.precision(17);
  (os << ... << parts);
  throw InvalidProblem(os.str());
}

/// Throws InvalidProblem naming the first problem found; fills `inertia`.
void validate_problem(const ImpactProblem& problem, InertiaBlocks& inertia);

}  // namespace simpact::internal
