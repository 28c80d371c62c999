#include <simpact/bullet/multibody_impact_solver.h>
#include <simpact/bullet/checked_mlcp_solvers.h>

#include "bullet/cluster_stages.h"
#include "bullet/clustering.h"
#include "bullet/joint_rows.h"
#include "bullet/proximity.h"
#include "bullet/sparse_assembly.h"
#include "core/separation.h"

#include <Eigen/Eigenvalues>
#include <Eigen/QR>

#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btContactSolverInfo.h>
#include <BulletDynamics/ConstraintSolver/btTypedConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/ConstraintSolver/btSolverBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyConstraint.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>
#include <BulletDynamics/Featherstone/btMultiBodyMLCPConstraintSolver.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace simpact::bullet {

namespace {


using internal::to_bullet;
using internal::to_eigen;

// First free coordinate of a multibody's velocity vector: 0 with a free base,
// 6 with a fixed or kinematic one (header, "Generalized velocities").
int first_free(const btMultiBody& mb) { return mb.isBaseStaticOrKinematic() ? 6 : 0; }
int free_count(const btMultiBody& mb) { return 6 + mb.getNumDofs() - first_free(mb); }

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("simpact::bullet::MultiBodyImpactSolverConfig: " + message);
}

constexpr std::pair<MultiBodyBaseSolver, const char*> kBaseNames[] = {
    {MultiBodyBaseSolver::kSequentialImpulse, "sequential_impulse"},
    {MultiBodyBaseSolver::kMlcpDantzig, "mlcp_dantzig"},
    {MultiBodyBaseSolver::kMlcpLemke, "mlcp_lemke"},
};

}  // namespace

const char* to_string(MultiBodyBaseSolver base) {
  for (const auto& [value, name] : kBaseNames)
    if (value == base) return name;
  return "unknown";
}

MultiBodyBaseSolver parse_multibody_base_solver(const std::string& name) {
  for (const auto& [value, base_name] : kBaseNames)
    if (name == base_name) return value;
  throw std::invalid_argument("unknown multibody base solver \"" + name +
                              "\" (expected sequential_impulse, mlcp_dantzig or mlcp_lemke)");
}

void validate(const MultiBodyImpactSolverConfig& config) {
  bool known_base = false;
  for (const auto& entry : kBaseNames) known_base = known_base || entry.first == config.base;
  require(known_base, "base is not a valid MultiBodyBaseSolver (expected sequential_impulse, "
                      "mlcp_dantzig or mlcp_lemke)");
  require(config.policy != OrderPolicy::kAll, "policy kAll is not a simulation order");
  // The shared settings have the same ranges in both adapters.
  try {
    validate(static_cast<const ImpactSettings&>(config));
  } catch (const std::invalid_argument& e) {
    std::string what = e.what();
    const std::string prefix = "simpact::bullet::ImpactSolverConfig: ";
    if (what.rfind(prefix, 0) == 0) what = what.substr(prefix.size());
    require(false, what);
  }
}

struct MultiBodyImpactSolver::Impl {
  // One side of a contact point.
  struct Side {
    const btCollisionObject* object = nullptr;
    btMultiBody* multibody = nullptr;  // link collider's multibody, else null
    int link = -1;
    btRigidBody* rigid = nullptr;      // rigid body (any kind), else null
    int node = -1;                     // node index, −1 when infinitely massive
    btVector3 point{0, 0, 0};          // world contact point on this side
    double sign = 1.0;                 // +1 for A, −1 for B
  };
  struct Point {
    btManifoldPoint* point = nullptr;
    btPersistentManifold* manifold = nullptr;  // null for a synthetic point (proximity.h)
    int index = -1;                            // in the manifold
    Side a, b;
    double u = 0.0;  // pre-force relative normal velocity, > 0 separating
  };
  struct Node {
    btMultiBody* multibody = nullptr;
    btRigidBody* rigid = nullptr;
  };

  btMultiBodyDynamicsWorld* world = nullptr;
  // The world's multibody solver before this one: given back on destruction.
  btMultiBodyConstraintSolver* previous = nullptr;
  // The base solver (header, "The base solver") and its MLCP interface; the
  // interface outlives the solver that points to it (declared first).
  std::unique_ptr<btMLCPSolverInterface> mlcp;
  std::unique_ptr<btMultiBodyConstraintSolver> base;
  std::unordered_map<const btMultiBody*, Eigen::VectorXd> snapshot;  // pre-force velocity vectors
  std::vector<Node> nodes;
  std::unordered_map<const void*, int> node_index;
  std::vector<Point> points;
  internal::Clusters clusters;
  // What the base solve sees differently (muted restitutions, hidden
  // points), given back right after it.
  internal::BaseSolverHandoff handoff;
  std::vector<std::pair<btPersistentManifold*, int>> hidden;  // points to hide for this batch
  // Nodes of clusters whose resolution failed in this batch (1): handed to
  // the base solver with Bullet's restitution; and whether the whole batch
  // is (the impact phase failed outside any cluster).
  std::vector<char> failed;
  bool all_failed = false;
  // btMultiBodyConstraints of the batch that are not in the impact metric
  // (header, "Multibody constraints"): the multibodies they bind, and the
  // island of a rigid or world partner (−1 for the world).
  struct Binding {
    const char* kind = "";
    const btMultiBody* a = nullptr;
    const btMultiBody* b = nullptr;
    int rigid_island = -1;
  };
  std::vector<Binding> bindings;
  // btMultiBodyConstraints of the batch that enter the impact metric (header,
  // "Joints and multibody constraints"): bilateral, between two multibodies.
  std::vector<btMultiBodyConstraint*> couplings;
  btAlignedObjectArray<btScalar> scratch_r, jac;
  btAlignedObjectArray<btVector3> scratch_v;
  btAlignedObjectArray<btMatrix3x3> scratch_m;
  internal::LawState law;  // the laws' solvers and kRandom counter
  std::uint64_t steps = 0;
  internal::TouchingPoints touching;   // synthetic points of this batch (proximity.h)
  btDispatcher* dispatcher = nullptr;  // of the batch being solved

  // Where rigid bodies are read: as they are, or, in a prediction
  // (predict_outcome_sets), as the next step's solver will see them.
  internal::VelocitySource source;

  int node_of_multibody(btMultiBody* mb) {
    const auto [it, inserted] = node_index.emplace(mb, static_cast<int>(nodes.size()));
    if (inserted) nodes.push_back({mb, nullptr});
    return it->second;
  }
  int node_of_rigid(btRigidBody* body) {
    if (!internal::is_dynamic(body)) return -1;
    const auto [it, inserted] = node_index.emplace(body, static_cast<int>(nodes.size()));
    if (inserted) nodes.push_back({nullptr, body});
    return it->second;
  }

  // Full velocity vector of a multibody (6 + n).
  static Eigen::VectorXd velocity_vector(const btMultiBody& mb) {
    const int n = 6 + mb.getNumDofs();
    Eigen::VectorXd v(n);
    for (int k = 0; k < n; ++k) v[k] = double(mb.getVelocityVector()[k]);
    return v;
  }
  // The pre-force velocity vector: the snapshot, or the current one (with a
  // flag) when there is none.
  Eigen::VectorXd pre_force(const btMultiBody& mb, bool* found = nullptr) const {
    const auto it = snapshot.find(&mb);
    const bool ok = it != snapshot.end() && it->second.size() == 6 + mb.getNumDofs();
    if (found != nullptr) *found = ok;
    return ok ? it->second : velocity_vector(mb);
  }

  // Bullet's contact Jacobian of a multibody side along `direction` (sign
  // applied), in double (6 + n).
  Eigen::VectorXd multibody_jacobian(const Side& side, const btVector3& direction) {
    btMultiBody& mb = *side.multibody;
    const int n = 6 + mb.getNumDofs();
    jac.resize(n);
    mb.fillContactJacobianMultiDof(side.link, side.point, direction * btScalar(side.sign), &jac[0],
                                   scratch_r, scratch_v, scratch_m);
    Eigen::VectorXd out(n);
    for (int k = 0; k < n; ++k) out[k] = double(jac[k]);
    return out;
  }
};

