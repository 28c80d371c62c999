// The README's Bullet snippets, extracted from README.md at build time
// (cmake/ExtractReadmeSnippets.cmake) and compiled here inside test
// bodies, then run: a README edit that breaks them fails this test's
// build, and a snippet that stops doing what the README says fails it.
// The headers a snippet includes are included first at file scope, so
// its own #include lines expand to nothing inside the function; a snippet
// that starts using a new header needs it added here.
#include <btBulletDynamicsCommon.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraintSolver.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <simpact/bullet/impact_solver.h>
#include <simpact/bullet/multibody_impact_solver.h>

#include <gtest/gtest.h>

#include <cstdio>
#include <memory>
#include <vector>

namespace {

/// Velocities after the snippet's world resolved a struck row: double
/// rounding 1e-9, float 2e-6 (btScalar rounding; see scenario_test).
const double kTolerance = sizeof(btScalar) == sizeof(double) ? 1e-9 : 2e-6;

// "Putting simpact into a Bullet world": the snippet builds the world and
// steps it once; two touching balls and a striker on a line then resolve
// to (0, 0, 1).
TEST(ReadmeSnippet, RigidSwapsInTheSolver) {
#include "readme_rigid.inc"
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
  EXPECT_EQ(solver.stats().impacts, 1);
  EXPECT_NEAR(balls[0]->getLinearVelocity().x(), 0.0, kTolerance);
  EXPECT_NEAR(balls[1]->getLinearVelocity().x(), 0.0, kTolerance);
  EXPECT_NEAR(balls[2]->getLinearVelocity().x(), 1.0, kTolerance);
  for (auto& b : balls) world.removeRigidBody(b.get());
}

// "Featherstone multibodies": what the snippet takes from the rigid one
// (dispatcher, broadphase, collision_config) and its `stock` multibody
// solver are set up first; a free-base ball then bounces elastically off a
// static plane through the installed solver.
TEST(ReadmeSnippet, MultibodyInstallsTheSolver) {
  btDefaultCollisionConfiguration collision_config;
  btCollisionDispatcher dispatcher(&collision_config);
  btDbvtBroadphase broadphase;
  btMultiBodyConstraintSolver stock;
  {
#include "readme_multibody.inc"
    EXPECT_EQ(world.getConstraintSolver(), &solver);
    world.setGravity(btVector3(0, 0, 0));
    btStaticPlaneShape plane(btVector3(0, 1, 0), 0);
    btRigidBody::btRigidBodyConstructionInfo ground_info(0, nullptr, &plane);
    ground_info.m_restitution = 1;
    ground_info.m_friction = 0;
    btRigidBody ground(ground_info);
    world.addRigidBody(&ground);
    btSphereShape sphere(0.1);
    btVector3 inertia;
    sphere.calculateLocalInertia(1, inertia);
    auto ball = std::make_unique<btMultiBody>(0, btScalar(1), inertia, false, false);
    ball->setBaseWorldTransform(btTransform(btQuaternion::getIdentity(), btVector3(0, btScalar(0.1), 0)));
    ball->finalizeMultiDof();
    ball->setLinearDamping(0);
    ball->setAngularDamping(0);
    ball->setCanSleep(false);
    ball->setBaseVel(btVector3(btScalar(0.3), -1, 0));
    world.addMultiBody(ball.get());
    auto collider = std::make_unique<btMultiBodyLinkCollider>(ball.get(), -1);
    collider->setCollisionShape(&sphere);
    collider->setWorldTransform(ball->getBaseWorldTransform());
    collider->setRestitution(1);
    collider->setFriction(0);
    world.addCollisionObject(collider.get(), btBroadphaseProxy::DefaultFilter, btBroadphaseProxy::AllFilter);
    ball->setBaseCollider(collider.get());
    world.stepSimulation(btScalar(1.0 / 240.0), 1, btScalar(1.0 / 240.0));
    EXPECT_EQ(solver.stats().impacts, 1);
    EXPECT_NEAR(double(ball->getBaseVel().x()), 0.3, kTolerance);
    EXPECT_NEAR(double(ball->getBaseVel().y()), 1.0, kTolerance);
    world.removeCollisionObject(collider.get());
    world.removeMultiBody(ball.get());
    world.removeRigidBody(&ground);
  }
}

}  // namespace
