#include <simpact/bullet/multibody_impact_solver.h>

#include "bullet/joint_rows.h"

#include <Eigen/Eigenvalues>

#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btContactSolverInfo.h>
#include <BulletDynamics/ConstraintSolver/btTypedConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>
#include <BulletDynamics/Featherstone/btMultiBody.h>
#include <BulletDynamics/Featherstone/btMultiBodyDynamicsWorld.h>
#include <BulletDynamics/Featherstone/btMultiBodyLinkCollider.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <unordered_map>

namespace simpact::bullet {

namespace {

constexpr const char* kLawPropagative = "propagative";
constexpr const char* kLawRouth = "routh";
constexpr const char* kLawBaseSolver = "base_solver";

Eigen::Vector3d to_eigen(const btVector3& v) { return {double(v.x()), double(v.y()), double(v.z())}; }
btVector3 to_bullet(const Eigen::Vector3d& v) {
  return btVector3(btScalar(v.x()), btScalar(v.y()), btScalar(v.z()));
}

bool is_dynamic_rigid(const btRigidBody* body) {
  return body != nullptr && !body->isStaticOrKinematicObject() && body->getInvMass() > 0;
}

// First free coordinate of a multibody's velocity vector: 0 with a free base,
// 6 with a fixed or kinematic one (header, "Generalized velocities").
int first_free(const btMultiBody& mb) { return mb.isBaseStaticOrKinematic() ? 6 : 0; }
int free_count(const btMultiBody& mb) { return 6 + mb.getNumDofs() - first_free(mb); }

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// btPlaneSpace1's frame of the unit n, in double.
void plane_space(const Eigen::Vector3d& n, Eigen::Vector3d& p, Eigen::Vector3d& q) {
  if (std::abs(n.z()) > 0.7071067811865475244) {
    const double a = n.y() * n.y() + n.z() * n.z();
    const double k = 1.0 / std::sqrt(a);
    p = Eigen::Vector3d(0.0, -n.z() * k, n.y() * k);
  } else {
    const double a = n.x() * n.x() + n.y() * n.y();
    const double k = 1.0 / std::sqrt(a);
    p = Eigen::Vector3d(-n.y() * k, n.x() * k, 0.0);
  }
  q = n.cross(p);
}

void require(bool condition, const std::string& message) {
  if (!condition) throw std::invalid_argument("simpact::bullet::MultiBodyImpactSolverConfig: " + message);
}

}  // namespace

void validate(const MultiBodyImpactSolverConfig& config) {
  require(config.law == ImpactLaw::kPropagative || config.law == ImpactLaw::kRouth,
          "law must be propagative or routh (auto is not supported for multibodies)");
  require(config.policy != OrderPolicy::kAll, "policy kAll is not a simulation order");
  // The shared fields have the rigid adapter's ranges.
  ImpactSolverConfig rigid;
  rigid.policy = config.policy;
  rigid.impact_threshold = config.impact_threshold;
  rigid.touch_tolerance = config.touch_tolerance;
  rigid.max_reflections = config.max_reflections;
  rigid.law = config.law;
  rigid.routh = config.routh;
  try {
    validate(rigid);
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
    Side a, b;
    double u = 0.0;  // pre-force relative normal velocity, > 0 separating
  };
  struct Node {
    btMultiBody* multibody = nullptr;
    btRigidBody* rigid = nullptr;
  };

  btMultiBodyDynamicsWorld* world = nullptr;
  std::unordered_map<const btMultiBody*, Eigen::VectorXd> snapshot;  // pre-force velocity vectors
  std::vector<Node> nodes;
  std::unordered_map<const void*, int> node_index;
  std::vector<Point> points;
  std::vector<int> parent;
  std::vector<std::pair<btManifoldPoint*, btScalar>> saved_restitution;
  btAlignedObjectArray<btScalar> scratch_r, jac;
  btAlignedObjectArray<btVector3> scratch_v;
  btAlignedObjectArray<btMatrix3x3> scratch_m;
  PropagativeSolver solver;
  std::uint64_t impact_counter = 0;
  std::uint64_t steps = 0;

  int node_of_multibody(btMultiBody* mb) {
    const auto [it, inserted] = node_index.emplace(mb, static_cast<int>(nodes.size()));
    if (inserted) nodes.push_back({mb, nullptr});
    return it->second;
  }
  int node_of_rigid(btRigidBody* body) {
    if (!is_dynamic_rigid(body)) return -1;
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

double threshold_for(const MultiBodyImpactSolverConfig& config, double gravity, double h) {
  if (config.impact_threshold >= 0.0) return config.impact_threshold;
  return std::max(kThresholdGravitySteps * gravity * h, kMinimumImpactThreshold);
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
  return d.dot(to_eigen(side.rigid->getVelocityInLocalPoint(r)));
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
      u += side->sign * double(n.dot(side->rigid->getVelocityInLocalPoint(r)));
    }
  }
  return u;
}

int find_root(std::vector<int>& parent, int i) {
  while (parent[i] != i) i = parent[i] = parent[parent[i]];
  return i;
}

void unite(std::vector<int>& parent, int a, int b) {
  a = find_root(parent, a);
  b = find_root(parent, b);
  if (a != b) parent[std::max(a, b)] = std::min(a, b);
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

struct Cluster {
  std::vector<int> members;  // node indices
  std::vector<int> ids;      // point indices
};

struct Rows {
  std::vector<int> offsets;  // per member
  int n = 0;
  Eigen::MatrixXd inverse_mass;
  Eigen::VectorXd velocity;   // v*
  Eigen::MatrixXd normals;
  Eigen::VectorXd b;
  std::vector<int> kept;      // points (indices into cluster ids) with a non-zero row
};

// Rows along one direction per point: normals (directions = normals).
void build_rows(Impl& s, const Cluster& c, const std::vector<int>& local, const Rows& layout,
                const std::vector<btVector3>& directions, Eigen::MatrixXd& rows, Eigen::VectorXd& b) {
  const int m = static_cast<int>(directions.size());
  rows.setZero(m, layout.n);
  b.setZero(m);
  for (int r = 0; r < m; ++r) {
    const Impl::Point& p = s.points[c.ids[layout.kept[r]]];
    for (const Impl::Side* side : {&p.a, &p.b}) {
      const bool in = side->node >= 0;
      const int offset = in ? layout.offsets[local[side->node]] : 0;
      b[r] += add_side(s, *side, directions[r], rows.row(r), offset, in);
    }
  }
}

}  // namespace

MultiBodyImpactSolver::MultiBodyImpactSolver(MultiBodyImpactSolverConfig config)
    : config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  validate(config_);
}

