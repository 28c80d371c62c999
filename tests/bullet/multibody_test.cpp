// MultiBodyImpactSolver on Featherstone multibodies: a cradle of pendulums, a
// two-link arm striking the ground with both links, a pendulum bob striking a
// free rigid sphere (and the step order of the external-force increment), the
// Routh law on a multibody, bad input, and free-base multibodies: an elastic
// bounce and the compass gait of Halm & Posa, §5.4.2, against the planar
// generalized-coordinate Routh sampler.
#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact/propagative.h>
#include <simpact/routh.h>
#include <simpact_worlds/multibody_world.h>

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btCompoundShape.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyJointLimitConstraint.h>
#include <BulletDynamics/Featherstone/btMultiBodyJointMotor.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <BulletDynamics/Featherstone/btMultiBodyMLCPConstraintSolver.h>
#include <BulletDynamics/MLCPSolvers/btDantzigSolver.h>
#include <BulletDynamics/MLCPSolvers/btLemkeSolver.h>

#include <gtest/gtest.h>

#include <Eigen/Dense>

#include <cmath>
#include <cstdio>
#include <stdexcept>
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

namespace {

using simpact::bullet::ImpactLaw;
using simpact::bullet::MultiBodyBaseSolver;
using simpact::bullet::MultiBodyImpactReport;
using simpact::bullet::MultiBodyImpactSolverConfig;
using simpact::worlds::MultiBodyWorld;
using simpact::worlds::MultiBodyWorldOptions;
using simpact::worlds::RevoluteLink;

constexpr bool kDouble = sizeof(btScalar) == sizeof(double);
// Velocities and energies through one impact step. Double: the law is exact
// up to a few reflections' rounding (~1e-15 relative) and Bullet's Jacobian
// and ABA add ~1e-15; 1e-12 leaves three orders of margin. Float: Bullet's
// btScalar state (positions, Jacobians, ABA) is ~1e-7 relative, amplified by
// the dozen operations of a cluster; 1e-4 is three orders above that.
constexpr double kTolerance = kDouble ? 1e-12 : 1e-4;
constexpr double kStep = 1.0 / 240.0;
constexpr double kGravity = simpact::worlds::kStandardGravity;
// Overlap of "touching" spheres [m]: sphere–sphere contacts exist only at
// distance ≤ 0, and 1e-7 m is a few float ulps at 0.1 m, far below anything
// that changes the outcome (the no-push-out rule keeps it out of velocities).
constexpr double kOverlap = 1e-7;

MultiBodyWorldOptions options(ImpactLaw law = ImpactLaw::kPropagative, double gravity = kGravity) {
  MultiBodyWorldOptions o;
  o.config.law = law;
  o.gravity = Eigen::Vector3d(0.0, -gravity, 0.0);
  return o;
}

// A solid ball of 2 kg and r = 0.1 m as a free base centred at `center`
// (its collider: {-1, center, 0.1, e, μ}).
simpact::worlds::FreeBase ball_base_at(const Eigen::Vector3d& center) {
  simpact::worlds::FreeBase base;
  base.center = center;
  base.mass = 2.0;
  base.inertia = Eigen::Vector3d::Constant(0.4 * 2.0 * 0.01);
  return base;
}

// (a) A cradle of n pendulums (L = 1 m, r = 5 cm, 1 kg, e = 1) whose first
// bob swings in at 1 m/s: the rigid cradle's (0, …, 0, 1).
// `base`: simpact's base solver; `stock`: without simpact, the world's
// multibody solver instead of Bullet's btMultiBodyConstraintSolver.
std::vector<double> cradle(int n, bool simpact, std::vector<MultiBodyImpactReport>* reports,
                           double* energy_before, double* energy_after,
                           MultiBodyBaseSolver base = MultiBodyBaseSolver::kSequentialImpulse,
                           btMultiBodyConstraintSolver* stock = nullptr, int* mlcp_fallbacks = nullptr) {
  MultiBodyWorldOptions o = options();
  o.simpact = simpact;
  o.config.base = base;
  if (reports != nullptr) o.config.on_impact = [reports](const MultiBodyImpactReport& r) { reports->push_back(r); };
  MultiBodyWorld world(o);
  if (!simpact && stock != nullptr) world.dynamics_world().setMultiBodyConstraintSolver(stock);
  const double r = 0.05, length = 1.0;
  std::vector<btMultiBody*> pendulums;
  for (int i = 0; i < n; ++i) {
    const double x = i * (2 * r - kOverlap);
    pendulums.push_back(world.add_pendulum({x, length, 0}, {x, 0, 0}, r, 1.0, 1.0, i == 0 ? 1.0 / length : 0.0));
  }
  double before = 0.0, after = 0.0;
  for (btMultiBody* p : pendulums) before += MultiBodyWorld::kinetic_energy(*p);
  world.step(kStep);
  std::vector<double> rates;
  for (btMultiBody* p : pendulums) {
    rates.push_back(MultiBodyWorld::joint_velocity(*p, 0));
    after += MultiBodyWorld::kinetic_energy(*p);
  }
  if (mlcp_fallbacks != nullptr && world.impact_solver() != nullptr) {
    const auto* mlcp = dynamic_cast<const btMultiBodyMLCPConstraintSolver*>(&world.impact_solver()->base_solver());
    *mlcp_fallbacks = mlcp != nullptr ? mlcp->getNumFallbacks() : 0;
  }
  if (energy_before != nullptr) *energy_before = before;
  if (energy_after != nullptr) *energy_after = after;
  return rates;
}

TEST(MultiBodyImpact, PendulumCradleMatchesRigidCradle) {
  for (const int n : {3, 5}) {
    SCOPED_TRACE("balls " + std::to_string(n));
    std::vector<MultiBodyImpactReport> reports;
    double before = 0.0, after = 0.0;
    const std::vector<double> rates = cradle(n, true, &reports, &before, &after);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].law, simpact::bullet::AppliedLaw::kPropagative);
    EXPECT_EQ(reports[0].multibodies.size(), static_cast<size_t>(n));
    EXPECT_EQ(reports[0].contacts.size(), static_cast<size_t>(n - 1));
    for (int i = 0; i < n; ++i) EXPECT_NEAR(rates[i], i == n - 1 ? 1.0 : 0.0, kTolerance) << "pendulum " << i;
    EXPECT_NEAR(after, before, kTolerance * before);
    EXPECT_NEAR(reports[0].energy_after, reports[0].energy_before, kTolerance * before);
    EXPECT_NEAR(reports[0].energy_before, before, kTolerance * before);
    std::printf("cradle %d: last rate %.17g, max |other| %.3g, energy error %.3g\n", n, rates[n - 1],
                std::abs(*std::max_element(rates.begin(), rates.end() - 1,
                                           [](double a, double b) { return std::abs(a) < std::abs(b); })),
                (after - before) / before);
  }
}

TEST(MultiBodyImpact, StockMultiBodySolverDoesNotGiveTheCradleOutcome) {
  // What the test above guards against: Bullet's own multibody solver
  // resolves the touching cradle in one LCP and spreads the momentum.
  const std::vector<double> rates = cradle(3, false, nullptr, nullptr, nullptr);
  const double deviation = std::abs(rates[0]) + std::abs(rates[1]) + std::abs(rates[2] - 1.0);
  EXPECT_GT(deviation, 0.1) << rates[0] << " " << rates[1] << " " << rates[2];
  std::printf("stock cradle 3: %.4f %.4f %.4f\n", rates[0], rates[1], rates[2]);
}