namespace {

using Impl = MultiBodyImpactSolver::Impl;

double world_gravity(const Impl& s) {
  return s.world != nullptr ? double(s.world->getGravity().length()) : 0.0;
}

internal::StrikeThresholds strikes_for(const MultiBodyImpactSolverConfig& config, double gravity, double h) {
  return internal::strike_thresholds(config.impact_threshold, config.sustained_threshold, gravity, h);
}

double node_gravity(const Impl& s, const Impl::Node& node) {
  return node.rigid != nullptr ? double(node.rigid->getGravity().length()) : world_gravity(s);
}

Impl::Side make_side(Impl& s, const btCollisionObject* object, const btVector3& point, double sign) {
  Impl::Side side;
  side.object = object;
  side.point = point;
  side.sign = sign;
  if (const btMultiBodyLinkCollider* collider = btMultiBodyLinkCollider::upcast(object)) {
    side.multibody = collider->m_multiBody;
    side.link = collider->m_link;
    const btMultiBody& mb = *side.multibody;
    const bool moves = free_count(mb) > 0 && (side.link >= 0 || !mb.isBaseStaticOrKinematic());
    if (moves) side.node = s.node_of_multibody(side.multibody);
  } else if (btRigidBody* rigid = const_cast<btRigidBody*>(btRigidBody::upcast(object))) {
    side.rigid = rigid;
    side.node = s.node_of_rigid(rigid);
  }
  return side;
}

// The side's contribution along `direction` (unit, world; the side's sign is
// applied): its part on the free coordinates of its node (written into `row`
// at `offset`, when the side is a node of the cluster) and the rest, times
// the velocities, into the returned offset. `velocity` is the multibody's
// velocity vector for the non-free part, or ignored for rigid bodies, whose
// non-node velocity is their current one.
double add_side(Impl& s, const Impl::Side& side, const btVector3& direction, Eigen::Ref<Eigen::RowVectorXd, 0, Eigen::InnerStride<>> row,
                int offset, bool in_cluster) {
  double b = 0.0;
  if (side.multibody != nullptr) {
    const btMultiBody& mb = *side.multibody;
    const Eigen::VectorXd j = s.multibody_jacobian(side, direction);
    const Eigen::VectorXd v = Impl::velocity_vector(mb);
    const int first = in_cluster ? first_free(mb) : 6 + mb.getNumDofs();
    for (int k = 0; k < 6 + mb.getNumDofs(); ++k) {
      if (k >= first)
        row[offset + k - first] += j[k];
      else
        b += j[k] * v[k];
    }
    return b;
  }
  const Eigen::Vector3d d = to_eigen(direction) * side.sign;
  if (side.rigid == nullptr) return 0.0;
  const btVector3 r = side.point - side.rigid->getCenterOfMassPosition();
  if (in_cluster) {
    row.segment<3>(offset) += d.transpose();
    row.segment<3>(offset + 3) += to_eigen(r).cross(d).transpose();
    return 0.0;
  }
  return d.dot(to_eigen(s.source.at_relative(*side.rigid, r)));
}

// Pre-force relative normal velocity of a point (detection).
double pre_force_u(Impl& s, const Impl::Point& p) {
  double u = 0.0;
  const btVector3& n = p.point->m_normalWorldOnB;
  for (const Impl::Side* side : {&p.a, &p.b}) {
    if (side->multibody != nullptr) {
      const Eigen::VectorXd j = s.multibody_jacobian(*side, n);
      u += j.dot(s.pre_force(*side->multibody));
    } else if (side->rigid != nullptr) {
      const btVector3 r = side->point - side->rigid->getCenterOfMassPosition();
      u += side->sign * double(n.dot(s.source.at_relative(*side->rigid, r)));
    }
  }
  return u;
}

// ½ vᵀ (M⁻¹)⁺ v, eigenvalues below kRankTolerance × the largest are zero.
double kinetic_energy(const Eigen::MatrixXd& inverse_mass, const Eigen::VectorXd& v) {
  if (v.size() == 0) return 0.0;
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eig(inverse_mass);
  const Eigen::VectorXd& lambda = eig.eigenvalues();
  const double largest = std::max(0.0, lambda.maxCoeff());
  const Eigen::VectorXd q = eig.eigenvectors().transpose() * v;
  double energy = 0.0;
  for (Eigen::Index i = 0; i < lambda.size(); ++i)
    if (lambda[i] > kRankTolerance * largest) energy += q[i] * q[i] / lambda[i];
  return 0.5 * energy;
}

// The name of a btMultiBodyConstraint kind that is NOT in the impact metric,
// or nullptr for the kinds that stay with the base solver after an exact
// impact (single-joint limits and motors; header, "Multibody constraints").
const char* unsupported_constraint(const btMultiBodyConstraint& constraint) {
  switch (constraint.getConstraintType()) {
    case MULTIBODY_CONSTRAINT_LIMIT:
    case MULTIBODY_CONSTRAINT_1DOF_JOINT_MOTOR:
    case MULTIBODY_CONSTRAINT_SPHERICAL_MOTOR:
    case MULTIBODY_CONSTRAINT_SPHERICAL_LIMIT:
      return nullptr;
    case MULTIBODY_CONSTRAINT_POINT_TO_POINT:
      return "btMultiBodyPoint2Point";
    case MULTIBODY_CONSTRAINT_FIXED:
      return "btMultiBodyFixedConstraint";
    case MULTIBODY_CONSTRAINT_SLIDER:
      return "btMultiBodySliderConstraint";
    case MULTIBODY_CONSTRAINT_GEAR:
      return "btMultiBodyGearConstraint";
    default:
      return "btMultiBodyConstraint of an unknown type";
  }
}

// A bilateral btMultiBodyConstraint between two multibodies whose rows
// (Bullet's own, createConstraintRows) enter the impact metric: point-to-
// point, fixed and slider constraints. A gear's target velocity may follow an
// auxiliary link the constraint does not expose, and a rigid-body partner's
// rows need Bullet's solver-body pool: those stay unsupported (fallback).
bool exact_coupling(btMultiBodyConstraint& constraint) {
  const int type = constraint.getConstraintType();
  return (type == MULTIBODY_CONSTRAINT_POINT_TO_POINT || type == MULTIBODY_CONSTRAINT_FIXED ||
          type == MULTIBODY_CONSTRAINT_SLIDER) &&
         constraint.getMultiBodyA() != nullptr && constraint.getMultiBodyB() != nullptr;
}

/// Rank tolerance of the coupling Gram matrix. Each row of G is scaled to a
/// unit diagonal (g_i M⁻¹ g_iᵀ = 1), so the eigenvalues of Ĝ M⁻¹ Ĝᵀ lie in
/// [0, rows]; a redundant row (a fixed constraint's six rows on two one-dof
/// pendulums have rank one) leaves rounding, ~1e-16 (double) or ~1e-7
/// (float) relative. 1e-5 is far above float rounding and far below any
/// independent row (≥ ~1e-2 unless two rows are within a few degrees).
constexpr double kCouplingRankTolerance = 1e-5;

// The metric of `inverse_mass` with the rows G locked in,
//   M⁻¹_G = M⁻¹ − M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ G M⁻¹,
// and the M-orthogonal correction that brings a velocity with violation
// g = G v + c onto {G v + c = 0}: M⁻¹Gᵀ (G M⁻¹ Gᵀ)⁺ g (energy never grows
// when c = 0: it is the plastic projection).
void couple(const Eigen::MatrixXd& inverse_mass, const Eigen::MatrixXd& G, const Eigen::VectorXd& violation,
            Eigen::MatrixXd& coupled, Eigen::VectorXd& correction) {
  const Eigen::Index n = inverse_mass.rows();
  coupled = inverse_mass;
  correction.setZero(n);
  std::vector<Eigen::Index> kept;
  std::vector<double> scale;
  for (Eigen::Index i = 0; i < G.rows(); ++i) {
    const double reach = G.row(i).dot(inverse_mass * G.row(i).transpose());
    if (reach > 0.0 && std::isfinite(reach)) {
      kept.push_back(i);
      scale.push_back(1.0 / std::sqrt(reach));
    }
  }
  if (kept.empty()) return;
  const Eigen::Index k = static_cast<Eigen::Index>(kept.size());
  Eigen::MatrixXd scaled(k, n);
  Eigen::VectorXd scaled_violation(k);
  for (Eigen::Index r = 0; r < k; ++r) {
    scaled.row(r) = G.row(kept[r]) * scale[r];
    scaled_violation[r] = violation[kept[r]] * scale[r];
  }
  const Eigen::MatrixXd mgt = inverse_mass * scaled.transpose();
  Eigen::MatrixXd gram = scaled * mgt;
  gram = (0.5 * (gram + gram.transpose())).eval();
  const Eigen::SelfAdjointEigenSolver<Eigen::MatrixXd> eigen(gram);
  if (eigen.info() != Eigen::Success) throw std::runtime_error("multibody coupling: eigen-decomposition failed");
  for (Eigen::Index j = 0; j < k; ++j) {
    const double lambda = eigen.eigenvalues()[j];
    if (!(lambda > kCouplingRankTolerance)) continue;
    const Eigen::VectorXd w = mgt * eigen.eigenvectors().col(j) / std::sqrt(lambda);
    coupled.noalias() -= w * w.transpose();
    correction += w * (eigen.eigenvectors().col(j).dot(scaled_violation) / std::sqrt(lambda));
  }
  coupled = (0.5 * (coupled + coupled.transpose())).eval();
}


// A stable id of a multibody for reports: its index in the attached world's
// multibody array (btMultiBodyDynamicsWorld::getMultiBody), −1 without one.
int multibody_id(const Impl& s, const btMultiBody* mb) {
  if (s.world == nullptr) return -1;
  for (int i = 0; i < s.world->getNumMultibodies(); ++i)
    if (s.world->getMultiBody(i) == mb) return i;
  return -1;
}


struct Cluster {
  const std::vector<int>& members;  // node indices
  const std::vector<int>& ids;      // point indices
};

// One cluster's rows (cluster layout, header): the law's rows
// (internal::LawRows; `admissible` is v* projected onto the couplings and
// joints) and the multibody adapter's own layout.
struct Rows : internal::LawRows {
  std::vector<int> starts;  // first coordinate of each member's block
  int n = 0;
  std::vector<int> kept;    // points (indices into cluster ids) with a non-zero row
  // M⁻¹ while it is assembled: one dense block per member (a tree's
  // articulated-body inverse inertia over its free coordinates, a rigid
  // body's 6 × 6), so memory is Σ f² for f coordinates per member; a
  // cluster with couplings or rigid joints gets the dense coupled metric
  // (`coupled`), the price of what the couplings join. sparse() gives the
  // law its M⁻¹.
  std::vector<Eigen::MatrixXd> blocks;
  bool coupled = false;
  /// A coupling's offset c is not 0 (a moving fixed base or kinematic
  /// coordinate): the projection G v* = −c leaves v* outside the coupled
  /// metric's range, and an impact may then give energy.
  bool moving_coupling = false;
  Eigen::MatrixXd metric;  ///< the coupled M⁻¹ (coupled only)
  /// The dense M⁻¹ of the blocks (for couple()); marks the metric coupled.
  Eigen::MatrixXd& dense_metric() {
    if (!coupled) {
      metric.setZero(n, n);
      for (size_t q = 0; q < blocks.size(); ++q)
        metric.block(starts[q], starts[q], blocks[q].rows(), blocks[q].cols()) = blocks[q];
      coupled = true;
    }
    return metric;
  }
  void sparse() {
    if (coupled) {
      inverse_mass = metric.sparseView();
      return;
    }
    std::vector<Eigen::Triplet<double>> entries;
    for (size_t q = 0; q < blocks.size(); ++q)
      for (Eigen::Index c = 0; c < blocks[q].cols(); ++c)
        for (Eigen::Index r = 0; r < blocks[q].rows(); ++r)
          if (blocks[q](r, c) != 0.0) entries.emplace_back(starts[q] + r, starts[q] + c, blocks[q](r, c));
    internal::set_from_ordered_triplets(entries, n, n, inverse_mass);  // column by column, as emitted
  }
  /// ½ vᵀ (M⁻¹)⁺ v [J], per block when uncoupled.
  double energy(const Eigen::VectorXd& v) const {
    if (coupled) return kinetic_energy(metric, v);
    double e = 0.0;
    for (size_t q = 0; q < blocks.size(); ++q) e += kinetic_energy(blocks[q], v.segment(starts[q], blocks[q].rows()));
    return e;
  }
};

// `per_point` rows for each kept point of `layout`, row r along
// directions[r] at the point kept[r / per_point] (normals: one per point),
// sparse: a row holds the coordinates of its point's two members.
void build_rows(Impl& s, const Cluster& c, const std::vector<int>& local, const Rows& layout,
                int per_point, const std::vector<btVector3>& directions, SparseRowMatrix& rows,
                Eigen::VectorXd& b) {
  const int m = static_cast<int>(directions.size());
  b.setZero(m);
  internal::OuterVectorWriter<SparseRowMatrix> out(rows, m, layout.n, 12 * static_cast<Eigen::Index>(m));
  Eigen::RowVectorXd row = Eigen::RowVectorXd::Zero(layout.n);  // one row's scratch
  for (int r = 0; r < m; ++r) {
    const Impl::Point& p = s.points[c.ids[layout.kept[r / per_point]]];
    for (const Impl::Side* side : {&p.a, &p.b}) {
      const bool in = side->node >= 0;
      const int offset = in ? layout.starts[local[side->node]] : 0;
      b[r] += add_side(s, *side, directions[r], row, offset, in);
    }
    for (const Impl::Side* side : {&p.a, &p.b}) {
      if (side->node < 0) continue;
      const int q = local[side->node];
      const int end = q + 1 < static_cast<int>(layout.starts.size()) ? layout.starts[q + 1] : layout.n;
      for (int k = layout.starts[q]; k < end; ++k) {
        out.add(k, row[k]);  // zeros are left out
        row[k] = 0.0;
      }
    }
    out.next();
  }
  out.finish();
}

}  // namespace

