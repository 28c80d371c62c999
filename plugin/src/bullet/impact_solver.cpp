#include <simpact/bullet/impact_solver.h>

#include "bullet/joint_rows.h"

#include <Eigen/Geometry>

#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletDynamics/ConstraintSolver/btContactSolverInfo.h>
#include <BulletDynamics/ConstraintSolver/btTypedConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <initializer_list>
#include <cmath>
#include <numeric>
#include <unordered_map>

namespace simpact::bullet {

namespace {

bool is_dynamic(const btRigidBody* body) {
  return body != nullptr && !body->isStaticOrKinematicObject() && body->getInvMass() > 0;
}

Eigen::Vector3d to_eigen(const btVector3& v) { return {double(v.x()), double(v.y()), double(v.z())}; }

// Velocity of the material point of `body` at world position `point`.
Eigen::Vector3d point_velocity(const btRigidBody* body, const btVector3& point) {
  if (body == nullptr) return Eigen::Vector3d::Zero();
  return to_eigen(body->getVelocityInLocalPoint(point - body->getCenterOfMassPosition()));
}

// The impact threshold (ImpactSolverConfig::impact_threshold) for bodies whose
// largest gravity magnitude is `gravity`.
double impact_threshold(const ImpactSolverConfig& config, double gravity, double h) {
  if (config.impact_threshold >= 0.0) return config.impact_threshold;
  return std::max(kThresholdGravitySteps * gravity * h, kMinimumImpactThreshold);
}

double largest_gravity(std::initializer_list<const btRigidBody*> bodies) {
  double gravity = 0.0;
  for (const btRigidBody* body : bodies)
    if (is_dynamic(body)) gravity = std::max(gravity, double(body->getGravity().length()));
  return gravity;
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

}  // namespace

struct ImpactSolver::Impl {
  // One candidate contact point of the batch.
  struct Point {
    btPersistentManifold* manifold = nullptr;
    int index = 0;  // in the manifold
    btManifoldPoint* point = nullptr;
    const btCollisionObject* object_a = nullptr;
    const btCollisionObject* object_b = nullptr;
    const btRigidBody* body_a = nullptr;  // may be static/kinematic
    const btRigidBody* body_b = nullptr;
    int a = -1, b = -1;  // dynamic-body indices, -1 for static/kinematic
    double u = 0.0;      // relative normal velocity, > 0 separating
  };

  std::vector<btRigidBody*> bodies;
  std::unordered_map<const btRigidBody*, int> index;
  std::vector<Point> points;
  std::vector<int> parent;
  std::vector<int> local;  // body → index within the cluster being resolved
  // Points an impact left separating, hidden from the base solver for this
  // call (see solveGroup), and the manifolds' true point counts.
  std::vector<int> separating;
  std::vector<std::pair<btPersistentManifold*, int>> hidden_counts;
  PropagativeSolver solver;
  PropagativeSolver enumerator;
  std::uint64_t impact_counter = 0;

