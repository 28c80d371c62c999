// simpact scenes — Bullet scenes built on a BulletWorld, shared by the demos,
// the Bullet scenario tests and the benchmarks.
//
// Common conventions of every builder:
//  - y is up; a ground or table is the static plane y = 0.
//  - Restitution: the builder sets the world's restitution combiner to
//    kMinimum, gives every body the scene's restitution r and the ground 1,
//    so every contact (ball–ball as well as ball–ground) has exactly r.
//    Bullet's default product would give two balls r².
//  - Gravity: the builder sets the world's gravity: zero for scenes "free on
//    a line", (0, −kStandardGravity, 0) otherwise.
//  - Free on a line: bodies move along x only (linear factor (1, 0, 0),
//    angular factor 0), like the 3-ball system of Seghete & Murphey 2014,
//    Fig. 2a (Vlad Seghete and Todd D. Murphey, "A propagative model of
//    simultaneous impact: existence, uniqueness, and design consequences",
//    IEEE Transactions on Automation Science and Engineering 11(1), 2014;
//    arXiv:1709.02296; README.md, "Papers").
//  - Bodies in scenes whose speeds may be slow never sleep (Bullet would
//    freeze a body below 0.8 m/s after 2 s).
// Builders throw std::invalid_argument for arguments that describe no scene.
#pragma once

#include "simpact_worlds/bullet_world.h"

#include <vector>

