// simpact — variational projection law for simultaneous elastic impacts
// (Seghete & Murphey 2010).
//
// Paper (README.md, "Papers"): Vlad Seghete and Todd Murphey, "Variational
// Solutions to Simultaneous Collisions Between Multiple Rigid Bodies", IEEE
// ICRA 2010, §III-A (the five-step algorithm) and §III-B (the branching).
//
// Symbols as in impact_problem.h (n, m, v, M⁻¹, J, b, u = J v + b, W = J M⁻¹ Jᵀ,
// λ) and propagative.h.
//
// ── The law (§III-A) ─────────────────────────────────────────────────────────
//  1. The trivial solution: λ = 0, v = v⁻.
//  2–3. Every elastic outcome of the single-impact sequences: the branching
//     of §III-B, i.e. propagative.h's OrderPolicy::kAll with R = 1. Call the
//     distinct ones v_k = v⁻ + M⁻¹Jᵀλ_k, k = 1 … p (λ_k ≥ 0).
//  4. The feasible set: their convex hull, intersected with "the change in
//     momentum restricted to the normal cone", M(v − v⁻) = Jᵀλ with λ ≥ 0.
//     Every point of the hull, Σ w_k v_k with w on the simplex, changes the
//     momentum by Jᵀ(Σ w_k λ_k) with Σ w_k λ_k ≥ 0: the intersection is the
//     hull itself.
//  5. Project v⁻ onto it in the kinetic metric:
//         w* = argmin ‖Σ w_k v_k − v⁻‖_M  over w ≥ 0, Σ w_k = 1,
//         v⁺ = Σ w*_k v_k,   λ = Σ w*_k λ_k.
//     With Δ_k = v_k − v⁻ = M⁻¹Jᵀλ_k, ‖Σ w_k Δ_k‖²_M = (Λw)ᵀ W (Λw), Λ = [λ_1 …
//     λ_p]: a quadratic program on the simplex with the p × p Gram matrix
//     Q = Λᵀ W Λ, solved exactly by Wolfe's minimum-norm-point algorithm
//     (P. Wolfe, "Finding the nearest point in a polytope", Mathematical
//     Programming 11, 1976), which needs only Q.
// The projection lands on a vertex (one sequence's outcome, energy kept)
// or inside the hull, which loses energy: VariationalResult says which and
// how much.
//
// ── Where the paper's text and its definitions disagree ─────────────────────
// §III-B.3 (two balls of masses 1.1 and 1 against a wall) says the projection
// "invariably" lands on one of the two sequence outcomes v_4a, v_4b. With
// the hull of step 4 it does not: v⁻ is M-equidistant from both (the two
// sequences are mirror images, ‖v_4a − v⁻‖_M = ‖v_4b − v⁻‖_M), so the nearest
// point of the segment between them is its midpoint, which dissipates
// energy. This law follows the five-step definition (VariationalReading::
// kProjection, the default); the energy-preserving reading of the text —
// the nearest sequence outcome, ties to the lower index — is the separate
// option VariationalReading::kNearestOutcome. (The text's set V also uses
// a, b ∈ ℝ₊, a cone rather than a hull; the cone contains −v⁻'s direction
// scaled freely and would not bound the energy: the hull is the definition.)
// tests/core/variational_test.cpp checks the midpoint and its energy loss
// against an independent computation.
//
// Restitution: the law is elastic (the paper's, R = 1); problem.restitution
// is not read.
#pragma once

#include <simpact/impact_problem.h>
#include <simpact/propagative.h>

#include <Eigen/Core>

#include <cstdint>
#include <string>

