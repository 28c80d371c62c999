// Bilateral joint rows G of Bullet constraints and the joint-constrained
// inverse inertia M⁻¹_G (plugin/src/bullet/joint_rows.h). Admissible
// velocities are built independently from the joint geometry (rigid motion,
// rotation about a pivot or an axis, sliding along an axis); closed forms for
// pinned bodies and the pendulum come from the parallel-axis theorem.
#include "bullet/joint_rows.h"

#include <simpact/impact_problem.h>

#include <BulletCollision/CollisionShapes/btBoxShape.h>
#include <BulletCollision/CollisionShapes/btSphereShape.h>
#include <BulletDynamics/ConstraintSolver/btContactSolverInfo.h>
#include <BulletDynamics/ConstraintSolver/btFixedConstraint.h>
#include <BulletDynamics/ConstraintSolver/btGeneric6DofSpring2Constraint.h>
#include <BulletDynamics/ConstraintSolver/btHingeConstraint.h>
#include <BulletDynamics/ConstraintSolver/btPoint2PointConstraint.h>
#include <BulletDynamics/ConstraintSolver/btSliderConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <gtest/gtest.h>

#include <Eigen/Eigenvalues>
#include <Eigen/LU>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace simpact::bullet::internal {
namespace {

using Mat = Eigen::MatrixXd;
using Vec = Eigen::VectorXd;
using Vec3 = Eigen::Vector3d;
using Mat3 = Eigen::Matrix3d;

/// Machine epsilon of the precision Bullet was built with.
constexpr double kBulletEpsilon = std::numeric_limits<btScalar>::epsilon();
/// Bullet forms each row coefficient in btScalar from unit axes and lever
/// arms of ~1 m in a handful of operations, so G v for an exactly admissible
/// v is a few ε(btScalar) of |g||v|; 64 ε leaves a wide margin.
constexpr double kRowRounding = 64 * kBulletEpsilon;
/// Violating velocities have a constrained component comparable to their
/// admissible part, so |g·v|/(|g||v|) is O(0.1–1) for some row: 1e-2 is far
/// above rounding in either precision and well below any real violation.
constexpr double kViolationFloor = 1e-2;
/// M⁻¹_G is computed in double; rows redundant only up to btScalar rounding
/// (kJointRankTolerance) leave a residual of that rounding, ~ε(btScalar),
/// otherwise ~1e-15. 64 ε(btScalar) + 1e-12 covers both with margin.
constexpr double kProjectionResidual = 64 * kBulletEpsilon + 1e-12;
/// Closed forms are evaluated in double from the same btScalar transforms
/// that Bullet rounded its rows from; the pivot and lever arms then agree to
/// a few ε(btScalar), amplified by the inertia ratios (≤ ~50 here); measured
/// ≤ 11 ε in both precisions.
constexpr double kClosedForm = 256 * kBulletEpsilon;
/// An eigenvalue of M⁻¹_G above this × max|M⁻¹| is a mobility. The
/// four-bar's genuine mode is 2e-3 of max|M⁻¹| (thin links); rounding noise
/// is ~1e-16 of it, amplified by Λ^{-1/2} ≤ 1e4 for eigenpairs just above
/// kJointRankTolerance: ≲ 1e-11.
constexpr double kMobileEigenvalue = 1e-6;
/// Impulse rows drawn for the projection property per scene.
constexpr int kRandomImpulses = 20;
constexpr double kTimeStep = 1.0 / 60.0;

Vec3 to_eigen(const btVector3& v) { return Vec3(v.x(), v.y(), v.z()); }
btVector3 to_bt(const Vec3& v) {
  return btVector3(static_cast<btScalar>(v.x()), static_cast<btScalar>(v.y()),
                   static_cast<btScalar>(v.z()));
}
Mat3 to_eigen(const btMatrix3x3& m) {
  Mat3 out;
  for (int i = 0; i < 3; ++i)
    for (int j = 0; j < 3; ++j) out(i, j) = m[i][j];
  return out;
}
Mat3 skew(const Vec3& a) {
  Mat3 s;
  s << 0, -a.z(), a.y(), a.z(), 0, -a.x(), -a.y(), a.x(), 0;
  return s;
}
btTransform pose(const Vec3& axis, double angle, const Vec3& origin) {
  return btTransform(btQuaternion(to_bt(axis.normalized()), static_cast<btScalar>(angle)),
                     to_bt(origin));
}

/// Bodies, constraints and the cluster (an ordered subset of the bodies).
class Scene {
 public:
  btRigidBody* box(double mass, const Vec3& half_extents, const btTransform& transform,
                   bool in_cluster = true) {
    shapes_.push_back(std::make_unique<btBoxShape>(to_bt(half_extents)));
    return body(mass, transform, in_cluster);
  }
  btRigidBody* sphere(double mass, double radius, const btTransform& transform,
                      bool in_cluster = true) {
    shapes_.push_back(std::make_unique<btSphereShape>(static_cast<btScalar>(radius)));
    return body(mass, transform, in_cluster);
  }
  template <class Constraint, class... Args>
  Constraint* add(Args&&... args) {
    auto constraint = std::make_unique<Constraint>(std::forward<Args>(args)...);
    Constraint* raw = constraint.get();
    constraints_.push_back(std::move(constraint));
    return raw;
  }

  int index(const btRigidBody* body) const {
    const auto it = std::find(cluster_.begin(), cluster_.end(), body);
    return it == cluster_.end() ? -1 : static_cast<int>(it - cluster_.begin());
  }
  int bodies() const { return static_cast<int>(cluster_.size()); }
  int dofs() const { return 6 * bodies(); }

  Mat inverse_mass() const {
    Mat m = Mat::Zero(dofs(), dofs());
    for (int b = 0; b < bodies(); ++b) m.block<6, 6>(6 * b, 6 * b) = body_inverse_mass(*cluster_[b]);
    return m;
  }
  Mat rows(int* appended = nullptr) {
    btContactSolverInfo info;
    info.m_timeStep = static_cast<btScalar>(kTimeStep);
    std::vector<btTypedConstraint*> list;
    for (auto& c : constraints_) list.push_back(c.get());
    Mat g;
    const int n = append_bilateral_joint_rows(
        list.data(), static_cast<int>(list.size()),
        [this](const btRigidBody* b) { return index(b); }, bodies(), info, g);
    if (appended) *appended = n;
    return g;
  }
  /// Stacks body velocities given per cluster body.
  Vec velocity(const std::vector<std::pair<Vec3, Vec3>>& per_body) const {
    Vec v(dofs());
    for (int b = 0; b < bodies(); ++b) v.segment<6>(6 * b) << per_body[b].first, per_body[b].second;
    return v;
  }

