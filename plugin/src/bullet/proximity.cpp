#include "bullet/proximity.h"

#include "bullet/clustering.h"
#include "bullet/object_numbers.h"

#include <BulletCollision/BroadphaseCollision/btCollisionAlgorithm.h>
#include <BulletCollision/BroadphaseCollision/btDispatcher.h>
#include <BulletCollision/CollisionDispatch/btCollisionObject.h>
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>
#include <BulletCollision/CollisionShapes/btCollisionShape.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <functional>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

namespace simpact::bullet::internal {

double gap_tolerance(double breaking_threshold, double strike_speed, double h) {
  return std::min(breaking_threshold, strike_speed * h);
}

Eigen::VectorXd time_of_impact_hints(const Eigen::VectorXd& distance, const Eigen::VectorXd& approach) {
  if (distance.size() != approach.size())
    throw std::invalid_argument("time_of_impact_hints: " + std::to_string(distance.size()) +
                                " distances for " + std::to_string(approach.size()) + " velocities");
  const Eigen::Index m = distance.size();
  double strike = 0.0;
  for (Eigen::Index r = 0; r < m; ++r) strike = std::max(strike, -approach[r]);
  Eigen::VectorXd hints(m);
  for (Eigen::Index r = 0; r < m; ++r) {
    const double speed = approach[r] < 0.0 ? -approach[r] : strike;
    const double gap = std::max(distance[r], 0.0);
    hints[r] = gap == 0.0 ? 0.0 : speed > 0.0 ? gap / speed : std::numeric_limits<double>::max();
  }
  return hints;
}

namespace {

// A btManifoldResult that records the points of one closest-point query
// instead of adding them to a manifold, in the order (a, b) of the batch
// manifold. Bullet's algorithms report each point in the body order of the
// manifold they set on the result (setPersistentManifold: their own, made
// by the dispatcher for the query), which is the query's order or, for
// swapped algorithms, the reverse; points are turned into (a, b) here.
//
// `shift`: B was queried moved by this (contact_after_closing); its points
// are moved back and their distances measured in the real configuration.
class ClosestPoints : public btManifoldResult {
 public:
  ClosestPoints(const btCollisionObjectWrapper* a, const btCollisionObjectWrapper* b, btScalar tolerance,
                btScalar query_threshold, const btVector3& shift = btVector3(0, 0, 0))
      : btManifoldResult(a, b), a_(a->getCollisionObject()), b_(b->getCollisionObject()),
        tolerance_(tolerance), shift_(shift) {
    m_closestPointDistanceThreshold = query_threshold;
  }

  void addContactPoint(const btVector3& normal_on_b, const btVector3& point_on_b, btScalar reported) override {
    const bool swapped = m_manifoldPtr != nullptr && m_manifoldPtr->getBody0() != a_;
    btVector3 normal = normal_on_b;
    btVector3 on_b = point_on_b;
    btVector3 on_a = point_on_b + normal_on_b * reported;
    if (swapped) {
      normal = -normal_on_b;
      std::swap(on_a, on_b);
    }
    on_b -= shift_;
    const btScalar depth = reported + shift_.dot(normal);
    if (!(depth <= tolerance_)) return;  // farther, or NaN
    if (normal.fuzzyZero() || !std::isfinite(double(normal.length2())) ||
        !std::isfinite(double(on_a.length2())) || !std::isfinite(double(on_b.length2())))
      return;
    btManifoldPoint p(a_->getWorldTransform().invXform(on_a), b_->getWorldTransform().invXform(on_b),
                      normal, depth);
    p.m_positionWorldOnA = on_a;
    p.m_positionWorldOnB = on_b;
    p.m_combinedFriction = gCalculateCombinedFrictionCallback(a_, b_);
    p.m_combinedRestitution = gCalculateCombinedRestitutionCallback(a_, b_);
    p.m_combinedRollingFriction = gCalculateCombinedRollingFrictionCallback(a_, b_);
    p.m_combinedSpinningFriction = gCalculateCombinedSpinningFrictionCallback(a_, b_);
    btPlaneSpace1(p.m_normalWorldOnB, p.m_lateralFrictionDir1, p.m_lateralFrictionDir2);
    found.push_back(p);
  }

