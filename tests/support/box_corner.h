// A tilted box resting on one corner on the ground y = 0: the corner of its
// bottom face (the −z face here, turned by `orientation`) that reaches
// lowest, and the centre that puts that corner exactly at y = 0. Shared by
// the core-vs-adapter tests of the propagative and the Routh law.
#pragma once

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

}  // namespace simpact::testing
