#include "bullet/joint_rows.h"

#include <BulletDynamics/ConstraintSolver/btContactSolverInfo.h>
#include <BulletDynamics/ConstraintSolver/btTypedConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <LinearMath/btAlignedObjectArray.h>

#include <Eigen/Eigenvalues>
#include <Eigen/SparseCholesky>

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <string>
#include <vector>

namespace simpact::bullet::internal {
namespace {

// One row of the getInfo2 scratch, in btScalars. The four Jacobian blocks are
// whole btVector3 slots (4 scalars, 16-byte aligned): point-to-point and hinge
// write complete btVector3s, w component included.
constexpr int kJ1Linear = 0;
constexpr int kJ1Angular = 4;
constexpr int kJ2Linear = 8;
constexpr int kJ2Angular = 12;
constexpr int kError = 16;
constexpr int kCfm = 17;
constexpr int kLower = 18;
constexpr int kUpper = 19;
constexpr int kRowSkip = 20;
static_assert(kRowSkip * sizeof(btScalar) % 16 == 0,
              "every row's btVector3 slots must stay 16-byte aligned");
static_assert(sizeof(btVector3) == 4 * sizeof(btScalar), "btVector3 is four btScalars");

/// getInfo2 scratch for one constraint, preset as btSequentialImpulseConstraint-
/// Solver::convertJoint presets its rows: zero Jacobians and errors, cfm =
/// m_globalCfm, bounds ∓SIMD_INFINITY.
class RowScratch {
 public:
  btTypedConstraint::btConstraintInfo2 prepare(int rows, const btContactSolverInfo& info) {
    // One spare row: a constraint writing one row past its getInfo1 count
    // would corrupt the next row in the stock solver; here it costs nothing.
    data_.resize((rows + 1) * kRowSkip);
    for (int i = 0; i < data_.size(); ++i) data_[i] = btScalar(0);
    for (int j = 0; j <= rows; ++j) {
      btScalar* row = &data_[j * kRowSkip];
      row[kCfm] = info.m_globalCfm;
      row[kLower] = -SIMD_INFINITY;
      row[kUpper] = SIMD_INFINITY;
    }
    btScalar* base = &data_[0];
    btTypedConstraint::btConstraintInfo2 info2;
    info2.fps = btScalar(1) / info.m_timeStep;
    info2.erp = info.m_erp;
    info2.m_J1linearAxis = base + kJ1Linear;
    info2.m_J1angularAxis = base + kJ1Angular;
    info2.m_J2linearAxis = base + kJ2Linear;
    info2.m_J2angularAxis = base + kJ2Angular;
    info2.rowskip = kRowSkip;
    info2.m_constraintError = base + kError;
    info2.cfm = base + kCfm;
    info2.m_lowerLimit = base + kLower;
    info2.m_upperLimit = base + kUpper;
    info2.m_numIterations = info.m_numIterations;
    info2.m_damping = info.m_damping;
    return info2;
  }

  const btScalar* row(int j) const { return &data_[j * kRowSkip]; }

