#include "simpact_worlds/bullet_world.h"

#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>
#include <simpact/bullet/checked_mlcp_solvers.h>
#include <simpact/bullet/impulse_nncg_solver.h>
#include <BulletDynamics/MLCPSolvers/btLemkeSolver.h>
#include <BulletDynamics/MLCPSolvers/btMLCPSolver.h>
#include <BulletDynamics/ConstraintSolver/btNNCGConstraintSolver.h>
#include <LinearMath/btTransformUtil.h>
#include <btBulletDynamicsCommon.h>
#include <BulletCollision/BroadphaseCollision/btAxisSweep3.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <stdexcept>
#include <string>
#include <utility>

namespace simpact::worlds {
namespace {

constexpr std::array<std::pair<SolverKind, const char*>, 5> kSolverNames = {{
    {SolverKind::kStockSi, "stock_si"},
    {SolverKind::kStockNncg, "stock_nncg"},
    {SolverKind::kStockMlcpDantzig, "stock_mlcp_dantzig"},
    {SolverKind::kStockMlcpLemke, "stock_mlcp_lemke"},
    {SolverKind::kSimpact, "simpact"},
}};

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument(message);
}

bool is_mlcp(SolverKind kind) {
  return kind == SolverKind::kStockMlcpDantzig || kind == SolverKind::kStockMlcpLemke;
}

std::unique_ptr<btConstraintSolver> make_stock_solver(
    SolverKind kind, std::unique_ptr<btMLCPSolverInterface>& mlcp_interface) {
  switch (kind) {
    case SolverKind::kStockSi:
      return std::make_unique<btSequentialImpulseConstraintSolver>();
    case SolverKind::kStockNncg:
      // Bullet's NNCG with its conjugate direction in impulses
      // (impulse_nncg_solver.h): the stock one adds velocity residuals as
      // impulses and sends joint-bound worlds to ±inf (fuzz seed 2026 world 3218).
      return std::make_unique<bullet::ImpulseNNCGConstraintSolver>();
    case SolverKind::kStockMlcpDantzig:
      // Bullet's MLCP solvers with the checks they lack (checked_mlcp_solvers.h):
      // raw btDantzigSolver applies ±1e300 solutions (fuzz seed 7 world 882),
      // raw btLemkeSolver solutions that violate the MLCP.
      mlcp_interface = std::make_unique<bullet::CheckedDantzigSolver>();
      return std::make_unique<btMLCPSolver>(mlcp_interface.get());
    case SolverKind::kStockMlcpLemke:
      mlcp_interface = std::make_unique<bullet::CheckedLemkeSolver>();
      return std::make_unique<btMLCPSolver>(mlcp_interface.get());
    case SolverKind::kSimpact:
      break;
  }
  throw std::invalid_argument("the base solver of simpact must be a stock solver");
}

// Bullet's only per-world hook between narrowphase and solver: the combined
// restitution is stored in every contact point when the point is created or
// refreshed, so overwriting it after the default near callback is enough for
// every solver, stock or simpact.
void minimum_restitution_near_callback(btBroadphasePair& pair, btCollisionDispatcher& dispatcher,
                                       const btDispatcherInfo& info) {
  btCollisionDispatcher::defaultNearCallback(pair, dispatcher, info);
  if (pair.m_algorithm == nullptr) return;
  btManifoldArray manifolds;
  pair.m_algorithm->getAllContactManifolds(manifolds);
  for (int i = 0; i < manifolds.size(); ++i) {
    btPersistentManifold* manifold = manifolds[i];
    const btScalar restitution =
        std::min(manifold->getBody0()->getRestitution(), manifold->getBody1()->getRestitution());
    for (int p = 0; p < manifold->getNumContacts(); ++p) {
      manifold->getContactPoint(p).m_combinedRestitution = restitution;
    }
  }
}

void require_finite(const Eigen::Vector3d& v, const char* name) {
  require(v.allFinite(), std::string(name) + " must be finite");
}

void check_body(const BodyOptions& body) {
  require(std::isfinite(body.mass) && body.mass >= 0.0,
          "mass must be finite and >= 0, got " + std::to_string(body.mass));
  require(!body.kinematic || body.mass == 0.0,
          "a kinematic body is infinitely massive: its mass must be 0");
  require_finite(body.position, "position");
  require(body.orientation.coeffs().allFinite() && body.orientation.norm() > 0.0,
          "orientation must be a finite non-zero quaternion");
  require_finite(body.velocity, "velocity");
  require_finite(body.angular_velocity, "angular_velocity");
  require(std::isfinite(body.restitution) && body.restitution >= 0.0,
          "restitution must be finite and >= 0");
  require(std::isfinite(body.friction) && body.friction >= 0.0, "friction must be finite and >= 0");
  require_finite(body.linear_factor, "linear_factor");
  require_finite(body.angular_factor, "angular_factor");
  if (body.inertia) {
    require(body.mass > 0.0, "inertia is for a dynamic body (mass > 0)");
    require(body.inertia->allFinite() && body.inertia->minCoeff() > 0.0,
            "inertia must be three finite moments > 0");
  }
}


// Static and kinematic bodies are infinitely massive and carry no energy.
bool is_dynamic(const btRigidBody& body) {
  return !body.isStaticOrKinematicObject() && body.getInvMass() > btScalar(0);
}

}  // namespace

