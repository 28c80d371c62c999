// The two Bullet adapters on the same contact (TEST_P over the laws they
// share): a rigid sphere striking a static plane at an angle, once in a
// BulletWorld through ImpactSolver and once in a MultiBodyWorld through
// MultiBodyImpactSolver (which resolves rigid bodies too). Both must report
// the same impact — impulses, Routh tangent frame and friction impulse —
// count it the same way in their (one) stats type, and leave the sphere
// with the same velocity. Then the same for scenes where the adapters'
// handling could drift apart (factor-locked axes, kinematic partners,
// sphere pairs): every dynamic sphere must leave the same from both.
#include <simpact/bullet/impact_solver.h>
#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact_worlds/bullet_world.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <functional>
#include <ostream>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace {

using simpact::bullet::ImpactLaw;
using simpact::bullet::ImpactReport;
using simpact::bullet::ImpactStats;
namespace worlds = simpact::worlds;

constexpr bool kDouble = sizeof(btScalar) == sizeof(double);
/// Both adapters build the same 1-contact problem from the same Bullet
/// state, through different code (rows from btRigidBody vs. the multibody
/// adapter's node layout), so results agree to rounding: ~1e-15 relative in
/// double; in float Bullet's stored state carries ~1e-7.
constexpr double kAgreement = kDouble ? 1e-12 : 1e-5;
constexpr double kStep = 1.0 / 240.0;

struct Strike {
  std::vector<ImpactReport::Contact> contacts;  // of the first report
  simpact::bullet::AppliedLaw law = simpact::bullet::AppliedLaw::kBaseSolver;
  ImpactStats stats;
  Eigen::Vector3d velocity, angular_velocity;
};

/// One case: a law and the sphere's restitution (law auto picks by it).
struct LawCase {
  ImpactLaw law;
  double restitution;
};

/// Keeps the first report's contacts and law; the same for both report types.
template <class Report>
std::function<void(const Report&)> CaptureFirst(Strike& out) {
  return [&out](const Report& r) {
    if (!out.contacts.empty()) return;
    out.contacts = r.contacts;
    out.law = r.law;
  };
}

worlds::BodyOptions Ball(double restitution) {
  worlds::BodyOptions ball;
  ball.mass = 2.0;
  ball.position = Eigen::Vector3d(0, 0.1 + 1e-4, 0);  // lands within the first step
  ball.velocity = Eigen::Vector3d(1.5, -2.0, 0.5);
  ball.angular_velocity = Eigen::Vector3d(0, 0, 3.0);
  ball.restitution = restitution;
  ball.friction = 0.5;
  ball.never_sleep = true;
  return ball;
}

// Both worlds without gravity, simpact resolving impacts with `law`.
worlds::WorldOptions RigidWorldOptions(ImpactLaw law) {
  worlds::WorldOptions options;
  options.solver = worlds::SolverKind::kSimpact;
  options.gravity = Eigen::Vector3d::Zero();
  options.simpact.law = law;
  return options;
}

worlds::MultiBodyWorldOptions MultibodyWorldOptions(ImpactLaw law) {
  worlds::MultiBodyWorldOptions options;
  options.gravity = Eigen::Vector3d::Zero();
  options.config.law = law;
  return options;
}

Strike RigidAdapter(const LawCase& c) {
  worlds::WorldOptions options = RigidWorldOptions(c.law);
  Strike out;
  options.simpact.on_impact = CaptureFirst<ImpactReport>(out);
  worlds::BulletWorld world(options);
  worlds::BodyOptions ground;
  ground.restitution = 1.0;
  ground.friction = 1.0;
  world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
  btRigidBody* ball = world.add_sphere(0.1, Ball(c.restitution));
  world.step(kStep);
  out.stats = world.impact_solver()->stats();
  out.velocity = worlds::velocity(*ball);
  out.angular_velocity = worlds::angular_velocity(*ball);
  return out;
}