  std::vector<btManifoldPoint> found;

 private:
  const btCollisionObject* a_;
  const btCollisionObject* b_;
  btScalar tolerance_;
  btVector3 shift_;
};

// Runs the pair's algorithm of `type` on (a, b), b moved by `shift`.
std::vector<btManifoldPoint> query(btDispatcher& dispatcher, const btCollisionObject* a,
                                   const btCollisionObject* b, ebtDispatcherQueryType type,
                                   btScalar tolerance, btScalar query_threshold, const btVector3& shift) {
  static const btDispatcherInfo info;  // discrete, no SAT, no debug drawer: Bullet's defaults
  btTransform moved = b->getWorldTransform();
  moved.setOrigin(moved.getOrigin() + shift);
  btCollisionObjectWrapper wrap_a(nullptr, a->getCollisionShape(), a, a->getWorldTransform(), -1, -1);
  btCollisionObjectWrapper wrap_b(nullptr, b->getCollisionShape(), b, moved, -1, -1);
  btCollisionAlgorithm* algorithm = dispatcher.findAlgorithm(&wrap_a, &wrap_b, nullptr, type);
  if (algorithm == nullptr) return {};
  ClosestPoints result(&wrap_a, &wrap_b, tolerance, query_threshold, shift);
  algorithm->processCollision(&wrap_a, &wrap_b, info, &result);
  algorithm->~btCollisionAlgorithm();
  dispatcher.freeCollisionAlgorithm(algorithm);
  return std::move(result.found);
}

// The contact Bullet would make once the gap closed (header, "One query,
// one point"): the pair's contact algorithm run with B moved along the
// normal of `nearest` (a closest point at a positive distance) until the two
// overlap by kClosingOverlap × the breaking threshold, points moved back.
// Falls back to the closest points when that finds nothing.
std::vector<btManifoldPoint> contact_after_closing(btDispatcher& dispatcher, const btCollisionObject* a,
                                                   const btCollisionObject* b, btScalar tolerance,
                                                   btScalar breaking, const btManifoldPoint* nearest,
                                                   std::vector<btManifoldPoint> closest) {
  const btVector3 shift =
      nearest->m_normalWorldOnB * (nearest->getDistance() + btScalar(kClosingOverlap) * breaking);
  std::vector<btManifoldPoint> full =
      query(dispatcher, a, b, BT_CONTACT_POINT_ALGORITHMS, tolerance, 0, shift);
  return full.empty() ? closest : full;
}

// A contiguous run of a flat array.
template <class T>
struct Range {
  const T* first = nullptr;
  const T* last = nullptr;
  const T* begin() const { return first; }
  const T* end() const { return last; }
};
// The manifolds of one object pair, in batch order.
using PairManifolds = Range<btPersistentManifold*>;

// Whether some point of the pair's batch manifolds lies within that
// manifold's contact-breaking threshold of `p` (on B; getCacheEntry's rule).
bool has_point_near(PairManifolds manifolds, const btCollisionObject* b, const btManifoldPoint& p) {
  for (const btPersistentManifold* manifold : manifolds) {
    const btScalar reach = manifold->getContactBreakingThreshold();
    for (int i = 0; i < manifold->getNumContacts(); ++i) {
      const btManifoldPoint& q = manifold->getContactPoint(i);
      const btVector3& q_on_b = manifold->getBody1() == b ? q.getPositionWorldOnB() : q.getPositionWorldOnA();
      if ((q_on_b - p.getPositionWorldOnB()).length2() < reach * reach) return true;
    }
  }
  return false;
}

// Whether one of the pair's batch manifolds holds a point at distance ≤ 0:
// Bullet's narrowphase, on this step's positions, found the pair touching
// or overlapping and made its points itself (header, "What").
bool narrowphase_touches(PairManifolds manifolds) {
  for (const btPersistentManifold* manifold : manifolds)
    for (int i = 0; i < manifold->getNumContacts(); ++i)
      if (manifold->getContactPoint(i).getDistance() <= btScalar(0)) return true;
  return false;
}

// Whether the two objects' bounding boxes (btCollisionShape::getAabb, which
// holds the shape with its margin) are farther apart than `tolerance` along
// some axis: then no point of the pair is within it and a query would find
// nothing.
bool bounds_apart(const btCollisionObject* a, const btCollisionObject* b, btScalar tolerance) {
  btVector3 min_a, max_a, min_b, max_b;
  a->getCollisionShape()->getAabb(a->getWorldTransform(), min_a, max_a);
  b->getCollisionShape()->getAabb(b->getWorldTransform(), min_b, max_b);
  for (int axis = 0; axis < 3; ++axis)
    if (min_b[axis] - max_a[axis] > tolerance || min_a[axis] - max_b[axis] > tolerance) return true;
  return false;
}

// The walk's graph over one batch in flat arrays, built once per find():
// its objects (ObjectNumbers), its object pairs with their manifolds, and
// per object the pairs it is in (in the batch order of each pair's first
// manifold) and the objects collected points already join it to (in
// `touching` order).
class BatchGraph {
 public:
  BatchGraph(ObjectNumbers& objects, btPersistentManifold* const* manifolds, int num_manifolds,
             const std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>>& touching)
      : objects_(objects) {
    objects_.clear();
    const size_t count = static_cast<size_t>(std::max(num_manifolds, 0));
    // Pairs: the manifolds grouped by object pair, in linear time. Rows by
    // one object (in batch order), and in each row a stamp per other object
    // marks the first batch position of that pair; pairs are then numbered
    // in the batch order of their first manifolds.
    std::vector<std::pair<int, std::pair<int, int>>> ends(count);  // (a, (b, batch position))
    for (size_t k = 0; k < count; ++k) {
      const int a = objects_.add(manifolds[k]->getBody0()), b = objects_.add(manifolds[k]->getBody1());
      ends[k] = {std::min(a, b), {std::max(a, b), static_cast<int>(k)}};
    }
    std::vector<int> ends_begin;
    std::vector<std::pair<int, int>> ends_rows;
    const size_t n = static_cast<size_t>(objects_.size());
    compressed_rows(ends, n, ends_begin, ends_rows);
    std::vector<int> first_of(count);  // by batch position: its pair's first batch position
    std::vector<int> stamp(n, -1), first_at(n, -1);
    for (size_t a = 0; a < n; ++a)
      for (int e = ends_begin[a]; e < ends_begin[a + 1]; ++e) {
        const auto [b, k] = ends_rows[static_cast<size_t>(e)];
        if (stamp[static_cast<size_t>(b)] != static_cast<int>(a)) {
          stamp[static_cast<size_t>(b)] = static_cast<int>(a);
          first_at[static_cast<size_t>(b)] = k;
        }
        first_of[static_cast<size_t>(k)] = first_at[static_cast<size_t>(b)];
      }
    std::vector<int> pair_of(count, -1);  // by batch position
    for (size_t k = 0; k < count; ++k) {
      if (first_of[k] == static_cast<int>(k)) {
        pair_of[k] = static_cast<int>(first_manifold_.size());
        first_manifold_.push_back(manifolds[k]);
      } else {
        pair_of[k] = pair_of[static_cast<size_t>(first_of[k])];
      }
    }
    std::vector<std::pair<int, btPersistentManifold*>> members(count);
    for (size_t k = 0; k < count; ++k) members[k] = {pair_of[k], manifolds[k]};
    compressed_rows(members, first_manifold_.size(), manifold_begin_, pair_manifolds_);

    std::vector<std::pair<int, int>> pair_edges;
    pair_edges.reserve(2 * first_manifold_.size());
    for (size_t p = 0; p < first_manifold_.size(); ++p) {
      pair_edges.emplace_back(objects_.find(first_manifold_[p]->getBody0()), static_cast<int>(p));
      pair_edges.emplace_back(objects_.find(first_manifold_[p]->getBody1()), static_cast<int>(p));
    }
    // Joins, each once per run of equal pairs (the points of one manifold
    // come together).
    std::vector<std::pair<int, int>> join_edges;
    join_edges.reserve(2 * touching.size());
    for (size_t t = 0; t < touching.size(); ++t) {
      if (t > 0 && touching[t] == touching[t - 1]) continue;
      const int a = objects_.add(touching[t].first), b = objects_.add(touching[t].second);
      join_edges.emplace_back(a, b);
      join_edges.emplace_back(b, a);
    }
    compressed_rows(pair_edges, static_cast<size_t>(objects_.size()), pairs_begin_, pairs_);
    compressed_rows(join_edges, static_cast<size_t>(objects_.size()), joined_begin_, joined_);
  }

