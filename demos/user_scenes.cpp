// Three scenes written the way a Bullet user writes them (plain Bullet API,
// simpact swapped in with two lines), which found costs that the shared
// scenes did not: stock SI next to simpact, per-frame time, peak memory,
// impacts, fallbacks and energy gains. Figures: docs/scaling.md, "Joint
// groups on the ground" and "Left open".
//
//   rope  N box links (0.3 × 0.1 × 0.1 m, 0.4 kg, R = 0.5, μ = 0.5) joined
//         by btHingeConstraints, lying on a static ground box (R = 0.5,
//         μ = 0.8); a 5 kg ball of radius 0.2 m (R = 0.5) dropped from 1 m
//         onto link 0. Every link is touched: one joint group whose M⁻¹_G is
//         dense over 6N DOFs.
//   pit   N balls (radius 0.1 m, 0.2 kg, R = 0.5, μ = 0.5) dropped in layers
//         of 8 × 8 into a 2 × 2 m box of static walls; they pile and jitter.
//   mixed N bodies placed by a loop in layers of 10 × 10 over a 2.4 × 2.4 m
//         walled pit: every third a sphere of radius 0.06–0.11 m, a box
//         (0.14 × 0.10 × 0.12 m) or a capsule (radius 0.05, height 0.1 m),
//         masses 0.1–0.4 kg, R 0.3–0.7, μ 0.3–0.8 (a fixed pseudo-random
//         sequence); a chain of 10 balls (radius 0.1 m, 0.5 kg) on
//         btConeTwistConstraints hangs from a static anchor 3 m up and swings
//         into them. Found the single-precision cost of docs/scaling.md,
//         "Ball pits".
//
// Usage: user_scenes [--scene rope|pit|mixed] [--size N] [--law NAME|stock]
//                    [--frames F] [--quick: 40 frames]
// 60 Hz, one substep per frame (a game's setting). Each run is one process:
// peak memory is the process's (getrusage). Exit status 1 if a state went
// non-finite or an impact gained energy.
#include <simpact/bullet/impact_solver.h>

#include <btBulletDynamicsCommon.h>

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

constexpr double kFrame = 1.0 / 60.0;  // [s]

// A vector from doubles in either precision of btScalar.
btVector3 vec(double x, double y, double z) { return btVector3(btScalar(x), btScalar(y), btScalar(z)); }
// An impact gains energy when E⁺ > E⁻ (1 + this) + kGainFloor: rounding of
// the kinetic energy's sums (~1e-16 relative per term) stays far below.
constexpr double kGainTolerance = 1e-9;
constexpr double kGainFloor = 1e-12;  // [J]

struct Options {
  std::string scene = "rope";
  int size = 100;
  std::string law = "propagative";
  int frames = 120;
};

struct Tally {
  long impacts = 0, fallbacks = 0, gains = 0;
  std::size_t largest = 0;
};

class Scene {
 public:
  Scene(const Options& options, Tally& tally) {
    if (options.law != "stock") {
      simpact::bullet::ImpactSolverConfig config;
      config.law = simpact::bullet::parse_impact_law(options.law);
      config.on_impact = [&tally](const simpact::bullet::ImpactReport& r) {
        ++tally.impacts;
        tally.fallbacks += r.fallback_to_base;
        tally.largest = std::max(tally.largest, r.contacts.size());
        tally.gains += r.energy_after > r.energy_before * (1 + kGainTolerance) + kGainFloor;
      };
      impact_ = std::make_unique<simpact::bullet::ImpactSolver>(&stock_, config);
    }
    btConstraintSolver* solver = impact_ ? static_cast<btConstraintSolver*>(impact_.get()) : &stock_;
    world_ = std::make_unique<btDiscreteDynamicsWorld>(&dispatcher_, &broadphase_, solver, &config_);
    world_->setGravity(btVector3(0, btScalar(-9.81), 0));
  }
  ~Scene() {
    for (auto& joint : joints_) world_->removeConstraint(joint.get());
    for (auto& body : bodies_) world_->removeRigidBody(body.get());
  }