  int index_of(const btRigidBody* body) {
    if (!is_dynamic(body)) return -1;
    const auto [it, inserted] = index.emplace(body, static_cast<int>(bodies.size()));
    if (inserted) bodies.push_back(const_cast<btRigidBody*>(body));
    return it->second;
  }
};

namespace {
// Resolves the cluster of `members` (bodies) and `ids` (its points) if one
// of its contacts strikes.
void resolve_cluster(ImpactSolver::Impl& s, const ImpactSolverConfig& config,
                     ImpactSolverStats& stats, const std::vector<int>& members,
                     const std::vector<int>& ids, btTypedConstraint** constraints,
                     int num_constraints, const btContactSolverInfo& info);

// Contacts an impact left separating faster than the impact threshold carry
// no force during the rest of this step. Some base solvers still act on
// them: Bullet's btMLCPSolver with btLemkeSolver returns adhesive impulses
// that undo the impact (a struck Newton's cradle ends with every ball at the
// common, plastic velocity). So they are moved past the end of their
// manifold's point list for the base solve and restored right after; the
// manifold itself (and the warm start of its other points) is untouched.
void hide_separating_points(ImpactSolver::Impl& s) {
  s.hidden_counts.clear();
  std::sort(s.separating.begin(), s.separating.end(), [&](int a, int b) {
    const auto& pa = s.points[a];
    const auto& pb = s.points[b];
    return pa.manifold != pb.manifold ? pa.manifold < pb.manifold : pa.index > pb.index;
  });
  for (size_t k = 0; k < s.separating.size(); ++k) {
    const auto& p = s.points[s.separating[k]];
    btPersistentManifold* manifold = p.manifold;
    if (s.hidden_counts.empty() || s.hidden_counts.back().first != manifold)
      s.hidden_counts.emplace_back(manifold, manifold->getNumContacts());
    // Highest index first, so every swap partner is still visible.
    const int last = manifold->getNumContacts() - 1;
    if (p.index != last) std::swap(manifold->getContactPoint(p.index), manifold->getContactPoint(last));
    manifold->setNumContacts(last);
  }
}
}  // namespace

ImpactSolver::ImpactSolver(btConstraintSolver* base, ImpactSolverConfig config)
    : base_(base), config_(std::move(config)), impl_(std::make_unique<Impl>()) {
  if (base_ == nullptr) throw std::invalid_argument("simpact::bullet::ImpactSolver: base solver is null");
}

ImpactSolver::~ImpactSolver() = default;

void ImpactSolver::set_config(ImpactSolverConfig config) { config_ = std::move(config); }

void ImpactSolver::prepareSolve(int num_bodies, int num_manifolds) {
  base_->prepareSolve(num_bodies, num_manifolds);
}

void ImpactSolver::allSolved(const btContactSolverInfo& info, btIDebugDraw* debug_drawer) {
  base_->allSolved(info, debug_drawer);
}

void ImpactSolver::reset() {
  base_->reset();
  impl_->impact_counter = 0;
}

btConstraintSolverType ImpactSolver::getSolverType() const { return base_->getSolverType(); }

btScalar ImpactSolver::solveGroup(btCollisionObject** bodies, int num_bodies,
                                  btPersistentManifold** manifolds, int num_manifolds,
                                  btTypedConstraint** constraints, int num_constraints,
                                  const btContactSolverInfo& info, btIDebugDraw* debug_drawer,
                                  btDispatcher* dispatcher) {
  ++stats_.solve_calls;
  Impl& s = *impl_;
  s.bodies.clear();
  s.index.clear();
  s.points.clear();
  s.separating.clear();
  const double h = double(info.m_timeStep);

  // 1. Candidate points: touching, or closing within this step. Most calls
  // have no strike at all (resting piles, plastic contacts left to the base
  // solver); they skip clustering, which keeps simpact's overhead to this loop.
  bool any_strike = false;
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    const btRigidBody* body_a = btRigidBody::upcast(manifold->getBody0());
    const btRigidBody* body_b = btRigidBody::upcast(manifold->getBody1());
    if (!is_dynamic(body_a) && !is_dynamic(body_b)) continue;
    for (int c = 0; c < manifold->getNumContacts(); ++c) {
      btManifoldPoint& p = manifold->getContactPoint(c);
      const Eigen::Vector3d n = to_eigen(p.m_normalWorldOnB);
      const double u = n.dot(point_velocity(body_a, p.getPositionWorldOnA()) -
                             point_velocity(body_b, p.getPositionWorldOnB()));
      const double gap = double(p.getDistance());
      const double threshold = impact_threshold(config_, largest_gravity({body_a, body_b}), h);
      // A point already separating faster than the threshold yet still
      // penetrating (a struck ball that has not cleared its neighbour) would
      // be pushed apart by the base solver's Baumgarte term, feeding energy
      // into a motion that is already separating; it gets no push-out.
      if (gap < 0.0 && u > threshold) p.m_distance1 = 0;
      if (!(gap <= config_.touch_tolerance || (u < 0.0 && gap + u * h <= config_.touch_tolerance)))
        continue;
      any_strike = any_strike ||
                   (u < -threshold &&
                    (p.m_combinedRestitution > 0 || config_.resolve_plastic_impacts));
      Impl::Point point;
      point.manifold = manifold;
      point.index = c;
      point.point = &p;
      point.object_a = manifold->getBody0();
      point.object_b = manifold->getBody1();
      point.body_a = body_a;
      point.body_b = body_b;
      point.u = u;
      s.points.push_back(point);
    }
  }