MultiBodyImpactSolver::~MultiBodyImpactSolver() = default;

void MultiBodyImpactSolver::set_config(MultiBodyImpactSolverConfig config) {
  validate(config);
  config_ = std::move(config);
}

void MultiBodyImpactSolver::attach(btMultiBodyDynamicsWorld& world) {
  impl_->world = &world;
  world.setMultiBodyConstraintSolver(this);
}

void MultiBodyImpactSolver::detach() {
  impl_->world = nullptr;
  impl_->snapshot.clear();
}

void MultiBodyImpactSolver::prepareSolve(int num_bodies, int num_manifolds) {
  btMultiBodyConstraintSolver::prepareSolve(num_bodies, num_manifolds);
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
  btMultiBodyConstraintSolver::allSolved(info, debug_drawer);
  ++impl_->steps;
}

void MultiBodyImpactSolver::reset() {
  btMultiBodyConstraintSolver::reset();
  impl_->impact_counter = 0;
  impl_->steps = 0;
}

namespace {

// Resolves one cluster (header, points 3–5).
void resolve(Impl& s, const MultiBodyImpactSolverConfig& config, MultiBodyImpactStats& stats,
             const Cluster& c, btTypedConstraint** constraints, int num_constraints,
             const btContactSolverInfo& info) {
  const double h = double(info.m_timeStep);
  double gravity = 0.0;
  for (const int j : c.members) gravity = std::max(gravity, node_gravity(s, s.nodes[j]));
  const double threshold = threshold_for(config, gravity, h);
  bool impact = false;
  double restitution = 1.0;
  for (const int id : c.ids) {
    const Impl::Point& p = s.points[id];
    if (p.u < -threshold) {
      restitution = impact ? std::min(restitution, double(p.point->m_combinedRestitution))
                           : double(p.point->m_combinedRestitution);
      impact = true;
    }
  }
  if (!impact) return;
  restitution = std::clamp(restitution, 0.0, 1.0);
  const bool routh = config.law == ImpactLaw::kRouth;
  if (!routh && restitution == 0.0 && !config.resolve_plastic_impacts) return;

  MultiBodyImpactReport report;
  report.restitution = restitution;
  report.law = routh ? kLawRouth : kLawPropagative;
  // Cluster layout: multibodies first, then rigid bodies.
  std::vector<int> order = c.members;
  std::stable_partition(order.begin(), order.end(),
                        [&](int j) { return s.nodes[j].multibody != nullptr; });
  std::vector<int> local(s.nodes.size(), -1);
  Rows rows;
  bool snapshots = true;
  for (int q = 0; q < static_cast<int>(order.size()); ++q) {
    const Impl::Node& node = s.nodes[order[q]];
    local[order[q]] = q;
    rows.offsets.push_back(rows.n);
    if (node.multibody != nullptr) {
      report.multibodies.push_back(node.multibody);
      bool found = false;
      s.pre_force(*node.multibody, &found);
      snapshots = snapshots && found;
      rows.n += free_count(*node.multibody);
    } else {
      report.rigid_bodies.push_back(node.rigid);
      rows.n += 6;
    }
  }
  report.offsets = rows.offsets;
  const auto report_contact = [&](const Impl::Point& p, double approach) {
    ImpactReport::Contact contact;
    contact.a = p.a.object;
    contact.b = p.b.object;
    contact.approach_speed = approach;
    contact.point_on_a = p.point->getPositionWorldOnA();
    contact.point_on_b = p.point->getPositionWorldOnB();
    contact.normal = p.point->m_normalWorldOnB;
    contact.friction = double(p.point->m_combinedFriction);
    return contact;
  };
  const auto fail = [&](const std::string& message, bool unattached) {
    ++(unattached ? stats.unattached : stats.fallbacks);
    report.law = kLawBaseSolver;
    report.status = Status::kInfeasible;
    report.message = message;
    for (const int id : c.ids) report.contacts.push_back(report_contact(s.points[id], -s.points[id].u));
    if (config.on_impact) config.on_impact(report);
  };
  if (!snapshots) {
    fail("no pre-force snapshot of a multibody (MultiBodyImpactSolver::attach was not called): "
         "impact left to the base solver with Bullet's restitution",
         true);
    return;
  }

  // Inverse inertia and mid-step velocity (header, "Step order").
  rows.inverse_mass.setZero(rows.n, rows.n);
  rows.velocity.resize(rows.n);
  Eigen::VectorXd base_velocity(rows.n);  // what δ is added to: v_post (multibody), v (rigid)
  std::vector<int> rigid_local;  // rigid members' positions in `order`
  for (int q = 0; q < static_cast<int>(order.size()); ++q) {
    const Impl::Node& node = s.nodes[order[q]];
    const int o = rows.offsets[q];
    if (node.multibody != nullptr) {
      btMultiBody& mb = *node.multibody;
      const int full = 6 + mb.getNumDofs(), first = first_free(mb), f = free_count(mb);
      const Eigen::VectorXd post = Impl::velocity_vector(mb);
      const Eigen::VectorXd pre = s.pre_force(mb);
      rows.velocity.segment(o, f) = 0.5 * (pre + post).tail(f);
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
        fail("articulated-body inverse inertia is not finite or not symmetric (asymmetry " +
                 std::to_string(asymmetry) + " of " + std::to_string(scale) + ")",
             false);
        return;
      }
      rows.inverse_mass.block(o, o, f, f) = 0.5 * (block + block.transpose());
    } else {
      const btRigidBody& body = *node.rigid;
      rigid_local.push_back(q);
      rows.inverse_mass.block<6, 6>(o, o) = internal::body_inverse_mass(body);
      const Eigen::Matrix<double, 6, 1> v = internal::body_velocity(body);
      base_velocity.segment<6>(o) = v;
      rows.velocity.segment<3>(o) =
          v.head<3>() + to_eigen(body.getTotalForce() * body.getInvMass() * btScalar(0.5 * h));
      rows.velocity.segment<3>(o + 3) =
          v.tail<3>() + to_eigen(body.getInvInertiaTensorWorld() * body.getTotalTorque() * btScalar(0.5 * h));
    }
  }
  // Rigid joints: the joint-constrained metric on the rigid sub-block.
  if (!rigid_local.empty() && num_constraints > 0) {
    const int nr = static_cast<int>(rigid_local.size());
    const int o0 = rows.offsets[rigid_local.front()];  // rigid blocks are contiguous, last
    Eigen::MatrixXd G;
    internal::append_bilateral_joint_rows(
        constraints, num_constraints,
        [&](const btRigidBody* body) {
          const auto it = s.node_index.find(body);
          if (it == s.node_index.end() || local[it->second] < 0) return -1;
          return local[it->second] - rigid_local.front();
        },
        nr, info, G);
    if (G.rows() > 0)
      rows.inverse_mass.block(o0, o0, 6 * nr, 6 * nr) =
          internal::constrained_inverse_mass(rows.inverse_mass.block(o0, o0, 6 * nr, 6 * nr), G);
  }

