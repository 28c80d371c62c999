// Bilateral joint rows of Bullet's btTypedConstraint over an impact cluster's
// velocity layout, and the joint-constrained inverse inertia (impact_solver.h,
// stage 3). Internal to simpact::bullet; never installed.
//
// Layout: a cluster of N dynamic rigid bodies has the generalized velocity
//     v = [v_0, ω_0, v_1, ω_1, …]   (6 per body: linear then angular, world
//                                     frame, SI units, double precision),
// whatever btScalar is.
//
// Bullet's row convention (btSequentialImpulseConstraintSolver::convertJoint
// and every getInfo2 read for 3.24): a constraint row j acts as
//     J1lin·v_A + J1ang·ω_A + J2lin·v_B + J2ang·ω_B,
// the B-side entries already carrying their sign (a point-to-point row is
// [e, a_A × e] on A and [−e, −(a_B × e)] on B). A row is bilateral when both
// of its impulse bounds, after the clamp to ±breaking threshold that the
// stock solver applies, are infinite.
#pragma once

#include <Eigen/Core>
#include <Eigen/SparseCore>

#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btVector3.h>

#include <functional>
#include <vector>

class btTypedConstraint;
struct btContactSolverInfo;

namespace simpact::bullet::internal {

/// An impulse bound at or beyond this magnitude is infinite. Bullet writes
/// ±SIMD_INFINITY (FLT_MAX ≈ 3.4e38 or DBL_MAX) for unbounded rows; 1e30 is
/// below both, matches the ODE-style "infinity" some constraint code uses,
/// and is ~20 orders above any physical impulse bound [N·s or N·m·s].
inline constexpr double kInfiniteBound = 1e30;

/// Rank tolerance of the joint Gram matrix in constrained_inverse_mass.
/// Each row of G is first scaled by its reach
///     s_i = (Σ_b |G_i,b,lin|² μ_b,lin + |G_i,b,ang|² μ_b,ang)^½,
/// μ_b,lin / μ_b,ang the largest diagonal entry of body b's linear / angular
/// block of M⁻¹: the scaled Gram matrix Ĝ M⁻¹ Ĝᵀ then has a diagonal in
/// [0, 3] whatever the units, masses and mass ratios between bodies (1 for a
/// purely linear or purely angular row on a free body). Its eigenvalues below
/// this are zero. A set of rows that is dependent up to an angle θ has an
/// eigenvalue ~θ²; Bullet computes rows in btScalar, so rounding leaves
/// exactly redundant rows (a hinge and a point-to-point at one pivot, two
/// joints on a locked body, a closed loop) dependent up to θ ≲ 1e-6 in single
/// precision (θ² ≲ 1e-12) and ~1e-15 in double, and the eigen-solver adds
/// ~k·1e-16: 1e-8 is 1e4 above single-precision redundancy. Joints also
/// drift apart: a closed loop whose joints have separated by θ keeps an
/// eigenvalue ~c·θ² (c ≈ 1.5e-4 for a parallelogram four-bar with its
/// coupler tilted by θ), and counting it as a constraint would lock the
/// loop's mobility during the impact; 1e-8 tolerates that up to θ ≈ 8e-3
/// rad there. Rows more than ~1e-4 rad away from dependence still count as
/// independent (genuine constraints of sane bodies sit at ≳ 1e-3: 1.6e-3 for
/// the four-bar's thin links). A dropped direction leaves a joint velocity of
/// at most √1e-8 = 1e-4 of the free response along it, which the base
/// solver's joint rows remove; a row whose part on mobile DOFs is below 1e-8
/// of its reach (a rounding-level tilt of an angular row into an axis locked
/// by an angular factor) is dropped by the same test.
inline constexpr double kJointRankTolerance = 1e-8;

/// Appends to G (k×6N; resized: G must have 0 rows or 6N columns) the
/// bilateral rows of every enabled constraint in `constraints` with body A
/// and/or B in the cluster; returns the number of rows appended. Limits,
/// motors, springs and any other row with a finite bound are left to the base
/// solver. `body_index` maps a body to its cluster index in [0, num_bodies)
/// or −1 when it is not in the cluster (static, kinematic, another island,
/// btTypedConstraint::getFixedBody() — which is −1 whatever body_index says);
/// such a body contributes no columns. Constraints with neither body in the
/// cluster are skipped, as are rows whose coefficients on the cluster are all
/// zero or not finite.
///
/// Calls buildJacobian(), getInfo1() and getInfo2() as the stock solver does
/// (fps = 1/m_timeStep, erp = m_erp, cfm preset to m_globalCfm, bounds preset
/// to ∓SIMD_INFINITY); those only refresh the constraint's cached frames and
/// limit state (btPoint2PointConstraint::buildJacobian also zeroes its
/// applied impulse), which the stock solver recomputes from the same
/// positions in the same step.
/// Throws std::invalid_argument on a bad G shape or m_timeStep ≤ 0, and
/// std::out_of_range when body_index returns an index outside [−1, N).
///
/// With `offsets` (non-null; it must have G's old row count), also appends
/// each new row's terms on the bodies outside the cluster,
///     c_i = J1·[v_A, ω_A] (A outside) + J2·[v_B, ω_B] (B outside),
/// at those bodies' current velocities (kinematic partners; static bodies
/// and getFixedBody() are at rest): the joint holds when G v + c = 0.
int append_bilateral_joint_rows(btTypedConstraint* const* constraints, int num_constraints,
                                const std::function<int(const btRigidBody*)>& body_index,
                                int num_bodies, const btContactSolverInfo& info,
                                Eigen::MatrixXd& G, Eigen::VectorXd* offsets = nullptr);

/// One bilateral joint row in sparse form: it reads g_a·[v_a, ω_a] on
/// cluster body a and g_b·[v_b, ω_b] on body b (−1: the side is outside the
/// cluster and contributes `offset`, c_i above, instead of columns).
struct JointRow {
  int a = -1, b = -1;
  Eigen::Matrix<double, 1, 6> on_a = Eigen::Matrix<double, 1, 6>::Zero();
  Eigen::Matrix<double, 1, 6> on_b = Eigen::Matrix<double, 1, 6>::Zero();
  double offset = 0.0;
};

/// The rows append_bilateral_joint_rows appends, in the same order, as
/// sparse JointRows appended to `rows`: O(rows) memory whatever the cluster
/// size (a cradle of 10⁵ balls on strings has 3·10⁵ rows of 6 entries).
/// Same checks, calls and throws.
int collect_bilateral_joint_rows(btTypedConstraint* const* constraints, int num_constraints,
                                 const std::function<int(const btRigidBody*)>& body_index,
                                 int num_bodies, const btContactSolverInfo& info, std::vector<JointRow>& rows);

/// The joint-constrained metric of a cluster and the M-orthogonal split of a
/// velocity into its joint-admissible and joint-violating parts
/// (impact_solver.h, stage 3):
///     M⁻¹_G = M⁻¹ − W Wᵀ,   W = M⁻¹Ĝᵀ U_r Λ_r^{-1/2},
///     v_g   = W · reduce · (G v + c) = M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ (G v + c),
/// Ĝ the kept rows of G scaled to unit reach, U_r Λ_r U_rᵀ the eigenpairs of
/// Ĝ M⁻¹ Ĝᵀ above kJointRankTolerance, reduce = Λ_r^{-1/2} U_rᵀ S (S scales
/// and selects the kept rows; r × G.rows()). With no effective row, W and
/// reduce have 0 columns / rows and v_g = 0.
struct JointMetric {
  Eigen::MatrixXd inverse_mass;  ///< M⁻¹_G, exactly symmetric
  Eigen::MatrixXd response;      ///< W, n × r
  Eigen::MatrixXd reduce;        ///< r × G.rows()

