// Boundary checks shared by validate() and the laws; the laws pass their
// InertiaBlocks so the block analysis done for the definiteness check is
// reused for the kinetic energy.
#pragma once

#include "core/inertia.h"

#include <simpact/impact_problem.h>

namespace simpact::internal {

/// Throws InvalidProblem naming the first problem found; fills `inertia`.
void validate_problem(const ImpactProblem& problem, InertiaBlocks& inertia);

}  // namespace simpact::internal
