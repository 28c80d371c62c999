// simpact worlds — a self-contained Featherstone world (btMultiBodyDynamicsWorld)
// for the multibody tests and demos: fixed-base multibodies of revolute,
// prismatic, spherical, planar or fixed links whose colliders are spheres at
// the links' centres of mass (pendulums, Newton's cradles on joints, arms,
// sliders), free-base (floating) trees of such links with sphere colliders
// anywhere on their bodies (the compass gait: add_compass_gait), rigid
// spheres (dynamic, static or kinematic, as BulletWorld's) and static planes.
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
#include <simpact_worlds/bullet_world.h>

#include <Eigen/Core>
#include <Eigen/Geometry>

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

namespace simpact::worlds {

struct MultiBodyWorldOptions {
  bool simpact = true;  ///< MultiBodyImpactSolver (attached) or stock btMultiBodyConstraintSolver
  bullet::MultiBodyImpactSolverConfig config;  ///< simpact only
  Eigen::Vector3d gravity{0.0, -kStandardGravity, 0.0};
};

/// The joint of a link to its parent.
enum class JointKind {
  kRevolute,   ///< hinge about `axis` through `pivot`; q [rad], q̇ [rad/s]
  kPrismatic,  ///< slide along `axis`; q [m] (0 = the configuration given), q̇ [m/s]
  /// Ball joint at `pivot` (btMultiBody::setupSpherical): 3 dofs, q̇ the
  /// link's angular velocity relative to its parent in the link's frame
  /// (the world's at q = 0): `joint_velocities` [rad/s]; `axis` unused.
  kSpherical,
  /// Planar joint (btMultiBody::setupPlanar): the link moves in the plane
  /// normal to `axis` and turns about `axis`; 3 dofs in Bullet's order
  /// [ω about axis, v along link.getAxisBottom(1), v along getAxisBottom(2)]
  /// (`joint_velocities`, [rad/s, m/s, m/s]); `pivot` unused (the plane
  /// motion is of the link's centre of mass).
  kPlanar,
  /// Welded to the parent (btMultiBody::setupFixed): no dof; `axis` and
  /// the joint velocities unused.
  kFixed,
};

/// One link: a sphere of `radius` and `mass` (solid-sphere inertia) centred
/// at its centre of mass `center`, joined at `pivot` with `axis` (world, at
/// q = 0, which is the configuration given) to `parent` (−1: the base). The
/// joint is revolute (hinged about `axis`, the default, as the name says) or
/// prismatic (`joint`: sliding along `axis`; `pivot` is then any point of the
/// slide line, used only to split the offset from the parent). The link's
/// frame is the world's at q = 0, whatever the base's orientation.
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
  /// Principal moments about the centre of mass along the world axes at
  /// q = 0 [kg m²]; all zero (default) = the solid sphere's 0.4 m r².
  Eigen::Vector3d inertia = Eigen::Vector3d::Zero();
  /// Give the link its sphere of `radius` at `center` as a collider; false:
  /// only the SphereColliders attached to it (add_free_base_tree).
  bool sphere_collider = true;
  /// Non-zero: the link's own collider is a box of these half extents [m]
  /// at `center`, its edges along the world axes at q = 0 (as a URDF
  /// loader builds a box link), in place of the sphere; `radius` still sets
  /// the default inertia. All zero (default): the sphere. Needs
  /// sphere_collider (the link's own collider; refused without it).
  Eigen::Vector3d box_half_extents = Eigen::Vector3d::Zero();
  JointKind joint = JointKind::kRevolute;
  /// q̇ of a spherical or planar joint (see JointKind); ignored otherwise.
  Eigen::Vector3d joint_velocities = Eigen::Vector3d::Zero();
};

/// A link of any joint kind (RevoluteLink's name predates the other kinds).
using Link = RevoluteLink;

/// A collider sphere rigidly attached to a body of a free-base tree: the
/// base (body −1) or link `body`, centred at `center` (world, at the
/// configuration given).
struct SphereCollider {
  int body = -1;
  Eigen::Vector3d center = Eigen::Vector3d::Zero();
  double radius = 0.05;
  double restitution = 0.0;
  double friction = 0.5;
};

/// The floating base of add_free_base_tree: a rigid body with its centre of
/// mass at `center`, orientation `orientation` (base frame to world; any
/// non-zero quaternion, normalized), principal moments `inertia` along the
/// base's axes (the world's for the default identity), and world velocity
/// (ω, v of the centre of mass).
struct FreeBase {
  Eigen::Vector3d center = Eigen::Vector3d::Zero();
  double mass = 1.0;
  Eigen::Vector3d inertia = Eigen::Vector3d::Ones();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
};

class MultiBodyWorld {
 public:
  explicit MultiBodyWorld(const MultiBodyWorldOptions& options = {});
  ~MultiBodyWorld();
  MultiBodyWorld(const MultiBodyWorld&) = delete;
  MultiBodyWorld& operator=(const MultiBodyWorld&) = delete;