// The two-link arm of (b) and (d): hinges about z at the origin and at the
// first bob, bobs (r = 5 cm) at x = 0.5 and 1.0 m resting on the plane
// y = −r, links of 1 and 2 kg, joint rates (−1, −0.5) rad/s: both bobs
// strike the ground at once.
struct Arm {
  static constexpr double kL1 = 0.5, kL2 = 0.5, kR = 0.05, kM1 = 1.0, kM2 = 2.0;
  btMultiBody* mb = nullptr;
  // The same arm by hand: M (θ1, θ2 relative) and the contact rows.
  static Eigen::Matrix2d mass() {
    const double i1 = 0.4 * kM1 * kR * kR, i2 = 0.4 * kM2 * kR * kR;
    const Eigen::Vector2d a1(kL1, 0.0), a2(kL1 + kL2, kL2), w1(1.0, 0.0), w2(1.0, 1.0);
    return kM1 * a1 * a1.transpose() + i1 * w1 * w1.transpose() + kM2 * a2 * a2.transpose() +
           i2 * w2 * w2.transpose();
  }
  static Eigen::Matrix2d rows() {
    Eigen::Matrix2d j;
    j << kL1, 0.0, kL1 + kL2, kL2;  // upward velocity of each contact point
    return j;
  }
};

btMultiBody* add_arm(MultiBodyWorld& world, double restitution, double friction, Eigen::Vector2d rates) {
  RevoluteLink l1, l2;
  l1.pivot = {0, 0, 0};
  l1.center = {Arm::kL1, 0, 0};
  l1.mass = Arm::kM1;
  l2.parent = 0;
  l2.pivot = l1.center;
  l2.center = {Arm::kL1 + Arm::kL2, 0, 0};
  l2.mass = Arm::kM2;
  for (RevoluteLink* l : {&l1, &l2}) {
    l->radius = Arm::kR;
    l->restitution = restitution;
    l->friction = friction;
  }
  l1.joint_velocity = rates[0];
  l2.joint_velocity = rates[1];
  world.add_plane({0, 1, 0}, -Arm::kR, restitution, friction);
  return world.add_fixed_base_chain({0, 0, 0}, {l1, l2});
}

Eigen::Vector2d rates_of(const btMultiBody& mb) {
  return {MultiBodyWorld::joint_velocity(mb, 0), MultiBodyWorld::joint_velocity(mb, 1)};
}

TEST(MultiBodyImpact, TwoLinkArmStrikesGroundWithBothLinks) {
  std::vector<MultiBodyImpactReport> reports;
  MultiBodyWorldOptions o = options(ImpactLaw::kPropagative, 0.0);  // no force: v* = v
  o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
  MultiBodyWorld world(o);
  const Eigen::Vector2d v(-1.0, -0.5);
  btMultiBody* arm = add_arm(world, 1.0, 0.0, v);
  const double before = MultiBodyWorld::kinetic_energy(*arm);
  world.step(kStep);
  ASSERT_EQ(reports.size(), 1u);
  ASSERT_EQ(reports[0].contacts.size(), 2u);
  const Eigen::Vector2d after = rates_of(*arm);

  // The adapter's W = J M⁻¹ Jᵀ against the arm by hand: same outcome as the
  // core law on the hand-built problem.
  const simpact::ImpactProblem problem =
      simpact::ImpactProblem::from_dense(Arm::mass().inverse(), Arm::rows(), v);
  const simpact::ImpactResult expected = simpact::resolve(problem);
  ASSERT_EQ(expected.status, simpact::Status::kSuccess);
  const Eigen::VectorXd& v_expected = expected.outcomes[0].velocity;
  EXPECT_NEAR(after[0], v_expected[0], kTolerance * 10);
  EXPECT_NEAR(after[1], v_expected[1], kTolerance * 10);
  EXPECT_GT((after - v).norm(), 0.5);  // the impact did change the rates
  // Elastic: energy kept, contacts not approaching. The energy is taken in
  // the impact configuration (the hand-built M, itself checked against
  // Bullet's link velocities before the step): after the step the arm has
  // moved and M(θ2) changed with it.
  EXPECT_NEAR(0.5 * v.dot(Arm::mass() * v), before, kTolerance * before);
  EXPECT_NEAR(0.5 * after.dot(Arm::mass() * after), before, kTolerance * 10 * before);
  EXPECT_NEAR(reports[0].energy_after, reports[0].energy_before, kTolerance * 10 * before);
  const Eigen::Vector2d u = Arm::rows() * after;
  EXPECT_GE(u[0], -kTolerance);
  EXPECT_GE(u[1], -kTolerance);
  std::printf("arm: rates (%.15f, %.15f), expected (%.15f, %.15f), energy error %.3g\n", after[0], after[1],
              v_expected[0], v_expected[1], (0.5 * after.dot(Arm::mass() * after) - before) / before);
  EXPECT_GE(reports[0].contacts[0].impulse, 0.0);
  EXPECT_GE(reports[0].contacts[1].impulse, 0.0);
}

// (c) A pendulum bob (1 kg, L = 1 m) at its lowest point, 1 rad/s, strikes a
// free 1 kg sphere at rest beside it (e = 1). 1-D elastic collision with
// the bob's effective mass m_eff = I_pivot / L²; the sphere falls under
// gravity meanwhile.
TEST(MultiBodyImpact, PendulumBobStrikesFreeRigidSphere) {
  std::vector<MultiBodyImpactReport> reports;
  MultiBodyWorldOptions o = options();
  o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
  MultiBodyWorld world(o);
  const double r = 0.05, length = 1.0, m = 1.0, omega = 1.0;
  btMultiBody* pendulum = world.add_pendulum({0, length, 0}, {0, 0, 0}, r, m, 1.0, omega);
  simpact::worlds::BodyOptions sphere;
  sphere.mass = 1.0;
  sphere.restitution = 1.0;
  sphere.position = {2 * r - kOverlap, 0, 0};
  btRigidBody* ball = world.add_sphere(r, sphere);
  world.step(kStep);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].multibodies.size(), 1u);
  EXPECT_EQ(reports[0].bodies.size(), 1u);
  const double inertia = m * length * length + 0.4 * m * r * r;  // about the pivot
  const double m_eff = inertia / (length * length);
  const double omega_after = omega * (m_eff - sphere.mass) / (m_eff + sphere.mass);
  const double v_ball = 2.0 * m_eff / (m_eff + sphere.mass) * omega * length;
  const btVector3 v = ball->getLinearVelocity();
  EXPECT_NEAR(MultiBodyWorld::joint_velocity(*pendulum, 0), omega_after, kTolerance);
  EXPECT_NEAR(double(v.x()), v_ball, kTolerance);
  EXPECT_NEAR(double(v.y()), -kGravity * kStep, kTolerance);  // the base solver's gravity only
  // Angular momentum about the pivot and kinetic energy (horizontal motion).
  const double omega_now = MultiBodyWorld::joint_velocity(*pendulum, 0);
  EXPECT_NEAR(inertia * omega_now + sphere.mass * length * double(v.x()), inertia * omega, kTolerance);
  EXPECT_NEAR(0.5 * inertia * omega_now * omega_now + 0.5 * sphere.mass * double(v.x()) * double(v.x()),
              0.5 * inertia * omega * omega, kTolerance);
  EXPECT_NEAR(reports[0].energy_after, reports[0].energy_before, kTolerance);
  std::printf("mixed: omega %.15f (expected %.15f), ball %.15f (expected %.15f)\n", omega_now, omega_after,
              double(v.x()), v_ball);
}