  ObjectNumbers& objects() { return objects_; }
  int num_pairs() const { return static_cast<int>(first_manifold_.size()); }
  /// The pairs of object i, in the batch order of their first manifolds.
  Range<int> pairs_of(int i) const { return row(pairs_, pairs_begin_, i); }
  /// The objects collected points join to object i, in `touching` order.
  Range<int> joined_to(int i) const { return row(joined_, joined_begin_, i); }
  /// Pair p's first manifold in batch order.
  btPersistentManifold* first_manifold(int p) const { return first_manifold_[static_cast<size_t>(p)]; }
  /// Every manifold of pair p, in batch order.
  PairManifolds manifolds_of(int p) const { return row(pair_manifolds_, manifold_begin_, p); }

 private:
  // Rows are compressed_rows (clustering.h); a row past those built (an
  // object only `struck` names) is empty.
  template <class T>
  static Range<T> row(const std::vector<T>& values, const std::vector<int>& begin, int i) {
    if (static_cast<size_t>(i) + 1 >= begin.size()) return {};
    return {values.data() + begin[static_cast<size_t>(i)], values.data() + begin[static_cast<size_t>(i) + 1]};
  }

  ObjectNumbers& objects_;  // TouchingPoints', emptied here and reused
  std::vector<btPersistentManifold*> first_manifold_;  // by pair
  std::vector<int> manifold_begin_;                    // pair rows of pair_manifolds_
  std::vector<btPersistentManifold*> pair_manifolds_;
  std::vector<int> pairs_begin_;                       // object rows of pairs_
  std::vector<int> pairs_;
  std::vector<int> joined_begin_;                      // object rows of joined_
  std::vector<int> joined_;
};

// Whether the walk below could query any pair of the batch: a manifold
// with no point at distance ≤ 0 whose bodies' bounds are within the
// largest tolerance any pair of the batch can have (gap_tolerance grows
// with the breaking threshold, and bounds apart by more than the largest
// are apart by more than any). Conservative per manifold (a pair's other
// manifold may touch); when it says no, the walk would add nothing.
bool any_pair_to_query(btPersistentManifold* const* manifolds, int num_manifolds, double strike_speed, double h) {
  double breaking = 0.0;
  for (int k = 0; k < num_manifolds; ++k)
    breaking = std::max(breaking, double(manifolds[k]->getContactBreakingThreshold()));
  const btScalar tolerance = btScalar(gap_tolerance(breaking, strike_speed, h));
  if (!(tolerance >= 0)) return false;  // no pair's tolerance is either
  for (int k = 0; k < num_manifolds; ++k) {
    const btPersistentManifold* manifold = manifolds[k];
    if (narrowphase_touches(PairManifolds{&manifolds[k], &manifolds[k] + 1})) continue;
    if (!bounds_apart(manifold->getBody0(), manifold->getBody1(), tolerance)) return true;
  }
  return false;
}

}  // namespace

int TouchingPoints::find(btDispatcher& dispatcher, btPersistentManifold* const* manifolds, int num_manifolds,
                         const std::vector<const btCollisionObject*>& struck,
                         const std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>>& touching,
                         const std::function<bool(const btCollisionObject*)>& moves, double strike_speed,
                         double h) {
  points_.clear();
  queries_ = 0;
  closings_ = 0;
  // Building the walk's graph was ~6 % of a struck chain's impact step,
  // where every pair already touches by Bullet's own points.
  if (!any_pair_to_query(manifolds, num_manifolds, strike_speed, h)) return 0;
  BatchGraph graph(objects_, manifolds, num_manifolds, touching);
  ObjectNumbers& objects = graph.objects();
  std::vector<char> visited;
  std::vector<char> queried(static_cast<size_t>(graph.num_pairs()), 0);
  std::deque<int> queue;
  const auto visit = [&](int i) {
    if (static_cast<size_t>(i) >= visited.size()) visited.resize(static_cast<size_t>(i) + 1, 0);
    if (visited[static_cast<size_t>(i)] != 0) return;
    visited[static_cast<size_t>(i)] = 1;
    if (moves(objects.object(i))) queue.push_back(i);
  };
  for (const btCollisionObject* object : struck)
    if (object != nullptr) visit(objects.add(object));
  while (!queue.empty()) {
    const int i = queue.front();
    queue.pop_front();
    for (const int other : graph.joined_to(i)) visit(other);
    for (const int p : graph.pairs_of(i)) {
      if (queried[static_cast<size_t>(p)] != 0) continue;
      queried[static_cast<size_t>(p)] = 1;
      btPersistentManifold* manifold = graph.first_manifold(p);
      const btCollisionObject* a = manifold->getBody0();
      const btCollisionObject* b = manifold->getBody1();
      const int other = objects.find(a) == i ? objects.find(b) : objects.find(a);
      const PairManifolds pair = graph.manifolds_of(p);
      if (narrowphase_touches(pair)) {
        // No query: its nearest distance is ≤ 0 and it would add nothing.
        visit(other);
        continue;
      }
      double breaking = 0.0;
      for (const btPersistentManifold* m : pair) breaking = std::max(breaking, double(m->getContactBreakingThreshold()));
      const btScalar tolerance = btScalar(gap_tolerance(breaking, strike_speed, h));
      if (!(tolerance >= 0)) continue;
      if (bounds_apart(a, b, tolerance)) continue;  // a query would find nothing
      ++queries_;
      std::vector<btManifoldPoint> closest =
          query(dispatcher, a, b, BT_CLOSEST_POINT_ALGORITHMS, tolerance, tolerance, btVector3(0, 0, 0));
      if (closest.empty()) continue;
      visit(other);  // within the tolerance: touching
      const btManifoldPoint* nearest = &closest.front();
      for (const btManifoldPoint& q : closest)
        if (q.getDistance() < nearest->getDistance()) nearest = &q;
      // Touching or overlapping (distance ≤ 0): Bullet's narrowphase, run on
      // these positions at the start of the step, made this pair's points
      // itself (every algorithm reports overlaps); a closest point would only
      // duplicate one of them somewhere else on the face.
      if (!(nearest->getDistance() > 0)) continue;
      ++closings_;
      const std::vector<btManifoldPoint> found =
          contact_after_closing(dispatcher, a, b, tolerance, btScalar(breaking), nearest, std::move(closest));
      for (const btManifoldPoint& q : found) {
        if (has_point_near(pair, b, q)) continue;
        TouchingPoint touch;
        touch.manifold = manifold;
        touch.object_a = a;
        touch.object_b = b;
        touch.point = q;
        points_.push_back(touch);
      }
    }
  }
  return static_cast<int>(points_.size());
}

}  // namespace simpact::bullet::internal