  if (any_strike) {
    for (Impl::Point& p : s.points) {
      p.a = s.index_of(p.body_a);
      p.b = s.index_of(p.body_b);
    }
    // 2. Clusters: contacts and joints between dynamic bodies. Joints may
    // pull in dynamic bodies that touch nothing (a pendulum's arm).
    bool grew = true;
    while (grew) {
      grew = false;
      for (int k = 0; k < num_constraints; ++k) {
        btTypedConstraint* joint = constraints[k];
        if (!joint->isEnabled()) continue;
        const bool has_a = s.index.count(&joint->getRigidBodyA()) > 0;
        const bool has_b = s.index.count(&joint->getRigidBodyB()) > 0;
        if (has_a == has_b) continue;
        const size_t before = s.bodies.size();
        s.index_of(&joint->getRigidBodyA());
        s.index_of(&joint->getRigidBodyB());
        grew = grew || s.bodies.size() != before;
      }
    }
    const int n_bodies = static_cast<int>(s.bodies.size());
    s.parent.resize(n_bodies);
    std::iota(s.parent.begin(), s.parent.end(), 0);
    for (const Impl::Point& p : s.points)
      if (p.a >= 0 && p.b >= 0) unite(s.parent, p.a, p.b);
    for (int k = 0; k < num_constraints; ++k) {
      btTypedConstraint* joint = constraints[k];
      if (!joint->isEnabled()) continue;
      const auto ia = s.index.find(&joint->getRigidBodyA());
      const auto ib = s.index.find(&joint->getRigidBodyB());
      if (ia != s.index.end() && ib != s.index.end()) unite(s.parent, ia->second, ib->second);
    }

    // 3–4. Resolve every cluster that has an impact.
    std::vector<std::vector<int>> cluster_points(n_bodies), cluster_bodies(n_bodies);
    for (int i = 0; i < n_bodies; ++i) cluster_bodies[find_root(s.parent, i)].push_back(i);
    for (int k = 0; k < static_cast<int>(s.points.size()); ++k) {
      const Impl::Point& p = s.points[k];
      cluster_points[find_root(s.parent, p.a >= 0 ? p.a : p.b)].push_back(k);
    }
    for (int root = 0; root < n_bodies; ++root)
      if (!cluster_points[root].empty())
        resolve_cluster(s, config_, stats_, cluster_bodies[root], cluster_points[root],
                        constraints, num_constraints, info);
  }

  hide_separating_points(s);