  /// v_g of `velocity` (n) with joint offsets c (G.rows(); empty = 0).
  Eigen::VectorXd violating(const Eigen::MatrixXd& G, const Eigen::VectorXd& velocity,
                            const Eigen::VectorXd& offsets) const;
};

/// The metric and split above; throws as constrained_inverse_mass.
JointMetric joint_metric(const Eigen::MatrixXd& inverse_mass, const Eigen::MatrixXd& G);

/// At most kBodyJointRows joint rows on one body: body_joint_metric's case.
inline constexpr int kBodyJointRows = 6;
using BodyJointRows = Eigen::Matrix<double, Eigen::Dynamic, 6, Eigen::RowMajor, kBodyJointRows, 6>;
using BodyJointOffsets = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kBodyJointRows, 1>;

/// joint_metric and its split for ONE body (6 coordinates) under at most
/// kBodyJointRows rows G (to the world or to bodies outside the cluster: a
/// cradle's ball on its string, a pendulum bob), every matrix on the stack:
/// the same arithmetic as joint_metric, whose heap matrices and general
/// kernels cost more than the algebra at this size. Gives M⁻¹_G, v_g of
/// `velocity` with offsets c, and the demand ‖reduce · c‖². Throws as
/// joint_metric.
struct BodyJointMetric {
  Eigen::Matrix<double, 6, 6> inverse_mass;  ///< M⁻¹_G, exactly symmetric
  Eigen::Matrix<double, 6, 1> violating;     ///< v_g
  double demand = 0.0;                       ///< ‖reduce · c‖²
};
BodyJointMetric body_joint_metric(const Eigen::Matrix<double, 6, 6>& inverse_mass, const BodyJointRows& G,
                                  const Eigen::Matrix<double, 6, 1>& velocity, const BodyJointOffsets& offsets);

/// The joint metric of a large joint-connected group, factorised sparsely:
/// Ĝ (G's rows scaled to unit reach and selected as in joint_metric), the
/// Gram matrix S = Ĝ M⁻¹ Ĝᵀ (block-tridiagonal for a chain) by Eigen's
/// SimplicialLDLT, never a dense n × n or k × k matrix. Gives
///   columns   M⁻¹_G e_j = M⁻¹e_j − M⁻¹Ĝᵀ S⁻¹ Ĝ M⁻¹e_j for the requested
///             coordinates j (n × |columns|, one sparse solve each),
///   violating v_g = M⁻¹Ĝᵀ S⁻¹ (Ĝ v + ĉ),
///   demand    ĉᵀ S⁻¹ ĉ = ‖reduce · c‖² of joint_metric,
/// equal to joint_metric's when S is non-singular. Returns false, leaving
/// the dense path to the caller, when a pivot of the factorisation is at or
/// below kJointRankTolerance (dependent rows need the pseudo-inverse) or a
/// result is not finite. M⁻¹ is the bodies' 6 × 6 blocks (block-diagonal),
/// G is k × 6N; throws std::invalid_argument on mismatched sizes.
struct SparseJointMetric {
  Eigen::MatrixXd columns;
  Eigen::VectorXd violating;
  double demand = 0.0;
};
bool sparse_joint_metric(const std::vector<Eigen::Matrix<double, 6, 6>>& blocks,
                         const Eigen::SparseMatrix<double, Eigen::RowMajor>& G, const Eigen::VectorXd& velocity,
                         const Eigen::VectorXd& offsets, const std::vector<Eigen::Index>& columns,
                         SparseJointMetric& out);

/// M⁻¹_G = M⁻¹ − M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ G M⁻¹: the inverse inertia of the cluster
/// with its joints locked in (an impulse f changes v by M⁻¹_G f and keeps
/// G Δv = 0). The pseudo-inverse uses kJointRankTolerance on the row-scaled
/// Gram matrix, so redundant rows are harmless. The result is exactly
/// symmetric. Returns M⁻¹ itself when G has no rows or no row reaches a
/// mobile DOF. M⁻¹ (6N×6N, symmetric PSD) follows the 6-per-body layout.
/// Throws std::invalid_argument on mismatched sizes.
Eigen::MatrixXd constrained_inverse_mass(const Eigen::MatrixXd& inverse_mass,
                                         const Eigen::MatrixXd& G);

/// 6×6 inverse inertia of one body in the layout:
/// blockdiag(D_l m⁻¹ D_l, D_a I⁻¹_world D_a), D = diag(linear / angular
/// factor), I⁻¹_world symmetrized exactly (Bullet's is symmetric only to
/// btScalar rounding). Zero for static and kinematic bodies (m⁻¹ = 0).
Eigen::Matrix<double, 6, 6> body_inverse_mass(const btRigidBody& body);

/// Sets to 0 the coordinates of a body's 6-vector (linear, angular; world
/// frame) whose linear or angular factor is 0. No impulse changes velocity
/// along such an axis (body_inverse_mass is zero in its row and column), so
/// both adapters leave it out of the law's input and pass it through
/// unchanged (impact_solver.h, stage 3): a host-set velocity along a locked
/// axis never enters the contact velocities the law resolves, as the
/// partner motion of a kinematic body does.
void clear_locked_axes(const btRigidBody& body, Eigen::Ref<Eigen::Matrix<double, 6, 1>> six);

/// [v, ω] of the body (world frame).
Eigen::Matrix<double, 6, 1> body_velocity(const btRigidBody& body);

/// Sets the body's linear and angular velocity from [v, ω].
void set_body_velocity(btRigidBody& body, const Eigen::Matrix<double, 6, 1>& velocity);

/// What a prediction made before a step sees of a rigid body as that step's
/// solver will (predict_outcome_sets of both adapters): its velocity after
/// predictUnconstraintMotion's damping (dynamic bodies only; with zero
/// damping the factor is btPow(1, h) = 1 exactly) and its force after the
/// world's applyGravity (active dynamic bodies only).
btVector3 predicted_linear(const btRigidBody& body, btScalar h);
btVector3 predicted_angular(const btRigidBody& body, btScalar h);
btVector3 predicted_force(const btRigidBody& body);

/// Where both adapters read a rigid body's state: the step's own (in the
/// solver: velocities without this step's forces, the forces the world
/// applied), or, with `next_step`, the state the next step of length `h`
/// will see (a prediction made before it: predicted_linear, …). Collection
/// and assembly are the same for both.
struct VelocitySource {
  bool next_step = false;
  btScalar h = 0;

  // Inline: collect_points reads two bodies per manifold point of every
  // batch (a resting pile's per-step scan).
  btVector3 linear(const btRigidBody& body) const {
    return next_step ? predicted_linear(body, h) : body.getLinearVelocity();
  }
  btVector3 angular(const btRigidBody& body) const {
    return next_step ? predicted_angular(body, h) : body.getAngularVelocity();
  }
  btVector3 force(const btRigidBody& body) const { return next_step ? predicted_force(body) : body.getTotalForce(); }
  /// Velocity of the material point at `relative` from the centre of mass
  /// (btRigidBody::getVelocityInLocalPoint's arithmetic).
  btVector3 at_relative(const btRigidBody& body, const btVector3& relative) const {
    return linear(body) + angular(body).cross(relative);
  }
};

/// Displaces a body by [Δx, Δθ] (Δθ a rotation vector, world frame; the
/// position-level separation). Its velocities are kept; for an anisotropic
/// body a turn Δθ changes the world inertia under the kept ω, and so the
/// kinetic energy, by O(|Δθ|) relative (impact reports give the energy
/// before the move, in the metric the law used).
void move_body(btRigidBody& body, const Eigen::Matrix<double, 6, 1>& delta);

}  // namespace simpact::bullet::internal
