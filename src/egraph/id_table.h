// Internal: an open-addressing hash set of 32-bit ids whose keys live elsewhere.
//
// Used for the e-graph's hash-cons (keys are e-nodes in the node table) and the attribute
// interner (keys are byte strings in an arena). A slot is 8 bytes (cached 32-bit hash + id), so
// the table costs ~12 bytes per entry at the maximum load factor, with no per-entry allocation.
// Linear probing; erase uses backward-shift deletion, so there are no tombstones and lookups
// stay short no matter how many entries were erased.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

namespace tacit::egraph::detail {

// 64-bit mixing for hash-consing: one multiply-xorshift step per word, murmur3's finaliser at the
// end. Deterministic across runs and platforms (no pointer or seed randomisation).
inline uint64_t hashMix(uint64_t h, uint64_t v) {
  h ^= v;
  h *= 0x9E3779B97F4A7C15ull;
  return h ^ (h >> 29);
}
inline uint64_t hashFinish(uint64_t h) {
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  return h ^ (h >> 33);
}

// A vector whose elements never move: fixed-size chunks, so references and pointers into it stay
// valid while it grows (and growing never copies).
template <typename T, unsigned kChunkBits = 12>
class StableVector {
 public:
  static constexpr size_t kChunk = size_t{1} << kChunkBits;
  T& operator[](size_t i) { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  const T& operator[](size_t i) const { return chunks_[i >> kChunkBits][i & (kChunk - 1)]; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  void push_back(const T& v) {
    if (size_ == chunks_.size() * kChunk) chunks_.push_back(std::make_unique<T[]>(kChunk));
    (*this)[size_++] = v;
  }
  size_t memoryBytes() const {
    return chunks_.size() * kChunk * sizeof(T) + chunks_.capacity() * sizeof(void*);
  }

 private:
  std::vector<std::unique_ptr<T[]>> chunks_;
  size_t size_ = 0;
};

class IdTable {
 public:
  static constexpr uint32_t kEmpty = 0xFFFFFFFFu;

  size_t size() const { return size_; }
  size_t memoryBytes() const { return slots_.capacity() * sizeof(Slot); }

  // The id whose key equals the probe (eq(id) decides), or kEmpty.
  template <typename Eq>
  uint32_t find(uint32_t hash, Eq&& eq) const {
    if (slots_.empty()) return kEmpty;
    for (size_t i = hash & mask_;; i = (i + 1) & mask_) {
      const Slot& s = slots_[i];
      if (s.id == kEmpty) return kEmpty;
      if (s.hash == hash && eq(s.id)) return s.id;
    }
  }

  // Hints the cache to load the first slot a lookup of `hash` will probe.
  void prefetch(uint32_t hash) const {
    if (!slots_.empty()) __builtin_prefetch(&slots_[hash & mask_]);
  }

  // Inserts an id that is known to be absent.
  void insert(uint32_t hash, uint32_t id) {
    if ((size_ + 1) * 8 > slots_.size() * 5) grow();  // keep the load factor below 5/8
    place(hash, id);
    ++size_;
  }

  // Removes exactly the entry (hash, id); returns false if it is not present.
  bool erase(uint32_t hash, uint32_t id) {
    if (slots_.empty()) return false;
    size_t i = hash & mask_;
    for (;; i = (i + 1) & mask_) {
      if (slots_[i].id == kEmpty) return false;
      if (slots_[i].id == id) break;
    }
    // Backward-shift: move later entries of the probe run into the hole when that keeps them
    // reachable from their home slot.
    size_t hole = i;
    for (size_t j = (i + 1) & mask_;; j = (j + 1) & mask_) {
      if (slots_[j].id == kEmpty) break;
      size_t home = slots_[j].hash & mask_;
      bool movable = hole <= j ? (home <= hole || home > j) : (home <= hole && home > j);
      if (movable) {
        slots_[hole] = slots_[j];
        hole = j;
      }
    }
    slots_[hole] = Slot{};
    --size_;
    return true;
  }

  // Calls fn(id) for every entry (unspecified order).
  template <typename Fn>
  void forEach(Fn&& fn) const {
    for (const Slot& s : slots_)
      if (s.id != kEmpty) fn(s.id);
  }

  void reserve(size_t n) {
    while (n * 8 > slots_.size() * 5)
      grow();
  }

 private:
  struct Slot {
    uint32_t hash = 0;
    uint32_t id = kEmpty;
  };

  void place(uint32_t hash, uint32_t id) {
    size_t i = hash & mask_;
    while (slots_[i].id != kEmpty)
      i = (i + 1) & mask_;
    slots_[i] = Slot{hash, id};
  }

  void grow() {
    std::vector<Slot> old;
    old.swap(slots_);
    slots_.assign(old.empty() ? 64 : old.size() * 2, Slot{});
    mask_ = slots_.size() - 1;
    for (const Slot& s : old)
      if (s.id != kEmpty) place(s.hash, s.id);
  }

  std::vector<Slot> slots_;
  size_t mask_ = 0;
  size_t size_ = 0;
};

}  // namespace tacit::egraph::detail
