// Touching means touching: contact points that Bullet's narrowphase has not
// made (yet) for pairs that touch within a small gap, found by Bullet's own
// closest-point queries when a batch has a strike, and the time_of_impact
// hints of the propagative law. Internal to simpact::bullet; never installed.
//
// ── Why ─────────────────────────────────────────────────────────────────────
// Bullet makes sphere–sphere and box–box points only at distance ≤ 0 (then
// keeps them up to the breaking threshold); GJK pairs (sphere–box, convex
// hulls, capsules …) already at small positive distances. Ten balls of
// radius 0.05 placed by `x = i * 0.1` are 1e-17 m apart: no points, so a
// struck chain is resolved as several separate impacts over several steps
// (energy +0.67 %, outcome (−0.05, −0.033, 0, …, 0.017, 0.017, 0.05, 1) where
// Newton's cradle gives (0, …, 0, 1)). A user cannot tell a 1e-17 gap from
// contact, and neither may simpact.
//
// ── What ────────────────────────────────────────────────────────────────────
// When a solveGroup batch has a strike, TouchingPoints::find runs Bullet's
// closest-point query (btDispatcher::findAlgorithm(..., BT_CLOSEST_POINT_
// ALGORITHMS) and processCollision with a btManifoldResult whose
// m_closestPointDistanceThreshold is the gap tolerance — what
// btCollisionWorld::contactPairTest does) on every pair of the batch's
// manifolds (0-point ones included: Bullet creates a pair's manifold when
// the broadphase pair appears, and islands are united through broadphase
// pairs, so the batch holds every pair whose bounding boxes, grown by the
// breaking threshold, overlap) that involves a struck body, and then,
// transitively, a body found touching one (a breadth-first walk over movable
// bodies; static and kinematic bodies end the walk). A pair whose closest
// distance is within its gap tolerance (below) touches. If that distance is
// ≤ 0, Bullet's narrowphase (run on these positions at the start of the
// step; every algorithm reports overlaps) made the pair's points itself and
// nothing is added; so a pair whose manifolds already hold a point at
// distance ≤ 0 touches by Bullet's own account and is not queried at all
// (in a landing pile that is nearly every pair: the queries were 45 % of a
// 992-box wall's mean step). If it is > 0, every point of the pair's contact after
// closing ("One query, one point") that has no point of the pair's
// manifolds near it (closer than the manifold's contact-breaking threshold,
// btPersistentManifold::getCacheEntry's own criterion for "the same point")
// becomes a synthetic btManifoldPoint: normal (B to A), points on A and B,
// distance, local points, and friction and restitution combined by Bullet's
// gCalculateCombined*Callback, exactly as btManifoldResult::addContactPoint
// fills a real one. The adapters treat it like Bullet's points in clustering
// and in the impact law. The query works for every pair Bullet's dispatcher
// has an algorithm for: spheres, boxes, capsules, convex hulls, compounds,
// triangle meshes, multibody link colliders.
//
// ── Where synthetic points live: simpact's own storage ─────────────────────
// They are NOT added to the persistent manifold:
//  - btPersistentManifold keeps at most 4 points; adding one may replace a
//    real point (sortCachedPoints), silently changing what the base solver
//    and the next frames see;
//  - a manifold point persists: refreshContactPoints keeps it for later
//    frames while its distance is below the breaking threshold, so a
//    positive-gap point would reach the base solver in every later step (SI
//    treats it as a speculative contact) — a permanent change of Bullet's
//    behaviour for pairs simpact only needed for one impact;
//  - user callbacks (gContactStartedCallback, contact-added) would fire for
//    points the user's narrowphase never made.
// So they live for one solveGroup call in TouchingPoints (stable addresses
// until the next find()), and the base solver never sees them. What the base
// solver then needs: nothing for the points the impact leaves separating
// (the adapters hide those from it anyway); a point the impact leaves closed
// (u⁺ ≈ 0, e.g. the inner contacts of a struck chain) has a gap ≥ 0 and no
// approach, so no impulse would act on it this step; if forces close it
// during the step, Bullet's narrowphase makes the real point at distance ≤ 0
// next step and the base solver handles it as it always does.
//
// ── The gap tolerance ───────────────────────────────────────────────────────
//     gap_tolerance = min(breaking threshold of the pair, S · h)
// breaking threshold: btPersistentManifold::getContactBreakingThreshold()
//   of the pair's manifold: Bullet's own "still in contact" distance,
//   min over the two shapes of shape->getContactBreakingThreshold(
//   gContactBreakingThreshold) = 0.02 × the shape's angular-motion disc
//   (≈ its bounding radius; 1 mm for a ball of r = 5 cm). Distances are
//   Bullet's (margins included: a convex hull counts from its inflated
//   surface, as its real points do). Beyond it Bullet itself drops a point
//   as separated, so nothing farther can count as touching.
// S · h: S the batch's largest strike speed (the fastest approach among the
//   points that strike), h the step: the distance a struck body moving at
//   the strike's speed travels in this step — a gap the struck bodies would
//   close within the step. A slower system gets a smaller tolerance: a gap
//   nobody closes in the step stays a separate impact.
// ── One query, one point ─────────────────────────────────────────────────
// A closest-point query gives ONE point per convex pair (GJK), where the
// contact of two faces has up to four once Bullet makes it (box–box clips
// the faces): a row of boxes free to turn would be struck off-centre. So for
// a pair at a positive gap d along the closest point's normal n, the pair's
// CONTACT algorithm (BT_CONTACT_POINT_ALGORITHMS, what the narrowphase runs)
// is run once more with B moved by (d + δ)·n, δ = kClosingOverlap × the
// breaking threshold, i.e. on the configuration where the gap has just
// closed; its points are moved back by the same vector and their distances
// measured in the real configuration: the contact Bullet itself would make
// one step later, face for face.
//
// Floating-point gaps of loop-placed bodies (1e-17 m in double, 1e-8 m in
// single precision at 1 m) are many orders below both terms for any
// realistic speed and step (S·h ≥ 1e-4 m for S ≥ 0.01 m/s at 100 Hz). A real
// gap of 1 cm between balls of r = 5 cm (the cradle demo's --free --gap 0.01)
// is 10× their 1 mm breaking threshold and stays two separate impacts.
//
// ── time_of_impact hints ────────────────────────────────────────────────────
// OrderPolicy::kTimeOfImpact reflects, among approaching contacts, the one
// with the smallest hint (propagative.h). The hint of contact r is when its
// gap closes during the step:
//     t_r = max(d_r, 0) / v_r,  v_r = −u_r if u_r < 0, else S = max_j(−u_j)
// (d_r its distance, u_r its relative normal velocity at the impact's v*):
// penetrating and touching contacts first (t = 0, ties by index), then gaps
// in the order they close; a contact that does not approach yet (a resting
// neighbour that a reflection will set moving) closes at the strike's speed.
#pragma once

