#include <simpact_cli/replay.h>

#include <simpact/bullet/impact_solver.h>
#include <simpact_cli/scene.h>

#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <btBulletDynamicsCommon.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#ifdef SIMPACT_WITH_REPLAY
namespace simpact::cli::replay_assets {
extern const char kThreeJs[];       // three.min.js of the npm package `three`
extern const char kPageTemplate[];  // plugin/cli/replay/replay.html
}  // namespace simpact::cli::replay_assets
#endif

namespace simpact::cli {
namespace {

/// A number as the page stores it: 7 significant digits, the precision of
/// the float the page draws with (see replay.h, "Drawing precision").
double drawn(double value) {
  char text[32];
  std::snprintf(text, sizeof text, "%.7g", value);
  return std::strtod(text, nullptr);
}

Json vector_json(const btVector3& v) {
  return Json::array({drawn(double(v.x())), drawn(double(v.y())), drawn(double(v.z()))});
}

Json transform_json(const btTransform& t) {
  const btQuaternion q = t.getRotation();
  return {{"position", vector_json(t.getOrigin())},
          {"orientation", Json::array({drawn(double(q.x())), drawn(double(q.y())), drawn(double(q.z())),
                                       drawn(double(q.w()))})}};
}

/// A Bullet collision shape as the page draws it; shapes the page has no
/// drawing for are drawn as their bounding sphere ("type": "bounds").
Json shape_json(const btCollisionShape& shape) {
  switch (shape.getShapeType()) {
    case SPHERE_SHAPE_PROXYTYPE:
      return {{"type", "sphere"}, {"radius", drawn(double(static_cast<const btSphereShape&>(shape).getRadius()))}};
    case BOX_SHAPE_PROXYTYPE:
      return {{"type", "box"},
              {"half_extents", vector_json(static_cast<const btBoxShape&>(shape).getHalfExtentsWithMargin())}};
    case STATIC_PLANE_PROXYTYPE: {
      const auto& plane = static_cast<const btStaticPlaneShape&>(shape);
      return {{"type", "plane"},
              {"normal", vector_json(plane.getPlaneNormal())},
              {"offset", drawn(double(plane.getPlaneConstant()))}};
    }
    case CAPSULE_SHAPE_PROXYTYPE: {
      const auto& capsule = static_cast<const btCapsuleShape&>(shape);
      return {{"type", "capsule"},
              {"radius", drawn(double(capsule.getRadius()))},
              {"half_height", drawn(double(capsule.getHalfHeight()))},
              {"axis", capsule.getUpAxis()}};
    }
    case CYLINDER_SHAPE_PROXYTYPE: {
      const auto& cylinder = static_cast<const btCylinderShape&>(shape);
      return {{"type", "cylinder"},
              {"half_extents", vector_json(cylinder.getHalfExtentsWithMargin())},
              {"axis", cylinder.getUpAxis()}};
    }
    case CONVEX_HULL_SHAPE_PROXYTYPE: {
      const auto& hull = static_cast<const btConvexHullShape&>(shape);
      Json points = Json::array();
      for (int i = 0; i < hull.getNumPoints(); ++i) points.push_back(vector_json(hull.getScaledPoint(i)));
      return {{"type", "hull"}, {"points", std::move(points)}};
    }
    case COMPOUND_SHAPE_PROXYTYPE: {
      const auto& compound = static_cast<const btCompoundShape&>(shape);
      Json children = Json::array();
      for (int i = 0; i < compound.getNumChildShapes(); ++i) {
        Json child = transform_json(compound.getChildTransform(i));
        child["shape"] = shape_json(*compound.getChildShape(i));
        children.push_back(std::move(child));
      }
      return {{"type", "compound"}, {"children", std::move(children)}};
    }
    default: {
      btVector3 center;
      btScalar radius = 0;
      shape.getBoundingSphere(center, radius);
      return {{"type", "bounds"}, {"radius", drawn(double(radius))}, {"name", shape.getName()}};
    }
  }
}

const btMultiBodyDynamicsWorld* as_multibody_world(const btDiscreteDynamicsWorld& world) {
  return dynamic_cast<const btMultiBodyDynamicsWorld*>(&world);
}

void push(std::vector<float>* out, const btVector3& a, const btVector3& b) {
  if (out == nullptr) return;
  for (const btVector3* p : {&a, &b}) {
    for (int k = 0; k < 3; ++k) out->push_back(float((*p)[k]));
  }
}

}  // namespace

std::int64_t replay_stride(std::int64_t steps) {
  return std::max<std::int64_t>(1, (steps + kMaxReplayFrames - 1) / kMaxReplayFrames);
}

ReplayRecorder::ReplayRecorder(const btDiscreteDynamicsWorld& world, std::string name)
    : world_(world), name_(std::move(name)), objects_(Json::array()), impacts_(Json::array()) {
  const btCollisionObjectArray& objects = world.getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    const btCollisionObject& object = *objects[i];
    Json entry = {{"shape", shape_json(*object.getCollisionShape())},
                  {"static", object.isStaticObject()},
                  {"kinematic", object.isKinematicObject()}};
    if (btMultiBodyLinkCollider::upcast(&object) != nullptr) entry["link"] = true;
    objects_.push_back(std::move(entry));
  }
  joints_ = joint_segments(nullptr);
}

