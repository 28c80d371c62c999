// The two Bullet adapters on the same contact (TEST_P over the laws they
// share): a rigid sphere striking a static plane at an angle, once in a
// BulletWorld through ImpactSolver and once in a MultiBodyWorld through
// MultiBodyImpactSolver (which resolves rigid bodies too). Both must report
// the same impact — impulses, Routh tangent frame and friction impulse —
// count it the same way in their (one) stats type, and leave the sphere
// with the same velocity.
#include <simpact/bullet/impact_solver.h>
#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact_worlds/bullet_world.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <gtest/gtest.h>

#include <Eigen/Core>

#include <functional>
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

Strike RigidAdapter(const LawCase& c) {
  worlds::WorldOptions options;
  options.solver = worlds::SolverKind::kSimpact;
  options.gravity = Eigen::Vector3d::Zero();
  options.simpact.law = c.law;
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
  worlds::MultiBodyWorldOptions options;
  options.gravity = Eigen::Vector3d::Zero();
  options.config.law = c.law;
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
struct LockedAxisStrike {
  Eigen::Vector3d velocity, angular_velocity;
  ImpactStats stats;
};

constexpr double kLockedSpeed = 0.5;  // [m/s] along the locked z axis
constexpr double kLockedRadius = 0.1;  // [m] ball and static sphere alike
// [m] Bullet's sphere pair reports a point only once they touch; 1e-7 m of
// overlap is far below the base solver's penetration slop.
constexpr double kLockedOverlap = 1e-7;

worlds::BodyOptions LockedAxisBall() {
  worlds::BodyOptions ball;
  const Eigen::Vector3d normal = Eigen::Vector3d(0.0, 1.0, 1.0).normalized();
  ball.position = (2.0 * kLockedRadius - kLockedOverlap) * normal;
  ball.velocity = Eigen::Vector3d(0.0, -1.0, -kLockedSpeed);
  ball.linear_factor = Eigen::Vector3d(1.0, 1.0, 0.0);
  ball.restitution = 1.0;
  ball.friction = 0.0;
  ball.never_sleep = true;
  return ball;
}

worlds::BodyOptions LockedAxisPartner() {
  worlds::BodyOptions partner;
  partner.mass = 0.0;
  partner.restitution = 1.0;
  partner.friction = 0.0;
  return partner;
}

template <class World>
LockedAxisStrike LockedAxisStrikeIn(World& world) {
  world.add_sphere(kLockedRadius, LockedAxisPartner());
  btRigidBody* ball = world.add_sphere(kLockedRadius, LockedAxisBall());
  world.step(kStep);
  return {worlds::velocity(*ball), worlds::angular_velocity(*ball), world.impact_solver()->stats()};
}

TEST(LockedAxis, BothAdaptersPassALockedAxisVelocityThrough) {
  worlds::WorldOptions rigid_options;
  rigid_options.solver = worlds::SolverKind::kSimpact;
  rigid_options.gravity = Eigen::Vector3d::Zero();
  rigid_options.simpact.law = ImpactLaw::kPropagative;
  worlds::BulletWorld rigid_world(rigid_options);
  worlds::MultiBodyWorldOptions multibody_options;
  multibody_options.gravity = Eigen::Vector3d::Zero();
  multibody_options.config.law = ImpactLaw::kPropagative;
  worlds::MultiBodyWorld multibody_world(multibody_options);
  const std::pair<const char*, LockedAxisStrike> strikes[] = {
      {"rigid", LockedAxisStrikeIn(rigid_world)}, {"multibody", LockedAxisStrikeIn(multibody_world)}};
  for (const auto& [adapter, strike] : strikes) {
    SCOPED_TRACE(adapter);
    ASSERT_EQ(strike.stats.impacts, 1);
    EXPECT_EQ(strike.stats.fallbacks_to_base, 0);
    // One reflection of a unit-speed, 1-contact problem: kAgreement.
    EXPECT_NEAR(strike.velocity.x(), 0.0, kAgreement);
    EXPECT_NEAR(strike.velocity.y(), 1.0, kAgreement);
    EXPECT_EQ(strike.velocity.z(), -kLockedSpeed) << "no impulse moves a locked axis";
    EXPECT_NEAR(strike.angular_velocity.norm(), 0.0, kAgreement);
  }
}

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