// Step order: a tilted pendulum (gravity torque ≠ 0) strikes a free sphere
// along an oblique normal. The law must see both bodies at mid-step,
// ω* = ω + ½ h α and v* = v + ½ h g, and write back ω_end + δ and v + δ
// (+ h g by the base solver), δ = v⁺ − v*.
TEST(MultiBodyImpact, ExternalForceIncrementIsHalvedForBothBodyKinds) {
  std::vector<MultiBodyImpactReport> reports;
  MultiBodyWorldOptions o = options();
  o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
  MultiBodyWorld world(o);
  const double r = 0.05, length = 1.0, m = 1.0, omega = 2.0, tilt = 0.3;
  const Eigen::Vector3d pivot(0, length, 0);
  const Eigen::Vector3d bob = pivot + length * Eigen::Vector3d(-std::sin(tilt), -std::cos(tilt), 0);
  btMultiBody* pendulum = world.add_pendulum(pivot, bob, r, m, 1.0, omega);
  const Eigen::Vector3d d = Eigen::Vector3d(1.0, -0.2, 0.0).normalized();
  simpact::worlds::BodyOptions sphere;
  sphere.mass = 0.5;
  sphere.restitution = 1.0;
  sphere.position = bob + (2 * r - kOverlap) * d;
  sphere.velocity = {-0.1, 0.3, 0.0};
  btRigidBody* ball = world.add_sphere(r, sphere);
  world.step(kStep);
  ASSERT_EQ(reports.size(), 1u);
  const MultiBodyImpactReport& rep = reports[0];
  ASSERT_EQ(rep.velocity_before.size(), 7);  // q̇ (1), then [v, ω] of the sphere
  const double inertia = m * length * length + 0.4 * m * r * r;
  const double alpha = m * kGravity * length * std::sin(tilt) / inertia;  // gravity torque / I
  // Float: positions and the ABA in float, ~1e-7 relative.
  const double tol = kDouble ? 1e-10 : 1e-4;
  EXPECT_NEAR(rep.velocity_before[0], omega + 0.5 * kStep * alpha, tol);
  EXPECT_NEAR(rep.velocity_before[1], sphere.velocity.x(), tol);
  EXPECT_NEAR(rep.velocity_before[2], sphere.velocity.y() - 0.5 * kStep * kGravity, tol);
  EXPECT_NEAR(rep.energy_after, rep.energy_before, kTolerance * 10 * rep.energy_before);
  const Eigen::VectorXd delta = rep.velocity_after - rep.velocity_before;
  EXPECT_GT(std::abs(delta[0]), 0.1);
  EXPECT_NEAR(MultiBodyWorld::joint_velocity(*pendulum, 0), omega + kStep * alpha + delta[0], tol);
  const btVector3 v = ball->getLinearVelocity();
  EXPECT_NEAR(double(v.x()), sphere.velocity.x() + delta[1], tol);
  EXPECT_NEAR(double(v.y()), sphere.velocity.y() - kStep * kGravity + delta[2], tol);
  // Post-impact normal velocity (mid-step) not approaching.
  const Eigen::VectorXd u = rep.normals * rep.velocity_after + rep.normal_offsets;
  EXPECT_GE(u.minCoeff(), -kTolerance * 10);
}

// (d) The Routh law on the arm (μ = 0.5): every sample dissipates and ends
// non-approaching. Two contacts on a 2-DOF arm: any inelastic outcome
// stops it, so this checks the rows, not the sampling (next test).
TEST(MultiBodyImpact, RouthSamplesOnTheArmDissipate) {
  for (std::uint64_t seed = 0; seed < 5; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<MultiBodyImpactReport> reports;
    MultiBodyWorldOptions o = options(ImpactLaw::kRouth, 0.0);
    o.config.seed = seed;
    o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
    MultiBodyWorld world(o);
    btMultiBody* arm = add_arm(world, 0.0, 0.5, Eigen::Vector2d(-1.0, -0.5));
    const double before = MultiBodyWorld::kinetic_energy(*arm);
    world.step(kStep);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].law, simpact::bullet::AppliedLaw::kRouth);
    EXPECT_EQ(world.impact_solver()->stats().routh_impacts, 1);
    EXPECT_LT(reports[0].energy_after, 0.9 * reports[0].energy_before);
    EXPECT_NEAR(reports[0].energy_before, before, kTolerance * 10 * before);
    const Eigen::VectorXd u = reports[0].normals * reports[0].velocity_after + reports[0].normal_offsets;
    EXPECT_GE(u.minCoeff(), -1e-9);
    const double after = MultiBodyWorld::kinetic_energy(*arm);
    EXPECT_LT(after, before);
    const Eigen::Vector2d u_bullet = Arm::rows() * rates_of(*arm);
    EXPECT_GE(u_bullet.minCoeff(), -1e-6);
    std::printf("routh seed %d: energy %.6f -> %.6f, min u+ %.3g\n", static_cast<int>(seed),
                reports[0].energy_before, reports[0].energy_after, u.minCoeff());
  }
}

// The tilted pendulum of the step-order test (1 m, bob r = 5 cm, μ = 0.5,
// swinging at 2 rad/s) touching a free 0.5 kg sphere (μ = 0.5) it strikes
// obliquely in the first step; returns the sphere.
btRigidBody* AddPendulumStrikingSphere(MultiBodyWorld& world) {
  const double r = 0.05, length = 1.0, tilt = 0.3;
  const Eigen::Vector3d pivot(0, length, 0);
  const Eigen::Vector3d bob = pivot + length * Eigen::Vector3d(-std::sin(tilt), -std::cos(tilt), 0);
  RevoluteLink link;
  link.pivot = pivot;
  link.center = bob;
  link.radius = r;
  link.friction = 0.5;
  link.joint_velocity = 2.0;
  world.add_fixed_base_chain(pivot, {link});
  simpact::worlds::BodyOptions sphere;
  sphere.mass = 0.5;
  sphere.friction = 0.5;
  sphere.position = bob + (2 * r - kOverlap) * Eigen::Vector3d(1.0, -0.2, 0.0).normalized();
  return world.add_sphere(r, sphere);
}

// (d, continued) Routh on a mixed cluster with one oblique frictional
// contact: the tilted pendulum of the step-order test strikes the sphere
// (μ = 0.5 each, so 0.25 combined). Inelastic: energy falls; friction spins
// the sphere; the contact ends non-approaching.
TEST(MultiBodyImpact, RouthOnPendulumAndSphereDissipatesAndSpins) {
  for (std::uint64_t seed = 0; seed < 3; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<MultiBodyImpactReport> reports;
    MultiBodyWorldOptions o = options(ImpactLaw::kRouth);
    o.config.seed = seed;
    o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
    MultiBodyWorld world(o);
    btRigidBody* ball = AddPendulumStrikingSphere(world);
    world.step(kStep);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].law, simpact::bullet::AppliedLaw::kRouth);
    EXPECT_LT(reports[0].energy_after, 0.95 * reports[0].energy_before);
    EXPECT_GT(reports[0].energy_after, 0.0);
    const Eigen::VectorXd u = reports[0].normals * reports[0].velocity_after + reports[0].normal_offsets;
    EXPECT_GE(u.minCoeff(), -1e-9);
    EXPECT_GT(std::abs(double(ball->getAngularVelocity().z())), 0.1);  // friction acted
    std::printf("routh mixed seed %d: energy %.6f -> %.6f, spin %.4f\n", static_cast<int>(seed),
                reports[0].energy_before, reports[0].energy_after, double(ball->getAngularVelocity().z()));
  }
}

// ── predict_outcome_sets ────────────────────────────────────────────────────