  // Normal rows; rows without a free coordinate are dropped.
  std::vector<btVector3> normals;
  for (int r = 0; r < static_cast<int>(c.ids.size()); ++r) {
    rows.kept.push_back(r);
    normals.push_back(s.points[c.ids[r]].point->m_normalWorldOnB);
  }
  build_rows(s, c, local, rows, normals, rows.normals, rows.b);
  {
    std::vector<int> kept;
    std::vector<btVector3> kept_normals;
    for (int r = 0; r < rows.normals.rows(); ++r) {
      const double free_part = rows.normals.row(r).cwiseAbs().maxCoeff();
      if (free_part > kZeroRowTolerance) {  // Jacobian entries are O(1) (unit normal × lever arms)
        kept.push_back(rows.kept[r]);
        kept_normals.push_back(normals[r]);
      }
    }
    if (kept.size() != rows.kept.size()) {
      rows.kept = kept;
      normals = kept_normals;
      build_rows(s, c, local, rows, normals, rows.normals, rows.b);
    }
  }
  const int m = static_cast<int>(rows.kept.size());
  if (m == 0) return;
  if (!rows.velocity.allFinite() || !rows.inverse_mass.allFinite() || !rows.normals.allFinite() ||
      !rows.b.allFinite()) {
    fail("non-finite body state: impact left to the base solver", false);
    return;
  }
  ++stats.impacts;
  report.velocity_before = rows.velocity;
  report.normals = rows.normals;
  report.normal_offsets = rows.b;
  report.energy_before = kinetic_energy(rows.inverse_mass, rows.velocity);

