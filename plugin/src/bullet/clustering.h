// What the two Bullet adapters, ImpactSolver (rigid bodies) and
// MultiBodyImpactSolver (Featherstone multibodies), share: conversions, the
// impact threshold, the seeds, the tangent frame of the Routh laws, the
// union–find clustering of a batch (contacts and enabled btTypedConstraints
// join nodes), the per-cluster strike rule, and the assembly of the core
// problems from dense rows. Internal to simpact::bullet; never installed.
//
// Everything here is exactly what each adapter did on its own before it was
// shared: the same operations in the same order (results are bit-identical).
#pragma once

#include <simpact/bullet/impact_solver.h>
#include <simpact/frictional_problem.h>
#include <simpact/propagative.h>
#include <simpact/routh.h>

#include <Eigen/Core>

#include <LinearMath/btVector3.h>
#include <BulletDynamics/ConstraintSolver/btTypedConstraint.h>
#include <BulletDynamics/Dynamics/btRigidBody.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

class btCollisionObject;
class btManifoldPoint;
class btPersistentManifold;

namespace simpact::bullet::internal {

inline Eigen::Vector3d to_eigen(const btVector3& v) {
  return {double(v.x()), double(v.y()), double(v.z())};
}

inline btVector3 to_bullet(const Eigen::Vector3d& v) {
  return btVector3(btScalar(v.x()), btScalar(v.y()), btScalar(v.z()));
}

/// A rigid body that moves under impulses: not static, not kinematic, m⁻¹ > 0.
/// Inline: every stage asks it of every point's two bodies.
inline bool is_dynamic(const btRigidBody* body) {
  return body != nullptr && !body->isStaticOrKinematicObject() && body->getInvMass() > 0;
}

/// The impact threshold [m/s] (ImpactSolverConfig::impact_threshold):
/// `configured` when ≥ 0, else max(kThresholdGravitySteps·gravity·h,
/// kMinimumImpactThreshold), `gravity` the largest |g| of the bodies.
double impact_threshold(double configured, double gravity, double h);

/// Whether `manifold` carried load in the last base solve: one of its
/// points has a positive m_appliedImpulse (written back by Bullet's
/// solvers; zeroed by BaseSolverHandoff::forget for the points an impact
/// resolved; a point hidden from the base solve keeps the value of the
/// solve before, an MLCP base's adhesive (negative) impulses count as
/// none). False for null (a synthetic point).
bool carried_load(const btPersistentManifold* manifold);

/// The two speeds a point's approach is compared with to decide whether it
/// strikes (ImpactSettings::impact_threshold, sustained_threshold) [m/s].
struct StrikeThresholds {
  double impact = 0.0;     ///< impact_threshold(...)
  double sustained = 0.0;  ///< ≥ impact: for points of a manifold that carried load
  /// The threshold for a point of `manifold` (null: a synthetic point).
  double of(const btPersistentManifold* manifold) const { return carried_load(manifold) ? sustained : impact; }
  /// u < −of(manifold): the point approaches fast enough to be an impact.
  /// (sustained ≥ impact: a point slower than the impact threshold never
  /// strikes, and its manifold's load is not looked at.)
  bool strikes(double u, const btPersistentManifold* manifold) const {
    return u < -impact && u < -of(manifold);
  }
};

/// impact = impact_threshold(impact_configured, gravity, h); sustained =
/// max(impact, sustained_configured) when sustained_configured ≥ 0, else
/// max(impact, kSustainedGravitySteps · gravity · h).
StrikeThresholds strike_thresholds(double impact_configured, double sustained_configured, double gravity,
                                   double h);

/// SplitMix64 finalizer of seed + golden-ratio × (counter + 1)
/// (impact_solver.h, "Seeds").
std::uint64_t mix_seed(std::uint64_t seed, std::uint64_t counter);

/// The seed of a cluster's Routh sample: mix(mix(seed, steps), key), key
/// the smallest world array index of the cluster's moving objects.
std::uint64_t routh_seed(std::uint64_t seed, std::uint64_t steps, int key);

/// btPlaneSpace1 in double: two unit vectors completing the unit n to an
/// orthonormal frame (p, q = n × p, q written out as btPlaneSpace1 does).
void plane_space(const Eigen::Vector3d& n, Eigen::Vector3d& p, Eigen::Vector3d& q);

/// The Routh laws' tangent frame of a contact with unit normal n: t1 along
/// the tangential `slip` when |slip| > kSlipFrameTolerance × `approach` (and
/// non-zero), t2 = n × t1; otherwise plane_space(n).
void tangent_frame(const Eigen::Vector3d& n, const Eigen::Vector3d& slip, double approach,
                   Eigen::Vector3d& t1, Eigen::Vector3d& t2);

/// Folds one contact point into its cluster's strike: a point approaching
/// faster than `threshold` (u < −threshold) makes the cluster an impact, and
/// the cluster's restitution is the smallest point_restitution of those
/// points (clamp it to [0, 1] when all are folded in).
void note_strike(double u, double threshold, double point_restitution, bool& impact, double& restitution);

/// The restitution of a contact point as its bodies define it. Bullet's
/// CCD (btDiscreteDynamicsWorld::createPredictiveContactsInternal) adds a
/// predictive point for a fast body about to hit something within the step
/// and forces its m_combinedRestitution to 0: a speculative position
/// constraint, not a statement about the materials. Left so, it would make
/// every impact it joins plastic, and a CCD ball would stop dead. A
/// predictive point is recognised as Bullet makes it: body 0 has CCD on
/// (getCcdMotionThreshold() > 0), m_localPointA is exactly zero and
/// m_positionWorldOnA is body 0's origin — a real contact lies on body 0's
/// surface, never at its centre. It takes
/// gCalculateCombinedRestitutionCallback(body 0, body 1), what Bullet gives
/// the same pair's regular points; every other point (`manifold` null
/// included) its own m_combinedRestitution, which a user's contact callback
/// may have set.
double point_restitution(const btPersistentManifold* manifold, const btManifoldPoint& point);

/// The report entry of a contact point (impulse, tangents and friction
/// impulse left at their defaults).
ImpactReport::Contact contact_report(const btCollisionObject* a, const btCollisionObject* b,
                                     const btManifoldPoint& point, double approach_speed);

/// The propagative problem of dense rows: M⁻¹, J, v*, offsets b, R.
ImpactProblem impact_problem(const SparseColMatrix& inverse_mass, const SparseRowMatrix& normals,
                             const Eigen::VectorXd& velocity, const Eigen::VectorXd& offsets,
                             double restitution);

/// The plastic LCP's accepted residual for this build's btScalar
/// (PropagativeParameters::plastic_residual_tolerance; the adapters pass it
/// to every law that takes it: propagative, Pasquero's plastic fallback,
/// the variational law's enumeration): the core's 1e-9 in
/// double; in single precision 2⁻²⁴ = 6.0e-8, float's unit roundoff. The
/// outcome is written back into float velocities, which rounds every
/// component by up to that fraction of its size, so a residual below it
/// cannot survive the write-back; single-precision contact rows are
/// dependent only to ~1e-7, and asking the LCP solvers for 1e-9 on them sent
/// 1100–1300-contact LCPs to box pivoting for 0.26–0.32 s a frame
/// (docs/scaling.md, "Ball pits", single precision).
inline constexpr double kPlasticResidualTolerance =
    std::max(1e-9, 0.5 * static_cast<double>(std::numeric_limits<btScalar>::epsilon()));
static_assert(kPlasticResidualTolerance >= kMinPlasticResidualTolerance &&
                  kPlasticResidualTolerance <= kMaxPlasticResidualTolerance,
              "the adapter's plastic residual must be one the core accepts");

/// The propagative law's parameters for one cluster; the input is assembled
/// by the adapter from Bullet's state and checked for finiteness there, so
/// the core's validation is off. The plastic residual is
/// kPlasticResidualTolerance.
PropagativeParameters propagative_parameters(OrderPolicy policy, std::uint64_t seed,
                                             std::int64_t max_reflections, bool compute_energy);

/// The Routh laws' frictional problem of sparse rows (normal rows 1 per
/// contact, tangent rows 2r, 2r + 1 of contact r).
FrictionalProblem frictional_problem(const SparseColMatrix& inverse_mass, const SparseRowMatrix& normals,
                                     const SparseRowMatrix& tangents, const Eigen::VectorXd& velocity,
                                     const Eigen::VectorXd& friction, const Eigen::VectorXd& normal_offsets,
                                     const Eigen::VectorXd& tangent_offsets, int cone_directions);

/// RouthSampler's parameters from the adapters' RouthSettings (validation
/// off, as propagative_parameters).
RouthParameters routh_parameters(const RouthSettings& settings, std::uint64_t seed);

// ── Clustering ──────────────────────────────────────────────────────────────

int find_root(std::vector<int>& parent, int i);
/// Compressed rows from (row, value) edges: row i's values are
/// values[begin[i], begin[i + 1]), in edge order (a counting sort, linear
/// in edges plus rows); rows no edge names are empty.
template <class T>
void compressed_rows(const std::vector<std::pair<int, T>>& edges, std::size_t rows, std::vector<int>& begin,
                     std::vector<T>& values) {
  begin.assign(rows + 1, 0);
  for (const auto& edge : edges) ++begin[static_cast<std::size_t>(edge.first) + 1];
  for (std::size_t i = 0; i < rows; ++i) begin[i + 1] += begin[i];
  values.resize(edges.size());
  std::vector<int> next(begin.begin(), begin.end() - 1);
  for (const auto& edge : edges)
    values[static_cast<std::size_t>(next[static_cast<std::size_t>(edge.first)]++)] = edge.second;
}

/// Joins the sets of a and b; the root is the lower index.
void unite(std::vector<int>& parent, int a, int b);

/// Clusters of one batch, by root (the lowest node index of the cluster).
/// The vectors are reused from batch to batch: only [0, num_nodes) is valid.
struct Clusters {
  int num_nodes = 0;
  std::vector<int> parent;
  std::vector<std::vector<int>> members;  ///< node indices, ascending
  std::vector<std::vector<int>> points;   ///< point indices, ascending
};

/// Union–find over an adapter's nodes. `Graph` provides
///   int  num_nodes() const;
///   int  node(const btRigidBody*) const;  // its node index, −1 when not a node
///   void add(btRigidBody*);               // makes a dynamic rigid body a node (idempotent)
///   int  num_points() const;
///   int  end_a(int point) const, end_b(int point) const;  // node, or −1 (immovable)
/// First every enabled btTypedConstraint with exactly one body among the
/// nodes pulls the other one in, and so on from each body pulled in (a
/// jointed chain of bodies that touch nothing, a pendulum's arm): one scan
/// of the joints in order, then breadth first from the bodies in the order
/// they joined, each body's joints in order. Then contacts between two
/// nodes and enabled joints between two nodes unite them. Every point has
/// at least one end that is a node. O(J log J + points) for J joints
/// (repeated scans until nothing grew were O(J²) on a chain whose joints
/// Bullet hands over out of order, as it does after sorting them by island:
/// 0.8 s of a 10⁴-link chain's impact step).
template <class Graph>
void build_clusters(Graph& graph, btTypedConstraint* const* constraints, int num_constraints,
                    Clusters& out) {
  std::vector<btRigidBody*> pulled;  // bodies joints pulled in, in the order they joined
  const auto pull = [&](int k) {
    btTypedConstraint* joint = constraints[k];
    btRigidBody* a = &joint->getRigidBodyA();
    btRigidBody* b = &joint->getRigidBodyB();
    const bool has_a = graph.node(a) >= 0;
    const bool has_b = graph.node(b) >= 0;
    if (has_a == has_b) return;
    const int before = graph.num_nodes();
    graph.add(a);
    graph.add(b);
    if (graph.num_nodes() != before) pulled.push_back(has_a ? b : a);
  };
  // The scan in joint order; each enabled joint also filed under both its
  // bodies (pointer order groups them; within a body, joint order) for the
  // walk from the bodies pulled in.
  std::vector<std::pair<const btRigidBody*, int>> ends;
  for (int k = 0; k < num_constraints; ++k) {
    btTypedConstraint* joint = constraints[k];
    if (!joint->isEnabled()) continue;
    ends.emplace_back(&joint->getRigidBodyA(), k);
    ends.emplace_back(&joint->getRigidBodyB(), k);
    pull(k);
  }
  std::sort(ends.begin(), ends.end());
  for (size_t next = 0; next < pulled.size(); ++next) {
    const btRigidBody* body = pulled[next];
    auto it = std::lower_bound(ends.begin(), ends.end(), std::make_pair(body, -1));
    for (; it != ends.end() && it->first == body; ++it) pull(it->second);
  }
  const int n = graph.num_nodes();
  out.num_nodes = n;
  out.parent.resize(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) out.parent[static_cast<size_t>(i)] = i;
  const int m = graph.num_points();
  for (int k = 0; k < m; ++k) {
    const int a = graph.end_a(k), b = graph.end_b(k);
    if (a >= 0 && b >= 0) unite(out.parent, a, b);
  }
  for (int k = 0; k < num_constraints; ++k) {
    btTypedConstraint* joint = constraints[k];
    if (!joint->isEnabled()) continue;
    const int a = graph.node(&joint->getRigidBodyA());
    const int b = graph.node(&joint->getRigidBodyB());
    if (a >= 0 && b >= 0) unite(out.parent, a, b);
  }
  if (static_cast<int>(out.members.size()) < n) {
    out.members.resize(static_cast<size_t>(n));
    out.points.resize(static_cast<size_t>(n));
  }
  for (int i = 0; i < n; ++i) {
    out.members[static_cast<size_t>(i)].clear();
    out.points[static_cast<size_t>(i)].clear();
  }
  for (int i = 0; i < n; ++i) out.members[static_cast<size_t>(find_root(out.parent, i))].push_back(i);
  for (int k = 0; k < m; ++k) {
    const int a = graph.end_a(k);
    out.points[static_cast<size_t>(find_root(out.parent, a >= 0 ? a : graph.end_b(k)))].push_back(k);
  }
}

}  // namespace simpact::bullet::internal
