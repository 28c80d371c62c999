// A planar tailed biped in generalized coordinates, after Seghete & Murphey
// 2014, §VII-B (the "TREX" model, Fig. 6, Table I): the impact-design demo and
// tests.
//
// Paper (README.md, "Papers"): Seghete & Murphey 2014 = Vlad Seghete and
// Todd D. Murphey, "A propagative model of simultaneous impact: existence,
// uniqueness, and design consequences", IEEE Transactions on Automation
// Science and Engineering 11(1), 2014; arXiv:1709.02296.
//
// The paper gives the model's parts, densities and design parameters but not
// its full kinematics, so this is a TREX-LIKE model with our own geometry:
//   * anterior body: a sphere of radius r1 (density 1 g/cm³), centre (x, y),
//     pitch θ; the hips are at its centre;
//   * posterior body: a sphere of radius r2 (same density) behind it, centre
//     c1 + (r1 + r2) e(θ + φT + π), turned by the body joint φT;
//   * tail: a rod rigidly attached to the posterior body, continuing the
//     same axis from its surface, length L_tail(r1, r2) of the paper (the
//     tapering rule below);
//   * legs L and R: thigh from the hip at absolute angle θ + φ, length l_u;
//     shank at θ + φ + γ (γ the knee), length l_l; rods of carbon fibre
//     (2 g/cm³) with a 1.25 cm² section; point feet at the shank ends;
//   * e(α) = (cos α, sin α); all angles counter-clockwise, y up, ground at
//     y = 0. A rod's moment of inertia is m l² / 12, a sphere's 2 m r² / 5.
// q = [x, y, θ, φL, γL, φR, γR, φT] (SI: m, rad), as the paper's q. The knee
// and body joints are spring–dampers in the paper: they carry no impulse, so at
// an impact all eight coordinates are free (the metric is the full M(q)).
// Tapering rule (§VII-B):
//   L_tail = (r1³ + r1² r2 + √2 √(r1⁴ r2² + r1³ r2³)) / (r1² − r2²) − (r1 + r2).
#pragma once

#include <simpact/design.h>
#include <simpact/impact_problem.h>

#include <Eigen/Core>

namespace simpact::scenes {

struct TrexDesign {
  double r1 = 0.07;    ///< anterior body radius [m] (Table I, initial: 7 cm)
  double r2 = 0.04;    ///< posterior body radius [m] (4 cm)
  double thigh = 0.08; ///< l_u [m] (8 cm)
  double shank = 0.10; ///< l_l [m] (10 cm)
};

/// L_tail of Seghete & Murphey 2014, §VII-B [m]; throws std::invalid_argument
/// unless r1 > r2 > 0.
double trex_tail_length(const TrexDesign& design);

/// Mass matrix M(q) (8 × 8) [kg, kg·m, kg·m²].
Eigen::MatrixXd trex_mass_matrix(const Eigen::VectorXd& q, const TrexDesign& design);

/// World positions of the feet and of the tail tip [m].
Eigen::Vector2d trex_left_foot(const Eigen::VectorXd& q, const TrexDesign& design);
Eigen::Vector2d trex_right_foot(const Eigen::VectorXd& q, const TrexDesign& design);
Eigen::Vector2d trex_tail_tip(const Eigen::VectorXd& q, const TrexDesign& design);

/// The double strike of the right foot (contact 0) and the tail tip
/// (contact 1) on the ground: rows ∂y_point/∂q (so J q̇ > 0 separates),
/// M⁻¹(q), and the velocity q̇. Constraints: the two heights (the gaps).
DesignPoint trex_double_strike(const Eigen::VectorXd& q, const TrexDesign& design,
                               const Eigen::VectorXd& velocity);

/// The unoptimized stance of the demo: the design of Seghete & Murphey 2014,
/// Table I (r1 = 7, r2 = 4, l_u = 8, l_l = 10 cm) with a hand-chosen stance in
/// our geometry (body pitched 0.3 rad nose-up, right leg forward, left leg back
/// with its foot 1.5 cm off the ground, knees bent), its height y and body
/// joint φT solved so that the right foot and the tail tip both touch the
/// ground.
Eigen::VectorXd trex_initial_stance(const TrexDesign& design = {});

/// Free fall onto the ground from 17 cm (Seghete & Murphey 2014, §VII-B),
/// joints locked: q̇ = (0, −√(2 g · 0.17), 0, …).
Eigen::VectorXd trex_drop_velocity();

}  // namespace simpact::scenes