 private:
  btRigidBody* body(double mass, const btTransform& transform, bool in_cluster) {
    btVector3 inertia(0, 0, 0);
    if (mass > 0) shapes_.back()->calculateLocalInertia(static_cast<btScalar>(mass), inertia);
    btRigidBody::btRigidBodyConstructionInfo ci(static_cast<btScalar>(mass), nullptr,
                                                shapes_.back().get(), inertia);
    ci.m_startWorldTransform = transform;
    bodies_.push_back(std::make_unique<btRigidBody>(ci));
    btRigidBody* raw = bodies_.back().get();
    if (in_cluster) cluster_.push_back(raw);
    return raw;
  }

  // Declaration order = reverse destruction order: constraints go first.
  std::vector<std::unique_ptr<btCollisionShape>> shapes_;
  std::vector<std::unique_ptr<btRigidBody>> bodies_;
  std::vector<std::unique_ptr<btTypedConstraint>> constraints_;
  std::vector<btRigidBody*> cluster_;
};

Vec3 centre(const btRigidBody* b) { return to_eigen(b->getCenterOfMassPosition()); }
Vec3 world_point(const btRigidBody* b, const btVector3& local) {
  return to_eigen(b->getCenterOfMassTransform() * local);
}

/// max_i |g_i·v| / (|g_i| |v|).
double relative_residual(const Mat& g, const Vec& v) {
  double worst = 0.0;
  for (Eigen::Index i = 0; i < g.rows(); ++i)
    worst = std::max(worst, std::abs(g.row(i).dot(v)) / (g.row(i).norm() * v.norm()));
  return worst;
}

/// Inverse inertia of one body pinned at `pivot` (all rotations about it):
/// [v; ω] = T ω with T = [skew(a); I], a = pivot − c, and I_p the inertia
/// about the pivot (parallel axis): M⁻¹_G = T I_p⁻¹ Tᵀ.
Mat pinned_inverse_mass(const btRigidBody* body, const Vec3& pivot) {
  const Vec3 a = pivot - centre(body);
  const double mass = 1.0 / body->getInvMass();
  const Mat3 inertia = to_eigen(body->getInvInertiaTensorWorld()).inverse();
  const Mat3 inertia_pivot = inertia + mass * (a.squaredNorm() * Mat3::Identity() - a * a.transpose());
  Eigen::Matrix<double, 6, 3> t;
  t << skew(a), Mat3::Identity();
  return t * inertia_pivot.inverse() * t.transpose();
}

/// Same with rotation about one axis through the pivot only (a hinge).
Mat hinged_inverse_mass(const btRigidBody* body, const Vec3& pivot, const Vec3& axis) {
  const Vec3 a = pivot - centre(body);
  const double mass = 1.0 / body->getInvMass();
  const Mat3 inertia = to_eigen(body->getInvInertiaTensorWorld()).inverse();
  const Mat3 inertia_pivot = inertia + mass * (a.squaredNorm() * Mat3::Identity() - a * a.transpose());
  Eigen::Matrix<double, 6, 1> t;
  t << a.cross(axis), axis;
  return t * t.transpose() / axis.dot(inertia_pivot * axis);
}

double max_abs(const Mat& m) { return m.cwiseAbs().maxCoeff(); }

// ── Scenes ───────────────────────────────────────────────────────────────────
// Boxes with unequal extents and tilted poses so that every inertia is
// anisotropic and no axis is aligned with the world.

const Vec3 kHalfA(0.3, 0.2, 0.1);
const Vec3 kHalfB(0.15, 0.25, 0.2);
const Vec3 kPivot(0.1, 2.2, 0.3);
const Vec3 kAxis = Vec3(0.3, -0.5, 0.8).normalized();
const btTransform kPoseA = pose(Vec3(1, 2, 3), 0.7, Vec3(0.4, 1.5, -0.2));
const btTransform kPoseB = pose(Vec3(-2, 1, 0.5), 1.1, Vec3(-0.3, 2.6, 0.6));

/// A frame at the pivot whose x axis is kAxis (slider axis, 6-DOF frame).
btTransform pivot_frame() {
  const Vec3 x = kAxis;
  const Vec3 y = x.unitOrthogonal();
  const Vec3 z = x.cross(y);
  Mat3 r;
  r << x, y, z;
  const btMatrix3x3 basis(static_cast<btScalar>(r(0, 0)), static_cast<btScalar>(r(0, 1)),
                          static_cast<btScalar>(r(0, 2)), static_cast<btScalar>(r(1, 0)),
                          static_cast<btScalar>(r(1, 1)), static_cast<btScalar>(r(1, 2)),
                          static_cast<btScalar>(r(2, 0)), static_cast<btScalar>(r(2, 1)),
                          static_cast<btScalar>(r(2, 2)));
  return btTransform(basis, to_bt(kPivot));
}

struct Pair {
  btRigidBody* a;
  btRigidBody* b;
};
Pair two_boxes(Scene& s) { return {s.box(2.0, kHalfA, kPoseA), s.box(1.5, kHalfB, kPoseB)}; }

/// Velocities of two bodies where B moves relative to A by a rotation
/// `relative_spin` about the line through `pivot` plus a translation
/// `relative_slide` of that point (A arbitrary).
Vec relative_motion(const Scene& s, const Pair& p, const Vec3& pivot, const Vec3& relative_spin,
                    const Vec3& relative_slide) {
  const Vec3 v_a(0.4, -0.7, 1.1), w_a(-0.9, 0.5, 0.3);
  const Vec3 w_b = w_a + relative_spin;
  const Vec3 at_pivot = v_a + w_a.cross(pivot - centre(p.a)) + relative_slide;
  const Vec3 v_b = at_pivot + w_b.cross(centre(p.b) - pivot);
  return s.velocity({{v_a, w_a}, {v_b, w_b}});
}

// ── (a) admissible velocities give G v ≈ 0, violating ones do not ─────────────

TEST(JointRows, PointToPointToWorldAdmitsRotationAboutPivot) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  s.add<btPoint2PointConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
  int appended = 0;
  const Mat g = s.rows(&appended);
  ASSERT_EQ(appended, 3);
  ASSERT_EQ(g.rows(), 3);
  ASSERT_EQ(g.cols(), 6);
  const Vec3 w(0.3, -1.2, 0.8);
  const Vec swing = s.velocity({{w.cross(centre(a) - kPivot), w}});
  EXPECT_LE(relative_residual(g, swing), kRowRounding);
  Vec drift = swing;
  drift.head<3>() += Vec3(0.5, 0, 0);
  EXPECT_GE(relative_residual(g, drift), kViolationFloor);
}

