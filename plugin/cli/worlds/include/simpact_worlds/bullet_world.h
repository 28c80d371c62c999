// simpact worlds — a self-contained Bullet world: the fixture of the Bullet
// scenario tests, the demos and the benchmarks, and what `simpact scene` runs.
//
// BulletWorld owns everything it creates (collision configuration,
// dispatcher, broadphase, solvers, dynamics world, shapes, motion states,
// bodies, joints) and frees it on destruction. The constraint solver is one
// of Bullet's stock solvers, or simpact's ImpactSolver in front of one.
//
// Conventions: SI units, y up (gravity (0, −9.81, 0) unless told otherwise).
// Values cross the API in double (Eigen) whatever btScalar is, so the same
// code runs on single- and double-precision Bullet.
#pragma once

#include <simpact/bullet/impact_solver.h>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include <LinearMath/btQuaternion.h>
#include <LinearMath/btVector3.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

class btBroadphaseInterface;
class btCollisionConfiguration;
class btCollisionDispatcher;
class btCollisionShape;
class btDiscreteDynamicsWorld;
class btMLCPSolverInterface;
class btMotionState;
class btPoint2PointConstraint;
class btRigidBody;
class btTypedConstraint;

namespace simpact::worlds {

/// Standard gravity [m/s²].
inline constexpr double kStandardGravity = 9.81;

enum class SolverKind {
  kStockSi,           ///< btSequentialImpulseConstraintSolver
  /// simpact::bullet::ImpulseNNCGConstraintSolver: btNNCGConstraintSolver
  /// with its conjugate direction in impulse units (impulse_nncg_solver.h).
  kStockNncg,
  /// btMLCPSolver + simpact::bullet::CheckedDantzigSolver / CheckedLemkeSolver:
  /// Bullet's MLCP solvers with the solution checks they lack
  /// (checked_mlcp_solvers.h; a rejected solve falls back to SI).
  kStockMlcpDantzig,
  kStockMlcpLemke,
  kSimpact,           ///< simpact::bullet::ImpactSolver in front of a stock solver
};

/// Every kind, in declaration order.
const std::vector<SolverKind>& solver_kinds();
/// "stock_si", "stock_nncg", "stock_mlcp_dantzig", "stock_mlcp_lemke", "simpact".
const char* to_string(SolverKind kind);
/// The kind named by to_string(), or nullopt.
std::optional<SolverKind> parse_solver_kind(std::string_view name);

/// How the restitution of a contact is combined from its two bodies'.
enum class RestitutionCombiner {
  kProduct,  ///< Bullet's default: e_A · e_B.
  /// min(e_A, e_B): a scene can give every body its restitution r and the
  /// ground 1, and every pair (ball–ball as well as ball–ground) gets r.
  kMinimum,
};

/// Bullet's broadphase. kDbvt (btDbvtBroadphase) is Bullet's default and
/// suits most scenes; on 10⁵ bodies placed along one line its tree
/// degenerates and its first pair search runs for many minutes (seen
/// in benchmark_scaling), where sweep-and-prune along the axes
/// (bt32BitAxisSweep3 over ±kAxisSweepExtent m, without Bullet's ray-cast
/// accelerator: a second, DBVT, broadphase these worlds never query) finds
/// each ball's two neighbours at once. Sweep-and-prune is quadratic where
/// bodies share a bound along an axis (a row of balls at one height):
/// adding them costs O(N²), stepping does not (BulletWorld adds each body
/// with the bounds a step gives it).
enum class Broadphase { kDbvt, kAxisSweep };
/// Half extent of the axis-sweep broadphase's world box [m]: a chain of 10⁵
/// balls of 0.1 m is 10⁴ m long; 32-bit quantization over 2·10⁵ m keeps
/// ~5e-5 m resolution, far below any body's margin (AABBs only grow).
inline constexpr double kAxisSweepExtent = 1e5;
/// Bodies the axis-sweep broadphase holds: Bullet allocates every handle
/// up front (~160 bytes each; its default of 1.5 million costs 240 MB).
/// 2^17 = 131072 covers a chain of 10⁵ with room (21 MB).
inline constexpr int kAxisSweepHandles = 1 << 17;

struct WorldOptions {
  SolverKind solver = SolverKind::kStockSi;
  Broadphase broadphase = Broadphase::kDbvt;
  /// The stock solver behind simpact (kSimpact only); must not be kSimpact.
  SolverKind base = SolverKind::kStockSi;
  bullet::ImpactSolverConfig simpact;  ///< kSimpact only
  Eigen::Vector3d gravity{0.0, -kStandardGravity, 0.0};
  RestitutionCombiner restitution_combiner = RestitutionCombiner::kProduct;
  /// Bullet's btDefaultCollisionConfiguration::setPlaneConvexMultipointIterations():
  /// a convex body on a btStaticPlaneShape gets its whole contact patch
  /// (up to 4 points) each step instead of one new point per step. Off by
  /// default, as in Bullet. A bouncy box sliding on a plane at 60 Hz needs
  /// it under simpact (docs/rigid_adapter.md, "Laws": with one point the
  /// law sees one corner per step and the box rocks on).
  bool plane_convex_multipoint = false;
};

/// A rigid body. Defaults are Bullet's (restitution 0, friction 0.5).
struct BodyOptions {
  /// [kg]; 0 makes the body static, or kinematic when `kinematic`.
  double mass = 1.0;
  /// Principal moments of inertia in the body frame [kg·m²], each > 0;
  /// empty: Bullet's value for the shape and mass (a solid sphere's or
  /// box's). Dynamic bodies only.
  std::optional<Eigen::Vector3d> inertia;
  /// Moves at `velocity` and `angular_velocity` whatever hits it (Bullet's
  /// kinematic body: infinitely massive, so `mass` must be 0).
  bool kinematic = false;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();
  Eigen::Quaterniond orientation = Eigen::Quaterniond::Identity();
  Eigen::Vector3d velocity = Eigen::Vector3d::Zero();          ///< of the centre of mass [m/s]
  Eigen::Vector3d angular_velocity = Eigen::Vector3d::Zero();  ///< world frame [rad/s]
  double restitution = 0.0;
  double friction = 0.5;
  /// Per-axis multipliers of velocity changes (Bullet's factors; 0 locks an axis).
  Eigen::Vector3d linear_factor = Eigen::Vector3d::Ones();
  Eigen::Vector3d angular_factor = Eigen::Vector3d::Ones();
  /// Never put the body to sleep. Bullet freezes a body slower than 0.8 m/s
  /// for 2 s; scenes with slow motion that must go on ask for this.
  bool never_sleep = false;
};

/// A kinematic body and the motion it is given. Bullet derives a kinematic
/// body's velocity from its motion state's move over a step
/// (btRigidBody::saveKinematicState), so a world moves the motion state by
/// (velocity, angular_velocity) × h before each stepSimulation: `advance`.
struct KinematicMotion {
  btRigidBody* body = nullptr;
  btVector3 velocity{0, 0, 0};          ///< of the centre of mass [m/s]
  btVector3 angular_velocity{0, 0, 0};  ///< world frame [rad/s]
  void advance(btScalar h) const;
};

/// A rigid body on `shape` as `options` describe it, not yet in a world:
/// its motion state at the pose; restitution, friction, factors; the
/// kinematic flag (never deactivated) or never_sleep; the velocity for a
/// dynamic or kinematic body (a static one has none). Throws
/// std::invalid_argument naming the field for options out of their range
/// (BodyOptions). BulletWorld and MultiBodyWorld make their bodies with it,
/// and advance `kinematic` (set for a kinematic body) every step.
struct RigidBodyParts {
  std::unique_ptr<btMotionState> motion_state;
  std::unique_ptr<btRigidBody> body;
  std::optional<KinematicMotion> kinematic;
};
RigidBodyParts make_rigid_body(btCollisionShape& shape, const BodyOptions& options);

class BulletWorld {
 public:
  /// Throws std::invalid_argument for a kSimpact base of kSimpact.
  explicit BulletWorld(const WorldOptions& options = {});
  ~BulletWorld();
  BulletWorld(const BulletWorld&) = delete;
  BulletWorld& operator=(const BulletWorld&) = delete;