namespace {

void make_base(Impl& s, MultiBodyBaseSolver kind) {
  s.base.reset();
  s.mlcp.reset();
  switch (kind) {
    case MultiBodyBaseSolver::kSequentialImpulse:
      s.base = std::make_unique<btMultiBodyConstraintSolver>();
      return;
    case MultiBodyBaseSolver::kMlcpDantzig:
      // Bullet's MLCP solvers with the checks they lack (checked_mlcp_solvers.h).
      s.mlcp = std::make_unique<CheckedDantzigSolver>();
      break;
    case MultiBodyBaseSolver::kMlcpLemke:
      s.mlcp = std::make_unique<CheckedLemkeSolver>();
      break;
  }
  s.base = std::make_unique<btMultiBodyMLCPConstraintSolver>(s.mlcp.get());
}

}  // namespace

MultiBodyImpactSolver::MultiBodyImpactSolver(btMultiBodyDynamicsWorld& world,
                                             MultiBodyImpactSolverConfig config)
    : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  validate(config_);
  make_base(*impl_, config_.base);
  impl_->world = &world;
  impl_->previous = dynamic_cast<btMultiBodyConstraintSolver*>(world.getConstraintSolver());
  world.setMultiBodyConstraintSolver(this);
}

MultiBodyImpactSolver::~MultiBodyImpactSolver() {
  btMultiBodyDynamicsWorld& world = *impl_->world;
  if (world.getConstraintSolver() == this && impl_->previous != nullptr)
    world.setMultiBodyConstraintSolver(impl_->previous);
}

btMultiBodyDynamicsWorld& MultiBodyImpactSolver::world() const { return *impl_->world; }

void MultiBodyImpactSolver::set_config(MultiBodyImpactSolverConfig config) {
  validate(config);
  if (config.base != config_.base) make_base(*impl_, config.base);
  config_ = std::move(config);
}

btMultiBodyConstraintSolver& MultiBodyImpactSolver::base_solver() { return *impl_->base; }
const btMultiBodyConstraintSolver& MultiBodyImpactSolver::base_solver() const { return *impl_->base; }

void MultiBodyImpactSolver::prepareSolve(int num_bodies, int num_manifolds) {
  impl_->base->prepareSolve(num_bodies, num_manifolds);
  // btMultiBodyDynamicsWorld::solveExternalForces calls this before it adds
  // gravity and steps the multibodies' velocities: the pre-force snapshot.
  Impl& s = *impl_;
  s.snapshot.clear();
  if (s.world == nullptr) return;
  for (int i = 0; i < s.world->getNumMultibodies(); ++i) {
    const btMultiBody* mb = s.world->getMultiBody(i);
    s.snapshot[mb] = Impl::velocity_vector(*mb);
  }
}

void MultiBodyImpactSolver::allSolved(const btContactSolverInfo& info, btIDebugDraw* debug_drawer) {
  impl_->base->allSolved(info, debug_drawer);
  ++impl_->steps;
}

void MultiBodyImpactSolver::reset() {
  impl_->base->reset();
  impl_->law.impact_counter = 0;
  impl_->steps = 0;
}

namespace {

// internal::build_clusters' view of the batch: nodes and points as collected.
struct NodeGraph {
  Impl& s;
  int num_nodes() const { return static_cast<int>(s.nodes.size()); }
  int node(const btRigidBody* body) const {
    const auto it = s.node_index.find(body);
    return it == s.node_index.end() ? -1 : it->second;
  }
  void add(btRigidBody* body) { s.node_of_rigid(body); }
  int num_points() const { return static_cast<int>(s.points.size()); }
  int end_a(int k) const { return s.points[static_cast<size_t>(k)].a.node; }
  int end_b(int k) const { return s.points[static_cast<size_t>(k)].b.node; }
};

// One cluster of the batch as the shared pipeline sees it
// (internal::run_cluster): the multibody adapter's plan inputs, assembly in
// generalized coordinates (header, "Generalized velocities"), outcome checks
// and write-back.
struct MultibodyCluster {
  MultibodyCluster(Impl& state, const MultiBodyImpactSolverConfig& settings, const Cluster& cluster,
                   btTypedConstraint** joints, int num_joints, const btContactSolverInfo& solver_info)
      : s(state), config(settings), c(cluster), constraints(joints), num_constraints(num_joints),
        info(solver_info), h(double(solver_info.m_timeStep)) {}

  Impl& s;
  const MultiBodyImpactSolverConfig& config;
  const Cluster& c;
  btTypedConstraint** constraints;
  int num_constraints;
  const btContactSolverInfo& info;
  double h;
  // The cluster layout: multibodies first, then rigid bodies.
  std::vector<int> order;
  std::vector<int> local;        // node → position in `order`, −1 outside the cluster
  Rows rows;
  bool assembled = false;
  std::vector<btVector3> normals;  // of the kept rows
  Eigen::VectorXd base_velocity;   // what δ is added to: v_post (multibody), v (rigid)
  Eigen::VectorXd v_star;          // what δ is measured from (before the projections)
  Eigen::VectorXd written;         // the velocities apply() writes
  Eigen::VectorXd distances;       // policy time_of_impact
  Eigen::VectorXd applied;         // v⁺, once applied

  static ImpactReport::Contact report_contact(const Impl::Point& p, double approach) {
    return internal::contact_report(p.a.object, p.b.object, *p.point, approach);
  }
  static internal::Assembly fail(std::string why) { return {internal::Assembly::kFailed, std::move(why)}; }

  internal::ClusterPlan plan() const {
    double gravity = 0.0;
    for (const int j : c.members) gravity = std::max(gravity, node_gravity(s, s.nodes[j]));
    internal::ClusterPlan plan(strikes_for(config, gravity, h));
    for (const int id : c.ids) plan.add(s.points[id].u, *s.points[id].point, s.points[id].manifold);
    internal::decide_law(config, static_cast<int>(c.ids.size()), plan);
    return plan;
  }
  int candidates() const { return static_cast<int>(c.ids.size()); }
  std::vector<ImpactReport::Contact> unresolved_contacts() const {
    std::vector<ImpactReport::Contact> out;
    for (const int id : c.ids) out.push_back(report_contact(s.points[id], -s.points[id].u));
    return out;
  }