const std::vector<SolverKind>& solver_kinds() {
  static const std::vector<SolverKind> kinds = [] {
    std::vector<SolverKind> all;
    for (const auto& entry : kSolverNames) all.push_back(entry.first);
    return all;
  }();
  return kinds;
}

const char* to_string(SolverKind kind) {
  for (const auto& entry : kSolverNames) {
    if (entry.first == kind) return entry.second;
  }
  return "unknown";
}

std::optional<SolverKind> parse_solver_kind(std::string_view name) {
  for (const auto& entry : kSolverNames) {
    if (name == entry.second) return entry.first;
  }
  return std::nullopt;
}

void KinematicMotion::advance(btScalar h) const {
  btMotionState* motion_state = body->getMotionState();
  btTransform now;
  motion_state->getWorldTransform(now);
  btTransform next;
  btTransformUtil::integrateTransform(now, velocity, angular_velocity, h, next);
  motion_state->setWorldTransform(next);
}

RigidBodyParts make_rigid_body(btCollisionShape& shape, const BodyOptions& options) {
  check_body(options);
  RigidBodyParts parts;
  parts.motion_state = std::make_unique<btDefaultMotionState>(
      btTransform(to_bullet(options.orientation), to_bullet(options.position)));
  btRigidBody::btRigidBodyConstructionInfo info(btScalar(options.mass), parts.motion_state.get(), &shape,
                                                local_inertia(options, shape));
  info.m_restitution = btScalar(options.restitution);
  info.m_friction = btScalar(options.friction);
  parts.body = std::make_unique<btRigidBody>(info);
  btRigidBody& body = *parts.body;
  body.setLinearFactor(to_bullet(options.linear_factor));
  body.setAngularFactor(to_bullet(options.angular_factor));
  if (options.kinematic) {
    // Bullet's convention: flagged before addRigidBody (which picks the
    // collision filter from it) and never deactivated.
    body.setCollisionFlags(body.getCollisionFlags() | btCollisionObject::CF_KINEMATIC_OBJECT);
    body.setActivationState(DISABLE_DEACTIVATION);
    parts.kinematic = KinematicMotion{&body, to_bullet(options.velocity), to_bullet(options.angular_velocity)};
  } else if (options.never_sleep) {
    body.setActivationState(DISABLE_DEACTIVATION);
  }
  if (options.mass > 0.0 || options.kinematic) {
    body.setLinearVelocity(to_bullet(options.velocity));
    body.setAngularVelocity(to_bullet(options.angular_velocity));
  }
  return parts;
}

btVector3 local_inertia(const BodyOptions& body, const btCollisionShape& shape) {
  btVector3 inertia(0, 0, 0);
  if (body.mass <= 0.0) return inertia;
  if (body.inertia) {
    require(body.inertia->allFinite() && body.inertia->minCoeff() > 0.0,
            "inertia must be three finite moments > 0");
    return to_bullet(*body.inertia);
  }
  shape.calculateLocalInertia(btScalar(body.mass), inertia);
  return inertia;
}

btVector3 to_bullet(const Eigen::Vector3d& v) {
  return btVector3(btScalar(v.x()), btScalar(v.y()), btScalar(v.z()));
}

btQuaternion to_bullet(const Eigen::Quaterniond& q) {
  const Eigen::Quaterniond unit = q.normalized();
  return btQuaternion(btScalar(unit.x()), btScalar(unit.y()), btScalar(unit.z()),
                      btScalar(unit.w()));
}

Eigen::Vector3d to_eigen(const btVector3& v) {
  return Eigen::Vector3d(double(v.x()), double(v.y()), double(v.z()));
}

Eigen::Vector3d position(const btRigidBody& body) {
  return to_eigen(body.getCenterOfMassPosition());
}

Eigen::Quaterniond orientation(const btRigidBody& body) {
  const btQuaternion q = body.getOrientation();
  return Eigen::Quaterniond(double(q.w()), double(q.x()), double(q.y()), double(q.z()));
}