 private:
  btAlignedObjectArray<btScalar> data_;  // 16-byte aligned storage
};

bool is_infinite_interval(double lower, double upper) {
  return lower <= -kInfiniteBound && upper >= kInfiniteBound;
}

}  // namespace

int collect_bilateral_joint_rows(btTypedConstraint* const* constraints, int num_constraints,
                                 const std::function<int(const btRigidBody*)>& body_index,
                                 int num_bodies, const btContactSolverInfo& info, std::vector<JointRow>& rows) {
  if (num_constraints < 0 || num_bodies < 0)
    throw std::invalid_argument("append_bilateral_joint_rows: negative count");
  if (num_constraints > 0 && constraints == nullptr)
    throw std::invalid_argument("append_bilateral_joint_rows: null constraint array");
  if (!(info.m_timeStep > btScalar(0)))
    throw std::invalid_argument("append_bilateral_joint_rows: m_timeStep must be positive");

  const btRigidBody* const fixed_body = &btTypedConstraint::getFixedBody();
  const auto index_of = [&](const btRigidBody& body) -> int {
    if (&body == fixed_body) return -1;
    const int index = body_index(&body);
    if (index < -1 || index >= num_bodies)
      throw std::out_of_range("append_bilateral_joint_rows: body index " + std::to_string(index) +
                              " outside [-1, " + std::to_string(num_bodies) + ")");
    return index;
  };

  RowScratch scratch;
  // c of one side outside the cluster: J·[v, ω] at the body's velocity.
  const auto outside = [&](const btRigidBody& body, const btScalar* linear, const btScalar* angular) {
    if (&body == fixed_body) return 0.0;
    const btVector3& v = body.getLinearVelocity();
    const btVector3& w = body.getAngularVelocity();
    double sum = 0.0;
    for (int i = 0; i < 3; ++i)
      sum += double(linear[i]) * double(v[i]) + double(angular[i]) * double(w[i]);
    return sum;
  };
  const auto block = [](const btScalar* linear, const btScalar* angular) {
    Eigen::Matrix<double, 1, 6> g;
    for (int i = 0; i < 3; ++i) {
      g[i] = static_cast<double>(linear[i]);
      g[3 + i] = static_cast<double>(angular[i]);
    }
    return g;
  };
  const size_t before = rows.size();
  for (int c = 0; c < num_constraints; ++c) {
    btTypedConstraint* constraint = constraints[c];
    if (constraint == nullptr || !constraint->isEnabled()) continue;
    const int a = index_of(constraint->getRigidBodyA());
    const int b = index_of(constraint->getRigidBodyB());
    if (a < 0 && b < 0) continue;

    // The stock solver's sequence (convertJoints): buildJacobian, getInfo1,
    // then getInfo2 into preset rows.
    constraint->buildJacobian();
    btTypedConstraint::btConstraintInfo1 info1;
    info1.m_numConstraintRows = 0;
    info1.nub = 0;
    constraint->getInfo1(&info1);
    const int count = info1.m_numConstraintRows;
    if (count <= 0) continue;
    btTypedConstraint::btConstraintInfo2 info2 = scratch.prepare(count, info);
    constraint->getInfo2(&info2);

    // The stock solver clamps every bound to ±breaking threshold: a breakable
    // joint has finite rows and is left to it (it also does the breaking).
    const double threshold = static_cast<double>(constraint->getBreakingImpulseThreshold());
    for (int j = 0; j < count; ++j) {
      const btScalar* row = scratch.row(j);
      const double lower = std::max(static_cast<double>(row[kLower]), -threshold);
      const double upper = std::min(static_cast<double>(row[kUpper]), threshold);
      if (!is_infinite_interval(lower, upper)) continue;
      JointRow g;
      if (a >= 0) {
        g.a = a;
        g.on_a = block(row + kJ1Linear, row + kJ1Angular);
      }
      if (b >= 0) {
        // The same body on both sides (never in Bullet) adds up on one block.
        if (b == a) {
          g.on_a += block(row + kJ2Linear, row + kJ2Angular);
        } else {
          g.b = b;
          g.on_b = block(row + kJ2Linear, row + kJ2Angular);
        }
      }
      if (!g.on_a.allFinite() || !g.on_b.allFinite()) continue;
      if ((g.on_a.array() == 0.0).all() && (g.on_b.array() == 0.0).all()) continue;
      double c_row = 0.0;
      if (a < 0) c_row += outside(constraint->getRigidBodyA(), row + kJ1Linear, row + kJ1Angular);
      if (b < 0) c_row += outside(constraint->getRigidBodyB(), row + kJ2Linear, row + kJ2Angular);
      g.offset = std::isfinite(c_row) ? c_row : 0.0;
      rows.push_back(g);
    }
  }
  return static_cast<int>(rows.size() - before);
}

int append_bilateral_joint_rows(btTypedConstraint* const* constraints, int num_constraints,
                                const std::function<int(const btRigidBody*)>& body_index,
                                int num_bodies, const btContactSolverInfo& info,
                                Eigen::MatrixXd& G, Eigen::VectorXd* offsets) {
  if (num_bodies < 0) throw std::invalid_argument("append_bilateral_joint_rows: negative count");
  const Eigen::Index n = 6 * static_cast<Eigen::Index>(num_bodies);
  if (G.rows() == 0) {
    G.resize(0, n);
  } else if (G.cols() != n) {
    throw std::invalid_argument("append_bilateral_joint_rows: G has " + std::to_string(G.cols()) +
                                " columns, the cluster " + std::to_string(n));
  }
  if (offsets != nullptr && offsets->size() != G.rows())
    throw std::invalid_argument("append_bilateral_joint_rows: offsets has " +
                                std::to_string(offsets->size()) + " entries, G " +
                                std::to_string(G.rows()) + " rows");
  std::vector<JointRow> rows;
  collect_bilateral_joint_rows(constraints, num_constraints, body_index, num_bodies, info, rows);
  const Eigen::Index old_rows = G.rows();
  G.conservativeResize(old_rows + static_cast<Eigen::Index>(rows.size()), n);
  if (offsets != nullptr) offsets->conservativeResize(G.rows());
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const Eigen::Index r = old_rows + static_cast<Eigen::Index>(i);
    G.row(r).setZero();
    if (rows[i].a >= 0) G.block<1, 6>(r, 6 * rows[i].a) += rows[i].on_a;
    if (rows[i].b >= 0) G.block<1, 6>(r, 6 * rows[i].b) += rows[i].on_b;
    if (offsets != nullptr) (*offsets)[r] = rows[i].offset;
  }
  return static_cast<int>(rows.size());
}

