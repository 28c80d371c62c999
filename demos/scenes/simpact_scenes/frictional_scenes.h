// simpact scenes — the four planar worked examples of Halm & Posa (§5.4,
// Appendix A, Figs. 1, 4, 5, 9–14) as FrictionalProblems, shared by
// tests/core/routh_examples_test.cpp and demos/routh_examples.cpp.
//
// Paper (README.md, "Papers"): Halm & Posa = Mathew Halm and Michael Posa,
// "Set-Valued Rigid-Body Dynamics for Simultaneous, Inelastic, Frictional
// Impacts", arXiv:2103.15714.
//
// Every example is frozen at the instant of impact, in generalized
// coordinates, with the conventions of simpact/frictional_problem.h:
//   * row i of J_n is the gradient of contact i's gap φ_i(q) (φ_i > 0 apart),
//     so u_n = J_n v > 0 separates and u_n < 0 approaches;
//   * contact i is between a first body a (the ground, a wall, or the lower /
//     supporting body) and a second body b; n_i is the world unit normal from
//     a towards b, and the tangent is n_i turned clockwise by 90°,
//         t_i = (n_y, −n_x),
//     so (t_i, n_i) is a right-handed frame like (x, y): on the ground t = +x;
//   * J_t row i maps v to t_i · (ṗ_b − ṗ_a), ṗ the velocities of the two
//     material points that touch. For a point r (world offset from a body's
//     reference point) of a body turning at θ̇, ṗ = ẋ + θ̇ ẑ×r = ẋ + θ̇ (−r_y, r_x);
//     hence ∂(n·p)/∂θ = r × n and ∂(t·p)/∂θ = r × t (2-D cross product
//     a × b = a_x b_y − a_y b_x): ṗ·n = ẋ·n + θ̇ (r × n).
//   * planar: ONE tangent row per contact, the friction cone ±t (d = 2).
// M is built from the bodies' masses and inertias (or, for the compass gait,
// from the point masses' Jacobians) and inverted; `mass` keeps M itself for
// kinetic energies.
//
// Under a left–right mirror (the rocking block, the disk stack) mirrored
// contacts trade places and every tangential velocity changes sign: a
// reflection turns each right-handed (t, n) frame into a left-handed one.
//
// Deliberate differences from the authors' MATLAB (github.com/mshalm/
// routh-multi-impact, Results.m / Phone.m / FreeBodyDiagram.m):
//   * tangents: the MATLAB builds the friction row from the normal n as
//     [n_y, n_x]·J (FreeBodyDiagram.pointToContactJacobians). That is a unit
//     tangent only for axis-aligned normals (floor, wall); for the disk
//     stack's 60° disk–disk normals it is NOT orthogonal to n (n·[n_y, n_x] =
//     2 n_x n_y = √3/2). We use the true tangent (n_y, −n_x) everywhere, so
//     the disk stack's friction here is Coulomb friction in the contact plane
//     and its outcomes may differ from the paper's Fig. 14. For the floor
//     both agree (t = +x); for the box's wall (n = −x) the MATLAB tangent is
//     −y and ours +y (a sign convention only).
//   * rocking block: the MATLAB lists the bottom-left corner first (Box.m
//     vertex order). Fig. 1's caption says that after A's single impact the
//     block pivots COUNTER-clockwise, which a block pivoting about its
//     bottom-RIGHT corner does; we follow the caption: A = bottom-right.
//     The two choices are mirror images (same sets, A and B swapped).
//   * disk stack: the MATLAB orders the disks top, left, right; we use left,
//     right, top (q = [x1, y1, θ1, x2, y2, θ2, x3, y3, θ3]).
//   * compass gait: see compass_gait().
#pragma once

#include <simpact/frictional_problem.h>

#include <Eigen/Core>

#include <string>
#include <vector>

