// simpact CLI — `simpact scene`: a Bullet world from JSON, simulated, and its
// final state out.
//
// The world is a simpact::scenes::BulletWorld (demos/scenes), so the command
// runs exactly what the demos and the Bullet scenario tests run. Every key is
// checked: an unknown or misspelt key is an error naming it, and errors
// inside "bodies" or "joints" name the entry ("bodies" entry 2: ...).
#pragma once

#include <simpact_cli/json_input.h>

#include <iosfwd>
#include <string_view>

namespace simpact::cli {

inline constexpr std::string_view kSceneHelp = R"(scene input: one JSON object with the keys
  bodies               list of bodies (below), at least one
  dt                   step [s] > 0; every step is stepSimulation(dt, 1, dt)
  steps                integer >= 0
  gravity              3 numbers                     (default [0, -9.81, 0])
  solver               stock_si | stock_nncg | stock_mlcp_dantzig |
                       stock_mlcp_lemke | simpact          (default simpact)
  simpact              solver simpact only; object with the optional keys
    policy             most_negative | least_negative | time_of_impact |
                       index | random              (default most_negative)
    seed               integer >= 0, for policy random
    base               the stock solver behind simpact   (default stock_si)
    impact_threshold   [m/s] >= 0                     (default automatic)
    touch_tolerance    [m] >= 0                             (default 1e-3)
    max_reflections    integer >= 0; 0 = automatic cap
    law                propagative | routh | auto      (default propagative)
                       routh: Routh sampling, frictional and inelastic, one
                       sample per impact from seed; auto: frictionless or
                       elastic clusters propagative, frictional plastic
                       ones routh, frictional 0 < R < 1 the blend
                       R * elastic + (1 - R) * routh (impact_solver.h)
    routh              law routh or auto only; object with the optional keys
      step             impulse cap scale [N s] >= 0      (default 0 = automatic)
      max_steps        integer >= 1, LCPs per sample before the fallback (100)
      cone_directions  integer in [3, 64], friction cone directions (4)
      sampler          uniform | low_discrepancy            (default uniform)
      max_contacts     integer >= 1: larger Routh clusters are left to the
                       base solver (R = 0) or the propagative law   (8)
  restitution_combiner product (Bullet's default) | minimum
  joints               list of {"type": "point2point", "body": index of a
                       dynamic body, "pivot_world": 3 numbers}  (default [])
  a body:
    shape              sphere | box | plane
    radius             sphere: [m] > 0
    half_extents       box: 3 numbers > 0 [m]
    normal, offset     plane: the static plane normal.x = offset (unit normal)
    mass               [kg] >= 0, 0 = static   (default 1; planes must be 0)
    kinematic          moves at its velocities whatever hits it; mass 0
    position           3 numbers                       (default [0, 0, 0])
    orientation        quaternion x y z w               (default [0, 0, 0, 1])
    velocity, angular_velocity   3 numbers, world frame     (default 0)
    restitution        in [0, 1]                                (default 0)
    friction           >= 0                                   (default 0.5)
    linear_factor, angular_factor   3 numbers          (default [1, 1, 1])
    never_sleep        never deactivate the body           (default false)
  output: "bodies" [{position, velocity, angular_velocity}] in input order,
  "energy_initial", "energy_final" (kinetic + gravitational potential of the
  dynamic bodies), "impacts" (resolved by simpact; 0 for stock solvers),
  "routh_impacts" (of those, resolved with a Routh sample).
)";

/// The whole command on a parsed document. Throws InputError.
Json scene_json(const Json& input);

/// `simpact scene`: run_json_command(scene_json, ...).
int run_scene(std::istream& in, std::ostream& out, std::ostream& err);

}  // namespace simpact::cli