std::size_t ReplayRecorder::joint_segments(std::vector<float>* out) const {
  std::size_t count = 0;
  for (int i = 0; i < world_.getNumConstraints(); ++i) {
    const btTypedConstraint& c = *world_.getConstraint(i);
    const btVector3 a = c.getRigidBodyA().getCenterOfMassPosition();
    const btVector3 b = c.getRigidBodyB().getCenterOfMassPosition();
    if (c.getConstraintType() == POINT2POINT_CONSTRAINT_TYPE) {
      // A body hung from a world point: the segment to the pivot.
      const auto& p2p = static_cast<const btPoint2PointConstraint&>(c);
      const btVector3 pivot = c.getRigidBodyA().getCenterOfMassTransform() * p2p.getPivotInA();
      push(out, a, pivot);
      ++count;
      if (c.getRigidBodyB().getInvMass() != 0) {
        push(out, pivot, b);
        ++count;
      }
    } else {
      push(out, a, b);
      ++count;
    }
  }
  if (const btMultiBodyDynamicsWorld* mbw = as_multibody_world(world_)) {
    for (int m = 0; m < mbw->getNumMultibodies(); ++m) {
      // getMultiBody has no const overload; nothing is changed.
      btMultiBody& mb = *const_cast<btMultiBodyDynamicsWorld*>(mbw)->getMultiBody(m);
      for (int link = 0; link < mb.getNumLinks(); ++link) {
        const int parent = mb.getParent(link);
        const btVector3 from = parent < 0 ? mb.getBasePos() : mb.localPosToWorld(parent, btVector3(0, 0, 0));
        push(out, from, mb.localPosToWorld(link, btVector3(0, 0, 0)));
        ++count;
      }
    }
  }
  return count;
}

float ReplayRecorder::finite(double value) {
  if (std::isfinite(value)) return float(value);
  ++non_finite_;
  return 0.0f;
}

void ReplayRecorder::record(std::int64_t step, double time, double kinetic_energy) {
  steps_.push_back(step);
  times_.push_back(time);
  energies_.push_back(std::isfinite(kinetic_energy) ? kinetic_energy : (++non_finite_, 0.0));
  const btCollisionObjectArray& objects = world_.getCollisionObjectArray();
  const std::size_t count = std::min<std::size_t>(std::size_t(objects.size()), objects_.size());
  for (std::size_t i = 0; i < objects_.size(); ++i) {
    if (i >= count) {  // an object removed since: drawn at the origin, unrotated
      poses_.insert(poses_.end(), {0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 0.0f, 1.0f});
      continue;
    }
    const btTransform& t = objects[int(i)]->getWorldTransform();
    const btQuaternion q = t.getRotation();
    for (int k = 0; k < 3; ++k) poses_.push_back(finite(double(t.getOrigin()[k])));
    poses_.push_back(finite(double(q.x())));
    poses_.push_back(finite(double(q.y())));
    poses_.push_back(finite(double(q.z())));
    poses_.push_back(finite(double(q.w())));
  }
  std::vector<float> segments;
  if (joint_segments(&segments) != joints_) segments.assign(6 * joints_, 0.0f);
  for (float value : segments) segments_.push_back(finite(double(value)));
}

void ReplayRecorder::add_impact(std::int64_t step, double time, const bullet::ImpactReport& report) {
  Json bodies = Json::array();
  for (int id : report.body_ids) bodies.push_back(id);
  Json entry = {{"step", step},
                {"time", drawn(time)},
                {"bodies", std::move(bodies)},
                {"contacts", report.contacts.size()},
                {"law", bullet::to_string(report.law)},
                {"status", to_string(report.status)},
                {"restitution", drawn(report.restitution)},
                {"energy_before", std::isfinite(report.energy_before) ? drawn(report.energy_before) : 0.0},
                {"energy_after", std::isfinite(report.energy_after) ? drawn(report.energy_after) : 0.0},
                {"fallback", report.fallback_to_base}};
  if (report.fallback_to_base) entry["attempted_law"] = bullet::to_string(report.attempted_law);
  if (!report.message.empty()) entry["message"] = report.message;
  impacts_.push_back(std::move(entry));
}

Json ReplayRecorder::to_json() const {
  const auto rounded = [](const auto& values) {
    Json out = Json::array();
    for (const auto value : values) out.push_back(drawn(double(value)));
    return out;
  };
  Json steps = Json::array();
  for (std::int64_t step : steps_) steps.push_back(step);
  return {{"name", name_},
          {"objects", objects_},
          {"joints", joints_},
          {"frames",
           {{"step", std::move(steps)},
            {"time", rounded(times_)},
            {"kinetic_energy", rounded(energies_)},
            {"poses", rounded(poses_)},
            {"segments", rounded(segments_)}}},
          {"impacts", impacts_},
          {"non_finite", non_finite_}};
}

