// simpact — impact design (Seghete & Murphey 2014, §VII): measure how
// indeterminate a simultaneous strike is, and move a design or a stance until
// its outcome is unique.
//
// Paper (README.md, "Papers"): Seghete & Murphey 2014 = Vlad Seghete and
// Todd D. Murphey, "A propagative model of simultaneous impact: existence,
// uniqueness, and design consequences", IEEE Transactions on Automation
// Science and Engineering 11(1), 2014; arXiv:1709.02296.
//
// Symbols as in impact_problem.h. For contacts i, j of one configuration:
//   ⟨u_i, u_j⟩_g = J_i M⁻¹ J_jᵀ = W_ij         kinetic inner product of the
//                                              contact normals (eq. (5a))
//   c_ij = W_ij / √(W_ii W_jj)                 its cosine (scale-free)
//   ξ = max_{a,b} ‖p_a − p_b‖_g / ‖p⁻‖_g        indeterminacy over the elastic
//                                              outcomes of every reflection
//                                              order (§VII-A)
// Theorem 2: if c_ij = 0 for every pair, every order gives the same
// elastic outcome (ξ = 0). So a strike is designed to be predictable by
// driving every c_ij to 0 while its contacts stay closed.
//
// ── design_for_uniqueness ───────────────────────────────────────────────────
// A model maps design parameters x (link lengths, radii, joint angles: the
// caller chooses what x means) to the strike at x: M⁻¹(x) and the contact
// rows J(x) as an ImpactProblem, and equality constraints g(x) [m] to keep
// at 0: the contacts' gaps φ_i(x) (so the strike stays simultaneous) and
// whatever else the design must keep (a swing foot's clearance, say).
// From x₀, Levenberg–Marquardt (Eigen's unsupported module, MINPACK's
// algorithm, Jacobian by central differences) minimizes ‖r‖² with
//   r(x) = [ c_ij (i < j) ;  g_k / L ;  μ (x_f − a) / s ],
// x_f the free parameters, s their scales, L the length scale, a the anchor.
// Equations (pairs + constraints) are usually fewer than free parameters, so the
// roots form a manifold; the proximity block (small μ) picks the root near
// the anchor, as the paper's "root finding algorithm for underconstrained
// systems" does. Each round re-anchors at the previous result
// (continuation): the proximity term's pull on the root then shrinks by ~μ²
// per round, until every |c_ij| ≤ tolerance and |g_k| ≤ gap_tolerance.
//
// The model may throw at parameters outside its domain (an angle past its
// range, a negative length): during the search such a trial step is
// rejected; at x₀ the exception propagates.
//
// Deviations from the paper: we drive the cosines c_ij rather than ⟨u, v⟩_g
// itself (same zero set; the cosine does not depend on how each row of J is
// scaled, nor on the system's size), and report both.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace simpact {

/// The contact geometry and inertia of one strike.
struct StrikeAnalysis {
  Eigen::MatrixXd inner_products;  ///< W_ij = ⟨u_i, u_j⟩_g (m × m).
  Eigen::MatrixXd cosines;         ///< c_ij (ones on the diagonal).
  double max_abs_cosine = 0.0;     ///< max_{i<j} |c_ij|.
  /// ξ over every elastic reflection order (resolve with OrderPolicy::kAll),
  /// when the problem's velocity makes some contact approach; empty
  /// otherwise or when the exploration did not finish.
  std::optional<double> indeterminacy;
  int outcomes = 0;  ///< distinct elastic outcomes found (0 if not explored).
  /// ‖p_min − p_max‖_g / ‖p⁻‖_g between the elastic outcomes of the two
  /// extreme order policies, most_negative and least_negative (the paper's
  /// §VII-B runs its biped with argmin and argmax orders). Unlike ξ it is not
  /// thresholded by kAll's outcome merging (1e-9), so it shows how small
  /// the indeterminacy of a nearly orthogonal strike has become. Present
  /// when ξ is.
  std::optional<double> order_spread;
};

/// Analyses a strike (≥ 1 contact). Validates the problem; throws
/// InvalidProblem if a contact has W_ii = 0 (no impulse moves it).
StrikeAnalysis analyze_strike(const ImpactProblem& problem);

/// The strike at design parameters x: the impact problem (M⁻¹(x), J(x);
/// its velocity only matters for analyze_strike's ξ) and the constraints
/// g(x) [m] kept at 0 (any number; empty: the contacts are closed by
/// construction and nothing else is enforced).
struct DesignPoint {
  ImpactProblem problem;
  Eigen::VectorXd constraints;
};

using DesignModel = std::function<DesignPoint(const Eigen::VectorXd& parameters)>;

struct DesignParameters {
  /// Indices of the parameters the optimizer may change; empty = all.
  std::vector<int> free;
  /// Typical size of each parameter, in its own unit (empty = all 1): the
  /// proximity term measures changes in these units, and the finite
  /// differences step relative to them. Positive and finite.
  Eigen::VectorXd scales;
  /// L [m]: constraints enter the residual as g_k / L. Positive and finite.
  double length_scale = 1.0;
  /// μ, weight of the proximity term (dimensionless, > 0). Small enough
  /// that the first round already lands within ~μ² of a root's cosine.
  double proximity_weight = 1e-3;
  /// Target max_{i<j} |c_ij|. Central differences give the Jacobian to
  /// ~1e-10 relative, which lets Gauss–Newton steps reach ~1e-12; 1e-10
  /// is reached reliably, and ξ scales with |c| (Seghete & Murphey 2014,
  /// Fig. 5).
  double tolerance = 1e-10;
  /// Target |g_k| [m]: 1e-9 m, far below any geometric tolerance of a
  /// contact detector (Bullet's margins are ~1e-2 m).
  double gap_tolerance = 1e-9;
  int max_rounds = 10;           ///< continuation rounds (≥ 1).
  int max_evaluations = 20000;   ///< model evaluations in all (≥ 1).
};

struct DesignResult {
  bool converged = false;
  std::string message;              ///< what was reached, or why not.
  Eigen::VectorXd parameters;       ///< x at the end (x₀ if nothing better).
  StrikeAnalysis initial, final;    ///< at x₀ and at `parameters`.
  Eigen::VectorXd initial_constraints, final_constraints;
  int rounds = 0;
  int evaluations = 0;
};

/// Seeks design parameters near x₀ that make every pair of the strike's
/// contacts g-orthogonal and keep its contacts closed (see header). Throws
/// InvalidProblem for bad arguments or a model that returns an invalid
/// point (non-finite entries, a changing number of contacts or
/// constraints, fewer than 2 contacts); the message names the problem.
DesignResult design_for_uniqueness(const DesignModel& model, const Eigen::VectorXd& initial,
                                   const DesignParameters& parameters = {});

}  // namespace simpact
