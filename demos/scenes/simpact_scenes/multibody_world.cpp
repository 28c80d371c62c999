#include "simpact_scenes/multibody_world.h"

#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace simpact::scenes {

namespace {

btVector3 bt(const Eigen::Vector3d& v) { return btVector3(btScalar(v.x()), btScalar(v.y()), btScalar(v.z())); }

void check(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("MultiBodyWorld: " + message);
}

}  // namespace

MultiBodyWorld::MultiBodyWorld(const MultiBodyWorldOptions& options)
    : collision_configuration_(std::make_unique<btDefaultCollisionConfiguration>()),
      dispatcher_(std::make_unique<btCollisionDispatcher>(collision_configuration_.get())),
      broadphase_(std::make_unique<btDbvtBroadphase>()) {
  btMultiBodyConstraintSolver* solver = nullptr;
  if (options.simpact) {
    impact_solver_ = std::make_unique<bullet::MultiBodyImpactSolver>(options.config);
    solver = impact_solver_.get();
  } else {
    stock_solver_ = std::make_unique<btMultiBodyConstraintSolver>();
    solver = stock_solver_.get();
  }
  world_ = std::make_unique<btMultiBodyDynamicsWorld>(dispatcher_.get(), broadphase_.get(), solver,
                                                      collision_configuration_.get());
  if (impact_solver_) impact_solver_->attach(*world_);
  world_->setGravity(bt(options.gravity));
}

MultiBodyWorld::~MultiBodyWorld() {
  for (auto& body : bodies_) world_->removeRigidBody(body.get());
  for (auto& collider : colliders_) world_->removeCollisionObject(collider.get());
  for (auto& mb : multibodies_) world_->removeMultiBody(mb.get());
}

