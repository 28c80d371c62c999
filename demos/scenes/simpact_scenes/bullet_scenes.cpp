#include "simpact_scenes/bullet_scenes.h"

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

namespace simpact::scenes {
namespace {

// Sizes of the scenes without size arguments: a 10 cm ball and a 1 m cube
// are well inside Bullet's tuned range (its margins are 4 cm).
constexpr double kBallRadius = 0.05;
constexpr double kDropBallRadius = 0.1;
constexpr double kCubeHalfExtent = 0.5;
constexpr double kUnitMass = 1.0;
const Eigen::Vector3d kPaddleHalfExtents(0.05, 0.5, 0.5);
// box_drop's ground: a static slab 20 m wide, far larger than any dropped box.
const Eigen::Vector3d kGroundSlabHalfExtents(10.0, 0.5, 10.0);
// Relative overlap of the billiard rack's balls: rounding errors are ~1e-16
// relative, so 1e-9 (57 pm on a pool ball) closes every rounding gap and is
// far below any penetration Bullet corrects.
constexpr double kRackOverlap = 1e-9;

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

void require_positive(double value, const char* name) {
  require(std::isfinite(value) && value > 0.0,
          std::string(name) + " must be positive and finite, got " + std::to_string(value));
}

void require_restitution(double restitution) {
  require(std::isfinite(restitution) && restitution >= 0.0 && restitution <= 1.0,
          "restitution must be in [0, 1], got " + std::to_string(restitution));
}

enum class Gravity { kOff, kOn };

/// The conventions of bullet_scenes.h: every contact gets exactly r.
void prepare(BulletWorld& world, Gravity gravity) {
  world.set_restitution_combiner(RestitutionCombiner::kMinimum);
  world.set_gravity(gravity == Gravity::kOn ? Eigen::Vector3d(0.0, -kStandardGravity, 0.0)
                                            : Eigen::Vector3d::Zero());
}

/// Restitution and friction 1: a pair with the ground gets the other body's
/// values (minimum combiner for restitution, Bullet's product for friction).
btRigidBody* add_ground(BulletWorld& world) {
  BodyOptions ground;
  ground.restitution = 1.0;
  ground.friction = 1.0;
  return world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
}

bool is_coordinate_axis(const Eigen::Vector3d& axis) {
  return axis.cwiseAbs().maxCoeff() == 1.0 && axis.cwiseAbs().sum() == 1.0;
}

/// Bullet's factors scale each world coordinate, so they can hold a body to
/// a coordinate axis only; on another line it moves freely (the impulses of
/// a central chain keep it on the line up to rounding) and does not turn.
void free_on(const Eigen::Vector3d& axis, BodyOptions& body) {
  body.linear_factor = is_coordinate_axis(axis) ? Eigen::Vector3d(axis.cwiseAbs()) : Eigen::Vector3d::Ones();
  body.angular_factor = Eigen::Vector3d::Zero();
  body.never_sleep = true;
}

/// A dynamic body of the scene, moving along x only when `free_on_line`.
BodyOptions dynamic_body(double mass, double restitution, bool free_on_line) {
  BodyOptions body;
  body.mass = mass;
  body.restitution = restitution;
  if (free_on_line) free_on(Eigen::Vector3d::UnitX(), body);
  return body;
}

/// The largest s with |s·axis − previous_s·axis| ≤ distance as Bullet
/// computes it (btVector3 difference and length), from s = previous_s +
/// distance down an ulp at a time. Bullet only reports sphere–sphere
/// contacts at distance ≤ 0, and i·d rounds either way (3 × 0.1 > 0.3 in
/// double), so "touching" balls placed naively may be 1 ulp apart and
/// never touch; this makes them touch or overlap by a few ulps.
double place_along(const Eigen::Vector3d& axis, double previous_s, double distance) {
  const btVector3 base = to_bullet(previous_s * axis);
  const btScalar limit(distance);
  double s = double(btScalar(previous_s) + limit);
  while ((to_bullet(s * axis) - base).length() > limit)
    s = double(std::nextafter(btScalar(s), -std::numeric_limits<btScalar>::infinity()));
  return s;
}

/// place_along +x: the largest x with x − previous ≤ distance in Bullet's
/// arithmetic (√(d²) = |d| exactly in IEEE), touching or overlapping by at
/// most 1 ulp.
double place_after(double previous, double distance) {
  return place_along(Eigen::Vector3d::UnitX(), previous, distance);
}

/// One 1 kg body at rest whose bottom (`half_height` below its centre) is
/// `height` above the ground, under gravity; `add` adds it to the world.
template <class Add>
Scene drop_onto_ground(BulletWorld& world, const char* name, double height, double restitution,
                       double half_height, Add add) {
  require(std::isfinite(height) && height >= 0.0, std::string(name) + ": height must be >= 0");
  require_restitution(restitution);
  prepare(world, Gravity::kOn);
  Scene scene;
  scene.ground = add_ground(world);
  BodyOptions body = dynamic_body(kUnitMass, restitution, false);
  body.position.y() = half_height + height;
  scene.bodies.push_back(add(body));
  scene.strike_time = std::sqrt(2.0 * height / kStandardGravity);
  return scene;
}

}  // namespace

Scene newtons_cradle(BulletWorld& world, const CradleOptions& options) {
  require(options.balls >= 2, "newtons_cradle needs at least 2 balls");
  require(options.incoming >= 1 && options.incoming < options.balls,
          "newtons_cradle: incoming must be in [1, balls)");
  require_positive(options.speed, "newtons_cradle speed");
  require_restitution(options.restitution);
  require_positive(options.radius, "newtons_cradle radius");
  require_positive(options.mass, "newtons_cradle mass");
  require(std::isfinite(options.gap) && options.gap >= 0.0, "newtons_cradle: gap must be >= 0");
  if (options.strings) require_positive(options.string_length, "newtons_cradle string_length");
  const Eigen::Vector3d& axis = options.axis;
  require(axis.allFinite() && std::abs(axis.norm() - 1.0) <= kAxisNormTolerance,
          "newtons_cradle: axis must be a unit vector");
  require(!options.strings || axis.y() == 0.0,
          "newtons_cradle: with strings the axis must be horizontal (y = 0)");
  prepare(world, options.strings ? Gravity::kOn : Gravity::kOff);

  Scene scene;
  scene.strike_time = options.gap / options.speed;
  const double diameter = 2.0 * options.radius;
  double s = 0.0;  // the ball's distance along the axis from ball 0 [m]
  for (int i = 0; i < options.balls; ++i) {
    BodyOptions ball = dynamic_body(options.mass, options.restitution, false);
    if (!options.strings) free_on(axis, ball);
    ball.friction = 0.0;
    ball.never_sleep = true;
    if (i > 0) s = place_along(axis, s, diameter + (i == options.incoming ? options.gap : 0.0));
    ball.position = s * axis;
    if (i < options.incoming) {
      ball.velocity = options.speed * axis;
      // Swinging about the pivot: v = ω × (x − pivot) with x − pivot = −L ŷ,
      // so ω = (speed / L) axis × ŷ.
      if (options.strings)
        ball.angular_velocity = (options.speed / options.string_length) * axis.cross(Eigen::Vector3d::UnitY());
    }
    btRigidBody* body = world.add_sphere(options.radius, ball);
    if (options.strings) {
      world.add_point2point(body, ball.position + options.string_length * Eigen::Vector3d::UnitY());
    }
    scene.bodies.push_back(body);
  }
  return scene;
}

Scene ball_chain(BulletWorld& world, int balls, double speed, double restitution,
                 const Eigen::Vector3d& axis) {
  CradleOptions chain;
  chain.axis = axis;
  chain.balls = balls;
  chain.speed = speed;
  chain.restitution = restitution;
  chain.radius = kBallRadius;
  chain.mass = kUnitMass;
  chain.strings = false;
  return newtons_cradle(world, chain);
}

Scene joint_chain(BulletWorld& world, int links, double speed, double restitution) {
  require(links >= 1, "joint_chain needs at least one link");
  require_positive(speed, "joint_chain speed");
  require_restitution(restitution);
  prepare(world, Gravity::kOff);
  Scene scene;
  const double diameter = 2.0 * kBallRadius;
  double x = 0.0;
  for (int i = 0; i <= links; ++i) {
    BodyOptions ball = dynamic_body(kUnitMass, restitution, false);
    ball.friction = 0.0;
    ball.never_sleep = true;
    if (i > 0) x = place_after(x, diameter);
    ball.position.x() = x;
    if (i == 0) ball.velocity.x() = speed;
    btRigidBody* body = world.add_sphere(kBallRadius, ball);
    if (i > 1)
      world.add_point2point(scene.bodies.back(), body, Eigen::Vector3d(x - kBallRadius, 0.0, 0.0));
    scene.bodies.push_back(body);
  }
  return scene;
}

Scene ball_drop(BulletWorld& world, double height, double restitution) {
  return drop_onto_ground(world, "ball_drop", height, restitution, kDropBallRadius,
                          [&world](const BodyOptions& ball) {
                            return world.add_sphere(kDropBallRadius, ball);
                          });
}

Scene head_on(BulletWorld& world, double m1, double m2, double v1, double v2, double restitution) {
  require_positive(m1, "head_on m1");
  require_positive(m2, "head_on m2");
  require(std::isfinite(v1) && std::isfinite(v2), "head_on: velocities must be finite");
  require_restitution(restitution);
  prepare(world, Gravity::kOff);
  Scene scene;
  const double masses[2] = {m1, m2};
  const double velocities[2] = {v1, v2};
  for (int i = 0; i < 2; ++i) {
    BodyOptions ball = dynamic_body(masses[i], restitution, true);
    ball.position.x() = i * 2.0 * kBallRadius;
    ball.velocity.x() = velocities[i];
    scene.bodies.push_back(world.add_sphere(kBallRadius, ball));
  }
  return scene;
}

Scene kinematic_paddle(BulletWorld& world, double paddle_speed, double ball_speed,
                       double restitution) {
  require(std::isfinite(paddle_speed) && std::isfinite(ball_speed),
          "kinematic_paddle: speeds must be finite");
  require_restitution(restitution);
  prepare(world, Gravity::kOff);
  Scene scene;
  BodyOptions paddle;
  paddle.mass = 0.0;
  paddle.kinematic = true;
  paddle.restitution = 1.0;
  paddle.position.x() = -kBallRadius - kPaddleHalfExtents.x();
  paddle.velocity.x() = paddle_speed;
  scene.paddle = world.add_box(kPaddleHalfExtents, paddle);
  BodyOptions ball = dynamic_body(kUnitMass, restitution, true);
  ball.velocity.x() = ball_speed;
  scene.bodies.push_back(world.add_sphere(kBallRadius, ball));
  return scene;
}

Scene box_on_ground(BulletWorld& world, double drop_height, double restitution) {
  return drop_onto_ground(world, "box_on_ground", drop_height, restitution, kCubeHalfExtent,
                          [&world](const BodyOptions& box) {
                            return world.add_box(Eigen::Vector3d::Constant(kCubeHalfExtent), box);
                          });
}

Scene box_stack(BulletWorld& world, int boxes, double restitution) {
  require(boxes >= 1, "box_stack needs at least 1 box");
  require_restitution(restitution);
  prepare(world, Gravity::kOn);
  Scene scene;
  scene.ground = add_ground(world);
  for (int i = 0; i < boxes; ++i) {
    BodyOptions box = dynamic_body(kUnitMass, restitution, false);
    box.position.y() = (2 * i + 1) * kCubeHalfExtent;
    scene.bodies.push_back(world.add_box(Eigen::Vector3d::Constant(kCubeHalfExtent), box));
  }
  return scene;
}

Scene billiard_break(BulletWorld& world, const BilliardOptions& options) {
  require_positive(options.speed, "billiard_break speed");
  require_restitution(options.restitution);
  require_positive(options.radius, "billiard_break radius");
  require_positive(options.mass, "billiard_break mass");
  require(std::isfinite(options.friction) && options.friction >= 0.0,
          "billiard_break: friction must be >= 0");
  require(std::isfinite(options.gap) && options.gap >= 0.0, "billiard_break: gap must be >= 0");
  require(options.rows >= 1, "billiard_break: rows must be >= 1");
  prepare(world, Gravity::kOn);
  Scene scene;
  scene.ground = add_ground(world);
  scene.strike_time = options.gap / options.speed;
  const double r = options.radius;
  auto add_ball = [&](double x, double z, double speed) {
    BodyOptions ball = dynamic_body(options.mass, options.restitution, false);
    ball.friction = options.friction;
    ball.position = Eigen::Vector3d(x, r, z);
    ball.velocity.x() = speed;
    scene.bodies.push_back(world.add_sphere(r, ball));
  };
  add_ball(0.0, 0.0, options.speed);
  // Rows of a close-packed triangle are √3 r apart and neighbours touch; the
  // rack is shrunk by kRackOverlap so that rounding (of √3, of k·r) cannot
  // open gaps that Bullet would report as no contact.
  const double apex = place_after(0.0, 2.0 * r + options.gap);
  const double pitch = r * (1.0 - kRackOverlap);
  for (int row = 0; row < options.rows; ++row) {
    for (int j = 0; j <= row; ++j) {
      add_ball(apex + row * std::sqrt(3.0) * pitch, (2 * j - row) * pitch, 0.0);
    }
  }
  return scene;
}

Scene box_pile(BulletWorld& world, const BoxPileOptions& options) {
  require(options.columns >= 1 && options.layers >= 1, "box_pile needs at least one box");
  require_positive(options.half_extent, "box_pile half_extent");
  require(std::isfinite(options.spacing) && options.spacing >= 0.0,
          "box_pile: spacing must be >= 0");
  require(std::isfinite(options.height) && options.height >= 0.0,
          "box_pile: height must be >= 0");
  require_restitution(options.restitution);
  prepare(world, Gravity::kOn);
  Scene scene;
  scene.ground = add_ground(world);
  const double pitch = 2.0 * options.half_extent + options.spacing;
  for (int layer = 0; layer < options.layers; ++layer) {
    const double shift = (layer % 2) * 0.5 * pitch;
    for (int column = 0; column < options.columns; ++column) {
      BodyOptions box = dynamic_body(kUnitMass, options.restitution, false);
      box.friction = options.friction;
      box.position = Eigen::Vector3d(column * pitch + shift,
                                     options.height + options.half_extent + layer * pitch, 0.0);
      scene.bodies.push_back(world.add_box(Eigen::Vector3d::Constant(options.half_extent), box));
    }
  }
  return scene;
}

Scene box_drop(BulletWorld& world, const BoxDropOptions& options) {
  require(options.half_extents.allFinite() && (options.half_extents.array() > 0.0).all(),
          "box_drop: half extents must be positive and finite");
  require(std::isfinite(options.drop_height) && options.drop_height >= 0.0,
          "box_drop: drop_height must be >= 0");
  require_positive(options.mass, "box_drop mass");
  require(std::isfinite(options.friction) && options.friction >= 0.0,
          "box_drop: friction must be >= 0");
  require_restitution(options.restitution);
  require(options.boxes >= 1, "box_drop: boxes must be >= 1");
  prepare(world, Gravity::kOn);
  Scene scene;
  BodyOptions ground;
  ground.mass = 0.0;
  ground.restitution = 1.0;
  ground.friction = 1.0;
  ground.position = Eigen::Vector3d(0.0, -kGroundSlabHalfExtents.y(), 0.0);
  scene.ground = world.add_box(kGroundSlabHalfExtents, ground);
  BodyOptions box = dynamic_body(options.mass, options.restitution, false);
  box.friction = options.friction;
  for (int k = 0; k < options.boxes; ++k) {
    box.position.y() = (2 * k + 1) * options.half_extents.y() + options.drop_height;
    scene.bodies.push_back(world.add_box(options.half_extents, box));
  }
  scene.strike_time = std::sqrt(2.0 * options.drop_height / kStandardGravity);
  return scene;
}

}  // namespace simpact::scenes