TEST(JointRows, PointToPointBetweenBodiesCarriesBSign) {
  Scene s;
  const Pair p = two_boxes(s);
  s.add<btPoint2PointConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                 p.b->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 3);
  // Row velocity = pivot velocity on A − pivot velocity on B.
  EXPECT_TRUE((g.block<3, 3>(0, 0).isApprox(Mat3::Identity())));
  EXPECT_TRUE((g.block<3, 3>(0, 6).isApprox(-Mat3::Identity())));
  EXPECT_LE((g.block<3, 3>(0, 3) - skew(kPivot - centre(p.a)).transpose()).cwiseAbs().maxCoeff(),
            kClosedForm);
  EXPECT_LE((g.block<3, 3>(0, 9) + skew(kPivot - centre(p.b)).transpose()).cwiseAbs().maxCoeff(),
            kClosedForm);
  const Vec ok = relative_motion(s, p, kPivot, Vec3(1.3, -0.4, 0.6), Vec3::Zero());
  EXPECT_LE(relative_residual(g, ok), kRowRounding);
  const Vec bad = relative_motion(s, p, kPivot, Vec3(1.3, -0.4, 0.6), Vec3(0, 0.3, 0));
  EXPECT_GE(relative_residual(g, bad), kViolationFloor);
}

TEST(JointRows, PointToPointFromStaticBodyUsesOnlyTheDynamicColumns) {
  Scene s;
  btRigidBody* ground = s.box(0.0, kHalfA, kPoseA, /*in_cluster=*/false);
  btRigidBody* b = s.box(1.5, kHalfB, kPoseB);
  s.add<btPoint2PointConstraint>(*ground, *b, ground->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                 b->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 3);
  ASSERT_EQ(g.cols(), 6);
  const Vec3 w(-0.6, 0.2, 1.4);
  EXPECT_LE(relative_residual(g, s.velocity({{w.cross(centre(b) - kPivot), w}})), kRowRounding);
  EXPECT_GE(relative_residual(g, s.velocity({{Vec3(0, 0, 1), Vec3::Zero()}})), kViolationFloor);
  EXPECT_LE(max_abs(constrained_inverse_mass(s.inverse_mass(), g) - pinned_inverse_mass(b, kPivot)),
            kClosedForm * max_abs(s.inverse_mass()));
}

TEST(JointRows, HingeBetweenBodiesAdmitsRotationAboutItsAxis) {
  Scene s;
  const Pair p = two_boxes(s);
  const btMatrix3x3 ra = p.a->getCenterOfMassTransform().getBasis();
  const btMatrix3x3 rb = p.b->getCenterOfMassTransform().getBasis();
  s.add<btHingeConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                           p.b->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                           ra.transpose() * to_bt(kAxis), rb.transpose() * to_bt(kAxis));
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 5);
  EXPECT_LE(relative_residual(g, relative_motion(s, p, kPivot, 1.7 * kAxis, Vec3::Zero())),
            kRowRounding);
  const Vec3 across = kAxis.unitOrthogonal();
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, 0.8 * across, Vec3::Zero())),
            kViolationFloor);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), 0.4 * kAxis)),
            kViolationFloor);
}

TEST(JointRows, HingeToWorldMatchesClosedFormAndIgnoresLimitAndMotorRows) {
  for (const char* variant : {"free", "limit", "motor"}) {
    SCOPED_TRACE(variant);
    Scene s;
    btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
    const btMatrix3x3 ra = a->getCenterOfMassTransform().getBasis();
    auto* hinge = s.add<btHingeConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                           ra.transpose() * to_bt(kAxis));
    if (std::string(variant) == "limit") hinge->setLimit(0.5, 1.0);  // angle 0: below the range
    if (std::string(variant) == "motor") hinge->enableAngularMotor(true, 2.0, 10.0);
    btTypedConstraint::btConstraintInfo1 info1;
    hinge->getInfo1(&info1);
    EXPECT_EQ(info1.m_numConstraintRows, std::string(variant) == "free" ? 5 : 6);
    const Mat g = s.rows();
    ASSERT_EQ(g.rows(), 5);  // the limit / motor row has finite bounds
    const Vec3 w = 2.1 * kAxis;
    if (std::string(variant) != "limit") {
      // With a static partner and an active limit Bullet drops lever arms
      // (JointRows.HingeAtLimitOnWorld…): the swing is not admissible then.
      EXPECT_LE(relative_residual(g, s.velocity({{w.cross(centre(a) - kPivot), w}})), kRowRounding);
      EXPECT_LE(max_abs(constrained_inverse_mass(s.inverse_mass(), g) -
                        hinged_inverse_mass(a, kPivot, kAxis)),
                kClosedForm * max_abs(s.inverse_mass()));
    }
  }
}

/// Characterization of Bullet 3.24 (btHingeConstraint::getInfo2InternalUsing-
/// FrameOffset): with a static/fixed partner and the limit active, the
/// linear rows along q = axis × p and along the axis lose their angular part
/// on the dynamic body, so the bilateral rows admit a spin about the axis
/// through the centre of mass instead of the swing about the pivot. G
/// reproduces what the base solver will enforce in that state; if this starts
/// failing, Bullet changed its hinge rows.
TEST(JointRows, HingeAtLimitOnWorldAdmitsSpinAboutCentreAsBulletDoes) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  const btMatrix3x3 ra = a->getCenterOfMassTransform().getBasis();
  auto* hinge = s.add<btHingeConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                         ra.transpose() * to_bt(kAxis));
  hinge->setLimit(0.5, 1.0);
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 5);
  const Vec3 w = 2.1 * kAxis;
  EXPECT_GE(relative_residual(g, s.velocity({{w.cross(centre(a) - kPivot), w}})), kViolationFloor);
  EXPECT_LE(relative_residual(g, s.velocity({{Vec3::Zero(), w}})), kRowRounding);
  // The one mobility left is that spin: M⁻¹_G = t tᵀ / (aᵀ I_c a), t = [0; a].
  Eigen::Matrix<double, 6, 1> t;
  t << Vec3::Zero(), kAxis;
  const Mat3 inertia = to_eigen(a->getInvInertiaTensorWorld()).inverse();
  const Mat expected = t * t.transpose() / kAxis.dot(inertia * kAxis);
  const Mat m = s.inverse_mass();
  EXPECT_LE(max_abs(constrained_inverse_mass(m, g) - expected), kClosedForm * max_abs(m));
}

