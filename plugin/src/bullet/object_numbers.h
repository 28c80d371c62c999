// Collision objects numbered 0, 1, … in order of first appearance, found
// again in O(1) without hashing: the batch's bodies (ImpactSolver), the
// touching walk's objects (proximity.cpp).
//
// Internal to simpact::bullet; never installed.
#pragma once

#include <BulletCollision/CollisionDispatch/btCollisionObject.h>

#include <cstddef>
#include <unordered_map>
#include <vector>

namespace simpact::bullet::internal {

/// An object in a collision world is looked up through its world array
/// index (btCollisionObject::getWorldArrayIndex) in a slot table kept
/// between uses (−1 wherever no numbered object sits; clear() resets only
/// the slots it set); any other object (no world, an index at or beyond
/// kMaxWorldSlots, or a slot another numbered object holds — a stale
/// index) through a hash map. A slot's number is trusted only when the
/// numbered object there is the one asked for.
class ObjectNumbers {
 public:
  /// World array indices below this use the slot table (4 MB at most).
  static constexpr int kMaxWorldSlots = 1 << 20;

  /// The object's number, numbering it if it is new.
  int add(const btCollisionObject* object) {
    if (const int known = find(object); known >= 0) return known;
    const int number = static_cast<int>(objects_.size());
    objects_.push_back(object);
    const int slot = object->getWorldArrayIndex();
    if (slot >= 0 && slot < kMaxWorldSlots) {
      if (static_cast<std::size_t>(slot) >= slots_.size()) slots_.resize(static_cast<std::size_t>(slot) + 1, -1);
      if (slots_[static_cast<std::size_t>(slot)] < 0) {
        slots_[static_cast<std::size_t>(slot)] = number;
        used_.push_back(slot);
        return number;
      }
    }
    others_.emplace(object, number);
    return number;
  }
  /// The object's number, or −1.
  int find(const btCollisionObject* object) const {
    const int slot = object->getWorldArrayIndex();
    if (slot >= 0 && slot < static_cast<int>(slots_.size())) {
      const int number = slots_[static_cast<std::size_t>(slot)];
      if (number >= 0 && objects_[static_cast<std::size_t>(number)] == object) return number;
    }
    if (others_.empty()) return -1;
    const auto it = others_.find(object);
    return it == others_.end() ? -1 : it->second;
  }
  const btCollisionObject* object(int number) const { return objects_[static_cast<std::size_t>(number)]; }
  int size() const { return static_cast<int>(objects_.size()); }
  /// Forgets every number, in time proportional to how many there are,
  /// without reading the objects (the host may have deleted them since);
  /// the slot table keeps its size for the next batch.
  void clear() {
    for (const int slot : used_) slots_[static_cast<std::size_t>(slot)] = -1;
    used_.clear();
    objects_.clear();
    others_.clear();
  }

 private:
  std::vector<int> slots_;
  std::vector<int> used_;  // the slots set since clear()
  std::vector<const btCollisionObject*> objects_;
  std::unordered_map<const btCollisionObject*, int> others_;
};

}  // namespace simpact::bullet::internal