  // The layout (order, local, rows.starts, rows.n); whether every multibody
  // has its pre-force snapshot.
  bool layout() {
    order = c.members;
    std::stable_partition(order.begin(), order.end(), [&](int j) { return s.nodes[j].multibody != nullptr; });
    local.assign(s.nodes.size(), -1);
    rows.starts.clear();
    rows.n = 0;
    bool snapshots = true;
    for (int q = 0; q < static_cast<int>(order.size()); ++q) {
      const Impl::Node& node = s.nodes[order[q]];
      local[order[q]] = q;
      rows.starts.push_back(rows.n);
      if (node.multibody != nullptr) {
        bool found = false;
        s.pre_force(*node.multibody, &found);
        snapshots = snapshots && found;
        rows.n += free_count(*node.multibody);
      } else {
        rows.n += 6;
      }
    }
    return snapshots;
  }

  internal::Assembly assemble(internal::ClusterPlan& plan, ImpactReport&, ImpactStats&) {
    const bool snapshots = layout();
    // Non-finite restitution or friction on any point of the cluster (a
    // user's NaN, or an overflowing combiner) is bad input for the law.
    for (const int id : c.ids) {
      const btManifoldPoint& point = *s.points[id].point;
      if (!std::isfinite(double(point.m_combinedRestitution)) || !std::isfinite(double(point.m_combinedFriction))) {
        return fail("non-finite combined restitution or friction on a contact point");
      }
    }
    // Multibody constraints that are not in the impact metric.
    for (const Impl::Binding& binding : s.bindings) {
      bool binds = false;
      for (const int j : c.members) {
        const Impl::Node& node = s.nodes[j];
        binds = binds || (node.multibody != nullptr && (node.multibody == binding.a || node.multibody == binding.b)) ||
                (node.rigid != nullptr && binding.rigid_island >= 0 && node.rigid->getIslandTag() == binding.rigid_island);
      }
      if (binds) {
        return fail(std::string(binding.kind) +
                 " binds a body of the cluster and is not part of the impact metric (its rows are not "
                 "modelled in the impact)");
      }
    }
    if (!snapshots) {
      return fail("no pre-force snapshot of a multibody (not in the world when the step began)");
    }

    // Inverse inertia and mid-step velocity (header, "Step order").
    rows.coupled = false;
    rows.moving_coupling = false;
    rows.blocks.assign(order.size(), Eigen::MatrixXd());
    rows.admissible.resize(rows.n);
    base_velocity.resize(rows.n);
    std::vector<int> rigid_local;  // rigid members' positions in `order`
    for (int q = 0; q < static_cast<int>(order.size()); ++q) {
      const Impl::Node& node = s.nodes[order[q]];
      const int o = rows.starts[q];
      if (node.multibody != nullptr) {
        btMultiBody& mb = *node.multibody;
        const int full = 6 + mb.getNumDofs(), first = first_free(mb), f = free_count(mb);
        const Eigen::VectorXd post = Impl::velocity_vector(mb);
        const Eigen::VectorXd pre = s.pre_force(mb);
        rows.admissible.segment(o, f) = 0.5 * (pre + post).tail(f);
        base_velocity.segment(o, f) = post.tail(f);
        btAlignedObjectArray<btScalar> force, out;
        force.resize(full);
        out.resize(full);
        Eigen::MatrixXd block(f, f);
        for (int k = 0; k < f; ++k) {
          for (int i = 0; i < full; ++i) force[i] = 0;
          force[first + k] = 1;
          mb.calcAccelerationDeltasMultiDof(&force[0], &out[0], s.scratch_r, s.scratch_v);
          for (int i = 0; i < f; ++i) block(i, k) = double(out[first + i]);
        }
        const double scale = block.cwiseAbs().maxCoeff();
        const double asymmetry = (block - block.transpose()).cwiseAbs().maxCoeff();
        if (!block.allFinite() || !(scale > 0.0) || asymmetry > kAbaAsymmetryTolerance * scale) {
          return fail("articulated-body inverse inertia is not finite or not symmetric (asymmetry " +
                   std::to_string(asymmetry) + " of " + std::to_string(scale) + ")");
        }
        rows.blocks[static_cast<size_t>(q)] = 0.5 * (block + block.transpose());
      } else {
        const btRigidBody& body = *node.rigid;
        rigid_local.push_back(q);
        rows.blocks[static_cast<size_t>(q)] = internal::body_inverse_mass(body);
        Eigen::Matrix<double, 6, 1> v;
        v << to_eigen(s.source.linear(body)), to_eigen(s.source.angular(body));
        base_velocity.segment<6>(o) = v;
        rows.admissible.segment<3>(o) =
            v.head<3>() + to_eigen(s.source.force(body) * body.getInvMass() * btScalar(0.5 * h));
        rows.admissible.segment<3>(o + 3) =
            v.tail<3>() + to_eigen(body.getInvInertiaTensorWorld() * body.getTotalTorque() * btScalar(0.5 * h));
        // As in the rigid adapter: velocity along a locked axis passes through.
        internal::clear_locked_axes(body, rows.admissible.segment<6>(o));
      }
    }
    v_star = rows.admissible;  // what δ is measured from
    // Multibody couplings (header, "Joints and multibody constraints"): Bullet's
    // own rows G of each coupling of the cluster; the metric gets them locked
    // in, and v* is first projected onto G v + c = 0 (M-orthogonally: the
    // plastic correction of the drift Bullet's soft constraints leave).
    {
      std::vector<btMultiBodyConstraint*> mine;
      for (btMultiBodyConstraint* coupling : s.couplings)
        for (const btMultiBody* mb : {coupling->getMultiBodyA(), coupling->getMultiBodyB()}) {
          const auto it = s.node_index.find(mb);
          if (it != s.node_index.end() && local[it->second] >= 0) {
            mine.push_back(coupling);
            break;
          }
        }
      if (!mine.empty()) {
        btMultiBodyJacobianData data;
        // A pool with one fixed solver body (the rows of multibody–multibody
        // couplings never read it; Bullet's data structure expects one).
        btAlignedObjectArray<btSolverBody> pool;
        btSolverBody& fixed = pool.expandNonInitializing();
        fixed.m_worldTransform.setIdentity();
        for (btVector3* v : {&fixed.m_deltaLinearVelocity, &fixed.m_deltaAngularVelocity, &fixed.m_angularFactor,
                             &fixed.m_linearFactor, &fixed.m_invMass, &fixed.m_pushVelocity, &fixed.m_turnVelocity,
                             &fixed.m_linearVelocity, &fixed.m_angularVelocity, &fixed.m_externalForceImpulse,
                             &fixed.m_externalTorqueImpulse})
          v->setZero();
        fixed.m_originalBody = nullptr;
        data.m_solverBodyPool = &pool;
        data.m_fixedBodyId = 0;
        btMultiBodyConstraintArray coupling_rows;
        // createConstraintRows gives each multibody a companion id (its slot in
        // data.m_deltaVelocities): saved and restored around the call.
        std::vector<std::pair<btMultiBody*, int>> companions;
        for (btMultiBodyConstraint* coupling : mine)
          for (btMultiBody* mb : {coupling->getMultiBodyA(), coupling->getMultiBodyB()})
            companions.emplace_back(mb, mb->getCompanionId());
        for (const auto& [mb, id] : companions) mb->setCompanionId(-1);
        for (btMultiBodyConstraint* coupling : mine) coupling->createConstraintRows(coupling_rows, data, info);
        for (auto it = companions.rbegin(); it != companions.rend(); ++it) it->first->setCompanionId(it->second);
        const int k = coupling_rows.size();
        Eigen::MatrixXd G = Eigen::MatrixXd::Zero(k, rows.n);
        Eigen::VectorXd offset = Eigen::VectorXd::Zero(k);
        for (int r = 0; r < k; ++r) {
          const btMultiBodySolverConstraint& row = coupling_rows[r];
          const std::pair<btMultiBody*, int> sides[2] = {{row.m_multiBodyA, row.m_jacAindex},
                                                         {row.m_multiBodyB, row.m_jacBindex}};
          for (const auto& [mb, index] : sides) {
            if (mb == nullptr || index < 0) continue;
            const int full = 6 + mb->getNumDofs();
            if (index + full > data.m_jacobians.size())
              throw std::out_of_range("multibody coupling: Jacobian index outside Bullet's rows");
            const auto it = s.node_index.find(mb);
            const int q = it == s.node_index.end() ? -1 : local[it->second];
            const int first = q >= 0 ? first_free(*mb) : full;
            const Eigen::VectorXd v = Impl::velocity_vector(*mb);
            for (int kk = 0; kk < full; ++kk) {
              const double j = double(data.m_jacobians[index + kk]);
              if (kk >= first)
                G(r, rows.starts[q] + kk - first) += j;
              else
                offset[r] += j * v[kk];
            }
          }
        }
        if (!G.allFinite() || !offset.allFinite()) {
          return fail("non-finite rows of a multibody coupling constraint");
        }
        rows.moving_coupling = (offset.array() != 0.0).any();
        Eigen::MatrixXd coupled;
        Eigen::VectorXd correction;
        couple(rows.dense_metric(), G, G * rows.admissible + offset, coupled, correction);
        rows.metric = coupled;
        rows.admissible -= correction;
      }
    }
    // Rigid joints: the joint-constrained metric on the rigid sub-block.
    if (!rigid_local.empty() && num_constraints > 0) {
      const int nr = static_cast<int>(rigid_local.size());
      const int o0 = rows.starts[rigid_local.front()];  // rigid blocks are contiguous, last
      Eigen::MatrixXd G;
      internal::append_bilateral_joint_rows(
          constraints, num_constraints,
          [&](const btRigidBody* body) {
            const auto it = s.node_index.find(body);
            if (it == s.node_index.end() || local[it->second] < 0) return -1;
            return local[it->second] - rigid_local.front();
          },
          nr, info, G);
      if (G.rows() > 0) {
        // As for multibody couplings: v* is projected M-orthogonally onto the
        // joints (G v = 0) before the impact — Bullet's joints are soft, and a
        // law fed a violating v* in the locked metric can add energy. A joint to
        // a MOVING kinematic body would need its offset: such a cluster falls
        // back instead.
        for (int k = 0; k < num_constraints; ++k) {
          const btTypedConstraint& joint = *constraints[k];
          if (!joint.isEnabled()) continue;
          bool in_cluster = false, moving_kinematic = false;
          for (const btRigidBody* body : {&joint.getRigidBodyA(), &joint.getRigidBodyB()}) {
            const auto it = s.node_index.find(body);
            in_cluster = in_cluster || (it != s.node_index.end() && local[it->second] >= 0);
            moving_kinematic = moving_kinematic ||
                               (body->isKinematicObject() && (body->getLinearVelocity().length2() > 0 ||
                                                              body->getAngularVelocity().length2() > 0));
          }
          if (in_cluster && moving_kinematic) {
            return fail("a btTypedConstraint joins the cluster to a moving kinematic body");
          }
        }
        Eigen::MatrixXd G_full = Eigen::MatrixXd::Zero(G.rows(), rows.n);
        G_full.middleCols(o0, 6 * nr) = G;
        Eigen::MatrixXd coupled;
        Eigen::VectorXd correction;
        couple(rows.dense_metric(), G_full, G_full * rows.admissible, coupled, correction);
        rows.metric = coupled;
        rows.admissible -= correction;
      }
    }

    // Normal rows; rows without a free coordinate are dropped.
    normals.clear();
    rows.kept.clear();
    for (int r = 0; r < static_cast<int>(c.ids.size()); ++r) {
      rows.kept.push_back(r);
      normals.push_back(s.points[c.ids[r]].point->m_normalWorldOnB);
    }
    build_rows(s, c, local, rows, 1, normals, rows.normals, rows.offsets);
    {
      std::vector<int> kept;
      std::vector<btVector3> kept_normals;
      for (int r = 0; r < rows.normals.rows(); ++r) {
        double free_part = 0.0;
        for (SparseRowMatrix::InnerIterator it(rows.normals, r); it; ++it)
          free_part = std::max(free_part, std::abs(it.value()));
        if (free_part > kZeroRowTolerance) {  // absolute: entries are unit-normal components and lever arms [m]
          kept.push_back(rows.kept[r]);
          kept_normals.push_back(normals[r]);
        }
      }
      if (kept.size() != rows.kept.size()) {
        rows.kept = kept;
        normals = kept_normals;
        build_rows(s, c, local, rows, 1, normals, rows.normals, rows.offsets);
      }
    }
    const int m = static_cast<int>(rows.kept.size());
    if (m == 0) return {internal::Assembly::kNothing, {}};
    if (plan.tangent_rows(config)) {
      // Tangent rows: t1 along the mid-step slip, else btPlaneSpace1's frame.
      std::vector<btVector3> axes;
      for (int r = 0; r < m; ++r)
        for (const btVector3& e : {btVector3(1, 0, 0), btVector3(0, 1, 0), btVector3(0, 0, 1)})
          axes.push_back(e);
      SparseRowMatrix axis_rows;
      Eigen::VectorXd axis_b;
      build_rows(s, c, local, rows, 3, axes, axis_rows, axis_b);
      const Eigen::VectorXd relative = axis_rows * rows.admissible + axis_b;
      const Eigen::VectorXd u = rows.normals * rows.admissible + rows.offsets;
      const double approach = std::max(0.0, -u.minCoeff());
      std::vector<btVector3> tangents;  // t1, t2 of contact r at 2r, 2r + 1
      rows.friction.resize(m);
      rows.t1.resize(static_cast<size_t>(m));
      rows.t2.resize(static_cast<size_t>(m));
      for (int r = 0; r < m; ++r) {
        const Eigen::Vector3d n = to_eigen(normals[r]).normalized();
        const Eigen::Vector3d rel = relative.segment<3>(3 * r);
        const Eigen::Vector3d slip = rel - rel.dot(n) * n;
        Eigen::Vector3d& t1 = rows.t1[static_cast<size_t>(r)];
        Eigen::Vector3d& t2 = rows.t2[static_cast<size_t>(r)];
        internal::tangent_frame(n, slip, approach, t1, t2);
        t2 = n.cross(t1);  // header, "Deviations": t2 = n̂ × t1 for either t1
        tangents.push_back(to_bullet(t1));
        tangents.push_back(to_bullet(t2));
        rows.friction[r] = std::max(0.0, double(s.points[c.ids[rows.kept[r]]].point->m_combinedFriction));
      }
      build_rows(s, c, local, rows, 2, tangents, rows.tangents, rows.tangent_offsets);
    }
    rows.sparse();
    assembled = true;
    return {};
  }