/// Everything of a multibody world a step reads or writes, as raw btScalars:
/// multibody poses, velocities, forces and joint torques; rigid bodies'
/// transforms, velocities, forces.
std::vector<btScalar> MultiBodyWorldState(const MultiBodyWorld& world) {
  std::vector<btScalar> s;
  const auto add = [&](const btVector3& v) { s.insert(s.end(), {v.x(), v.y(), v.z()}); };
  btMultiBodyDynamicsWorld& w = world.dynamics_world();
  for (int i = 0; i < w.getNumMultibodies(); ++i) {
    const btMultiBody& mb = *w.getMultiBody(i);
    add(mb.getBasePos());
    add(mb.getBaseVel());
    add(mb.getBaseOmega());
    add(mb.getBaseForce());
    add(mb.getBaseTorque());
    const btQuaternion q = mb.getWorldToBaseRot();
    s.insert(s.end(), {q.x(), q.y(), q.z(), q.w()});
    for (int link = 0; link < mb.getNumLinks(); ++link) {
      s.push_back(mb.getJointPos(link));
      s.push_back(mb.getJointVel(link));
      add(mb.getLinkForce(link));
      add(mb.getLinkTorque(link));
      for (int d = 0; d < 6; ++d) s.push_back(const_cast<btMultiBody&>(mb).getJointTorqueMultiDof(link)[d]);
    }
  }
  const btCollisionObjectArray& objects = w.getCollisionObjectArray();
  for (int i = 0; i < objects.size(); ++i) {
    const btTransform& t = objects[i]->getWorldTransform();
    add(t.getOrigin());
    for (int r = 0; r < 3; ++r) add(t.getBasis()[r]);
    if (const btRigidBody* body = btRigidBody::upcast(objects[i])) {
      for (const btVector3& v : {body->getLinearVelocity(), body->getAngularVelocity(), body->getTotalForce(),
                                 body->getTotalTorque()})
        add(v);
    }
  }
  return s;
}

bool SameBits(const std::vector<btScalar>& a, const std::vector<btScalar>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(btScalar)) == 0;
}

// The mixed Routh cluster above (pendulum bob striking a free sphere, with
// gravity on the sphere): predicting leaves the world bit for bit as it
// was, the simulation with predictions matches the one without, and the
// step applies sample 0 of the predicted set, bit for bit.
TEST(MultiBodyPredictOutcomeSets, WorldUnchangedAndTheStepTakesSampleZero) {
  constexpr int kSamples = 64;
  std::vector<MultiBodyImpactReport> reports;
  const auto build = [](MultiBodyWorld& world) { AddPendulumStrikingSphere(world); };
  MultiBodyWorldOptions o = options(ImpactLaw::kRouth);
  o.config.seed = 7;
  MultiBodyWorld plain(o);
  o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
  MultiBodyWorld predicted(o);
  build(plain);
  build(predicted);
  simpact::RouthSetParameters set;
  set.samples = kSamples;
  set.threads = 2;
  std::vector<simpact::bullet::MultiBodyPredictedImpact> first;
  for (int k = 0; k < 5; ++k) {
    const std::vector<btScalar> before = MultiBodyWorldState(predicted);
    const auto prediction = predicted.impact_solver()->predict_outcome_sets(btScalar(kStep), set);
    ASSERT_TRUE(SameBits(MultiBodyWorldState(predicted), before)) << "predict changed the world, step " << k;
    if (k == 0) first = prediction;
    const size_t reported = reports.size();
    predicted.step(kStep);
    plain.step(kStep);
    ASSERT_TRUE(SameBits(MultiBodyWorldState(predicted), MultiBodyWorldState(plain)))
        << "predicting changed the simulation, step " << k;
    EXPECT_EQ(prediction.size(), reports.size() - reported) << "step " << k;
  }
  ASSERT_EQ(first.size(), 1u);
  ASSERT_GE(reports.size(), 1u);
  const simpact::bullet::MultiBodyPredictedImpact& p = first[0];
  const MultiBodyImpactReport& r = reports[0];
  EXPECT_EQ(p.law, simpact::bullet::AppliedLaw::kRouth);
  EXPECT_EQ(r.law, simpact::bullet::AppliedLaw::kRouth);
  ASSERT_TRUE(p.sampled) << p.message;
  EXPECT_EQ(p.sample_seed, r.sample_seed);
  ASSERT_EQ(p.multibodies.size(), 1u);
  ASSERT_EQ(p.bodies.size(), 1u);
  EXPECT_EQ(p.offsets, r.offsets);
  ASSERT_EQ(p.contacts.size(), r.contacts.size());
  for (size_t i = 0; i < p.contacts.size(); ++i) EXPECT_EQ(p.contacts[i].approach_speed, r.contacts[i].approach_speed);
  ASSERT_EQ(p.velocity.size(), r.velocity_before.size());
  EXPECT_TRUE(p.velocity == r.velocity_before) << "v* differs";
  ASSERT_EQ(p.set.velocities.cols(), kSamples);
  EXPECT_TRUE(Eigen::VectorXd(p.set.velocities.col(0)) == r.velocity_after) << "the step did not take sample 0";
  // Every sample ends the impact: no contact approaching.
  for (int k = 0; k < kSamples; ++k) {
    const Eigen::VectorXd u = r.normals * Eigen::VectorXd(p.set.velocities.col(k)) + r.normal_offsets;
    EXPECT_GE(u.minCoeff(), -1e-9) << "sample " << k;
  }
}

TEST(MultiBodyPredictOutcomeSets, RejectsBadArguments) {
  MultiBodyWorld world(options(ImpactLaw::kRouth));
  EXPECT_THROW(world.impact_solver()->predict_outcome_sets(btScalar(0)), std::invalid_argument);
  simpact::RouthSetParameters set;
  set.samples = 0;
  EXPECT_THROW(world.impact_solver()->predict_outcome_sets(btScalar(kStep), set), std::invalid_argument);
}

// Joint limits and motors are btMultiBodyConstraints: sustained
// constraints that stay with the base solver (header, "Deviations and
// limitations"). Without a contact impact the simpact world must therefore
// move exactly as the stock one: a pendulum swinging into a ±0.3 rad limit,
// and a motor driving another at 0.5 rad/s, over one second.
TEST(MultiBodyImpact, JointLimitsAndMotorsStayWithTheBaseSolver) {
  constexpr double kLimit = 0.3, kMotorRate = 0.5;
  // Limit: Bullet's joint-limit rows allow a rounding-level overshoot
  // (their ERP correction is positional); 1e-2 rad is far below the
  // 2 rad/s swing's unconstrained excursion (~0.7 rad in 0.35 s).
  constexpr double kLimitSlack = 1e-2;
  // Motor: an impulse-limited velocity constraint reaches its target to
  // solver tolerance; 1e-6 rad/s in double, 1e-3 in float.
  const double motor_tolerance = kDouble ? 1e-6 : 1e-3;
  struct Run {
    std::vector<double> limited, motored;
    std::int64_t impacts = 0;
  };
  auto run = [&](bool simpact) {
    MultiBodyWorldOptions o = options();
    o.simpact = simpact;
    MultiBodyWorld world(o);
    btMultiBody* limited = world.add_pendulum({0, 1, 0}, {0, 0, 0}, 0.05, 1.0, 0.0, 2.0);
    btMultiBody* motored = world.add_pendulum({5, 1, 0}, {5, 0, 0}, 0.05, 1.0, 0.0, 0.0);
    btMultiBodyJointLimitConstraint limit(limited, 0, btScalar(-kLimit), btScalar(kLimit));
    btMultiBodyJointMotor motor(motored, 0, btScalar(kMotorRate), btScalar(100.0));
    world.dynamics_world().addMultiBodyConstraint(&limit);
    world.dynamics_world().addMultiBodyConstraint(&motor);
    Run r;
    for (int step = 0; step < 240; ++step) {
      world.step(kStep);
      r.limited.push_back(double(limited->getJointPos(0)));
      r.motored.push_back(MultiBodyWorld::joint_velocity(*motored, 0));
    }
    world.dynamics_world().removeMultiBodyConstraint(&motor);
    world.dynamics_world().removeMultiBodyConstraint(&limit);
    if (simpact) r.impacts = world.impact_solver()->stats().impacts;
    return r;
  };
  const Run stock = run(false), ours = run(true);
  EXPECT_EQ(ours.impacts, 0);
  ASSERT_EQ(ours.limited.size(), stock.limited.size());
  for (size_t k = 0; k < ours.limited.size(); ++k) {
    ASSERT_EQ(ours.limited[k], stock.limited[k]) << "limited pendulum, step " << k;
    ASSERT_EQ(ours.motored[k], stock.motored[k]) << "motored pendulum, step " << k;
  }
  const double reach = *std::max_element(ours.limited.begin(), ours.limited.end());
  EXPECT_GT(reach, kLimit - kLimitSlack) << "the swing reaches its limit";
  EXPECT_LT(reach, kLimit + kLimitSlack) << "and the limit holds";
  EXPECT_NEAR(ours.motored.back(), kMotorRate, motor_tolerance);
}

