// simpact scenes — seeded random Bullet worlds and the fuzz harness that runs
// them with simpact and with the stock solver (issue #10, "a fuzz harness in
// the project"). Shared by tests/bullet/fuzz_worlds_test.cpp (short run in
// ctest) and demos/fuzz_worlds.cpp (long runs).
//
// A world is first drawn as plain data (RandomWorldSpec: a pure function of
// (seed, index), bit for bit: it draws from its own SplitMix64 generator,
// never from a std:: distribution, whose output differs between standard
// libraries; std::pow, sin and cos enter some draws, so the bits may differ
// between C libraries, never between runs), then built into a
// BulletWorld (RandomWorld). Drawing the same (seed, index) twice gives the
// same world; building the same spec twice gives the same Bullet world, so
// simpact and the stock solver see exactly the same bodies and joints.
//
// What a world may hold (probabilities in random_worlds.cpp):
//  - shapes: sphere, box, capsule, cylinder, cone, convex hull, compound
//    (box + sphere + capsule children); bounding radii 0.05–0.5 m;
//  - a ground: none, a static plane, or a static bumpy triangle mesh
//    (btBvhTriangleMeshShape), all at y ≈ 0;
//  - with RandomWorldOptions::more_shapes, also multi-sphere bodies
//    (btMultiSphereShape), uniformly scaled hulls (btUniformScalingShape),
//    boxes with non-uniform local scaling, dynamic concave meshes
//    (btGImpactMeshShape, with Bullet's GImpact algorithm registered: a
//    hollow shell, so a small body can end up inside it), and bumpy
//    heightfield grounds (btHeightfieldTerrainShape): shapes games build
//    that the default draw leaves out (off by default, so every
//    (seed, index) keeps its world);
//  - masses 10^U(−2, 3) kg (ratios up to 1e5 inside one world), speeds up
//    to 20 m/s, spins up to 10 rad/s; kinematic bodies; linear and angular
//    factors; bodies asleep at the start or never sleeping;
//  - touching rows of equal spheres placed by a loop (x = x₀ + 2 r i), the
//    first one moving into the row (the "touching means touching" case);
//  - joints of every btTypedConstraint type: point2point, hinge (free, at a
//    limit, motorised), slider (free or a rigid rod with all limits 0),
//    cone-twist, generic 6-DoF, 6-DoF spring2 with springs, fixed, gear,
//    hinge2, universal; between two bodies or to the world; some disabled,
//    some breakable;
//  - laws propagative, routh and auto; bases SI, NNCG, MLCP Dantzig, MLCP
//    Lemke; steps 1/60, 1/120 or 1/240 s.
//
// World kinds:
//  - kGeneral: anything above.
//  - kConservative: e = 1 everywhere (ground too), no friction, no gravity,
//    no joints, no kinematic bodies, linear factors 0 or 1 per axis, angular
//    factors all 0 or all 1, and every body's inertia made ISOTROPIC (the
//    mean of its shape's principal moments). With isotropic inertia free
//    flight conserves ½ωᵀIω exactly and Bullet's gyroscopic term ω × Iω
//    vanishes: BT_ENABLE_GYROSCOPIC_FORCE_IMPLICIT_BODY (left on, as Bullet
//    sets it) changes ω only by its rounding, ~1e-16 relative per step, far
//    below kEnergyGainTolerance. Kinetic energy may only change through
//    contacts. Neither the impact phase nor the whole step may gain energy.
//  - kElastic: as kConservative but with each shape's own (anisotropic)
//    inertia and the gyroscopic flag on (Bullet's default). The impact phase
//    must not gain; gains of the whole step beyond the impact phase's come
//    from free flight of anisotropic spinning bodies (Bullet's implicit
//    gyroscopic step, issue #10 saw ×44) and are counted apart.
#pragma once

#include "simpact_worlds/bullet_world.h"
#include "simpact_worlds/multibody_world.h"

#include <simpact/bullet/impact_solver.h>

#include <Eigen/Core>
#include <Eigen/Geometry>

#include <algorithm>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

class btCollisionShape;
class btRigidBody;
class btStridingMeshInterface;
class btTypedConstraint;