  Eigen::VectorXd after;
  Eigen::VectorXd impulses;
  if (!routh) {
    ImpactProblem problem = ImpactProblem::from_dense(rows.inverse_mass, rows.normals, rows.velocity);
    problem.offsets = rows.b;
    problem.restitution = restitution;
    PropagativeParameters parameters;
    parameters.policy = config.policy;
    parameters.seed = mix_seed(config.seed, s.impact_counter++);
    parameters.max_reflections = config.max_reflections;
    parameters.validate_input = false;  // assembled and checked for finiteness here
    parameters.compute_energy = false;
    s.solver.set_parameters(parameters);
    const ImpactResult& result = s.solver.solve(problem);
    stats.reflections += result.reflections;
    if (result.status != Status::kSuccess) ++stats.fallbacks;
    report.status = result.status;
    report.message = result.message;
    after = result.outcomes.at(0).velocity;
    impulses = result.outcomes[0].impulses;
    report.sequence = result.outcomes[0].sequence;
  } else {
    // Tangent rows: t1 along the mid-step slip, else btPlaneSpace1's frame.
    std::vector<btVector3> axes;
    for (int r = 0; r < m; ++r)
      for (const btVector3& e : {btVector3(1, 0, 0), btVector3(0, 1, 0), btVector3(0, 0, 1)})
        axes.push_back(e);
    Rows axis_layout = rows;
    axis_layout.kept.clear();
    for (int r = 0; r < m; ++r)
      for (int e = 0; e < 3; ++e) axis_layout.kept.push_back(rows.kept[r]);
    Eigen::MatrixXd axis_rows;
    Eigen::VectorXd axis_b;
    build_rows(s, c, local, axis_layout, axes, axis_rows, axis_b);
    const Eigen::VectorXd relative = axis_rows * rows.velocity + axis_b;
    const Eigen::VectorXd u = rows.normals * rows.velocity + rows.b;
    const double approach = std::max(0.0, -u.minCoeff());
    std::vector<btVector3> tangents;
    Eigen::VectorXd friction(m);
    for (int r = 0; r < m; ++r) {
      const Eigen::Vector3d n = to_eigen(normals[r]).normalized();
      const Eigen::Vector3d rel = relative.segment<3>(3 * r);
      const Eigen::Vector3d slip = rel - rel.dot(n) * n;
      Eigen::Vector3d t1, t2;
      if (slip.norm() > kSlipFrameTolerance * approach && slip.norm() > 0.0) {
        t1 = slip.normalized();
        t2 = n.cross(t1);
      } else {
        plane_space(n, t1, t2);
      }
      tangents.push_back(to_bullet(t1));
      tangents.push_back(to_bullet(t2));
      friction[r] = std::max(0.0, double(s.points[c.ids[rows.kept[r]]].point->m_combinedFriction));
    }
    Rows tangent_layout = rows;
    tangent_layout.kept.clear();
    for (int r = 0; r < m; ++r)
      for (int e = 0; e < 2; ++e) tangent_layout.kept.push_back(rows.kept[r]);
    Eigen::MatrixXd tangent_rows;
    Eigen::VectorXd tangent_b;
    build_rows(s, c, local, tangent_layout, tangents, tangent_rows, tangent_b);
    int key = std::numeric_limits<int>::max();
    for (const int id : c.ids)
      for (const Impl::Side* side : {&s.points[id].a, &s.points[id].b})
        if (side->node >= 0) key = std::min(key, side->object->getWorldArrayIndex());
    report.sample_seed = mix_seed(mix_seed(config.seed, s.steps),
                                  static_cast<std::uint64_t>(static_cast<std::int64_t>(key)));
    FrictionalResult sample;
    try {
      FrictionalProblem problem = FrictionalProblem::from_dense(
          rows.inverse_mass, rows.normals, tangent_rows, rows.velocity, friction);
      problem.normal_offsets = rows.b;
      problem.tangent_offsets = tangent_b;
      problem.cone_directions = config.routh.cone_directions;
      RouthParameters parameters;
      parameters.step = config.routh.step;
      parameters.max_steps = config.routh.max_steps;
      parameters.seed = report.sample_seed;
      parameters.sampler = config.routh.sampler;
      parameters.validate_input = false;
      sample = RouthSampler(problem, parameters).sample(0);
    } catch (const std::exception& e) {
      sample.status = Status::kInfeasible;
      sample.message = e.what();
    }
    if (sample.outcomes.empty() || !sample.outcomes[0].velocity.allFinite()) {
      --stats.impacts;
      fail("Routh sample failed (" + sample.message + "): impact left to the base solver", false);
      return;
    }
    ++stats.routh_impacts;
    if (sample.status != Status::kSuccess) ++stats.fallbacks;
    report.status = sample.status;
    report.message = sample.message;
    after = sample.outcomes[0].velocity;
    impulses = sample.outcomes[0].normal_impulses;
  }

