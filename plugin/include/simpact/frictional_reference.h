// simpact — reference frictional impact laws, for comparison with Routh
// sampling (routh.h): the simultaneous Anitescu–Potra LCP and sequential
// single-contact resolution (Halm & Posa, §2.2.2).
//
// Paper (README.md, "Papers"): Halm & Posa = Mathew Halm and Michael Posa,
// "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
// Impacts", arXiv:2103.15714.
//
// Symbols as in frictional_problem.h.
//
// ── Anitescu–Potra, inelastic (Halm & Posa, eq. (31), with (32)–(33)) ───────
// Find v⁺ = v + M⁻¹ J̄ᵀ λ̄ with, for every contact i,
//   0 ≤ λ_n,i ⊥ u_n,i⁺ ≥ 0                                   (31c)
//   0 ≤ λ_D,i ⊥ J_D,i v⁺ + b_D,i + 1 γ_i ≥ 0                 (32)
//   0 ≤ γ_i   ⊥ μ_i λ_n,i − 1ᵀ λ_D,i ≥ 0                     (33)
// All contacts at once; every solution dissipates energy. It can have
// several solutions (distinct v⁺), and with all_solutions we return each.
//
// How every solution is found (exhaustive, exact): per contact, a solution
// is in exactly one of these MODES (the cases of the complementarity):
//   separate   λ_n = 0, λ_D = 0, u_n⁺ ≥ 0;
//   stick      u_n⁺ = 0, u_t⁺ = 0, Λ_t in the polyhedral cone of μ λ_n;
//   slide k    u_n⁺ = 0, λ_D on direction k only, 1ᵀλ_D = μλ_n, and
//              −d_k·u_t⁺ = max_j (−d_j·u_t⁺) ≥ 0;
//   slide k,k+1 (3-D, d ≥ 3) as slide k with λ_D on the adjacent pair.
// For each combination of modes the equalities are linear in the active
// impulses; the inequalities on impulses are found feasible, or not, by a
// small convex QP (min ‖A x − c‖² + ε‖x‖² over the impulse cone, as a PSD
// LCP) — so statically indeterminate modes (more sticking rows than DOFs,
// e.g. the three-disk stack at rest) are handled, not skipped — and the
// velocity inequalities are checked on v⁺. (2 + 2d)^m combinations (4^m
// planar); beyond max_mode_combinations one solution is computed with
// Lemke on the LCP (31) instead and the status is kBudgetExhausted.
// Solutions are distinct when their contact velocities J̄ v⁺ differ by more
// than dedup_tolerance · S (S as in routh.h).
// The 2^(size) principal-subsystem enumeration of the authors' MATLAB
// (LCPSolver_Remy) misses solutions where a separating contact keeps
// sliding (its γ lies in a singular subsystem); the modes above do not.
//
// ── Sequential (Halm & Posa, §2.2.2, "Ivanov" style) ────────────────────────
// Cycle through `order` (default 0, 1, …, m−1); at each contact that
// collides, apply the single-contact Anitescu–Potra impact (which for one
// contact is Routh's inelastic impact when the contact ends sticking or
// keeps sliding one way); stop when no contact collides. A contact that does
// not collide is skipped (its single-contact LCP would give zero impulse).
// FALLBACK: after max_rounds passes without ending, Status
// kStepLimitReached and the last (still colliding) velocity, terminated =
// false.
#pragma once

#include <simpact/frictional_problem.h>

#include <cstdint>
#include <vector>

namespace simpact {

struct AnitescuPotraParameters {
  /// Return every distinct solution (mode enumeration); false = one
  /// solution by Lemke.
  bool all_solutions = true;
  /// Enumeration budget; (2 + 2d)^m above it → one Lemke solution.
  std::int64_t max_mode_combinations = std::int64_t{1} << 20;
  /// Dimensionless, relative to S. Lemke/QP solutions are accurate to
  /// ~1e-12 relative; 1e-7 merges copies of one solution reached through
  /// different (degenerate) modes and nothing physically distinct.
  double dedup_tolerance = 1e-7;
  /// Dimensionless, relative to S: how far a checked inequality may be
  /// violated (rounding of the mode solves, ~1e-13 relative).
  double feasibility_tolerance = 1e-9;
  bool validate_input = true;
};

FrictionalResult solve_anitescu_potra(const FrictionalProblem& problem,
                                      const AnitescuPotraParameters& parameters = {});

struct SequentialParameters {
  std::vector<int> order;  ///< contact indices, cycled; empty = 0 … m−1.
  int max_rounds = 100;    ///< passes through `order`.
  /// Dimensionless, relative to S, as RouthParameters::separation_tolerance
  /// but 100× looser: two coupled contacts can strike each other in turn
  /// forever (a geometric, Zeno-like series); each pass shrinks the
  /// approach, and once it is ~1e-8 of the slip speeds in the same
  /// single-contact LCP, that LCP's solution is rounding noise. 1e-7 ends
  /// the series before that, seven orders below the impact.
  double separation_tolerance = 1e-7;
  bool record_trajectory = false;
  bool validate_input = true;
};

FrictionalResult resolve_sequential(const FrictionalProblem& problem,
                                    const SequentialParameters& parameters = {});

}  // namespace simpact