Eigen::Vector3d velocity(const btRigidBody& body) { return to_eigen(body.getLinearVelocity()); }

Eigen::Vector3d angular_velocity(const btRigidBody& body) {
  return to_eigen(body.getAngularVelocity());
}

double kinetic_energy(const btRigidBody& body) {
  if (!is_dynamic(body)) return 0.0;
  const double mass = double(body.getMass());
  // In the principal frame, where Bullet keeps the inverse inertia diagonal;
  // a zero entry is an infinite moment, about which the body cannot spin.
  const Eigen::Vector3d omega =
      to_eigen(body.getCenterOfMassTransform().getBasis().transpose() * body.getAngularVelocity());
  const Eigen::Vector3d inverse_inertia = to_eigen(body.getInvInertiaDiagLocal());
  double rotational = 0.0;
  for (int axis = 0; axis < 3; ++axis) {
    if (inverse_inertia[axis] > 0.0) {
      rotational += omega[axis] * omega[axis] / inverse_inertia[axis];
    }
  }
  return 0.5 * (mass * velocity(body).squaredNorm() + rotational);
}

BulletWorld::BulletWorld(const WorldOptions& options) : options_(options) {
  require(options.solver != SolverKind::kSimpact || options.base != SolverKind::kSimpact,
          "the base solver of simpact must be a stock solver");
  auto configuration = std::make_unique<btDefaultCollisionConfiguration>();
  if (options.plane_convex_multipoint) configuration->setPlaneConvexMultipointIterations();
  collision_configuration_ = std::move(configuration);
  dispatcher_ = std::make_unique<btCollisionDispatcher>(collision_configuration_.get());
  if (options.broadphase == Broadphase::kAxisSweep) {
    const btScalar e = btScalar(kAxisSweepExtent);
    const btVector3 extent{e, e, e};
    // No ray-cast accelerator: it is a second, DBVT, broadphase that every
    // AABB update also moves, and on a line its tree degenerates as the
    // default broadphase's does (the first step of a 10⁴-ball chain spent
    // 0.3 s there, 3·10⁴ balls 6 s). These worlds cast no rays.
    broadphase_ = std::make_unique<bt32BitAxisSweep3>(-extent, extent, unsigned(kAxisSweepHandles),
                                                      nullptr, /*disableRaycastAccelerator=*/true);
  } else {
    broadphase_ = std::make_unique<btDbvtBroadphase>();
  }
  const SolverKind stock = options.solver == SolverKind::kSimpact ? options.base : options.solver;
  stock_solver_ = make_stock_solver(stock, mlcp_interface_);
  btConstraintSolver* solver = stock_solver_.get();
  if (options.solver == SolverKind::kSimpact) {
    impact_solver_ = std::make_unique<bullet::ImpactSolver>(solver, options.simpact);
    solver = impact_solver_.get();
  }
  world_ = std::make_unique<btDiscreteDynamicsWorld>(dispatcher_.get(), broadphase_.get(), solver,
                                                     collision_configuration_.get());
  // As Bullet's own MLCP examples do: a direct solver wants one small matrix
  // per island, not islands merged into batches of 128 constraints.
  if (is_mlcp(stock)) world_->getSolverInfo().m_minimumSolverBatchSize = 1;
  set_gravity(options.gravity);
  set_restitution_combiner(options.restitution_combiner);
}

BulletWorld::~BulletWorld() {
  for (const auto& constraint : constraints_) world_->removeConstraint(constraint.get());
  for (const auto& body : bodies_) world_->removeRigidBody(body.get());
}

void BulletWorld::set_gravity(const Eigen::Vector3d& gravity) {
  require_finite(gravity, "gravity");
  options_.gravity = gravity;
  world_->setGravity(to_bullet(gravity));
}

Eigen::Vector3d BulletWorld::gravity() const { return options_.gravity; }

void BulletWorld::set_restitution_combiner(RestitutionCombiner combiner) {
  options_.restitution_combiner = combiner;
  dispatcher_->setNearCallback(combiner == RestitutionCombiner::kMinimum
                                   ? minimum_restitution_near_callback
                                   : btCollisionDispatcher::defaultNearCallback);
}

btRigidBody* BulletWorld::add_sphere(double radius, const BodyOptions& body) {
  require(std::isfinite(radius) && radius > 0.0, "sphere radius must be positive and finite");
  return add_body(std::make_unique<btSphereShape>(btScalar(radius)), body);
}

btRigidBody* BulletWorld::add_box(const Eigen::Vector3d& half_extents, const BodyOptions& body) {
  require(half_extents.allFinite() && (half_extents.array() > 0.0).all(),
          "box half extents must be positive and finite");
  return add_body(std::make_unique<btBoxShape>(to_bullet(half_extents)), body);
}