TEST(JointRows, FixedConstraintAdmitsOnlyRigidMotion) {
  Scene s;
  const Pair p = two_boxes(s);
  const btTransform frame = pivot_frame();
  s.add<btFixedConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * frame,
                           p.b->getCenterOfMassTransform().inverse() * frame);
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 6);
  EXPECT_LE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), Vec3::Zero())),
            kRowRounding);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, 0.9 * kAxis, Vec3::Zero())),
            kViolationFloor);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), Vec3(0.2, 0.1, 0))),
            kViolationFloor);
}

TEST(JointRows, SliderAdmitsSlidingAndSpinAboutItsAxis) {
  Scene s;
  const Pair p = two_boxes(s);
  const btTransform frame = pivot_frame();
  auto* slider = s.add<btSliderConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * frame,
                                           p.b->getCenterOfMassTransform().inverse() * frame, true);
  // Free rotation about the axis: with the default range [0, 0] the spin
  // lock row comes and goes with the rounding of the current angle.
  slider->setLowerAngLimit(1.0);
  slider->setUpperAngLimit(-1.0);
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 4);
  EXPECT_LE(relative_residual(g, relative_motion(s, p, kPivot, 1.2 * kAxis, 0.7 * kAxis)),
            kRowRounding);
  const Vec3 across = kAxis.unitOrthogonal();
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), 0.5 * across)),
            kViolationFloor);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, 0.5 * across, Vec3::Zero())),
            kViolationFloor);
}

TEST(JointRows, SliderOffItsLockedAngleGetsABilateralSpinRow) {
  Scene s;
  const Pair p = two_boxes(s);
  const btTransform frame = pivot_frame();
  // B's frame turned 0.05 rad about the slider axis: the angle is off the
  // locked range [0, 0], so the lock row is present, with infinite bounds.
  const btTransform turned = frame * btTransform(btQuaternion(btVector3(1, 0, 0), btScalar(0.05)));
  s.add<btSliderConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * frame,
                            p.b->getCenterOfMassTransform().inverse() * turned, true);
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 5);
  EXPECT_LE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), 0.7 * kAxis)),
            kRowRounding);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, 1.2 * kAxis, Vec3::Zero())),
            kViolationFloor);
}

TEST(JointRows, Generic6DofSpring2AllLockedIsRigid) {
  Scene s;
  const Pair p = two_boxes(s);
  const btTransform frame = pivot_frame();
  auto* d6 = s.add<btGeneric6DofSpring2Constraint>(
      *p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * frame,
      p.b->getCenterOfMassTransform().inverse() * frame);
  d6->setLinearLowerLimit(btVector3(0, 0, 0));
  d6->setLinearUpperLimit(btVector3(0, 0, 0));
  d6->setAngularLowerLimit(btVector3(0, 0, 0));
  d6->setAngularUpperLimit(btVector3(0, 0, 0));
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 6);
  EXPECT_LE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), Vec3::Zero())),
            kRowRounding);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, Vec3(0, 0.4, 0), Vec3::Zero())),
            kViolationFloor);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), Vec3(0.3, 0, 0))),
            kViolationFloor);
}

TEST(JointRows, Generic6DofSpring2FreeAndLimitedAxesGiveNoBilateralRow) {
  Scene s;
  const Pair p = two_boxes(s);
  const btTransform frame = pivot_frame();
  auto* d6 = s.add<btGeneric6DofSpring2Constraint>(
      *p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * frame,
      p.b->getCenterOfMassTransform().inverse() * frame);
  // Frame axes: x free (lower > upper), y limited to ±0.1 m, z locked;
  // rotations: x and y locked, z free.
  d6->setLinearLowerLimit(btVector3(1, btScalar(-0.1), 0));
  d6->setLinearUpperLimit(btVector3(-1, btScalar(0.1), 0));
  d6->setAngularLowerLimit(btVector3(0, 0, 1));
  d6->setAngularUpperLimit(btVector3(0, 0, -1));
  btTypedConstraint::btConstraintInfo1 info1;
  d6->getInfo1(&info1);
  EXPECT_EQ(info1.m_numConstraintRows, 5);  // y limit gives two unilateral rows
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 3);
  const btMatrix3x3 basis = frame.getBasis();
  const Vec3 fx = to_eigen(basis.getColumn(0)), fy = to_eigen(basis.getColumn(1)),
             fz = to_eigen(basis.getColumn(2));
  // Slide along x and y (y only limited), spin about z: admissible.
  EXPECT_LE(relative_residual(g, relative_motion(s, p, kPivot, 1.1 * fz, 0.6 * fx + 0.2 * fy)),
            kRowRounding);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, Vec3::Zero(), 0.5 * fz)),
            kViolationFloor);
  EXPECT_GE(relative_residual(g, relative_motion(s, p, kPivot, 0.5 * fx, Vec3::Zero())),
            kViolationFloor);
}

TEST(JointRows, Generic6DofSpring2WithWorldAsBodyALocksTheBody) {
  Scene s;
  btRigidBody* b = s.box(1.5, kHalfB, kPoseB);
  auto* d6 = s.add<btGeneric6DofSpring2Constraint>(*b, b->getCenterOfMassTransform().inverse() * pivot_frame());
  d6->setAngularLowerLimit(btVector3(0, 0, 0));
  d6->setAngularUpperLimit(btVector3(0, 0, 0));  // linear limits default to locked
  const Mat g = s.rows();
  ASSERT_EQ(g.rows(), 6);
  EXPECT_LE(max_abs(constrained_inverse_mass(s.inverse_mass(), g)),
            kClosedForm * max_abs(s.inverse_mass()));
}

// ── Filtering ────────────────────────────────────────────────────────────────

TEST(JointRows, SkipsDisabledBreakableAndForeignConstraints) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  btRigidBody* x = s.box(1.0, kHalfB, kPoseB, /*in_cluster=*/false);
  btRigidBody* y = s.box(1.0, kHalfB, pose(Vec3(0, 1, 0), 0.2, Vec3(3, 0, 0)), false);
  auto* disabled = s.add<btPoint2PointConstraint>(*a, btVector3(0, 1, 0));
  disabled->setEnabled(false);
  // The stock solver clamps bounds to ±threshold: finite rows, not bilateral.
  s.add<btPoint2PointConstraint>(*a, btVector3(0, 1, 0))->setBreakingImpulseThreshold(100);
  s.add<btPoint2PointConstraint>(*x, *y, btVector3(1, 0, 0), btVector3(-1, 0, 0));  // not in cluster
  // A p2p with an impulse clamp has finite bounds too.
  s.add<btPoint2PointConstraint>(*a, btVector3(0, -1, 0))->m_setting.m_impulseClamp = 50;
  int appended = -1;
  const Mat g = s.rows(&appended);
  EXPECT_EQ(appended, 0);
  EXPECT_EQ(g.rows(), 0);
  EXPECT_EQ(g.cols(), 6);
}