  btCollisionShape* shape(std::unique_ptr<btCollisionShape> s) {
    shapes_.push_back(std::move(s));
    return shapes_.back().get();
  }
  btRigidBody* add(btCollisionShape* shape, double mass, const btVector3& at, double restitution,
                   double friction) {
    btVector3 inertia(0, 0, 0);
    if (mass > 0) shape->calculateLocalInertia(btScalar(mass), inertia);
    states_.push_back(std::make_unique<btDefaultMotionState>(btTransform(btQuaternion::getIdentity(), at)));
    bodies_.push_back(std::make_unique<btRigidBody>(
        btRigidBody::btRigidBodyConstructionInfo(btScalar(mass), states_.back().get(), shape, inertia)));
    bodies_.back()->setRestitution(btScalar(restitution));
    bodies_.back()->setFriction(btScalar(friction));
    world_->addRigidBody(bodies_.back().get());
    return bodies_.back().get();
  }
  void join(std::unique_ptr<btTypedConstraint> joint) {
    world_->addConstraint(joint.get(), true);
    joints_.push_back(std::move(joint));
  }
  btDiscreteDynamicsWorld& world() { return *world_; }
  bool finite() const {
    for (const auto& body : bodies_) {
      const btVector3 p = body->getCenterOfMassPosition(), v = body->getLinearVelocity();
      if (!std::isfinite(double(p.x() + p.y() + p.z() + v.x() + v.y() + v.z()))) return false;
    }
    return true;
  }
  double kinetic_energy() const {
    double energy = 0.0;
    for (const auto& body : bodies_)
      if (body->getInvMass() > 0) energy += 0.5 / double(body->getInvMass()) * double(body->getLinearVelocity().length2());
    return energy;
  }

 private:
  btDefaultCollisionConfiguration config_;
  btCollisionDispatcher dispatcher_{&config_};
  btDbvtBroadphase broadphase_;
  btSequentialImpulseConstraintSolver stock_;
  std::unique_ptr<simpact::bullet::ImpactSolver> impact_;
  std::unique_ptr<btDiscreteDynamicsWorld> world_;
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btDefaultMotionState>> states_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<std::unique_ptr<btTypedConstraint>> joints_;
};

void build_rope(Scene& scene, int links) {
  const double pitch = 0.3;
  const double length = pitch * links;
  btCollisionShape* ground = scene.shape(std::make_unique<btBoxShape>(vec(length + 5, 0.5, 5)));
  scene.add(ground, 0, vec(length / 2, -0.5, 0), 0.5, 0.8);
  btCollisionShape* link = scene.shape(std::make_unique<btBoxShape>(vec(0.15, 0.05, 0.05)));
  btRigidBody* previous = nullptr;
  for (int i = 0; i < links; ++i) {
    btRigidBody* body = scene.add(link, 0.4, vec(pitch * i, 0.05, 0), 0.5, 0.5);
    if (previous != nullptr)
      scene.join(std::make_unique<btHingeConstraint>(*previous, *body, vec(0.15, 0, 0), vec(-0.15, 0, 0),
                                                     vec(0, 0, 1), vec(0, 0, 1)));
    previous = body;
  }
  scene.add(scene.shape(std::make_unique<btSphereShape>(btScalar(0.2))), 5.0, vec(0, 1, 0), 0.5, 0.5);
}

// A static floor and four walls 2 m high around a square of half width
// `half` [m], all with the given restitution and friction.
void add_walled_pit(Scene& scene, double half, double restitution, double friction) {
  btCollisionShape* floor = scene.shape(std::make_unique<btBoxShape>(vec(half + 0.2, 0.1, half + 0.2)));
  scene.add(floor, 0, vec(0, -0.1, 0), restitution, friction);
  btCollisionShape* side_x = scene.shape(std::make_unique<btBoxShape>(vec(0.1, 1.0, half + 0.2)));
  btCollisionShape* side_z = scene.shape(std::make_unique<btBoxShape>(vec(half + 0.2, 1.0, 0.1)));
  for (const double sign : {1.0, -1.0}) {
    scene.add(side_x, 0, vec(sign * (half + 0.1), 1.0, 0), restitution, friction);
    scene.add(side_z, 0, vec(0, 1.0, sign * (half + 0.1)), restitution, friction);
  }
}

void build_pit(Scene& scene, int balls) {
  add_walled_pit(scene, 1.0, 1.0, 0.5);
  btCollisionShape* ball = scene.shape(std::make_unique<btSphereShape>(btScalar(0.1)));
  constexpr int kPerRow = 8;
  for (int i = 0; i < balls; ++i) {
    const int x = i % kPerRow, z = (i / kPerRow) % kPerRow, y = i / (kPerRow * kPerRow);
    scene.add(ball, 0.2, vec(-0.8 + 0.22 * x + 0.01 * (y % 2), 0.15 + 0.22 * y, -0.8 + 0.22 * z), 0.5, 0.5);
  }
}

// A fixed sequence in [0, 1) (SplitMix64): the same scene on every platform,
// where <random>'s distributions are implementation-defined.
class Sequence {
 public:
  double next() {
    std::uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return double((z ^ (z >> 31)) >> 11) * 0x1.0p-53;
  }

