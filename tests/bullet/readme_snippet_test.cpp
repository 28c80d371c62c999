// The README's "Putting simpact into a Bullet world" snippet, compiled and
// run, so the documented lines stay true to the API: two touching balls and a
// striker on a line resolve to (0, 0, 1).
#include <btBulletDynamicsCommon.h>
#include <simpact/bullet/impact_solver.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace {

TEST(ReadmeSnippet, SwapsInTheSolver) {
  // --- as in README.md ---
  btDefaultCollisionConfiguration config;
  btCollisionDispatcher dispatcher(&config);
  btDbvtBroadphase broadphase;
  btSequentialImpulseConstraintSolver stock;
  simpact::bullet::ImpactSolverConfig impacts;
  int reported = 0;
  impacts.on_impact = [&](const simpact::bullet::ImpactReport& r) {
    std::printf("impact: %zu contacts, energy %g -> %g\n", r.contacts.size(), r.energy_before,
                r.energy_after);
    ++reported;
  };
  simpact::bullet::ImpactSolver solver(&stock, impacts);
  btDiscreteDynamicsWorld world(&dispatcher, &broadphase, &solver, &config);
  // --- end of the README lines ---
  world.setGravity(btVector3(0, 0, 0));
  btSphereShape shape(0.1);
  std::vector<std::unique_ptr<btRigidBody>> balls;
  for (int i = 0; i < 3; ++i) {
    btVector3 inertia;
    shape.calculateLocalInertia(1.0, inertia);
    btRigidBody::btRigidBodyConstructionInfo info(1.0, nullptr, &shape, inertia);
    info.m_startWorldTransform.setOrigin(btVector3(btScalar(0.2 * i), 0, 0));
    info.m_restitution = 1.0;
    info.m_friction = 0.0;
    balls.push_back(std::make_unique<btRigidBody>(info));
    balls.back()->setLinearFactor(btVector3(1, 0, 0));
    balls.back()->setAngularFactor(btVector3(0, 0, 0));
    world.addRigidBody(balls.back().get());
  }
  balls[0]->setLinearVelocity(btVector3(1, 0, 0));
  for (int k = 0; k < 24; ++k) world.stepSimulation(btScalar(1.0 / 240.0), 1, btScalar(1.0 / 240.0));
  EXPECT_GE(reported, 1);
  // Tolerance: double 1e-9, float 2e-6 (btScalar rounding; see scenario_test).
  const double tolerance = sizeof(btScalar) == sizeof(double) ? 1e-9 : 2e-6;
  EXPECT_NEAR(balls[0]->getLinearVelocity().x(), 0.0, tolerance);
  EXPECT_NEAR(balls[1]->getLinearVelocity().x(), 0.0, tolerance);
  EXPECT_NEAR(balls[2]->getLinearVelocity().x(), 1.0, tolerance);
  for (auto& b : balls) world.removeRigidBody(b.get());
}

}  // namespace