bool replay_available() {
#ifdef SIMPACT_WITH_REPLAY
  return true;
#else
  return false;
#endif
}

void write_replay_html(std::ostream& out, const Json& runs, const Json& meta) {
#ifndef SIMPACT_WITH_REPLAY
  (void)out;
  (void)runs;
  (void)meta;
  throw InputError(
      "this simpact was built without three.js, so it cannot write a replay page: run .ci/install-deps "
      "(it installs the npm package `three`) and configure the build again");
#else
  std::string data = Json{{"runs", runs}, {"meta", meta}}.dump(-1, ' ', false, Json::error_handler_t::replace);
  // Inside <script>, "</" could close the element: JSON allows "<\/".
  for (std::size_t at = data.find("</"); at != std::string::npos; at = data.find("</", at + 3)) {
    data.replace(at, 2, "<\\/");
  }
  const std::string_view page = replay_assets::kPageTemplate;
  constexpr std::string_view kThreeMark = "/*SIMPACT_THREE_JS*/";
  constexpr std::string_view kDataMark = "/*SIMPACT_DATA*/";
  const std::size_t three = page.find(kThreeMark);
  const std::size_t at_data = page.find(kDataMark);
  if (three == std::string_view::npos || at_data == std::string_view::npos || at_data < three) {
    throw std::logic_error("replay.html lacks its /*SIMPACT_THREE_JS*/ and /*SIMPACT_DATA*/ marks");
  }
  out << page.substr(0, three) << replay_assets::kThreeJs
      << page.substr(three + kThreeMark.size(), at_data - three - kThreeMark.size()) << data
      << page.substr(at_data + kDataMark.size());
#endif
}

namespace {

/// Records one run of a scene.
class RecordingObserver final : public SceneObserver {
 public:
  RecordingObserver(std::string name, std::int64_t steps) : name_(std::move(name)), steps_(steps),
      stride_(replay_stride(steps)) {}
  void built(const btDiscreteDynamicsWorld& world) override { recorder_.emplace(world, name_); }
  void stepped(std::int64_t step, double time, double kinetic_energy) override {
    if (step % stride_ == 0 || step == steps_) recorder_->record(step, time, kinetic_energy);
  }
  void impact(std::int64_t step, double time, const bullet::ImpactReport& report) override {
    recorder_->add_impact(step, time, report);
  }
  Json to_json() const { return recorder_ ? recorder_->to_json() : Json(); }

 private:
  std::string name_;
  std::int64_t steps_;
  std::int64_t stride_;
  std::optional<ReplayRecorder> recorder_;
};

std::string string_or(const Json& object, const char* key, const char* fallback) {
  return object.is_object() && object.contains(key) && object[key].is_string() ? object[key].get<std::string>()
                                                                              : fallback;
}

}  // namespace

Json scene_replay(const Json& scene) {
  require_object(scene, "the input");
  const std::string solver = string_or(scene, "solver", "simpact");
  const Json settings = scene.contains("simpact") ? scene["simpact"] : Json::object();
  Json stock = scene;
  Json with_simpact = scene;
  stock.erase("record");
  with_simpact.erase("record");
  std::string base;
  if (solver == "simpact") {
    base = string_or(settings, "base", "stock_si");
    stock["solver"] = base;
    stock.erase("simpact");
  } else {
    base = solver;  // the scene's own stock solver, and simpact in front of it
    with_simpact["solver"] = "simpact";
    with_simpact["simpact"] = settings;
    with_simpact["simpact"]["base"] = base;
  }
  const std::int64_t steps = scene.contains("steps") && scene["steps"].is_number_integer()
                                 ? std::max<std::int64_t>(0, scene["steps"].get<std::int64_t>())
                                 : 0;
  RecordingObserver stock_run("stock Bullet (" + base + ")", steps);
  RecordingObserver simpact_run(
      "simpact (" + string_or(settings, "law", "propagative") + ", over " + base + ")", steps);
  const Json stock_out = scene_json(stock, &stock_run);
  const Json simpact_out = scene_json(with_simpact, &simpact_run);

  Json up = Json::array({0.0, 1.0, 0.0});
  if (scene.contains("gravity") && scene["gravity"].is_array() && scene["gravity"].size() == 3) {
    const double g[3] = {scene["gravity"][0].get<double>(), scene["gravity"][1].get<double>(),
                         scene["gravity"][2].get<double>()};
    const double norm = std::sqrt(g[0] * g[0] + g[1] * g[1] + g[2] * g[2]);
    if (norm > 0.0) up = Json::array({drawn(-g[0] / norm), drawn(-g[1] / norm), drawn(-g[2] / norm)});
  }
  Json meta = {{"title", "simpact scene"},
               {"up", up},
               {"dt", scene.contains("dt") ? scene["dt"] : Json(0.0)},
               {"energy_final", {stock_out["energy_final"], simpact_out["energy_final"]}},
               {"energy_initial", {stock_out["energy_initial"], simpact_out["energy_initial"]}}};
  return {{"runs", Json::array({stock_run.to_json(), simpact_run.to_json()})}, {"meta", std::move(meta)}};
}

}  // namespace simpact::cli
