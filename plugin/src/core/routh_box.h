// The Routh increment LCP (routh.h, Halm & Posa eq. (72)–(75)) solved as a
// box-constrained problem, for the cones where that is exact: d = 4
// directions in 3-D (±t1, ±t2) and the planar d = 2 (±t).
//
// ── Why the reformulation is exact ─────────────────────────────────────────
// With d = 4 the friction impulses of contact i, Λ = Σ_k λ_D,ik d_k with
// λ_D ≥ 0 and Σ_k λ_D,ik ≤ μ_i λ_n,i, fill the diamond |Λ₁| + |Λ₂| ≤ μλ_n,
// and eqs. (32)–(33) are the optimality conditions of maximum dissipation
// over it: Λ ∈ argmin_{Λ ∈ diamond} Λ·u_t′ (Stewart & Trinkle's polyhedral
// cone). The diamond is the square |Λ_a| ≤ μλ_n/√2, |Λ_b| ≤ μλ_n/√2 in the
// frame rotated by 45°, t_a = (t1 + t2)/√2, t_b = (t1 − t2)/√2, and over a
// square the minimum of Λ·u_t′ separates: Λ_a = −(μλ_n/√2) sign(u_a′) when
// u_a′ ≠ 0, any value in the interval when u_a′ = 0 (likewise b). With the
// capped normal of eqs. (73)–(74) (λ_n ∈ [0, λ_max], u_n′ ≥ 0 at 0, = 0
// inside, ≤ 0 at the cap), the increment is therefore the box LCP
//     x_i = (λ_n, Λ_a, Λ_b),  w = W x + q,  W = B M⁻¹ Bᵀ,  B_i = [J_n; J_a; J_b],
//     λ_n ∈ [0, λ_max,i],   Λ_a, Λ_b ∈ [−c_i, c_i],  c_i = μ_i λ_n,i / √2,
// with the complementarity of box_qp.h per variable. Planar: x_i = (λ_n, Λ_t),
// c_i = μ_i λ_n,i. Every solution maps back to a solution of eq. (75) with
// λ_D the two non-negative parts of (Λ₁, Λ₂) (Λ₁ = (Λ_a + Λ_b)/√2, Λ₂ =
// (Λ_a − Λ_b)/√2), γ_i = max(0, −min_k d_k·u_t′) and β_i = max(0, −u_n′) at
// the cap: that map is how every solution is checked (routh.cpp), with the
// same data-scaled residual as Lemke's. Variables: 3m instead of 7m, and no
// pairs of opposite direction columns (a source of degenerate pivots).
//
// ── How it is solved ────────────────────────────────────────────────────────
// The bounds c_i depend on the unknown λ_n,i. They are staggered (fixed
// bounds, then bounds from the result, repeated; D. M. Kaufman, S. Sueda,
// D. L. James and D. K. Pai, "Staggered projections for frictional contact
// in multibody systems", SIGGRAPH Asia 2008), each fixed-bound problem a
// convex box QP solved exactly by principal pivoting (box_qp.h), warm-
// started from the last. After every box solve its active set is solved
// exactly with the bounds TIED to the normals (a bounded Λ = ±c_i(λ_n,i): a
// nonsymmetric system of |clamped| unknowns, LU with partial pivoting); when
// that solution satisfies every condition the increment is solved. If the
// box solve kept its active set, the worst violator of the tied solution is
// moved to the state it asks for and the tied system solved again (a few
// single-variable active-set steps). Otherwise the bounds move for the next
// round: to the tied solution's normals after the first round and after any
// round that kept its active set (a Newton step of the piecewise-linear
// fixed point, at most kBoxNewtonSteps), else towards the last box solve's
// normals, by half as much each time a contact's move changes direction
// (plain staggering can alternate forever between two active sets on a
// contact whose friction lifts its own normal). The pivoting warm state
// carries over from one increment of a sample to the next (the caller
// resets it per sample, so sample k never depends on sample k − 1).
#pragma once

#include "core/box_qp.h"
#include "core/frictional_space.h"

#include <simpact/frictional_problem.h>

#include <Eigen/Core>

