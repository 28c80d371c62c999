// simpact CLI — `simpact scene`: a Bullet world from JSON, simulated, and its
// final state out.
//
// The world is a simpact::scenes::BulletWorld (demos/scenes), so the command
// runs exactly what the demos and the Bullet scenario tests run. A scene
// with "multibodies" runs instead in a simpact::scenes::MultiBodyWorld (a
// btMultiBodyDynamicsWorld with MultiBodyImpactSolver, or Bullet's
// btMultiBodyConstraintSolver for solver stock_si): fixed-base chains or
// free-base (floating) trees of revolute and prismatic links with sphere
// colliders, next to rigid spheres and static planes. What the command does
// not build there (spherical, planar and fixed joints, colliders other than
// spheres, extra colliders on fixed-base chains, boxes, kinematic bodies,
// rigid joints, the minimum restitution combiner, law auto) is an error
// naming the feature, never approximated.
// Every key is checked: an unknown or misspelt key is an error naming it,
// and errors inside "bodies", "joints", "multibodies", "links" or
// "colliders" name the entry ("multibodies" entry 1: "links" entry 0: ...).
#pragma once

#include <simpact_cli/json_input.h>

#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

class btDiscreteDynamicsWorld;

namespace simpact::bullet {
struct ImpactReport;
}