 private:
  std::uint64_t state_ = 7;
};

void build_mixed(Scene& scene, int bodies) {
  const double half = 1.2;  // half width of the pit [m]
  add_walled_pit(scene, half, 0.6, 0.6);
  btCollisionShape* box = scene.shape(std::make_unique<btBoxShape>(vec(0.07, 0.05, 0.06)));
  btCollisionShape* capsule = scene.shape(std::make_unique<btCapsuleShape>(btScalar(0.05), btScalar(0.1)));
  Sequence random;
  constexpr int kPerRow = 10;
  const double pitch = 2 * half / kPerRow;
  for (int i = 0; i < bodies; ++i) {
    const double x = -half + pitch * (0.5 + i % kPerRow), z = -half + pitch * (0.5 + (i / kPerRow) % kPerRow);
    const double y = 0.3 + 0.3 * (i / (kPerRow * kPerRow)) + 0.02 * random.next();
    btCollisionShape* shape = i % 3 == 1 ? box : i % 3 == 2 ? capsule : nullptr;
    if (shape == nullptr) shape = scene.shape(std::make_unique<btSphereShape>(btScalar(0.06 + 0.05 * random.next())));
    const double mass = 0.1 + 0.3 * random.next(), restitution = 0.3 + 0.4 * random.next();
    scene.add(shape, mass, vec(x, y, z), restitution, 0.3 + 0.5 * random.next());
  }
  btRigidBody* previous = scene.add(scene.shape(std::make_unique<btSphereShape>(btScalar(0.05))), 0,
                                    vec(0.3, 3.0, 0.2), 0.5, 0.5);
  btCollisionShape* link = scene.shape(std::make_unique<btSphereShape>(btScalar(0.1)));
  for (int i = 0; i < 10; ++i) {
    btRigidBody* body = scene.add(link, 0.5, vec(0.3 + 0.22 * (i + 1), 3.0, 0.2), 0.5, 0.5);
    scene.join(std::make_unique<btConeTwistConstraint>(*previous, *body, btTransform(btQuaternion::getIdentity(), vec(0.11, 0, 0)),
                                                       btTransform(btQuaternion::getIdentity(), vec(-0.11, 0, 0))));
    previous = body;
  }
}

int parse_int(const char* text, const char* what) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 1000000)
    throw std::invalid_argument(std::string(what) + " must be an integer in [1, 10^6], got '" + text + "'");
  return static_cast<int>(value);
}

}  // namespace

int main(int argc, char** argv) {
  try {
    Options options;
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      const auto value = [&]() -> const char* {
        if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
        return argv[++i];
      };
      if (a == "--scene") options.scene = value();
      else if (a == "--size") options.size = parse_int(value(), "--size");
      else if (a == "--law") options.law = value();
      else if (a == "--frames") options.frames = parse_int(value(), "--frames");
      else if (a == "--quick") options.frames = 40;  // the rope's ball lands in frame ~23
      else throw std::invalid_argument("unknown argument '" + a + "'");
    }
    if (options.scene != "rope" && options.scene != "pit" && options.scene != "mixed")
      throw std::invalid_argument("--scene must be rope, pit or mixed, got '" + options.scene + "'");
    Tally tally;
    Scene scene(options, tally);
    if (options.scene == "rope") build_rope(scene, options.size);
    else if (options.scene == "pit") build_pit(scene, options.size);
    else build_mixed(scene, options.size);
    double total = 0.0, worst = 0.0;
    for (int f = 0; f < options.frames; ++f) {
      const Clock::time_point start = Clock::now();
      scene.world().stepSimulation(btScalar(kFrame), 1, btScalar(kFrame));
      const double ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      total += ms;
      worst = std::max(worst, ms);
    }
    rusage usage{};
    getrusage(RUSAGE_SELF, &usage);
    const bool finite = scene.finite();
    std::printf("%s %d, %s (%s): %d frames, mean frame %.3f ms, worst %.2f ms, peak memory %.1f MB, "
                "impacts %ld (largest %zu contacts), fallbacks %ld, energy gains %ld, kinetic energy at the end "
                "%.4g J, finite %s\n",
                options.scene.c_str(), options.size, options.law.c_str(),
                sizeof(btScalar) == sizeof(double) ? "double" : "single", options.frames, total / options.frames, worst,
                double(usage.ru_maxrss) / 1024.0, tally.impacts, tally.largest, tally.fallbacks, tally.gains,
                scene.kinetic_energy(), finite ? "yes" : "NO");
    return finite && tally.gains == 0 ? 0 : 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "user_scenes: %s\n", e.what());
    return 2;
  }
}