namespace simpact::scenes {

// The worlds these scenes are built in (simpact::worlds, plugin/cli/worlds).
using namespace simpact::worlds;

enum class RandomWorldKind { kGeneral, kConservative, kElastic };
const char* to_string(RandomWorldKind kind);

enum class RandomShape {
  kSphere,
  kBox,
  kCapsule,
  kCylinder,
  kCone,
  kConvexHull,
  kCompound,
  // RandomWorldOptions::more_shapes only:
  kMultiSphere,  ///< btMultiSphereShape of 2–4 spheres
  kScaledHull,   ///< btUniformScalingShape around a convex hull
  kScaledBox,    ///< btBoxShape with non-uniform setLocalScaling
  kGImpactMesh,  ///< btGImpactMeshShape: a closed, hollow octahedron mesh
};
/// Shapes of the default draw, and of the draw with more_shapes.
inline constexpr int kRandomShapes = 7;
inline constexpr int kRandomShapesWithMore = 11;
const char* to_string(RandomShape shape);

enum class RandomGround { kNone, kPlane, kMesh, kHeightfield /* more_shapes only */ };
const char* to_string(RandomGround ground);

enum class RandomJoint {
  kPoint2Point,
  kHingeFree,
  kHingeAtLimit,   ///< current angle on the upper limit
  kHingeMotor,
  kSlider,         ///< free along its axis, random limits
  kSliderRod,      ///< all four limits 0: a rigid rod (Bullet's cradle example)
  kConeTwist,
  kGeneric6Dof,
  kSpring6Dof,     ///< btGeneric6DofSpring2Constraint with springs on some axes
  kFixed,
  kGear,
  kHinge2,
  kUniversal,
};
inline constexpr int kRandomJointKinds = 13;
const char* to_string(RandomJoint joint);

/// One body. `half_size` is the shape's size (sphere: radius in x; box:
/// half extents; capsule / cylinder / cone: radius in x, half height in y).
struct RandomBodySpec {
  RandomShape shape = RandomShape::kSphere;
  Eigen::Vector3d half_size = Eigen::Vector3d::Constant(0.1);
  /// kConvexHull, kScaledHull: the hull's points before scaling (body
  /// frame); kMultiSphere: the spheres' centres; kCompound: the offset of
  /// its sphere child; kGImpactMesh: the octahedron's six vertices
  /// (±x, ±y, ±z).
  std::vector<Eigen::Vector3d> hull_points;
  std::vector<double> sphere_radii;  ///< kMultiSphere, one per centre [m]
  /// kScaledHull: the uniform scale (x only); kScaledBox: the local scaling
  /// of a box of half extents half_size.
  Eigen::Vector3d scaling = Eigen::Vector3d::Ones();
  BodyOptions options;                       ///< mass, pose, velocities, e, μ, factors
  bool asleep = false;      ///< ISLAND_SLEEPING at the start (at rest)
  bool isotropic = false;   ///< inertia replaced by its mean principal moment
  bool touching_row = false;  ///< one of a loop-placed row of touching spheres
};

/// One joint between bodies `a` and `b` (indices into bodies; b = −1: the
/// world). `pivot` and `frame` (the joint frame's orientation) are in world
/// coordinates at the start, where every joint is satisfied exactly.
struct RandomJointSpec {
  RandomJoint kind = RandomJoint::kPoint2Point;
  int a = 0;
  int b = -1;
  Eigen::Vector3d pivot = Eigen::Vector3d::Zero();
  Eigen::Quaterniond frame = Eigen::Quaterniond::Identity();
  double p1 = 0.0, p2 = 0.0, p3 = 0.0;  ///< kind-specific (limits, motor, stiffness, ratio)
  int spring_axes = 0;                  ///< kSpring6Dof: bit i = spring on axis i
  bool enabled = true;
  double breaking_impulse = 0.0;        ///< 0 = unbreakable [N·s]
  bool disable_collisions = false;      ///< between the two linked bodies
};

struct RandomWorldSpec {
  std::uint64_t seed = 0;
  std::int64_t index = 0;
  RandomWorldKind kind = RandomWorldKind::kGeneral;
  bullet::ImpactLaw law = bullet::ImpactLaw::kPropagative;
  SolverKind base = SolverKind::kStockSi;  ///< the stock solver (alone, or behind simpact)
  double dt = 1.0 / 60.0;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  RandomGround ground = RandomGround::kNone;
  double ground_restitution = 0.0;
  double ground_friction = 0.5;
  std::vector<Eigen::Vector3d> ground_heights;  ///< kMesh, kHeightfield: grid vertices (x, height, z)
  int ground_cells = 0;                         ///< kMesh, kHeightfield: cells per side
  std::vector<RandomBodySpec> bodies;
  std::vector<RandomJointSpec> joints;
};

struct RandomWorldOptions {
  int max_bodies = 10;  ///< ≥ 1
  int max_joints = 6;   ///< ≥ 0 (general worlds only)
  /// Fractions of conservative and elastic worlds; the rest is general.
  double conservative_fraction = 0.2;
  double elastic_fraction = 0.1;
  /// Also draw the shapes and grounds marked "more_shapes only" (header).
  /// Off by default: the default draw is unchanged bit for bit.
  bool more_shapes = false;
};

/// The world number `index` of the run with `seed`: a pure function of its
/// arguments. Throws std::invalid_argument for options out of range.
RandomWorldSpec random_world_spec(std::uint64_t seed, std::int64_t index,
                                  const RandomWorldOptions& options = {});

/// One line: kind, law, base, dt, ground, shape and joint counts.
std::string describe(const RandomWorldSpec& spec);

/// A spec built into a BulletWorld: stock `spec.base` alone, or simpact
/// (ImpactSolver with `spec.law` and seed mixed from spec.seed and index)
/// in front of it. Owns every shape, mesh, body and joint it creates.
class RandomWorld {
 public:
  /// `on_impact` (simpact only) is installed as ImpactSolverConfig::on_impact.
  /// `split_all`: ImpactSolverConfig::split_impulse_for_all_penetrations
  /// for the simpact run (off, the default, as users get it).
  RandomWorld(const RandomWorldSpec& spec, bool simpact,
              std::function<void(const bullet::ImpactReport&)> on_impact = {}, bool split_all = false);
  ~RandomWorld();
  RandomWorld(const RandomWorld&) = delete;
  RandomWorld& operator=(const RandomWorld&) = delete;