namespace simpact::cli {

inline constexpr std::string_view kSceneHelp = R"(scene input: one JSON object with the keys
  bodies               list of bodies (below), at least one unless the
                       scene has multibodies
  dt                   step [s] > 0; every step is stepSimulation(dt, 1, dt)
  steps                integer >= 0; steps x substeps x bodies <= 1000000,
                       where bodies counts bodies, joints, and each
                       multibody's base, links and colliders (at most 1000)
  substeps             integer in [1, 1000]: every step is that many
                       stepSimulation(dt/substeps) calls            (default 1)
  record               integer >= 1: the output's "trajectory" holds the
                       state at step 0 and every record-th step (default none)
  Every other number lies within +-1e6.
  gravity              3 numbers                     (default [0, -9.81, 0])
  solver               stock_si | stock_nncg | stock_mlcp_dantzig |
                       stock_mlcp_lemke | simpact          (default simpact)
  simpact              solver simpact only; object with the optional keys
    policy             most_negative | least_negative | time_of_impact |
                       index | random              (default most_negative)
    seed               integer >= 0, for policy random
    base               the stock solver behind simpact   (default stock_si)
    impact_threshold   [m/s] >= 0                     (default automatic)
    sustained_threshold  [m/s] >= 0, for contacts that carried load
                       in the last step; never below impact_threshold
                       (default automatic, 2 |g| h)
    touch_tolerance    [m] >= 0                             (default 1e-3)
    max_reflections    integer in [0, 10000000]; 0 = automatic cap
    law                propagative | routh | routh_restitution | auto |
                       variational | pasquero      (default propagative)
                       routh: Routh sampling, frictional and inelastic, one
                       sample per impact from seed; routh_restitution: the
                       same with Stronge's energetic restitution R;
                       auto: frictionless or elastic clusters propagative,
                       frictional plastic ones routh, frictional
                       0 < R < 1 routh_restitution; variational,
                       pasquero: those elastic laws on clusters with R = 1,
                       the others as propagative (impact_solver.h)
    routh              laws routh, routh_restitution or auto only; object
                       with the optional keys
      step             impulse cap scale [N s] >= 0      (default 0 = automatic)
      automatic_step   automatic | single_contact | simultaneous: the rule
                       of the automatic step (routh.h)    (default automatic)
      max_steps        integer in [1, 10000], LCPs per sample before the
                       fallback                                      (100)
      cone_directions  integer in [3, 64], friction cone directions (4)
      sampler          uniform | low_discrepancy            (default uniform)
      increment_solver automatic | lemke | box_pivoting: how each increment
                       LCP is solved (routh.h)            (default automatic)
      max_contacts     integer >= 1: larger Routh clusters are left to the
                       base solver (R = 0) or the propagative law  (32)
    variational_budget law variational only; integer >= 1: reflections the
                       enumeration of every sequence may spend on one
                       impact; a cluster over it takes the propagative law
                                                                 (10000)
  restitution_combiner product (Bullet's default) | minimum
  joints               list of {"type": "point2point", "body": index of a
                       dynamic body, "pivot_world": 3 numbers}  (default [])
  multibodies          list of Featherstone multibodies (below), at least
                       one; the scene then runs in a MultiBodyWorld
  a body:
    shape              sphere | box | plane
    radius             sphere: [m] > 0
    half_extents       box: 3 numbers > 0 [m]
    normal, offset     plane: the static plane normal.x = offset (unit normal)
    mass               [kg] >= 0, 0 = static   (default 1; planes must be 0)
    kinematic          moves at its velocities whatever hits it; mass 0
    position           3 numbers                       (default [0, 0, 0])
    orientation        quaternion x y z w               (default [0, 0, 0, 1])
    inertia            dynamic bodies: 3 principal moments [kg m^2] > 0 in
                       the body frame        (default Bullet's for the shape)
    velocity, angular_velocity   3 numbers, world frame; dynamic and
                       kinematic bodies only             (default 0)
    restitution        in [0, 1]                                (default 0)
    friction           >= 0                                   (default 0.5)
    linear_factor, angular_factor   3 numbers          (default [1, 1, 1])
    never_sleep        never deactivate the body           (default false)
  in a scene with multibodies:
  solver               simpact (MultiBodyImpactSolver) | stock_si (Bullet's
                       btMultiBodyConstraintSolver)    (default simpact)
  simpact              as above, without base, plus
    resolve_plastic_impacts  true: restitution-0 clusters by the
                       propagative law, not left to Bullet  (default false)
  bodies               optional; spheres (not kinematic, no linear_factor or
                       angular_factor) and planes (normal, offset,
                       restitution, friction) only
  joints               not supported
  restitution_combiner product only
  a multibody:
    base               the root body, fixed (default) or free:
      type             fixed | free                        (default fixed)
      position         3 numbers [m]: a fixed base's point, a free base's
                       centre of mass                  (default [0, 0, 0])
      free bases only:
      orientation      quaternion x y z w, base to world (default identity)
      mass             [kg] > 0                                (default 1)
      radius           [m] > 0: a sphere collider at the centre of mass
      restitution, friction   of that sphere (need radius)  (0, 0.5)
      inertia          3 principal moments > 0 [kg m2] along the base's
                       axes (default the solid sphere 0.4 m r^2; required
                       without radius)
      velocity, angular_velocity   3 numbers, world frame, of the centre of
                       mass [m/s, rad/s]                        (default 0)
      colliders        list of spheres fixed to the base (below)
    links              list of links, parents before children; at least one
                       for a fixed base, may be empty for a free one
  a link (world frame, the given configuration is q = 0; the link's frame
  is the world's there, whatever the base's orientation):
    parent             -1 (the base) or an earlier link's index  (default -1)
    joint              revolute | prismatic (spherical, planar, fixed: not
                       supported)                        (default revolute)
    axis               3 numbers, not zero: the hinge axis, or the slide
                       direction of a prismatic joint   (default [0, 0, 1])
    center             3 numbers: the centre of mass [m]
    pivot              3 numbers: the joint's point [m]; prismatic: any
                       point of the slide line         (default center)
    mass               [kg] > 0                                 (default 1)
    radius             [m] > 0: the link's sphere collider at its centre of
                       mass; required on a fixed base (or box), optional on
                       a free one
    box                3 half extents > 0 [m]: instead of the sphere, a box
                       collider at the centre of mass, edges along the
                       world axes at q = 0 (as URDF box links)
    restitution        of that sphere or box, in [0, 1] (needs radius or
                       box)                                     (default 0)
    friction           of that sphere or box, >= 0 (needs radius or box)
                                                              (default 0.5)
    inertia            3 principal moments > 0 [kg m2] along the world axes
                       (default the solid sphere 0.4 m r^2 or the solid box
                       m (b^2 + c^2) / 3, ...; required without radius or
                       box)
    joint_velocity     q dot [rad/s revolute, m/s prismatic]    (default 0)
    colliders          free base only: list of spheres fixed to the link
  a collider (a sphere fixed to its body; all spheres of one body share
  restitution and friction):
    center             3 numbers, world frame at q = 0 [m]
    radius             [m] > 0
    restitution        in [0, 1]                                (default 0)
    friction           >= 0                                   (default 0.5)
  output: "bodies" [{position, orientation (x y z w, body to world),
  velocity, angular_velocity (world frame)}] in input order,
  "energy_initial", "energy_final" (kinetic + gravitational potential of the
  dynamic bodies), "impacts" (resolved by simpact; 0 for stock solvers),
  "routh_impacts" (of those, resolved with a Routh sample). With
  multibodies also "multibodies" [{joint_positions, joint_velocities [rad,
  rad/s; m, m/s for prismatic joints], links [{position, velocity} of each
  centre of mass], energy_initial, energy_final (kinetic + potential), and
  for a free base "base" {position (centre of mass), orientation (x y z w),
  velocity, angular_velocity}}] in input order; the totals include them.
  With record: "trajectory" [{step, time [s], bodies, and with multibodies
  multibodies (as above, without their energies)}].
)";

/// Bounds on a scene, checked before anything is built (see kSceneHelp).
///
/// Every physical number (any number except the integer keys steps, seed,
/// max_reflections, max_steps, cone_directions, max_contacts, body, parent)
/// must lie within ±1e6. Bullet may run in single precision, where squares of
/// numbers above ~1e19 overflow, and positions beyond 1e6 m already have
/// float steps of 6 cm; no scene in SI units needs more.
inline constexpr double kMaxSceneMagnitude = 1e6;
/// Entries of "bodies" and "joints", plus each multibody's base, links and
/// colliders. Bullet's cost per step grows with touching pairs, up to
/// quadratically; 1000 bodies is far above any scene written by hand.
inline constexpr std::int64_t kMaxSceneBodies = 1000;
/// The work limit: steps × (bodies as counted above) ≤ 10⁶ body-steps,
/// which bounds one command to about a minute even for a pile where every
/// body touches its neighbours (the measured costs: docs/routh.md, "Costs
/// behind the defaults"). Longer simulations belong in a program using the
/// library, not in one command.
inline constexpr std::int64_t kMaxSceneWork = 1'000'000;
/// Most Bullet steps per scene step ("substeps"); the work limit counts
/// them all.
inline constexpr int kMaxSceneSubsteps = 1000;

/// Every key the scene parser accepts, object by object ("scene", "simpact",
/// "routh", "body", "joint", "multibody", "base", "link", "collider"): what
/// kSceneHelp must document (tests/cli/readme_help_test.cpp checks both ways).
const std::vector<std::pair<std::string, std::vector<std::string>>>& scene_accepted_keys();

/// The whole command on a parsed document. Throws InputError, also when the
/// state of a body becomes non-finite during the run (the step is named).
Json scene_json(const Json& input);

/// Watches a scene run (replay.h records one this way). Exceptions thrown by
/// impact() are caught by the adapter (its stats count them), so an
/// observer must not rely on throwing from it.
class SceneObserver {
 public:
  virtual ~SceneObserver() = default;
  /// The world is built, before step 0.
  virtual void built(const btDiscreteDynamicsWorld& world) = 0;
  /// The state after `step` steps (0: the initial state), at `time` [s],
  /// with the kinetic energy of every dynamic body and multibody [J].
  virtual void stepped(std::int64_t step, double time, double kinetic_energy) = 0;
  /// An impact simpact resolved during the step that ends at `step`.
  virtual void impact(std::int64_t step, double time, const bullet::ImpactReport& report) = 0;
};

/// scene_json, reporting to `observer` (may be nullptr).
Json scene_json(const Json& input, SceneObserver* observer);

/// `simpact scene`: run_json_command(scene_json, ...).
int run_scene(std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace simpact::cli
