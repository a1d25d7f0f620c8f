#include "oracle/memory.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "support/diagnostic.h"

namespace tacit::oracle::detail {
namespace {

// Below this, malloc + memset is cheaper than a mapping.
constexpr size_t kMapThreshold = size_t{1} << 18;

}  // namespace

ZeroedMemory& ZeroedMemory::operator=(ZeroedMemory&& o) noexcept {
  if (this != &o) {
    release();
    data_ = o.data_;
    size_ = o.size_;
    mapped_ = o.mapped_;
    anywhere_ = o.anywhere_;
    dirty_lo_ = o.dirty_lo_;
    dirty_hi_ = o.dirty_hi_;
    pages_ = std::move(o.pages_);
    o.data_ = nullptr;
    o.size_ = 0;
    o.mapped_ = false;
  }
  return *this;
}

void ZeroedMemory::clearPages() {
  for (size_t w = 0; w < pages_.size(); ++w) {
    uint64_t bits = pages_[w];
    pages_[w] = 0;
    while (bits != 0) {  // each run of consecutive written pages is one memset
      int first = __builtin_ctzll(bits);
      uint64_t shifted = bits >> first;
      int run = shifted == ~uint64_t{0} ? 64 - first : __builtin_ctzll(~shifted);
      size_t lo = ((w << 6) + static_cast<size_t>(first)) << kPageBits;
      size_t hi = std::min(size_, lo + (static_cast<size_t>(run) << kPageBits));
      if (lo < hi) std::memset(data_ + lo, 0, hi - lo);
      bits = run + first >= 64 ? 0 : bits & ~(((uint64_t{1} << run) - 1) << first);
    }
  }
}

void ZeroedMemory::allocate(size_t bytes) {
  size_t lo = dirty_lo_, hi = std::min(dirty_hi_, size_);
  bool anywhere = anywhere_;
  dirty_lo_ = SIZE_MAX;
  dirty_hi_ = 0;
  anywhere_ = false;
  if (data_ != nullptr && bytes == size_) {
    if (hi <= lo) return;  // nothing written since it was zero
    if (!mapped_) {
      std::memset(data_ + lo, 0, hi - lo);
      return;
    }
    if (!anywhere) {
      clearPages();
      return;
    }
  }
  release();
  if (bytes == 0) return;
  if (bytes >= kMapThreshold) {
    void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) fail("cannot allocate " + std::to_string(bytes) + " bytes of memory");
    data_ = static_cast<uint8_t*>(p);
    mapped_ = true;
    pages_.assign(((bytes >> kPageBits) + 1 + 63) / 64, 0);
  } else {
    size_t rounded = (bytes + 63) / 64 * 64;
    data_ = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
    if (data_ == nullptr) fail("cannot allocate " + std::to_string(bytes) + " bytes of memory");
    std::memset(data_, 0, rounded);
    mapped_ = false;
    pages_.clear();
  }
  size_ = bytes;
}

size_t ZeroedMemory::residentBytes() const {
  if (!mapped_ || data_ == nullptr) return size_;
  size_t page = size_t{1} << kPageBits;
  std::vector<unsigned char> in((size_ + page - 1) / page);
  if (mincore(data_, size_, in.data()) != 0) return size_;
  size_t n = 0;
  for (unsigned char c : in)
    n += c & 1;
  return std::min(size_, n * page);
}

void ZeroedMemory::release() {
  if (data_ == nullptr) return;
  if (mapped_)
    munmap(data_, size_);
  else
    std::free(data_);
  data_ = nullptr;
  size_ = 0;
  mapped_ = false;
  pages_.clear();
}

}  // namespace tacit::oracle::detail
