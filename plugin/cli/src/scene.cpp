#include <simpact_cli/scene.h>

#include <simpact/propagative.h>
#include <simpact/routh.h>
#include <simpact_cli/cli.h>
#include <simpact_cli/resolve.h>
#include <simpact_worlds/bullet_world.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace simpact::cli {
namespace {

using worlds::BodyOptions;
using worlds::BulletWorld;
using worlds::FreeBase;
using worlds::JointKind;
using worlds::Link;
using worlds::MultiBodyWorld;
using worlds::MultiBodyWorldOptions;
using worlds::SphereCollider;
using worlds::SolverKind;
using worlds::WorldOptions;

const std::vector<std::string> kSceneKeys = {
    "bodies", "dt",     "steps",       "gravity", "solver", "simpact", "restitution_combiner",
    "joints", "multibodies", "substeps", "record",
};
const std::vector<std::string> kSimpactKeys = {
    "policy", "seed", "base", "impact_threshold", "sustained_threshold", "touch_tolerance", "max_reflections", "law",
    "routh",
    "variational_budget", "resolve_plastic_impacts",
};
const std::vector<std::string> kRouthKeys = {
    "step", "automatic_step", "max_steps", "cone_directions", "sampler", "max_contacts", "increment_solver",
};
const std::vector<std::string> kBodyKeys = {
    "shape",       "mass",          "kinematic",      "position",
    "orientation", "velocity",      "angular_velocity", "restitution",
    "friction",    "linear_factor", "angular_factor", "never_sleep", "inertia",
};
const std::vector<std::string> kJointKeys = {"type", "body", "pivot_world"};
const std::vector<std::string> kMultiBodyKeys = {"base", "links"};
// Keys of a fixed base, and those a free base adds.
const std::vector<std::string> kFixedBaseKeys = {"type", "position"};
const std::vector<std::string> kFreeBaseKeys = {
    "orientation", "mass", "inertia", "velocity", "angular_velocity", "radius", "restitution",
    "friction", "colliders",
};
const std::vector<std::string> kLinkKeys = {
    "parent", "joint", "pivot", "axis", "center", "mass", "inertia", "radius", "box", "restitution",
    "friction", "joint_velocity", "colliders",
};
const std::vector<std::string> kColliderKeys = {"center", "radius", "restitution", "friction"};
// A scene with "multibodies" runs in a MultiBodyWorld: fixed or free bases,
// revolute or prismatic joints, sphere colliders, free rigid spheres and
// static planes. These keys of a rigid scene are not part of the multibody
// format (MultiBodyWorld itself takes kinematic spheres and factors, for
// the C++ tests) and are rejected by name instead of being ignored.
const std::vector<std::string> kRigidOnlyBodyKeys = {"kinematic", "linear_factor", "angular_factor"};
const std::vector<std::string> kRigidOnlyPlaneKeys = {"position", "orientation", "never_sleep"};
// Bullet's other multibody joint types: named so that asking for them says
// "not supported" rather than "unknown".
const std::vector<std::string> kUnsupportedJoints = {"spherical", "planar", "fixed"};
const char* const kMultibodyScene = "a scene with \"multibodies\"";
// Per-impact work limits, so that every step is bounded: Routh LCPs per
// sample (default 100; a sample usually ends after 2-10) and reflections
// (the automatic cap is a small multiple of the cluster's contacts).
constexpr int kMaxSceneRouthSteps = 10'000;
constexpr int kMaxSceneReflections = 10'000'000;
// A solid sphere's moment of inertia about its centre, over m r².
constexpr double kSolidSphere = 0.4;

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
static_assert(bullet::kDefaultVariationalBudget == 10'000, "update variational_budget's default in kSceneHelp");
static_assert(bullet::RouthSettings{}.max_contacts == 32 && bullet::RouthSettings{}.max_steps == 100 &&
                  bullet::RouthSettings{}.cone_directions == 4,
              "update the routh defaults in kSceneHelp");

constexpr std::array<bullet::ImpactLaw, 6> kLaws = {
    bullet::ImpactLaw::kPropagative, bullet::ImpactLaw::kRouth,    bullet::ImpactLaw::kRouthRestitution,
    bullet::ImpactLaw::kAuto,        bullet::ImpactLaw::kVariational, bullet::ImpactLaw::kPasquero,
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

double read_restitution(const Json& object) {
  const double restitution = read_at_least_zero(object, "restitution");
  if (restitution > 1.0) reject("restitution", "in [0, 1]", restitution);
  return restitution;
}

/// "orientation": a non-zero quaternion x y z w.
Eigen::Quaterniond read_orientation(const Json& object) {
  const Eigen::VectorXd q = read_vector(object, "orientation", kQuaternion);
  if (q.norm() == 0.0) throw InputError(quote("orientation") + " must not be zero");
  return Eigen::Quaterniond(q[3], q[0], q[1], q[2]);
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
  const std::optional<SolverKind> kind = worlds::parse_solver_kind(name);
  if (kind && (allow_simpact || *kind != SolverKind::kSimpact)) return *kind;
  std::vector<std::string> names;
  for (SolverKind each : worlds::solver_kinds()) {
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
  bullet::ImpactLaw law = bullet::ImpactLaw::kPropagative;
  try {
    law = bullet::parse_impact_law(name);
  } catch (const std::invalid_argument&) {
    std::vector<std::string> names;
    for (bullet::ImpactLaw known : kLaws) names.emplace_back(bullet::to_string(known));
    throw not_one_of("law", names, name);
  }
  return law;
}

void read_routh(const Json& object, bullet::RouthSettings& routh) {
  require_object(object, quote("routh"));
  check_keys(object, kRouthKeys);
  if (object.contains("step")) routh.step = read_at_least_zero(object, "step");
  if (object.contains("automatic_step")) routh.automatic_step = read_automatic_step(object);
  if (object.contains("max_steps")) {
    routh.max_steps = read_int_in(object, "max_steps", 1, kMaxSceneRouthSteps);
  }
  if (object.contains("cone_directions")) {
    routh.cone_directions = read_int_in(object, "cone_directions", 3, kMaxConeDirections);
  }
  if (object.contains("sampler")) routh.sampler = read_sampler(object);
  if (object.contains("increment_solver")) routh.increment_solver = read_increment_solver(object);
  if (object.contains("max_contacts")) {
    routh.max_contacts = read_int_in(object, "max_contacts", 1, std::numeric_limits<int>::max());
  }
}

/// The "simpact" object into the settings both adapters share
/// (bullet::ImpactSettings).
void read_simpact_config(const Json& object, bullet::ImpactSettings& config) {
  if (object.contains("law")) config.law = read_law(object);
  if (object.contains("routh")) {
    if (config.law == bullet::ImpactLaw::kPropagative) {
      throw InputError(quote("routh") + " configures laws \"routh\", \"routh_restitution\" or \"auto\" only (law is " +
                       quote(bullet::to_string(config.law)) + ")");
    }
    read_routh(object["routh"], config.routh);
  }
  if (object.contains("variational_budget")) {
    if (config.law != bullet::ImpactLaw::kVariational) {
      throw InputError(quote("variational_budget") + " configures law \"variational\" only (law is " +
                       quote(bullet::to_string(config.law)) + ")");
    }
    config.variational_budget =
        read_int_in(object, "variational_budget", 1, std::numeric_limits<int>::max());
  }
  if (object.contains("policy")) config.policy = read_policy(object);
  if (object.contains("seed")) config.seed = read_unsigned(object, "seed");
  if (object.contains("impact_threshold")) {
    config.impact_threshold = read_at_least_zero(object, "impact_threshold");
  }
  if (object.contains("sustained_threshold")) {
    config.sustained_threshold = read_at_least_zero(object, "sustained_threshold");
  }
  if (object.contains("touch_tolerance")) {
    config.touch_tolerance = read_at_least_zero(object, "touch_tolerance");
  }
  if (object.contains("max_reflections")) {
    config.max_reflections = read_int_in(object, "max_reflections", 0, kMaxSceneReflections);
  }
}

void read_simpact(const Json& object, WorldOptions& options) {
  require_object(object, quote("simpact"));
  check_keys(object, kSimpactKeys);
  if (object.contains("resolve_plastic_impacts")) {
    throw InputError(quote("resolve_plastic_impacts") + " is for " + kMultibodyScene + " only");
  }
  read_simpact_config(object, options.simpact);
  if (object.contains("base")) options.base = read_solver(object, "base", false);
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
      options.restitution_combiner = worlds::RestitutionCombiner::kProduct;
    } else if (name == "minimum") {
      options.restitution_combiner = worlds::RestitutionCombiner::kMinimum;
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
  if (body.contains("orientation")) options.orientation = read_orientation(body);
  options.velocity = read_vector3_or(body, "velocity", options.velocity);
  options.angular_velocity = read_vector3_or(body, "angular_velocity", options.angular_velocity);
  if (body.contains("restitution")) options.restitution = read_restitution(body);
  if (body.contains("friction")) options.friction = read_at_least_zero(body, "friction");
  options.linear_factor = read_vector3_or(body, "linear_factor", options.linear_factor);
  options.angular_factor = read_vector3_or(body, "angular_factor", options.angular_factor);
  if (body.contains("never_sleep")) options.never_sleep = read_bool(body, "never_sleep");
  if (body.contains("inertia")) {
    if (options.mass == 0.0) {
      throw InputError(quote("inertia") + " is for a dynamic body (mass > 0)");
    }
    const Eigen::Vector3d inertia = read_vector3(body, "inertia");
    if (!(inertia.minCoeff() > 0.0)) {
      throw InputError(quote("inertia") + " must be three principal moments > 0 [kg m^2] (got " +
                       excerpt(body["inertia"]) + ")");
    }
    options.inertia = inertia;
  }
  // A static body has no velocity (Bullet would keep one it never uses, and
  // simpact would read it as a moving partner's): a non-zero one is refused
  // rather than dropped.
  if (options.mass == 0.0 && !options.kinematic) {
    const auto require_still = [](const Eigen::Vector3d& velocity, const char* key) {
      if (!velocity.isZero(0.0)) {
        throw InputError(quote(key) + " is for a dynamic or kinematic body (a static one does not move)");
      }
    };
    require_still(options.velocity, "velocity");
    require_still(options.angular_velocity, "angular_velocity");
  }
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

// ── Scenes with "multibodies": a MultiBodyWorld ─────────────────────────────

[[noreturn]] void unsupported(const std::string& what, const std::string& why) {
  throw InputError(what + " is not supported in " + kMultibodyScene + " (" + why + ")");
}

MultiBodyWorldOptions read_multibody_world_options(const Json& input) {
  if (input.contains("joints")) {
    unsupported(quote("joints"), "rigid point2point joints are not part of MultiBodyWorld");
  }
  MultiBodyWorldOptions options;
  if (input.contains("solver")) {
    // MultiBodyWorld runs Bullet's btMultiBodyConstraintSolver (sequential
    // impulses) or MultiBodyImpactSolver in front of it.
    const std::string name = read_string(input, "solver");
    const std::string stock = to_string(SolverKind::kStockSi);
    const std::string simpact = to_string(SolverKind::kSimpact);
    if (name != stock && name != simpact) {
      throw InputError(quote("solver") + " must be one of: " + stock + ", " + simpact + " in " +
                       kMultibodyScene + " (got " + quote(name) + ")");
    }
    options.simpact = name == simpact;
  }
  if (input.contains("simpact")) {
    if (!options.simpact) {
      throw InputError(quote("simpact") + " configures solver \"simpact\" only (solver is " +
                       quote(to_string(SolverKind::kStockSi)) + ")");
    }
    const Json& object = input["simpact"];
    require_object(object, quote("simpact"));
    check_keys(object, kSimpactKeys);
    if (object.contains("base")) {
      unsupported(quote("base"), "MultiBodyImpactSolver always runs Bullet's multibody solver");
    }
    read_simpact_config(object, options.config);
    if (object.contains("resolve_plastic_impacts")) {
      options.config.resolve_plastic_impacts = read_bool(object, "resolve_plastic_impacts");
    }
  }
  options.gravity = read_vector3_or(input, "gravity", options.gravity);
  if (input.contains("restitution_combiner")) {
    const std::string name = read_string(input, "restitution_combiner");
    if (name == "minimum") {
      unsupported(quote("restitution_combiner") + " \"minimum\"",
                  "MultiBodyWorld keeps Bullet's product");
    }
    if (name != "product") throw not_one_of("restitution_combiner", {"product", "minimum"}, name);
  }
  return options;
}

/// A rigid body of a multibody scene: a sphere or a static plane.
btRigidBody* add_multibody_scene_body(MultiBodyWorld& world, const Json& body) {
  require_object(body, "a body");
  const Shape& shape = read_shape(body);
  std::vector<std::string> allowed = kBodyKeys;
  allowed.insert(allowed.end(), shape.keys.begin(), shape.keys.end());
  check_keys(body, allowed);
  const std::string name = shape.name;
  if (name == "box") {
    unsupported(quote("shape") + " \"box\"", "only spheres and planes next to multibodies");
  }
  for (const std::string& key : kRigidOnlyBodyKeys) {
    if (body.contains(key)) unsupported(quote(key), "the multibody format's bodies are dynamic or static");
  }
  if (name == "plane") {
    for (const std::string& key : kRigidOnlyPlaneKeys) {
      if (body.contains(key)) unsupported(quote(key) + " of a plane", "the plane is normal.x = offset");
    }
  }
  const BodyOptions options = read_body_options(body, name == "plane");
  if (name == "sphere") return world.add_sphere(read_positive(body, "radius"), options);
  const Eigen::Vector3d normal = read_vector3(body, "normal");
  if (normal.norm() == 0.0) throw InputError(quote("normal") + " must not be zero");
  return world.add_plane(normal, read_number(body, "offset"), options.restitution, options.friction);
}

/// A multibody as read, before it is built.
struct MultiBodyInput {
  bool free = false;
  Eigen::Vector3d position = Eigen::Vector3d::Zero();  ///< fixed base
  FreeBase base;                                       ///< free base
  std::vector<Link> links;
  std::vector<SphereCollider> colliders;  ///< on the base (−1) and links
};

/// "colliders" of body `body` (−1: the base): spheres fixed to it.
void read_colliders(const Json& object, int body, std::vector<SphereCollider>& colliders) {
  const Json& list = read_array(object, "colliders");
  for (std::size_t i = 0; i < list.size(); ++i) {
    in_entry("colliders", i, [&] {
      const Json& entry = list[i];
      require_object(entry, "a collider");
      check_keys(entry, kColliderKeys);
      SphereCollider c;
      c.body = body;
      c.center = read_vector3(entry, "center");
      c.radius = read_positive(entry, "radius");
      if (entry.contains("restitution")) c.restitution = read_restitution(entry);
      if (entry.contains("friction")) c.friction = read_at_least_zero(entry, "friction");
      colliders.push_back(c);
    });
  }
}

/// "inertia": principal moments [kg m²], each > 0.
Eigen::Vector3d read_inertia(const Json& object) {
  const Eigen::Vector3d inertia = read_vector3(object, "inertia");
  if (!(inertia.array() > 0.0).all()) throw InputError(quote("inertia") + " must be > 0");
  return inertia;
}

/// Without its own collider (`own`: "radius", a link's "radius" or "box")
/// a body's "restitution" and "friction" would configure nothing, and its
/// inertia has no default.
void require_radius_for(const Json& object, const std::string& body, const std::string& own) {
  for (const char* key : {"restitution", "friction"}) {
    if (object.contains(key)) {
      throw InputError(quote(key) + " of " + body + " needs " + own +
                       " (its own collider; colliders carry their own)");
    }
  }
  if (!object.contains("inertia")) {
    throw InputError(quote("inertia") + " is required for " + body + " without " + own);
  }
}

void read_base(const Json& base, MultiBodyInput& input) {
  require_object(base, quote("base"));
  std::vector<std::string> allowed = kFixedBaseKeys;
  allowed.insert(allowed.end(), kFreeBaseKeys.begin(), kFreeBaseKeys.end());
  check_keys(base, allowed);
  if (base.contains("type")) {
    const std::string type = read_string(base, "type");
    if (type != "fixed" && type != "free") throw not_one_of("type", {"fixed", "free"}, type);
    input.free = type == "free";
  }
  if (!input.free) {
    for (const std::string& key : kFreeBaseKeys) {
      if (base.contains(key)) {
        throw InputError(quote(key) + " is for a \"free\" base only (this base is fixed)");
      }
    }
    input.position = read_vector3_or(base, "position", input.position);
    return;
  }
  FreeBase& b = input.base;
  b.center = read_vector3_or(base, "position", b.center);
  if (base.contains("orientation")) b.orientation = read_orientation(base);
  if (base.contains("mass")) b.mass = read_positive(base, "mass");
  if (base.contains("radius")) {
    SphereCollider own;
    own.body = -1;
    own.center = b.center;
    own.radius = read_positive(base, "radius");
    if (base.contains("restitution")) own.restitution = read_restitution(base);
    if (base.contains("friction")) own.friction = read_at_least_zero(base, "friction");
    input.colliders.push_back(own);
    b.inertia = Eigen::Vector3d::Constant(kSolidSphere * b.mass * own.radius * own.radius);
  } else {
    require_radius_for(base, "a free base", quote("radius"));
  }
  if (base.contains("inertia")) b.inertia = read_inertia(base);
  b.velocity = read_vector3_or(base, "velocity", b.velocity);
  b.angular_velocity = read_vector3_or(base, "angular_velocity", b.angular_velocity);
  if (base.contains("colliders")) read_colliders(base, -1, input.colliders);
}

/// -1 (the base) or the index of an earlier link of the same multibody.
int read_parent(const Json& link, std::size_t index) {
  const Json& value = require(link, "parent");
  if (value.is_number_integer() && value.get<std::int64_t>() == -1) return -1;
  const std::optional<std::uint64_t> parent =
      value.is_number_unsigned() ? std::optional<std::uint64_t>(value.get<std::uint64_t>())
                                 : std::nullopt;
  if (!parent || *parent >= index) {
    const std::string range =
        index == 0 ? "-1: link 0 hangs from the base" : "-1 (the base) to " + std::to_string(index - 1);
    throw InputError(quote("parent") + " must be the base or an earlier link, " + range + " (got " +
                     excerpt(value) + ")");
  }
  return static_cast<int>(*parent);
}

Link read_link(const Json& link, std::size_t index, MultiBodyInput& input) {
  require_object(link, "a link");
  check_keys(link, kLinkKeys);
  Link result;
  if (link.contains("joint")) {
    const std::string joint = read_string(link, "joint");
    if (std::find(kUnsupportedJoints.begin(), kUnsupportedJoints.end(), joint) !=
        kUnsupportedJoints.end()) {
      unsupported(quote("joint") + " " + quote(joint), "simpact scene builds revolute and prismatic links");
    }
    if (joint != "revolute" && joint != "prismatic") {
      throw not_one_of("joint", {"revolute", "prismatic"}, joint);
    }
    result.joint = joint == "prismatic" ? JointKind::kPrismatic : JointKind::kRevolute;
  }
  if (link.contains("parent")) result.parent = read_parent(link, index);
  result.axis = read_vector3_or(link, "axis", result.axis);
  if (result.axis.norm() == 0.0) throw InputError(quote("axis") + " must not be zero");
  result.center = read_vector3(link, "center");
  // A slide has no point of its own: any point of the line will do.
  result.pivot = result.joint == JointKind::kPrismatic ? read_vector3_or(link, "pivot", result.center)
                                                       : read_vector3(link, "pivot");
  if (link.contains("mass")) result.mass = read_positive(link, "mass");
  if (link.contains("box")) {
    // A box link (as URDF loaders build them): the box is the collider, its
    // solid inertia the default.
    if (link.contains("radius")) {
      throw InputError(quote("box") + " and " + quote("radius") + " are two colliders for one link: give one");
    }
    const Eigen::Vector3d half = read_vector3(link, "box");
    if (!(half.array() > 0.0).all()) throw InputError(quote("box") + " half extents must be > 0");
    result.box_half_extents = half;
    result.radius = half.norm();
    const Eigen::Vector3d squared = half.cwiseProduct(half);
    result.inertia = result.mass / 3.0 *
                     Eigen::Vector3d(squared.y() + squared.z(), squared.x() + squared.z(), squared.x() + squared.y());
  } else if (input.free && !link.contains("radius")) {
    require_radius_for(link, "a link", quote("radius") + " or " + quote("box"));
    result.sphere_collider = false;
  } else {
    result.radius = read_positive(link, "radius");
  }
  if (link.contains("inertia")) result.inertia = read_inertia(link);
  if (link.contains("restitution")) result.restitution = read_restitution(link);
  if (link.contains("friction")) result.friction = read_at_least_zero(link, "friction");
  if (link.contains("joint_velocity")) result.joint_velocity = read_number(link, "joint_velocity");
  if (link.contains("colliders")) {
    if (!input.free) {
      unsupported(quote("colliders") + " of a fixed-base link",
                  "a fixed-base link collides through its own sphere, \"radius\", or box, \"box\"");
    }
    read_colliders(link, static_cast<int>(index), input.colliders);
  }
  return result;
}

btMultiBody* add_multibody(MultiBodyWorld& world, const Json& multibody) {
  require_object(multibody, "a multibody");
  check_keys(multibody, kMultiBodyKeys);
  MultiBodyInput input;
  if (multibody.contains("base")) read_base(multibody["base"], input);
  const Json& links = read_array(multibody, "links");
  if (links.empty() && !input.free) {
    throw InputError(quote("links") + " must have at least one link (a fixed base alone never moves)");
  }
  for (std::size_t i = 0; i < links.size(); ++i) {
    in_entry("links", i, [&] { input.links.push_back(read_link(links[i], i, input)); });
  }
  if (input.free) {
    if (input.links.empty() && input.colliders.empty()) {
      // Legal in Bullet, but nothing could ever touch it.
      throw InputError("a free base without links needs \"radius\" or \"colliders\"");
    }
    return world.add_free_base_tree(input.base, input.links, input.colliders);
  }
  return world.add_fixed_base_chain(input.position, input.links);
}

/// The solver's own validation of the "simpact" object, as an input error:
/// the solver throws std::invalid_argument naming the field, which would
/// otherwise surface from the world's constructor as an internal error.
template <class Config>
void checked_config(const Config& config) {
  try {
    bullet::validate(config);
  } catch (const std::invalid_argument& e) {
    throw InputError(quote("simpact") + ": " + e.what());
  }
}

// ── Bounds on a scene's numbers and work ────────────────────────────────────

// Keys whose values are integers with their own range checks (counts, seeds,
// indices); every other number in a scene is a physical quantity.
const std::vector<std::string> kIntegerKeys = {
    "steps", "seed", "max_reflections", "max_steps", "cone_directions", "max_contacts", "body",
    "parent",
};

bool finite_vector(const btVector3& v) {
  return std::isfinite(double(v.x())) && std::isfinite(double(v.y())) &&
         std::isfinite(double(v.z()));
}

[[noreturn]] void non_finite_at(std::int64_t step) {
  throw InputError("the simulation became non-finite at step " + std::to_string(step) +
                   ": the scene is too extreme for Bullet's arithmetic (speeds, masses or dt)");
}

void require_finite_state(const btRigidBody& body, std::int64_t step) {
  if (!finite_vector(body.getWorldTransform().getOrigin()) ||
      !finite_vector(body.getLinearVelocity()) || !finite_vector(body.getAngularVelocity())) {
    non_finite_at(step);
  }
}

void require_finite_state(const btMultiBody& mb, std::int64_t step) {
  bool finite = finite_vector(mb.getBasePos()) && finite_vector(mb.getBaseVel()) &&
                finite_vector(mb.getBaseOmega());
  for (int i = 0; finite && i < mb.getNumLinks(); ++i) {
    finite = std::isfinite(double(mb.getJointPos(i))) &&
             std::isfinite(MultiBodyWorld::joint_velocity(mb, i));
  }
  if (!finite) non_finite_at(step);
}

/// Every physical number of the scene within ±kMaxSceneMagnitude. Walks the
/// document (nesting is bounded by parse_json) before anything is built.
void check_scene_magnitudes(const Json& input) {
  std::vector<std::pair<const Json*, std::string>> pending = {{&input, ""}};
  while (!pending.empty()) {
    const auto [value, key] = pending.back();
    pending.pop_back();
    if (value->is_object()) {
      for (const auto& item : value->items()) pending.emplace_back(&item.value(), item.key());
    } else if (value->is_array()) {
      for (const Json& entry : *value) pending.emplace_back(&entry, key);
    } else if (value->is_number() &&
               std::find(kIntegerKeys.begin(), kIntegerKeys.end(), key) == kIntegerKeys.end() &&
               !(std::abs(value->get<double>()) <= kMaxSceneMagnitude)) {
      throw InputError(quote(key) + " is too large for a scene: physical numbers must lie within +-" +
                       excerpt(kMaxSceneMagnitude) + " (kMaxSceneMagnitude; got " + excerpt(*value) +
                       ")");
    }
  }
}

std::size_t array_size(const Json& object, const char* key) {
  const auto found = object.find(key);
  return found != object.end() && found->is_array() ? found->size() : 0;
}

/// The counts kSceneHelp documents, checked before any body is built.
void check_scene_work(const Json& input, std::int64_t steps) {
  std::size_t bodies = array_size(input, "bodies") + array_size(input, "joints");
  const auto multibodies = input.find("multibodies");
  if (multibodies != input.end() && multibodies->is_array()) {
    for (const Json& mb : *multibodies) {
      if (!mb.is_object()) continue;
      ++bodies;  // the base
      const auto base = mb.find("base");
      if (base != mb.end() && base->is_object()) bodies += array_size(*base, "colliders");
      const auto links = mb.find("links");
      if (links == mb.end() || !links->is_array()) continue;
      bodies += links->size();
      for (const Json& link : *links) {
        if (link.is_object()) bodies += array_size(link, "colliders");
      }
    }
  }
  if (bodies > static_cast<std::size_t>(kMaxSceneBodies)) {
    throw InputError("the scene has " + std::to_string(bodies) +
                     " bodies, joints, links and colliders: at most " +
                     std::to_string(kMaxSceneBodies) + " (kMaxSceneBodies)");
  }
  const auto count = static_cast<std::int64_t>(std::max<std::size_t>(bodies, 1));
  if (steps > kMaxSceneWork / count) {
    throw InputError(quote("steps") + " x bodies = " + std::to_string(steps) + " x " +
                     std::to_string(count) + " is more than " + std::to_string(kMaxSceneWork) +
                     " body-steps (kMaxSceneWork)");
  }
}

/// −m g·x, zero at the origin, as BulletWorld::potential_energy.
double potential_energy(double mass, const Eigen::Vector3d& gravity,
                        const Eigen::Vector3d& position) {
  return -mass * gravity.dot(position);
}

/// Kinetic (Bullet's own link velocities) plus gravitational potential (of
/// the links, and of a free base).
double multibody_energy(const btMultiBody& mb, const Eigen::Vector3d& gravity) {
  double energy = MultiBodyWorld::kinetic_energy(mb);
  if (!mb.hasFixedBase()) {
    energy += potential_energy(double(mb.getBaseMass()), gravity, worlds::to_eigen(mb.getBasePos()));
  }
  for (int i = 0; i < mb.getNumLinks(); ++i) {
    energy += potential_energy(double(mb.getLinkMass(i)), gravity, MultiBodyWorld::link_position(mb, i));
  }
  return energy;
}

/// Kinetic plus potential of a dynamic rigid body; 0 for static ones.
double rigid_energy(const btRigidBody& body, const Eigen::Vector3d& gravity) {
  if (body.isStaticOrKinematicObject()) return 0.0;
  return worlds::kinetic_energy(body) +
         potential_energy(double(body.getMass()), gravity, worlds::position(body));
}

Json to_json(const btQuaternion& q) {
  return Json::array({double(q.x()), double(q.y()), double(q.z()), double(q.w())});
}

Json rigid_state(const btRigidBody& body) {
  return {{"position", to_json(worlds::position(body))},
          {"orientation", to_json(body.getWorldTransform().getRotation())},
          {"velocity", to_json(worlds::velocity(body))},
          {"angular_velocity", to_json(worlds::angular_velocity(body))}};
}

/// A multibody's state as the output gives it (without its energies).
Json multibody_state(const btMultiBody& mb) {
  Json positions = Json::array();
  Json velocities = Json::array();
  Json links = Json::array();
  for (int i = 0; i < mb.getNumLinks(); ++i) {
    positions.push_back(double(mb.getJointPos(i)));
    velocities.push_back(MultiBodyWorld::joint_velocity(mb, i));
    links.push_back({{"position", to_json(MultiBodyWorld::link_position(mb, i))},
                     {"velocity", to_json(MultiBodyWorld::link_velocity(mb, i))}});
  }
  Json state = {{"joint_positions", std::move(positions)},
                {"joint_velocities", std::move(velocities)},
                {"links", std::move(links)}};
  if (!mb.hasFixedBase()) {
    state["base"] = {{"position", to_json(worlds::to_eigen(mb.getBasePos()))},
                     {"orientation", to_json(mb.getWorldToBaseRot().inverse())},  // base to world
                     {"velocity", to_json(worlds::to_eigen(mb.getBaseVel()))},
                     {"angular_velocity", to_json(worlds::to_eigen(mb.getBaseOmega()))}};
  }
  return state;
}

/// How a scene is stepped: "steps" of dt, each made of "substeps" Bullet
/// steps of dt / substeps, with a trajectory entry every "record" steps.
struct Stepping {
  double dt = 0.0;
  std::int64_t steps = 0;
  int substeps = 1;
  std::int64_t record = 0;  ///< 0: no trajectory
  bool records(std::int64_t step) const { return record > 0 && step % record == 0; }
};

Stepping read_stepping(const Json& input) {
  Stepping stepping;
  stepping.dt = read_positive(input, "dt");
  stepping.steps = read_integer(input, "steps", 0);
  if (input.contains("substeps")) {
    stepping.substeps = static_cast<int>(read_integer(input, "substeps", 1));
    if (stepping.substeps > kMaxSceneSubsteps) {
      throw InputError(quote("substeps") + " must be at most " + std::to_string(kMaxSceneSubsteps) +
                       " (got " + std::to_string(stepping.substeps) + ")");
    }
  }
  if (input.contains("record")) stepping.record = read_integer(input, "record", 1);
  return stepping;
}

/// One trajectory entry: the step, its time and the states.
Json trajectory_entry(const Stepping& stepping, std::int64_t step, Json bodies) {
  return {{"step", step}, {"time", double(step) * stepping.dt}, {"bodies", std::move(bodies)}};
}

/// The step a SceneObserver's impact() belongs to: the one being taken.
struct ObservedStep {
  SceneObserver* observer = nullptr;
  std::int64_t step = 0;  ///< the step that ends at `step`
  double dt = 0.0;
  template <class Report>
  std::function<void(const Report&)> callback() {
    return [this](const Report& report) { observer->impact(step, double(step) * dt, report); };
  }
};

Json multibody_scene_json(const Json& input, const Stepping& stepping, SceneObserver* observer) {
  MultiBodyWorldOptions options = read_multibody_world_options(input);
  if (options.simpact) checked_config(options.config);
  ObservedStep observed{observer, 0, stepping.dt};
  if (observer != nullptr) options.config.on_impact = observed.callback<bullet::MultiBodyImpactReport>();
  MultiBodyWorld world(options);

  std::vector<btRigidBody*> rigid;
  if (input.contains("bodies")) {
    const Json& bodies = read_array(input, "bodies");
    for (std::size_t i = 0; i < bodies.size(); ++i) {
      in_entry("bodies", i, [&] { rigid.push_back(add_multibody_scene_body(world, bodies[i])); });
    }
  }
  const Json& multibodies = read_array(input, "multibodies");
  if (multibodies.empty()) {
    throw InputError(quote("multibodies") + " must have at least one multibody");
  }
  std::vector<btMultiBody*> chains;
  for (std::size_t i = 0; i < multibodies.size(); ++i) {
    in_entry("multibodies", i, [&] { chains.push_back(add_multibody(world, multibodies[i])); });
  }

  const Eigen::Vector3d& gravity = options.gravity;
  std::vector<double> initial;
  double energy_initial = 0.0;
  for (const btRigidBody* body : rigid) energy_initial += rigid_energy(*body, gravity);
  for (const btMultiBody* mb : chains) {
    initial.push_back(multibody_energy(*mb, gravity));
    energy_initial += initial.back();
  }

  const auto states_now = [&] {
    Json states = Json::array();
    for (const btRigidBody* body : rigid) states.push_back(rigid_state(*body));
    Json multibody_states = Json::array();
    for (const btMultiBody* mb : chains) multibody_states.push_back(multibody_state(*mb));
    return std::make_pair(std::move(states), std::move(multibody_states));
  };
  Json trajectory = Json::array();
  const auto record = [&](std::int64_t step) {
    auto [states, multibody_states] = states_now();
    Json entry = trajectory_entry(stepping, step, std::move(states));
    entry["multibodies"] = std::move(multibody_states);
    trajectory.push_back(std::move(entry));
  };
  const auto observe = [&](std::int64_t step) {
    if (observer == nullptr) return;
    double kinetic = 0.0;
    for (const btRigidBody* body : rigid) kinetic += worlds::kinetic_energy(*body);
    for (const btMultiBody* mb : chains) kinetic += MultiBodyWorld::kinetic_energy(*mb);
    observer->stepped(step, double(step) * stepping.dt, kinetic);
  };
  if (observer != nullptr) observer->built(world.dynamics_world());
  observe(0);
  if (stepping.records(0)) record(0);
  for (std::int64_t i = 0; i < stepping.steps; ++i) {
    observed.step = i + 1;
    world.step(stepping.dt / stepping.substeps, stepping.substeps);
    for (const btRigidBody* body : rigid) require_finite_state(*body, i);
    for (const btMultiBody* mb : chains) require_finite_state(*mb, i);
    observe(i + 1);
    if (stepping.records(i + 1)) record(i + 1);
  }

  auto [states, multibody_states] = states_now();
  double energy_final = 0.0;
  for (const btRigidBody* body : rigid) energy_final += rigid_energy(*body, gravity);
  for (std::size_t k = 0; k < chains.size(); ++k) {
    const double energy = multibody_energy(*chains[k], gravity);
    energy_final += energy;
    multibody_states[k]["energy_initial"] = initial[k];
    multibody_states[k]["energy_final"] = energy;
  }
  const bullet::MultiBodyImpactSolver* solver = world.impact_solver();
  Json output;
  output["bodies"] = std::move(states);
  output["multibodies"] = std::move(multibody_states);
  output["energy_initial"] = energy_initial;
  output["energy_final"] = energy_final;
  output["impacts"] = solver != nullptr ? solver->stats().impacts : 0;
  output["routh_impacts"] = solver != nullptr ? solver->stats().routh_impacts : 0;
  if (stepping.record > 0) output["trajectory"] = std::move(trajectory);
  return output;
}

}  // namespace

const std::vector<std::pair<std::string, std::vector<std::string>>>& scene_accepted_keys() {
  static const std::vector<std::pair<std::string, std::vector<std::string>>> sets = [] {
    std::vector<std::string> body = kBodyKeys;
    for (const Shape& shape : kShapes) body.insert(body.end(), shape.keys.begin(), shape.keys.end());
    std::vector<std::string> base = kFixedBaseKeys;
    base.insert(base.end(), kFreeBaseKeys.begin(), kFreeBaseKeys.end());
    return std::vector<std::pair<std::string, std::vector<std::string>>>{
        {"scene", kSceneKeys},  {"simpact", kSimpactKeys},  {"routh", kRouthKeys},
        {"body", body},         {"joint", kJointKeys},      {"multibody", kMultiBodyKeys},
        {"base", base},         {"link", kLinkKeys},        {"collider", kColliderKeys},
    };
  }();
  return sets;
}

Json scene_json(const Json& input) { return scene_json(input, nullptr); }

Json scene_json(const Json& input, SceneObserver* observer) {
  require_object(input, "the input");
  check_keys(input, kSceneKeys);
  check_scene_magnitudes(input);
  const Stepping stepping = read_stepping(input);
  // The work is counted in Bullet steps: steps x substeps.
  if (stepping.steps > kMaxSceneWork / stepping.substeps) {
    throw InputError(quote("steps") + " x " + quote("substeps") + " = " + std::to_string(stepping.steps) + " x " +
                     std::to_string(stepping.substeps) + " is more than " + std::to_string(kMaxSceneWork) +
                     " (kMaxSceneWork)");
  }
  check_scene_work(input, stepping.steps * stepping.substeps);
  if (input.contains("multibodies")) return multibody_scene_json(input, stepping, observer);
  WorldOptions options = read_world_options(input);
  if (options.solver == SolverKind::kSimpact) checked_config(options.simpact);
  ObservedStep observed{observer, 0, stepping.dt};
  if (observer != nullptr) options.simpact.on_impact = observed.callback<bullet::ImpactReport>();
  BulletWorld world(options);

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
  const auto states_now = [&] {
    Json states = Json::array();
    for (const btRigidBody* body : world.bodies()) states.push_back(rigid_state(*body));
    return states;
  };
  const auto observe = [&](std::int64_t step) {
    if (observer != nullptr) observer->stepped(step, double(step) * stepping.dt, world.kinetic_energy());
  };
  if (observer != nullptr) observer->built(world.dynamics_world());
  observe(0);
  Json trajectory = Json::array();
  if (stepping.records(0)) trajectory.push_back(trajectory_entry(stepping, 0, states_now()));
  for (std::int64_t i = 0; i < stepping.steps; ++i) {
    observed.step = i + 1;
    world.step(stepping.dt / stepping.substeps, stepping.substeps);
    for (const btRigidBody* body : world.bodies()) require_finite_state(*body, i);
    observe(i + 1);
    if (stepping.records(i + 1)) trajectory.push_back(trajectory_entry(stepping, i + 1, states_now()));
  }

  Json states = states_now();
  Json output;
  output["bodies"] = std::move(states);
  output["energy_initial"] = energy_initial;
  output["energy_final"] = world.energy();
  output["impacts"] = world.impacts();
  output["routh_impacts"] =
      world.impact_solver() != nullptr ? world.impact_solver()->stats().routh_impacts : 0;
  if (stepping.record > 0) output["trajectory"] = std::move(trajectory);
  return output;
}

int run_scene(std::istream& in, std::ostream& out, std::ostream& err) {
  return run_json_command(scene_json, in, out, err);
}

}  // namespace simpact::cli
