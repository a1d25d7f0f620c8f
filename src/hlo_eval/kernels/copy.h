// The data-movement engine: one strided copy kernel behind transpose, broadcast, slice, reverse,
// concatenate, pad, dynamic-slice, dynamic-update-slice and layout bitcasts.
//
// A CopyNest is a loop nest over `dims` that copies element src[sum(i_d * src_stride_d)] to
// dst[sum(i_d * dst_stride_d)] (strides in elements; negative for reversal, zero for broadcast).
// It is built once per instruction (dimensions merged where contiguous, unit dimensions dropped)
// and run many times: the inner dimension is a memcpy, a fill or a typed strided loop, transposes
// are tiled so that both sides stay in cache, and no index vector is touched per element.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

namespace tacit::hlo::kernels {

class CopyNest {
 public:
  CopyNest() = default;
  // `elem_size` is 1, 2, 4 or 8 bytes (any other size copies byte-wise per element).
  CopyNest(int elem_size, std::span<const int64_t> dims, std::span<const int64_t> src_strides,
           std::span<const int64_t> dst_strides);

  // Copies from `src` to `dst`; both point at the element with all indices zero.
  void run(const void* src, void* dst) const;

  int64_t elementCount() const { return count_; }
  int rank() const { return static_cast<int>(dims_.size()); }

 private:
  // A block of at most 64 bytes whose bytes are permuted (see findBlock); false: none.
  bool findBlock();
  void runBlocks(const uint8_t* src, uint8_t* dst) const;

  int elem_size_ = 1;
  int64_t count_ = 0;
  std::vector<int64_t> dims_, src_, dst_;  // merged, outermost first
  int tile_dim_ = -1;                      // dimension with unit source stride, tiled with inner
  // Small transposes (e.g. [16,4] -> [4,16] bytes): the inner dimensions from block_dim_ on read
  // and write each a contiguous block of block_bytes_, permuted by block_perm_ (destination byte
  // i <- source byte block_perm_[i]); the outer dimensions step through the blocks.
  int block_dim_ = -1;
  int block_bytes_ = 0;
  std::vector<uint8_t> block_perm_;
  std::vector<int64_t> block_outer_, block_ss_, block_ds_;  // outer dimensions, byte strides
};

// Fills `count` elements of `elem_size` bytes at `dst` with the element at `value`.
void fillElements(void* dst, int64_t count, int elem_size, const void* value);

}  // namespace tacit::hlo::kernels
