// simpact — uniqueness diagnostics for simultaneous impacts (Seghete &
// Murphey 2014, §IV–V).
//
// Paper (README.md, "Papers"): Seghete & Murphey 2014 = Vlad Seghete and
// Todd D. Murphey, "A propagative model of simultaneous impact: existence,
// uniqueness, and design consequences", IEEE Transactions on Automation
// Science and Engineering 11(1), 2014; arXiv:1709.02296.
//
// Symbols as in impact_problem.h. For contacts i, j the normalized kinetic
// inner product is
//     c_ij = ⟨Dφ_i, Dφ_j⟩_g / (‖Dφ_i‖_g ‖Dφ_j‖_g) = W_ij / √(W_ii W_jj),
// the cosine of the angle between the contact normals in the kinetic metric
// (eq. (5a)). It does not depend on how each row of J is scaled.
//
// Pair angle (Lemma 4): with r₀ = (u + v)/‖u + v‖_g for unit u, v,
//     γ = arcsin⟨r₀, u⟩_g = arcsin √((1 + c)/2)      (γ ∈ [0, π/2]),
// and Theorem 1 bounds a two-contact minimal sequence by ⌈π/γ⌉ reflections.
//
// Sufficient conditions for a unique elastic outcome (§V):
//   Theorem 2: all normals pairwise g-orthogonal (c_ij = 0): every order
//              gives the same outcome, each contact reflected once.
//   Theorem 3: two contacts with c = −1/2 (Newton's cradle with equal
//              masses): both three-stage sequences give the same outcome.
// When neither holds the outcome may depend on the order; resolve() with
// OrderPolicy::kAll returns every outcome and the indeterminacy ξ.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <cstdint>
#include <string>

namespace simpact {

/// |c_ij| (or |c + 1/2| for Theorem 3) below which a condition counts as met.
/// Normal covectors assembled from geometry carry rounding of ~1e-15; 1e-9
/// accepts that and nothing that would change an outcome visibly (the
/// indeterminacy ξ grows linearly with the deviation, Seghete & Murphey 2014,
/// Fig. 5).
inline constexpr double kUniquenessTolerance = 1e-9;

/// C = D^{-1/2} W D^{-1/2}, D = diag(W): the m×m matrix of c_ij (ones on the
/// diagonal). Throws InvalidProblem if a contact has W_ii = 0 (it cannot be
/// normalized: no impulse moves it). Validates the problem first.
Eigen::MatrixXd normalized_inner_products(const ImpactProblem& problem);

/// γ(c) = arcsin √((1 + c)/2) for c ∈ [−1, 1] (clamped). Throws
/// InvalidProblem for a non-finite c.
double pair_gamma(double c);

/// ⌈π/γ(c)⌉, Seghete & Murphey 2014, Theorem 1; kMaxReflectionCeiling
/// (propagative.h) when γ = 0 (opposite normals: no finite sequence exists).
std::int64_t pair_reflection_bound(double c);

struct UniquenessReport {
  Eigen::MatrixXd inner_products;  ///< c_ij.
  double max_abs_off_diagonal = 0.0;
  bool pairwise_orthogonal = false;  ///< Theorem 2 applies.
  bool three_stage = false;          ///< Theorem 3 applies (m == 2, c = −1/2).
  bool unique = false;               ///< either sufficient condition holds.
  std::string explanation;           ///< one sentence, for humans.
};

UniquenessReport analyze_uniqueness(const ImpactProblem& problem,
                                    double tolerance = kUniquenessTolerance);

}  // namespace simpact