Strike MultibodyAdapter(const LawCase& c) {
  worlds::MultiBodyWorldOptions options = MultibodyWorldOptions(c.law);
  Strike out;
  options.config.on_impact = CaptureFirst<simpact::bullet::MultiBodyImpactReport>(out);
  worlds::MultiBodyWorld world(options);
  world.add_plane(Eigen::Vector3d::UnitY(), 0.0, 1.0, 1.0);
  btRigidBody* ball = world.add_sphere(0.1, Ball(c.restitution));
  world.step(kStep);
  out.stats = world.impact_solver()->stats();
  out.velocity = worlds::velocity(*ball);
  out.angular_velocity = worlds::angular_velocity(*ball);
  return out;
}

void ExpectNear(const btVector3& a, const btVector3& b, double tolerance, const char* what) {
  for (int i = 0; i < 3; ++i)
    EXPECT_NEAR(double(a[i]), double(b[i]), tolerance) << what << " component " << i;
}

class AdaptersAgree : public ::testing::TestWithParam<LawCase> {};

TEST_P(AdaptersAgree, OnASphereStrikingTheGroundAtAnAngle) {
  const Strike rigid = RigidAdapter(GetParam());
  const Strike multibody = MultibodyAdapter(GetParam());
  ASSERT_EQ(rigid.contacts.size(), 1u) << "the rigid adapter resolved no impact";
  ASSERT_EQ(multibody.contacts.size(), 1u) << "the multibody adapter resolved no impact";
  EXPECT_EQ(rigid.law, multibody.law);
  // Law auto: the propagative law when elastic, Routh when plastic, Routh
  // with Stronge's restitution in between (impact_solver.h, "Laws").
  if (GetParam().law == ImpactLaw::kAuto) {
    const double r = GetParam().restitution;
    EXPECT_EQ(multibody.law, r == 1.0   ? simpact::bullet::AppliedLaw::kPropagative
                             : r == 0.0 ? simpact::bullet::AppliedLaw::kRouth
                                        : simpact::bullet::AppliedLaw::kRouthRestitution);
  }
  const ImpactReport::Contact& a = rigid.contacts[0];
  const ImpactReport::Contact& b = multibody.contacts[0];
  const double scale = a.impulse;
  EXPECT_GT(scale, 0.0);
  EXPECT_NEAR(a.approach_speed, b.approach_speed, kAgreement * a.approach_speed);
  EXPECT_NEAR(a.impulse, b.impulse, kAgreement * scale);
  ExpectNear(a.tangent1, b.tangent1, kAgreement, "tangent1");
  ExpectNear(a.tangent2, b.tangent2, kAgreement, "tangent2");
  ExpectNear(a.friction_impulse, b.friction_impulse, kAgreement * scale, "friction_impulse");
  const double r = GetParam().restitution;
  if (rigid.law == simpact::bullet::AppliedLaw::kRouth ||
      rigid.law == simpact::bullet::AppliedLaw::kRouthRestitution ||
      (rigid.law == simpact::bullet::AppliedLaw::kPropagative && r > 0.0 && r < 1.0)) {
    // Sliding at (1.5, 0.5) m/s plus spin: friction acts, on the tangent
    // plane (0.05 of the normal impulse at least); for the propagative law
    // through its impact friction (ImpactSettings::propagative_friction).
    EXPECT_GT(double(a.friction_impulse.length()), 0.05 * scale);
    EXPECT_NEAR(double(b.friction_impulse.dot(b.normal)), 0.0, kAgreement * scale);
  }
  EXPECT_EQ(rigid.stats.impacts, 1);
  EXPECT_EQ(multibody.stats.impacts, rigid.stats.impacts);
  EXPECT_EQ(multibody.stats.routh_impacts, rigid.stats.routh_impacts);
  EXPECT_EQ(multibody.stats.routh_lcps, rigid.stats.routh_lcps);
  EXPECT_EQ(multibody.stats.fallbacks_to_base, 0);
  EXPECT_EQ(rigid.stats.fallbacks_to_base, 0);
  const double speed = 2.5;
  for (int i = 0; i < 3; ++i) {
    EXPECT_NEAR(rigid.velocity[i], multibody.velocity[i], kAgreement * speed) << "v " << i;
    EXPECT_NEAR(rigid.angular_velocity[i], multibody.angular_velocity[i], kAgreement * speed / 0.1)
        << "ω " << i;
  }
}