  // Bodies. Throw std::invalid_argument for an invalid description (negative
  // or non-finite mass, a kinematic body with mass, a kinematic plane, a
  // non-positive size, a zero normal). The world owns the returned body.
  btRigidBody* add_sphere(double radius, const BodyOptions& body);
  btRigidBody* add_box(const Eigen::Vector3d& half_extents, const BodyOptions& body);
  /// The static plane {x : n̂·x = offset}, n̂ = normal/|normal|. Planes are
  /// always static: `body.mass` is ignored and `kinematic` must be false.
  /// `body.position` and `orientation` move the plane as a whole.
  btRigidBody* add_plane(const Eigen::Vector3d& normal, double offset, const BodyOptions& body);
  /// Ball joint holding `body`'s material point at `pivot_world` (now) to
  /// that fixed point of space.
  btPoint2PointConstraint* add_point2point(btRigidBody* body, const Eigen::Vector3d& pivot_world);
  /// Ball joint holding the material points of `a` and `b` at `pivot_world`
  /// (now) together; collisions between the two are off (Bullet's
  /// disableCollisionsBetweenLinkedBodies), as a chain's links usually are.
  btPoint2PointConstraint* add_point2point(btRigidBody* a, btRigidBody* b, const Eigen::Vector3d& pivot_world);

