#include "graph/lazy_ranking.h"

#include <doctest.h>

#include <algorithm>
#include <cstdint>
#include <iterator>
#include <map>
#include <random>
#include <set>
#include <utility>
#include <vector>

namespace kestrel {
namespace {

using Key = std::pair<int, int>;  // (value, slot): distinct per slot, ties broken by the slot

// The ranking's keys best first, up to `limit`, as VisitInOrder gives them.
std::vector<Key> Read(const LazyRanking<Key>& ranking, std::size_t limit) {
  std::vector<Key> keys;
  if (limit == 0) return keys;
  ranking.VisitInOrder([&](const Key& key) {
    keys.push_back(key);
    return keys.size() < limit;
  });
  return keys;
}

TEST_SUITE("LazyRanking") {
  TEST_CASE("an empty ranking") {
    LazyRanking<Key> ranking;
    CHECK(ranking.empty());
    CHECK(Read(ranking, 10).empty());
    CHECK_FALSE(ranking.Erase({1, 1}, 1));
  }

  TEST_CASE("a loaded batch, keys leaving and joining, partial and whole reads: the ordered set's order") {
    // Reads of a few keys between changes (the heap sorted a little further
    // each time), against a std::set of the same keys.
    std::mt19937_64 random(7);
    constexpr int kSlots = 5000;
    LazyRanking<Key> ranking;
    std::set<Key> expected;
    std::map<int, Key> current;  // slot -> its key
    std::vector<LazyRanking<Key>::Slotted> batch;
    for (int slot = 0; slot < kSlots; ++slot) {
      if (random() % 5 == 0) continue;
      const Key key{static_cast<int>(random() % 300), slot};
      batch.push_back({key, static_cast<std::size_t>(slot)});
      expected.insert(key);
      current[slot] = key;
    }
    ranking.Load(batch);
    CHECK(ranking.size() == expected.size());
    for (int round = 0; round < 400; ++round) {
      for (int change = 0; change < 5; ++change) {
        const int slot = static_cast<int>(random() % kSlots);
        if (const auto held = current.find(slot); held != current.end()) {
          CHECK(ranking.Erase(held->second, static_cast<std::size_t>(slot)));
          expected.erase(held->second);
          current.erase(held);
        }
        if (random() % 3 != 0) {  // back, with a new value
          const Key key{static_cast<int>(random() % 300), slot};
          ranking.Insert(key);
          expected.insert(key);
          current[slot] = key;
        }
      }
      const std::size_t limit = round % 50 == 0 ? expected.size() : static_cast<std::size_t>(random() % 20);
      const std::vector<Key> want(expected.begin(),
                                  std::next(expected.begin(), static_cast<std::ptrdiff_t>(std::min(limit, expected.size()))));
      CHECK(Read(ranking, limit) == want);
      CHECK(ranking.size() == expected.size());
    }
    std::set<Key> all;
    ranking.VisitAll([&](const Key& key) { CHECK(all.insert(key).second); });
    CHECK(all == expected);
  }

  TEST_CASE("sorted keys inserted in one pass; a ranking emptied and loaded again") {
    LazyRanking<Key> ranking;
    ranking.Load({{{5, 0}, 0}, {{1, 1}, 1}});
    ranking.InsertSorted({{{0, 7}, 7}, {{3, 8}, 8}, {{9, 9}, 9}});
    CHECK(Read(ranking, 10) == std::vector<Key>{{0, 7}, {1, 1}, {3, 8}, {5, 0}, {9, 9}});
    for (const auto& [key, slot] : std::vector<std::pair<Key, std::size_t>>{{{5, 0}, 0}, {{1, 1}, 1}, {{0, 7}, 7}, {{3, 8}, 8}, {{9, 9}, 9}}) {
      CHECK(ranking.Erase(key, slot));
    }
    CHECK(ranking.empty());
    ranking.Load({{{4, 2}, 2}});
    CHECK(Read(ranking, 10) == std::vector<Key>{{4, 2}});
  }
}

}  // namespace
}  // namespace kestrel