namespace simpact::scenes {

// The worlds these scenes are built in (simpact::worlds, plugin/cli/worlds).
using namespace simpact::worlds;

/// What a builder made. `bodies` are the dynamic bodies, in the order each
/// builder documents.
struct Scene {
  std::vector<btRigidBody*> bodies;
  btRigidBody* ground = nullptr;  ///< the static plane (box_drop: a static slab), when the scene has one
  btRigidBody* paddle = nullptr;  ///< the kinematic body of kinematic_paddle
  /// When the first impact happens, if the builder knows: 0 for touching
  /// bodies (the impact is in the first step) [s].
  double strike_time = 0.0;
};

struct CradleOptions {
  int balls = 3;     ///< 3 or 5 for the demo; any number ≥ 2 works
  int incoming = 1;  ///< the first `incoming` balls move at `speed` along `axis`; < balls
  double speed = 1.0;        ///< [m/s] > 0
  double restitution = 1.0;  ///< in [0, 1]
  double radius = 0.05;      ///< [m]
  double mass = 1.0;         ///< [kg], every ball
  /// Distance between the last incoming ball and the first resting one [m];
  /// 0 = exactly touching. Balls within each group always touch.
  double gap = 0.0;
  /// true: each ball hangs from a fixed pivot `string_length` above it on a
  /// point-to-point joint, gravity on; its initial angular velocity is the
  /// swing's ((speed / string_length) axis × ŷ). false: free on the line,
  /// gravity off, no turning; held to the line by Bullet's linear factor
  /// when the line is a coordinate axis, by the central impacts otherwise.
  bool strings = true;
  double string_length = 1.0;  ///< [m]
  /// The line of the balls, from ball 0 (unit length within
  /// kAxisNormTolerance; horizontal, y = 0, with strings). +x by default.
  /// Along a coordinate axis every ball shares its bounds on the two other
  /// axes with all the others, and Bullet's sweep-and-prune adds and removes
  /// each ball past all of them: O(N²) to build and to destroy (minutes at
  /// 10⁵ balls; stepping is linear). A line along no coordinate axis, such
  /// as kDiagonal, keeps building linear too.
  Eigen::Vector3d axis = Eigen::Vector3d::UnitX();
};

/// (1, 1, 1)/√3: a line along none of the coordinate axes.
inline const Eigen::Vector3d kDiagonal = Eigen::Vector3d::Ones().normalized();
/// |‖axis‖ − 1| allowed of CradleOptions::axis: a few ulps of a normalised
/// vector, far below any error the placement would notice.
inline constexpr double kAxisNormTolerance = 1e-12;

/// Newton's cradle along `axis` (+x by default), ball 0 at the origin.
/// Bodies: the balls in order along the axis. strike_time = gap / speed (exact for free balls, first
/// order on strings). Frictionless.
Scene newtons_cradle(BulletWorld& world, const CradleOptions& options);

/// A touching chain of `balls` free balls on a line struck at one end: the
/// free, single-incoming cradle (radius 0.05 m, 1 kg) along `axis`.
Scene ball_chain(BulletWorld& world, int balls = 100, double speed = 1.0,
                 double restitution = 1.0,
                 const Eigen::Vector3d& axis = Eigen::Vector3d::UnitX());

/// A chain of `links` free balls (radius 0.05 m, 1 kg) along +x, each held
/// to the next by a ball joint at their touching point (collisions between
/// linked balls off), struck end-on by a free ball of the same kind that
/// touches the first link at `speed`; no gravity. The joints make the chain
/// one rigid rod along x, so an impact of restitution R is a two-body
/// impact: the striker leaves at (1 − R N)/(1 + N)·speed and every link at
/// (1 + R)/(1 + N)·speed. Bodies: {striker, links in order along x}.
Scene joint_chain(BulletWorld& world, int links, double speed = 1.0, double restitution = 1.0);

/// A ball (radius 0.1 m, 1 kg) whose bottom is `height` above the ground,
/// at rest, under gravity. Bodies: {ball}. strike_time = √(2 height / g).
Scene ball_drop(BulletWorld& world, double height, double restitution);

/// Two free balls on a line (radius 0.05 m), touching, left at the origin:
/// masses m1, m2 and velocities v1, v2 along x (they approach when v1 > v2).
/// Bodies: {left, right}.
Scene head_on(BulletWorld& world, double m1, double m2, double v1, double v2,
              double restitution = 1.0);

/// A kinematic box (the paddle, half extents (0.05, 0.5, 0.5)) whose +x face
/// touches a free ball on a line (radius 0.05 m, 1 kg) at the origin; the
/// paddle moves at `paddle_speed` and the ball at `ball_speed` along x. An
/// elastic strike sends the ball off at 2·paddle_speed − ball_speed.
/// Bodies: {ball}.
Scene kinematic_paddle(BulletWorld& world, double paddle_speed, double ball_speed = 0.0,
                       double restitution = 1.0);

/// A 1 kg cube of half extent 0.5 m, its bottom face `drop_height` above the
/// ground (0: resting on it), under gravity. Bodies: {box}.
Scene box_on_ground(BulletWorld& world, double drop_height = 0.0, double restitution = 0.0);

/// `boxes` 1 kg cubes of half extent 0.5 m stacked on the ground, each
/// resting on the one below. Bodies: bottom to top.
Scene box_stack(BulletWorld& world, int boxes, double restitution = 0.0);

struct BilliardOptions {
  double speed = 5.0;          ///< of the cue ball along +x [m/s]
  double restitution = 1.0;
  double radius = 0.028575;    ///< pool ball, 57.15 mm [m]
  double mass = 0.17;          ///< pool ball [kg]
  /// 0: the break is pure impact, as in Seghete & Murphey 2014, §VII-A.
  double friction = 0.0;
  double gap = 0.0;            ///< between the cue ball and the apex ball [m]
  /// Rows of the rack (≥ 1): rows·(rows + 1)/2 balls; 5 is the 15-ball
  /// rack, 140 a hex-packed rack of 9870 (benchmark_scaling).
  int rows = 5;
};

/// Billiard break on a table (the ground): a triangular rack of touching
/// balls (options.rows rows, 15 balls by default), apex towards −x, and the
/// cue ball on the x axis heading for the apex. Bodies: {cue, rack row by row (row k has k + 1 balls,
/// ordered by z)}. strike_time = gap / speed.
Scene billiard_break(BulletWorld& world, const BilliardOptions& options = {});

struct BoxPileOptions {
  int columns = 10;            ///< boxes per layer, along x
  int layers = 10;
  double half_extent = 0.1;    ///< cubes [m]
  double spacing = 0.02;       ///< gap between neighbours, in a layer and between layers [m]
  double height = 0.1;         ///< gap between the lowest layer and the ground [m]
  double restitution = 0.0;
  double friction = 0.5;
};

/// A brick-bond wall of 1 kg cubes falling onto the ground: `layers` layers
/// of `columns` boxes, every other layer shifted by half a box, with gaps
/// everywhere, so the layers land and pile onto each other in turn.
/// Bodies: layer by layer from the bottom, each along +x.
Scene box_pile(BulletWorld& world, const BoxPileOptions& options = {});

struct BoxDropOptions {
  /// 1 × 2 × 0.5 m, upright: the rocking block of Halm & Posa (Mathew Halm and
  /// Michael Posa, "Set-Valued Rigid-Body Dynamics for Simultaneous,
  /// Inelastic, Frictional Impacts", arXiv:2103.15714; Fig. 1: 1 m wide, 2 m
  /// tall) given a depth, whose Routh outcomes range from rest to pivoting
  /// on either bottom edge (without friction, its 2-D cross-section tips
  /// only because it is tall: half-height b > √2 × half-width a; below that,
  /// stopping one corner drives the other down instead of lifting it).
  Eigen::Vector3d half_extents{0.5, 1.0, 0.25};
  double drop_height = 0.01;  ///< of the bottom face above the ground [m] (paper: 1 cm)
  double mass = 1.0;          ///< [kg]
  double friction = 1.0;      ///< the box's; the ground's is 1, so μ = this (product)
  double restitution = 0.0;
  /// A column of this many identical boxes, each resting on the one below
  /// (bodies bottom to top), all falling together: 4 ground corners strike
  /// and 4·(boxes − 1) box–box corners touch, so the impact is one Routh
  /// cluster of 4·boxes redundant contacts (benchmark_routh_clusters).
  int boxes = 1;
};

/// A box falling flat, at rest and level, onto the ground, so that its four
/// bottom corners strike in the same step. The ground is a static box of
/// half extents (10, 0.5, 10) whose top face is y = 0 (Bullet's box–box
/// detector reports the four corners at once; a plane reports one, then
/// fills in its manifold over the next steps). Restitution 1 and friction 1
/// on the ground, so the box's own values hold (conventions above). Bodies:
/// {box} (or the column, bottom to top); `ground` is the static box. strike_time = √(2 drop_height / g).
Scene box_drop(BulletWorld& world, const BoxDropOptions& options = {});

}  // namespace simpact::scenes