  const internal::LawRows& law_rows() const { return rows; }
  bool finite() const { return rows.finite(!rows.t1.empty()); }
  ImpactReport::Contact contact(int row, double approach) const {
    return report_contact(s.points[c.ids[rows.kept[row]]], approach);
  }
  double energy_before() const { return rows.energy(rows.admissible); }
  internal::LawInputs law_inputs(const internal::ClusterPlan& plan) {
    const int m = rows.contacts();
    internal::LawInputs inputs;
    if (config.policy == OrderPolicy::kTimeOfImpact) {  // proximity.h
      distances.resize(m);
      for (int r = 0; r < m; ++r) distances[r] = double(s.points[c.ids[rows.kept[r]]].point->getDistance());
      inputs.distances = &distances;
    }
    if (plan.routh()) {
      int key = std::numeric_limits<int>::max();
      for (const int id : c.ids)
        for (const Impl::Side* side : {&s.points[id].a, &s.points[id].b})
          if (side->node >= 0) key = std::min(key, side->object->getWorldArrayIndex());
      inputs.routh_seed = internal::routh_seed(config.seed, s.steps, key);
    }
    inputs.compute_indeterminacy = config.compute_indeterminacy;
    return inputs;
  }
  // The projections onto couplings and joints are part of δ = v⁺ − v*.
  Eigen::VectorXd complete(const Eigen::VectorXd& law_velocity) const { return law_velocity; }
  double energy(const Eigen::VectorXd& velocity) const { return rows.energy(velocity); }
  // The energy above is the law's own metric, E(v) = ½ vᵀ(M⁻¹)⁺v. With
  // v* = r + n, r in the metric's range, a law's change Δ = M⁻¹Jᵀλ changes
  // it by E(r + Δ) − E(r) = −λᵀ(b + Jn) where the law, acting on
  // u = Jv* + b, conserves or dissipates: no impact may raise E unless
  // b + Jn ≠ 0. So the cluster is invariant when
  //  - every offset b is exactly 0 (no partner outside the cluster moves: a
  //    kinematic body, a moving fixed base);
  //  - no coupling has an offset c (rows.moving_coupling: G v* = −c puts
  //    part of v* outside the coupled metric's range).
  // Factors need no exception: the metric carries them, and velocity along
  // a locked axis (outside D M⁻¹ D's range) is left out of v* and passes
  // through (clear_locked_axes), as in the rigid adapter.
  // It is still worth restoring there: a tree whose M⁻¹ is ill-conditioned
  // (prismatic links of very different masses: eigenvalues 9e-5 to 4e3,
  // condition 4.5e7) computes the reflection's M⁻¹Jᵀλ with cancellation,
  // and the outcome gains ~ε · cond of E (fuzz_worlds --multibody seed
  // 20261230 world 463: 1.9e-9, one elastic contact).
  bool energy_is_invariant() const {
    const auto still = [](const Eigen::VectorXd& b) { return (b.array() == 0.0).all(); };
    return still(rows.offsets) && still(rows.tangent_offsets) && !rows.moving_coupling;
  }

  // The written velocities: v_post + δ (multibody), v + δ (rigid).
  bool check(const Eigen::VectorXd& after, ImpactReport& report, ImpactStats&) {
    const auto reject = [&](const std::string& why) {
      report.status = Status::kInfeasible;
      internal::add_message(report, why);
      return false;
    };
    // Write-back: v_post + δ (multibody), v + δ (rigid). Everything the
    // report needs is built first; only finite velocities are written, and
    // the commit below (velocities, restitution off) cannot throw.
    if (after.size() != rows.n || !after.allFinite()) return reject("non-finite post-impact velocity");
    written = base_velocity + (after - v_star);
    if (!written.allFinite()) return reject("non-finite post-impact velocity");
    // Bullet clamps every coordinate of a multibody's velocity vector to
    // ±getMaxCoordinateVelocity() whenever a solver applies a velocity change
    // to it (btMultiBody::applyDeltaVeeMultiDof), which would cut this outcome
    // behind the law's back: a cut in a coupled metric can even ADD energy. An
    // outcome beyond the clamp is therefore not written (header, "Never fail
    // the host").
    for (int q = 0; q < static_cast<int>(order.size()); ++q) {
      const btMultiBody* mb = s.nodes[order[q]].multibody;
      if (mb == nullptr) continue;
      const double cap = double(mb->getMaxCoordinateVelocity());
      const int f = free_count(*mb);
      if (f == 0) continue;
      const double largest = written.segment(rows.starts[q], f).cwiseAbs().maxCoeff();
      if (largest > cap) {
        return reject("post-impact coordinate velocity " + std::to_string(largest) +
                 " beyond btMultiBody::getMaxCoordinateVelocity() = " + std::to_string(cap) +
                 " (Bullet would clamp it)");
      }
    }
    return true;
  }