  /// `steps` fixed steps of dt: stepSimulation(dt, 1, dt) each, after moving
  /// every kinematic body by its velocity through its motion state.
  void step(double dt, int steps = 1);
  double time() const { return time_; }

  void set_gravity(const Eigen::Vector3d& gravity);
  Eigen::Vector3d gravity() const;
  void set_restitution_combiner(RestitutionCombiner combiner);

  // Sums over the dynamic bodies (static and kinematic ones carry no energy).
  double kinetic_energy() const;        ///< ½ m v² + ½ ωᵀ I ω [J]
  double potential_energy() const;      ///< −m g·x, zero at the origin [J]
  double energy() const { return kinetic_energy() + potential_energy(); }
  Eigen::Vector3d linear_momentum() const;  ///< Σ m v [kg·m/s]

  /// Impacts resolved by simpact so far; 0 for a stock solver.
  std::int64_t impacts() const;
  /// nullptr unless the solver is kSimpact.
  bullet::ImpactSolver* impact_solver() const { return impact_solver_.get(); }

  /// Every body in the order added (static, kinematic and dynamic).
  const std::vector<btRigidBody*>& bodies() const { return body_list_; }
  btDiscreteDynamicsWorld& dynamics_world() const { return *world_; }
  const WorldOptions& options() const { return options_; }

 private:
  btRigidBody* add_body(std::unique_ptr<btCollisionShape> shape, const BodyOptions& body);

  WorldOptions options_;
  double time_ = 0.0;
  // Declaration order is destruction order reversed: the world goes before
  // the solvers, broadphase and dispatcher it uses.
  std::unique_ptr<btCollisionConfiguration> collision_configuration_;
  std::unique_ptr<btCollisionDispatcher> dispatcher_;
  std::unique_ptr<btBroadphaseInterface> broadphase_;
  std::unique_ptr<btMLCPSolverInterface> mlcp_interface_;
  std::unique_ptr<btConstraintSolver> stock_solver_;
  std::unique_ptr<bullet::ImpactSolver> impact_solver_;
  std::unique_ptr<btDiscreteDynamicsWorld> world_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btMotionState>> motion_states_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<std::unique_ptr<btTypedConstraint>> constraints_;
  std::vector<btRigidBody*> body_list_;
  std::vector<KinematicMotion> kinematics_;
};

// Conversions and state of one body, in double.
/// The principal inertia a body of `shape` gets: `body.inertia` when set
/// (each moment > 0 and finite, else std::invalid_argument), Bullet's
/// calculateLocalInertia for the mass otherwise; zero for mass 0.
btVector3 local_inertia(const BodyOptions& body, const btCollisionShape& shape);
btVector3 to_bullet(const Eigen::Vector3d& v);
btQuaternion to_bullet(const Eigen::Quaterniond& q);
Eigen::Vector3d to_eigen(const btVector3& v);
Eigen::Vector3d position(const btRigidBody& body);
Eigen::Quaterniond orientation(const btRigidBody& body);
Eigen::Vector3d velocity(const btRigidBody& body);
Eigen::Vector3d angular_velocity(const btRigidBody& body);
/// ½ m v² + ½ ωᵀ I ω; 0 for static and kinematic bodies.
double kinetic_energy(const btRigidBody& body);

}  // namespace simpact::worlds