  /// A fixed-base multibody of revolute or prismatic links (parents before
  /// children). Throws std::invalid_argument for no links, a parent index
  /// out of order, a non-positive or non-finite mass or radius, a zero axis,
  /// or an unknown joint kind.
  btMultiBody* add_fixed_base_chain(const Eigen::Vector3d& base_position,
                                    const std::vector<RevoluteLink>& links);
  /// A free-base (floating) multibody: `base` plus revolute or prismatic `links` (parent
  /// −1 = the base; a link's `pivot` offset is taken from its parent's
  /// centre of mass), colliders: each link's own sphere (sphere_collider)
  /// and `colliders`; a body with several spheres gets one compound shape.
  /// Throws std::invalid_argument as add_fixed_base_chain, and for a
  /// non-positive base mass or inertia, a non-positive link inertia, or a
  /// collider on a body that does not exist, a zero or non-finite
  /// orientation. No links is allowed (a free rigid body as a multibody).
  btMultiBody* add_free_base_tree(const FreeBase& base, const std::vector<RevoluteLink>& links,
                                  const std::vector<SphereCollider>& colliders);
  /// A simple pendulum: one link of a bob at `bob`, hinged at `pivot` about z;
  /// the bob's friction `friction` (RevoluteLink's default 0.5).
  btMultiBody* add_pendulum(const Eigen::Vector3d& pivot, const Eigen::Vector3d& bob, double radius,
                            double mass, double restitution, double joint_velocity = 0.0,
                            double friction = 0.5);
  /// A rigid sphere as BulletWorld::add_sphere makes it (make_rigid_body:
  /// mass > 0 dynamic, 0 static or, with `kinematic`, kinematic).
  btRigidBody* add_sphere(double radius, const BodyOptions& body);
  /// The static plane {x : n̂·x = offset}.
  btRigidBody* add_plane(const Eigen::Vector3d& normal, double offset, double restitution,
                         double friction = 0.5);

  void step(double dt, int steps = 1);

  /// Kinetic energy of a multibody from Bullet's own link velocities
  /// (btMultiBody::compTreeLinkVelocities): Σ ½ m |v|² + ½ ωᵀ I ω [J].
  static double kinetic_energy(const btMultiBody& mb);
  /// World position of the centre of mass of link i (−1: the base), from
  /// Bullet's forward kinematics at the current joint positions.
  static Eigen::Vector3d link_position(const btMultiBody& mb, int link);
  /// q̇ of link i's joint (its first dof for a spherical or planar joint;
  /// meaningless for a fixed one, which has none).
  static double joint_velocity(const btMultiBody& mb, int link);
  /// World velocity of link i's centre of mass (i = −1: the base).
  static Eigen::Vector3d link_velocity(const btMultiBody& mb, int link);
  /// World velocity of the point `point` (world) fixed to body `link` (−1 =
  /// base) for the velocity vector `velocity` (6 + dofs, Bullet's layout
  /// [ω_base, v_base, q̇]), from Bullet's contact Jacobian
  /// (fillContactJacobianMultiDof) at the current configuration.
  static Eigen::Vector3d point_velocity(const btMultiBody& mb, int link, const Eigen::Vector3d& point,
                                        const Eigen::VectorXd& velocity);

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
  std::vector<KinematicMotion> kinematics_;
};

/// The compass gait wide step of compass_gait() (Halm & Posa, Fig. 4, §5.4.2;
/// Mathew Halm and Michael Posa, "Set-Valued Rigid-Body Dynamics for
/// Simultaneous, Inelastic, Frictional Impacts", arXiv:2103.15714) as a
/// Bullet multibody in the x–y plane: the TRAILING leg is the floating base
/// and the LEADING leg a revolute link hinged about z at the pelvis; a point
/// mass `mass` at each leg's midpoint carries rotational inertia `inertia`
/// (isotropic: Bullet needs positive moments; the planar model has none, see
/// demos/multibody_demos.cpp for its effect), the massless pelvis is the
/// hinge. Each foot is a sphere of `foot_radius` whose lowest point is the
/// model's foot, touching the plane y = 0 (added by add_compass_gait, with
/// friction `friction` and the feet's friction 1, so Bullet's product
/// combiner gives μ = friction). θ and θ̇ are compass_gait()'s: legs at ∓φ
/// from the downward vertical (lead −φ, trail +φ), both turning at θ̇
/// counter-clockwise, the pelvis moving so the trailing foot is still.
struct CompassGaitOptions {
  double leg = 1.0;           ///< l [m]
  double mass = 1.0;          ///< m per leg [kg]
  double half_angle = 78.0;   ///< φ [deg]
  double leg_rate = 0.25;     ///< θ̇ [rad/s]
  double friction = 5.0;      ///< μ
  double inertia = 1e-6;      ///< per leg, about its midpoint [kg m²]
  double foot_radius = 0.02;  ///< [m]
};

struct CompassGait {
  btMultiBody* multibody = nullptr;
  Eigen::Vector3d lead_foot, trail_foot;  ///< the model's foot points (contact points) [m]
  int lead_link = 0;    ///< the leading leg's link index (the trailing leg is the base, −1)
};

/// Adds the compass gait and its ground plane to `world`.
CompassGait add_compass_gait(MultiBodyWorld& world, const CompassGaitOptions& options = {});

}  // namespace simpact::worlds