TEST(JointRows, AppendsToExistingRowsAndChecksIndices) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  auto* p2p = s.add<btPoint2PointConstraint>(*a, btVector3(0, 1, 0));
  btTypedConstraint* list[] = {p2p};
  btContactSolverInfo info;
  Mat g = Mat::Ones(2, 6);
  // The fixed body is −1 whatever body_index says.
  const auto lying = [a](const btRigidBody* b) { return b == a ? 0 : 7; };
  EXPECT_EQ(append_bilateral_joint_rows(list, 1, lying, 1, info, g), 3);
  EXPECT_EQ(g.rows(), 5);
  EXPECT_TRUE(g.topRows(2).isApprox(Mat::Ones(2, 6)));
  Mat wrong = Mat::Ones(1, 12);
  EXPECT_THROW(append_bilateral_joint_rows(list, 1, lying, 1, info, wrong), std::invalid_argument);
  Scene t;
  btRigidBody* c = t.box(2.0, kHalfA, kPoseA);
  btRigidBody* d = t.box(2.0, kHalfB, kPoseB);
  auto* between = t.add<btPoint2PointConstraint>(*c, *d, btVector3(0, 1, 0), btVector3(0, -1, 0));
  btTypedConstraint* list2[] = {between};
  Mat h;
  EXPECT_THROW(append_bilateral_joint_rows(list2, 1, [c](const btRigidBody* b) { return b == c ? 0 : 3; },
                                           1, info, h),
               std::out_of_range);
}

// ── (b) impulses through M⁻¹_G keep the joints; M⁻¹_G symmetric PSD ──────────

struct NamedScene {
  const char* name;
  std::function<void(Scene&)> build;
};

std::vector<NamedScene> projection_scenes() {
  std::vector<NamedScene> out;
  out.push_back({"p2p world", [](Scene& s) {
                   btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
                   s.add<btPoint2PointConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
                 }});
  out.push_back({"p2p pair", [](Scene& s) {
                   const Pair p = two_boxes(s);
                   s.add<btPoint2PointConstraint>(*p.a, *p.b,
                                                  p.a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                                  p.b->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
                 }});
  out.push_back({"hinge pair", [](Scene& s) {
                   const Pair p = two_boxes(s);
                   s.add<btHingeConstraint>(
                       *p.a, *p.b, p.a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                       p.b->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                       p.a->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis),
                       p.b->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis));
                 }});
  out.push_back({"fixed pair", [](Scene& s) {
                   const Pair p = two_boxes(s);
                   s.add<btFixedConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * pivot_frame(),
                                            p.b->getCenterOfMassTransform().inverse() * pivot_frame());
                 }});
  out.push_back({"slider pair", [](Scene& s) {
                   const Pair p = two_boxes(s);
                   s.add<btSliderConstraint>(*p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * pivot_frame(),
                                             p.b->getCenterOfMassTransform().inverse() * pivot_frame(), true);
                 }});
  out.push_back({"6dof2 partly free", [](Scene& s) {
                   const Pair p = two_boxes(s);
                   auto* d6 = s.add<btGeneric6DofSpring2Constraint>(
                       *p.a, *p.b, p.a->getCenterOfMassTransform().inverse() * pivot_frame(),
                       p.b->getCenterOfMassTransform().inverse() * pivot_frame());
                   d6->setLinearLowerLimit(btVector3(1, 0, 0));
                   d6->setLinearUpperLimit(btVector3(-1, 0, 0));
                   d6->setAngularLowerLimit(btVector3(0, 0, 1));
                   d6->setAngularUpperLimit(btVector3(0, 0, -1));
                 }});
  out.push_back({"chain of four joint types", [](Scene& s) {
                   btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
                   btRigidBody* b = s.box(1.5, kHalfB, kPoseB);
                   btRigidBody* c = s.sphere(0.8, 0.2, pose(Vec3(0, 0, 1), 0.3, Vec3(0.2, 3.4, 0.9)));
                   btRigidBody* d = s.box(3.0, kHalfA, pose(Vec3(1, 1, 0), -0.4, Vec3(0.9, 3.8, 1.4)));
                   s.add<btHingeConstraint>(*a, a->getCenterOfMassTransform().inverse()(btVector3(0.4, 1.9, -0.2)),
                                            a->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis));
                   s.add<btPoint2PointConstraint>(*a, *b, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                                  b->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
                   const btTransform bc(btQuaternion::getIdentity(), btVector3(0, btScalar(3.0), btScalar(0.8)));
                   s.add<btFixedConstraint>(*b, *c, b->getCenterOfMassTransform().inverse() * bc,
                                            c->getCenterOfMassTransform().inverse() * bc);
                   const btTransform cd = pose(Vec3(0.2, 1, 0.4), 0.9, Vec3(0.6, 3.6, 1.2));
                   s.add<btSliderConstraint>(*c, *d, c->getCenterOfMassTransform().inverse() * cd,
                                             d->getCenterOfMassTransform().inverse() * cd, true);
                 }});
  out.push_back({"redundant hinge + p2p at one pivot", [](Scene& s) {
                   btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
                   const btVector3 pivot = a->getCenterOfMassTransform().inverse()(to_bt(kPivot));
                   s.add<btHingeConstraint>(*a, pivot, a->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis));
                   s.add<btPoint2PointConstraint>(*a, pivot);
                 }});
  out.push_back({"hinge on a rotation-locked body", [](Scene& s) {
                   btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
                   a->setAngularFactor(0);
                   s.add<btHingeConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                                            a->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis));
                 }});
  return out;
}

TEST(ConstrainedInverseMass, ImpulsesKeepJointsAndResultIsSymmetricPsd) {
  std::mt19937 rng(20240611);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  for (const NamedScene& named : projection_scenes()) {
    SCOPED_TRACE(named.name);
    Scene s;
    named.build(s);
    const Mat m = s.inverse_mass();
    const Mat g = s.rows();
    ASSERT_GT(g.rows(), 0);
    const Mat constrained = constrained_inverse_mass(m, g);
    EXPECT_TRUE(constrained == constrained.transpose());  // exactly
    // PSD against the scale of M⁻¹ (M⁻¹_G may be ~0: a locked body).
    const Eigen::SelfAdjointEigenSolver<Mat> eigen(constrained);
    const double scale = Eigen::SelfAdjointEigenSolver<Mat>(m).eigenvalues().maxCoeff();
    EXPECT_GE(eigen.eigenvalues().minCoeff(), -kDefinitenessTolerance * scale);
    double worst = 0.0;
    for (int trial = 0; trial < kRandomImpulses; ++trial) {
      Vec row(s.dofs());
      for (Eigen::Index i = 0; i < row.size(); ++i) row[i] = uniform(rng);
      const Vec impulse = row * (3.0 * uniform(rng));  // Jᵀλ
      const Vec dv = constrained * impulse;
      // Joint velocity created, relative to the free body's response M⁻¹Jᵀλ.
      const double free_response = (m * impulse).norm();
      for (Eigen::Index i = 0; i < g.rows(); ++i)
        worst = std::max(worst, std::abs(g.row(i).dot(dv)) / (g.row(i).norm() * free_response));
    }
    EXPECT_LE(worst, kProjectionResidual);
    // Removing the joints' directions never adds mobility: M⁻¹ − M⁻¹_G ⪰ 0.
    const Eigen::SelfAdjointEigenSolver<Mat> removed(m - constrained);
    EXPECT_GE(removed.eigenvalues().minCoeff(), -kDefinitenessTolerance * scale);
  }
}

