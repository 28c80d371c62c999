// What ImpactSolver leaves in Bullet's state after solveGroup, called
// directly on a hand-made manifold: the points it hides from the base
// solver come back, at their own indices, with their restitution.
#include <simpact/bullet/impact_solver.h>

#include <btBulletDynamicsCommon.h>

#include <gtest/gtest.h>

#include <memory>

namespace {

using simpact::bullet::ImpactSolver;
using simpact::bullet::ImpactSolverConfig;

// A unit sphere falling at 1 m/s onto a static body, with two points in
// one manifold: point 0 under it (normal +y, approaching), point 1 at its
// side (normal +x, touching, not moving along x). The elastic impact sends
// point 0 apart at 1 m/s (hidden from the base solver) and leaves point 1
// where it was (visible), so hiding point 0 swaps it behind point 1.
struct SphereOnTwoFaces {
  btSphereShape sphere{1};
  btBoxShape ground{btVector3(10, 1, 10)};
  std::unique_ptr<btRigidBody> ball, floor;
  btPersistentManifold manifold;

  SphereOnTwoFaces() {
    btRigidBody::btRigidBodyConstructionInfo ball_info(1, nullptr, &sphere, btVector3(0.4, 0.4, 0.4));
    ball = std::make_unique<btRigidBody>(ball_info);
    ball->setLinearVelocity(btVector3(0, -1, 0));
    btRigidBody::btRigidBodyConstructionInfo floor_info(0, nullptr, &ground);
    floor = std::make_unique<btRigidBody>(floor_info);
    manifold = btPersistentManifold(ball.get(), floor.get(), 0, btScalar(0.02), btScalar(0.02));
    add_point(btVector3(0, -1, 0), btVector3(0, 1, 0));   // under the ball
    add_point(btVector3(-1, 0, 0), btVector3(1, 0, 0));   // at its side
  }
  void add_point(const btVector3& on_ball, const btVector3& normal_on_floor) {
    btManifoldPoint point(on_ball, on_ball, normal_on_floor, 0);
    point.m_positionWorldOnA = on_ball;
    point.m_positionWorldOnB = on_ball;
    point.m_combinedRestitution = 1;
    point.m_combinedFriction = 0;
    manifold.addManifoldPoint(point);
  }
};

TEST(SolverHandOff, HiddenPointsComeBackInTheirOrderWithTheirRestitution) {
  SphereOnTwoFaces scene;
  ASSERT_EQ(scene.manifold.getNumContacts(), 2);
  btSequentialImpulseConstraintSolver base;
  ImpactSolverConfig config;
  int impacts = 0;
  config.on_impact = [&](const simpact::bullet::ImpactReport&) { ++impacts; };
  ImpactSolver solver(&base, config);
  btContactSolverInfo info;
  info.m_timeStep = btScalar(1.0 / 60.0);
  btCollisionObject* bodies[] = {scene.ball.get()};
  btPersistentManifold* manifolds[] = {&scene.manifold};
  solver.solveGroup(bodies, 1, manifolds, 1, nullptr, 0, info, nullptr, nullptr);
  EXPECT_EQ(impacts, 1);
  // The impact reflected the approach (the resting side point takes nothing).
  EXPECT_NEAR(double(scene.ball->getLinearVelocity().y()), 1.0, 1e-9);
  ASSERT_EQ(scene.manifold.getNumContacts(), 2);
  EXPECT_EQ(scene.manifold.getContactPoint(0).m_normalWorldOnB, btVector3(0, 1, 0))
      << "the hidden point must be back at index 0";
  EXPECT_EQ(scene.manifold.getContactPoint(1).m_normalWorldOnB, btVector3(1, 0, 0));
  EXPECT_EQ(scene.manifold.getContactPoint(0).m_combinedRestitution, btScalar(1));
  EXPECT_EQ(scene.manifold.getContactPoint(1).m_combinedRestitution, btScalar(1));
}

}  // namespace
