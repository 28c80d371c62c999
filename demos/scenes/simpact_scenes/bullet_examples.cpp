#include "simpact_scenes/bullet_examples.h"

#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>

namespace simpact::scenes {
namespace {

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

// The ground of BasicDemo and of the hinge chain: a static box of half
// extent 50 m whose top face is y = 0.
constexpr double kGroundHalfExtent = 50.0;

btRigidBody* add_ground_box(BulletWorld& world, double restitution) {
  BodyOptions ground;
  ground.mass = 0.0;
  ground.position = Eigen::Vector3d(0.0, -kGroundHalfExtent, 0.0);
  ground.restitution = restitution;
  return world.add_box(Eigen::Vector3d::Constant(kGroundHalfExtent), ground);
}

template <class Joint>
Joint* own(BulletExample& example, std::unique_ptr<Joint> joint, bool disable_collisions) {
  Joint* raw = joint.get();
  example.world->dynamics_world().addConstraint(raw, disable_collisions);
  example.joints.push_back(std::move(joint));
  return raw;
}

// The hinge chain's geometry.
constexpr double kLinkHalfLength = 0.25;
constexpr double kLinkHalfHeight = 0.05;
constexpr double kLinkHalfDepth = 0.1;
constexpr double kChainTilt = 0.2;  // [rad] about z, so the chain does not land flat

}  // namespace

BulletExample::~BulletExample() {
  if (world) {
    for (const auto& joint : joints) world->dynamics_world().removeConstraint(joint.get());
  }
}

std::unique_ptr<BulletExample> bullet_newtons_cradle(const WorldOptions& solver,
                                                     const BulletCradleOptions& options) {
  require(options.pendula >= 2, "cradle: pendula must be >= 2");
  require(std::isfinite(options.spacing) && options.spacing >= 2.0,
          "cradle: spacing must be >= 2 radii (the spheres may not overlap)");
  require(std::isfinite(options.radius) && options.radius > 0.0, "cradle: radius must be > 0");
  require(std::isfinite(options.length) && options.length > 2.0 * options.radius,
          "cradle: length must exceed the sphere diameter");
  require(std::isfinite(options.mass) && options.mass > 0.0, "cradle: mass must be > 0");
  require(std::isfinite(options.restitution) && options.restitution >= 0.0 &&
              options.restitution <= 1.0,
          "cradle: restitution must be in [0, 1]");
  require(std::isfinite(options.speed) && options.speed > 0.0, "cradle: speed must be > 0");
  require(std::isfinite(options.top_height), "cradle: top_height must be finite");

  auto example = std::make_unique<BulletExample>();
  WorldOptions world_options = solver;
  world_options.gravity = Eigen::Vector3d(0.0, -kStandardGravity, 0.0);
  world_options.restitution_combiner = RestitutionCombiner::kProduct;
  example->world = std::make_unique<BulletWorld>(world_options);
  BulletWorld& world = *example->world;

  // The slider's axis is its frame's x; the example turns the frames by
  // −π/2 about z so that x points down the rod.
  const btQuaternion down(btVector3(0, 0, 1), -SIMD_HALF_PI);
  const double omega = -options.speed / options.length;
  std::vector<btRigidBody*> tops;
  double x = 0.0;
  for (int i = 0; i < options.pendula; ++i) {
    BodyOptions top;
    top.mass = options.mass;
    top.position = Eigen::Vector3d(x, options.top_height, 0.0);
    top.never_sleep = true;
    BodyOptions bottom = top;
    bottom.position.y() -= options.length;
    bottom.restitution = options.restitution;
    bottom.friction = 0.0;
    if (i == 0) {
      top.angular_velocity = Eigen::Vector3d(0.0, 0.0, omega);
      bottom.angular_velocity = top.angular_velocity;
      bottom.velocity = Eigen::Vector3d(-options.speed, 0.0, 0.0);
    }
    btRigidBody* top_body = world.add_sphere(options.radius, top);
    btRigidBody* bottom_body = world.add_sphere(options.radius, bottom);
    tops.push_back(top_body);
    example->bodies.push_back(bottom_body);
    own(*example, std::make_unique<btPoint2PointConstraint>(*top_body, btVector3(0, 0, 0)), true);
    const btTransform in_top(down, btVector3(0, 0, 0));
    const btTransform in_bottom(down, btVector3(0, btScalar(options.length), 0));
    auto rod = std::make_unique<btSliderConstraint>(*top_body, *bottom_body, in_top, in_bottom, true);
    rod->setLowerLinLimit(0);
    rod->setUpperLinLimit(0);
    rod->setLowerAngLimit(0);
    rod->setUpperAngLimit(0);
    own(*example, std::move(rod), true);
    x -= options.spacing * options.radius;
  }
  example->bodies.insert(example->bodies.end(), tops.begin(), tops.end());
  example->dt = 1.0 / 60.0;
  return example;
}

std::unique_ptr<BulletExample> bullet_box_pile(const WorldOptions& solver, const BoxPileExampleOptions& options) {
  require(std::isfinite(options.restitution) && options.restitution >= 0.0 && options.restitution <= 1.0,
          "box pile: restitution must be in [0, 1]");
  auto example = std::make_unique<BulletExample>();
  WorldOptions world_options = solver;
  world_options.gravity = Eigen::Vector3d(0.0, -kStandardGravity, 0.0);
  world_options.restitution_combiner = RestitutionCombiner::kProduct;
  example->world = std::make_unique<BulletWorld>(world_options);
  add_ground_box(*example->world, options.restitution > 0.0 ? 1.0 : 0.0);
  constexpr int kSide = 5;
  for (int k = 0; k < kSide; ++k) {
    for (int i = 0; i < kSide; ++i) {
      for (int j = 0; j < kSide; ++j) {
        BodyOptions box;
        box.mass = 1.0;
        box.restitution = options.restitution;
        box.position = Eigen::Vector3d(0.2 * i, 2.0 + 0.2 * k, 0.2 * j);
        example->bodies.push_back(example->world->add_box(Eigen::Vector3d::Constant(0.1), box));
      }
    }
  }
  example->dt = 1.0 / 60.0;
  return example;
}

std::unique_ptr<BulletExample> bullet_hinge_chain(const WorldOptions& solver,
                                                  const HingeChainOptions& options) {
  require(options.links >= 2, "hinge chain: links must be >= 2");
  require(std::isfinite(options.height) && options.height > 0.0, "hinge chain: height must be > 0");
  require(std::isfinite(options.restitution) && options.restitution >= 0.0 &&
              options.restitution <= 1.0,
          "hinge chain: restitution must be in [0, 1]");
  auto example = std::make_unique<BulletExample>();
  WorldOptions world_options = solver;
  world_options.gravity = Eigen::Vector3d(0.0, -kStandardGravity, 0.0);
  world_options.restitution_combiner = RestitutionCombiner::kProduct;
  example->world = std::make_unique<BulletWorld>(world_options);
  add_ground_box(*example->world, 1.0);

  const Eigen::Vector3d along(std::cos(kChainTilt), std::sin(kChainTilt), 0.0);
  // Link 0's lower corner at its free end is the chain's lowest point.
  const Eigen::Vector3d start(0.0, options.height + kLinkHalfHeight * std::cos(kChainTilt), 0.0);
  const Eigen::Quaterniond tilt(Eigen::AngleAxisd(kChainTilt, Eigen::Vector3d::UnitZ()));
  for (int i = 0; i < options.links; ++i) {
    BodyOptions link;
    link.mass = 1.0;
    link.restitution = options.restitution;
    link.position = start + along * (kLinkHalfLength * (2 * i + 1));
    link.orientation = tilt;
    example->bodies.push_back(example->world->add_box(
        Eigen::Vector3d(kLinkHalfLength, kLinkHalfHeight, kLinkHalfDepth), link));
  }
  for (int i = 0; i + 1 < options.links; ++i) {
    own(*example,
        std::make_unique<btHingeConstraint>(
            *example->bodies[std::size_t(i)], *example->bodies[std::size_t(i + 1)],
            btVector3(btScalar(kLinkHalfLength), 0, 0), btVector3(btScalar(-kLinkHalfLength), 0, 0),
            btVector3(0, 0, 1), btVector3(0, 0, 1)),
        true);
  }
  example->dt = 1.0 / 60.0;
  return example;
}

double hinge_chain_joint_error(const BulletExample& chain) {
  double error = 0.0;
  for (std::size_t i = 0; i + 1 < chain.bodies.size(); ++i) {
    const btVector3 a =
        chain.bodies[i]->getCenterOfMassTransform() * btVector3(btScalar(kLinkHalfLength), 0, 0);
    const btVector3 b = chain.bodies[i + 1]->getCenterOfMassTransform() *
                        btVector3(btScalar(-kLinkHalfLength), 0, 0);
    error = std::max(error, double((a - b).length()));
  }
  return error;
}

CradleStrike cradle_first_strike(BulletExample& cradle, const BulletCradleOptions& options,
                                 int max_steps) {
  CradleStrike strike;
  const btRigidBody& striker = *cradle.bodies.front();
  int remaining = -1;  // steps left once the striker has slowed
  while (strike.steps < max_steps && remaining != 0) {
    cradle.world->step(cradle.dt);
    ++strike.steps;
    if (remaining > 0) {
      --remaining;
    } else if (std::abs(double(striker.getLinearVelocity().x())) < 0.5 * options.speed) {
      const double gaps = double(options.pendula - 1) * (options.spacing - 2.0) * options.radius;
      remaining = int(std::ceil(gaps / options.speed / cradle.dt)) + kStrikeSettleSteps;
    }
  }
  if (remaining != 0) return strike;
  for (int i = 0; i < options.pendula; ++i) {
    strike.outcome.push_back(double(cradle.bodies[std::size_t(i)]->getLinearVelocity().x()) /
                             -options.speed);
  }
  return strike;
}

bool example_state_finite(const BulletExample& example) {
  for (const btRigidBody* body : example.world->bodies()) {
    const btVector3& p = body->getCenterOfMassPosition();
    const btVector3& v = body->getLinearVelocity();
    const btVector3& w = body->getAngularVelocity();
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(double(p[i])) || !std::isfinite(double(v[i])) || !std::isfinite(double(w[i]))) {
        return false;
      }
    }
  }
  return true;
}

double example_max_speed(const BulletExample& example) {
  double speed = 0.0;
  for (const btRigidBody* body : example.bodies) {
    speed = std::max(speed, double(body->getLinearVelocity().length()));
  }
  return speed;
}

}  // namespace simpact::scenes