// The sparse route of large joint groups (sparse_joint_metric, LDLT of the
// scaled Gram matrix) against the dense reference (joint_metric,
// eigen-decomposition) on every scene: the columns of M⁻¹_G, the
// joint-violating velocity and the joints' demand ĉᵀS⁻¹ĉ = ‖reduce c‖²
// agree to kSparseMetricTolerance of their scale wherever the sparse route
// accepts the rows, and it declines the redundant ones (a singular Gram
// matrix needs the pseudo-inverse). Both are exact in exact arithmetic on
// a non-singular S; they differ by the rounding of an LDLT against an
// eigen-solver on a Gram matrix of a few rows of O(1) entries, ~1e-15
// times its condition number; 1e-9 leaves room for conditions up to ~1e6.
TEST(SparseJointMetric, MatchesTheDenseMetricWhereItAcceptsTheRows) {
  constexpr double kSparseMetricTolerance = 1e-9;
  std::mt19937 rng(20261125);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  int accepted = 0;
  for (const NamedScene& named : projection_scenes()) {
    SCOPED_TRACE(named.name);
    Scene s;
    named.build(s);
    const Mat m = s.inverse_mass();
    const Mat g = s.rows();
    std::vector<Eigen::Matrix<double, 6, 6>> blocks;
    for (Eigen::Index b = 0; b < m.rows() / 6; ++b) blocks.push_back(m.block<6, 6>(6 * b, 6 * b));
    Vec velocity(m.rows()), offsets(g.rows());
    for (Eigen::Index i = 0; i < velocity.size(); ++i) velocity[i] = uniform(rng);
    for (Eigen::Index i = 0; i < offsets.size(); ++i) offsets[i] = uniform(rng);
    std::vector<Eigen::Index> columns(static_cast<size_t>(m.rows()));
    std::iota(columns.begin(), columns.end(), Eigen::Index{0});
    SparseJointMetric sparse;
    const bool ok = sparse_joint_metric(blocks, g.sparseView(), velocity, offsets, columns, sparse);
    const bool redundant = std::string(named.name).find("redundant") != std::string::npos;
    if (redundant) {
      EXPECT_FALSE(ok) << "dependent rows must take the dense path";
    }
    if (!ok) continue;
    ++accepted;
    const JointMetric dense = joint_metric(m, g);
    EXPECT_LE(max_abs(sparse.columns - dense.inverse_mass), kSparseMetricTolerance * max_abs(m));
    const Vec violating = dense.violating(g, velocity, offsets);
    EXPECT_LE((sparse.violating - violating).cwiseAbs().maxCoeff(),
              kSparseMetricTolerance * std::max(1.0, violating.cwiseAbs().maxCoeff()));
    const double demand = (dense.reduce * offsets).squaredNorm();
    EXPECT_NEAR(sparse.demand, demand, kSparseMetricTolerance * std::max(1.0, demand));
  }
  EXPECT_GE(accepted, 5) << "the sparse route must accept the scenes without redundant rows";
}

// body_joint_metric (one body, on the stack) is joint_metric's algebra:
// the same metric, split and demand on every one-body case, redundant rows
// and rows on locked coordinates included. Eigen's fixed-size and general
// kernels may order a product's sums differently: a few ulps of the
// largest entry.
TEST(BodyJointMetric, MatchesJointMetricOnOneBody) {
  constexpr double kKernelOrder = 64 * std::numeric_limits<double>::epsilon();
  std::mt19937 rng(20261127);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  const auto compare = [&](const Mat& m, const Mat& g, const char* what) {
    ASSERT_EQ(m.rows(), 6);
    ASSERT_LE(g.rows(), kBodyJointRows);
    Vec velocity(6), offsets(g.rows());
    for (Eigen::Index i = 0; i < 6; ++i) velocity[i] = uniform(rng);
    for (Eigen::Index i = 0; i < offsets.size(); ++i) offsets[i] = uniform(rng);
    const BodyJointMetric body =
        body_joint_metric(m, BodyJointRows(g), Eigen::Matrix<double, 6, 1>(velocity), BodyJointOffsets(offsets));
    const JointMetric dense = joint_metric(m, g);
    const double scale = std::max(1.0, max_abs(m));
    EXPECT_LE(max_abs(Mat(body.inverse_mass) - dense.inverse_mass), kKernelOrder * scale) << what;
    EXPECT_EQ(Mat(body.inverse_mass), Mat(body.inverse_mass.transpose())) << what << ": exactly symmetric";
    const Vec violating = dense.violating(g, velocity, offsets);
    EXPECT_LE((Vec(body.violating) - violating).cwiseAbs().maxCoeff(),
              kKernelOrder * std::max(1.0, violating.cwiseAbs().maxCoeff()))
        << what;
    const double demand = dense.reduce.rows() > 0 ? (dense.reduce * offsets).squaredNorm() : 0.0;
    EXPECT_NEAR(body.demand, demand, kKernelOrder * std::max(1.0, demand)) << what;
  };
  int compared = 0;
  for (const NamedScene& named : projection_scenes()) {
    Scene s;
    named.build(s);
    const Mat m = s.inverse_mass();
    const Mat g = s.rows();
    if (m.rows() != 6 || g.rows() > kBodyJointRows) continue;
    compare(m, g, named.name);
    ++compared;
  }
  EXPECT_GE(compared, 2) << "the one-body scenes (p2p to the world, a rotation-locked hinge)";
  // Random bodies: a full-rank set, two equal rows (rank-deficient), a row
  // on a locked linear block (no reach), six rows.
  for (int trial = 0; trial < 20; ++trial) {
    Mat m = Mat::Zero(6, 6);
    m.topLeftCorner<3, 3>() = (0.5 + 0.5 * std::abs(uniform(rng))) * Mat3::Identity();
    const Mat3 a = Mat3::NullaryExpr([&]() { return uniform(rng); });
    m.bottomRightCorner<3, 3>() = a * a.transpose() + 0.1 * Mat3::Identity();
    const int count = 1 + trial % kBodyJointRows;
    Mat g = Mat::NullaryExpr(count, 6, [&]() { return uniform(rng); });
    if (count >= 2 && trial % 3 == 0) g.row(1) = g.row(0);
    if (trial % 4 == 1) {
      m.topLeftCorner<3, 3>().setZero();  // linear motion locked
      g.row(0).tail<3>().setZero();       // this row reaches only the locked block
    }
    compare(m, g, "random");
  }
}