INSTANTIATE_TEST_SUITE_P(SharedLaws, AdaptersAgree,
                         ::testing::Values(LawCase{ImpactLaw::kPropagative, 1.0},
                                           LawCase{ImpactLaw::kPropagative, 0.5},
                                           LawCase{ImpactLaw::kRouth, 1.0},
                                           LawCase{ImpactLaw::kAuto, 1.0},
                                           LawCase{ImpactLaw::kAuto, 0.5},
                                           LawCase{ImpactLaw::kAuto, 0.0},
                                           LawCase{ImpactLaw::kRouthRestitution, 0.7}),
                         [](const ::testing::TestParamInfo<LawCase>& param_info) {
                           return std::string(simpact::bullet::to_string(param_info.param.law)) + "_R" +
                                  std::to_string(int(param_info.param.restitution * 10));
                         });

// Scenes of spheres (and an optional ground plane), run one step in either
// world. Every dynamic sphere's velocity along an axis its factor locks
// must pass through bit for bit.
struct SphereScene {
  std::string name;
  ImpactLaw law;
  std::vector<std::pair<double, worlds::BodyOptions>> spheres;  // radius, body
  bool ground = false;
  double ground_restitution = 0.0, ground_friction = 0.0;
};

struct SceneOutcome {
  std::vector<Eigen::Vector3d> velocities_before, velocities, angular_velocities;
  ImpactStats stats;
};

template <class World>
SceneOutcome RunScene(World& world, const SphereScene& scene) {
  std::vector<std::pair<btRigidBody*, const worlds::BodyOptions*>> dynamic;
  for (const auto& [radius, body] : scene.spheres) {
    btRigidBody* rigid = world.add_sphere(radius, body);
    if (body.mass > 0.0) dynamic.push_back({rigid, &body});
  }
  world.step(kStep);
  SceneOutcome out;
  for (const auto& [body, options] : dynamic) {
    out.velocities_before.push_back(options->velocity);
    out.velocities.push_back(worlds::velocity(*body));
    out.angular_velocities.push_back(worlds::angular_velocity(*body));
    // No impulse moves a locked axis: its velocity passes through bit for bit.
    for (int k = 0; k < 3; ++k) {
      if (options->linear_factor[k] == 0.0) {
        EXPECT_EQ(out.velocities.back()[k], options->velocity[k]) << k;
      }
      if (options->angular_factor[k] == 0.0) {
        EXPECT_EQ(out.angular_velocities.back()[k], options->angular_velocity[k]) << k;
      }
    }
  }
  out.stats = world.impact_solver()->stats();
  return out;
}

SceneOutcome RunRigid(const SphereScene& scene) {
  worlds::BulletWorld world(RigidWorldOptions(scene.law));
  if (scene.ground) {
    worlds::BodyOptions ground;
    ground.restitution = scene.ground_restitution;
    ground.friction = scene.ground_friction;
    world.add_plane(Eigen::Vector3d::UnitY(), 0.0, ground);
  }
  return RunScene(world, scene);
}

SceneOutcome RunMultibody(const SphereScene& scene) {
  worlds::MultiBodyWorld world(MultibodyWorldOptions(scene.law));
  if (scene.ground) world.add_plane(Eigen::Vector3d::UnitY(), 0.0, scene.ground_restitution, scene.ground_friction);
  return RunScene(world, scene);
}

worlds::BodyOptions Sphere(const Eigen::Vector3d& position, const Eigen::Vector3d& velocity,
                           double restitution, double friction) {
  worlds::BodyOptions body;
  body.position = position;
  body.velocity = velocity;
  body.restitution = restitution;
  body.friction = friction;
  body.never_sleep = true;
  return body;
}