  bool apply(const Eigen::VectorXd& after, const internal::ClusterPlan& plan) {
    const int m = rows.contacts();
    // Points the impact leaves closed but overlapping — Bullet found them only
    // after they penetrated (a striker stopped against the row it struck) —
    // are separated at position level, q ⊕ M⁻¹_G Jᵀμ, no velocity changing,
    // as the rigid adapter does: the base solver's Baumgarte push would
    // otherwise turn the overlap into kinetic energy in the next step. μ ≥ 0 is
    // the least push that clears every overlap, W μ ≥ depth (W = J M⁻¹_G Jᵀ),
    // with equality where μ > 0 (core/separation.h, shared with the rigid
    // adapter; a push along a row of touching bodies reaches the far end). A
    // point separating at u⁺ clears u⁺h of its overlap during the step
    // itself; only the rest counts (a tilted strike leaves a stopped striker
    // separating at ~1e-6 m/s, far too slow to clear millimetres).
    const Eigen::VectorXd u_after = rows.normals * after + rows.offsets;
    Eigen::VectorXd depth(m);
    for (int r = 0; r < m; ++r)
      depth[r] = -double(s.points[c.ids[rows.kept[r]]].point->getDistance()) - std::max(0.0, u_after[r]) * h;
    const Eigen::VectorXd displacement =
        simpact::internal::separation_displacement(rows.normals, rows.inverse_mass,
                                                   internal::without_negligible_overlaps(depth));
    if (!displacement.allFinite()) return false;

    // Apply: velocities and displacements, then the hand-off of the points.
    btAlignedObjectArray<btScalar> step;  // a multibody's displacement in its velocity layout
    s.hidden.reserve(s.hidden.size() + static_cast<size_t>(m));
    for (int q = 0; q < static_cast<int>(order.size()); ++q) {
      const Impl::Node& node = s.nodes[order[q]];
      const int o = rows.starts[q];
      if (node.multibody != nullptr) {
        btMultiBody& mb = *node.multibody;
        const int first = first_free(mb);
        const auto value = [&](int k) { return btScalar(written[o + k - first]); };
        if (first == 0) {
          mb.setBaseOmega(btVector3(value(0), value(1), value(2)));
          mb.setBaseVel(btVector3(value(3), value(4), value(5)));
        }
        for (int link = 0; link < mb.getNumLinks(); ++link) {
          btScalar* qd = mb.getJointVelMultiDof(link);
          const btMultibodyLink& l = mb.getLink(link);
          for (int d = 0; d < l.m_dofCount; ++d) qd[d] = value(6 + l.m_dofOffset + d);
        }
        const int f = free_count(mb);
        if (displacement.segment(o, f).squaredNorm() > 0.0) {
          // Bullet's own position step (joint kinds, quaternions) with the
          // displacement as the velocity over a unit time.
          step.resize(6 + mb.getNumDofs());
          for (int k = 0; k < 6 + mb.getNumDofs(); ++k)
            step[k] = k >= first ? btScalar(displacement[o + k - first]) : btScalar(0);
          mb.stepPositionsMultiDof(1, nullptr, &step[0]);
        }
      } else {
        internal::set_body_velocity(*node.rigid, written.segment<6>(o));
        const Eigen::Matrix<double, 6, 1> delta = displacement.segment<6>(o);
        if (delta.squaredNorm() > 0.0) internal::move_body(*node.rigid, delta);
      }
    }
    // No warm start and no push-out of the resolved points in this step;
    // the points the impact leaves separating faster than the threshold are
    // hidden from the base solver (as in the rigid adapter: it has nothing
    // to do there).
    for (const int id : c.ids) internal::BaseSolverHandoff::forget(*s.points[id].point);
    for (int r = 0; r < m; ++r) {
      const Impl::Point& p = s.points[c.ids[rows.kept[r]]];
      if (p.manifold != nullptr && u_after[r] > plan.threshold())
        s.hidden.emplace_back(p.manifold, p.index);
    }
    applied = after;
    return true;
  }

  // Nothing was written; the cluster's manifolds keep Bullet's restitution.
  void failed() {
    if (s.failed.size() < s.nodes.size()) s.failed.resize(s.nodes.size(), 0);
    for (const int j : c.members) s.failed[static_cast<size_t>(j)] = 1;
  }

  void describe(MultiBodyImpactReport& report) {
    if (order.empty()) layout();
    for (int q = 0; q < static_cast<int>(order.size()); ++q) {
      const Impl::Node& node = s.nodes[order[q]];
      if (node.multibody != nullptr) {
        report.multibodies.push_back(node.multibody);
        report.multibody_ids.push_back(multibody_id(s, node.multibody));
      } else {
        report.bodies.push_back(node.rigid);
        report.body_ids.push_back(node.rigid->getWorldArrayIndex());
      }
    }
    report.offsets = rows.starts;
    if (assembled) {
      report.velocity_before = rows.admissible;
      report.normals = Eigen::MatrixXd(rows.normals);
      report.normal_offsets = rows.offsets;
    }
    if (!report.fallback_to_base) report.velocity_after = applied;
  }
};

void batch_failed(const MultiBodyImpactSolverConfig& config, MultiBodyImpactStats& stats,
                  const char* what) noexcept;
void mute_restitution(Impl& s, btPersistentManifold** manifolds, int num_manifolds);
void impact_phase(Impl& s, const MultiBodyImpactSolverConfig& config, MultiBodyImpactStats& stats,
                  btPersistentManifold** manifolds, int num_manifolds, btTypedConstraint** constraints,
                  int num_constraints, btMultiBodyConstraint** multibody_constraints,
                  int num_multibody_constraints, const btContactSolverInfo& info);

}  // namespace

void MultiBodyImpactSolver::solveMultiBodyGroup(
    btCollisionObject** bodies, int num_bodies, btPersistentManifold** manifolds, int num_manifolds,
    btTypedConstraint** constraints, int num_constraints, btMultiBodyConstraint** multibody_constraints,
    int num_multibody_constraints, const btContactSolverInfo& info, btIDebugDraw* debug_drawer,
    btDispatcher* dispatcher) {
  ++stats_.solve_calls;
  Impl& s = *impl_;
  s.hidden.clear();
  s.failed.clear();
  s.all_failed = false;
  s.dispatcher = dispatcher;
  // The impact phase never throws out of here (header, "Never fail the
  // host"): a cluster that fails is left to the base solver; a failure
  // outside any cluster leaves the rest of the batch to it.
  try {
    impact_phase(s, config_, stats_, manifolds, num_manifolds, constraints, num_constraints,
                 multibody_constraints, num_multibody_constraints, info);
  } catch (const std::exception& e) {
    s.all_failed = true;
    batch_failed(config_, stats_, e.what());
  } catch (...) {
    s.all_failed = true;
    batch_failed(config_, stats_, "unknown exception");
  }
  // The hand-off: points the impacts left separating are hidden.
  try {
    if (!s.all_failed) s.handoff.hide(s.hidden);
  } catch (...) {  // std::bad_alloc: they stay visible, as in stock
  }
  // Everything the base solver sees has restitution off, as in the rigid
  // adapter (impact_solver.h, stage 5): the laws resolved every impact, and
  // a sustained contact gets no bounce (Bullet's own restitution measures
  // post-force velocities: a resting link at 30 Hz would bounce). The
  // manifolds of failed clusters keep Bullet's restitution.
  if (!s.all_failed) mute_restitution(s, manifolds, num_manifolds);

  // 6. The base multibody solver on the whole batch (Bullet's solvers do not
  // throw: their allocator returns null instead).
  s.base->solveMultiBodyGroup(bodies, num_bodies, manifolds, num_manifolds, constraints,
                              num_constraints, multibody_constraints, num_multibody_constraints, info,
                              debug_drawer, dispatcher);
  m_analyticsData = s.base->m_analyticsData;
  s.handoff.restore();
}

namespace {

// The node of a collision object's side (as make_side), −1 when it is none
// of this batch's nodes.
int node_of_object(const Impl& s, const btCollisionObject* object) {
  const void* key = object;
  if (const btMultiBodyLinkCollider* collider = btMultiBodyLinkCollider::upcast(object)) key = collider->m_multiBody;
  const auto it = s.node_index.find(key);
  return it == s.node_index.end() ? -1 : it->second;
}

void mute_restitution(Impl& s, btPersistentManifold** manifolds, int num_manifolds) {
  bool any_failed = false;
  for (const char f : s.failed) any_failed = any_failed || f != 0;
  const auto failed = [&](const btCollisionObject* object) {
    const int node = node_of_object(s, object);
    return node >= 0 && static_cast<size_t>(node) < s.failed.size() && s.failed[static_cast<size_t>(node)] != 0;
  };
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    if (any_failed && (failed(manifold->getBody0()) || failed(manifold->getBody1()))) continue;
    for (int c = 0; c < manifold->getNumContacts(); ++c) s.handoff.mute_restitution(manifold->getContactPoint(c));
  }
}