  /// One step of spec.dt: kinematic bodies moved by their velocities, then
  /// stepSimulation(dt, 1, dt). Lets through whatever stepSimulation throws.
  void step();
  /// Σ ½ m v² + ½ ωᵀ I ω over the dynamic bodies [J].
  double kinetic_energy() const;
  /// Every body's transform and velocities are finite.
  bool finite() const;
  /// Dynamic bodies only, in spec order (kinematic ones left out).
  const std::vector<btRigidBody*>& bodies() const { return bodies_; }
  BulletWorld& world() { return *world_; }
  const RandomWorldSpec& spec() const { return spec_; }

 private:
  struct Kinematic {
    btRigidBody* body;
    Eigen::Vector3d velocity;
    Eigen::Vector3d angular_velocity;
  };
  btRigidBody* add_body(btCollisionShape* shape, const BodyOptions& options, bool isotropic);

  RandomWorldSpec spec_;
  // Storage first: destroyed after the world that uses it.
  // Meshes before the shapes that read them (a GImpact mesh shape's parts
  // unlock their mesh when destroyed in a BT_THREADSAFE Bullet).
  std::vector<std::unique_ptr<btStridingMeshInterface>> meshes_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<double> heights_;  ///< a heightfield ground's samples (Bullet reads them in place)
  bool gimpact_registered_ = false;  ///< Bullet's GImpact algorithm is in the world's dispatcher
  std::vector<std::unique_ptr<btMotionState>> motion_states_;
  std::vector<std::unique_ptr<btRigidBody>> owned_bodies_;
  std::vector<std::unique_ptr<btTypedConstraint>> constraints_;
  std::unique_ptr<BulletWorld> world_;
  std::vector<btRigidBody*> all_bodies_;  ///< spec order, kinematic included
  std::vector<btRigidBody*> bodies_;
  std::vector<Kinematic> kinematics_;
};

// ── The harness ─────────────────────────────────────────────────────────────

/// A kinetic-energy gain counts when after > before · (1 + kEnergyGainTolerance).
/// 1e-9 relative (issue #10): kinetic energy summed over ≤ 20 bodies in
/// double carries ~1e-15 relative rounding; an elastic impact resolved by the
/// propagative law conserves energy to ~1e-13 relative (its reflections are
/// exact in exact arithmetic), so 1e-9 flags only real gains.
inline constexpr double kEnergyGainTolerance = 1e-9;
/// The same in single-precision Bullet: velocities stored in float carry
/// ~6e-8 relative rounding each, so a step's energy is known to ~1e-6.
inline constexpr double kEnergyGainToleranceSingle = 1e-5;
/// The tolerance for the btScalar this build uses.
double energy_gain_tolerance();

/// A stock run whose kinetic energy exceeds this multiple of the world's
/// initial kinetic energy (or of 1 J, whichever is larger) has diverged: the
/// worlds' bodies (≤ 1e3 kg, ≤ 20 m/s, falling at most ~10² m in 100 steps)
/// hold at most ~1e7 J of kinetic and potential energy together, so 1e9 × is
/// only reached by a base solver feeding energy in (NNCG on conflicting
/// joints reaches 1e24 J). When ours goes non-finite on such a world, the
/// base solver's instability is counted as the cause, not simpact.
inline constexpr double kStockDivergenceFactor = 1e9;

struct FuzzOptions {
  int steps = 100;                 ///< steps per world and solver, ≥ 1
  /// A step taking longer than this (CPU time of its thread) marks the world as over
  /// budget (a hang candidate) [s].
  double step_budget_seconds = 2.0;
  /// The world's simpact run stops when its steps have taken this long [s].
  double world_budget_seconds = 30.0;
  bool run_stock = true;           ///< also run the stock base solver on the same world
  /// Print every gaining impact report and step to stderr (for --only runs).
  bool verbose = false;
  /// Print every impact report and every step's kinetic energy, ours and
  /// stock, to stderr (implies verbose; for --only runs).
  bool trace = false;
  /// Run simpact with ImpactSolverConfig::split_impulse_for_all_penetrations
  /// (the base solver then corrects every penetration by split impulse,
  /// never in the real velocity).
  bool split_all = false;
};

/// What one world did. "Ours": simpact in front of spec.base; "stock":
/// spec.base alone on the same world.
struct FuzzWorldResult {
  std::int64_t index = 0;
  RandomWorldKind kind = RandomWorldKind::kGeneral;
  int steps = 0;                 ///< steps simpact completed
  int stock_steps = 0;
  bool escaped = false;          ///< an exception escaped stepSimulation (ours)
  std::string escape_message;
  int escape_step = -1;
  bool stock_escaped = false;
  bool non_finite = false;       ///< a non-finite state after a step (ours)
  int non_finite_step = -1;
  bool stock_non_finite = false;
  int stock_non_finite_step = -1;
  double initial_energy = 0.0;     ///< kinetic energy before the first step [J]
  double stock_max_energy = 0.0;   ///< largest kinetic energy of the stock run [J]
  // Conservative and elastic worlds only:
  int impact_gains = 0;          ///< impact reports with energy_after > energy_before (tol.)
  double worst_impact_gain = 0.0;  ///< largest relative gain among them
  /// kConservative: steps whose kinetic energy grew, with the bodies of the
  /// clusters simpact resolved in that step ending it with more kinetic
  /// energy than they started it with (ours).
  int step_gains = 0;
  /// kConservative: the same for the bodies simpact resolved in the step
  /// before (and neither resolved nor handed to the base solver in this
  /// one): the base solver acting on what the impact left behind — contacts
  /// a plastic law (routh) left closed, whose small overlap (turning bodies
  /// create it) SI's and NNCG's Baumgarte term pushes out. Ours too.
  int after_impact_step_gains = 0;
  double worst_step_gain = 0.0;  ///< of both
  /// kConservative: the other steps whose kinetic energy grew — on bodies
  /// simpact resolved nothing for in that step or the one before (no
  /// impact, or a cluster
  /// handed to the base solver with Bullet's restitution,
  /// ImpactReport::fallback_to_base): the base solver's own gains, counted
  /// apart (Bullet's MLCP Lemke returns adhesive impulses on separating and
  /// speculative points; SI's Baumgarte term pushes a body wedged into a
  /// concave ground out in the real velocity).
  int base_step_gains = 0;
  double worst_base_step_gain = 0.0;
  int first_gain_step = -1;      ///< first step with an impact or step gain
  /// kElastic: steps that gained beyond their impact phase's gain (ours):
  /// free flight with Bullet's implicit gyroscopic term.
  int gyroscopic_gains = 0;
  double worst_gyroscopic_gain = 0.0;
  int stock_step_gains = 0;      ///< conservative worlds: the same count for stock
  // Every world:
  /// Impact reports gaining energy in kGeneral worlds, clusters with a
  /// kinematic partner or a body with factors left out (they may give
  /// energy). Counted apart, not a failure: joints whose pre-impact
  /// velocities violate them are a known source (issue #10).
  int general_impact_gains = 0;
  double worst_general_impact_gain = 0.0;
  std::int64_t impacts = 0;
  std::int64_t fallbacks = 0;
  std::int64_t fallbacks_to_base = 0;  ///< clusters handed to the base solver (ImpactStats)
  std::int64_t energy_restored = 0;    ///< outcomes whose rounding gain was restored (ImpactStats)
  double seconds = 0.0;          ///< CPU time of our steps (the running thread's) [s]
  double stock_seconds = 0.0;
  double slowest_step_seconds = 0.0;
  bool over_budget = false;      ///< a step over step_budget or the world over its budget

