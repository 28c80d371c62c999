#include "bullet/proximity.h"

#include <BulletCollision/BroadphaseCollision/btCollisionAlgorithm.h>
#include <BulletCollision/BroadphaseCollision/btDispatcher.h>
#include <BulletCollision/CollisionDispatch/btCollisionObject.h>
#include <BulletCollision/CollisionDispatch/btCollisionObjectWrapper.h>
#include <BulletCollision/CollisionDispatch/btManifoldResult.h>
#include <BulletCollision/NarrowPhaseCollision/btPersistentManifold.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <limits>
#include <stdexcept>
#include <unordered_map>
#include <unordered_set>
#include <utility>

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

struct PairHash {
  size_t operator()(const std::pair<const void*, const void*>& p) const {
    return std::hash<const void*>()(p.first) * 31u ^ std::hash<const void*>()(p.second);
  }
};

std::pair<const void*, const void*> key(const btCollisionObject* a, const btCollisionObject* b) {
  return a < b ? std::make_pair(static_cast<const void*>(a), static_cast<const void*>(b))
               : std::make_pair(static_cast<const void*>(b), static_cast<const void*>(a));
}

// Whether some point of the pair's batch manifolds lies within that
// manifold's contact-breaking threshold of `p` (on B; getCacheEntry's rule).
bool has_point_near(const std::vector<btPersistentManifold*>& manifolds, const btCollisionObject* b,
                    const btManifoldPoint& p) {
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

}  // namespace

int TouchingPoints::find(btDispatcher& dispatcher, btPersistentManifold* const* manifolds, int num_manifolds,
                         const std::vector<const btCollisionObject*>& struck,
                         const std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>>& touching,
                         const std::function<bool(const btCollisionObject*)>& moves, double strike_speed,
                         double h) {
  points_.clear();
  queries_ = 0;
  closings_ = 0;
  // The batch's pairs: manifolds by pair, pairs by object.
  std::unordered_map<std::pair<const void*, const void*>, std::vector<btPersistentManifold*>, PairHash> by_pair;
  std::unordered_map<const btCollisionObject*, std::vector<btPersistentManifold*>> by_object;
  for (int k = 0; k < num_manifolds; ++k) {
    btPersistentManifold* manifold = manifolds[k];
    const btCollisionObject* a = manifold->getBody0();
    const btCollisionObject* b = manifold->getBody1();
    auto& list = by_pair[key(a, b)];
    if (list.empty()) {
      by_object[a].push_back(manifold);
      by_object[b].push_back(manifold);
    }
    list.push_back(manifold);
  }
  std::unordered_map<const btCollisionObject*, std::vector<const btCollisionObject*>> joined;
  for (const auto& [a, b] : touching) {
    joined[a].push_back(b);
    joined[b].push_back(a);
  }

  std::unordered_set<const btCollisionObject*> visited;
  std::deque<const btCollisionObject*> queue;
  const auto visit = [&](const btCollisionObject* object) {
    if (object != nullptr && moves(object) && visited.insert(object).second) queue.push_back(object);
  };
  for (const btCollisionObject* object : struck) visit(object);
  std::unordered_set<std::pair<const void*, const void*>, PairHash> queried;
  while (!queue.empty()) {
    const btCollisionObject* object = queue.front();
    queue.pop_front();
    if (const auto it = joined.find(object); it != joined.end())
      for (const btCollisionObject* other : it->second) visit(other);
    const auto it = by_object.find(object);
    if (it == by_object.end()) continue;
    for (btPersistentManifold* manifold : it->second) {
      const btCollisionObject* a = manifold->getBody0();
      const btCollisionObject* b = manifold->getBody1();
      if (!queried.insert(key(a, b)).second) continue;
      const std::vector<btPersistentManifold*>& pair = by_pair[key(a, b)];
      double breaking = 0.0;
      for (const btPersistentManifold* m : pair) breaking = std::max(breaking, double(m->getContactBreakingThreshold()));
      const btScalar tolerance = btScalar(gap_tolerance(breaking, strike_speed, h));
      if (!(tolerance >= 0)) continue;
      ++queries_;
      std::vector<btManifoldPoint> closest =
          query(dispatcher, a, b, BT_CLOSEST_POINT_ALGORITHMS, tolerance, tolerance, btVector3(0, 0, 0));
      if (closest.empty()) continue;
      visit(a == object ? b : a);  // within the tolerance: touching
      const btManifoldPoint* nearest = &closest.front();
      for (const btManifoldPoint& p : closest)
        if (p.getDistance() < nearest->getDistance()) nearest = &p;
      // Touching or overlapping (distance ≤ 0): Bullet's narrowphase, run on
      // these positions at the start of the step, made this pair's points
      // itself (every algorithm reports overlaps); a closest point would only
      // duplicate one of them somewhere else on the face.
      if (!(nearest->getDistance() > 0)) continue;
      ++closings_;
      const std::vector<btManifoldPoint> found =
          contact_after_closing(dispatcher, a, b, tolerance, btScalar(breaking), nearest, std::move(closest));
      for (const btManifoldPoint& p : found) {
        if (has_point_near(pair, b, p)) continue;
        TouchingPoint touch;
        touch.manifold = manifold;
        touch.object_a = a;
        touch.object_b = b;
        touch.point = p;
        points_.push_back(touch);
      }
    }
  }
  return static_cast<int>(points_.size());
}

}  // namespace simpact::bullet::internal
