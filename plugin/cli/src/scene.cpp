#include <simpact_cli/scene.h>

#include <simpact/propagative.h>
#include <simpact/routh.h>
#include <simpact_cli/cli.h>
#include <simpact_scenes/bullet_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <array>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact::cli {
namespace {

using scenes::BodyOptions;
using scenes::BulletWorld;
using scenes::SolverKind;
using scenes::WorldOptions;

const std::vector<std::string> kSceneKeys = {
    "bodies", "dt", "steps", "gravity", "solver", "simpact", "restitution_combiner", "joints",
};
const std::vector<std::string> kSimpactKeys = {
    "policy", "seed", "base", "impact_threshold", "touch_tolerance", "max_reflections", "law", "routh",
};
const std::vector<std::string> kRouthKeys = {
    "step", "max_steps", "cone_directions", "sampler", "max_contacts",
};
const std::vector<std::string> kBodyKeys = {
    "shape",       "mass",          "kinematic",      "position",
    "orientation", "velocity",      "angular_velocity", "restitution",
    "friction",    "linear_factor", "angular_factor", "never_sleep",
};
const std::vector<std::string> kJointKeys = {"type", "body", "pivot_world"};

struct Shape {
  const char* name;
  std::vector<std::string> keys;  ///< besides kBodyKeys
};
const std::array<Shape, 3> kShapes = {{
    {"sphere", {"radius"}},
    {"box", {"half_extents"}},
    {"plane", {"normal", "offset"}},
}};

// kAll enumerates outcomes instead of choosing one, so it cannot drive a
// simulation (impact_solver.h).
constexpr std::array<OrderPolicy, 5> kSimulationPolicies = {
    OrderPolicy::kMostNegative, OrderPolicy::kLeastNegative, OrderPolicy::kTimeOfImpact,
    OrderPolicy::kIndex,        OrderPolicy::kRandom,
};

// kSceneHelp spells these out.
static_assert(kMaxConeDirections == 64, "update the cone_directions range in kSceneHelp");
static_assert(bullet::RouthSettings{}.max_contacts == 8 && bullet::RouthSettings{}.max_steps == 100 &&
                  bullet::RouthSettings{}.cone_directions == 4,
              "update the routh defaults in kSceneHelp");

constexpr std::array<bullet::ImpactLaw, 3> kLaws = {
    bullet::ImpactLaw::kPropagative, bullet::ImpactLaw::kRouth, bullet::ImpactLaw::kAuto,
};

const Extent kThree{3, "x, y, z"};
const Extent kQuaternion{4, "x, y, z, w"};

Eigen::Vector3d read_vector3(const Json& object, const std::string& key) {
  return read_vector(object, key, kThree);
}

Eigen::Vector3d read_vector3_or(const Json& object, const std::string& key,
                                const Eigen::Vector3d& fallback) {
  return object.contains(key) ? read_vector3(object, key) : fallback;
}

[[noreturn]] void reject(const std::string& key, const std::string& requirement, double got) {
  throw InputError(quote(key) + " must be " + requirement + " (got " + excerpt(got) + ")");
}

const Json& read_array(const Json& object, const std::string& key) {
  const Json& value = require(object, key);
  if (!value.is_array()) {
    throw InputError(quote(key) + " must be an array (got " + excerpt(value) + ")");
  }
  return value;
}

/// Runs `read` on entry `index` of the list `list`, prefixing any error with
/// where it is.
template <class Read>
void in_entry(const std::string& list, std::size_t index, Read read) {
  const std::string where = quote(list) + " entry " + std::to_string(index) + ": ";
  try {
    read();
  } catch (const InputError& e) {
    throw InputError(where + e.what());
  } catch (const std::invalid_argument& e) {  // BulletWorld's own checks
    throw InputError(where + e.what());
  }
}

SolverKind read_solver(const Json& object, const std::string& key, bool allow_simpact) {
  const std::string name = read_string(object, key);
  const std::optional<SolverKind> kind = scenes::parse_solver_kind(name);
  if (kind && (allow_simpact || *kind != SolverKind::kSimpact)) return *kind;
  std::vector<std::string> names;
  for (SolverKind each : scenes::solver_kinds()) {
    if (allow_simpact || each != SolverKind::kSimpact) names.emplace_back(to_string(each));
  }
  throw not_one_of(key, names, name);
}

OrderPolicy read_policy(const Json& object) {
  const std::string name = read_string(object, "policy");
  for (OrderPolicy policy : kSimulationPolicies) {
    if (name == to_string(policy)) return policy;
  }
  std::vector<std::string> names;
  for (OrderPolicy policy : kSimulationPolicies) names.emplace_back(to_string(policy));
  throw not_one_of("policy", names, name);
}

/// An integer in [minimum, maximum].
int read_int_in(const Json& object, const std::string& key, int minimum, int maximum) {
  const std::int64_t value = read_integer(object, key, minimum);
  if (value > maximum) {
    throw InputError(quote(key) + " must be an integer in [" + std::to_string(minimum) + ", " +
                     std::to_string(maximum) + "] (got " + std::to_string(value) + ")");
  }
  return static_cast<int>(value);
}

bullet::ImpactLaw read_law(const Json& object) {
  const std::string name = read_string(object, "law");
  for (bullet::ImpactLaw law : kLaws) {
    if (name == bullet::to_string(law)) return law;
  }
  std::vector<std::string> names;
  for (bullet::ImpactLaw law : kLaws) names.emplace_back(bullet::to_string(law));
  throw not_one_of("law", names, name);
}

void read_routh(const Json& object, bullet::RouthSettings& routh) {
  require_object(object, quote("routh"));
  check_keys(object, kRouthKeys);
  if (object.contains("step")) routh.step = read_at_least_zero(object, "step");
  if (object.contains("max_steps")) {
    routh.max_steps = read_int_in(object, "max_steps", 1, std::numeric_limits<int>::max());
  }
  if (object.contains("cone_directions")) {
    routh.cone_directions = read_int_in(object, "cone_directions", 3, kMaxConeDirections);
  }
  if (object.contains("sampler")) {
    const std::string name = read_string(object, "sampler");
    if (name == to_string(ImpulseSampler::kUniform)) {
      routh.sampler = ImpulseSampler::kUniform;
    } else if (name == to_string(ImpulseSampler::kLowDiscrepancy)) {
      routh.sampler = ImpulseSampler::kLowDiscrepancy;
    } else {
      throw not_one_of("sampler",
                       {to_string(ImpulseSampler::kUniform), to_string(ImpulseSampler::kLowDiscrepancy)},
                       name);
    }
  }
  if (object.contains("max_contacts")) {
    routh.max_contacts = read_int_in(object, "max_contacts", 1, std::numeric_limits<int>::max());
  }
}

void read_simpact(const Json& object, WorldOptions& options) {
  require_object(object, quote("simpact"));
  check_keys(object, kSimpactKeys);
  bullet::ImpactSolverConfig& config = options.simpact;
  if (object.contains("law")) config.law = read_law(object);
  if (object.contains("routh")) {
    if (config.law == bullet::ImpactLaw::kPropagative) {
      throw InputError(quote("routh") + " configures law \"routh\" or \"auto\" only (law is " +
                       quote(bullet::to_string(config.law)) + ")");
    }
    read_routh(object["routh"], config.routh);
  }
  if (object.contains("policy")) config.policy = read_policy(object);
  if (object.contains("seed")) config.seed = read_unsigned(object, "seed");
  if (object.contains("base")) options.base = read_solver(object, "base", false);
  if (object.contains("impact_threshold")) {
    config.impact_threshold = read_at_least_zero(object, "impact_threshold");
  }
  if (object.contains("touch_tolerance")) {
    config.touch_tolerance = read_at_least_zero(object, "touch_tolerance");
  }
  if (object.contains("max_reflections")) {
    config.max_reflections = read_integer(object, "max_reflections", 0);
  }
}

WorldOptions read_world_options(const Json& input) {
  WorldOptions options;
  options.solver = input.contains("solver") ? read_solver(input, "solver", true)
                                            : SolverKind::kSimpact;
  if (input.contains("simpact")) {
    if (options.solver != SolverKind::kSimpact) {
      throw InputError(quote("simpact") + " configures solver \"simpact\" only (solver is " +
                       quote(to_string(options.solver)) + ")");
    }
    read_simpact(input["simpact"], options);
  }
  options.gravity = read_vector3_or(input, "gravity", options.gravity);
  if (input.contains("restitution_combiner")) {
    const std::string name = read_string(input, "restitution_combiner");
    if (name == "product") {
      options.restitution_combiner = scenes::RestitutionCombiner::kProduct;
    } else if (name == "minimum") {
      options.restitution_combiner = scenes::RestitutionCombiner::kMinimum;
    } else {
      throw not_one_of("restitution_combiner", {"product", "minimum"}, name);
    }
  }
  return options;
}

const Shape& read_shape(const Json& body) {
  const std::string name = read_string(body, "shape");
  for (const Shape& shape : kShapes) {
    if (name == shape.name) return shape;
  }
  std::vector<std::string> names;
  for (const Shape& shape : kShapes) names.emplace_back(shape.name);
  throw not_one_of("shape", names, name);
}

BodyOptions read_body_options(const Json& body, bool is_plane) {
  BodyOptions options;
  if (body.contains("kinematic")) options.kinematic = read_bool(body, "kinematic");
  // Planes and kinematic bodies are infinitely massive.
  options.mass = is_plane || options.kinematic ? 0.0 : 1.0;
  if (body.contains("mass")) {
    options.mass = read_at_least_zero(body, "mass");
    if (options.mass != 0.0 && (is_plane || options.kinematic)) {
      reject("mass", std::string("0 for a ") + (is_plane ? "plane" : "kinematic body"),
             options.mass);
    }
  }
  options.position = read_vector3_or(body, "position", options.position);
  if (body.contains("orientation")) {
    const Eigen::VectorXd q = read_vector(body, "orientation", kQuaternion);
    if (q.norm() == 0.0) throw InputError(quote("orientation") + " must not be zero");
    options.orientation = Eigen::Quaterniond(q[3], q[0], q[1], q[2]);
  }
  options.velocity = read_vector3_or(body, "velocity", options.velocity);
  options.angular_velocity = read_vector3_or(body, "angular_velocity", options.angular_velocity);
  if (body.contains("restitution")) {
    options.restitution = read_at_least_zero(body, "restitution");
    if (options.restitution > 1.0) reject("restitution", "in [0, 1]", options.restitution);
  }
  if (body.contains("friction")) options.friction = read_at_least_zero(body, "friction");
  options.linear_factor = read_vector3_or(body, "linear_factor", options.linear_factor);
  options.angular_factor = read_vector3_or(body, "angular_factor", options.angular_factor);
  if (body.contains("never_sleep")) options.never_sleep = read_bool(body, "never_sleep");
  return options;
}

void add_body(BulletWorld& world, const Json& body) {
  require_object(body, "a body");
  const Shape& shape = read_shape(body);
  std::vector<std::string> allowed = kBodyKeys;
  allowed.insert(allowed.end(), shape.keys.begin(), shape.keys.end());
  check_keys(body, allowed);
  const std::string name = shape.name;
  const BodyOptions options = read_body_options(body, name == "plane");
  if (name == "sphere") {
    world.add_sphere(read_positive(body, "radius"), options);
  } else if (name == "box") {
    const Eigen::Vector3d half_extents = read_vector3(body, "half_extents");
    if (!(half_extents.array() > 0.0).all()) {
      throw InputError(quote("half_extents") + " must be > 0");
    }
    world.add_box(half_extents, options);
  } else {
    const Eigen::Vector3d normal = read_vector3(body, "normal");
    if (normal.norm() == 0.0) throw InputError(quote("normal") + " must not be zero");
    world.add_plane(normal, read_number(body, "offset"), options);
  }
}

void add_joint(BulletWorld& world, const Json& joint) {
  require_object(joint, "a joint");
  check_keys(joint, kJointKeys);
  const std::string type = read_string(joint, "type");
  if (type != "point2point") throw not_one_of("type", {"point2point"}, type);
  const std::uint64_t index = read_unsigned(joint, "body");
  const std::vector<btRigidBody*>& bodies = world.bodies();
  if (index >= bodies.size()) {
    throw InputError(quote("body") + " must index \"bodies\" (0 to " +
                     std::to_string(bodies.size() - 1) + ", got " + std::to_string(index) + ")");
  }
  btRigidBody* body = bodies[index];
  if (body->isStaticOrKinematicObject()) {
    throw InputError(quote("body") + " " + std::to_string(index) +
                     " is static or kinematic: a joint holds a dynamic body");
  }
  world.add_point2point(body, read_vector3(joint, "pivot_world"));
}

Json to_json(const Eigen::Vector3d& v) { return Json::array({v.x(), v.y(), v.z()}); }

}  // namespace