  /// The stock base solver alone diverged on this world: its kinetic
  /// energy passed kStockDivergenceFactor × max(initial energy, 1 J).
  bool stock_diverged() const {
    return stock_non_finite ||
           stock_max_energy > kStockDivergenceFactor * std::max(initial_energy, 1.0);
  }
  /// A non-finite state of ours that stock does not share: stock stays
  /// finite and bounded on the same world.
  bool ours_alone_non_finite() const { return non_finite && !stock_diverged(); }
  bool failed() const {
    return escaped || ours_alone_non_finite() || impact_gains > 0 || step_gains > 0 ||
           after_impact_step_gains > 0 || over_budget;
  }
};

/// Runs world `index` of `seed` with simpact then (options.run_stock) with
/// the stock base solver, each for options.steps steps or until the first
/// escape or non-finite state. Never throws for a world's failure: it is
/// recorded in the result.
FuzzWorldResult run_fuzz_world(std::uint64_t seed, std::int64_t index,
                               const FuzzOptions& options = {},
                               const RandomWorldOptions& world_options = {});

// ── The multibody variant ───────────────────────────────────────────────────
// Featherstone worlds (btMultiBodyDynamicsWorld through MultiBodyWorld):
// fixed-base chains and free-base trees of 1–3 revolute or prismatic links
// (random axes, sphere colliders — boxes too with box_links — masses 10^U(−1, 1.5) kg, joint speeds up
// to 3), free rigid spheres up to 10 m/s, an optional ground plane, gravity
// on or off; law propagative or routh; base SI, MLCP Dantzig or MLCP Lemke.
// Elastic worlds (e = 1, μ = 0 everywhere) test that the impact phase never
// gains. The stock run is Bullet's btMultiBodyConstraintSolver.

struct RandomMultiBodySpec {
  std::uint64_t seed = 0;
  std::int64_t index = 0;
  bool elastic = false;
  bullet::ImpactLaw law = bullet::ImpactLaw::kPropagative;  ///< propagative or routh
  bullet::MultiBodyBaseSolver base = bullet::MultiBodyBaseSolver::kSequentialImpulse;
  double dt = 1.0 / 60.0;
  Eigen::Vector3d gravity = Eigen::Vector3d::Zero();
  bool plane = false;
  double plane_restitution = 1.0;
  struct Tree {
    bool free_base = false;
    Eigen::Vector3d base_position = Eigen::Vector3d::Zero();  ///< fixed base
    FreeBase base;                                            ///< free base
    std::vector<Link> links;
    std::vector<SphereCollider> colliders;                    ///< free base only
  };
  std::vector<Tree> trees;
  struct Sphere {
    double radius = 0.1;
    BodyOptions options;
  };
  std::vector<Sphere> spheres;
};

/// A pure function of (seed, index), like random_world_spec. With
/// `box_links`, about half of the links (cradle bobs included) collide as
/// boxes within their spheres (Link::box_half_extents), drawn from a stream
/// of their own after everything else: the world is otherwise the one
/// without them, body for body.
RandomMultiBodySpec random_multibody_spec(std::uint64_t seed, std::int64_t index, bool box_links = false);
std::string describe(const RandomMultiBodySpec& spec);

/// Runs multibody world `index` of `seed` with simpact (MultiBodyImpactSolver)
/// and then with the stock btMultiBodyConstraintSolver. The result's
/// impact_gains counts impact reports that gain energy in ANY multibody
/// world (none has a kinematic body or factors); kind is kElastic or
/// kGeneral; step_gains and gyroscopic_gains stay 0.
FuzzWorldResult run_fuzz_multibody_world(std::uint64_t seed, std::int64_t index,
                                         const FuzzOptions& options = {}, bool box_links = false);

/// One line naming what failed (empty when nothing did).
std::string failure_summary(const FuzzWorldResult& result);

}  // namespace simpact::scenes