// Velocity along an axis a body's factor locks is no impulse's to change,
// and both adapters pass it through: the law resolves the free axes only
// (joint_rows.h, clear_locked_axes; impact_solver.h, stage 3). A ball
// (linear factor (1, 1, 0)) whose host set it moving at (0, −1, −V)
// strikes a static sphere along n = (0, cos θ, sin θ), θ = 45°, elastic,
// no friction. The law sees u = n·(0, −1, 0) = −cos θ and reflects it:
// v⁺ = (0, 1, −V), kinetic energy kept. Until the two adapters shared
// clear_locked_axes the multibody adapter resolved u = −cos θ − V sin θ,
// which sent the ball off at v_y = 1 + 2V tan θ = 2 (the locked axis
// acting as an infinitely massive driver: energy ×3.4).
TEST(LockedAxis, BothAdaptersPassALockedAxisVelocityThrough) {
  constexpr double kLockedSpeed = 0.5;  // [m/s] along the locked z axis
  constexpr double kRadius = 0.1;       // [m] ball and static sphere alike
  // [m] Bullet's sphere pair reports a point only once they touch; 1e-7 m
  // of overlap is far below the base solver's penetration slop.
  constexpr double kOverlap = 1e-7;
  worlds::BodyOptions partner = Sphere(Eigen::Vector3d::Zero(), Eigen::Vector3d::Zero(), 1.0, 0.0);
  partner.mass = 0.0;
  worlds::BodyOptions ball = Sphere((2.0 * kRadius - kOverlap) * Eigen::Vector3d(0.0, 1.0, 1.0).normalized(),
                                    {0.0, -1.0, -kLockedSpeed}, 1.0, 0.0);
  ball.linear_factor = Eigen::Vector3d(1.0, 1.0, 0.0);
  const SphereScene scene{"LockedAxis", ImpactLaw::kPropagative, {{kRadius, partner}, {kRadius, ball}}};
  const std::pair<const char*, SceneOutcome> outcomes[] = {{"rigid", RunRigid(scene)},
                                                           {"multibody", RunMultibody(scene)}};
  for (const auto& [adapter, outcome] : outcomes) {
    SCOPED_TRACE(adapter);
    EXPECT_EQ(outcome.stats.impacts, 1);
    EXPECT_EQ(outcome.stats.fallbacks_to_base, 0);
    ASSERT_EQ(outcome.velocities.size(), 1u);
    // One reflection of a unit-speed, 1-contact problem: kAgreement. The
    // locked z component is checked bit for bit in RunScene.
    EXPECT_NEAR(outcome.velocities[0].x(), 0.0, kAgreement);
    EXPECT_NEAR(outcome.velocities[0].y(), 1.0, kAgreement);
    EXPECT_NEAR(outcome.angular_velocities[0].norm(), 0.0, kAgreement);
  }
}

// Both adapters on the same rigid scenes, beyond one sphere on the ground:
// the bodies' factors, kinematic partners and sphere–sphere pairs, each
// through the laws that treat them differently. Every dynamic sphere's
// velocity and spin after one step must agree between the adapters to
// rounding, and both must resolve the same number of impacts without
// falling back.
std::vector<SphereScene> AgreementScenes() {
  std::vector<SphereScene> scenes;
  const double r = 0.1;
  const Eigen::Vector3d above_ground(0, r + 1e-4, 0);  // lands within the first step
  const double touching = 2 * r - 1e-7;                 // Bullet's sphere pair needs overlap
  for (const ImpactLaw law : {ImpactLaw::kPropagative, ImpactLaw::kRouth}) {
    const std::string suffix = law == ImpactLaw::kRouth ? "Routh" : "Propagative";
    // Spin about locked axes (angular factor (0, 1, 0)) on the ground, with
    // friction: the x and z spin pass through, friction turns about y only.
    worlds::BodyOptions spinning = Sphere(above_ground, {1.5, -2.0, 0.5}, 0.5, 0.5);
    spinning.angular_factor = Eigen::Vector3d(0, 1, 0);
    spinning.angular_velocity = Eigen::Vector3d(4.0, 1.0, -3.0);
    scenes.push_back({"SpinAboutALockedAxis" + suffix, law, {{r, spinning}}, true, 1.0, 1.0});
    // A kinematic sphere moving into a spinning ball, with friction.
    worlds::BodyOptions partner = Sphere({0, 0, 0}, {0.3, 0.5, 0.2}, 1.0, 0.8);
    partner.mass = 0.0;
    partner.kinematic = true;
    worlds::BodyOptions struck = Sphere(Eigen::Vector3d(0.6, 0.8, 0.0) * touching, {-1.0, -0.5, 0.3}, 0.7, 0.6);
    struck.angular_velocity = Eigen::Vector3d(0.0, 2.0, 5.0);
    scenes.push_back({"KinematicPartner" + suffix, law, {{r, partner}, {r, struck}}});
    // Two free balls of different masses, off-centre, frictional.
    worlds::BodyOptions heavy = Sphere({0, 0, 0}, {1.0, 0.2, 0.0}, 0.6, 0.4);
    heavy.mass = 2.0;
    heavy.angular_velocity = Eigen::Vector3d(1.0, -2.0, 3.0);
    worlds::BodyOptions light =
        Sphere(Eigen::Vector3d(0.9, 0.3, 0.1).normalized() * touching, {-0.5, 0.0, 0.1}, 0.6, 0.4);
    light.mass = 0.5;
    scenes.push_back({"TwoFreeBalls" + suffix, law, {{r, heavy}, {r, light}}});
  }
  return scenes;
}