namespace simpact::internal {

/// A solution is accepted when every condition holds to this × the same
/// scales: ten times below the 1e-9 residual the caller then checks it
/// against (routh.cpp), and above the rounding of an exact solve of an
/// ill-conditioned active set (a pile's near-dependent contacts give
/// condition numbers ~1e5, i.e. errors ~1e-11 of the data).
inline constexpr double kBoxAcceptanceTolerance = 1e-10;

/// Staggered rounds per increment before the box solve gives up (the caller
/// then falls back to Lemke). Measured along Routh samples: 2–3 rounds on
/// landing columns of 24–32 contacts, 2–14 on pile clusters of 100–200
/// (docs/routh.md). All the rounds of one increment share one pivoting
/// budget, BoxQp's limit for a single solve (box_step_limit): per round, a
/// failing increment could pivot 30 times as long — on an uncapped 100-box
/// wall (2154 variables) one step took 266 s. Solved increments take far
/// fewer: 200–500 steps at 96 variables (limit 5300), ~1000–2000 per round
/// at ~600 (limit ~30 000).
inline constexpr int kBoxStaggeredRounds = 30;

/// Active-set steps after a staggered round whose box solve kept its active
/// set (after the others only the exact solve itself): the exact solve with
/// the bounds tied to the normals, then the worst violator moves to the
/// state it asks for (clamped outside its bound → at it; at a bound with w
/// of the wrong sign → clamped), and again. Near the solution a few
/// suffice; far from it the next round's pivoting does better.
inline constexpr int kBoxActiveSetSteps = 6;

/// Newton steps of the staggering per increment: after the first box solve
/// and after any that kept its active set, the bounds jump to that active
/// set's exact tied solution instead of creeping towards it. They can
/// alternate between two active sets too; after this many the relaxed
/// staggering goes on alone.
inline constexpr int kBoxNewtonSteps = 8;

/// The frictionless, inelastic simultaneous impact's normal impulses: the
/// solution of LCP(W_nn, u⁻_n), i.e. min ½ λᵀ W_nn λ + u⁻_nᵀ λ over λ ≥ 0
/// with W_nn = J_n M⁻¹ J_nᵀ, by box pivoting (a vertex of the solution set
/// when rows are dependent); inert contacts take none. The scale of Routh's
/// automatic step for kSimultaneous (routh.h, "Automatic step").
/// `velocity_scale` (rows of J̄) and `impulse_scale` set the decision
/// tolerances as RouthBoxIncrement::build's. False if the pivoting does not
/// finish (an infeasible LCP: no impulse stops every contact).
bool simultaneous_normal_impulses(const FrictionalProblem& problem, const FrictionalSpace& space,
                                  const Eigen::VectorXd& velocity_scale, double impulse_scale,
                                  Eigen::VectorXd& lambda);

class RouthBoxIncrement {
 public:
  /// The cones the reformulation covers: 3-D with d = 4, or planar (d = 2).
  static bool applicable(const FrictionalSpace& space);
  static bool applicable(int tangent_dimension, int directions);

  /// Builds the rotated contact rows B M^{1/2} (box_qp.h's A) for `problem`
  /// and its space; `velocity_scale` (rows of J̄) and `impulse_scale` (h)
  /// are the data scales of routh.cpp's residual check.
  void build(const FrictionalProblem& problem, const FrictionalSpace& space,
             const Eigen::VectorXd& velocity_scale, double impulse_scale);

  /// Forgets the warm state (start of a sample).
  void reset() {
    qp_.reset();
    warm_ = false;
  }
  /// True once a solve has left a warm state (false after reset()): a solve
  /// that failed from a cold start would fail the same way again.
  bool warm() const { return warm_; }

  /// Solves the increment LCP with right-hand side `q` in the layout of
  /// routh.h (q[0, m): caps λ_max; q[m, m + m(1+d)): the velocity rows
  /// ū (+ release shifts); the γ rows 0) and writes its solution `z` in the
  /// same layout [β; λ̄; γ]. False if the staggered rounds or the pivoting's
  /// step limit ran out; true does not yet mean the residual check passed.
  bool solve(const Eigen::VectorXd& q, Eigen::VectorXd& z);

  int rounds() const { return rounds_; }  ///< staggered rounds of the last solve
  int steps() const { return steps_; }    ///< pivoting steps of the last solve

 private:
  // From the pivoting's states, at most `steps` exact solves.
  bool refine_active_set(Eigen::VectorXd& x, Eigen::VectorXd& w, int steps);
  bool exact_active_set(Eigen::VectorXd& x) const;  // the tied system of states_
  // Every condition of the box LCP within `scale` × the decision tolerances.
  bool conditions_hold(const Eigen::VectorXd& x, const Eigen::VectorXd& w, double scale) const;
  void to_lcp(const Eigen::VectorXd& x, const Eigen::VectorXd& w, Eigen::VectorXd& z) const;

  const FrictionalSpace* space_ = nullptr;
  int m_ = 0, per_ = 0;          // contacts, variables per contact (3 or 2)
  double friction_factor_ = 1.0; // c_i = this × μ_i λ_n,i (1/√2 in 3-D, 1 planar)
  BoxQp qp_;
  std::vector<BoxQp::State> states_;  // the active set refine_active_set works on
  Eigen::VectorXd q_, lo_, hi_, cap_, wtol_, xtol_;
  Eigen::VectorXd bound_, relaxation_, last_move_;  // staggered friction bounds c_i
  Eigen::VectorXd tied_;  // exact tied solution of the last box solve's active set
  bool tied_valid_ = false;
  bool warm_ = false;
  int rounds_ = 0, steps_ = 0;
};

}  // namespace simpact::internal
