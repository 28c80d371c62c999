#include "simpact_scenes/random_worlds.h"

#include "simpact_scenes/fingerprint.h"

#include <BulletCollision/CollisionShapes/btHeightfieldTerrainShape.h>
#include <BulletCollision/CollisionShapes/btMultiSphereShape.h>
#include <BulletCollision/CollisionShapes/btUniformScalingShape.h>
#include <BulletCollision/Gimpact/btGImpactCollisionAlgorithm.h>
#include <BulletCollision/Gimpact/btGImpactShape.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <LinearMath/btTransformUtil.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <array>
#include <ctime>
#include <cmath>
#include <cstdio>
#include <exception>
#include <sstream>
#include <stdexcept>
#include <utility>

namespace simpact::scenes {
namespace {

// SplitMix64 (Steele, Lea & Flood, "Fast splittable pseudorandom number
// generators", OOPSLA 2014): fully specified, so a seed draws the same
// numbers with every compiler and standard library.
//
// The order of the draws must be fixed too. C++ leaves the order in which a
// call's arguments are evaluated unspecified, and compilers differ: GCC
// evaluates Vector3d(uniform(), uniform(), uniform()) right to left, Clang
// left to right, so the same seed gave different worlds (a Clang build
// failed FuzzRegression: two fixed worlds no longer reached an impact).
// Every composite draw is therefore made one statement at a time (vector,
// rotation, scaled_unit_vector), in the order GCC used, so the worlds named
// by seed and index in the tests and docs stay the worlds they were. Never
// draw twice in one expression.
class Rng {
 public:
  explicit Rng(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  /// Uniform in [0, 1), 53 random bits.
  double uniform() { return double(next() >> 11) * 0x1.0p-53; }
  double uniform(double low, double high) { return low + (high - low) * uniform(); }
  /// Uniform in {0, …, n − 1}, n ≥ 1 (modulo bias < n / 2⁶⁴: irrelevant here).
  int integer(int n) { return int(next() % std::uint64_t(n)); }
  bool chance(double p) { return uniform() < p; }
  /// 10^U(low, high).
  double log_uniform(double low, double high) { return std::pow(10.0, uniform(low, high)); }
  /// Each coordinate uniform in [low, high), drawn z, y, x.
  Eigen::Vector3d vector(double low, double high) {
    const double z = uniform(low, high);
    const double y = uniform(low, high);
    const double x = uniform(low, high);
    return {x, y, z};
  }
  Eigen::Vector3d unit_vector() {
    for (;;) {  // rejection from the cube: uniform on the sphere
      const Eigen::Vector3d v = vector(-1, 1);
      const double n = v.norm();
      if (n > 0.1 && n <= 1.0) return v / n;
    }
  }
  /// A length uniform in [low, high) times a unit vector, drawn in that
  /// order (GCC evaluated unit_vector() * uniform(…) right operand first).
  Eigen::Vector3d scaled_unit_vector(double low, double high) {
    const double length = uniform(low, high);
    return unit_vector() * length;
  }
  Eigen::Quaterniond rotation() {
    for (;;) {  // rejection from the 4-cube: uniform on SO(3); drawn z, y, x, w
      const Eigen::Vector3d v = vector(-1, 1);
      const double w = uniform(-1, 1);
      Eigen::Quaterniond q(w, v.x(), v.y(), v.z());
      const double n = q.norm();
      if (n > 0.1 && n <= 1.0) {
        q.coeffs() /= n;
        return q;
      }
    }
  }

 private:
  std::uint64_t state_;
};

std::uint64_t mix(std::uint64_t a, std::uint64_t b) {
  Rng rng(a ^ (b * 0xD1B54A32D192ED03ull + 0x8CB92BA72F3D8DD7ull));
  rng.next();
  return rng.next();
}

// The grid of body cells: bounding radii ≤ kMaxRadius fit in cells of
// kCell without touching; the lowest cell's bottom is above the mesh bumps.
constexpr double kMaxRadius = 0.5;
constexpr double kCell = 1.1;
constexpr int kCellsX = 4, kCellsY = 3, kCellsZ = 4;
constexpr double kLowestCellY = 0.7;
constexpr double kMeshBump = 0.1;     // mesh heights in [−bump, bump]
constexpr double kMeshHalfSize = 4.0;
constexpr int kMeshCells = 8;
constexpr double kMaxSpeed = 20.0;    // [m/s] (issue #10)
constexpr double kMaxSpin = 10.0;     // [rad/s]

Eigen::Vector3d cell_center(int cell) {
  const int i = cell % kCellsX;
  const int j = (cell / kCellsX) % kCellsY;
  const int k = cell / (kCellsX * kCellsY);
  return {(i - 1.5) * kCell, kLowestCellY + j * kCell, (k - 1.5) * kCell};
}

bool energy_kind(RandomWorldKind kind) { return kind != RandomWorldKind::kGeneral; }

RandomBodySpec draw_body(Rng& rng, RandomWorldKind kind, const Eigen::Vector3d& center, bool more_shapes) {
  RandomBodySpec body;
  const double radius = 0.05 * rng.log_uniform(0.0, 1.0);  // 0.05 … 0.5 m
  body.shape = RandomShape(rng.integer(more_shapes ? kRandomShapesWithMore : kRandomShapes));
  switch (body.shape) {
    case RandomShape::kSphere:
      body.half_size = Eigen::Vector3d::Constant(radius);
      break;
    case RandomShape::kBox: {
      const Eigen::Vector3d a = rng.vector(0.3, 1);
      body.half_size = a / a.norm() * radius;
      break;
    }
    case RandomShape::kCapsule: {
      const double r = radius * rng.uniform(0.3, 0.7);
      body.half_size = Eigen::Vector3d(r, radius - r, r);
      break;
    }
    case RandomShape::kCylinder:
    case RandomShape::kCone: {
      const double r = radius * rng.uniform(0.3, 0.9);
      const double half_height = std::sqrt(radius * radius - r * r) * rng.uniform(0.3, 1.0);
      body.half_size = Eigen::Vector3d(r, half_height, r);
      break;
    }
    case RandomShape::kConvexHull: {
      const Eigen::Vector3d axes = rng.vector(0.3, 1);
      const int points = 8 + rng.integer(9);
      for (int p = 0; p < points; ++p) {
        body.hull_points.push_back(rng.unit_vector().cwiseProduct(axes) * radius);
      }
      body.half_size = Eigen::Vector3d::Constant(radius);
      break;
    }
    case RandomShape::kCompound:
      // Three children of radius/2 along a random axis (see build).
      body.half_size = Eigen::Vector3d::Constant(radius);
      body.hull_points.push_back(rng.unit_vector() * (radius * 0.5));
      break;
    case RandomShape::kMultiSphere: {
      // 2–4 spheres whose union lies within the bounding radius.
      const int spheres = 2 + rng.integer(3);
      for (int k = 0; k < spheres; ++k) {
        const double r = radius * rng.uniform(0.3, 0.6);
        body.hull_points.push_back(rng.scaled_unit_vector(0.0, radius - r));
        body.sphere_radii.push_back(r);
      }
      body.half_size = Eigen::Vector3d::Constant(radius);
      break;
    }
    case RandomShape::kScaledHull: {
      // A hull of radius/scale scaled up or down by scale ∈ [0.5, 2].
      const double scale = rng.log_uniform(-0.30103, 0.30103);
      const Eigen::Vector3d axes = rng.vector(0.3, 1);
      const int points = 8 + rng.integer(9);
      for (int p = 0; p < points; ++p) body.hull_points.push_back(rng.unit_vector().cwiseProduct(axes) * (radius / scale));
      body.scaling = Eigen::Vector3d::Constant(scale);
      body.half_size = Eigen::Vector3d::Constant(radius);
      break;
    }
    case RandomShape::kScaledBox: {
      // Half extents h scaled per axis by s ∈ [0.5, 2]³, |h ∘ s| = radius.
      const Eigen::Vector3d a = rng.vector(0.3, 1);
      body.scaling = rng.vector(0.5, 2.0);
      body.half_size = a / a.cwiseProduct(body.scaling).norm() * radius;
      break;
    }
    case RandomShape::kGImpactMesh: {
      // An octahedron with semi-axes in [0.3, 1] × radius.
      const Eigen::Vector3d axes = rng.vector(0.3, 1) * radius;
      for (int axis = 0; axis < 3; ++axis)
        for (const double sign : {1.0, -1.0}) body.hull_points.push_back(sign * axes[axis] * Eigen::Vector3d::Unit(axis));
      body.half_size = Eigen::Vector3d::Constant(radius);
      break;
    }
  }
  BodyOptions& o = body.options;
  o.mass = rng.log_uniform(-2.0, 3.0);
  o.position = center + rng.scaled_unit_vector(0.0, 0.5 * (kCell - 2 * kMaxRadius));
  o.orientation = rng.rotation();
  const bool general = !energy_kind(kind);
  if (general && rng.chance(0.08)) {
    o.mass = 0.0;
    o.kinematic = true;
    o.velocity = rng.scaled_unit_vector(0.0, 5.0);
    o.angular_velocity = rng.scaled_unit_vector(0.0, 2.0);
  } else {
    if (rng.chance(general ? 0.5 : 0.8)) {
      const double u = rng.uniform();
      o.velocity = rng.unit_vector() * (kMaxSpeed * u * u);
    }
    if (rng.chance(0.5)) o.angular_velocity = rng.scaled_unit_vector(0.0, kMaxSpin);
  }
  if (general) {
    const double pick = rng.uniform();
    o.restitution = pick < 0.3 ? 1.0 : pick < 0.6 ? 0.0 : rng.uniform();
    o.friction = rng.chance(0.2) ? 0.0 : rng.uniform(0.0, 1.2);
  } else {
    o.restitution = 1.0;
    o.friction = 0.0;
  }
  if (rng.chance(0.15)) {
    for (int axis = 0; axis < 3; ++axis) {
      const int pick = rng.integer(general ? 3 : 2);
      o.linear_factor[axis] = pick == 0 ? 0.0 : pick == 1 ? 1.0 : 0.5;
    }
  }
  if (rng.chance(0.15)) {
    if (general) {
      for (int axis = 0; axis < 3; ++axis) {
        const int pick = rng.integer(3);
        o.angular_factor[axis] = pick == 0 ? 0.0 : pick == 1 ? 1.0 : 0.5;
      }
    } else {
      o.angular_factor = Eigen::Vector3d::Zero();  // energy worlds: all or nothing
    }
  }
  if (!general) {
    // Bullet applies the factors to velocity changes only: a velocity along
    // a locked axis would go on whatever hits the body, an infinitely massive
    // motion like a kinematic body's, which may legitimately give energy.
    o.velocity = o.velocity.cwiseProduct(o.linear_factor);
    o.angular_velocity = o.angular_velocity.cwiseProduct(o.angular_factor);
  }
  o.never_sleep = rng.chance(0.5);
  if (!o.kinematic && rng.chance(0.1)) {
    body.asleep = true;
    o.never_sleep = false;
    o.velocity.setZero();
    o.angular_velocity.setZero();
  }
  body.isotropic = kind == RandomWorldKind::kConservative;
  return body;
}

// A row of equal touching spheres placed by a loop, the first moving in.
void draw_touching_row(Rng& rng, RandomWorldKind kind, RandomWorldSpec& spec) {
  const int count = 2 + rng.integer(5);
  const double radius = rng.uniform(0.05, 0.3);
  const double x0 = -2.0;
  const double y = kLowestCellY + kCellsY * kCell + 0.6;
  const bool general = !energy_kind(kind);
  const double restitution = general ? (rng.chance(0.5) ? 1.0 : rng.uniform()) : 1.0;
  const double friction = general && rng.chance(0.5) ? rng.uniform(0.0, 1.0) : 0.0;
  const double speed = rng.uniform(0.5, 10.0);
  for (int i = 0; i < count; ++i) {
    RandomBodySpec body;
    body.shape = RandomShape::kSphere;
    body.half_size = Eigen::Vector3d::Constant(radius);
    body.options.mass = rng.log_uniform(-1.0, 1.0);
    body.options.position = Eigen::Vector3d(x0 + double(i) * (2.0 * radius), y, 0.0);
    if (i == 0) body.options.velocity = Eigen::Vector3d(speed, 0.0, 0.0);
    body.options.restitution = restitution;
    body.options.friction = friction;
    body.options.never_sleep = true;
    body.touching_row = true;
    body.isotropic = kind == RandomWorldKind::kConservative;
    spec.bodies.push_back(std::move(body));
  }
}

RandomJointSpec draw_joint(Rng& rng, const RandomWorldSpec& spec,
                           const std::vector<int>& dynamic) {
  RandomJointSpec joint;
  joint.kind = RandomJoint(rng.integer(kRandomJointKinds));
  joint.a = dynamic[std::size_t(rng.integer(int(dynamic.size())))];
  joint.b = -1;
  if (spec.bodies.size() > 1 && !rng.chance(0.3)) {
    do {
      joint.b = rng.integer(int(spec.bodies.size()));
    } while (joint.b == joint.a);
  }
  const Eigen::Vector3d& pa = spec.bodies[std::size_t(joint.a)].options.position;
  if (joint.b < 0) {
    joint.pivot = pa + rng.scaled_unit_vector(0.0, 0.75);
  } else {
    joint.pivot = 0.5 * (pa + spec.bodies[std::size_t(joint.b)].options.position);
  }
  joint.frame = rng.rotation();
  switch (joint.kind) {
    case RandomJoint::kHingeAtLimit:
      joint.p1 = -rng.uniform(0.1, 1.5);  // lower limit; the upper is 0, the current angle
      break;
    case RandomJoint::kHingeMotor:
      joint.p1 = rng.uniform(-10.0, 10.0);     // target velocity [rad/s]
      joint.p2 = rng.log_uniform(-2.0, 1.0);   // max motor impulse [N·s]
      break;
    case RandomJoint::kSlider:
      joint.p1 = rng.uniform(0.0, 0.5);  // linear half range [m]
      joint.p2 = rng.uniform(0.0, 1.0);  // angular half range [rad]
      break;
    case RandomJoint::kConeTwist:
      joint.p1 = rng.uniform(0.1, 1.5);
      joint.p2 = rng.uniform(0.1, 1.5);
      joint.p3 = rng.uniform(0.1, 3.0);
      break;
    case RandomJoint::kGeneric6Dof:
      joint.p1 = rng.chance(0.3) ? 0.0 : rng.uniform(0.0, 0.3);
      joint.p2 = rng.chance(0.3) ? 0.0 : rng.uniform(0.0, 1.0);
      break;
    case RandomJoint::kSpring6Dof:
      joint.spring_axes = 1 + rng.integer(63);
      joint.p1 = rng.log_uniform(1.0, 4.0);  // stiffness
      joint.p2 = rng.uniform(0.0, 1.0);      // damping
      break;
    case RandomJoint::kGear:
      joint.p1 = rng.uniform(0.5, 2.0);  // ratio
      break;
    default:
      break;
  }
  joint.enabled = !rng.chance(0.1);
  if (rng.chance(0.15)) joint.breaking_impulse = rng.log_uniform(-1.0, 2.0);
  joint.disable_collisions = rng.chance(0.5);
  return joint;
}

SolverKind base_kind(int pick) {
  switch (pick) {
    case 0: return SolverKind::kStockSi;
    case 1: return SolverKind::kStockNncg;
    case 2: return SolverKind::kStockMlcpDantzig;
    default: return SolverKind::kStockMlcpLemke;
  }
}

btTransform transform_of(const Eigen::Quaterniond& q, const Eigen::Vector3d& p) {
  return btTransform(to_bullet(q), to_bullet(p));
}

bool finite_vector(const btVector3& v) {
  return std::isfinite(double(v.x())) && std::isfinite(double(v.y())) &&
         std::isfinite(double(v.z()));
}

}  // namespace

const char* to_string(RandomWorldKind kind) {
  switch (kind) {
    case RandomWorldKind::kGeneral: return "general";
    case RandomWorldKind::kConservative: return "conservative";
    case RandomWorldKind::kElastic: return "elastic";
  }
  return "unknown";
}

const char* to_string(RandomShape shape) {
  switch (shape) {
    case RandomShape::kSphere: return "sphere";
    case RandomShape::kBox: return "box";
    case RandomShape::kCapsule: return "capsule";
    case RandomShape::kCylinder: return "cylinder";
    case RandomShape::kCone: return "cone";
    case RandomShape::kConvexHull: return "hull";
    case RandomShape::kCompound: return "compound";
    case RandomShape::kMultiSphere: return "multisphere";
    case RandomShape::kScaledHull: return "scaled-hull";
    case RandomShape::kScaledBox: return "scaled-box";
    case RandomShape::kGImpactMesh: return "gimpact-mesh";
  }
  return "unknown";
}

const char* to_string(RandomGround ground) {
  switch (ground) {
    case RandomGround::kNone: return "none";
    case RandomGround::kPlane: return "plane";
    case RandomGround::kMesh: return "mesh";
    case RandomGround::kHeightfield: return "heightfield";
  }
  return "unknown";
}

const char* to_string(RandomJoint joint) {
  switch (joint) {
    case RandomJoint::kPoint2Point: return "p2p";
    case RandomJoint::kHingeFree: return "hinge";
    case RandomJoint::kHingeAtLimit: return "hinge@limit";
    case RandomJoint::kHingeMotor: return "hinge+motor";
    case RandomJoint::kSlider: return "slider";
    case RandomJoint::kSliderRod: return "slider-rod";
    case RandomJoint::kConeTwist: return "cone-twist";
    case RandomJoint::kGeneric6Dof: return "6dof";
    case RandomJoint::kSpring6Dof: return "6dof-spring2";
    case RandomJoint::kFixed: return "fixed";
    case RandomJoint::kGear: return "gear";
    case RandomJoint::kHinge2: return "hinge2";
    case RandomJoint::kUniversal: return "universal";
  }
  return "unknown";
}

RandomWorldSpec random_world_spec(std::uint64_t seed, std::int64_t index,
                                  const RandomWorldOptions& options) {
  if (options.max_bodies < 1) throw std::invalid_argument("RandomWorldOptions::max_bodies must be >= 1");
  if (options.max_joints < 0) throw std::invalid_argument("RandomWorldOptions::max_joints must be >= 0");
  if (!(options.conservative_fraction >= 0.0 && options.elastic_fraction >= 0.0 &&
        options.conservative_fraction + options.elastic_fraction <= 1.0)) {
    throw std::invalid_argument(
        "RandomWorldOptions: conservative_fraction and elastic_fraction must be >= 0 with a sum <= 1");
  }
  RandomWorldSpec spec;
  spec.seed = seed;
  spec.index = index;
  Rng rng(mix(seed, std::uint64_t(index)));
  const double kind_pick = rng.uniform();
  spec.kind = kind_pick < options.conservative_fraction ? RandomWorldKind::kConservative
              : kind_pick < options.conservative_fraction + options.elastic_fraction
                  ? RandomWorldKind::kElastic
                  : RandomWorldKind::kGeneral;
  const bool general = spec.kind == RandomWorldKind::kGeneral;
  spec.law = bullet::ImpactLaw(rng.integer(3));
  spec.base = base_kind(rng.integer(4));
  constexpr std::array<double, 3> kSteps = {1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0};
  spec.dt = kSteps[std::size_t(rng.integer(3))];
  if (general) {
    spec.gravity = rng.chance(0.85) ? Eigen::Vector3d(0.0, -kStandardGravity, 0.0)
                   : rng.chance(0.5) ? Eigen::Vector3d::Zero()
                                     : Eigen::Vector3d(rng.unit_vector() * kStandardGravity);
  }
  const double ground_pick = rng.uniform();
  spec.ground = ground_pick < 0.25 ? RandomGround::kNone
                : ground_pick < 0.6 ? RandomGround::kPlane
                                    : RandomGround::kMesh;
  // more_shapes: half of the meshes become heightfields with the same grid
  // of samples (Bullet splits their cells along the other diagonal).
  if (options.more_shapes && spec.ground == RandomGround::kMesh && ground_pick >= 0.8)
    spec.ground = RandomGround::kHeightfield;
  spec.ground_restitution = general ? (rng.chance(0.5) ? 1.0 : rng.uniform()) : 1.0;
  spec.ground_friction = general ? rng.uniform(0.0, 1.2) : 0.0;
  if (spec.ground == RandomGround::kMesh || spec.ground == RandomGround::kHeightfield) {
    spec.ground_cells = kMeshCells;
    const double cell = 2.0 * kMeshHalfSize / kMeshCells;
    for (int i = 0; i <= kMeshCells; ++i) {
      for (int k = 0; k <= kMeshCells; ++k) {
        spec.ground_heights.emplace_back(-kMeshHalfSize + i * cell,
                                         rng.uniform(-kMeshBump, kMeshBump),
                                         -kMeshHalfSize + k * cell);
      }
    }
  }
  // Bodies in distinct cells of a shuffled grid.
  std::array<int, kCellsX * kCellsY * kCellsZ> cells{};
  for (std::size_t c = 0; c < cells.size(); ++c) cells[c] = int(c);
  for (std::size_t c = cells.size() - 1; c > 0; --c) {
    std::swap(cells[c], cells[std::size_t(rng.integer(int(c + 1)))]);
  }
  const int count = 1 + rng.integer(std::min(options.max_bodies, int(cells.size())));
  for (int i = 0; i < count; ++i) {
    spec.bodies.push_back(draw_body(rng, spec.kind, cell_center(cells[std::size_t(i)]), options.more_shapes));
  }
  if (rng.chance(0.3)) draw_touching_row(rng, spec.kind, spec);
  if (general) {
    std::vector<int> dynamic;
    for (std::size_t i = 0; i < spec.bodies.size(); ++i) {
      if (!spec.bodies[i].options.kinematic) dynamic.push_back(int(i));
    }
    const int joints = dynamic.empty() ? 0 : rng.integer(options.max_joints + 1);
    for (int j = 0; j < joints; ++j) spec.joints.push_back(draw_joint(rng, spec, dynamic));
  }
  return spec;
}

std::string describe(const RandomWorldSpec& spec) {
  std::ostringstream out;
  out << to_string(spec.kind) << ", law " << bullet::to_string(spec.law) << ", base "
      << to_string(spec.base) << ", dt 1/" << std::lround(1.0 / spec.dt) << ", ground "
      << to_string(spec.ground) << ", g " << (spec.gravity.norm() > 0 ? "on" : "off") << "; "
      << spec.bodies.size() << " bodies:";
  std::array<int, kRandomShapesWithMore> shapes{};
  int kinematic = 0, asleep = 0, factors = 0, row = 0;
  for (const RandomBodySpec& body : spec.bodies) {
    ++shapes[std::size_t(body.shape)];
    kinematic += body.options.kinematic ? 1 : 0;
    asleep += body.asleep ? 1 : 0;
    factors += (body.options.linear_factor != Eigen::Vector3d::Ones() ||
                body.options.angular_factor != Eigen::Vector3d::Ones())
                   ? 1
                   : 0;
    row += body.touching_row ? 1 : 0;
  }
  for (std::size_t s = 0; s < shapes.size(); ++s) {
    if (shapes[s] > 0) out << ' ' << shapes[s] << ' ' << to_string(RandomShape(s));
  }
  if (kinematic > 0) out << ", " << kinematic << " kinematic";
  if (asleep > 0) out << ", " << asleep << " asleep";
  if (factors > 0) out << ", " << factors << " with factors";
  if (row > 0) out << ", touching row of " << row;
  out << "; " << spec.joints.size() << " joints";
  if (!spec.joints.empty()) {
    out << ':';
    for (const RandomJointSpec& joint : spec.joints) {
      out << ' ' << to_string(joint.kind) << (joint.b < 0 ? "(world)" : "")
          << (joint.enabled ? "" : "(disabled)") << (joint.breaking_impulse > 0 ? "(breakable)" : "");
    }
  }
  return out.str();
}

// ── RandomWorld ─────────────────────────────────────────────────────────────

RandomWorld::RandomWorld(const RandomWorldSpec& spec, bool simpact,
                         std::function<void(const bullet::ImpactReport&)> on_impact, bool split_all)
    : spec_(spec) {
  WorldOptions options;
  options.solver = simpact ? SolverKind::kSimpact : spec.base;
  options.base = spec.base;
  options.simpact.law = spec.law;
  options.simpact.seed = mix(spec.seed, std::uint64_t(spec.index));
  options.simpact.on_impact = std::move(on_impact);
  options.simpact.split_impulse_for_all_penetrations = split_all;
  options.gravity = spec.gravity;
  world_ = std::make_unique<BulletWorld>(options);

  BodyOptions ground;
  ground.mass = 0.0;
  ground.restitution = spec.ground_restitution;
  ground.friction = spec.ground_friction;
  if (spec.ground == RandomGround::kPlane) {
    world_->add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
  } else if (spec.ground == RandomGround::kMesh) {
    auto mesh = std::make_unique<btTriangleMesh>();
    const int n = spec.ground_cells + 1;
    auto vertex = [&](int i, int k) { return to_bullet(spec.ground_heights[std::size_t(i * n + k)]); };
    for (int i = 0; i + 1 < n; ++i) {
      for (int k = 0; k + 1 < n; ++k) {
        mesh->addTriangle(vertex(i, k), vertex(i + 1, k), vertex(i + 1, k + 1));
        mesh->addTriangle(vertex(i, k), vertex(i + 1, k + 1), vertex(i, k + 1));
      }
    }
    shapes_.push_back(std::make_unique<btBvhTriangleMeshShape>(mesh.get(), true));
    meshes_.push_back(std::move(mesh));
    add_body(shapes_.back().get(), ground, false);
  } else if (spec.ground == RandomGround::kHeightfield) {
    // The mesh's grid as height samples, i along x (Bullet's width, the
    // fast index of its data), k along z; Bullet centres the field on its
    // AABB, so the samples' range, symmetric about y = 0, keeps the origin
    // put. Its cells split along the other diagonal than the mesh's.
    const int n = spec.ground_cells + 1;
    heights_.resize(std::size_t(n) * std::size_t(n));
    for (int i = 0; i < n; ++i)
      for (int k = 0; k < n; ++k)
        heights_[std::size_t(k * n + i)] = spec.ground_heights[std::size_t(i * n + k)].y();
    auto field = std::make_unique<btHeightfieldTerrainShape>(n, n, heights_.data(), btScalar(-kMeshBump),
                                                             btScalar(kMeshBump), 1, false);
    const double cell = 2.0 * kMeshHalfSize / spec.ground_cells;
    field->setLocalScaling(btVector3(btScalar(cell), 1, btScalar(cell)));
    shapes_.push_back(std::move(field));
    add_body(shapes_.back().get(), ground, false);
  }

  for (const RandomBodySpec& body : spec.bodies) {
    const Eigen::Vector3d& h = body.half_size;
    std::unique_ptr<btCollisionShape> shape;
    switch (body.shape) {
      case RandomShape::kSphere:
        shape = std::make_unique<btSphereShape>(btScalar(h.x()));
        break;
      case RandomShape::kBox:
        shape = std::make_unique<btBoxShape>(to_bullet(h));
        break;
      case RandomShape::kCapsule:
        shape = std::make_unique<btCapsuleShape>(btScalar(h.x()), btScalar(2.0 * h.y()));
        break;
      case RandomShape::kCylinder:
        shape = std::make_unique<btCylinderShape>(to_bullet(h));
        break;
      case RandomShape::kCone:
        shape = std::make_unique<btConeShape>(btScalar(h.x()), btScalar(2.0 * h.y()));
        break;
      case RandomShape::kConvexHull: {
        auto hull = std::make_unique<btConvexHullShape>();
        for (const Eigen::Vector3d& p : body.hull_points) hull->addPoint(to_bullet(p), false);
        hull->recalcLocalAabb();
        shape = std::move(hull);
        break;
      }
      case RandomShape::kCompound: {
        // A box at the centre, a sphere and a capsule at ±offset.
        const double r = h.x() * 0.5;
        const Eigen::Vector3d offset = body.hull_points.front();
        auto compound = std::make_unique<btCompoundShape>();
        shapes_.push_back(std::make_unique<btBoxShape>(btVector3(btScalar(r * 0.6), btScalar(r * 0.6), btScalar(r * 0.6))));
        compound->addChildShape(btTransform::getIdentity(), shapes_.back().get());
        shapes_.push_back(std::make_unique<btSphereShape>(btScalar(r)));
        compound->addChildShape(btTransform(btQuaternion::getIdentity(), to_bullet(offset)),
                                shapes_.back().get());
        shapes_.push_back(std::make_unique<btCapsuleShape>(btScalar(r * 0.5), btScalar(r)));
        compound->addChildShape(btTransform(btQuaternion::getIdentity(), to_bullet(-offset)),
                                shapes_.back().get());
        shape = std::move(compound);
        break;
      }
      case RandomShape::kMultiSphere: {
        std::vector<btVector3> centres;
        std::vector<btScalar> radii;
        for (const Eigen::Vector3d& p : body.hull_points) centres.push_back(to_bullet(p));
        for (const double r : body.sphere_radii) radii.push_back(btScalar(r));
        shape = std::make_unique<btMultiSphereShape>(centres.data(), radii.data(), int(centres.size()));
        break;
      }
      case RandomShape::kScaledHull: {
        auto hull = std::make_unique<btConvexHullShape>();
        for (const Eigen::Vector3d& p : body.hull_points) hull->addPoint(to_bullet(p), false);
        hull->recalcLocalAabb();
        shape = std::make_unique<btUniformScalingShape>(hull.get(), btScalar(body.scaling.x()));
        // Kept in shapes_ (destroyed first to last, so before the scaling
        // shape, whose destructor never reads its child).
        shapes_.push_back(std::move(hull));
        break;
      }
      case RandomShape::kScaledBox:
        shape = std::make_unique<btBoxShape>(to_bullet(h));
        shape->setLocalScaling(to_bullet(body.scaling));
        break;
      case RandomShape::kGImpactMesh: {
        // Vertices ±x (0, 1), ±y (2, 3), ±z (4, 5); eight faces, outward.
        const auto& v = body.hull_points;
        auto mesh = std::make_unique<btTriangleMesh>();
        for (const int x : {0, 1})
          for (const int y : {2, 3})
            for (const int z : {4, 5}) {
              // Outward when the signs' product is positive, else reversed.
              const bool outward = ((x == 0) == (y == 2)) == (z == 4);
              if (outward) {
                mesh->addTriangle(to_bullet(v[std::size_t(x)]), to_bullet(v[std::size_t(y)]), to_bullet(v[std::size_t(z)]));
              } else {
                mesh->addTriangle(to_bullet(v[std::size_t(x)]), to_bullet(v[std::size_t(z)]), to_bullet(v[std::size_t(y)]));
              }
            }
        auto gimpact = std::make_unique<btGImpactMeshShape>(mesh.get());
        gimpact->updateBound();
        meshes_.push_back(std::move(mesh));
        shape = std::move(gimpact);
        if (!gimpact_registered_) {
          btGImpactCollisionAlgorithm::registerAlgorithm(
              static_cast<btCollisionDispatcher*>(world_->dynamics_world().getDispatcher()));
          gimpact_registered_ = true;
        }
        break;
      }
    }
    shapes_.push_back(std::move(shape));
    btRigidBody* rigid = add_body(shapes_.back().get(), body.options, body.isotropic);
    all_bodies_.push_back(rigid);
    if (!body.options.kinematic) bodies_.push_back(rigid);
    if (body.asleep) rigid->setActivationState(ISLAND_SLEEPING);
  }

  for (const RandomJointSpec& joint : spec.joints) {
    btRigidBody& a = *all_bodies_[std::size_t(joint.a)];
    const bool world_joint = joint.b < 0;
    btRigidBody& b = world_joint ? btTypedConstraint::getFixedBody() : *all_bodies_[std::size_t(joint.b)];
    const btTransform pivot = transform_of(joint.frame, joint.pivot);
    const btTransform in_a = a.getCenterOfMassTransform().inverse() * pivot;
    const btTransform in_b = b.getCenterOfMassTransform().inverse() * pivot;
    const btVector3 axis_z = pivot.getBasis().getColumn(2);
    const btVector3 axis_y = pivot.getBasis().getColumn(1);
    const btVector3 axis_x = pivot.getBasis().getColumn(0);
    std::unique_ptr<btTypedConstraint> constraint;
    switch (joint.kind) {
      case RandomJoint::kPoint2Point:
        if (world_joint) {
          constraint = std::make_unique<btPoint2PointConstraint>(a, in_a.getOrigin());
        } else {
          constraint = std::make_unique<btPoint2PointConstraint>(a, b, in_a.getOrigin(), in_b.getOrigin());
        }
        break;
      case RandomJoint::kHingeFree:
      case RandomJoint::kHingeAtLimit:
      case RandomJoint::kHingeMotor: {
        std::unique_ptr<btHingeConstraint> hinge;
        if (world_joint) {
          hinge = std::make_unique<btHingeConstraint>(a, in_a.getOrigin(), in_a.getBasis().getColumn(2));
        } else {
          hinge = std::make_unique<btHingeConstraint>(a, b, in_a, in_b);
        }
        if (joint.kind == RandomJoint::kHingeAtLimit) hinge->setLimit(btScalar(joint.p1), btScalar(0));
        if (joint.kind == RandomJoint::kHingeMotor) {
          hinge->enableAngularMotor(true, btScalar(joint.p1), btScalar(joint.p2));
        }
        constraint = std::move(hinge);
        break;
      }
      case RandomJoint::kSlider:
      case RandomJoint::kSliderRod: {
        std::unique_ptr<btSliderConstraint> slider;
        if (world_joint) {
          slider = std::make_unique<btSliderConstraint>(a, in_a, true);
        } else {
          slider = std::make_unique<btSliderConstraint>(a, b, in_a, in_b, true);
        }
        const double lin = joint.kind == RandomJoint::kSlider ? joint.p1 : 0.0;
        const double ang = joint.kind == RandomJoint::kSlider ? joint.p2 : 0.0;
        slider->setLowerLinLimit(btScalar(-lin));
        slider->setUpperLinLimit(btScalar(lin));
        slider->setLowerAngLimit(btScalar(-ang));
        slider->setUpperAngLimit(btScalar(ang));
        constraint = std::move(slider);
        break;
      }
      case RandomJoint::kConeTwist: {
        // Bullet's one-body cone-twist takes the body frame as the world
        // frame too; the two-body form with the fixed body is exact.
        auto cone = std::make_unique<btConeTwistConstraint>(a, b, in_a, in_b);
        cone->setLimit(btScalar(joint.p1), btScalar(joint.p2), btScalar(joint.p3));
        constraint = std::move(cone);
        break;
      }
      case RandomJoint::kGeneric6Dof: {
        std::unique_ptr<btGeneric6DofConstraint> six;
        if (world_joint) {
          six = std::make_unique<btGeneric6DofConstraint>(a, in_a, true);
        } else {
          six = std::make_unique<btGeneric6DofConstraint>(a, b, in_a, in_b, true);
        }
        const btScalar lin(joint.p1), ang(joint.p2);
        six->setLinearLowerLimit(btVector3(-lin, -lin, -lin));
        six->setLinearUpperLimit(btVector3(lin, lin, lin));
        six->setAngularLowerLimit(btVector3(-ang, -ang, -ang));
        six->setAngularUpperLimit(btVector3(ang, ang, ang));
        constraint = std::move(six);
        break;
      }
      case RandomJoint::kSpring6Dof: {
        std::unique_ptr<btGeneric6DofSpring2Constraint> spring;
        if (world_joint) {
          spring = std::make_unique<btGeneric6DofSpring2Constraint>(a, in_a);
        } else {
          spring = std::make_unique<btGeneric6DofSpring2Constraint>(a, b, in_a, in_b);
        }
        btVector3 lin_low(0, 0, 0), lin_high(0, 0, 0), ang_low(0, 0, 0), ang_high(0, 0, 0);
        for (int axis = 0; axis < 6; ++axis) {
          if ((joint.spring_axes & (1 << axis)) == 0) continue;
          if (axis < 3) {
            lin_low[axis] = btScalar(-0.5);
            lin_high[axis] = btScalar(0.5);
          } else {
            ang_low[axis - 3] = btScalar(-1.0);
            ang_high[axis - 3] = btScalar(1.0);
          }
        }
        spring->setLinearLowerLimit(lin_low);
        spring->setLinearUpperLimit(lin_high);
        spring->setAngularLowerLimit(ang_low);
        spring->setAngularUpperLimit(ang_high);
        for (int axis = 0; axis < 6; ++axis) {
          if ((joint.spring_axes & (1 << axis)) == 0) continue;
          spring->enableSpring(axis, true);
          spring->setStiffness(axis, btScalar(joint.p1));
          spring->setDamping(axis, btScalar(joint.p2));
        }
        spring->setEquilibriumPoint();
        constraint = std::move(spring);
        break;
      }
      case RandomJoint::kFixed:
        constraint = std::make_unique<btFixedConstraint>(a, b, in_a, in_b);
        break;
      case RandomJoint::kGear:
        constraint = std::make_unique<btGearConstraint>(a, b, in_a.getBasis().getColumn(2),
                                                        in_b.getBasis().getColumn(2),
                                                        btScalar(joint.p1));
        break;
      case RandomJoint::kHinge2: {
        btVector3 anchor = pivot.getOrigin(), axis1 = axis_z, axis2 = axis_x;
        constraint = std::make_unique<btHinge2Constraint>(a, b, anchor, axis1, axis2);
        break;
      }
      case RandomJoint::kUniversal:
        constraint = std::make_unique<btUniversalConstraint>(a, b, pivot.getOrigin(), axis_z, axis_y);
        break;
    }
    constraint->setEnabled(joint.enabled);
    if (joint.breaking_impulse > 0.0) {
      constraint->setBreakingImpulseThreshold(btScalar(joint.breaking_impulse));
    }
    world_->dynamics_world().addConstraint(constraint.get(), joint.disable_collisions);
    constraints_.push_back(std::move(constraint));
  }
}

RandomWorld::~RandomWorld() {
  btDiscreteDynamicsWorld& world = world_->dynamics_world();
  for (const auto& constraint : constraints_) world.removeConstraint(constraint.get());
  for (const auto& body : owned_bodies_) world.removeRigidBody(body.get());
  world_.reset();
}

btRigidBody* RandomWorld::add_body(btCollisionShape* shape, const BodyOptions& options,
                                   bool isotropic) {
  const btScalar mass(options.mass);
  btVector3 inertia(0, 0, 0);
  if (mass > 0) {
    shape->calculateLocalInertia(mass, inertia);
    if (isotropic) {
      const btScalar mean = (inertia.x() + inertia.y() + inertia.z()) / btScalar(3);
      inertia = btVector3(mean, mean, mean);
    }
  }
  motion_states_.push_back(std::make_unique<btDefaultMotionState>(
      transform_of(options.orientation, options.position)));
  btRigidBody::btRigidBodyConstructionInfo info(mass, motion_states_.back().get(), shape, inertia);
  info.m_restitution = btScalar(options.restitution);
  info.m_friction = btScalar(options.friction);
  auto body = std::make_unique<btRigidBody>(info);
  body->setLinearFactor(to_bullet(options.linear_factor));
  body->setAngularFactor(to_bullet(options.angular_factor));
  if (options.kinematic) {
    body->setCollisionFlags(body->getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
    body->setActivationState(DISABLE_DEACTIVATION);
    kinematics_.push_back({body.get(), options.velocity, options.angular_velocity});
  } else if (options.never_sleep) {
    body->setActivationState(DISABLE_DEACTIVATION);
  }
  if (mass > 0 || options.kinematic) {
    body->setLinearVelocity(to_bullet(options.velocity));
    body->setAngularVelocity(to_bullet(options.angular_velocity));
  }
  world_->dynamics_world().addRigidBody(body.get());
  owned_bodies_.push_back(std::move(body));
  return owned_bodies_.back().get();
}

void RandomWorld::step() {
  const btScalar h(spec_.dt);
  for (const Kinematic& kinematic : kinematics_) {
    btMotionState* motion_state = kinematic.body->getMotionState();
    btTransform now;
    motion_state->getWorldTransform(now);
    btTransform next;
    btTransformUtil::integrateTransform(now, to_bullet(kinematic.velocity),
                                        to_bullet(kinematic.angular_velocity), h, next);
    motion_state->setWorldTransform(next);
  }
  world_->dynamics_world().stepSimulation(h, 1, h);
}

double RandomWorld::kinetic_energy() const {
  double energy = 0.0;
  for (const btRigidBody* body : bodies_) energy += scenes::kinetic_energy(*body);
  return energy;
}

bool RandomWorld::finite() const {
  for (const btRigidBody* body : all_bodies_) {
    const btTransform& t = body->getWorldTransform();
    if (!finite_vector(t.getOrigin()) || !finite_vector(t.getBasis().getRow(0)) ||
        !finite_vector(t.getBasis().getRow(1)) || !finite_vector(t.getBasis().getRow(2)) ||
        !finite_vector(body->getLinearVelocity()) || !finite_vector(body->getAngularVelocity())) {
      return false;
    }
  }
  return true;
}

// ── The harness ─────────────────────────────────────────────────────────────

double energy_gain_tolerance() {
  return sizeof(btScalar) == sizeof(double) ? kEnergyGainTolerance : kEnergyGainToleranceSingle;
}

namespace {

// CPU time of the calling thread [s] (POSIX CLOCK_THREAD_CPUTIME_ID). A
// world's budgets and its time per step must not depend on what else the
// machine runs: with wall-clock time, a 10^5-world run sharing two cores
// with a compiler flagged 12 worlds as over budget that take 0.2 s alone.
// A hang (an endless loop) still burns CPU time and is still caught.
struct Clock {
  using time_point = double;
  static time_point now() {
    timespec t{};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return double(t.tv_sec) + 1e-9 * double(t.tv_nsec);
  }
};

double seconds_since(Clock::time_point start) { return Clock::now() - start; }

// Relative gain of `after` over `before` (0 when not above the tolerance).
double relative_gain(double before, double after, double tolerance) {
  if (!(after > before * (1.0 + tolerance))) return 0.0;
  return before > 0.0 ? (after - before) / before : INFINITY;
}

}  // namespace

FuzzWorldResult run_fuzz_world(std::uint64_t seed, std::int64_t index, const FuzzOptions& options,
                               const RandomWorldOptions& world_options) {
  FuzzWorldResult result;
  result.index = index;
  const RandomWorldSpec spec = random_world_spec(seed, index, world_options);
  result.kind = spec.kind;
  const double tolerance = energy_gain_tolerance();
  const bool energy_world = spec.kind != RandomWorldKind::kGeneral;

  // Ours. The impact phase's gain of the current step, summed over clusters.
  double step_impact_gain = 0.0;
  int step = 0;
  // Bodies (world array indices) of the clusters simpact resolved in the
  // current and the previous step (reports not handed to the base solver):
  // what an impact leaves behind (an overlap, a closed contact) acts in the
  // base solve of the next step too.
  // Bodies of clusters handed to the base solver in the current step: that
  // step is the base solver's on them, whatever the previous one was.
  std::vector<int> step_resolved, previous_resolved, step_handed_over;
  auto on_impact = [&](const bullet::ImpactReport& report) {
    std::vector<int>& into = report.fallback_to_base ? step_handed_over : step_resolved;
    into.insert(into.end(), report.body_ids.begin(), report.body_ids.end());
    const double gain = relative_gain(report.energy_before, report.energy_after, tolerance);
    step_impact_gain += std::max(0.0, report.energy_after - report.energy_before);
    if (gain <= 0.0 && !options.trace) return;
    if (options.verbose || options.trace) {
      std::fprintf(stderr,
                   "  step %d: impact gains %.3g relative: law %s, status %d, %zu bodies, %zu "
                   "contacts, R %.3g, energy %.17g -> %.17g, %zu reflections%s%s\n",
                   step, gain, bullet::to_string(report.law), int(report.status), report.bodies.size(),
                   report.contacts.size(), report.restitution, report.energy_before,
                   report.energy_after, report.sequence.size(), report.message.empty() ? "" : ": ",
                   report.message.c_str());
      for (const auto& contact : report.contacts) {
        std::fprintf(stderr, "    contact: approach %.6g, impulse %.6g, mu %.3g, b %s\n",
                     contact.approach_speed, contact.impulse, contact.friction,
                     contact.b != nullptr && contact.b->isStaticOrKinematicObject() ? "fixed" : "dynamic");
      }
    }
    if (gain <= 0.0) return;
    if (energy_world) {
      ++result.impact_gains;
      result.worst_impact_gain = std::max(result.worst_impact_gain, gain);
      if (result.first_gain_step < 0) result.first_gain_step = step;
    } else {
      // A kinematic partner may legitimately give energy (it is infinitely
      // massive and moves), and so may a body with factors (a velocity along
      // a locked axis is such a motion; a factor of 0.5 scales impulses, so
      // kinetic energy is not what the law conserves). Every other impact
      // must not gain.
      for (const auto& contact : report.contacts) {
        if ((contact.a != nullptr && contact.a->isKinematicObject()) ||
            (contact.b != nullptr && contact.b->isKinematicObject())) {
          return;
        }
      }
      for (const btCollisionObject* object : report.bodies) {
        const btRigidBody* body = btRigidBody::upcast(object);
        if (body != nullptr && (body->getLinearFactor() != btVector3(1, 1, 1) ||
                                body->getAngularFactor() != btVector3(1, 1, 1))) {
          return;
        }
      }
      ++result.general_impact_gains;
      result.worst_general_impact_gain = std::max(result.worst_general_impact_gain, gain);
    }
  };
  try {
    RandomWorld world(spec, true, on_impact, options.split_all);
    result.initial_energy = world.kinetic_energy();
    std::vector<double> energies_before;  // per body, at the start of the step
    for (step = 0; step < options.steps; ++step) {
      const double before = world.kinetic_energy();
      step_impact_gain = 0.0;
      previous_resolved.swap(step_resolved);
      step_resolved.clear();
      step_handed_over.clear();
      if (spec.kind == RandomWorldKind::kConservative) {  // for the attribution of a gain, below
        energies_before.clear();
        for (const btRigidBody* body : world.bodies()) energies_before.push_back(scenes::kinetic_energy(*body));
      }
      const Clock::time_point start = Clock::now();
      try {
        world.step();
      } catch (const std::exception& error) {
        result.escaped = true;
        result.escape_message = error.what();
      } catch (...) {
        result.escaped = true;
        result.escape_message = "non-std exception";
      }
      const double took = seconds_since(start);
      result.seconds += took;
      result.slowest_step_seconds = std::max(result.slowest_step_seconds, took);
      if (took > options.step_budget_seconds) result.over_budget = true;
      if (result.escaped) {
        result.escape_step = step;
        break;
      }
      ++result.steps;
      if (!world.finite()) {
        result.non_finite = true;
        result.non_finite_step = step;
        break;
      }
      const double after = world.kinetic_energy();
      if (options.trace) std::fprintf(stderr, "  step %d (ours): kinetic energy %.17g -> %.17g\n", step, before, after);
      if (spec.kind == RandomWorldKind::kConservative) {
        const double gain = relative_gain(before, after, tolerance);
        // Whose is the step's gain: the bodies of the clusters simpact
        // resolved in this step (ours), else those it resolved in the
        // previous step (the base solver acting on what the impact left
        // behind), each when they end the step with more kinetic energy than
        // they started it with; else the base solver's alone.
        const auto contains = [](const std::vector<int>& ids, int id) {
          return std::find(ids.begin(), ids.end(), id) != ids.end();
        };
        // Whether the bodies in `ids` and not in `except` gained.
        const auto gained = [&](const std::vector<int>& ids, const std::vector<int>& except) {
          double energy_before = 0.0, energy_after = 0.0;
          bool any = false;
          for (size_t i = 0; i < world.bodies().size(); ++i) {
            const btRigidBody* body = world.bodies()[i];
            const int id = body->getWorldArrayIndex();
            if (!contains(ids, id) || contains(except, id)) continue;
            any = true;
            energy_before += energies_before[i];
            energy_after += scenes::kinetic_energy(*body);
          }
          return any && energy_after > energy_before + tolerance * std::max(before, after);
        };
        const bool ours = gained(step_resolved, {});
        const bool after_impact = !ours && gained(previous_resolved, step_handed_over);
        if (gain > 0.0) {
          if (options.verbose) {
            std::fprintf(stderr, "  step %d: kinetic energy %.17g -> %.17g (+%.3g relative)%s\n", step,
                         before, after, gain,
                         ours           ? ""
                         : after_impact ? ", on bodies simpact resolved in the previous step"
                                        : ", on bodies simpact resolved nothing for (the base solver's)");
          }
          if (after_impact) {
            ++result.after_impact_step_gains;
            result.worst_step_gain = std::max(result.worst_step_gain, gain);
            if (result.first_gain_step < 0) result.first_gain_step = step;
          } else if (!ours) {
            ++result.base_step_gains;
            result.worst_base_step_gain = std::max(result.worst_base_step_gain, gain);
          } else {
            ++result.step_gains;
            result.worst_step_gain = std::max(result.worst_step_gain, gain);
            if (result.first_gain_step < 0) result.first_gain_step = step;
          }
        }
      } else if (spec.kind == RandomWorldKind::kElastic) {
        const double gain = relative_gain(before + step_impact_gain, after, tolerance);
        if (gain > 0.0) {
          ++result.gyroscopic_gains;
          result.worst_gyroscopic_gain = std::max(result.worst_gyroscopic_gain, gain);
        }
      }
      if (result.seconds > options.world_budget_seconds) {
        result.over_budget = true;
        break;
      }
    }
    if (const bullet::ImpactSolver* solver = world.world().impact_solver()) {
      result.impacts = solver->stats().impacts;
      result.fallbacks = solver->stats().fallbacks;
      result.fallbacks_to_base = solver->stats().fallbacks_to_base;
      result.energy_restored = solver->stats().energy_restored;
    }
  } catch (const std::exception& error) {  // building the world
    result.escaped = true;
    result.escape_message = std::string("building the world: ") + error.what();
  }

  if (!options.run_stock) return result;
  try {
    RandomWorld world(spec, false);
    for (int s = 0; s < options.steps; ++s) {
      const double before = world.kinetic_energy();
      const Clock::time_point start = Clock::now();
      try {
        world.step();
      } catch (...) {
        result.stock_escaped = true;
        break;
      }
      result.stock_seconds += seconds_since(start);
      ++result.stock_steps;
      if (!world.finite()) {
        result.stock_non_finite = true;
        result.stock_non_finite_step = s;
        break;
      }
      const double after = world.kinetic_energy();
      result.stock_max_energy = std::max(result.stock_max_energy, after);
      if (options.trace) std::fprintf(stderr, "  step %d (stock): kinetic energy %.17g -> %.17g\n", s, before, after);
      if (spec.kind == RandomWorldKind::kConservative && relative_gain(before, after, tolerance) > 0.0) {
        ++result.stock_step_gains;
      }
      if (result.stock_seconds > options.world_budget_seconds) break;
    }
  } catch (...) {
    result.stock_escaped = true;
  }
  return result;
}

// ── The multibody variant ───────────────────────────────────────────────────

namespace {

// Trees reach at most 3 × 0.35 m + a 0.15 m collider from their root, so
// cells of 2.6 m keep them apart at the start.
constexpr double kTreeCell = 2.6;
constexpr int kTreeCellsX = 3, kTreeCellsY = 2, kTreeCellsZ = 3;

Eigen::Vector3d tree_cell(int cell) {
  const int i = cell % kTreeCellsX;
  const int j = (cell / kTreeCellsX) % kTreeCellsY;
  const int k = cell / (kTreeCellsX * kTreeCellsY);
  return {(i - 1) * kTreeCell, 1.5 + j * kTreeCell, (k - 1) * kTreeCell};
}

std::vector<Link> draw_links(Rng& rng, const Eigen::Vector3d& root, bool elastic) {
  const int count = 1 + rng.integer(3);
  std::vector<Link> links;
  for (int k = 0; k < count; ++k) {
    Link link;
    link.parent = rng.integer(k + 1) - 1;  // −1 (the base) or an earlier link
    const Eigen::Vector3d parent =
        link.parent < 0 ? root : links[std::size_t(link.parent)].center;
    link.pivot = parent + rng.scaled_unit_vector(0.05, 0.15);
    link.center = link.pivot + rng.scaled_unit_vector(0.15, 0.2);
    link.axis = rng.unit_vector();
    link.joint = rng.chance(0.75) ? JointKind::kRevolute : JointKind::kPrismatic;
    link.mass = rng.log_uniform(-1.0, 1.5);
    link.radius = rng.uniform(0.05, 0.15);
    link.restitution = elastic ? 1.0 : (rng.chance(0.5) ? 1.0 : rng.uniform());
    link.friction = elastic ? 0.0 : rng.uniform(0.0, 1.0);
    link.joint_velocity = rng.uniform(-3.0, 3.0);
    links.push_back(link);
  }
  return links;
}

// FNV-1a over the bytes of every multibody's base pose, base velocities
// and joint positions and velocities, and every rigid body's transform and
// velocities: a per-step fingerprint (trace) that shows a refactor changed
// nothing, bit for bit.
std::uint64_t multibody_world_digest(btMultiBodyDynamicsWorld& world) {
  Fingerprint digest;
  const auto add_vector = [&](const btVector3& v) {
    for (int i = 0; i < 3; ++i) digest.add(v[i]);
  };
  for (int m = 0; m < world.getNumMultibodies(); ++m) {
    const btMultiBody& mb = *world.getMultiBody(m);
    add_vector(mb.getBasePos());
    add_vector(mb.getBaseVel());
    add_vector(mb.getBaseOmega());
    for (int link = 0; link < mb.getNumLinks(); ++link) digest.add(mb.getJointPos(link), mb.getJointVel(link));
  }
  const btCollisionObjectArray& objects = world.getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    add_vector(objects[i]->getWorldTransform().getOrigin());
    if (const btRigidBody* body = btRigidBody::upcast(objects[i])) {
      add_vector(body->getLinearVelocity());
      add_vector(body->getAngularVelocity());
    }
  }
  return digest.value();
}

bool finite_multibody_world(btMultiBodyDynamicsWorld& world) {
  for (int m = 0; m < world.getNumMultibodies(); ++m) {
    const btMultiBody& mb = *world.getMultiBody(m);
    if (!finite_vector(mb.getBasePos()) || !finite_vector(mb.getBaseVel()) ||
        !finite_vector(mb.getBaseOmega())) {
      return false;
    }
    for (int link = 0; link < mb.getNumLinks(); ++link) {
      if (!std::isfinite(double(mb.getJointPos(link))) ||
          !std::isfinite(double(mb.getJointVel(link)))) {
        return false;
      }
    }
  }
  const btCollisionObjectArray& objects = world.getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    if (!finite_vector(objects[i]->getWorldTransform().getOrigin())) return false;
    if (const btRigidBody* body = btRigidBody::upcast(objects[i])) {
      if (!finite_vector(body->getLinearVelocity()) || !finite_vector(body->getAngularVelocity())) {
        return false;
      }
    }
  }
  return true;
}

std::unique_ptr<MultiBodyWorld> build_multibody_world(
    const RandomMultiBodySpec& spec, bool simpact,
    std::function<void(const bullet::MultiBodyImpactReport&)> on_impact) {
  MultiBodyWorldOptions options;
  options.simpact = simpact;
  options.config.law = spec.law;
  options.config.base = spec.base;
  options.config.seed = mix(spec.seed, std::uint64_t(spec.index));
  options.config.on_impact = std::move(on_impact);
  options.gravity = spec.gravity;
  auto world = std::make_unique<MultiBodyWorld>(options);
  if (spec.plane) {
    world->add_plane(Eigen::Vector3d::UnitY(), 0.0, spec.plane_restitution, spec.elastic ? 0.0 : 0.5);
  }
  for (const RandomMultiBodySpec::Tree& tree : spec.trees) {
    if (tree.free_base) {
      world->add_free_base_tree(tree.base, tree.links, tree.colliders);
    } else {
      world->add_fixed_base_chain(tree.base_position, tree.links);
    }
  }
  for (const RandomMultiBodySpec::Sphere& sphere : spec.spheres) {
    world->add_sphere(sphere.radius, sphere.options);
  }
  return world;
}

}  // namespace

RandomMultiBodySpec random_multibody_spec(std::uint64_t seed, std::int64_t index, bool box_links) {
  RandomMultiBodySpec spec;
  spec.seed = seed;
  spec.index = index;
  // Another stream than random_world_spec's for the same (seed, index).
  Rng rng(mix(mix(seed, 0x6D756C7469626F64ull), std::uint64_t(index)));
  spec.elastic = rng.chance(0.4);
  spec.law = rng.chance(0.5) ? bullet::ImpactLaw::kPropagative : bullet::ImpactLaw::kRouth;
  const int base = rng.integer(3);
  spec.base = base == 0   ? bullet::MultiBodyBaseSolver::kSequentialImpulse
              : base == 1 ? bullet::MultiBodyBaseSolver::kMlcpDantzig
                          : bullet::MultiBodyBaseSolver::kMlcpLemke;
  constexpr std::array<double, 3> kSteps = {1.0 / 60.0, 1.0 / 120.0, 1.0 / 240.0};
  spec.dt = kSteps[std::size_t(rng.integer(3))];
  if (rng.chance(0.7)) spec.gravity = Eigen::Vector3d(0.0, -kStandardGravity, 0.0);
  spec.plane = rng.chance(0.6);
  spec.plane_restitution = spec.elastic ? 1.0 : rng.uniform();
  std::array<int, kTreeCellsX * kTreeCellsY * kTreeCellsZ> cells{};
  for (std::size_t c = 0; c < cells.size(); ++c) cells[c] = int(c);
  for (std::size_t c = cells.size() - 1; c > 0; --c) {
    std::swap(cells[c], cells[std::size_t(rng.integer(int(c + 1)))]);
  }
  std::size_t next_cell = 0;
  const int trees = 1 + rng.integer(3);
  for (int t = 0; t < trees; ++t) {
    RandomMultiBodySpec::Tree tree;
    const Eigen::Vector3d root = tree_cell(cells[next_cell++]);
    tree.free_base = rng.chance(0.4);
    if (tree.free_base) {
      tree.base.center = root;
      tree.base.mass = rng.log_uniform(-1.0, 1.5);
      const double r = rng.uniform(0.08, 0.2);
      for (int axis = 0; axis < 3; ++axis) {
        tree.base.inertia[axis] = 0.4 * tree.base.mass * r * r * rng.uniform(0.5, 1.5);
      }
      tree.base.velocity = rng.scaled_unit_vector(0.0, 5.0);
      tree.base.angular_velocity = rng.scaled_unit_vector(0.0, 3.0);
      tree.base.orientation = rng.rotation();
      SphereCollider collider;
      collider.body = -1;
      collider.center = root;
      collider.radius = r;
      collider.restitution = spec.elastic ? 1.0 : rng.uniform();
      collider.friction = spec.elastic ? 0.0 : rng.uniform(0.0, 1.0);
      tree.colliders.push_back(collider);
    } else {
      tree.base_position = root;
    }
    tree.links = draw_links(rng, root, spec.elastic);
    spec.trees.push_back(std::move(tree));
  }
  if (rng.chance(0.3)) {
    // A pendulum cradle placed by a loop (issue #10: x = x₀ + 2 r i gains
    // energy on Featherstone pendula): fixed-base one-link pendula hinged
    // about z, bobs touching, the first swinging into the row.
    const int count = 2 + rng.integer(5);
    const double radius = rng.uniform(0.03, 0.1);
    const double length = rng.uniform(0.5, 1.5);
    const double speed = rng.uniform(0.2, 3.0);
    const double restitution = spec.elastic ? 1.0 : (rng.chance(0.5) ? 1.0 : rng.uniform());
    for (int i = 0; i < count; ++i) {
      RandomMultiBodySpec::Tree tree;
      tree.base_position = Eigen::Vector3d(-1.0 + double(i) * (2.0 * radius), 3.0, 5.5);
      Link bob;
      bob.pivot = tree.base_position;
      bob.center = tree.base_position - Eigen::Vector3d(0.0, length, 0.0);
      bob.axis = Eigen::Vector3d::UnitZ();
      bob.mass = 1.0;
      bob.radius = radius;
      bob.restitution = restitution;
      bob.friction = 0.0;
      // q̇ > 0 turns the bob towards +x (about +z, the bob below the pivot).
      bob.joint_velocity = i == 0 ? speed / length : 0.0;
      tree.links.push_back(bob);
      spec.trees.push_back(std::move(tree));
    }
  }
  const int spheres = rng.integer(4);
  for (int i = 0; i < spheres; ++i) {
    RandomMultiBodySpec::Sphere sphere;
    sphere.radius = rng.uniform(0.05, 0.3);
    sphere.options.mass = rng.log_uniform(-1.0, 1.5);
    sphere.options.position = tree_cell(cells[next_cell++]);
    // Aimed at a tree's root (within ±0.3 m) most of the time, so that
    // spheres strike links rather than fly off.
    Eigen::Vector3d direction = rng.unit_vector();
    if (rng.chance(0.7)) {
      const auto& target = spec.trees[std::size_t(rng.integer(int(spec.trees.size())))];
      const Eigen::Vector3d root = target.free_base ? target.base.center : target.base_position;
      const Eigen::Vector3d aim = root + rng.unit_vector() * 0.3 - sphere.options.position;
      if (aim.norm() > 0.0) direction = aim.normalized();
    }
    sphere.options.velocity = direction * rng.uniform(0.5, 10.0);
    sphere.options.restitution = spec.elastic ? 1.0 : rng.uniform();
    sphere.options.friction = spec.elastic ? 0.0 : rng.uniform(0.0, 1.0);
    sphere.options.never_sleep = rng.chance(0.5);
    spec.spheres.push_back(sphere);
  }
  // Law auto (drawn last, so every world keeps the bodies it had before the
  // multibody adapter took the shared laws).
  if (rng.chance(0.3)) spec.law = bullet::ImpactLaw::kAuto;
  if (box_links) {
    // Boxes within the links' spheres (half diagonal = radius), so that the
    // placement's clearances still hold; a stream of their own.
    Rng boxes(mix(mix(seed, 0x626F786C696E6B73ull), std::uint64_t(index)));
    for (RandomMultiBodySpec::Tree& tree : spec.trees)
      for (Link& link : tree.links) {
        if (!link.sphere_collider || !boxes.chance(0.5)) continue;
        const Eigen::Vector3d a = boxes.vector(0.3, 1.0);
        link.box_half_extents = a / a.norm() * link.radius;
      }
  }
  return spec;
}

std::string describe(const RandomMultiBodySpec& spec) {
  std::ostringstream out;
  out << "multibody " << (spec.elastic ? "elastic" : "general") << ", law "
      << bullet::to_string(spec.law) << ", base " << bullet::to_string(spec.base) << ", dt 1/"
      << std::lround(1.0 / spec.dt) << ", ground " << (spec.plane ? "plane" : "none") << ", g "
      << (spec.gravity.norm() > 0 ? "on" : "off") << "; trees:";
  for (const RandomMultiBodySpec::Tree& tree : spec.trees) {
    int prismatic = 0, boxes = 0;
    for (const Link& link : tree.links) {
      prismatic += link.joint == JointKind::kPrismatic ? 1 : 0;
      boxes += link.box_half_extents.isZero(0.0) ? 0 : 1;
    }
    out << ' ' << (tree.free_base ? "free" : "fixed") << '(' << tree.links.size() << " links";
    if (prismatic > 0) out << ", " << prismatic << " prismatic";
    if (boxes > 0) out << ", " << boxes << " boxes";
    out << ')';
  }
  out << "; " << spec.spheres.size() << " free spheres";
  return out.str();
}

FuzzWorldResult run_fuzz_multibody_world(std::uint64_t seed, std::int64_t index,
                                         const FuzzOptions& options, bool box_links) {
  FuzzWorldResult result;
  result.index = index;
  const RandomMultiBodySpec spec = random_multibody_spec(seed, index, box_links);
  result.kind = spec.elastic ? RandomWorldKind::kElastic : RandomWorldKind::kGeneral;
  const double tolerance = energy_gain_tolerance();
  int step = 0;
  auto on_impact = [&](const bullet::MultiBodyImpactReport& report) {
    const double gain = relative_gain(report.energy_before, report.energy_after, tolerance);
    if (gain <= 0.0 && !options.trace) return;
    if (options.verbose || options.trace) {
      std::fprintf(stderr,
                   "  step %d: impact gains %.3g relative: law %s, status %d, %zu multibodies, %zu "
                   "rigid, %zu contacts, R %.3g, energy %.17g -> %.17g%s%s\n",
                   step, gain, bullet::to_string(report.law), int(report.status), report.multibodies.size(),
                   report.bodies.size(), report.contacts.size(), report.restitution,
                   report.energy_before, report.energy_after, report.message.empty() ? "" : ": ",
                   report.message.c_str());
    }
    if (gain <= 0.0) return;
    ++result.impact_gains;
    result.worst_impact_gain = std::max(result.worst_impact_gain, gain);
    if (result.first_gain_step < 0) result.first_gain_step = step;
  };
  try {
    auto world = build_multibody_world(spec, true, on_impact);
    for (step = 0; step < options.steps; ++step) {
      const Clock::time_point start = Clock::now();
      try {
        world->step(spec.dt);
      } catch (const std::exception& error) {
        result.escaped = true;
        result.escape_message = error.what();
      } catch (...) {
        result.escaped = true;
        result.escape_message = "non-std exception";
      }
      const double took = seconds_since(start);
      result.seconds += took;
      result.slowest_step_seconds = std::max(result.slowest_step_seconds, took);
      if (took > options.step_budget_seconds) result.over_budget = true;
      if (result.escaped) {
        result.escape_step = step;
        break;
      }
      ++result.steps;
      if (options.trace)
        std::fprintf(stderr, "  step %d (ours): state digest %016llx\n", step,
                     static_cast<unsigned long long>(multibody_world_digest(world->dynamics_world())));
      if (!finite_multibody_world(world->dynamics_world())) {
        result.non_finite = true;
        result.non_finite_step = step;
        break;
      }
      if (result.seconds > options.world_budget_seconds) {
        result.over_budget = true;
        break;
      }
    }
    if (const bullet::MultiBodyImpactSolver* solver = world->impact_solver()) {
      result.impacts = solver->stats().impacts;
      result.fallbacks = solver->stats().fallbacks;
      result.fallbacks_to_base = solver->stats().fallbacks_to_base;
      result.energy_restored = solver->stats().energy_restored;
    }
  } catch (const std::exception& error) {
    result.escaped = true;
    result.escape_message = std::string("building the world: ") + error.what();
  }
  if (!options.run_stock) return result;
  try {
    auto world = build_multibody_world(spec, false, {});
    for (int s = 0; s < options.steps; ++s) {
      const Clock::time_point start = Clock::now();
      try {
        world->step(spec.dt);
      } catch (...) {
        result.stock_escaped = true;
        break;
      }
      result.stock_seconds += seconds_since(start);
      ++result.stock_steps;
      if (!finite_multibody_world(world->dynamics_world())) {
        result.stock_non_finite = true;
        result.stock_non_finite_step = s;
        break;
      }
      if (result.stock_seconds > options.world_budget_seconds) break;
    }
  } catch (...) {
    result.stock_escaped = true;
  }
  return result;
}

std::string failure_summary(const FuzzWorldResult& result) {
  std::ostringstream out;
  if (result.escaped) {
    out << "escape at step " << result.escape_step << ": " << result.escape_message << "; ";
  }
  if (result.non_finite) {
    out << "non-finite at step " << result.non_finite_step
        << (result.stock_non_finite ? " (stock too, step " : " (stock finite")
        << (result.stock_non_finite ? std::to_string(result.stock_non_finite_step) : std::string())
        << (!result.stock_non_finite && result.stock_diverged()
                ? ", but diverged to " + std::to_string(result.stock_max_energy) + " J"
                : std::string())
        << "); ";
  }
  if (result.impact_gains > 0) {
    out << result.impact_gains << " impact-phase gains (worst " << result.worst_impact_gain
        << " relative, first at step " << result.first_gain_step << "); ";
  }
  if (result.step_gains > 0 || result.after_impact_step_gains > 0) {
    out << result.step_gains << " step gains, " << result.after_impact_step_gains
        << " in the step after an impact (worst " << result.worst_step_gain
        << " relative; stock gained in " << result.stock_step_gains << " steps); ";
  }
  if (result.over_budget) {
    out << "over budget (slowest step " << result.slowest_step_seconds << " s, world "
        << result.seconds << " s after " << result.steps << " steps); ";
  }
  std::string text = out.str();
  if (text.size() >= 2) text.resize(text.size() - 2);
  return text;
}

}  // namespace simpact::scenes