TEST(ConstrainedInverseMass, RedundantRowsChangeNothing) {
  Scene hinge_only;
  btRigidBody* a = hinge_only.box(2.0, kHalfA, kPoseA);
  const btVector3 pivot = a->getCenterOfMassTransform().inverse()(to_bt(kPivot));
  const btVector3 axis = a->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis);
  hinge_only.add<btHingeConstraint>(*a, pivot, axis);
  const Mat m = hinge_only.inverse_mass();
  const Mat single = constrained_inverse_mass(m, hinge_only.rows());
  // The hinge rows twice and a point-to-point at its pivot: rank 5 of 13 rows.
  Scene redundant;
  btRigidBody* b = redundant.box(2.0, kHalfA, kPoseA);
  redundant.add<btHingeConstraint>(*b, pivot, axis);
  redundant.add<btHingeConstraint>(*b, pivot, axis);
  redundant.add<btPoint2PointConstraint>(*b, pivot);
  const Mat g = redundant.rows();
  ASSERT_EQ(g.rows(), 13);
  const Mat doubled = constrained_inverse_mass(redundant.inverse_mass(), g);
  EXPECT_LE(max_abs(doubled - single), kClosedForm * max_abs(m));
  EXPECT_LE(max_abs(single - hinged_inverse_mass(a, kPivot, kAxis)), kClosedForm * max_abs(m));
}

TEST(ConstrainedInverseMass, HingeOnRotationLockedBodyLocksIt) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  a->setAngularFactor(0);  // no rotation: a hinge pins the pivot, so nothing moves
  s.add<btHingeConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)),
                           a->getCenterOfMassTransform().getBasis().transpose() * to_bt(kAxis));
  const Mat m = s.inverse_mass();
  EXPECT_LE(max_abs(constrained_inverse_mass(m, s.rows())), kClosedForm * max_abs(m));
}

/// A parallelogram four-bar: crank A and rocker C hinged to the world, coupler
/// B hinged to both; 20 hinge rows on 18 DOFs with one mobility left. With
/// `tilt` ≠ 0 the coupler is turned after assembly, as joint drift would.
int four_bar_mobility(double tilt, Vec* motion_out = nullptr, Mat* constrained_out = nullptr,
                      double* residual_out = nullptr) {
  Scene s;
  const Vec3 half(0.05, 0.5, 0.05);
  btRigidBody* crank = s.box(1.0, half, pose(Vec3(0, 0, 1), 0.0, Vec3(0, 0.5, 0)));
  btRigidBody* coupler = s.box(2.0, Vec3(1.0, 0.05, 0.05), pose(Vec3(0, 0, 1), 0.0, Vec3(1, 1, 0)));
  btRigidBody* rocker = s.box(1.0, half, pose(Vec3(0, 0, 1), 0.0, Vec3(2, 0.5, 0)));
  const btVector3 z(0, 0, 1);
  const auto local = [](btRigidBody* b, const btVector3& p) { return b->getCenterOfMassTransform().inverse()(p); };
  s.add<btHingeConstraint>(*crank, local(crank, btVector3(0, 0, 0)), z);
  s.add<btHingeConstraint>(*rocker, local(rocker, btVector3(2, 0, 0)), z);
  s.add<btHingeConstraint>(*crank, *coupler, local(crank, btVector3(0, 1, 0)),
                           local(coupler, btVector3(0, 1, 0)), z, z);
  s.add<btHingeConstraint>(*rocker, *coupler, local(rocker, btVector3(2, 1, 0)),
                           local(coupler, btVector3(2, 1, 0)), z, z);
  if (tilt != 0.0) coupler->setCenterOfMassTransform(pose(Vec3(1, 0.3, 0), tilt, Vec3(1, 1, 0)));
  const Mat g = s.rows();
  EXPECT_EQ(g.rows(), 20);
  // The parallelogram motion: both cranks turn at ω, the coupler translates.
  const Vec3 w(0, 0, 1.5);
  const Vec motion = s.velocity({{w.cross(centre(crank)), w},
                                 {w.cross(Vec3(0, 1, 0)), Vec3::Zero()},
                                 {w.cross(centre(rocker) - Vec3(2, 0, 0)), w}});
  const Mat m = s.inverse_mass();
  const Mat constrained = constrained_inverse_mass(m, g);
  const Eigen::SelfAdjointEigenSolver<Mat> eigen(constrained);
  // Rounding noise scales with M⁻¹ (thin links: I⁻¹ up to 600), not with
  // the one eigenvalue left (~1.3).
  int mobile = 0;
  for (Eigen::Index i = 0; i < eigen.eigenvalues().size(); ++i)
    if (eigen.eigenvalues()[i] > kMobileEigenvalue * max_abs(m)) ++mobile;
  if (motion_out) *motion_out = motion;
  if (constrained_out) *constrained_out = constrained;
  if (residual_out) *residual_out = relative_residual(g, motion);
  return mobile;
}

TEST(ConstrainedInverseMass, ClosedLoopKeepsItsSingleMobility) {
  Vec motion;
  Mat constrained;
  double residual = 1.0;
  EXPECT_EQ(four_bar_mobility(0.0, &motion, &constrained, &residual), 1);
  EXPECT_LE(residual, kRowRounding);
  // Its one direction is the parallelogram motion.
  const Eigen::SelfAdjointEigenSolver<Mat> eigen(constrained);
  const Vec mode = eigen.eigenvectors().col(eigen.eigenvalues().size() - 1);
  EXPECT_NEAR(std::abs(mode.dot(motion.normalized())), 1.0, kClosedForm);
}

/// kJointRankTolerance tolerates joint drift in a loop: a coupler tilted by
/// 1e-3 rad leaves the loop's rows dependent up to a scaled eigenvalue
/// ~1.5e-10, still redundancy; tilted by 2e-2 rad (~6e-8) the loop locks.
TEST(ConstrainedInverseMass, ClosedLoopToleratesJointDrift) {
  EXPECT_EQ(four_bar_mobility(1e-3), 1);
  EXPECT_EQ(four_bar_mobility(2e-2), 0);
}

