// A tilted box resting on one corner on the ground y = 0: the corner of its
// bottom face (the −z face here, turned by `orientation`) that reaches
// lowest, and the centre that puts that corner exactly at y = 0. Shared by
// the core-vs-adapter tests of the propagative and the Routh law.
#pragma once

#include <simpact_worlds/bullet_world.h>

#include <Eigen/Core>
#include <Eigen/Geometry>

namespace simpact::testing {

/// Offset from the box's centre to its lowest corner among (±x, ±y, +z)
/// half extents, turned by `orientation` (the tests' boxes are turned about
/// z, so those four corners hold the lowest one).
inline Eigen::Vector3d lowest_corner(const Eigen::Quaterniond& orientation,
                                     const Eigen::Vector3d& half) {
  Eigen::Vector3d lowest = Eigen::Vector3d::Zero();
  for (int sx : {-1, 1})
    for (int sy : {-1, 1}) {
      const Eigen::Vector3d r = orientation * Eigen::Vector3d(sx * half.x(), sy * half.y(), half.z());
      if (r.y() < lowest.y()) lowest = r;
    }
  return lowest;
}

/// The Bullet side of those tests: the static plane y = 0 (restitution 1,
/// friction `ground_friction`) and the box of `half` extents and `mass`,
/// turned by `orientation`, centred at `centre` (its lowest corner on the
/// plane), moving at `linear` and `angular`, with the box's own `friction`
/// and `restitution`; never sleeping. Returns the box.
inline btRigidBody* add_box_on_corner(worlds::BulletWorld& world, const Eigen::Vector3d& half,
                                      double mass, const Eigen::Quaterniond& orientation,
                                      const Eigen::Vector3d& centre, const Eigen::Vector3d& linear,
                                      const Eigen::Vector3d& angular, double friction,
                                      double restitution, double ground_friction) {
  worlds::BodyOptions ground;
  ground.mass = 0.0;
  ground.restitution = 1.0;
  ground.friction = ground_friction;
  world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
  worlds::BodyOptions box;
  box.mass = mass;
  box.position = centre;
  box.orientation = orientation;
  box.velocity = linear;
  box.angular_velocity = angular;
  box.restitution = restitution;
  box.friction = friction;
  box.never_sleep = true;
  return world.add_box(half, box);
}

}  // namespace simpact::testing