TEST(MultiBodyImpact, BadConfigurationNamesTheField) {
  MultiBodyImpactSolverConfig config;
  config.law = ImpactLaw::kAuto;  // the shared laws, auto included, are the multibody adapter's too
  EXPECT_NO_THROW(simpact::bullet::validate(config));
  config.law = static_cast<ImpactLaw>(99);
  try {
    simpact::bullet::validate(config);
    FAIL() << "an invalid law accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("law"), std::string::npos) << e.what();
  }
  config = {};
  config.touch_tolerance = -1.0;
  MultiBodyWorldOptions stock;
  stock.simpact = false;
  MultiBodyWorld host(stock);
  btConstraintSolver* const hosts_solver = host.dynamics_world().getConstraintSolver();
  try {
    simpact::bullet::MultiBodyImpactSolver solver(host.dynamics_world(), config);
    FAIL() << "negative touch_tolerance accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("touch_tolerance"), std::string::npos) << e.what();
  }
  EXPECT_EQ(host.dynamics_world().getConstraintSolver(), hosts_solver) << "a rejected solver installed itself";
  config = {};
  config.routh.cone_directions = 1;
  EXPECT_THROW(simpact::bullet::validate(config), std::invalid_argument);
  EXPECT_THROW(add_arm(*std::make_unique<MultiBodyWorld>(), 1.0, 0.0, Eigen::Vector2d(std::nan(""), 0.0)),
               std::invalid_argument);
}

// The solver cannot exist without its world: the constructor installs it
// in front of the world's own solver and the destructor gives that one
// back. With simpact installed an elastic pendulum strike is resolved by
// the law (one report); after it is gone the same world runs Bullet's
// solver again (no report, Bullet's restitution still acts).
TEST(MultiBodyImpact, SolverInstallsItselfAndGivesTheWorldItsSolverBack) {
  MultiBodyWorldOptions stock = options();
  stock.simpact = false;
  MultiBodyWorld world(stock);
  btConstraintSolver* const bullets = world.dynamics_world().getConstraintSolver();
  const double r = 0.05;
  btMultiBody* a = world.add_pendulum({0, 1, 0}, {0, 0, 0}, r, 1.0, 1.0, 1.0);
  btMultiBody* b = world.add_pendulum({2 * r - kOverlap, 1, 0}, {2 * r - kOverlap, 0, 0}, r, 1.0, 1.0, 0.0);
  std::vector<MultiBodyImpactReport> reports;
  {
    MultiBodyImpactSolverConfig config = options().config;
    config.on_impact = [&](const MultiBodyImpactReport& rep) { reports.push_back(rep); };
    simpact::bullet::MultiBodyImpactSolver solver(world.dynamics_world(), config);
    EXPECT_EQ(world.dynamics_world().getConstraintSolver(), &solver);
    EXPECT_EQ(&solver.world(), &world.dynamics_world());
    world.step(kStep);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].law, simpact::bullet::AppliedLaw::kPropagative);
    EXPECT_EQ(solver.stats().impacts, 1);
  }
  EXPECT_EQ(world.dynamics_world().getConstraintSolver(), bullets) << "the world's own solver is back";
  // The propagative outcome exchanged the bobs' speeds.
  EXPECT_NEAR(MultiBodyWorld::joint_velocity(*b, 0), 1.0, 1e-3);
  a->setJointVel(0, btScalar(1.0));
  b->setJointVel(0, btScalar(0.0));
  world.step(kStep);
  EXPECT_EQ(reports.size(), 1u) << "no simpact solver, no report";
  EXPECT_TRUE(std::isfinite(MultiBodyWorld::joint_velocity(*a, 0)));
  EXPECT_TRUE(std::isfinite(MultiBodyWorld::joint_velocity(*b, 0)));
}

// (e) Free base, propagative, exact: a free-base multibody with no links (a
// ball of r = 0.1 m as the floating base) touching the ground and moving at
// (0.3, −1, 0), e = 1, frictionless, no gravity (v* = v: a lone body has no
// velocity-product terms). The elastic outcome reverses the normal
// component exactly: (0.3, 1, 0), no spin.
TEST(MultiBodyImpact, FreeBaseBallBouncesElastically) {
  std::vector<MultiBodyImpactReport> reports;
  MultiBodyWorldOptions o = options(ImpactLaw::kPropagative, 0.0);
  o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
  MultiBodyWorld world(o);
  world.add_plane({0, 1, 0}, 0.0, 1.0, 0.0);
  simpact::worlds::FreeBase base = ball_base_at({0.0, 0.1, 0.0});
  base.velocity = {0.3, -1.0, 0.0};
  btMultiBody* ball = world.add_free_base_tree(base, {}, {{-1, base.center, 0.1, 1.0, 0.0}});
  world.step(kStep);
  ASSERT_EQ(reports.size(), 1u);
  EXPECT_EQ(reports[0].law, simpact::bullet::AppliedLaw::kPropagative);
  EXPECT_EQ(reports[0].velocity_after.size(), 6);  // free base: [ω, v]
  const Eigen::Vector3d v = MultiBodyWorld::link_velocity(*ball, -1);
  EXPECT_NEAR(v.x(), 0.3, kTolerance);
  EXPECT_NEAR(v.y(), 1.0, kTolerance);
  EXPECT_NEAR(v.z(), 0.0, kTolerance);
  EXPECT_NEAR(double(ball->getBaseOmega().length()), 0.0, kTolerance);
  EXPECT_NEAR(reports[0].energy_after, reports[0].energy_before, kTolerance * reports[0].energy_before);
  EXPECT_NEAR(reports[0].energy_before, 0.5 * 2.0 * 1.09, kTolerance);
  EXPECT_THROW(world.add_free_base_tree(base, {}, {{0, base.center, 0.1, 1.0, 0.0}}), std::invalid_argument);
  base.mass = 0.0;
  EXPECT_THROW(world.add_free_base_tree(base, {}, {}), std::invalid_argument);
}