  // Write-back: v_post + δ (multibody), v + δ (rigid).
  const Eigen::VectorXd written = base_velocity + (after - rows.velocity);
  for (int q = 0; q < static_cast<int>(order.size()); ++q) {
    const Impl::Node& node = s.nodes[order[q]];
    const int o = rows.offsets[q];
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
    } else {
      internal::set_body_velocity(*node.rigid, written.segment<6>(o));
    }
  }
  report.velocity_after = after;
  report.energy_after = kinetic_energy(rows.inverse_mass, after);
  const Eigen::VectorXd u_before = rows.normals * rows.velocity + rows.b;
  for (int r = 0; r < m; ++r) {
    ImpactReport::Contact contact = report_contact(s.points[c.ids[rows.kept[r]]], -u_before[r]);
    contact.impulse = impulses.size() > r ? impulses[r] : 0.0;
    report.contacts.push_back(contact);
  }
  // Restitution off for the base solve (restored afterwards), no warm
  // start, no push-out of the resolved points in this step.
  for (const int id : c.ids) {
    btManifoldPoint& point = *s.points[id].point;
    s.saved_restitution.emplace_back(&point, point.m_combinedRestitution);
    point.m_combinedRestitution = 0;
    point.m_appliedImpulse = 0;
    point.m_appliedImpulseLateral1 = 0;
    point.m_appliedImpulseLateral2 = 0;
    if (point.m_distance1 < 0) point.m_distance1 = 0;
  }
  if (config.on_impact) config.on_impact(report);
}

}  // namespace