Eigen::MatrixXd constrained_inverse_mass(const Eigen::MatrixXd& inverse_mass,
                                         const Eigen::MatrixXd& G) {
  return joint_metric(inverse_mass, G).inverse_mass;
}

Eigen::VectorXd JointMetric::violating(const Eigen::MatrixXd& G, const Eigen::VectorXd& velocity,
                                       const Eigen::VectorXd& offsets) const {
  if (reduce.rows() == 0) return Eigen::VectorXd::Zero(velocity.size());
  Eigen::VectorXd drift = G * velocity;
  if (offsets.size() == drift.size()) drift += offsets;
  return response * (reduce * drift);
}

namespace {

// joint_metric for groups of at most MaxN coordinates and MaxRows joint rows
// (Eigen::Dynamic: any). With fixed bounds every matrix lives on the stack
// (body_joint_metric). Same arithmetic either way. `constrained` false: no
// row constrains anything (W, reduce empty; M⁻¹_G = M⁻¹).
template <int MaxN, int MaxRows>
struct SizedJointMetric {
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxN, MaxN> inverse_mass;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxN, MaxRows> response;
  Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxRows, MaxRows> reduce;
  bool constrained = false;
};

template <int MaxN, int MaxRows, class Mass, class Rows>
SizedJointMetric<MaxN, MaxRows> joint_metric_sized(const Mass& inverse_mass, const Rows& G) {
  using Index = Eigen::Index;
  constexpr int kMaxHalves = MaxN == Eigen::Dynamic ? Eigen::Dynamic : MaxN / 3;
  using VectorH = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, kMaxHalves, 1>;
  using VectorR = Eigen::Matrix<double, Eigen::Dynamic, 1, 0, MaxRows, 1>;
  using IndexR = Eigen::Matrix<Index, Eigen::Dynamic, 1, 0, MaxRows, 1>;
  using MatrixNN = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxN, MaxN>;
  using MatrixRN = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxRows, MaxN>;
  using MatrixNR = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxN, MaxRows>;
  using MatrixRR = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, 0, MaxRows, MaxRows>;

  SizedJointMetric<MaxN, MaxRows> metric;
  const Index n = inverse_mass.rows();
  metric.inverse_mass = inverse_mass;
  // Reach of each row: Σ_b |G_i,b,lin|² μ_b,lin + |G_i,b,ang|² μ_b,ang, μ the
  // largest diagonal entry of body b's linear / angular block
  // (kJointRankTolerance). Rows with no reach touch only immobile DOFs and
  // constrain nothing.
  const Index bodies = n / 6;
  VectorH mobility(2 * bodies);  // [lin_0, ang_0, lin_1, ang_1, …]
  for (Index h = 0; h < 2 * bodies; ++h)
    mobility[h] = std::max(0.0, inverse_mass.diagonal().segment(3 * h, 3).maxCoeff());
  IndexR kept(G.rows());
  VectorR scale(G.rows());
  Index k = 0;
  for (Index i = 0; i < G.rows(); ++i) {
    double reach = 0.0;
    for (Index h = 0; h < 2 * bodies; ++h) reach += G.row(i).segment(3 * h, 3).squaredNorm() * mobility[h];
    if (reach > 0.0 && std::isfinite(reach)) {
      kept[k] = i;
      scale[k] = 1.0 / std::sqrt(reach);
      ++k;
    }
  }
  if (k == 0) return metric;

  MatrixRN scaled(k, n);
  for (Index r = 0; r < k; ++r) scaled.row(r) = G.row(kept[r]) * scale[r];
  const MatrixNR mgt = metric.inverse_mass * scaled.transpose();  // M⁻¹Ĝᵀ, n×k
  MatrixRR gram = scaled * mgt;                                    // Ĝ M⁻¹ Ĝᵀ
  gram = (0.5 * (gram + gram.transpose())).eval();
  const Eigen::SelfAdjointEigenSolver<MatrixRR> eigen(gram);
  if (eigen.info() != Eigen::Success)
    throw std::runtime_error("constrained_inverse_mass: eigen-decomposition failed");

  // M⁻¹Gᵀ(G M⁻¹ Gᵀ)⁺G M⁻¹ = W Wᵀ with W = M⁻¹Ĝᵀ U_r Λ_r^{-1/2} over the kept
  // eigenpairs (row scaling does not change the exact projection).
  IndexR rank(k);
  Index r_count = 0;
  for (Index j = 0; j < k; ++j)
    if (eigen.eigenvalues()[j] > kJointRankTolerance) rank[r_count++] = j;
  if (r_count == 0) return metric;
  metric.response.resize(n, r_count);
  metric.reduce = MatrixRR::Zero(r_count, G.rows());
  for (Index r = 0; r < r_count; ++r) {
    const Index j = rank[r];
    metric.response.col(r) = mgt * eigen.eigenvectors().col(j) / std::sqrt(eigen.eigenvalues()[j]);
    for (Index q = 0; q < k; ++q)
      metric.reduce(r, kept[q]) = eigen.eigenvectors()(q, j) * scale[q] / std::sqrt(eigen.eigenvalues()[j]);
  }
  MatrixNN& result = metric.inverse_mass;
  result.noalias() -= metric.response * metric.response.transpose();
  // Exact symmetry: both triangles get the same rounded mean.
  for (Index j = 0; j < n; ++j) {
    for (Index i = j + 1; i < n; ++i) {
      const double mean = 0.5 * (result(i, j) + result(j, i));
      result(i, j) = mean;
      result(j, i) = mean;
    }
  }
  metric.constrained = true;
  return metric;
}

}  // namespace