void batch_failed(const MultiBodyImpactSolverConfig& config, MultiBodyImpactStats& stats,
                  const char* what) noexcept {
  ++stats.fallbacks_to_base;
  try {
    MultiBodyImpactReport report;
    report.fallback_to_base = true;
    report.attempted_law = config.law == ImpactLaw::kRouth              ? AppliedLaw::kRouth
                           : config.law == ImpactLaw::kRouthRestitution ? AppliedLaw::kRouthRestitution
                                                                        : AppliedLaw::kPropagative;
    report.law = AppliedLaw::kBaseSolver;
    report.status = Status::kInfeasible;
    report.message = std::string("impact phase failed for the batch (") + what +
                     "): its unresolved clusters are left to the base solver with Bullet's restitution";
    internal::notify(config.on_impact, stats, report);
  } catch (...) {
  }
}

// Touching means touching (proximity.h): synthetic points for the pairs of
// the struck bodies, and transitively of the bodies they touch, within the
// gap tolerance but without a manifold point there; they join s.points like
// Bullet's own.
void add_touching_points(Impl& s, const MultiBodyImpactSolverConfig& config,
                         btPersistentManifold** manifolds, int num_manifolds, double h) {
  if (s.dispatcher == nullptr) return;
  std::vector<const btCollisionObject*> struck;
  std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>> touching;
  double strike_speed = 0.0;
  for (const Impl::Point& p : s.points) {
    touching.emplace_back(p.a.object, p.b.object);
    double gravity = 0.0;
    for (const Impl::Side* side : {&p.a, &p.b})
      if (side->node >= 0) gravity = std::max(gravity, node_gravity(s, s.nodes[side->node]));
    if (!strikes_for(config, gravity, h).strikes(p.u, p.manifold)) continue;
    strike_speed = std::max(strike_speed, -p.u);
    struck.push_back(p.a.object);
    struck.push_back(p.b.object);
  }
  const auto moves = [](const btCollisionObject* object) {
    if (const btMultiBodyLinkCollider* collider = btMultiBodyLinkCollider::upcast(object)) {
      const btMultiBody& mb = *collider->m_multiBody;
      return free_count(mb) > 0 && (collider->m_link >= 0 || !mb.isBaseStaticOrKinematic());
    }
    return internal::is_dynamic(btRigidBody::upcast(object));
  };
  s.touching.find(*s.dispatcher, manifolds, num_manifolds, struck, touching, moves, strike_speed, h);
  for (internal::TouchingPoint& touch : s.touching.points()) {
    Impl::Point p;
    p.point = &touch.point;
    p.a = make_side(s, touch.object_a, touch.point.getPositionWorldOnA(), 1.0);
    p.b = make_side(s, touch.object_b, touch.point.getPositionWorldOnB(), -1.0);
    if (p.a.node < 0 && p.b.node < 0) continue;
    p.u = pre_force_u(s, p);
    s.points.push_back(p);
  }
}

// Couplings unite their two multibodies' clusters (only when one joins two
// clusters is the grouping redone, the same way build_clusters does it).
void unite_couplings(Impl& s, const NodeGraph& graph) {
  internal::Clusters& out = s.clusters;
  bool changed = false;
  for (btMultiBodyConstraint* coupling : s.couplings) {
    const auto a = s.node_index.find(coupling->getMultiBodyA());
    const auto b = s.node_index.find(coupling->getMultiBodyB());
    if (a == s.node_index.end() || b == s.node_index.end()) continue;
    if (internal::find_root(out.parent, a->second) == internal::find_root(out.parent, b->second)) continue;
    internal::unite(out.parent, a->second, b->second);
    changed = true;
  }
  if (!changed) return;
  const int n = out.num_nodes;
  for (int i = 0; i < n; ++i) {
    out.members[static_cast<size_t>(i)].clear();
    out.points[static_cast<size_t>(i)].clear();
  }
  for (int i = 0; i < n; ++i) out.members[static_cast<size_t>(internal::find_root(out.parent, i))].push_back(i);
  for (int k = 0; k < graph.num_points(); ++k) {
    const int a = graph.end_a(k);
    out.points[static_cast<size_t>(internal::find_root(out.parent, a >= 0 ? a : graph.end_b(k)))].push_back(k);
  }
}

// Steps 1–2 of the header on one batch: candidate points, multibody
// constraints (couplings and bindings), clusters (s.clusters). Returns
// whether a point strikes (otherwise nothing is clustered).
bool collect_batch(Impl& s, const MultiBodyImpactSolverConfig& config, btPersistentManifold** manifolds,
                   int num_manifolds, btTypedConstraint** constraints, int num_constraints,
                   btMultiBodyConstraint** multibody_constraints, int num_multibody_constraints, double h) {
  s.nodes.clear();
  s.node_index.clear();
  s.points.clear();
  s.bindings.clear();
  s.couplings.clear();
  const MultiBodyImpactSolverConfig& config_ = config;

  // 1. Candidate points.
  bool any_strike = false;
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    for (int i = 0; i < manifold->getNumContacts(); ++i) {
      btManifoldPoint& cp = manifold->getContactPoint(i);
      Impl::Point p;
      p.point = &cp;
      p.manifold = manifold;
      p.index = i;
      p.a = make_side(s, manifold->getBody0(), cp.getPositionWorldOnA(), 1.0);
      p.b = make_side(s, manifold->getBody1(), cp.getPositionWorldOnB(), -1.0);
      if (p.a.node < 0 && p.b.node < 0) continue;
      p.u = pre_force_u(s, p);
      const double gap = double(cp.getDistance());
      if (!(gap <= config_.touch_tolerance || (p.u < 0.0 && gap + p.u * h <= config_.touch_tolerance)))
        continue;
      double gravity = 0.0;
      for (const Impl::Side* side : {&p.a, &p.b})
        if (side->node >= 0) gravity = std::max(gravity, node_gravity(s, s.nodes[side->node]));
      any_strike = any_strike || strikes_for(config_, gravity, h).strikes(p.u, p.manifold);
      s.points.push_back(p);
    }
  }

  if (!any_strike) return false;
  add_touching_points(s, config, manifolds, num_manifolds, h);
  for (int k = 0; k < num_multibody_constraints; ++k) {
    btMultiBodyConstraint* constraint = multibody_constraints[k];
    if (constraint == nullptr) continue;
    // A constraint allowed no impulse does nothing in Bullet (its rows are
    // bounded to [0, 0]): it neither couples nor binds.
    if (!(constraint->getMaxAppliedImpulse() > 0)) continue;
    if (exact_coupling(*constraint)) {
      s.couplings.push_back(constraint);
      continue;
    }
    const char* kind = unsupported_constraint(*constraint);
    if (kind == nullptr) continue;
    Impl::Binding binding;
    binding.kind = kind;
    binding.a = constraint->getMultiBodyA();
    binding.b = constraint->getMultiBodyB();
    if (binding.b == nullptr) binding.rigid_island = constraint->getIslandIdB();
    if (binding.a == nullptr) binding.rigid_island = constraint->getIslandIdA();
    s.bindings.push_back(binding);
  }
  // 2. Clusters: rigid joints pull in jointed dynamic rigid bodies.
  // Coupled multibodies join the cluster of their partner (a twin pendulum
  // welded to a struck one), as build_clusters pulls in jointed rigid bodies.
  for (bool grew = true; grew;) {
    grew = false;
    for (btMultiBodyConstraint* coupling : s.couplings) {
      btMultiBody* a = coupling->getMultiBodyA();
      btMultiBody* b = coupling->getMultiBodyB();
      const bool has_a = s.node_index.count(a) > 0, has_b = s.node_index.count(b) > 0;
      if (has_a == has_b) continue;
      btMultiBody* other = has_a ? b : a;
      if (free_count(*other) == 0) continue;  // immovable: its rows' part is an offset
      s.node_of_multibody(other);
      grew = true;
    }
  }
  NodeGraph graph{s};
  internal::build_clusters(graph, constraints, num_constraints, s.clusters);
  unite_couplings(s, graph);
  return true;
}

// Steps 1–5 of the header on one batch.
void impact_phase(Impl& s, const MultiBodyImpactSolverConfig& config, MultiBodyImpactStats& stats,
                  btPersistentManifold** manifolds, int num_manifolds, btTypedConstraint** constraints,
                  int num_constraints, btMultiBodyConstraint** multibody_constraints,
                  int num_multibody_constraints, const btContactSolverInfo& info) {
  if (!collect_batch(s, config, manifolds, num_manifolds, constraints, num_constraints, multibody_constraints,
                     num_multibody_constraints, double(info.m_timeStep)))
    return;
  // 3–5, one cluster at a time through the shared pipeline
  // (internal::resolve_safely): a cluster that fails or throws has written
  // nothing (apply() checks before its first write) and is left to the base
  // solver.
  for (int root = 0; root < s.clusters.num_nodes; ++root) {
    if (s.clusters.points[root].empty()) continue;
    const Cluster members_and_points{s.clusters.members[root], s.clusters.points[root]};
    MultibodyCluster cluster(s, config, members_and_points, constraints, num_constraints, info);
    MultiBodyImpactReport report;
    internal::resolve_safely(cluster, config, s.law, stats, report, config.on_impact);
  }
}

}  // namespace

