#pragma once
// LazyRanking: an ordered set of keys for an index that opens with many at
// once (a loaded graph's nodes) and then changes a few at a time. The first
// batch is a heap, made in linear time and sorted only as far as reads go
// (a reader of the best few sorts no further); the keys that come later are
// an ordered set. Each key of the first batch has a slot (a node's insertion
// index), and leaves the batch by its slot's flag. SearchGraph ranks its
// measured nodes with one, UcbIndex each expansion count's nodes.
//
// Thread-safety: none; Visit sorts further (mutable state), so not even
// between const readers.

#include <algorithm>
#include <cstddef>
#include <functional>
#include <set>
#include <utility>
#include <vector>

namespace kestrel {

template <class Key, class Before = std::less<Key>>
class LazyRanking {
 public:
  struct Slotted {
    Key key;
    std::size_t slot;
  };

  // The first batch: keys with distinct slots, on an empty ranking.
  void Load(std::vector<Slotted> keys) {
    std::size_t slots = 0;
    for (const Slotted& key : keys) slots = std::max(slots, key.slot + 1);
    held_.assign(slots, false);
    for (const Slotted& key : keys) held_[key.slot] = true;
    loaded_ = std::move(keys);
    held_count_ = loaded_.size();
    std::make_heap(loaded_.begin(), loaded_.end(), Later);
    heap_ = loaded_.size();
  }
  void Insert(const Key& key) { later_.insert(key); }
  // Keys sorted best first, each next to the last: linear.
  void InsertSorted(const std::vector<Slotted>& keys) {
    auto hint = later_.begin();
    for (const Slotted& key : keys) hint = std::next(later_.insert(hint, key.key));
  }
  // Takes out `key`, whose slot is `slot`: its first-batch entry when the
  // slot still holds one (which is then `key`), else from the set. Returns
  // whether it was held.
  bool Erase(const Key& key, std::size_t slot) {
    if (slot < held_.size() && held_[slot]) {
      held_[slot] = false;
      --held_count_;
      return true;
    }
    return later_.erase(key) == 1;
  }
  bool empty() const { return held_count_ == 0 && later_.empty(); }
  std::size_t size() const { return held_count_ + later_.size(); }

  // Calls visit(key) best first until it returns false.
  template <class Visit>
  void VisitInOrder(const Visit& visit) const {
    std::size_t k = 0;
    const Key* next = NextLoaded(k);
    auto other = later_.begin();
    while (next != nullptr || other != later_.end()) {
      if (next != nullptr && (other == later_.end() || Before()(*next, *other))) {
        if (!visit(*next)) return;
        next = NextLoaded(++k);
      } else {
        if (!visit(*other)) return;
        ++other;
      }
    }
  }
  // Calls visit(key) for every key, in no particular order.
  template <class Visit>
  void VisitAll(const Visit& visit) const {
    for (const Slotted& key : loaded_) {
      if (held_[key.slot]) visit(key.key);
    }
    for (const Key& key : later_) visit(key);
  }

 private:
  static bool Later(const Slotted& a, const Slotted& b) { return Before()(b.key, a.key); }

  // The `k`-th held key of the first batch in order, `k` moved past those
  // that left; nullptr past the last. Pops the heap into the sorted tail
  // (best last) as far as needed.
  const Key* NextLoaded(std::size_t& k) const {
    for (;; ++k) {
      if (k == loaded_.size() - heap_) {
        if (heap_ == 0) return nullptr;
        std::pop_heap(loaded_.begin(), loaded_.begin() + static_cast<std::ptrdiff_t>(heap_), Later);
        --heap_;
      }
      const Slotted& key = loaded_[loaded_.size() - 1 - k];
      if (held_[key.slot]) return &key.key;
    }
  }

  mutable std::vector<Slotted> loaded_;  // [0, heap_) a heap, the rest sorted best last
  mutable std::size_t heap_ = 0;
  std::vector<bool> held_;  // by slot: its first-batch key is still in the ranking
  std::size_t held_count_ = 0;
  std::set<Key, Before> later_;
};

}  // namespace kestrel