#include <Eigen/Core>

#include "bullet/object_numbers.h"

#include <BulletCollision/NarrowPhaseCollision/btManifoldPoint.h>

#include <cstdint>
#include <functional>
#include <vector>

class btCollisionObject;
class btDispatcher;
class btPersistentManifold;

namespace simpact::bullet::internal {

/// The overlap of the closed configuration queried for a pair's full
/// contact (header, "One query, one point"), relative to the pair's
/// breaking threshold: 1 % of it (10 µm for a ball of r = 5 cm). Bullet's
/// sphere–sphere and box–box algorithms report only overlaps (distance ≤ 0),
/// so the moved B must overlap by more than the rounding of its position:
/// 10 µm is above single precision's ulp at coordinates up to ~100 m
/// (7.6e-6 m there) and far above double's; and the clipped face points
/// differ from those of the exact touch by at most about δ, 1 % of what
/// Bullet itself treats as "still touching".
inline constexpr double kClosingOverlap = 1e-2;

/// min(breaking_threshold, strike_speed · h) [m] (header, "The gap
/// tolerance"). Preconditions: arguments finite and ≥ 0.
double gap_tolerance(double breaking_threshold, double strike_speed, double h);

/// The time_of_impact hints of a cluster's rows (header, "time_of_impact
/// hints"): `distance` d_r [m] and `approach` u_r [m/s] (> 0 separates),
/// both of size m. A row that never closes (no approach anywhere) gets the
/// largest double. Throws std::invalid_argument when the sizes differ.
Eigen::VectorXd time_of_impact_hints(const Eigen::VectorXd& distance, const Eigen::VectorXd& approach);

/// A synthetic contact point of the pair (object_a, object_b) = (body0,
/// body1) of `manifold`, the batch manifold it was found through (its body
/// order; it holds no point near this one).
struct TouchingPoint {
  btPersistentManifold* manifold = nullptr;
  const btCollisionObject* object_a = nullptr;
  const btCollisionObject* object_b = nullptr;
  btManifoldPoint point;
};

/// Finds the synthetic points of one batch (header, "What"). Reused from
/// batch to batch; the points' addresses are stable until the next find().
class TouchingPoints {
 public:
  /// `moves(object)`: whether the object takes impulses in the impact (a
  /// dynamic rigid body, a moving multibody link); the walk continues only
  /// through such objects. `struck`: the movable objects of the points that
  /// strike. `touching`: pairs already joined by collected real points (the
  /// walk crosses them too). `strike_speed` S > 0 [m/s], `h` the step [s].
  /// Returns the number of points found. Bullet's queries do not throw
  /// (std::bad_alloc from the vectors may); a pair without an algorithm is
  /// skipped. Cost: at most one query per object pair of the batch's
  /// manifolds, only for pairs reached by the walk whose manifolds hold no
  /// point at distance ≤ 0.
  int find(btDispatcher& dispatcher, btPersistentManifold* const* manifolds, int num_manifolds,
           const std::vector<const btCollisionObject*>& struck,
           const std::vector<std::pair<const btCollisionObject*, const btCollisionObject*>>& touching,
           const std::function<bool(const btCollisionObject*)>& moves, double strike_speed, double h);

  const std::vector<TouchingPoint>& points() const { return points_; }
  std::vector<TouchingPoint>& points() { return points_; }
  /// Closest-point queries run by the last find() (one per object pair).
  int queries() const { return queries_; }
  /// Of those, pairs at a positive gap within the tolerance, queried again
  /// closed (header, "One query, one point").
  int closings() const { return closings_; }

 private:
  std::vector<TouchingPoint> points_;
  ObjectNumbers objects_;  // the walk's object numbers, kept for their slot table
  int queries_ = 0;
  int closings_ = 0;
};

}  // namespace simpact::bullet::internal