JointMetric joint_metric(const Eigen::MatrixXd& inverse_mass, const Eigen::MatrixXd& G) {
  JointMetric metric;
  metric.inverse_mass = inverse_mass;
  metric.response.resize(inverse_mass.rows(), 0);
  metric.reduce.resize(0, G.rows());
  const Eigen::Index n = inverse_mass.rows();
  if (inverse_mass.cols() != n)
    throw std::invalid_argument("constrained_inverse_mass: M⁻¹ is not square");
  if (G.rows() == 0) return metric;
  if (G.cols() != n)
    throw std::invalid_argument("constrained_inverse_mass: G has " + std::to_string(G.cols()) +
                                " columns, M⁻¹ " + std::to_string(n));
  if (n % 6 != 0)
    throw std::invalid_argument("constrained_inverse_mass: size is not 6 per body");
  auto sized = joint_metric_sized<Eigen::Dynamic, Eigen::Dynamic>(inverse_mass, G);
  if (!sized.constrained) return metric;
  metric.inverse_mass = std::move(sized.inverse_mass);
  metric.response = std::move(sized.response);
  metric.reduce = std::move(sized.reduce);
  return metric;
}

BodyJointMetric body_joint_metric(const Eigen::Matrix<double, 6, 6>& inverse_mass, const BodyJointRows& G,
                                  const Eigen::Matrix<double, 6, 1>& velocity, const BodyJointOffsets& offsets) {
  if (offsets.size() != G.rows())
    throw std::invalid_argument("body_joint_metric: " + std::to_string(offsets.size()) + " offsets for " +
                                std::to_string(G.rows()) + " rows");
  BodyJointMetric out;
  const auto sized = joint_metric_sized<6, kBodyJointRows>(inverse_mass, G);
  out.inverse_mass = sized.inverse_mass;
  out.violating.setZero();
  if (!sized.constrained) return out;
  const BodyJointOffsets drift = G * velocity + offsets;
  out.violating = sized.response * (sized.reduce * drift);
  out.demand = (sized.reduce * offsets).squaredNorm();
  return out;
}