void PrintTo(const SphereScene& scene, std::ostream* os) { *os << scene.name; }

class AdaptersAgreeOnScenes : public ::testing::TestWithParam<SphereScene> {};

TEST_P(AdaptersAgreeOnScenes, EveryDynamicSphereLeavesTheSame) {
  const SceneOutcome rigid = RunRigid(GetParam());
  const SceneOutcome multibody = RunMultibody(GetParam());
  EXPECT_GE(rigid.stats.impacts, 1);
  EXPECT_EQ(multibody.stats.impacts, rigid.stats.impacts);
  EXPECT_EQ(rigid.stats.fallbacks_to_base, 0);
  EXPECT_EQ(multibody.stats.fallbacks_to_base, 0);
  ASSERT_EQ(rigid.velocities.size(), multibody.velocities.size());
  const double speed = 3.0;  // [m/s] the scenes' scale
  for (size_t i = 0; i < rigid.velocities.size(); ++i) {
    EXPECT_GT((rigid.velocities[i] - rigid.velocities_before[i]).norm(), 0.1) << "body " << i << " was not struck";
    for (int k = 0; k < 3; ++k) {
      EXPECT_NEAR(rigid.velocities[i][k], multibody.velocities[i][k], kAgreement * speed) << "body " << i << " v " << k;
      EXPECT_NEAR(rigid.angular_velocities[i][k], multibody.angular_velocities[i][k], kAgreement * speed / 0.1)
          << "body " << i << " ω " << k;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Scenes, AdaptersAgreeOnScenes, ::testing::ValuesIn(AgreementScenes()),
                         [](const ::testing::TestParamInfo<SphereScene>& param_info) {
                           return param_info.param.name;
                         });

// The settings both configs share are one struct (ImpactSettings) with one
// validation: a bad shared field is rejected by both adapters, with the
// same field named.
TEST(SharedSettings, BothAdaptersRejectABadSharedFieldNamingIt) {
  struct Case {
    const char* field;
    void (*spoil)(simpact::bullet::ImpactSettings&);
  };
  const Case cases[] = {
      {"touch_tolerance", [](simpact::bullet::ImpactSettings& c) { c.touch_tolerance = -1.0; }},
      {"max_reflections", [](simpact::bullet::ImpactSettings& c) { c.max_reflections = -1; }},
      {"policy", [](simpact::bullet::ImpactSettings& c) { c.policy = simpact::OrderPolicy::kAll; }},
      {"routh.max_steps", [](simpact::bullet::ImpactSettings& c) { c.routh.max_steps = 0; }},
      {"routh.cone_directions", [](simpact::bullet::ImpactSettings& c) { c.routh.cone_directions = 2; }},
  };
  for (const Case& c : cases) {
    simpact::bullet::ImpactSolverConfig rigid;
    simpact::bullet::MultiBodyImpactSolverConfig multibody;
    c.spoil(rigid);
    c.spoil(multibody);
    for (int adapter = 0; adapter < 2; ++adapter) {
      try {
        if (adapter == 0) simpact::bullet::validate(rigid);
        else simpact::bullet::validate(multibody);
        ADD_FAILURE() << (adapter == 0 ? "rigid" : "multibody") << " accepted a bad " << c.field;
      } catch (const std::invalid_argument& e) {
        EXPECT_NE(std::string(e.what()).find(c.field), std::string::npos)
            << (adapter == 0 ? "rigid: " : "multibody: ") << e.what();
      }
    }
  }
}

}  // namespace
