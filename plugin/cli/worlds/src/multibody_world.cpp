#include "simpact_worlds/multibody_world.h"

#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <cmath>
#include <stdexcept>
#include <string>

namespace simpact::worlds {

namespace {

btVector3 bt(const Eigen::Vector3d& v) { return btVector3(btScalar(v.x()), btScalar(v.y()), btScalar(v.z())); }

void check(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("MultiBodyWorld: " + message);
}

Eigen::Vector3d link_inertia(const RevoluteLink& l) {
  if (l.inertia.isZero(0.0)) return Eigen::Vector3d::Constant(0.4 * l.mass * l.radius * l.radius);
  return l.inertia;
}

void check_links(const std::vector<RevoluteLink>& links, bool free_base) {
  for (size_t i = 0; i < links.size(); ++i) {
    const RevoluteLink& l = links[i];
    const std::string at = "link " + std::to_string(i) + ": ";
    check(l.parent >= -1 && l.parent < static_cast<int>(i), at + "parent must be -1 or an earlier link");
    check(std::isfinite(l.mass) && l.mass > 0, at + "mass must be positive and finite");
    check(std::isfinite(l.radius) && l.radius > 0, at + "radius must be positive and finite");
    check(l.axis.allFinite() && l.axis.norm() > 0, at + "axis must be finite and non-zero");
    check(l.pivot.allFinite() && l.center.allFinite() && std::isfinite(l.joint_velocity),
          at + "pivot, center and joint_velocity must be finite");
    check(l.inertia.allFinite() && (l.inertia.isZero(0.0) || l.inertia.minCoeff() > 0),
          at + "inertia must be all zero (sphere) or positive and finite");
    check(free_base || l.sphere_collider, at + "a fixed-base chain link needs its sphere collider");
    check(l.joint == JointKind::kRevolute || l.joint == JointKind::kPrismatic ||
              l.joint == JointKind::kSpherical || l.joint == JointKind::kPlanar ||
              l.joint == JointKind::kFixed,
          at + "joint must be revolute, prismatic, spherical, planar or fixed");
    check(l.joint_velocities.allFinite(), at + "joint_velocities must be finite");
    check(l.box_half_extents.allFinite() &&
              (l.box_half_extents.isZero(0.0) || l.box_half_extents.minCoeff() > 0),
          at + "box_half_extents must be all zero (a sphere) or positive and finite");
    check(l.box_half_extents.isZero(0.0) || l.sphere_collider,
          at + "box_half_extents replaces the link's own collider: it needs sphere_collider true");
  }
}

// The link's own collider shape: its box when it has one, else its sphere.
std::unique_ptr<btCollisionShape> link_shape(const RevoluteLink& l) {
  if (!l.box_half_extents.isZero(0.0)) return std::make_unique<btBoxShape>(bt(l.box_half_extents));
  return std::make_unique<btSphereShape>(btScalar(l.radius));
}

// Link i of `mb`, its frame the world's at q = 0: for a parent whose frame
// is rotated by `parent_to_world` (a free base's orientation), the zero
// rotation from the parent's frame to the link's is that rotation and the
// pivot offset is expressed in the parent's frame. `rotated` false keeps the
// identity path exactly as it always was (bit-for-bit).
void setup_link(btMultiBody& mb, int i, const RevoluteLink& l, const Eigen::Vector3d& parent_com,
                bool rotated, const Eigen::Quaterniond& parent_to_world) {
  Eigen::Vector3d offset = l.pivot - parent_com;
  btQuaternion rotation = btQuaternion::getIdentity();
  if (rotated) {
    offset = parent_to_world.conjugate() * offset;
    rotation = btQuaternion(btScalar(parent_to_world.x()), btScalar(parent_to_world.y()),
                            btScalar(parent_to_world.z()), btScalar(parent_to_world.w()));
  }
  if (l.joint == JointKind::kPrismatic) {
    mb.setupPrismatic(i, btScalar(l.mass), bt(link_inertia(l)), l.parent, rotation, bt(l.axis.normalized()),
                      bt(offset), bt(l.center - l.pivot), true);
  } else if (l.joint == JointKind::kSpherical) {
    mb.setupSpherical(i, btScalar(l.mass), bt(link_inertia(l)), l.parent, rotation, bt(offset),
                      bt(l.center - l.pivot), true);
  } else if (l.joint == JointKind::kFixed) {
    mb.setupFixed(i, btScalar(l.mass), bt(link_inertia(l)), l.parent, rotation, bt(offset),
                  bt(l.center - l.pivot), true);
  } else if (l.joint == JointKind::kPlanar) {
    Eigen::Vector3d com_offset = l.center - parent_com;
    if (rotated) com_offset = parent_to_world.conjugate() * com_offset;
    mb.setupPlanar(i, btScalar(l.mass), bt(link_inertia(l)), l.parent, rotation, bt(l.axis.normalized()),
                   bt(com_offset), true);
  } else {
    mb.setupRevolute(i, btScalar(l.mass), bt(link_inertia(l)), l.parent, rotation, bt(l.axis.normalized()),
                     bt(offset), bt(l.center - l.pivot), true);
  }
}

// q̇ of link i from its description (a fixed joint has none).
void set_joint_velocity(btMultiBody& mb, int i, const RevoluteLink& l) {
  if (l.joint == JointKind::kFixed) return;
  if (l.joint == JointKind::kSpherical || l.joint == JointKind::kPlanar) {
    const btScalar q[3] = {btScalar(l.joint_velocities.x()), btScalar(l.joint_velocities.y()),
                           btScalar(l.joint_velocities.z())};
    mb.setJointVelMultiDof(i, q);
    return;
  }
  mb.setJointVel(i, btScalar(l.joint_velocity));
}

}  // namespace

MultiBodyWorld::MultiBodyWorld(const MultiBodyWorldOptions& options)
    : collision_configuration_(std::make_unique<btDefaultCollisionConfiguration>()),
      dispatcher_(std::make_unique<btCollisionDispatcher>(collision_configuration_.get())),
      broadphase_(std::make_unique<btDbvtBroadphase>()) {
  // Built as a host builds it, with Bullet's solver; simpact's installs
  // itself in front (and gives it back on destruction).
  stock_solver_ = std::make_unique<btMultiBodyConstraintSolver>();
  world_ = std::make_unique<btMultiBodyDynamicsWorld>(dispatcher_.get(), broadphase_.get(),
                                                      stock_solver_.get(), collision_configuration_.get());
  if (options.simpact) impact_solver_ = std::make_unique<bullet::MultiBodyImpactSolver>(*world_, options.config);
  world_->setGravity(bt(options.gravity));
}

MultiBodyWorld::~MultiBodyWorld() {
  impact_solver_.reset();  // before the world it is installed in
  for (auto& body : bodies_) world_->removeRigidBody(body.get());
  for (auto& collider : colliders_) world_->removeCollisionObject(collider.get());
  for (auto& mb : multibodies_) world_->removeMultiBody(mb.get());
}

btMultiBody* MultiBodyWorld::add_fixed_base_chain(const Eigen::Vector3d& base_position,
                                                  const std::vector<RevoluteLink>& links) {
  check(!links.empty(), "a chain needs at least one link");
  check(base_position.allFinite(), "base_position must be finite");
  check_links(links, false);
  const int n = static_cast<int>(links.size());
  // Fixed base: its mass and inertia are never used; 1 keeps Bullet's setup sane.
  auto mb = std::make_unique<btMultiBody>(n, btScalar(1), btVector3(1, 1, 1), true, false);
  mb->setBaseWorldTransform(btTransform(btQuaternion::getIdentity(), bt(base_position)));
  for (int i = 0; i < n; ++i) {
    const RevoluteLink& l = links[static_cast<size_t>(i)];
    const Eigen::Vector3d parent_com = l.parent < 0 ? base_position : links[static_cast<size_t>(l.parent)].center;
    setup_link(*mb, i, l, parent_com, false, Eigen::Quaterniond::Identity());
  }
  mb->finalizeMultiDof();
  mb->setLinearDamping(0);
  mb->setAngularDamping(0);
  mb->setCanSleep(false);
  mb->setHasSelfCollision(false);
  for (int i = 0; i < n; ++i) set_joint_velocity(*mb, i, links[static_cast<size_t>(i)]);
  world_->addMultiBody(mb.get());
  for (int i = 0; i < n; ++i) {
    const RevoluteLink& l = links[static_cast<size_t>(i)];
    shapes_.push_back(link_shape(l));
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

btMultiBody* MultiBodyWorld::add_free_base_tree(const FreeBase& base, const std::vector<RevoluteLink>& links,
                                                const std::vector<SphereCollider>& colliders) {
  check(base.center.allFinite() && base.velocity.allFinite() && base.angular_velocity.allFinite(),
        "base center and velocities must be finite");
  check(std::isfinite(base.mass) && base.mass > 0, "base mass must be positive and finite");
  check(base.inertia.allFinite() && base.inertia.minCoeff() > 0, "base inertia must be positive and finite");
  check(base.orientation.coeffs().allFinite() && base.orientation.norm() > 0,
        "base orientation must be a finite non-zero quaternion");
  // Identity (the default, and every caller before orientations existed)
  // takes the original unrotated path bit-for-bit.
  const Eigen::Quaterniond orientation = base.orientation.normalized();
  const bool rotated = orientation.coeffs() != Eigen::Quaterniond::Identity().coeffs();
  const btQuaternion base_rotation(btScalar(orientation.x()), btScalar(orientation.y()), btScalar(orientation.z()),
                                   btScalar(orientation.w()));
  check_links(links, true);
  const int n = static_cast<int>(links.size());
  for (size_t k = 0; k < colliders.size(); ++k) {
    const SphereCollider& c = colliders[k];
    const std::string at = "collider " + std::to_string(k) + ": ";
    check(c.body >= -1 && c.body < n, at + "body must be -1 (base) or a link index");
    check(c.center.allFinite() && std::isfinite(c.radius) && c.radius > 0, at + "needs a finite center and radius > 0");
  }
  auto mb = std::make_unique<btMultiBody>(n, btScalar(base.mass), bt(base.inertia), false, false);
  mb->setBaseWorldTransform(btTransform(rotated ? base_rotation : btQuaternion::getIdentity(), bt(base.center)));
  for (int i = 0; i < n; ++i) {
    const RevoluteLink& l = links[static_cast<size_t>(i)];
    const Eigen::Vector3d parent_com = l.parent < 0 ? base.center : links[static_cast<size_t>(l.parent)].center;
    setup_link(*mb, i, l, parent_com, rotated && l.parent < 0, orientation);
  }
  mb->finalizeMultiDof();
  mb->setLinearDamping(0);
  mb->setAngularDamping(0);
  mb->setCanSleep(false);
  mb->setHasSelfCollision(false);
  mb->setBaseVel(bt(base.velocity));
  mb->setBaseOmega(bt(base.angular_velocity));
  for (int i = 0; i < n; ++i) set_joint_velocity(*mb, i, links[static_cast<size_t>(i)]);
  world_->addMultiBody(mb.get());
  // One collider per body with spheres: a lone sphere at the centre of mass
  // is a btSphereShape, anything else a compound of spheres.
  for (int body = -1; body < n; ++body) {
    const Eigen::Vector3d com = body < 0 ? base.center : links[static_cast<size_t>(body)].center;
    std::vector<SphereCollider> spheres;
    double restitution = 0.0, friction = 0.5;
    // The link's own collider comes first (its shape: link_shape, a sphere
    // or its box); the entry carries its centre, restitution and friction.
    const bool own = body >= 0 && links[static_cast<size_t>(body)].sphere_collider;
    if (own) {
      const RevoluteLink& l = links[static_cast<size_t>(body)];
      spheres.push_back({body, l.center, l.radius, l.restitution, l.friction});
    }
    for (const SphereCollider& c : colliders)
      if (c.body == body) spheres.push_back(c);
    if (spheres.empty()) continue;
    restitution = spheres.front().restitution;
    friction = spheres.front().friction;
    for (const SphereCollider& c : spheres)
      check(c.restitution == restitution && c.friction == friction,
            "the spheres of one body must share restitution and friction (one collider per body)");
    const auto entry_shape = [&](size_t k) {
      return k == 0 && own ? link_shape(links[static_cast<size_t>(body)])
                           : std::make_unique<btSphereShape>(btScalar(spheres[k].radius));
    };
    btCollisionShape* shape = nullptr;
    if (spheres.size() == 1 && (spheres.front().center - com).isZero(0.0)) {
      shapes_.push_back(entry_shape(0));
      shape = shapes_.back().get();
    } else {
      auto compound = std::make_unique<btCompoundShape>();
      for (size_t k = 0; k < spheres.size(); ++k) {
        const SphereCollider& c = spheres[k];
        shapes_.push_back(entry_shape(k));
        // In the body's frame: the base's is rotated, links' are the world's.
        const Eigen::Vector3d local = body < 0 && rotated ? Eigen::Vector3d(orientation.conjugate() * (c.center - com))
                                                          : Eigen::Vector3d(c.center - com);
        compound->addChildShape(btTransform(btQuaternion::getIdentity(), bt(local)), shapes_.back().get());
      }
      shapes_.push_back(std::move(compound));
      shape = shapes_.back().get();
    }
    auto collider = std::make_unique<btMultiBodyLinkCollider>(mb.get(), body);
    collider->setCollisionShape(shape);
    collider->setWorldTransform(
        btTransform(body < 0 && rotated ? base_rotation : btQuaternion::getIdentity(), bt(com)));
    collider->setRestitution(btScalar(restitution));
    collider->setFriction(btScalar(friction));
    world_->addCollisionObject(collider.get(), btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
    if (body < 0)
      mb->setBaseCollider(collider.get());
    else
      mb->getLink(body).m_collider = collider.get();
    colliders_.push_back(std::move(collider));
  }
  multibodies_.push_back(std::move(mb));
  return multibodies_.back().get();
}

btMultiBody* MultiBodyWorld::add_pendulum(const Eigen::Vector3d& pivot, const Eigen::Vector3d& bob,
                                          double radius, double mass, double restitution,
                                          double joint_velocity, double friction) {
  RevoluteLink link;
  link.pivot = pivot;
  link.center = bob;
  link.radius = radius;
  link.mass = mass;
  link.restitution = restitution;
  link.joint_velocity = joint_velocity;
  link.friction = friction;
  return add_fixed_base_chain(pivot, {link});
}

btRigidBody* MultiBodyWorld::add_sphere(double radius, const BodyOptions& body) {
  check(std::isfinite(radius) && radius > 0, "sphere radius must be positive and finite");
  shapes_.push_back(std::make_unique<btSphereShape>(btScalar(radius)));
  RigidBodyParts parts = make_rigid_body(*shapes_.back(), body);
  btRigidBody* rigid = parts.body.get();
  // Owned before the world points to it, so that nothing the world holds is
  // freed if a later step throws.
  motion_states_.push_back(std::move(parts.motion_state));
  bodies_.push_back(std::move(parts.body));
  world_->addRigidBody(rigid);
  if (parts.kinematic) kinematics_.push_back(*parts.kinematic);
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
  for (int i = 0; i < steps; ++i) {
    for (const KinematicMotion& kinematic : kinematics_) kinematic.advance(btScalar(dt));
    world_->stepSimulation(btScalar(dt), 1, btScalar(dt));
  }
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

Eigen::Vector3d MultiBodyWorld::link_position(const btMultiBody& mb, int link) {
  check(link >= -1 && link < mb.getNumLinks(), "link_position: no such link");
  btAlignedObjectArray<btQuaternion> world_to_local;
  btAlignedObjectArray<btVector3> local_origin;
  world_to_local.resize(mb.getNumLinks() + 1);
  local_origin.resize(mb.getNumLinks() + 1);
  const_cast<btMultiBody&>(mb).forwardKinematics(world_to_local, local_origin);
  const btVector3& p = local_origin[link + 1];
  return {double(p.x()), double(p.y()), double(p.z())};
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

Eigen::Vector3d MultiBodyWorld::point_velocity(const btMultiBody& mb, int link, const Eigen::Vector3d& point,
                                               const Eigen::VectorXd& velocity) {
  const int n = 6 + mb.getNumDofs();
  check(velocity.size() == n, "point_velocity needs 6 + dofs velocities");
  btAlignedObjectArray<btScalar> jac, scratch_r;
  btAlignedObjectArray<btVector3> scratch_v;
  btAlignedObjectArray<btMatrix3x3> scratch_m;
  jac.resize(n);
  Eigen::Vector3d out;
  for (int axis = 0; axis < 3; ++axis) {
    btVector3 direction(0, 0, 0);
    direction[axis] = 1;
    mb.fillContactJacobianMultiDof(link, bt(point), direction, &jac[0], scratch_r, scratch_v, scratch_m);
    double sum = 0.0;
    for (int k = 0; k < n; ++k) sum += double(jac[k]) * velocity[k];
    out[axis] = sum;
  }
  return out;
}

CompassGait add_compass_gait(MultiBodyWorld& world, const CompassGaitOptions& o) {
  check(o.leg > 0 && o.mass > 0 && o.inertia > 0 && o.foot_radius > 0 && o.friction >= 0,
        "compass gait: leg, mass, inertia and foot radius must be positive, friction >= 0");
  const double phi = o.half_angle * 3.14159265358979323846 / 180.0;
  const double lead = -phi, trail = phi;  // from the downward vertical, counter-clockwise
  const Eigen::Vector3d trail_foot = Eigen::Vector3d::Zero();
  const auto offset = [&](double theta) { return Eigen::Vector3d(o.leg * std::sin(theta), -o.leg * std::cos(theta), 0.0); };
  const Eigen::Vector3d pelvis = trail_foot - offset(trail);
  const Eigen::Vector3d lead_foot = pelvis + offset(lead);
  // Pelvis velocity keeping the trailing foot still: −l (cos φ, sin φ) θ̇.
  const Eigen::Vector3d pelvis_velocity = -o.leg * o.leg_rate * Eigen::Vector3d(std::cos(phi), std::sin(phi), 0.0);
  const Eigen::Vector3d z = Eigen::Vector3d::UnitZ();
  FreeBase base;
  base.center = pelvis + 0.5 * offset(trail);
  base.mass = o.mass;
  base.inertia = Eigen::Vector3d::Constant(o.inertia);
  base.angular_velocity = o.leg_rate * z;
  base.velocity = pelvis_velocity + base.angular_velocity.cross(base.center - pelvis);
  RevoluteLink leg;
  leg.parent = -1;
  leg.pivot = pelvis;
  leg.axis = z;
  leg.center = pelvis + 0.5 * offset(lead);
  leg.mass = o.mass;
  leg.inertia = Eigen::Vector3d::Constant(o.inertia);
  leg.sphere_collider = false;
  leg.joint_velocity = 0.0;  // θ̇_lead − θ̇_trail
  const Eigen::Vector3d up = Eigen::Vector3d::UnitY() * o.foot_radius;
  std::vector<SphereCollider> feet = {{-1, trail_foot + up, o.foot_radius, 0.0, 1.0},
                                      {0, lead_foot + up, o.foot_radius, 0.0, 1.0}};
  world.add_plane(Eigen::Vector3d::UnitY(), 0.0, 0.0, o.friction);
  CompassGait gait;
  gait.multibody = world.add_free_base_tree(base, {leg}, feet);
  gait.lead_foot = lead_foot;
  gait.trail_foot = trail_foot;
  gait.lead_link = 0;
  return gait;
}

}  // namespace simpact::worlds