  // 5. Everything else is the base solver's, with restitution off.
  btContactSolverInfo base_info = info;
  base_info.m_restitutionVelocityThreshold = BT_LARGE_FLOAT;
  if (config_.split_impulse_for_all_penetrations) {
    // SI corrects a penetration (distance < 0) in the real velocity
    // (Baumgarte, m_erp) when `distance > m_splitImpulsePenetrationThreshold`
    // and with split impulse (push velocity, m_erp2) otherwise; with the
    // threshold at +∞ every penetration takes the split path and position
    // correction never feeds kinetic energy.
    base_info.m_splitImpulse = 1;
    base_info.m_splitImpulsePenetrationThreshold = BT_LARGE_FLOAT;
  }
  const btScalar residual = base_->solveGroup(bodies, num_bodies, manifolds, num_manifolds,
                                              constraints, num_constraints, base_info,
                                              debug_drawer, dispatcher);
  for (const auto& [manifold, count] : s.hidden_counts) manifold->setNumContacts(count);
  return residual;
}

namespace {

// Displaces a body by a 6-vector [Δx, Δθ] (rotation vector, world frame).
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

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

void resolve_cluster(ImpactSolver::Impl& s, const ImpactSolverConfig& config,
                     ImpactSolverStats& stats, const std::vector<int>& members,
                     const std::vector<int>& ids, btTypedConstraint** constraints,
                     int num_constraints, const btContactSolverInfo& info) {
  // Cluster-local body numbers; only members' entries of `local` are read.
  std::vector<int>& local = s.local;
  local.resize(s.bodies.size());
  double gravity = 0.0;
  for (int j = 0; j < static_cast<int>(members.size()); ++j) {
    local[members[j]] = j;
    gravity = std::max(gravity, largest_gravity({s.bodies[members[j]]}));
  }
  const double threshold = impact_threshold(config, gravity, double(info.m_timeStep));
  double restitution = 1.0;
  bool impact = false;
  for (const int id : ids) {
    const auto& p = s.points[id];
    if (p.u < -threshold) {
      restitution = impact ? std::min(restitution, double(p.point->m_combinedRestitution))
                           : double(p.point->m_combinedRestitution);
      impact = true;
    }
  }
  if (!impact) return;
  restitution = std::clamp(restitution, 0.0, 1.0);
  if (restitution == 0.0 && !config.resolve_plastic_impacts) return;  // the base solver's

  const int k = static_cast<int>(members.size());
  const int m = static_cast<int>(ids.size());
  Eigen::MatrixXd inverse_mass = Eigen::MatrixXd::Zero(6 * k, 6 * k);
  Eigen::VectorXd velocity(6 * k);
  // The impact acts on the mid-step velocity v* = v + ½ h M⁻¹ f_ext, and its
  // change Δv = v⁺ − v* is added to the pre-force velocity v (Bullet's rigid
  // velocity here excludes this step's force increment; the base solver
  // adds it). Why mid-step: symplectic Euler, Bullet's integrator, conserves
  // the shadow energy ½vᵀMv − fᵀx + ½h fᵀv between impacts, not ½vᵀMv − fᵀx;
  // an elastic impact that conserves ½v*ᵀMv* conserves exactly that shadow
  // energy, so a ball dropped with R = 1 returns to its drop height bounce
  // after bounce (reflecting v instead loses h·|g| of speed per bounce,
  // reflecting the end-of-step velocity gains it).
  Eigen::VectorXd pre_force(6 * k);
  for (int j = 0; j < k; ++j) {
    const btRigidBody& body = *s.bodies[members[j]];
    inverse_mass.block<6, 6>(6 * j, 6 * j) = internal::body_inverse_mass(body);
    pre_force.segment<6>(6 * j) = internal::body_velocity(body);
    velocity.segment<3>(6 * j) =
        pre_force.segment<3>(6 * j) + to_eigen(body.getTotalForce() * body.getInvMass() * (0.5 * info.m_timeStep));
    velocity.segment<3>(6 * j + 3) =
        pre_force.segment<3>(6 * j + 3) +
        to_eigen(body.getInvInertiaTensorWorld() * body.getTotalTorque() * (0.5 * info.m_timeStep));
  }
  Eigen::MatrixXd normals = Eigen::MatrixXd::Zero(m, 6 * k);
  Eigen::VectorXd offsets = Eigen::VectorXd::Zero(m);
  for (int r = 0; r < m; ++r) {
    const auto& p = s.points[ids[r]];
    const Eigen::Vector3d n = to_eigen(p.point->m_normalWorldOnB);
    const btVector3& on_a = p.point->getPositionWorldOnA();
    const btVector3& on_b = p.point->getPositionWorldOnB();
    if (p.a >= 0) {
      const Eigen::Vector3d ra = to_eigen(on_a - p.body_a->getCenterOfMassPosition());
      normals.block<1, 3>(r, 6 * local[p.a]) = n.transpose();
      normals.block<1, 3>(r, 6 * local[p.a] + 3) = ra.cross(n).transpose();
    } else {
      offsets[r] += n.dot(point_velocity(p.body_a, on_a));
    }
    if (p.b >= 0) {
      const Eigen::Vector3d rb = to_eigen(on_b - p.body_b->getCenterOfMassPosition());
      normals.block<1, 3>(r, 6 * local[p.b]) = -n.transpose();
      normals.block<1, 3>(r, 6 * local[p.b] + 3) = -rb.cross(n).transpose();
    } else {
      offsets[r] -= n.dot(point_velocity(p.body_b, on_b));
    }
  }
  Eigen::MatrixXd joint_rows;
  internal::append_bilateral_joint_rows(
      constraints, num_constraints,
      [&](const btRigidBody* body) {
        const auto it = s.index.find(body);
        return it == s.index.end() ? -1 : local[it->second];
      },
      k, info, joint_rows);
  if (joint_rows.rows() > 0) inverse_mass = internal::constrained_inverse_mass(inverse_mass, joint_rows);

  ImpactProblem problem = ImpactProblem::from_dense(inverse_mass, normals, velocity);
  problem.offsets = offsets;
  problem.restitution = restitution;

  PropagativeParameters parameters;
  parameters.policy = config.policy == OrderPolicy::kAll ? OrderPolicy::kMostNegative : config.policy;
  parameters.seed = mix_seed(config.seed, s.impact_counter++);
  parameters.max_reflections = config.max_reflections;
  // The problem is assembled here from Bullet's state; validation would only
  // re-check our own assembly (finite inputs are checked below).
  parameters.validate_input = false;
  parameters.compute_energy = true;
  s.solver.set_parameters(parameters);

  ImpactReport report;
  report.restitution = restitution;
  ++stats.impacts;
  if (!velocity.allFinite() || !inverse_mass.allFinite() || !normals.allFinite() ||
      !offsets.allFinite()) {
    ++stats.fallbacks;
    report.status = Status::kInfeasible;
    report.message = "non-finite body state: impact left to the base solver";
  } else {
    const ImpactResult& result = s.solver.solve(problem);
    stats.reflections += result.reflections;
    if (result.status != Status::kSuccess) ++stats.fallbacks;
    const Eigen::VectorXd& after = result.outcomes.at(0).velocity;
    const Eigen::VectorXd change = after - velocity;
    for (int j = 0; j < k; ++j)
      internal::set_body_velocity(*s.bodies[members[j]],
                                  pre_force.segment<6>(6 * j) + change.segment<6>(6 * j));
    // Points the impact leaves separating clear their overlap by themselves
    // (and are hidden from the base solver). Points it leaves closed but
    // overlapping — Bullet found them only after they penetrated, e.g. the
    // striker and the ball it stopped against — are separated here at
    // position level, x += M⁻¹ Jᵀ μ with μ_r = −distance_r / W_rr (one
    // Gauss–Seidel sweep), which changes no velocity: the base solver's
    // Baumgarte push would otherwise turn the overlap into kinetic energy.
    Eigen::VectorXd displacement = Eigen::VectorXd::Zero(6 * k);
    for (int r = 0; r < m; ++r) {
      if (normals.row(r).dot(after) + offsets[r] > threshold) {
        s.separating.push_back(ids[r]);
        continue;
      }
      const double depth = -double(s.points[ids[r]].point->getDistance()) -
                           normals.row(r).dot(displacement);
      if (depth <= 0.0) continue;
      const Eigen::VectorXd response = inverse_mass * normals.row(r).transpose();
      const double w = normals.row(r).dot(response);
      if (w > 0.0) displacement += response * (depth / w);
    }
    if (displacement.squaredNorm() > 0.0)
      for (int j = 0; j < k; ++j) move_body(*s.bodies[members[j]], displacement.segment<6>(6 * j));
    report.status = result.status;
    report.message = result.message;
    report.sequence = result.outcomes[0].sequence;
    report.energy_before = result.energy_before;
    report.energy_after = result.energy_after;
    for (int r = 0; r < m; ++r) {
      const auto& p = s.points[ids[r]];
      const double u = normals.row(r).dot(velocity) + offsets[r];  // end-of-step, as resolved
      report.contacts.push_back({p.object_a, p.object_b, -u, result.outcomes[0].impulses[r],
                                 p.point->getPositionWorldOnA(), p.point->getPositionWorldOnB(),
                                 p.point->m_normalWorldOnB});
    }
    if (config.compute_indeterminacy) {
      PropagativeParameters all = parameters;
      all.policy = OrderPolicy::kAll;
      s.enumerator.set_parameters(all);
      report.indeterminacy = s.enumerator.solve(problem).indeterminacy;
    }
  }
  // The impact replaced whatever these points carried from the last step.
  // Their penetration is not corrected this step: the impact's velocities
  // carry the bodies apart, while a push-out by the base solver would add
  // potential energy at every bounce (a ball that reaches the ground between
  // two steps would climb higher each time). Collision detection recomputes
  // the distance next step.
  for (const int id : ids) {
    btManifoldPoint& point = *s.points[id].point;
    point.m_appliedImpulse = 0;
    point.m_appliedImpulseLateral1 = 0;
    point.m_appliedImpulseLateral2 = 0;
    if (point.m_distance1 < 0) point.m_distance1 = 0;
  }
  if (config.on_impact) {
    for (const int j : members) report.bodies.push_back(s.bodies[j]);
    config.on_impact(report);
  }
}

}  // namespace

}  // namespace simpact::bullet
