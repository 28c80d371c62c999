#include "bullet/clustering.h"

#include <Eigen/Geometry>

#include <BulletCollision/CollisionDispatch/btCollisionObject.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>
#include <BulletCollision/NarrowPhaseCollision/btManifoldPoint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <cmath>

namespace simpact::bullet::internal {

double impact_threshold(double configured, double gravity, double h) {
  if (configured >= 0.0) return configured;
  return std::max(kThresholdGravitySteps * gravity * h, kMinimumImpactThreshold);
}

bool carried_load(const btPersistentManifold* manifold) {
  if (manifold == nullptr) return false;
  for (int c = 0; c < manifold->getNumContacts(); ++c)
    if (manifold->getContactPoint(c).m_appliedImpulse > 0) return true;
  return false;
}

StrikeThresholds strike_thresholds(double impact_configured, double sustained_configured, double gravity,
                                   double h) {
  StrikeThresholds t;
  t.impact = impact_threshold(impact_configured, gravity, h);
  t.sustained = std::max(t.impact, sustained_configured >= 0.0 ? sustained_configured
                                                              : kSustainedGravitySteps * gravity * h);
  return t;
}

std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t counter) {
  std::uint64_t z = seed + 0x9E3779B97F4A7C15ULL * (counter + 1);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

std::uint64_t routh_seed(std::uint64_t seed, std::uint64_t steps, int key) {
  return mix_seed(mix_seed(seed, steps), static_cast<std::uint64_t>(static_cast<std::int64_t>(key)));
}

void plane_space(const Eigen::Vector3d& n, Eigen::Vector3d& p, Eigen::Vector3d& q) {
  constexpr double kSqrtHalf = 0.7071067811865475244;
  if (std::abs(n.z()) > kSqrtHalf) {
    const double a = n.y() * n.y() + n.z() * n.z();
    const double k = 1.0 / std::sqrt(a);
    p = Eigen::Vector3d(0.0, -n.z() * k, n.y() * k);
    q = Eigen::Vector3d(a * k, -n.x() * p.z(), n.x() * p.y());
  } else {
    const double a = n.x() * n.x() + n.y() * n.y();
    const double k = 1.0 / std::sqrt(a);
    p = Eigen::Vector3d(-n.y() * k, n.x() * k, 0.0);
    q = Eigen::Vector3d(-n.z() * p.y(), n.z() * p.x(), a * k);
  }
}

void tangent_frame(const Eigen::Vector3d& n, const Eigen::Vector3d& slip, double approach,
                   Eigen::Vector3d& t1, Eigen::Vector3d& t2) {
  if (slip.norm() > kSlipFrameTolerance * approach && slip.norm() > 0.0) {
    t1 = slip.normalized();
    t2 = n.cross(t1);
  } else {
    plane_space(n, t1, t2);
  }
}

void note_strike(double u, double threshold, double point_restitution, bool& impact, double& restitution) {
  if (!(u < -threshold)) return;
  restitution = impact ? std::min(restitution, point_restitution) : point_restitution;
  impact = true;
}

double point_restitution(const btPersistentManifold* manifold, const btManifoldPoint& point) {
  if (manifold != nullptr) {
    const btCollisionObject* a = manifold->getBody0();
    const btCollisionObject* b = manifold->getBody1();
    const bool predictive = a != nullptr && b != nullptr && a->getCcdMotionThreshold() > btScalar(0) &&
                            point.m_localPointA.isZero() &&
                            point.m_positionWorldOnA == a->getWorldTransform().getOrigin();
    if (predictive) return double(gCalculateCombinedRestitutionCallback(a, b));
  }
  return double(point.m_combinedRestitution);
}

ImpactReport::Contact contact_report(const btCollisionObject* a, const btCollisionObject* b,
                                     const btManifoldPoint& point, double approach_speed) {
  ImpactReport::Contact contact;
  contact.a = a;
  contact.b = b;
  contact.id_a = a != nullptr ? a->getWorldArrayIndex() : -1;
  contact.id_b = b != nullptr ? b->getWorldArrayIndex() : -1;
  contact.approach_speed = approach_speed;
  contact.point_on_a = point.getPositionWorldOnA();
  contact.point_on_b = point.getPositionWorldOnB();
  contact.normal = point.m_normalWorldOnB;
  contact.friction = double(point.m_combinedFriction);
  return contact;
}

ImpactProblem impact_problem(const SparseColMatrix& inverse_mass, const SparseRowMatrix& normals,
                             const Eigen::VectorXd& velocity, const Eigen::VectorXd& offsets,
                             double restitution) {
  ImpactProblem problem;
  problem.inverse_mass = inverse_mass;
  problem.normals = normals;
  problem.velocity = velocity;
  problem.offsets = offsets;
  problem.restitution = restitution;
  return problem;
}

PropagativeParameters propagative_parameters(OrderPolicy policy, std::uint64_t seed,
                                             std::int64_t max_reflections, bool compute_energy) {
  PropagativeParameters parameters;
  parameters.policy = policy;
  parameters.seed = seed;
  parameters.max_reflections = max_reflections;
  parameters.validate_input = false;
  parameters.compute_energy = compute_energy;
  parameters.plastic_residual_tolerance = kPlasticResidualTolerance;
  return parameters;
}

FrictionalProblem frictional_problem(const SparseColMatrix& inverse_mass, const SparseRowMatrix& normals,
                                     const SparseRowMatrix& tangents, const Eigen::VectorXd& velocity,
                                     const Eigen::VectorXd& friction, const Eigen::VectorXd& normal_offsets,
                                     const Eigen::VectorXd& tangent_offsets, int cone_directions) {
  FrictionalProblem problem;
  problem.inverse_mass = inverse_mass;
  problem.normals = normals;
  problem.tangents = tangents;
  problem.velocity = velocity;
  problem.friction = friction;
  problem.normal_offsets = normal_offsets;
  problem.tangent_offsets = tangent_offsets;
  problem.cone_directions = cone_directions;
  return problem;
}

RouthParameters routh_parameters(const RouthSettings& settings, std::uint64_t seed) {
  RouthParameters parameters;
  parameters.step = settings.step;
  parameters.automatic_step = settings.automatic_step;
  parameters.max_steps = settings.max_steps;
  parameters.seed = seed;
  parameters.sampler = settings.sampler;
  parameters.increment_solver = settings.increment_solver;
  parameters.validate_input = false;
  return parameters;
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

}  // namespace simpact::bullet::internal