void MultiBodyImpactSolver::solveMultiBodyGroup(
    btCollisionObject** bodies, int num_bodies, btPersistentManifold** manifolds, int num_manifolds,
    btTypedConstraint** constraints, int num_constraints, btMultiBodyConstraint** multibody_constraints,
    int num_multibody_constraints, const btContactSolverInfo& info, btIDebugDraw* debug_drawer,
    btDispatcher* dispatcher) {
  ++stats_.solve_calls;
  Impl& s = *impl_;
  s.nodes.clear();
  s.node_index.clear();
  s.points.clear();
  s.saved_restitution.clear();
  const double h = double(info.m_timeStep);

  // 1. Candidate points.
  bool any_strike = false;
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    for (int i = 0; i < manifold->getNumContacts(); ++i) {
      btManifoldPoint& cp = manifold->getContactPoint(i);
      Impl::Point p;
      p.point = &cp;
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
      any_strike = any_strike || p.u < -threshold_for(config_, gravity, h);
      s.points.push_back(p);
    }
  }

  if (any_strike) {
    // 2. Clusters: rigid joints pull in jointed dynamic rigid bodies.
    bool grew = true;
    while (grew) {
      grew = false;
      for (int k = 0; k < num_constraints; ++k) {
        btTypedConstraint* joint = constraints[k];
        if (!joint->isEnabled()) continue;
        const bool has_a = s.node_index.count(&joint->getRigidBodyA()) > 0;
        const bool has_b = s.node_index.count(&joint->getRigidBodyB()) > 0;
        if (has_a == has_b) continue;
        const size_t before = s.nodes.size();
        s.node_of_rigid(&joint->getRigidBodyA());
        s.node_of_rigid(&joint->getRigidBodyB());
        grew = grew || s.nodes.size() != before;
      }
    }
    const int n_nodes = static_cast<int>(s.nodes.size());
    s.parent.resize(n_nodes);
    std::iota(s.parent.begin(), s.parent.end(), 0);
    for (const Impl::Point& p : s.points)
      if (p.a.node >= 0 && p.b.node >= 0) unite(s.parent, p.a.node, p.b.node);
    for (int k = 0; k < num_constraints; ++k) {
      btTypedConstraint* joint = constraints[k];
      if (!joint->isEnabled()) continue;
      const auto ia = s.node_index.find(&joint->getRigidBodyA());
      const auto ib = s.node_index.find(&joint->getRigidBodyB());
      if (ia != s.node_index.end() && ib != s.node_index.end()) unite(s.parent, ia->second, ib->second);
    }
    std::vector<Cluster> clusters(static_cast<size_t>(n_nodes));
    for (int j = 0; j < n_nodes; ++j) clusters[find_root(s.parent, j)].members.push_back(j);
    for (int id = 0; id < static_cast<int>(s.points.size()); ++id) {
      const Impl::Point& p = s.points[id];
      clusters[find_root(s.parent, p.a.node >= 0 ? p.a.node : p.b.node)].ids.push_back(id);
    }
    // 3–5.
    for (const Cluster& cluster : clusters)
      if (!cluster.ids.empty()) resolve(s, config_, stats_, cluster, constraints, num_constraints, info);
  }

  // 6. The base multibody solver on the whole batch.
  btMultiBodyConstraintSolver::solveMultiBodyGroup(bodies, num_bodies, manifolds, num_manifolds,
                                                   constraints, num_constraints, multibody_constraints,
                                                   num_multibody_constraints, info, debug_drawer,
                                                   dispatcher);
  for (const auto& [point, restitution] : s.saved_restitution) point->m_combinedRestitution = restitution;
  s.saved_restitution.clear();
}

}  // namespace simpact::bullet