Eigen::Matrix<double, 6, 6> body_inverse_mass(const btRigidBody& body) {
  const btVector3& lf = body.getLinearFactor();
  const btVector3& af = body.getAngularFactor();
  const btMatrix3x3& inertia = body.getInvInertiaTensorWorld();
  const double inv_mass = static_cast<double>(body.getInvMass());
  // Bullet forms I⁻¹_world = R diag(I⁻¹_local) Rᵀ in btScalar, symmetric only
  // to rounding (~1e-7 relative in single precision, beyond the core's
  // kSymmetryTolerance): use the mean of the two triangles, exactly symmetric.
  Eigen::Matrix<double, 6, 6> out = Eigen::Matrix<double, 6, 6>::Zero();
  for (int i = 0; i < 3; ++i) {
    out(i, i) = static_cast<double>(lf[i]) * inv_mass * static_cast<double>(lf[i]);
    for (int j = 0; j <= i; ++j) {
      const double mean =
          0.5 * (static_cast<double>(inertia[i][j]) + static_cast<double>(inertia[j][i]));
      const double value = static_cast<double>(af[i]) * mean * static_cast<double>(af[j]);
      out(3 + i, 3 + j) = value;
      out(3 + j, 3 + i) = value;
    }
  }
  return out;
}

void clear_locked_axes(const btRigidBody& body, Eigen::Ref<Eigen::Matrix<double, 6, 1>> six) {
  for (int i = 0; i < 3; ++i) {
    if (body.getLinearFactor()[i] == btScalar(0)) six[i] = 0.0;
    if (body.getAngularFactor()[i] == btScalar(0)) six[3 + i] = 0.0;
  }
}

Eigen::Matrix<double, 6, 1> body_velocity(const btRigidBody& body) {
  const btVector3& v = body.getLinearVelocity();
  const btVector3& w = body.getAngularVelocity();
  Eigen::Matrix<double, 6, 1> out;
  out << static_cast<double>(v[0]), static_cast<double>(v[1]), static_cast<double>(v[2]),
      static_cast<double>(w[0]), static_cast<double>(w[1]), static_cast<double>(w[2]);
  return out;
}

void set_body_velocity(btRigidBody& body, const Eigen::Matrix<double, 6, 1>& velocity) {
  body.setLinearVelocity(btVector3(static_cast<btScalar>(velocity[0]),
                                   static_cast<btScalar>(velocity[1]),
                                   static_cast<btScalar>(velocity[2])));
  body.setAngularVelocity(btVector3(static_cast<btScalar>(velocity[3]),
                                    static_cast<btScalar>(velocity[4]),
                                    static_cast<btScalar>(velocity[5])));
}

void move_body(btRigidBody& body, const Eigen::Matrix<double, 6, 1>& delta) {
  btTransform transform = body.getCenterOfMassTransform();
  transform.setOrigin(transform.getOrigin() +
                      btVector3{btScalar(delta[0]), btScalar(delta[1]), btScalar(delta[2])});
  const btVector3 turn{btScalar(delta[3]), btScalar(delta[4]), btScalar(delta[5])};
  if (turn.length2() > 0)
    transform.setRotation(
        (btQuaternion(turn.normalized(), turn.length()) * transform.getRotation()).normalized());
  body.setCenterOfMassTransform(transform);
}

btVector3 predicted_linear(const btRigidBody& body, btScalar h) {
  if (body.isStaticOrKinematicObject()) return body.getLinearVelocity();
  return body.getLinearVelocity() * btPow(btScalar(1) - body.getLinearDamping(), h);
}

btVector3 predicted_angular(const btRigidBody& body, btScalar h) {
  if (body.isStaticOrKinematicObject()) return body.getAngularVelocity();
  return body.getAngularVelocity() * btPow(btScalar(1) - body.getAngularDamping(), h);
}

btVector3 predicted_force(const btRigidBody& body) {
  btVector3 total = body.getTotalForce();
  if (body.isActive() && !body.isStaticOrKinematicObject() && body.getInvMass() > 0) {
    // btRigidBody::applyGravity: applyCentralForce(m_gravity), m_gravity as
    // setGravity computes it (the world sets it when the body is added).
    total += (body.getGravity() * (btScalar(1.0) / body.getInvMass())) * body.getLinearFactor();
  }
  return total;
}

}  // namespace simpact::bullet::internal