// (e') A moving partner may give energy, so the restore-energy stage must
// leave the outcome alone (the multibody adapter's energy_is_invariant: a
// contact offset b ≠ 0). The ball of (e) falls at 1 m/s onto a kinematic
// sphere creeping up at δ = 1e-9 m/s: the exact elastic outcome 1 + 2δ
// gains 4δ of the energy, a shrink of the change of δ/(1 + δ), within what
// the stage takes back (kEnergyRestoreMaxShrink = 1e-8). Taken for
// rounding, the ball would leave at 1 m/s. Double only: float cannot hold
// 1 + 2e-9.
TEST(MultiBodyImpact, CreepingKinematicPartnersGainIsNotTakenForRounding) {
  if (!kDouble) GTEST_SKIP() << "float cannot resolve 2e-9 m/s at 1 m/s";
  constexpr double kCreep = 1e-9;
  MultiBodyWorld world(options(ImpactLaw::kPropagative, 0.0));
  simpact::worlds::BodyOptions partner;
  partner.mass = 0.0;
  partner.kinematic = true;
  partner.velocity = {0.0, kCreep, 0.0};
  partner.restitution = 1.0;
  partner.friction = 0.0;
  world.add_sphere(0.1, partner);
  simpact::worlds::FreeBase base = ball_base_at({0.0, 0.2 - kOverlap, 0.0});
  base.velocity = {0.0, -1.0, 0.0};
  btMultiBody* ball = world.add_free_base_tree(base, {}, {{-1, base.center, 0.1, 1.0, 0.0}});
  world.step(kStep);
  ASSERT_EQ(world.impact_solver()->stats().impacts, 1);
  const Eigen::Vector3d v = MultiBodyWorld::link_velocity(*ball, -1);
  EXPECT_NEAR(v.y(), 1.0 + 2.0 * kCreep, kTolerance);
  EXPECT_NEAR(v.x(), 0.0, kTolerance);
  EXPECT_NEAR(v.z(), 0.0, kTolerance);
  EXPECT_NEAR(double(ball->getBaseOmega().length()), 0.0, kTolerance);
  EXPECT_EQ(world.impact_solver()->stats().energy_restored, 0);
}

// (f) The compass gait wide step (Halm & Posa, §5.4.2;
// demos/multibody_demos.cpp) as a free-base btMultiBody (trailing leg the
// base, leading leg a revolute link), law routh, h = 0.25, N = 5, μ = 5, no
// gravity. The reference is the planar generalized-coordinate model, built
// here independently of the fixture from Halm & Posa, Appendix A:
// q = [x, y, θ_lead, θ_trail] of the massless pelvis and the legs (from the
// downward vertical), unit point masses at the leg midpoints,
// J_n,i = [0, 1, l sin θ_i], J_t,i = [1, 0, l cos θ_i] (in θ_i's
// column). The Routh caps are drawn per contact from the sample's seed, so the
// planar sampler with the report's sample_seed (contacts in Bullet's order)
// must give the same feet velocities: this checks the free-base rows, the
// ABA metric and the seed bookkeeping at once, and it fails for a wrong base
// velocity, foot point, mass or friction.
TEST(MultiBodyImpact, CompassGaitFreeBaseMatchesPlanarRouthSamples) {
  constexpr double kLeg = 1.0, kRate = 0.25, kPhi = 78.0 * 3.14159265358979323846 / 180.0;
  constexpr double kImpactStep = 1e-4;
  // The solver resolves at mid-step: v* = v⁻ + ½ h M⁻¹(−C q̇), the
  // centripetal term ≈ m ω² l/2 ≈ 0.03 N, so ≈ 5e-6 m/s at h = 1e-4 s
  // (measured 7.2e-6 on the feet); 5e-5 m/s leaves a factor of 7. Float:
  // Bullet's state is ~1e-7 relative, far below.
  constexpr double kMidStepTolerance = 5e-5;
  // Same-seed Bullet vs planar sample: the legs' inertia ε = 1e-6 kg m² adds
  // 4e-6 relative to the θ inertia m (l/2)² = 0.25 (measured 4.6e-6 m/s over
  // 4000 seeds, 6.5e-7 with ε = 1e-8) plus the mid-step term above; 1e-4 m/s
  // is 20× that. In float, Lemke on ~1e-7-accurate data stays far inside it.
  constexpr double kSameSeedTolerance = 1e-4;
  constexpr int kSeeds = 24;
  // Planar reference.
  const double th[2] = {-kPhi, kPhi};  // lead, trail
  Eigen::Matrix4d mass = Eigen::Matrix4d::Zero();
  Eigen::MatrixXd jn = Eigen::MatrixXd::Zero(2, 4), jt = Eigen::MatrixXd::Zero(2, 4);
  for (int i = 0; i < 2; ++i) {
    Eigen::MatrixXd p = Eigen::MatrixXd::Zero(2, 4);
    p << 1, 0, 0, 0, 0, 1, 0, 0;
    p(0, 2 + i) = 0.5 * kLeg * std::cos(th[i]);
    p(1, 2 + i) = 0.5 * kLeg * std::sin(th[i]);
    mass += p.transpose() * p;
    jn(i, 1) = 1.0;
    jn(i, 2 + i) = kLeg * std::sin(th[i]);
    jt(i, 0) = 1.0;
    jt(i, 2 + i) = kLeg * std::cos(th[i]);
  }
  const Eigen::Vector4d v_minus(-kLeg * std::cos(kPhi) * kRate, -kLeg * std::sin(kPhi) * kRate, kRate, kRate);
  int matched = 0;
  for (std::uint64_t seed = 0; seed < kSeeds; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::vector<MultiBodyImpactReport> reports;
    MultiBodyWorldOptions o = options(ImpactLaw::kRouth, 0.0);
    o.config.seed = seed;
    o.config.routh.step = 0.25;
    o.config.routh.max_steps = 5;
    o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
    MultiBodyWorld world(o);
    const simpact::worlds::CompassGait gait = simpact::worlds::add_compass_gait(world);
    ASSERT_FALSE(gait.multibody->hasFixedBase());
    world.step(kImpactStep);
    ASSERT_EQ(reports.size(), 1u);
    const MultiBodyImpactReport& rep = reports[0];
    EXPECT_EQ(rep.law, simpact::bullet::AppliedLaw::kRouth);
    ASSERT_EQ(rep.contacts.size(), 2u);
    ASSERT_EQ(rep.velocity_after.size(), 7);  // [ω_base, v_base, q̇]
    // Bullet's contact order (lead foot at x = −2 l sin φ).
    const auto x_on_gait = [](const simpact::bullet::ImpactReport::Contact& c) {
      return double((btMultiBodyLinkCollider::upcast(c.a) != nullptr ? c.point_on_a : c.point_on_b).x());
    };
    const int lead = x_on_gait(rep.contacts[0]) < x_on_gait(rep.contacts[1]) ? 0 : 1;
    const auto feet = [&](const Eigen::VectorXd& v) {  // [u_n lead, u_n trail, u_t lead, u_t trail]
      const Eigen::Vector3d a = MultiBodyWorld::point_velocity(*gait.multibody, gait.lead_link, gait.lead_foot, v);
      const Eigen::Vector3d b = MultiBodyWorld::point_velocity(*gait.multibody, -1, gait.trail_foot, v);
      EXPECT_NEAR(a.z(), 0.0, kTolerance);
      EXPECT_NEAR(b.z(), 0.0, kTolerance);
      return Eigen::Vector4d(a.y(), b.y(), a.x(), b.x());
    };
    const Eigen::Vector4d before = feet(rep.velocity_before);
    const Eigen::Vector4d expected_before(-2.0 * kLeg * std::sin(kPhi) * kRate, 0.0, 0.0, 0.0);
    EXPECT_LT((before - expected_before).cwiseAbs().maxCoeff(), kMidStepTolerance) << before.transpose();
    EXPECT_NEAR(rep.contacts[static_cast<size_t>(lead)].friction, 5.0, kTolerance);
    // The planar sample with the same seed, contacts in Bullet's order.
    Eigen::MatrixXd jn_b = jn, jt_b = jt;
    if (lead == 1) {
      jn_b.row(0).swap(jn_b.row(1));
      jt_b.row(0).swap(jt_b.row(1));
    }
    const simpact::FrictionalProblem planar = simpact::FrictionalProblem::from_dense(
        mass.inverse(), jn_b, jt_b, v_minus, Eigen::Vector2d::Constant(5.0));
    simpact::RouthParameters parameters;
    parameters.step = 0.25;
    parameters.max_steps = 5;
    parameters.seed = rep.sample_seed;
    const simpact::FrictionalOutcome core = simpact::RouthSampler(planar, parameters).sample(0).outcomes.at(0);
    Eigen::Vector4d expected;
    expected << core.normal_velocities[lead], core.normal_velocities[1 - lead], core.tangential_velocities[lead],
        core.tangential_velocities[1 - lead];
    const Eigen::Vector4d after = feet(rep.velocity_after);
    const double difference = (after - expected).cwiseAbs().maxCoeff();
    EXPECT_LT(difference, kSameSeedTolerance) << "Bullet " << after.transpose() << "\nplanar " << expected.transpose();
    if (difference < kSameSeedTolerance) ++matched;
    EXPECT_GE(after.head<2>().minCoeff(), -kSameSeedTolerance);  // no foot approaches
    EXPECT_LT(rep.energy_after, rep.energy_before);
  }
  std::printf("compass gait: %d of %d seeds match the planar sample of the same seed\n", matched, kSeeds);
}