btMultiBody* MultiBodyWorld::add_fixed_base_chain(const Eigen::Vector3d& base_position,
                                                  const std::vector<RevoluteLink>& links) {
  check(!links.empty(), "a chain needs at least one link");
  check(base_position.allFinite(), "base_position must be finite");
  for (size_t i = 0; i < links.size(); ++i) {
    const RevoluteLink& l = links[i];
    const std::string at = "link " + std::to_string(i) + ": ";
    check(l.parent >= -1 && l.parent < static_cast<int>(i), at + "parent must be -1 or an earlier link");
    check(std::isfinite(l.mass) && l.mass > 0, at + "mass must be positive and finite");
    check(std::isfinite(l.radius) && l.radius > 0, at + "radius must be positive and finite");
    check(l.axis.allFinite() && l.axis.norm() > 0, at + "axis must be finite and non-zero");
    check(l.pivot.allFinite() && l.center.allFinite() && std::isfinite(l.joint_velocity),
          at + "pivot, center and joint_velocity must be finite");
  }
  const int n = static_cast<int>(links.size());
  // Fixed base: its mass and inertia are never used; 1 keeps Bullet's setup sane.
  auto mb = std::make_unique<btMultiBody>(n, btScalar(1), btVector3(1, 1, 1), true, false);
  mb->setBaseWorldTransform(btTransform(btQuaternion::getIdentity(), bt(base_position)));
  for (int i = 0; i < n; ++i) {
    const RevoluteLink& l = links[static_cast<size_t>(i)];
    const Eigen::Vector3d parent_com = l.parent < 0 ? base_position : links[static_cast<size_t>(l.parent)].center;
    const double inertia = 0.4 * l.mass * l.radius * l.radius;
    mb->setupRevolute(i, btScalar(l.mass), btVector3(btScalar(inertia), btScalar(inertia), btScalar(inertia)),
                      l.parent, btQuaternion::getIdentity(), bt(l.axis.normalized()), bt(l.pivot - parent_com),
                      bt(l.center - l.pivot), true);
  }
  mb->finalizeMultiDof();
  mb->setLinearDamping(0);
  mb->setAngularDamping(0);
  mb->setCanSleep(false);
  mb->setHasSelfCollision(false);
  for (int i = 0; i < n; ++i) mb->setJointVel(i, btScalar(links[static_cast<size_t>(i)].joint_velocity));
  world_->addMultiBody(mb.get());
  for (int i = 0; i < n; ++i) {
    const RevoluteLink& l = links[static_cast<size_t>(i)];
    shapes_.push_back(std::make_unique<btSphereShape>(btScalar(l.radius)));
    auto collider = std::make_unique<btMultiBodyLinkCollider>(mb.get(), i);
    collider->setCollisionShape(shapes_.back().get());
    collider->setWorldTransform(btTransform(btQuaternion::getIdentity(), bt(l.center)));
    collider->setRestitution(btScalar(l.restitution));
    collider->setFriction(btScalar(l.friction));
    world_->addCollisionObject(collider.get(), btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
    mb->getLink(i).m_collider = collider.get();
    colliders_.push_back(std::move(collider));
  }
  multibodies_.push_back(std::move(mb));
  return multibodies_.back().get();
}

btMultiBody* MultiBodyWorld::add_pendulum(const Eigen::Vector3d& pivot, const Eigen::Vector3d& bob,
                                          double radius, double mass, double restitution,
                                          double joint_velocity) {
  RevoluteLink link;
  link.pivot = pivot;
  link.center = bob;
  link.radius = radius;
  link.mass = mass;
  link.restitution = restitution;
  link.joint_velocity = joint_velocity;
  return add_fixed_base_chain(pivot, {link});
}

btRigidBody* MultiBodyWorld::add_sphere(double radius, const BodyOptions& body) {
  check(std::isfinite(radius) && radius > 0, "sphere radius must be positive and finite");
  check(std::isfinite(body.mass) && body.mass >= 0, "sphere mass must be finite and >= 0");
  shapes_.push_back(std::make_unique<btSphereShape>(btScalar(radius)));
  btVector3 inertia(0, 0, 0);
  if (body.mass > 0) shapes_.back()->calculateLocalInertia(btScalar(body.mass), inertia);
  const btTransform transform(btQuaternion(btScalar(body.orientation.x()), btScalar(body.orientation.y()),
                                           btScalar(body.orientation.z()), btScalar(body.orientation.w())),
                              bt(body.position));
  motion_states_.push_back(std::make_unique<btDefaultMotionState>(transform));
  btRigidBody::btRigidBodyConstructionInfo info(btScalar(body.mass), motion_states_.back().get(),
                                                shapes_.back().get(), inertia);
  info.m_restitution = btScalar(body.restitution);
  info.m_friction = btScalar(body.friction);
  bodies_.push_back(std::make_unique<btRigidBody>(info));
  btRigidBody* rigid = bodies_.back().get();
  rigid->setLinearVelocity(bt(body.velocity));
  rigid->setAngularVelocity(bt(body.angular_velocity));
  if (body.never_sleep) rigid->setActivationState(DISABLE_DEACTIVATION);
  world_->addRigidBody(rigid);
  return rigid;
}

btRigidBody* MultiBodyWorld::add_plane(const Eigen::Vector3d& normal, double offset, double restitution,
                                       double friction) {
  check(normal.allFinite() && normal.norm() > 0 && std::isfinite(offset), "plane needs a finite non-zero normal");
  const Eigen::Vector3d unit = normal.normalized();
  shapes_.push_back(std::make_unique<btStaticPlaneShape>(bt(unit), btScalar(offset)));
  motion_states_.push_back(std::make_unique<btDefaultMotionState>());
  btRigidBody::btRigidBodyConstructionInfo info(0, motion_states_.back().get(), shapes_.back().get());
  info.m_restitution = btScalar(restitution);
  info.m_friction = btScalar(friction);
  bodies_.push_back(std::make_unique<btRigidBody>(info));
  world_->addRigidBody(bodies_.back().get());
  return bodies_.back().get();
}

void MultiBodyWorld::step(double dt, int steps) {
  for (int i = 0; i < steps; ++i) world_->stepSimulation(btScalar(dt), 1, btScalar(dt));
}

namespace {
// Link velocities in the links' frames at the current configuration.
void tree_velocities(const btMultiBody& mb, btAlignedObjectArray<btVector3>& omega,
                     btAlignedObjectArray<btVector3>& vel) {
  btMultiBody& mutable_mb = const_cast<btMultiBody&>(mb);
  btAlignedObjectArray<btQuaternion> world_to_local;
  btAlignedObjectArray<btVector3> local_origin;
  world_to_local.resize(mb.getNumLinks() + 1);
  local_origin.resize(mb.getNumLinks() + 1);
  mutable_mb.forwardKinematics(world_to_local, local_origin);  // refreshes the cached link frames
  omega.resize(mb.getNumLinks() + 1);
  vel.resize(mb.getNumLinks() + 1);
  mb.compTreeLinkVelocities(&omega[0], &vel[0]);
}
}  // namespace

double MultiBodyWorld::kinetic_energy(const btMultiBody& mb) {
  btAlignedObjectArray<btVector3> omega, vel;
  tree_velocities(mb, omega, vel);
  double energy = 0.0;
  for (int i = 0; i < mb.getNumLinks(); ++i) {
    const btVector3& w = omega[i + 1];
    const btVector3& inertia = mb.getLinkInertia(i);
    energy += 0.5 * double(mb.getLinkMass(i)) * double(vel[i + 1].length2());
    for (int k = 0; k < 3; ++k) energy += 0.5 * double(inertia[k]) * double(w[k]) * double(w[k]);
  }
  if (!mb.hasFixedBase()) {
    energy += 0.5 * double(mb.getBaseMass()) * double(vel[0].length2());
    for (int k = 0; k < 3; ++k) energy += 0.5 * double(mb.getBaseInertia()[k]) * double(omega[0][k]) * double(omega[0][k]);
  }
  return energy;
}

double MultiBodyWorld::joint_velocity(const btMultiBody& mb, int link) {
  return double(mb.getJointVelMultiDof(link)[0]);
}

Eigen::Vector3d MultiBodyWorld::link_velocity(const btMultiBody& mb, int link) {
  btAlignedObjectArray<btVector3> omega, vel;
  tree_velocities(mb, omega, vel);
  const btVector3 world = mb.localDirToWorld(link, vel[link + 1]);
  return {double(world.x()), double(world.y()), double(world.z())};
}

}  // namespace simpact::scenes
