// Zero-initialised machine memory. Large blocks come from anonymous mappings, so the OS hands
// out zero pages on first touch: a 64 MiB scratchpad of which a kernel uses 1 MiB costs 1 MiB of
// memory and no time to clear. Internal to the oracle.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace tacit::oracle::detail {

class ZeroedMemory {
 public:
  ZeroedMemory() = default;
  explicit ZeroedMemory(size_t bytes) { allocate(bytes); }
  ~ZeroedMemory() { release(); }
  ZeroedMemory(ZeroedMemory&& o) noexcept
      : data_(o.data_),
        size_(o.size_),
        mapped_(o.mapped_),
        anywhere_(o.anywhere_),
        dirty_lo_(o.dirty_lo_),
        dirty_hi_(o.dirty_hi_),
        pages_(std::move(o.pages_)) {
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = false;
  }
  ZeroedMemory& operator=(ZeroedMemory&& o) noexcept;
  ZeroedMemory(const ZeroedMemory&) = delete;
  ZeroedMemory& operator=(const ZeroedMemory&) = delete;

  // Replaces the contents by `bytes` zero bytes (64-byte aligned). Throws DiagnosticError if the
  // memory cannot be had. Memory of the same size is kept and only what wrote() noted is
  // cleared: the pages written, for a mapping (a new mapping would fault every page the next run
  // touches in again); the byte range written, otherwise. After wroteAnywhere() a mapping is
  // replaced instead (clearing it would fault in pages nobody touched).
  void allocate(size_t bytes);
  // Every write through data() must be noted (conservatively): bytes [lo, hi).
  void wrote(size_t lo, size_t hi) {
    if (hi <= lo) return;
    if (lo < dirty_lo_) dirty_lo_ = lo;
    if (hi > dirty_hi_) dirty_hi_ = hi;
    if (!mapped_) return;
    for (size_t p = lo >> kPageBits, last = (hi - 1) >> kPageBits; p <= last; ++p)
      pages_[p >> 6] |= uint64_t{1} << (p & 63);
  }
  // Someone may have written anywhere (Machine::memory()).
  void wroteAnywhere() {
    wrote(0, size_);
    anywhere_ = true;
  }
  uint8_t* data() { return data_; }
  const uint8_t* data() const { return data_; }
  size_t size() const { return size_; }
  // Bytes in memory: of a mapping, its resident pages (mincore); otherwise size().
  size_t residentBytes() const;

 private:
  static constexpr int kPageBits = 12;
  void release();
  void clearPages();
  uint8_t* data_ = nullptr;
  size_t size_ = 0;
  bool mapped_ = false;
  bool anywhere_ = false;
  size_t dirty_lo_ = SIZE_MAX, dirty_hi_ = 0;
  std::vector<uint64_t> pages_;  // mapped: one bit per written 4 KiB page
};

}  // namespace tacit::oracle::detail