btRigidBody* BulletWorld::add_plane(const Eigen::Vector3d& normal, double offset,
                                    const BodyOptions& body) {
  require(normal.allFinite() && normal.norm() > 0.0, "plane normal must be finite and non-zero");
  require(std::isfinite(offset), "plane offset must be finite");
  require(!body.kinematic, "a plane is static: it cannot be kinematic");
  // Bullet gives a plane no inertia: with a mass it would be a dynamic body
  // that cannot rotate and falls forever.
  BodyOptions fixed = body;
  fixed.mass = 0.0;
  return add_body(std::make_unique<btStaticPlaneShape>(to_bullet(normal), btScalar(offset)),
                  fixed);
}

btRigidBody* BulletWorld::add_body(std::unique_ptr<btCollisionShape> shape,
                                   const BodyOptions& options) {
  RigidBodyParts parts = make_rigid_body(*shape, options);
  std::unique_ptr<btRigidBody>& body = parts.body;
  if (parts.kinematic) kinematics_.push_back(*parts.kinematic);
  world_->addRigidBody(body.get());
  // The body enters the broadphase with its bounds grown by the contact
  // threshold, as every step's AABB update gives them (addRigidBody inserts
  // the bare shape bounds). Otherwise the first step grows them all at once,
  // and on sweep-and-prune each bound an axis shares with the others (a
  // cradle's balls all at one height) moves past every one of them: O(N²),
  // 1.2 s of a 10⁴-ball cradle's first step.
  world_->updateSingleAabb(body.get());
  btRigidBody* raw = body.get();
  shapes_.push_back(std::move(shape));
  motion_states_.push_back(std::move(parts.motion_state));
  bodies_.push_back(std::move(body));
  body_list_.push_back(raw);
  return raw;
}

btPoint2PointConstraint* BulletWorld::add_point2point(btRigidBody* body,
                                                      const Eigen::Vector3d& pivot_world) {
  require(body != nullptr, "point2point needs a body");
  require_finite(pivot_world, "pivot_world");
  const btVector3 pivot_in_body =
      body->getCenterOfMassTransform().inverse() * to_bullet(pivot_world);
  auto constraint = std::make_unique<btPoint2PointConstraint>(*body, pivot_in_body);
  world_->addConstraint(constraint.get());
  btPoint2PointConstraint* raw = constraint.get();
  constraints_.push_back(std::move(constraint));
  return raw;
}

btPoint2PointConstraint* BulletWorld::add_point2point(btRigidBody* a, btRigidBody* b,
                                                      const Eigen::Vector3d& pivot_world) {
  require(a != nullptr && b != nullptr && a != b, "point2point needs two different bodies");
  require_finite(pivot_world, "pivot_world");
  const btVector3 pivot = to_bullet(pivot_world);
  auto constraint = std::make_unique<btPoint2PointConstraint>(
      *a, *b, a->getCenterOfMassTransform().inverse() * pivot, b->getCenterOfMassTransform().inverse() * pivot);
  world_->addConstraint(constraint.get(), true);
  btPoint2PointConstraint* raw = constraint.get();
  constraints_.push_back(std::move(constraint));
  return raw;
}

void BulletWorld::step(double dt, int steps) {
  require(std::isfinite(dt) && dt > 0.0, "step: dt must be positive and finite");
  require(steps >= 0, "step: steps must be >= 0");
  const btScalar h(dt);
  for (int i = 0; i < steps; ++i) {
    for (const KinematicMotion& kinematic : kinematics_) kinematic.advance(h);
    world_->stepSimulation(h, 1, h);
    time_ += dt;
  }
}

double BulletWorld::kinetic_energy() const {
  double energy = 0.0;
  for (const btRigidBody* body : body_list_) energy += worlds::kinetic_energy(*body);
  return energy;
}

double BulletWorld::potential_energy() const {
  double energy = 0.0;
  for (const btRigidBody* body : body_list_) {
    if (!is_dynamic(*body)) continue;
    energy -= double(body->getMass()) * to_eigen(body->getGravity()).dot(position(*body));
  }
  return energy;
}

Eigen::Vector3d BulletWorld::linear_momentum() const {
  Eigen::Vector3d momentum = Eigen::Vector3d::Zero();
  for (const btRigidBody* body : body_list_) {
    if (is_dynamic(*body)) momentum += double(body->getMass()) * velocity(*body);
  }
  return momentum;
}

std::int64_t BulletWorld::impacts() const {
  return impact_solver_ ? impact_solver_->stats().impacts : 0;
}

}  // namespace simpact::worlds