// The fixture's box links (RevoluteLink::box_half_extents, the fuzz
// harness's box_links): the link collides as a btBoxShape of exactly those
// half extents, alone or as the first child of its body's compound next to
// extra collider spheres; bad extents are refused by name.
TEST(MultiBodyWorldFixture, BoxLinksCollideAsBoxes) {
  MultiBodyWorld world(MultiBodyWorldOptions{});
  RevoluteLink link;
  link.pivot = {0, 1, 0};
  link.center = {0, 0, 0};
  link.box_half_extents = {0.05, 0.1, 0.02};
  const btMultiBody* chain = world.add_fixed_base_chain({0, 1, 0}, {link});
  const btCollisionShape* shape = chain->getLink(0).m_collider->getCollisionShape();
  ASSERT_EQ(shape->getShapeType(), BOX_SHAPE_PROXYTYPE);
  // Bullet stores h − margin and adds the margin back: one rounding of
  // btScalar at ~0.1 m (double 1.4e-17, float 7.5e-9); these bounds are a
  // few of those, far below any other size.
  const double rounding = kDouble ? 1e-16 : 3e-8;
  const btVector3 half = static_cast<const btBoxShape*>(shape)->getHalfExtentsWithMargin();
  EXPECT_NEAR(double(half.x()), 0.05, rounding);
  EXPECT_NEAR(double(half.y()), 0.1, rounding);
  EXPECT_NEAR(double(half.z()), 0.02, rounding);

  simpact::worlds::FreeBase base;
  base.center = {2, 1, 0};
  link.pivot = {2, 0.8, 0};
  link.center = {2, 0.5, 0};
  simpact::worlds::SphereCollider extra;
  extra.body = 0;
  extra.center = {2, 0.3, 0};
  extra.radius = 0.03;
  extra.restitution = link.restitution;
  extra.friction = link.friction;
  const btMultiBody* tree = world.add_free_base_tree(base, {link}, {extra});
  const btCollisionShape* compound = tree->getLink(0).m_collider->getCollisionShape();
  ASSERT_EQ(compound->getShapeType(), COMPOUND_SHAPE_PROXYTYPE);
  const btCompoundShape& children = *static_cast<const btCompoundShape*>(compound);
  ASSERT_EQ(children.getNumChildShapes(), 2);
  EXPECT_EQ(children.getChildShape(0)->getShapeType(), BOX_SHAPE_PROXYTYPE);
  EXPECT_EQ(children.getChildShape(1)->getShapeType(), SPHERE_SHAPE_PROXYTYPE);

  // The box replaces the link's own collider: without it, refused.
  link.sphere_collider = false;
  EXPECT_THROW(world.add_free_base_tree(base, {link}, {}), std::invalid_argument);
  link.sphere_collider = true;
  link.box_half_extents = {0.05, -0.1, 0.02};
  try {
    world.add_fixed_base_chain({4, 1, 0}, {link});
    ADD_FAILURE() << "a negative half extent was accepted";
  } catch (const std::invalid_argument& error) {
    EXPECT_NE(std::string(error.what()).find("box_half_extents"), std::string::npos) << error.what();
  }
}

// ── The base solver (issue #5: "also with btMultiBodyMLCPConstraintSolver as
// base") ────────────────────────────────────────────────────────────────────
constexpr MultiBodyBaseSolver kBases[] = {MultiBodyBaseSolver::kSequentialImpulse,
                                          MultiBodyBaseSolver::kMlcpDantzig,
                                          MultiBodyBaseSolver::kMlcpLemke};

// The impact phase decides the cradle whatever runs after it: (0, 0, 1) with
// each base, energy kept, one propagative impact.
TEST(MultiBodyBase, PendulumCradleWithEachBase) {
  for (const MultiBodyBaseSolver base : kBases) {
    SCOPED_TRACE(simpact::bullet::to_string(base));
    std::vector<MultiBodyImpactReport> reports;
    double before = 0.0, after = 0.0;
    int fallbacks = 0;
    const std::vector<double> rates = cradle(3, true, &reports, &before, &after, base, nullptr, &fallbacks);
    ASSERT_EQ(reports.size(), 1u);
    EXPECT_EQ(reports[0].law, simpact::bullet::AppliedLaw::kPropagative);
    EXPECT_NEAR(rates[0], 0.0, kTolerance);
    EXPECT_NEAR(rates[1], 0.0, kTolerance);
    EXPECT_NEAR(rates[2], 1.0, kTolerance);
    EXPECT_NEAR(after, before, kTolerance * before);
    std::printf("cradle 3, base %s: %.17g %.17g %.17g (MLCP fallbacks to SI iterations: %d)\n",
                simpact::bullet::to_string(base), rates[0], rates[1], rates[2], fallbacks);
  }
}

// What the test above guards against with the MLCP bases: Bullet's
// btMultiBodyMLCPConstraintSolver alone (no simpact) solves the touching
// cradle as one LCP and does not give (0, 0, 1).
TEST(MultiBodyBase, StockMlcpSolverDoesNotGiveTheCradleOutcome) {
  btDantzigSolver dantzig;
  btLemkeSolver lemke;
  for (btMLCPSolverInterface* interface : {static_cast<btMLCPSolverInterface*>(&dantzig),
                                           static_cast<btMLCPSolverInterface*>(&lemke)}) {
    const bool is_dantzig = interface == &dantzig;
    SCOPED_TRACE(is_dantzig ? "dantzig" : "lemke");
    btMultiBodyMLCPConstraintSolver mlcp(interface);
    const std::vector<double> rates = cradle(3, false, nullptr, nullptr, nullptr,
                                             MultiBodyBaseSolver::kSequentialImpulse, &mlcp);
    const double deviation = std::abs(rates[0]) + std::abs(rates[1]) + std::abs(rates[2] - 1.0);
    EXPECT_GT(deviation, 0.1) << rates[0] << " " << rates[1] << " " << rates[2];
    std::printf("stock MLCP (%s) cradle 3: %.4f %.4f %.4f (fallbacks %d)\n", is_dantzig ? "dantzig" : "lemke",
                rates[0], rates[1], rates[2], mlcp.getNumFallbacks());
  }
}

