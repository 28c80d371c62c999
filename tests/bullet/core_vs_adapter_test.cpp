// The core against the Bullet adapter on the same contact: a box whose
// corner strikes the ground in Bullet, resolved by ImpactSolver, and the same
// contact (the point and normal Bullet reported, where its margin-rounded
// corner touched) built by hand as a core ImpactProblem, J = [n, r × n],
// M⁻¹ = diag(m⁻¹ I, R I_body⁻¹ Rᵀ) from the box's closed-form inertia. Both
// must give the same post-impact velocities and impulse.
#include "support/box_corner.h"
#include "support/compare.h"

#include <simpact/propagative.h>
#include <simpact_worlds/bullet_world.h>

#include <btBulletDynamicsCommon.h>

#include <gtest/gtest.h>

#include <Eigen/Geometry>

#include <cmath>
#include <string>

namespace simpact {
namespace {

using worlds::BulletWorld;
using testing::VectorsNear;

struct CornerCase {
  double tilt;        // rotation about z [rad]
  double spin;        // initial angular velocity about z [rad/s]
  double restitution;
};

/// Double: both sides are exact to rounding (~1e-15); Bullet stores the
/// result in btScalar. Single precision: ~10 float ulps at these speeds.
constexpr double kAgreement = sizeof(btScalar) == sizeof(double) ? 1e-9 : 2e-6;

class CoreVsAdapter : public ::testing::TestWithParam<CornerCase> {};

TEST_P(CoreVsAdapter, BoxCornerOnTheGround) {
  const CornerCase& c = GetParam();
  const double mass = 2.0;
  const Eigen::Vector3d half(0.3, 0.2, 0.1);
  const Eigen::Quaterniond orientation(Eigen::AngleAxisd(c.tilt, Eigen::Vector3d::UnitZ()));
  // The lowest corner (largest downward reach) touches y = 0 exactly.
  const Eigen::Vector3d corner_offset = testing::lowest_corner(orientation, half);
  const Eigen::Vector3d centre(0.0, -corner_offset.y(), 0.0);
  const Eigen::Vector3d linear(0.3, -1.0, 0.0), angular(0.0, 0.0, c.spin);

  // Core, by hand. Box inertia about its centre, body frame.
  const Eigen::Vector3d inertia_body = mass / 3.0 * Eigen::Vector3d(half.y() * half.y() + half.z() * half.z(),
                                                                    half.x() * half.x() + half.z() * half.z(),
                                                                    half.x() * half.x() + half.y() * half.y());
  // Adapter: the same box over a static ground plane, no gravity or friction.
  worlds::WorldOptions options;
  options.solver = worlds::SolverKind::kSimpact;
  options.gravity = Eigen::Vector3d::Zero();
  options.restitution_combiner = worlds::RestitutionCombiner::kMinimum;
  options.simpact.resolve_plastic_impacts = true;  // R = 0 by the core's law too
  double impulse = -1.0;
  Eigen::Vector3d point = Eigen::Vector3d::Zero(), n = Eigen::Vector3d::Zero();
  Eigen::VectorXd adapter(6);
  btRigidBody* body = nullptr;
  // Read right after the impact phase wrote back: later in the step Bullet
  // applies its (implicit) gyroscopic term to the spinning box, which is not
  // the impact's business.
  options.simpact.on_impact = [&](const bullet::ImpactReport& report) {
    adapter << worlds::velocity(*body), worlds::angular_velocity(*body);
    ASSERT_EQ(report.contacts.size(), 1u) << "a single corner touches";
    impulse = report.contacts[0].impulse;
    point = worlds::to_eigen(report.contacts[0].point_on_a);
    n = worlds::to_eigen(report.contacts[0].normal);
  };
  BulletWorld world(options);
  body = testing::add_box_on_corner(world, half, mass, orientation, centre, linear, angular,
                                    /*friction=*/0.0, c.restitution, /*ground_friction=*/0.0);
  // Bullet's box inertia must be the one used by hand above.
  const Eigen::Vector3d bullet_inertia = worlds::to_eigen(body->getLocalInertia());
  ASSERT_TRUE(VectorsNear(bullet_inertia, inertia_body, 1e-6, 0.0));
  world.step(1.0 / 240.0);
  ASSERT_GE(impulse, 0.0) << "the touching corner must strike in the first step";
  EXPECT_NEAR(n.dot(Eigen::Vector3d::UnitY()), 1.0, 1e-6) << "ground normal";

  // Core, by hand, on the contact Bullet reported.
  const Eigen::Matrix3d rotation = orientation.toRotationMatrix();
  Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Zero(6, 6);
  inverse_mass.topLeftCorner<3, 3>() = Eigen::Matrix3d::Identity() / mass;
  inverse_mass.bottomRightCorner<3, 3>() =
      rotation * inertia_body.cwiseInverse().asDiagonal() * rotation.transpose();
  Eigen::MatrixXd normals(1, 6);
  normals << n.transpose(), (point - centre).cross(n).transpose();
  Eigen::VectorXd velocity(6);
  velocity << linear, angular;
  ImpactProblem problem = ImpactProblem::from_dense(inverse_mass, normals, velocity);
  problem.restitution = c.restitution;
  const ImpactResult core = resolve(problem);
  ASSERT_EQ(core.status, Status::kSuccess) << core.message;
  ASSERT_GT(core.outcomes[0].impulses[0], 0.0) << "the corner must strike";


  EXPECT_TRUE(VectorsNear(adapter, core.outcomes[0].velocity, kAgreement, 0.0));
  EXPECT_NEAR(impulse, core.outcomes[0].impulses[0], kAgreement * mass);
}

INSTANTIATE_TEST_SUITE_P(Corners, CoreVsAdapter,
                         ::testing::Values(CornerCase{0.3, 0.0, 1.0}, CornerCase{0.3, 2.0, 1.0},
                                           CornerCase{-0.5, -1.0, 1.0}, CornerCase{0.3, 2.0, 0.5},
                                           CornerCase{0.8, 0.5, 0.0}),
                         [](const ::testing::TestParamInfo<CornerCase>& p) {
                           return "case" + std::to_string(p.index);
                         });

}  // namespace
}  // namespace simpact
