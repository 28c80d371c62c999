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