// Sustained contact stays the base solver's: a free-base ball (e = 1) and a
// horizontal two-link arm (e = 1) resting on the plane under gravity stay at
// rest for one second with each base; no contact is ever an impact
// (detection on the pre-force velocity, which is zero).
TEST(MultiBodyBase, RestingContactsStayAtRestWithEachBase) {
  // Each step gravity adds g·h ≈ 0.041 m/s, which the base solver removes;
  // what is left is its per-step residual (push-out of the small
  // gravity-induced overlap, solver convergence): measured ≤ 3e-4 rad/s on
  // the arm's joints (0.5 m lever: ≤ 1.5e-4 m/s) and 0 on the ball with
  // every base. 1e-2 is 30× that and 4× below one step of free fall
  // (0.041 m/s): a base that dropped the sustained contact fails it.
  constexpr double kRestSpeed = 1e-2;
  constexpr int kSteps = 240;
  for (const MultiBodyBaseSolver base : kBases) {
    SCOPED_TRACE(simpact::bullet::to_string(base));
    std::vector<MultiBodyImpactReport> reports;
    MultiBodyWorldOptions o = options();
    o.config.base = base;
    o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
    MultiBodyWorld world(o);
    btMultiBody* arm = add_arm(world, 1.0, 0.5, Eigen::Vector2d::Zero());
    const simpact::worlds::FreeBase ball_base = ball_base_at({3.0, 0.1 - Arm::kR, 0.0});  // on the arm's plane y = −r
    btMultiBody* ball = world.add_free_base_tree(ball_base, {}, {{-1, ball_base.center, 0.1, 1.0, 0.5}});
    double max_rate = 0.0, max_speed = 0.0, min_height = 1e9, max_height = -1e9;
    for (int k = 0; k < kSteps; ++k) {
      world.step(kStep);
      max_rate = std::max({max_rate, std::abs(MultiBodyWorld::joint_velocity(*arm, 0)),
                           std::abs(MultiBodyWorld::joint_velocity(*arm, 1))});
      max_speed = std::max(max_speed, MultiBodyWorld::link_velocity(*ball, -1).norm());
      const double y = double(ball->getBasePos().y());
      min_height = std::min(min_height, y);
      max_height = std::max(max_height, y);
    }
    EXPECT_TRUE(reports.empty());
    EXPECT_EQ(world.impact_solver()->stats().impacts, 0);
    EXPECT_LT(max_rate, kRestSpeed);
    EXPECT_LT(max_speed, kRestSpeed);
    EXPECT_LT(max_height - ball_base.center.y(), kRestSpeed * kStep * kSteps);
    const auto* mlcp = dynamic_cast<const btMultiBodyMLCPConstraintSolver*>(&world.impact_solver()->base_solver());
    std::printf("resting, base %s: max |q̇| %.3g rad/s, max |v| ball %.3g m/s, ball height %.6f..%.6f, "
                "MLCP fallbacks %d of %d steps\n",
                simpact::bullet::to_string(base), max_rate, max_speed, min_height, max_height,
                mlcp != nullptr ? mlcp->getNumFallbacks() : 0, kSteps);
  }
}

// The sustained threshold (ImpactSettings::sustained_threshold) in the
// multibody adapter, with each base: every base writes the resting ball's
// normal impulse back into its manifold (the load the rule reads), so a
// downward push of |g|h on the resting free-base ball (e = 1, above the
// impact threshold |g|h/4, below the sustained 2|g|h) stays sustained
// contact — unless the distinction is off (sustained_threshold 0), when it
// is an elastic impact — and a push of 1 m/s is an impact either way.
TEST(MultiBodyBase, LoadedContactsStrikeOnlyAboveTheSustainedThreshold) {
  const double gh = kGravity * kStep;
  for (const MultiBodyBaseSolver base : kBases) {
    SCOPED_TRACE(simpact::bullet::to_string(base));
    const auto pushed = [&](double speed, double sustained_threshold) {
      std::vector<MultiBodyImpactReport> reports;
      MultiBodyWorldOptions o = options();
      o.config.base = base;
      o.config.sustained_threshold = sustained_threshold;
      o.config.on_impact = [&](const MultiBodyImpactReport& r) { reports.push_back(r); };
      MultiBodyWorld world(o);
      world.add_plane({0, 1, 0}, 0.0, 1.0, 0.0);
      const simpact::worlds::FreeBase ball_base = ball_base_at({0.0, 0.1, 0.0});
      btMultiBody* ball = world.add_free_base_tree(ball_base, {}, {{-1, ball_base.center, 0.1, 1.0, 0.0}});
      for (int k = 0; k < 60; ++k) world.step(kStep);
      EXPECT_TRUE(reports.empty()) << "the ball rests";
      btDispatcher& dispatcher = *world.dynamics_world().getDispatcher();
      double load = 0.0;
      for (int k = 0; k < dispatcher.getNumManifolds(); ++k) {
        const btPersistentManifold* manifold = dispatcher.getManifoldByIndexInternal(k);
        for (int c = 0; c < manifold->getNumContacts(); ++c)
          load += double(manifold->getContactPoint(c).m_appliedImpulse);
      }
      EXPECT_GT(load, 0.0) << "the base solver wrote the ball's load into its manifold";
      ball->setBaseVel(btVector3(0, btScalar(-speed), 0));
      world.step(kStep);
      return reports.size();
    };
    EXPECT_EQ(pushed(gh, -1.0), 0u);
    EXPECT_EQ(pushed(gh, 0.0), 1u);
    EXPECT_EQ(pushed(1.0, -1.0), 1u);
  }
}

// The base's kind, ownership and the world-facing solver type.
TEST(MultiBodyBase, BaseKindIsOwnedAndSwitchable) {
  MultiBodyWorldOptions stock;
  stock.simpact = false;
  MultiBodyWorld host(stock);
  simpact::bullet::MultiBodyImpactSolver solver(host.dynamics_world());
  EXPECT_EQ(solver.base_solver().getSolverType(), BT_SEQUENTIAL_IMPULSE_SOLVER);
  EXPECT_EQ(dynamic_cast<btMultiBodyMLCPConstraintSolver*>(&solver.base_solver()), nullptr);
  MultiBodyImpactSolverConfig config;
  config.base = MultiBodyBaseSolver::kMlcpLemke;
  solver.set_config(config);
  EXPECT_EQ(solver.base_solver().getSolverType(), BT_MLCP_SOLVER);
  EXPECT_NE(dynamic_cast<btMultiBodyMLCPConstraintSolver*>(&solver.base_solver()), nullptr);
  // The adapter's own type is btMultiBodyConstraintSolver's, whatever the base.
  EXPECT_EQ(solver.getSolverType(), BT_SEQUENTIAL_IMPULSE_SOLVER);
  for (const MultiBodyBaseSolver base : kBases)
    EXPECT_EQ(simpact::bullet::parse_multibody_base_solver(simpact::bullet::to_string(base)), base);
  EXPECT_THROW(simpact::bullet::parse_multibody_base_solver("pgs"), std::invalid_argument);
}

TEST(MultiBodyBase, BadBaseKindNamesTheField) {
  MultiBodyImpactSolverConfig config;
  config.base = static_cast<MultiBodyBaseSolver>(7);
  MultiBodyWorldOptions stock;
  stock.simpact = false;
  MultiBodyWorld host(stock);
  try {
    simpact::bullet::MultiBodyImpactSolver solver(host.dynamics_world(), config);
    FAIL() << "base 7 accepted";
  } catch (const std::invalid_argument& e) {
    EXPECT_NE(std::string(e.what()).find("base"), std::string::npos) << e.what();
  }
  simpact::bullet::MultiBodyImpactSolver solver(host.dynamics_world());
  EXPECT_THROW(solver.set_config(config), std::invalid_argument);
  EXPECT_EQ(solver.config().base, MultiBodyBaseSolver::kSequentialImpulse);  // old config kept
}

}  // namespace