namespace simpact::bullet::internal {

bool sparse_joint_metric(const std::vector<Eigen::Matrix<double, 6, 6>>& blocks,
                         const Eigen::SparseMatrix<double, Eigen::RowMajor>& G, const Eigen::VectorXd& velocity,
                         const Eigen::VectorXd& offsets, const std::vector<Eigen::Index>& columns,
                         SparseJointMetric& out) {
  using RowMatrix = Eigen::SparseMatrix<double, Eigen::RowMajor>;
  using ColMatrix = Eigen::SparseMatrix<double, Eigen::ColMajor>;
  const Eigen::Index bodies = static_cast<Eigen::Index>(blocks.size());
  const Eigen::Index n = 6 * bodies;
  if (G.cols() != n || velocity.size() != n || offsets.size() != G.rows())
    throw std::invalid_argument("sparse_joint_metric: sizes of G, the velocity and the offsets do not match");
  // M⁻¹ (block-diagonal) and the bodies' mobilities, as joint_metric.
  std::vector<Eigen::Triplet<double>> entries;
  Eigen::VectorXd mobility(2 * bodies);
  for (Eigen::Index b = 0; b < bodies; ++b) {
    const Eigen::Matrix<double, 6, 6>& block = blocks[static_cast<size_t>(b)];
    mobility[2 * b] = std::max(0.0, block.diagonal().head<3>().maxCoeff());
    mobility[2 * b + 1] = std::max(0.0, block.diagonal().tail<3>().maxCoeff());
    for (int c = 0; c < 6; ++c)
      for (int r = 0; r < 6; ++r)
        if (block(r, c) != 0.0) entries.emplace_back(6 * b + r, 6 * b + c, block(r, c));
  }
  ColMatrix inverse_mass(n, n);
  inverse_mass.setFromTriplets(entries.begin(), entries.end());
  // Ĝ: the rows with reach, scaled to unit reach; ĉ likewise.
  entries.clear();
  std::vector<double> scaled_offsets;
  Eigen::Index kept = 0;
  for (Eigen::Index i = 0; i < G.rows(); ++i) {
    double reach = 0.0;
    for (RowMatrix::InnerIterator it(G, i); it; ++it) reach += it.value() * it.value() * mobility[it.col() / 3];
    if (!(reach > 0.0) || !std::isfinite(reach)) continue;
    const double scale = 1.0 / std::sqrt(reach);
    for (RowMatrix::InnerIterator it(G, i); it; ++it) entries.emplace_back(kept, it.col(), it.value() * scale);
    scaled_offsets.push_back(offsets[i] * scale);
    ++kept;
  }
  if (kept == 0) {  // nothing binds: M⁻¹ itself
    out.columns.resize(n, static_cast<Eigen::Index>(columns.size()));
    for (size_t k = 0; k < columns.size(); ++k)
      out.columns.col(static_cast<Eigen::Index>(k)) = Eigen::VectorXd(inverse_mass.col(columns[k]));
    out.violating = Eigen::VectorXd::Zero(n);
    out.demand = 0.0;
    return true;
  }
  RowMatrix scaled(kept, n);
  scaled.setFromTriplets(entries.begin(), entries.end());
  const ColMatrix response = inverse_mass * ColMatrix(scaled.transpose());  // M⁻¹Ĝᵀ, n × k
  const ColMatrix product = scaled * response;                           // Ĝ M⁻¹ Ĝᵀ
  const ColMatrix gram = 0.5 * (product + ColMatrix(product.transpose()));
  const Eigen::SimplicialLDLT<ColMatrix> factor(gram);
  if (factor.info() != Eigen::Success) return false;
  // A pivot is the squared distance of a scaled row from the span of the
  // rows before it (in the kinetic metric): at kJointRankTolerance or below
  // the rows are dependent, and only the pseudo-inverse is right.
  if (!(factor.vectorD().minCoeff() > kJointRankTolerance)) return false;
  const Eigen::Map<const Eigen::VectorXd> c_hat(scaled_offsets.data(), kept);
  const Eigen::VectorXd drift = scaled * velocity + c_hat;
  out.violating = response * Eigen::VectorXd(factor.solve(drift));
  out.demand = c_hat.dot(factor.solve(Eigen::VectorXd(c_hat)));
  const ColMatrix response_t = response.transpose();  // Ĝ M⁻¹, k × n
  out.columns.resize(n, static_cast<Eigen::Index>(columns.size()));
  for (size_t k = 0; k < columns.size(); ++k) {
    const Eigen::Index j = columns[k];
    const Eigen::VectorXd reach_j = response_t.col(j);  // Ĝ M⁻¹ e_j
    out.columns.col(static_cast<Eigen::Index>(k)) =
        Eigen::VectorXd(inverse_mass.col(j)) - response * Eigen::VectorXd(factor.solve(reach_j));
  }
  return out.violating.allFinite() && std::isfinite(out.demand) && out.columns.allFinite();
}

}  // namespace simpact::bullet::internal