// ── (c) no joints: M⁻¹_G = M⁻¹ ───────────────────────────────────────────────

TEST(ConstrainedInverseMass, FreeBodyKeepsItsInverseMass) {
  Scene s;
  s.box(2.0, kHalfA, kPoseA);
  const Mat m = s.inverse_mass();
  int appended = -1;
  const Mat g = s.rows(&appended);
  EXPECT_EQ(appended, 0);
  EXPECT_EQ(g.rows(), 0);
  EXPECT_TRUE(constrained_inverse_mass(m, g) == m);
  EXPECT_TRUE(constrained_inverse_mass(m, Mat(0, 6)) == m);
  EXPECT_THROW(constrained_inverse_mass(m, Mat::Ones(1, 12)), std::invalid_argument);
}

// ── (d) pendulum: effective mass m + I/L² ────────────────────────────────────

/// A ball of mass m and radius r hangs from a pivot at distance L above its
/// centre (massless rod / taut string: point-to-point). It can only rotate
/// about the pivot, with inertia I + m L² (parallel axis, I = 2/5 m r²). A
/// horizontal impulse P through the centre has moment P L about the pivot,
/// so ω = P L / (I + m L²) and the centre moves at ω L:
///     1/m_eff = L² / (I + m L²),  m_eff = m + I/L².
/// A vertical impulse along the rod moves nothing.
TEST(ConstrainedInverseMass, PendulumEffectiveMassMatchesClosedForm) {
  const double m = 3.0, r = 0.25, length = 1.2;
  const double inertia = 0.4 * m * r * r;
  const double expected_inverse = 1.0 / (m + inertia / (length * length));
  Scene s;
  btRigidBody* ball = s.sphere(m, r, pose(Vec3(1, 0, 0), 0.0, Vec3(0.5, 2.0, -0.3)));
  s.add<btPoint2PointConstraint>(*ball, btVector3(0, static_cast<btScalar>(length), 0));
  const Mat constrained = constrained_inverse_mass(s.inverse_mass(), s.rows());
  Eigen::Matrix<double, 6, 1> horizontal, vertical;
  horizontal << 1, 0, 0, 0, 0, 0;
  vertical << 0, 1, 0, 0, 0, 0;
  const double effective = horizontal.dot(constrained * horizontal);
  EXPECT_NEAR(effective, expected_inverse, kClosedForm * expected_inverse);
  EXPECT_NEAR(vertical.dot(constrained * vertical), 0.0, kClosedForm * expected_inverse);
  // Free ball: 1/m. The joint makes the ball heavier by I/L² = 0.052 kg.
  EXPECT_GT(1.0 / effective - m, 0.05);
  // The response to the impulse is the swing about the pivot.
  const Vec dv = constrained * horizontal;
  const Vec3 w = dv.tail<3>();
  EXPECT_LE((dv.head<3>() - w.cross(centre(ball) - world_point(ball, btVector3(0, btScalar(length), 0))))
                .norm(),
            kClosedForm * dv.norm());
}

TEST(ConstrainedInverseMass, PointToPointToWorldMatchesPinnedBody) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  s.add<btPoint2PointConstraint>(*a, a->getCenterOfMassTransform().inverse()(to_bt(kPivot)));
  const Mat m = s.inverse_mass();
  EXPECT_LE(max_abs(constrained_inverse_mass(m, s.rows()) - pinned_inverse_mass(a, kPivot)),
            kClosedForm * max_abs(m));
}

// ── (e) body blocks ──────────────────────────────────────────────────────────

TEST(BodyBlocks, InverseMassRespectsFactorsAndWorldInertia) {
  Scene s;
  const double mass = 2.0;
  btRigidBody* a = s.box(mass, kHalfA, kPoseA);
  // Independent inertia of a box with full extents 2h: m/12 (ly² + lz²), …
  const Vec3 l = 2.0 * kHalfA;
  const Vec3 principal(mass / 12 * (l.y() * l.y() + l.z() * l.z()),
                       mass / 12 * (l.x() * l.x() + l.z() * l.z()),
                       mass / 12 * (l.x() * l.x() + l.y() * l.y()));
  const Mat3 rotation = to_eigen(a->getCenterOfMassTransform().getBasis());
  const Mat3 inverse_world = rotation * principal.cwiseInverse().asDiagonal() * rotation.transpose();
  Eigen::Matrix<double, 6, 6> expected = Eigen::Matrix<double, 6, 6>::Zero();
  expected.topLeftCorner<3, 3>() = Mat3::Identity() / mass;
  expected.bottomRightCorner<3, 3>() = inverse_world;
  EXPECT_LE((body_inverse_mass(*a) - expected).cwiseAbs().maxCoeff(),
            kClosedForm * expected.cwiseAbs().maxCoeff());
  EXPECT_TRUE(body_inverse_mass(*a) == body_inverse_mass(*a).transpose());  // exactly

  a->setLinearFactor(btVector3(1, 0, 1));
  a->setAngularFactor(btVector3(0, 0, 1));
  const Eigen::Matrix<double, 6, 6> locked = body_inverse_mass(*a);
  for (const int dof : {1, 3, 4}) {
    EXPECT_TRUE(locked.row(dof).isZero(0.0)) << dof;
    EXPECT_TRUE(locked.col(dof).isZero(0.0)) << dof;
  }
  EXPECT_NEAR(locked(0, 0), 1.0 / mass, kClosedForm / mass);
  EXPECT_NEAR(locked(2, 2), 1.0 / mass, kClosedForm / mass);
  EXPECT_NEAR(locked(5, 5), inverse_world(2, 2), kClosedForm * inverse_world(2, 2));
  EXPECT_TRUE(locked == locked.transpose());

  btRigidBody* ground = s.box(0.0, kHalfA, kPoseB, false);
  EXPECT_TRUE(body_inverse_mass(*ground).isZero(0.0));
}

TEST(BodyBlocks, VelocityRoundTrip) {
  Scene s;
  btRigidBody* a = s.box(2.0, kHalfA, kPoseA);
  Eigen::Matrix<double, 6, 1> v;
  v << 0.5, -1.25, 3.0, 0.75, -2.5, 0.125;  // exact in float and double
  set_body_velocity(*a, v);
  EXPECT_TRUE(body_velocity(*a) == v);
  EXPECT_EQ(a->getLinearVelocity().y(), btScalar(-1.25));
  EXPECT_EQ(a->getAngularVelocity().z(), btScalar(0.125));
}

}  // namespace
}  // namespace simpact::bullet::internal
