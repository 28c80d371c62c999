// simpact — Pasquero's frame-independent, energy-preserving law for multiple
// impacts.
//
// Paper (README.md, "Papers"): Stefano Pasquero's kinetic-energy-preserving,
// frame-independent constitutive characterization of multiple impacts
// (running title "A frame-independent approach by means of jet-bundle
// geometry"; full title and venue not confirmed): §3, Lemma 3.1 and the
// algorithm of §3.2; §4's examples.
//
// Symbols as in impact_problem.h (n, m, v, M⁻¹, J, b, u = J v + b > 0
// separating, W = J M⁻¹ Jᵀ, λ) and the kinetic metric ⟨x, y⟩ = xᵀ M y.
//
// ── The law ──────────────────────────────────────────────────────────────────
// The single orthogonal velocity of contact l is the kinetic-metric
// projection of the (relative) left velocity onto the normal space of that
// constraint: v⊥_l = M⁻¹ J_lᵀ z_l with z_l = u_l / W_ll. The global one of a
// set B of contacts is v⊥_B = M⁻¹ J_Bᵀ W_BB⁺ u_B. The §3.2 algorithm:
//   Steps 3–5: B = the contacts whose u_l approaches (Step 4 ii: the left
//     velocity is incoming for them), with the named tolerance of
//     propagative.h (u_l/√W_ll < −approach_tolerance · S). B = ∅: stop.
//   Step 6 (|B| = 1): the elastic reflection λ_l += −2 u_l / W_ll.
//   Steps 7–9 (|B| > 1): the impulse Λ (Σ_{b∈B} v⊥_b), with Lemma 3.1's
//     eq. (12):
//         Λ = −2 ⟨v⊥_B, Σ v⊥_b⟩ / ⟨Σ v⊥_b, Σ v⊥_b⟩ = −2 (Σ_b u_b² / W_bb) / (zᵀ W_BB z),
//     since ⟨v⊥_B, v⊥_b⟩ = u_b z_b. In contact space λ_B += Λ z (Λ < 0 and
//     z_b < 0, so every increment is ≥ 0) and u ← u + W[:, B] Λ z.
//   Back to Step 3 (Remark 5: a contact excluded before may now approach).
// v⁺ = v⁻ + M⁻¹ Jᵀ λ. Every iteration keeps ½⟨v − h, v − h⟩ for every frame h
// in which the involved constraints are at rest (Remark 4): with b = 0 the
// kinetic energy is kept; the law reads only u = J v + b, so a moving
// constraint (b ≠ 0, a kinematic body) is handled in its own frame and the
// outcome does not depend on the observer's frame.
//
// The paper does not prove termination (Remark 6, §5). A run that exceeds
// max_iterations returns the plastic outcome (propagative.h,
// resolve_plastic) with status kReflectionCapReached, as the propagative
// law's cap does.
//
// Restitution: the law is elastic (the paper's); problem.restitution is not
// read. W is formed dense (m × m): the law is for the impact clusters of a
// simulation, not for the thousands of contacts propagative.h scales to.
#pragma once

#include <simpact/impact_problem.h>
#include <simpact/propagative.h>

#include <Eigen/Core>

#include <cstdint>
#include <string>
#include <vector>

namespace simpact {

struct PasqueroParameters {
  /// Iterations (Steps 3–9 passes) before the plastic fallback; 0 =
  /// automatic: 1000 + 100 m.
  std::int64_t max_iterations = 0;
  /// "Approaching", relative to S = max_j |u⁻_j|/√W_jj (as propagative.h).
  double approach_tolerance = 1e-10;
  /// Validate the problem first (throws InvalidProblem).
  bool validate_input = true;
  /// Residual accepted for the plastic LCP of the fallback at the iteration
  /// cap (PropagativeParameters::plastic_residual_tolerance: its meaning,
  /// its range [kMinPlasticResidualTolerance, kMaxPlasticResidualTolerance],
  /// and why the Bullet adapter sets 2⁻²⁴ in single precision).
  double plastic_residual_tolerance = 1e-9;
};

struct PasqueroResult {
  Status status = Status::kSuccess;
  std::string message;
  Eigen::VectorXd velocity;  ///< v⁺ (n)
  Eigen::VectorXd impulses;  ///< λ (m), ≥ 0
  /// The contacts each iteration involved (B of Steps 4–5), in order.
  std::vector<std::vector<int>> involved;
  /// Λ of each iteration (eq. (12); −2 for a single contact, Step 6).
  std::vector<double> coefficients;
  std::int64_t iterations = 0;
  double energy_before = 0.0;  ///< ½ v⁻ᵀ M v⁻ [J]
  double energy_after = 0.0;   ///< ½ v⁺ᵀ M v⁺ [J]
};

/// Resolves the impact by Pasquero's law (see above). Throws InvalidProblem
/// for a bad problem (validate_input) and std::invalid_argument for bad
/// parameters.
PasqueroResult resolve_pasquero(const ImpactProblem& problem, const PasqueroParameters& parameters = {});

}  // namespace simpact
