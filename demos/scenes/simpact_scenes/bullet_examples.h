// simpact scenes — Bullet's own examples re-created headlessly as regression
// scenes (issue #10): the dynamics of the bullet3 repository's
// examples/ExtendedTutorials/NewtonsCradle.cpp (with its own gaps and with
// the spheres touching), examples/BasicDemo (a 5 × 5 × 5 block of boxes
// dropped onto a ground box) and a chain of hinge-jointed bodies falling
// onto a ground. Written from the examples' descriptions (sizes, masses,
// joints, step), not from their code.
//
// Each builder returns a BulletExample that owns its BulletWorld and the
// joints it adds; the solver is whatever `solver` (WorldOptions) says, so
// one builder makes the stock and the simpact version of the same scene.
// Stepping: example.world->step(example.dt) (stepSimulation(dt, 1, dt)).
#pragma once

#include "simpact_worlds/bullet_world.h"

#include <memory>
#include <vector>

class btRigidBody;
class btTypedConstraint;

namespace simpact::scenes {

// The worlds these scenes are built in (simpact::worlds, plugin/cli/worlds).
using namespace simpact::worlds;

/// A re-created example: the world, the joints it owns, its bodies in the
/// order each builder documents, and the step it runs at.
struct BulletExample {
  std::unique_ptr<BulletWorld> world;
  std::vector<std::unique_ptr<btTypedConstraint>> joints;
  std::vector<btRigidBody*> bodies;
  double dt = 1.0 / 60.0;  ///< the examples' 60 Hz

  BulletExample() = default;
  BulletExample(const BulletExample&) = delete;
  BulletExample& operator=(const BulletExample&) = delete;
  /// Removes the joints from the world before either is freed.
  ~BulletExample();
};

/// NewtonsCradle.cpp: `pendula` pendula along −x, pendulum i's top sphere at
/// (x_i, top_height, 0), x_0 = 0 and x_{i+1} = x_i − spacing·radius (a loop,
/// as the example places them: the rounding of that subtraction is part of
/// the scene). Each top sphere is pinned at its centre to the world by a
/// btPoint2PointConstraint; the bottom sphere, `length` below it, is held to
/// it by a btSliderConstraint whose four limits are 0 (a rigid rod). Spheres
/// of `radius` and `mass`; bottom spheres have restitution `restitution` and
/// no friction, top spheres Bullet's defaults (e = 0, μ = 0.5); nothing
/// sleeps; gravity (0, −9.81, 0); Bullet's product restitution combiner.
/// The example displaces pendulum 0 with a force from its GUI; here it
/// starts at the bottom of its swing, moving towards the others: its bottom
/// sphere at (−speed, 0, 0) and both its spheres turning at −speed/length
/// about z (a rigid swing about the pivot).
struct BulletCradleOptions {
  int pendula = 5;            ///< ≥ 2
  double spacing = 2.1;       ///< centre distance in radii: 2.1 (the example), 2.0 touching
  double radius = 1.0;        ///< [m]
  double length = 8.0;        ///< top-to-bottom centre distance [m]
  double top_height = 15.0;   ///< [m]
  double mass = 1.0;          ///< every sphere [kg]
  double restitution = 1.0;   ///< of the bottom spheres
  double speed = 2.0;         ///< of pendulum 0's bottom sphere [m/s] > 0
};
/// bodies: the bottom spheres in pendulum order, then the top spheres.
/// Throws std::invalid_argument for options describing no cradle.
std::unique_ptr<BulletExample> bullet_newtons_cradle(const WorldOptions& solver,
                                                     const BulletCradleOptions& options = {});

/// BasicDemo: a static ground box of half extent 50 with its top face at
/// y = 0, and a 5 × 5 × 5 block of boxes of half extent 0.1 and mass 1 at
/// (0.2 i, 2 + 0.2 k, 0.2 j) — touching neighbours, placed by loops — that
/// falls 1.9 m onto it. Bullet's defaults: e = 0, μ = 0.5; bodies may sleep.
/// With `restitution` e the boxes bounce as a user who sets it gets: the
/// ground's restitution is then 1, so under Bullet's product combiner a
/// box–ground contact gets e and a box–box contact e². bodies: the 125 boxes.
struct BoxPileExampleOptions {
  double restitution = 0.0;  ///< of every box, in [0, 1]
};
std::unique_ptr<BulletExample> bullet_box_pile(const WorldOptions& solver,
                                               const BoxPileExampleOptions& options = {});

/// A hinge chain: `links` boxes (half extents 0.25 × 0.05 × 0.1 m, 1 kg,
/// restitution `restitution`, μ 0.5) end to end along x, consecutive links
/// joined at their shared end by a btHingeConstraint about z (no collision
/// between linked links), the whole chain tilted by 0.2 rad about z and
/// released at rest with its lowest point `height` above a static ground
/// box (top face y = 0, restitution 1, so contacts get the links' e under
/// the product combiner). bodies: the links in order along the chain.
struct HingeChainOptions {
  int links = 8;             ///< ≥ 2
  double height = 1.0;       ///< [m] > 0
  double restitution = 0.5;  ///< in [0, 1]
};
std::unique_ptr<BulletExample> bullet_hinge_chain(const WorldOptions& solver,
                                                  const HingeChainOptions& options = {});

/// The joint error of the hinge chain: the largest distance between the two
/// bodies' copies of a hinge pivot [m].
double hinge_chain_joint_error(const BulletExample& chain);

/// The first strike of a cradle: steps until pendulum 0's bottom sphere has
/// given up half its speed, then as many more steps as the gaps between the
/// bottom spheres take to close at the striker's speed,
/// ceil((pendula − 1) · (spacing − 2) · radius / speed / dt), plus
/// kStrikeSettleSteps, so the strike has crossed the row.
struct CradleStrike {
  /// Bottom spheres' x velocities over −options.speed; the ideal outcome is
  /// (0, …, 0, 1). Empty if pendulum 0 never slowed within max_steps.
  std::vector<double> outcome;
  int steps = 0;  ///< steps taken
};
/// Steps after the gaps have closed: one for the last contact to be seen by
/// the narrowphase, one for its impact.
inline constexpr int kStrikeSettleSteps = 2;
/// Lets through whatever stepSimulation throws.
CradleStrike cradle_first_strike(BulletExample& cradle, const BulletCradleOptions& options,
                                 int max_steps = 600);

/// Whether every body of the example's world has a finite position, linear
/// and angular velocity.
bool example_state_finite(const BulletExample& example);

/// The largest linear speed among the example's own bodies [m/s].
double example_max_speed(const BulletExample& example);

}  // namespace simpact::scenes
