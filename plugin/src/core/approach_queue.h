// Picks the next contact to reflect. Only contacts whose velocity changed
// (the non-zeros of the reflected column of W) are updated after a
// reflection, so choosing costs O(log m) per touched contact instead of a
// scan of all m contacts: a struck chain of N balls resolves in O(N log N).
#pragma once

#include "core/rng.h"

#include <vector>

namespace simpact::internal {

/// Indexed binary min-heap of contacts keyed by (key, index): ties go to the
/// lower index, so the choice never depends on the heap's internal order.
class ApproachHeap {
 public:
  void reset(int m) {
    heap_.clear();
    pos_.assign(m, -1);
    key_.assign(m, 0.0);
  }

  /// Inserts, re-keys or removes contact j.
  void update(int j, bool approaching, double key) {
    if (!approaching) {
      if (pos_[j] >= 0) remove(j);
      return;
    }
    key_[j] = key;
    if (pos_[j] < 0) {
      pos_[j] = static_cast<int>(heap_.size());
      heap_.push_back(j);
    }
    sift_up(pos_[j]);
    sift_down(pos_[j]);
  }

  int top() const { return heap_.empty() ? -1 : heap_.front(); }

 private:
  bool before(int a, int b) const { return key_[a] < key_[b] || (key_[a] == key_[b] && a < b); }
  void place(int slot, int j) {
    heap_[slot] = j;
    pos_[j] = slot;
  }
  void sift_up(int slot) {
    const int j = heap_[slot];
    while (slot > 0) {
      const int parent = (slot - 1) / 2;
      if (!before(j, heap_[parent])) break;
      place(slot, heap_[parent]);
      slot = parent;
    }
    place(slot, j);
  }
  void sift_down(int slot) {
    const int size = static_cast<int>(heap_.size());
    const int j = heap_[slot];
    while (true) {
      int child = 2 * slot + 1;
      if (child >= size) break;
      if (child + 1 < size && before(heap_[child + 1], heap_[child])) ++child;
      if (!before(heap_[child], j)) break;
      place(slot, heap_[child]);
      slot = child;
    }
    place(slot, j);
  }
  void remove(int j) {
    const int slot = pos_[j];
    const int last = heap_.back();
    heap_.pop_back();
    pos_[j] = -1;
    if (last == j) return;
    place(slot, last);
    sift_up(slot);
    sift_down(pos_[last]);
  }

  std::vector<int> heap_, pos_;
  std::vector<double> key_;
};

/// Unordered set of approaching contacts with O(1) insert, remove and
/// uniform pick, for the random policy.
class ApproachSet {
 public:
  void reset(int m) {
    items_.clear();
    pos_.assign(m, -1);
  }
  void update(int j, bool approaching) {
    if (approaching && pos_[j] < 0) {
      pos_[j] = static_cast<int>(items_.size());
      items_.push_back(j);
    } else if (!approaching && pos_[j] >= 0) {
      const int last = items_.back();
      items_[pos_[j]] = last;
      pos_[last] = pos_[j];
      items_.pop_back();
      pos_[j] = -1;
    }
  }
  int pick(SplitMix64& rng) const {
    if (items_.empty()) return -1;
    return items_[static_cast<int>(rng.below(items_.size()))];
  }

 private:
  std::vector<int> items_, pos_;
};

}  // namespace simpact::internal
