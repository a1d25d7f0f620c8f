// Strided views: a decision procedure for data movement.
//
// Reshape, bitcast-convert, copy, transpose, reverse, slice (with strides) and broadcast never
// compute: each byte of their result is a byte of their operand. Such a chain is described exactly
// by a strided view of its base's bytes: the result's bytes, enumerated in row-major order, are
// `offset + Σ index_k * stride_k` for a mixed-radix index over (extent_k). Coalescing (dropping
// extent-1 dims, merging dims whose strides nest) makes the description canonical, so two chains
// over the same base are equal iff their views (and result types) are equal — one check instead
// of dozens of transpose/reshape/slice identities (docs/isel.md, "Views").
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <initializer_list>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/instruction.h"

namespace tacit::isel {

struct ViewDim {
  int64_t extent = 1;
  int64_t stride = 0;  // in bytes; 0 replicates (broadcast), negative reverses
  friend bool operator==(const ViewDim&, const ViewDim&) = default;
};

// A short list of ViewDim, inline up to kInline entries (on the heap beyond): views are built for
// every movement e-node by every pass of every saturation iteration, and a heap vector per view
// (and per refined part) made allocation a large part of the view queries.
class ViewDims {
 public:
  static constexpr size_t kInline = 6;

  ViewDims() = default;
  ViewDims(std::initializer_list<ViewDim> dims) { append(dims.begin(), dims.end()); }

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  ViewDim* data() { return size_ <= kInline ? inline_.data() : heap_.data(); }
  const ViewDim* data() const { return size_ <= kInline ? inline_.data() : heap_.data(); }
  ViewDim* begin() { return data(); }
  ViewDim* end() { return data() + size_; }
  const ViewDim* begin() const { return data(); }
  const ViewDim* end() const { return data() + size_; }
  ViewDim& operator[](size_t i) { return data()[i]; }
  const ViewDim& operator[](size_t i) const { return data()[i]; }
  ViewDim& back() { return data()[size_ - 1]; }
  const ViewDim& back() const { return data()[size_ - 1]; }

  void clear() {
    size_ = 0;
    heap_.clear();
  }
  void push_back(const ViewDim& d) {
    if (size_ < kInline) {
      inline_[size_++] = d;
      return;
    }
    if (size_ == kInline) heap_.assign(inline_.begin(), inline_.end());
    heap_.push_back(d);
    ++size_;
  }
  void append(const ViewDim* first, const ViewDim* last) {
    for (; first != last; ++first)
      push_back(*first);
  }
  friend bool operator==(const ViewDims& a, const ViewDims& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end());
  }

 private:
  std::array<ViewDim, kInline> inline_{};
  std::vector<ViewDim> heap_;  // all the dims once there are more than kInline
  uint32_t size_ = 0;
};

struct StridedView {
  int64_t offset = 0;  // bytes from the start of the base
  ViewDims dims;       // row-major, coalesced

  // The identity view of a tensor of `bytes` bytes.
  static StridedView identity(int64_t bytes);
  int64_t byteCount() const;
  bool isContiguous() const;  // offset + [0, byteCount) in order
  void coalesce();
  std::string str() const;
  friend bool operator==(const StridedView&, const StridedView&) = default;
};

// The view of `op(x)` given the view of x (x has type `operand`). nullopt if the op is not a pure
// data movement or the result is not a strided view of the same base (e.g. a reshape that splits
// a non-uniformly strided dimension before a transpose).
std::optional<StridedView> applyMovement(const StridedView& x, const hlo::Shape& operand,
                                         hlo::HloOpcode opcode, const hlo::HloAttributes& attrs,
                                         const hlo::Shape& result);

bool isMovement(hlo::HloOpcode opcode);

// The lowest and the highest byte position a view reads (its offset if it reads one byte).
int64_t minPosition(const StridedView& v);
int64_t maxPosition(const StridedView& v);

// pad(x) with only high padding of dimension 0 (lo = interior = 0 everywhere): the result's bytes
// are x's bytes in order, then padding bytes. When x's view is contiguous, the result is the
// contiguous view that extends x's past its end; the extension reads bytes that are not x's, so
// the view is exact only while the positions read stay below `x.offset + x's byte count`, which
// the caller tracks (a pad followed by a slice that drops the padding again is a strided view of
// x: Gemmini's pitched moves). nullopt for any other pad.
std::optional<StridedView> padView(const StridedView& x, const hlo::Shape& operand,
                                   const std::vector<hlo::PadDim>& padding,
                                   const hlo::Shape& result);

// Splits `view` along the row-major extents `targets` (whose product is its byte count): one list
// of sub-dims per target, innermost last. nullopt if a target straddles a non-nesting boundary.
std::optional<std::vector<ViewDims>> refine(const StridedView& view,
                                            std::span<const int64_t> targets);
// refine() into `parts` (reused by callers that refine often); false where refine() is nullopt.
bool refineInto(const StridedView& view, std::span<const int64_t> targets,
                std::vector<ViewDims>& parts);

}  // namespace tacit::isel
