// simpact scenes — ImpactProblems shared by tests, demos and benchmarks.
//
// Every scene is a frozen configuration at the instant of impact, in the
// conventions of simpact/impact_problem.h: row i of J is the gradient of
// contact i's gap function, so u = J v > 0 separates and u < 0 approaches.
// Functions throw std::invalid_argument on arguments that describe no scene
// (fewer than two balls, a non-positive mass, ...).
//
// Papers (README.md, "Papers"):
//   Seghete & Murphey 2010: Vlad Seghete and Todd Murphey, "Variational
//     Solutions to Simultaneous Collisions Between Multiple Rigid Bodies",
//     IEEE ICRA 2010.
//   Seghete & Murphey 2014: Vlad Seghete and Todd D. Murphey, "A propagative
//     model of simultaneous impact: existence, uniqueness, and design
//     consequences", IEEE Transactions on Automation Science and Engineering
//     11(1), 2014; arXiv:1709.02296.
#pragma once

#include <simpact/impact_problem.h>

#include <Eigen/Core>

#include <cstdint>

namespace simpact::scenes {

/// Newton's cradle: `balls` balls on a line, each touching the next; q is the
/// position of every ball along the line. The first `incoming` balls move at
/// +speed towards the others, the rest are at rest. Contact i (0-based) is
/// between balls i and i+1, with row J_i = [.., −1 (ball i), +1 (ball i+1), ..]
/// (the gap x_{i+1} − x_i − r_i − r_{i+1}). `masses` is empty (all 1) or has
/// one positive entry per ball. Matrices are assembled sparse, so thousands of
/// balls are cheap.
ImpactProblem newtons_cradle(int balls, int incoming, double speed,
                             const Eigen::VectorXd& masses = Eigen::VectorXd());

/// A chain of `balls` equal unit masses struck by its first ball at +speed:
/// the one-incoming cradle, used by the N = 3..1000 benchmarks.
ImpactProblem ball_chain(int balls, double speed);

/// A ball pit at the instant of an impact: per_side × per_side × layers
/// balls of radius 0.1 m and mass 0.2 kg, each touching its lattice
/// neighbours, in a box (static floor and four walls, every touching ball
/// in contact with them), q = the balls' positions (3 per ball, frictionless
/// spheres need no rotation). Centres are the simple cubic lattice of
/// spacing 0.2 m moved by up to `position_noise` [m] each (uniform per
/// coordinate), so contact normals (from centre to centre) are off the axes
/// and the rows are dependent only nearly: the hard case for a plastic
/// solve. Velocity: −sink [m/s] along y (the mid-step share of gravity a
/// resting pit's contacts approach at) plus `jitter` × a standard normal
/// per coordinate. Contacts: ball–ball pairs (+x, +y, +z neighbours, normal
/// from the lower to the upper index's centre), then the floor (+y) and the
/// walls (±x, ±z). Deterministic in `seed`.
ImpactProblem ball_pit(int per_side, int layers, double sink, double jitter, double position_noise,
                       std::uint64_t seed);

/// Two balls on a line against a wall (Seghete & Murphey 2010, §II-C.1 and
/// §III-B), q = [x1, x2], wall on the −x side of ball 1. Contact 0 (wall–ball
/// 1): u = [1, 0]; contact 1 (ball 1–ball 2): v = [−1, 1]. A velocity towards
/// the wall is negative. M⁻¹ = diag(1/masses).
ImpactProblem two_balls_wall(const Eigen::Vector2d& masses, const Eigen::Vector2d& velocity);

/// Billiard break of Seghete & Murphey 2014, §VII-A (Fig. 4): planar
/// q = [xa, ya, xb, yb, xc, yc], cue ball c at the origin touching a and b;
/// the angle between the centre lines c→a and c→b is `theta`, their bisector
/// is +x and c moves along it at `speed`; a and b are at rest. Contact 0 is
/// a–c, contact 1 is b–c, each row the gradient of
/// φ = |q_a − q_c| − (r_a + r_c) (unit Euclidean length), so J v > 0
/// separates. (The paper prints the negated rows; the sign does not change
/// any inner product.) M⁻¹ = diag(1/ma, 1/ma, 1/mb, 1/mb, 1/mc, 1/mc).
ImpactProblem billiard_break(double theta, double ra, double rb, double rc, double ma, double mb,
                             double mc, double speed);

/// Pasquero §4 Example 2, the split shot ("Split n.1"): three equal planar
/// disks of radius `radius` and unit mass, q = [x1, y1, x2, y2, x3, y3]
/// (disk i = the paper's disk i+1). Disks 2 and 3 rest, touching, at
/// (−R, √3 R) and (R, √3 R) from the cue disk 1 at the origin, which moves
/// at speed·(μ, 1) (the paper's p_L = v0 (μ ∂x1 + ∂y1)) and touches both.
/// Contacts: 0 = (1,2), 1 = (1,3), 2 = (2,3); each row the unit gradient of
/// the centre distance, so J v > 0 separates. For −√3 < μ < √3 the cue
/// disk approaches both 2 and 3.
ImpactProblem split_shot(double mu, double radius, double speed);

/// Pasquero §4 Example 3 ("Split n.2"): four equal planar disks of radius
/// `radius` and unit mass, q = [x0, y0, …, x3, y3]. Disks 1, 2, 3 rest in a
/// touching triangle: 1 at the origin, 2 at (−R, √3 R), 3 at (R, √3 R). The
/// cue disk 0 moves at `speed` along +y (orthogonal to the line 2–3) and
/// touches 1 with its centre at −2R (sin φ, cos φ): φ is the angle between
/// its velocity and the centre line 0→1. Contacts: 0 = (0,1), 1 = (1,2),
/// 2 = (1,3), 3 = (2,3) (the paper's cont(π(p_L))). |φ| < π/2 is required
/// (the cue disk approaches 1).
ImpactProblem break_shot(double phi, double radius, double speed);

/// Smallest theta of billiard_break at which a and b still do not overlap
/// (they touch): law of cosines with sides r_a + r_c, r_b + r_c, r_a + r_b.
/// π/3 for equal radii.
double billiard_min_angle(double ra, double rb, double rc);

}  // namespace simpact::scenes