namespace simpact {

/// Which point of the feasible set the law returns.
enum class VariationalReading {
  kProjection,      ///< §III-A step 5: the kinetic-metric projection of v⁻ (default)
  kNearestOutcome,  ///< §III-B.3's text: the nearest sequence outcome (energy kept)
};

/// "projection", "nearest_outcome".
const char* to_string(VariationalReading reading);

struct VariationalParameters {
  VariationalReading reading = VariationalReading::kProjection;
  /// Reflection cap per sequence; 0 = automatic (propagative.h).
  std::int64_t max_reflections = 0;
  /// Total reflections over all enumerated sequences (propagative.h, kAll).
  std::int64_t enumeration_budget = 1'000'000;
  /// Two sequence outcomes are one vertex when their impulses differ by at
  /// most this × the largest impulse g-norm (propagative.h, kAll).
  double dedup_tolerance = 1e-9;
  /// Most distinct sequence outcomes (hull vertices) the projection takes:
  /// its Gram matrix is p × p dense. Beyond it the result has status
  /// kBudgetExhausted, the velocity unchanged and zero impulses. 1000 is a
  /// Gram matrix of 8 MB; a simulation's impacts have a handful.
  int max_vertices = 1000;
  /// Validate the problem first (throws InvalidProblem).
  bool validate_input = true;
  /// Residual accepted for the plastic LCP of an enumerated sequence that
  /// reaches its reflection cap and falls back to the plastic outcome
  /// (PropagativeParameters::plastic_residual_tolerance: its meaning, its
  /// range, and why the Bullet adapter sets 2⁻²⁴ in single precision).
  double plastic_residual_tolerance = 1e-9;
};

struct VariationalResult {
  Status status = Status::kSuccess;
  std::string message;        ///< why, when status != kSuccess
  Eigen::VectorXd velocity;   ///< v⁺ (n)
  Eigen::VectorXd impulses;   ///< λ = Σ w_k λ_k (m), ≥ 0
  /// The hull's vertices: the distinct sequence outcomes v_k (n × p) and
  /// their impulses λ_k (m × p).
  Eigen::MatrixXd vertices;
  Eigen::MatrixXd vertex_impulses;
  Eigen::VectorXd weights;    ///< w* (p), w ≥ 0, Σ w = 1
  /// The result is one vertex (a single sequence's outcome): one weight is
  /// 1 within kVariationalWeightTolerance.
  bool on_vertex = false;
  double energy_before = 0.0;  ///< ½ v⁻ᵀ M v⁻ [J]
  double energy_after = 0.0;   ///< ½ v⁺ᵀ M v⁺ [J]
  double energy_loss = 0.0;    ///< energy_before − energy_after ≥ 0 (up to rounding)
  std::int64_t sequences_explored = 0;  ///< complete sequences the enumeration found
};

/// A weight within this of 1 makes the result a vertex (on_vertex), and the
/// minimum-norm-point iteration treats affine weights below it as zero.
/// Wolfe's algorithm solves p × p systems of the Gram matrix Q, whose entries
/// carry the enumeration's rounding (~1e-15 relative); 1e-9 is far above
/// that and far below any weight that moves the outcome visibly.
inline constexpr double kVariationalWeightTolerance = 1e-9;

/// Most entries p · max(n, m) of the vertex matrices a result holds (80 MB):
/// beyond it, as beyond max_vertices, the result is kBudgetExhausted.
inline constexpr std::int64_t kVariationalMaxVertexEntries = 10'000'000;

/// Resolves the impact by the variational projection (see above). The
/// enumeration is propagative.h's kAll at R = 1: status kBudgetExhausted or
/// kReflectionCapReached from it is passed on (the hull is then built from
/// the outcomes found, or the plastic fallback the enumeration returns).
/// Throws InvalidProblem for a bad problem (validate_input) and
/// std::invalid_argument for bad parameters.
VariationalResult resolve_variational(const ImpactProblem& problem, const VariationalParameters& parameters = {});

namespace internal {
/// Wolfe's minimum-norm point of the convex hull of p points given by their
/// Gram matrix Q (p × p, symmetric PSD): the weights w ≥ 0, Σ w = 1 that
/// minimize wᵀQw. Exact up to rounding; `tolerance` as
/// kVariationalWeightTolerance, relative to max Q_kk.
Eigen::VectorXd min_norm_point_weights(const Eigen::MatrixXd& Q, double tolerance);
}  // namespace internal

}  // namespace simpact
