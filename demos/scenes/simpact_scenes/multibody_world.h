// simpact scenes — a self-contained Featherstone world (btMultiBodyDynamicsWorld)
// for the multibody tests and demos: fixed-base multibodies of revolute links
// whose colliders are spheres at the links' centres of mass (pendulums,
// Newton's cradles on joints, arms), free rigid spheres and static planes.
//
// MultiBodyWorld owns everything it creates and frees it on destruction. Its
// multibody solver is Bullet's btMultiBodyConstraintSolver (stock) or
// simpact's MultiBodyImpactSolver, attached to the world.
//
// Conventions: SI units, y up, gravity (0, −9.81, 0) unless told otherwise;
// values cross the API in double whatever btScalar is. Multibodies get zero
// linear and angular damping (Bullet's default 0.04 would make every energy
// check a damping measurement), never sleep and have no self-collision.
#pragma once

#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact_scenes/bullet_world.h>

#include <Eigen/Core>

#include <memory>
#include <vector>

class btBroadphaseInterface;
class btCollisionConfiguration;
class btCollisionDispatcher;
class btCollisionShape;
class btMultiBody;
class btMultiBodyConstraintSolver;
class btMultiBodyDynamicsWorld;
class btMultiBodyLinkCollider;
class btMotionState;
class btRigidBody;

namespace simpact::scenes {

struct MultiBodyWorldOptions {
  bool simpact = true;  ///< MultiBodyImpactSolver (attached) or stock btMultiBodyConstraintSolver
  bullet::MultiBodyImpactSolverConfig config;  ///< simpact only
  Eigen::Vector3d gravity{0.0, -kStandardGravity, 0.0};
};

/// One revolute link: a sphere of `radius` and `mass` (solid-sphere
/// inertia) centred at its centre of mass `center`, hinged at `pivot` about
/// `axis` (world, at q = 0, which is the configuration given) to `parent`
/// (−1: the fixed base).
struct RevoluteLink {
  int parent = -1;
  Eigen::Vector3d pivot = Eigen::Vector3d::Zero();
  Eigen::Vector3d axis = Eigen::Vector3d::UnitZ();
  Eigen::Vector3d center = Eigen::Vector3d::Zero();
  double mass = 1.0;
  double radius = 0.1;
  double restitution = 0.0;
  double friction = 0.5;
  double joint_velocity = 0.0;  ///< q̇ [rad/s]
};

class MultiBodyWorld {
 public:
  explicit MultiBodyWorld(const MultiBodyWorldOptions& options = {});
  ~MultiBodyWorld();
  MultiBodyWorld(const MultiBodyWorld&) = delete;
  MultiBodyWorld& operator=(const MultiBodyWorld&) = delete;

  /// A fixed-base multibody of revolute links (parents before children).
  /// Throws std::invalid_argument for no links, a parent index out of order,
  /// a non-positive or non-finite mass or radius, or a zero axis.
  btMultiBody* add_fixed_base_chain(const Eigen::Vector3d& base_position,
                                    const std::vector<RevoluteLink>& links);
  /// A simple pendulum: one link of a bob at `bob`, hinged at `pivot` about z.
  btMultiBody* add_pendulum(const Eigen::Vector3d& pivot, const Eigen::Vector3d& bob, double radius,
                            double mass, double restitution, double joint_velocity = 0.0);
  /// A free rigid sphere (BodyOptions as BulletWorld; mass > 0 dynamic).
  btRigidBody* add_sphere(double radius, const BodyOptions& body);
  /// The static plane {x : n̂·x = offset}.
  btRigidBody* add_plane(const Eigen::Vector3d& normal, double offset, double restitution,
                         double friction = 0.5);

  void step(double dt, int steps = 1);

  /// Kinetic energy of a multibody from Bullet's own link velocities
  /// (btMultiBody::compTreeLinkVelocities): Σ ½ m |v|² + ½ ωᵀ I ω [J].
  static double kinetic_energy(const btMultiBody& mb);
  /// q̇ of link i's (single) joint.
  static double joint_velocity(const btMultiBody& mb, int link);
  /// World velocity of link i's centre of mass.
  static Eigen::Vector3d link_velocity(const btMultiBody& mb, int link);

  btMultiBodyDynamicsWorld& dynamics_world() const { return *world_; }
  /// nullptr for the stock solver.
  bullet::MultiBodyImpactSolver* impact_solver() const { return impact_solver_.get(); }

 private:
  std::unique_ptr<btCollisionConfiguration> collision_configuration_;
  std::unique_ptr<btCollisionDispatcher> dispatcher_;
  std::unique_ptr<btBroadphaseInterface> broadphase_;
  std::unique_ptr<btMultiBodyConstraintSolver> stock_solver_;
  std::unique_ptr<bullet::MultiBodyImpactSolver> impact_solver_;
  std::unique_ptr<btMultiBodyDynamicsWorld> world_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btMotionState>> motion_states_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<std::unique_ptr<btMultiBody>> multibodies_;
  std::vector<std::unique_ptr<btMultiBodyLinkCollider>> colliders_;
};

}  // namespace simpact::scenes