namespace {

// What predict_outcome_sets changes on a multibody to give it the next
// step's post-force velocities, and gives back bit for bit.
struct SavedMultibody {
  btMultiBody* mb = nullptr;
  Eigen::VectorXd velocity;  // 6 + dofs
  btVector3 base_force{0, 0, 0}, base_torque{0, 0, 0};
  std::vector<btVector3> link_force, link_torque;
  std::vector<btScalar> joint_torque;  // 6 per link (btMultibodyLink::m_jointTorque)

  explicit SavedMultibody(btMultiBody& body) : mb(&body), velocity(Impl::velocity_vector(body)) {
    base_force = body.getBaseForce();
    base_torque = body.getBaseTorque();
    for (int i = 0; i < body.getNumLinks(); ++i) {
      link_force.push_back(body.getLinkForce(i));
      link_torque.push_back(body.getLinkTorque(i));
      const btScalar* q = body.getJointTorqueMultiDof(i);
      for (int d = 0; d < 6; ++d) joint_torque.push_back(q[d]);
    }
  }
  void restore() const {
    btMultiBody& body = *mb;
    body.clearForcesAndTorques();
    body.addBaseForce(base_force);
    body.addBaseTorque(base_torque);
    for (int i = 0; i < body.getNumLinks(); ++i) {
      body.addLinkForce(i, link_force[static_cast<size_t>(i)]);
      body.addLinkTorque(i, link_torque[static_cast<size_t>(i)]);
      btScalar* q = body.getJointTorqueMultiDof(i);
      for (int d = 0; d < 6; ++d) q[d] = joint_torque[static_cast<size_t>(6 * i + d)];
    }
    body.setBaseOmega(btVector3(btScalar(velocity[0]), btScalar(velocity[1]), btScalar(velocity[2])));
    body.setBaseVel(btVector3(btScalar(velocity[3]), btScalar(velocity[4]), btScalar(velocity[5])));
    for (int link = 0; link < body.getNumLinks(); ++link) {
      btScalar* qd = body.getJointVelMultiDof(link);
      const btMultibodyLink& l = body.getLink(link);
      for (int d = 0; d < l.m_dofCount; ++d) qd[d] = btScalar(velocity[6 + l.m_dofOffset + d]);
    }
  }
};

bool sleeping(const btMultiBody& mb) {
  if (mb.getBaseCollider() && mb.getBaseCollider()->getActivationState() == ISLAND_SLEEPING) return true;
  for (int b = 0; b < mb.getNumLinks(); ++b)
    if (mb.getLink(b).m_collider && mb.getLink(b).m_collider->getActivationState() == ISLAND_SLEEPING) return true;
  return false;
}

// One prediction from one cluster (the step's plan and assembly, with the
// Routh tangent rows whatever the law).
MultiBodyPredictedImpact predict_cluster(MultibodyCluster& cluster, const MultiBodyImpactSolverConfig& config,
                                         const RouthSetParameters& set, bool& impact) {
  MultiBodyPredictedImpact prediction;
  const internal::ClusterPlan plan = cluster.plan();
  impact = plan.impact;
  if (!impact) return prediction;
  internal::ClusterPlan sampled_plan = plan;
  sampled_plan.law = internal::PlannedLaw::kRouth;  // the tangent rows
  MultiBodyImpactReport layout;
  ImpactStats unused;
  const internal::Assembly assembly = cluster.assemble(sampled_plan, layout, unused);
  if (assembly.kind == internal::Assembly::kNothing) {
    impact = false;
    return prediction;
  }
  cluster.describe(layout);
  prediction.multibodies = layout.multibodies;
  for (const btCollisionObject* body : layout.bodies) prediction.bodies.push_back(btRigidBody::upcast(body));
  prediction.offsets = layout.offsets;
  prediction.law = plan.applied();
  prediction.restitution = plan.restitution;
  if (assembly.kind == internal::Assembly::kFailed) {
    prediction.law = AppliedLaw::kBaseSolver;
    prediction.message = assembly.why + ": the step hands this cluster to the base solver with Bullet's restitution";
    return prediction;
  }
  const internal::LawRows& rows = cluster.law_rows();
  const int m = rows.contacts();
  const Eigen::VectorXd u = rows.normals * rows.admissible + rows.offsets;
  for (int r = 0; r < m; ++r) {
    ImpactReport::Contact contact = cluster.contact(r, -u[r]);
    contact.tangent1 = to_bullet(rows.t1[static_cast<size_t>(r)]);
    contact.tangent2 = to_bullet(rows.t2[static_cast<size_t>(r)]);
    prediction.contacts.push_back(contact);
  }
  prediction.velocity = rows.admissible;
  prediction.sample_seed = cluster.law_inputs(sampled_plan).routh_seed;
  internal::PredictedSet predicted =
      internal::predict_set(rows, cluster.finite(), plan, config, prediction.sample_seed, set);
  prediction.sampled = predicted.sampled;
  prediction.message = std::move(predicted.message);
  prediction.set = std::move(predicted.set);
  if (predicted.base_solver) prediction.law = AppliedLaw::kBaseSolver;
  return prediction;
}

}  // namespace

std::vector<MultiBodyPredictedImpact> MultiBodyImpactSolver::predict_outcome_sets(btScalar time_step,
                                                                                  const RouthSetParameters& set) {
  internal::check_prediction_arguments(double(time_step), set);
  Impl& s = *impl_;
  btMultiBodyDynamicsWorld& world = *s.world;
  world.performDiscreteCollisionDetection();
  world.forwardKinematics();
  // What the island callback hands to solveMultiBodyGroup, for the whole
  // world: manifolds of awake pairs that need a response, every constraint.
  btDispatcher* dispatcher = world.getDispatcher();
  std::vector<btPersistentManifold*> manifolds = internal::responding_manifolds(*dispatcher);
  std::vector<btTypedConstraint*> constraints;
  for (int i = 0; i < world.getNumConstraints(); ++i) constraints.push_back(world.getConstraint(i));
  std::vector<btMultiBodyConstraint*> multibody_constraints;
  for (int i = 0; i < world.getNumMultiBodyConstraints(); ++i)
    multibody_constraints.push_back(world.getMultiBodyConstraint(i));
  btContactSolverInfo info = world.getSolverInfo();
  info.m_timeStep = time_step;

  // The next step's state (header, "Step order"): the pre-force snapshot,
  // then each awake multibody's velocities stepped by its forces and
  // gravity as solveExternalForces does; rigid bodies through s.source.
  std::unordered_map<const btMultiBody*, Eigen::VectorXd> snapshot;
  snapshot.swap(s.snapshot);
  std::vector<SavedMultibody> saved;
  const auto restore = [&]() noexcept {
    for (const SavedMultibody& body : saved) body.restore();
    s.source = internal::VelocitySource{};
    s.snapshot.swap(snapshot);
    s.dispatcher = nullptr;
  };
  std::vector<MultiBodyPredictedImpact> predictions;
  try {
    btAlignedObjectArray<btScalar> scratch_r;
    btAlignedObjectArray<btVector3> scratch_v;
    btAlignedObjectArray<btMatrix3x3> scratch_m;
    const btVector3 gravity = world.getGravity();
    for (int i = 0; i < world.getNumMultibodies(); ++i) {
      btMultiBody& mb = *world.getMultiBody(i);
      s.snapshot[&mb] = Impl::velocity_vector(mb);
      if (sleeping(mb)) continue;
      saved.emplace_back(mb);
      mb.addBaseForce(gravity * mb.getBaseMass());
      for (int j = 0; j < mb.getNumLinks(); ++j) mb.addLinkForce(j, gravity * mb.getLinkMass(j));
      scratch_r.resize(mb.getNumLinks() + 1);
      scratch_v.resize(mb.getNumLinks() + 1);
      scratch_m.resize(mb.getNumLinks() + 1);
      mb.computeAccelerationsArticulatedBodyAlgorithmMultiDof(time_step, scratch_r, scratch_v, scratch_m, false,
                                                              info.m_jointFeedbackInWorldSpace,
                                                              info.m_jointFeedbackInJointFrame);
    }
    s.source = internal::VelocitySource{true, time_step};
    s.dispatcher = dispatcher;
    btTypedConstraint** joints = constraints.empty() ? nullptr : constraints.data();
    btMultiBodyConstraint** couplings = multibody_constraints.empty() ? nullptr : multibody_constraints.data();
    if (collect_batch(s, config_, manifolds.data(), static_cast<int>(manifolds.size()), joints,
                      static_cast<int>(constraints.size()), couplings, static_cast<int>(multibody_constraints.size()),
                      double(time_step))) {
      for (int root = 0; root < s.clusters.num_nodes; ++root) {
        if (s.clusters.points[root].empty()) continue;
        const Cluster members_and_points{s.clusters.members[root], s.clusters.points[root]};
        MultibodyCluster cluster(s, config_, members_and_points, joints, static_cast<int>(constraints.size()), info);
        bool impact = false;
        MultiBodyPredictedImpact prediction = predict_cluster(cluster, config_, set, impact);
        if (impact) predictions.push_back(std::move(prediction));
      }
    }
  } catch (...) {
    restore();
    throw;
  }
  restore();
  return predictions;
}

}  // namespace simpact::bullet