Json scene_json(const Json& input) {
  require_object(input, "the input");
  check_keys(input, kSceneKeys);
  const double dt = read_positive(input, "dt");
  const std::int64_t steps = read_integer(input, "steps", 0);
  BulletWorld world(read_world_options(input));

  const Json& bodies = read_array(input, "bodies");
  if (bodies.empty()) throw InputError(quote("bodies") + " must have at least one body");
  for (std::size_t i = 0; i < bodies.size(); ++i) {
    in_entry("bodies", i, [&] { add_body(world, bodies[i]); });
  }
  if (input.contains("joints")) {
    const Json& joints = read_array(input, "joints");
    for (std::size_t i = 0; i < joints.size(); ++i) {
      in_entry("joints", i, [&] { add_joint(world, joints[i]); });
    }
  }

  const double energy_initial = world.energy();
  for (std::int64_t i = 0; i < steps; ++i) world.step(dt);

  Json states = Json::array();
  for (const btRigidBody* body : world.bodies()) {
    states.push_back({{"position", to_json(scenes::position(*body))},
                      {"velocity", to_json(scenes::velocity(*body))},
                      {"angular_velocity", to_json(scenes::angular_velocity(*body))}});
  }
  Json output;
  output["bodies"] = std::move(states);
  output["energy_initial"] = energy_initial;
  output["energy_final"] = world.energy();
  output["impacts"] = world.impacts();
  output["routh_impacts"] =
      world.impact_solver() != nullptr ? world.impact_solver()->stats().routh_impacts : 0;
  return output;
}

int run_scene(std::istream& in, std::ostream& out, std::ostream& err) {
  return run_json_command(scene_json, in, out, err);
}

}  // namespace simpact::cli