namespace simpact::scenes {

/// One sequential resolution to compare against (Halm & Posa, §2.2.2): contact
/// indices, cycled by resolve_sequential.
struct SequentialOrder {
  std::string name;  ///< e.g. "A,B" or "left first".
  std::vector<int> order;
};

/// One row of Halm & Posa, Table 3 (MacBook Pro, 2.4 GHz quad-core i5, MATLAB +
/// PATH), for comparison with our own cost.
struct PaperCost {
  double lcps_per_sample;
  double seconds_per_sample;
  double seconds_per_lcp;
};

/// A worked example of Halm & Posa with the sampling parameters of their
/// Appendix A.
struct FrictionalExample {
  std::string name;                                ///< identifier: "rocking_block", …
  std::string title;                               ///< for tables and plots (SVG: no '&', '<').
  FrictionalProblem problem;                       ///< M⁻¹, J_n, J_t, v⁻, μ.
  Eigen::MatrixXd mass;                            ///< M (n×n), for kinetic energies.
  double step = 0.0;                               ///< h [N·s] (Appendix A).
  int max_steps = 0;                               ///< N, increments per sample.
  int paper_samples = 0;                           ///< M, the paper's sample count.
  std::vector<std::string> contact_names;          ///< one per contact.
  std::vector<SequentialOrder> sequential_orders;  ///< the two compared orders.
  PaperCost paper;                                 ///< Halm & Posa, Table 3.
};

/// Rocking ("falling") block, Halm & Posa, Fig. 1, §5.4.1, Fig. 9, Table 4.
/// A 1 m wide × 2 m tall block, m = 1 kg, uniform density (I = m(w²+h²)/12
/// = 5/12), upright, lands flat on its two bottom corners at v0 = 0.4429 m/s
/// (√(2 g · 1 cm)) straight down; μ = 1, h = 0.3, N = 10, M = 2^14.
/// q = [x, y, θ] of the centre; contact A = bottom-right corner (r = (w/2,
/// −h/2) from the centre), B = bottom-left (r = (−w/2, −h/2)); ground normal
/// +y, tangent +x:
///   J_n = [0, 1, r_x],  J_t = [1, 0, −r_y]      (r × n = r_x, r × t = −r_y)
/// A: J_n = [0, 1, ½], J_t = [1, 0, 1];  B: J_n = [0, 1, −½], J_t = [1, 0, 1].
/// v⁻ = [0, −v0, 0]: u_n⁻ = (−v0, −v0), u_t⁻ = (0, 0).
/// Mirror x → −x: v ↦ diag(−1, 1, −1) v, A ↔ B.
FrictionalExample falling_block();

/// Box sliding into a wall, Halm & Posa, Fig. 5, §5.4.3, Fig. 11, Table 6.
/// Unit square, m = 1 kg, I = m w²/6 = 1/6, turned 10° clockwise (the
/// MATLAB sets θ = π/2 − 10°, the same square), sliding at 1 m/s along +x on
/// its lowest corner into a wall on its right whose normal is −x; μ = 1,
/// h = 2, N = 5, M = 2^18. q = [x, y, θ] of the centre. With c = cos 10°,
/// s = sin 10°, a = (c − s)/2 = 0.4056, b = (c + s)/2 = 0.5792:
///   A, floor corner r_A = (a, −b): normal +y, tangent +x,
///       J_n = [0, 1, a],   J_t = [1, 0, b];
///   B, wall corner r_B = (b, a): gap x_wall − x_B, normal −x, tangent +y,
///       J_n = [−1, 0, a],  J_t = [0, 1, b].
/// v⁻ = [1, 0, 0]: u_n⁻ = (0, −1) (A slides on the floor, B strikes the
/// wall), u_t⁻ = (1, 0). Both normal impulses turn the box counter-clockwise
/// (torque r × n = a > 0 for both), as Halm & Posa describe (§3.1): the wall
/// impact alone drives A into the floor, and the floor impact then lifts B off
/// the wall.
FrictionalExample box_wall();

/// Compass gait taking a wide step, Halm & Posa, Fig. 4, §3.1, §5.4.2, Fig. 10,
/// Table 5. q = [x, y, θ_lead, θ_trail]: pelvis position and the two leg
/// angles from the downward vertical (counter-clockwise positive); legs of
/// length l = 1, massless, a point mass m = 1 at each leg's midpoint (no
/// rotational inertia), pelvis massless. Feet p_i = pelvis + l (sin θ_i,
/// −cos θ_i); masses at half that offset. θ_lead = −78°, θ_trail = +78°,
/// both feet on the ground (pelvis at (−l sin 78°, l cos 78°), trailing foot
/// at the origin, leading foot at x = −2 l sin 78°: the walker walks towards
/// −x, as in the MATLAB). θ̇ = 0.25 rad/s for both legs and the pelvis moves
/// at (−l cos φ, −l sin φ) θ̇ (φ = 78°) so that the trailing foot is
/// stationary. μ = 5, h = 0.25, N = 5, M = 2^20.
/// Contact A = leading foot (it strikes), B = trailing foot; ground normal
/// +y, tangent +x:
///   J_n,i = [0, 1, l sin θ_i (column of θ_i)],
///   J_t,i = [1, 0, l cos θ_i (column of θ_i)].
/// u_n⁻ = (−2 l sin 78° θ̇, 0), u_t⁻ = (0, 0).
/// M = Σ_legs m P_iᵀ P_i with P_i = [[1, 0, ½ l cos θ_i], [0, 1, ½ l sin θ_i]]
/// (midpoint Jacobian): four point-mass velocity components for four DOFs,
/// so M is invertible; its Schur complement on the pelvis block is
/// m diag(2 sin²78°, 2 cos²78°), condition number ≈ 2e2, harmless.
/// Parameter note: Table 5 and one stored version of the MATLAB Results.m
/// (commit 660b216) use θ̇ = 2^-2 with h = θ̇ = 0.25, as here; another
/// (commit 062ba4f) has θ̇ = 2^-1 with h = 2 θ̇ = 1, a step twice as coarse
/// relative to the impact (the set scales with v⁻ and h together,
/// Lemma 11, so only h / |v⁻| matters).
FrictionalExample compass_gait();

/// Stack of three disks, Halm & Posa, §5.4.5, Fig. 14, Table 8. Disks R = 1 m,
/// m = 1 kg, I = ½ m R²; centres left (0, 1), right (2, 1), top (1, 1 + √3):
/// the bottom disks touch each other and the ground, the top disk touches
/// both; the top disk falls at 1 m/s. μ = √3 on all contacts, h = 1,
/// N = 10, M = 2^20. q = [x_l, y_l, θ_l, x_r, y_r, θ_r, x_t, y_t, θ_t].
/// Contacts (first body a → second body b, normal n from a to b):
///   0 top-left     left → top,   n = (½, √3/2)
///   1 top-right    right → top,  n = (−½, √3/2)
///   2 left-right   left → right, n = (1, 0)
///   3 left-ground  ground → left,  n = (0, 1)
///   4 right-ground ground → right, n = (0, 1)
/// Gap |c_b − c_a| − 2R (disk–disk) or y − R (ground): J_n has −n on a's
/// position, +n on b's, nothing on rotations. The material points are
/// r_a = R n from a's centre and r_b = −R n from b's, so
///   J_t = [−t (x_a, y_a), R (θ_a), +t (x_b, y_b), R (θ_b)]
/// (−r_a × t = −R n × t = R and r_b × t = −R n × t = R, as n × t = −1).
/// u_n⁻ = (−√3/2, −√3/2, 0, 0, 0), u_t⁻ = (½, −½, 0, 0, 0).
/// Mirror x → −x about x = 1: left ↔ right, diag(−1, 1, −1) on each disk,
/// contacts 0 ↔ 1, 3 ↔ 4, 2 ↔ 2. The two sequential orders ("left first":
/// 0, 3, 2, 1, 4, and its mirror image) never end by themselves: each
/// single impact makes another contact (mostly a ground contact) approach
/// again, the approach shrinking ~4× per pass, and resolve_sequential cuts
/// the series at its separation tolerance (50 single impacts at the default
/// 1e-7).
FrictionalExample disk_stack();

/// The four examples, in the order above.
std::vector<FrictionalExample> all_frictional_examples();

/// A stress case beyond Halm & Posa: a column of `boxes` (≥ 1) identical 3-D
/// boxes (half extents 0.5 × 0.25 × 0.5 m, 1 kg, y up), each resting flat on
/// the one below, the whole column falling at `speed` m/s onto the ground (so
/// only the four ground corners approach). Four corner contacts per
/// interface, ground first, then interface k between boxes k−1 and k;
/// normal +y, tangents −x and +z; μ = `friction` everywhere. q: six
/// velocity DOFs per box [v (world), ω (body = world axes)]. With 4·boxes
/// contacts on 6·boxes DOFs the contact rows are heavily redundant, and the
/// Routh increment LCP has 7·4·boxes variables (d = 4): what a pile of
/// boxes landing at once gives the sampler. Not one of the paper's examples,
/// so there is no paper reference: only the law's own residual checks apply.
simpact::FrictionalProblem falling_box_stack(int boxes, double speed = 0.44,
                                             double friction = 1.0);

/// Kinetic energy ½ vᵀ M v of the example's system.
double kinetic_energy(const FrictionalExample& example, const Eigen::VectorXd& velocity);

}  // namespace simpact::scenes
