#include "isel/view.h"

#include <algorithm>
#include <numeric>

#include "support/strings.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

// Lists reused by every movement (the view queries apply movements to every view of every class:
// allocating these per call showed in profiles). No movement calls another while using them.
struct Scratch {
  std::vector<int64_t> extents;
  std::vector<ViewDims> parts, out;
};
Scratch& scratch() {
  static thread_local Scratch s;
  return s;
}

// The target extents of a tensor type at byte granularity: its dims, then its element width
// (in the scratch list).
std::span<const int64_t> byteExtents(const hlo::Shape& s) {
  std::vector<int64_t>& t = scratch().extents;
  t.assign(s.dims().begin(), s.dims().end());
  t.push_back(hlo::byteSize(s.elementType()));
  return t;
}

// refine(x, byteExtents(operand)) into the scratch parts.
std::vector<ViewDims>* refineBytes(const StridedView& x, const hlo::Shape& operand) {
  std::vector<ViewDims>& parts = scratch().parts;
  return refineInto(x, byteExtents(operand), parts) ? &parts : nullptr;
}

StridedView assemble(int64_t offset, const std::vector<ViewDims>& parts) {
  StridedView v;
  v.offset = offset;
  for (const auto& p : parts)
    v.dims.append(p.begin(), p.end());
  v.coalesce();
  return v;
}

int64_t product(const ViewDims& dims, size_t from) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i)
    p *= dims[i].extent;
  return p;
}

std::optional<StridedView> transposeView(const StridedView& x, const hlo::Shape& operand,
                                         const std::vector<int64_t>& perm) {
  std::vector<ViewDims>* parts = refineBytes(x, operand);
  if (!parts) return std::nullopt;
  std::vector<ViewDims>& out = scratch().out;
  out.clear();
  for (int64_t p : perm)
    out.push_back((*parts)[static_cast<size_t>(p)]);
  out.push_back(parts->back());
  return assemble(x.offset, out);
}

std::optional<StridedView> reverseView(const StridedView& x, const hlo::Shape& operand,
                                       const std::vector<int64_t>& dims) {
  std::vector<ViewDims>* parts = refineBytes(x, operand);
  if (!parts) return std::nullopt;
  int64_t offset = x.offset;
  for (int64_t d : dims) {
    for (ViewDim& sub : (*parts)[static_cast<size_t>(d)]) {
      offset += (sub.extent - 1) * sub.stride;
      sub.stride = -sub.stride;  // reversing a mixed-radix index reverses every digit
    }
  }
  return assemble(offset, *parts);
}

std::optional<StridedView> sliceView(const StridedView& x, const hlo::Shape& operand,
                                     const std::vector<hlo::SliceDim>& slice) {
  std::vector<ViewDims>* parts = refineBytes(x, operand);
  if (!parts) return std::nullopt;
  int64_t offset = x.offset;
  for (size_t i = 0; i < slice.size(); ++i) {
    const hlo::SliceDim& s = slice[i];
    int64_t count = s.limit <= s.start ? 0 : (s.limit - s.start + s.stride - 1) / s.stride;
    if (count == 0) return std::nullopt;
    if (s.start == 0 && s.stride == 1 && count == operand.dim(static_cast<int64_t>(i))) continue;
    ViewDims& sub = (*parts)[i];
    if (sub.empty()) return std::nullopt;  // cannot happen for a dimension of size > 1
    // Slicing a dimension that spans several sub-dims is exact only along the outermost one.
    int64_t inner = product(sub, 1);
    if (s.start % inner != 0 || count % inner != 0 || (s.stride != 1 && sub.size() != 1))
      return std::nullopt;
    offset += (s.start / inner) * sub[0].stride;
    sub[0].extent = count / inner;
    sub[0].stride *= s.stride;
  }
  return assemble(offset, *parts);
}

std::optional<StridedView> broadcastView(const StridedView& x, const hlo::Shape& operand,
                                         const std::vector<int64_t>& dims,
                                         const hlo::Shape& result) {
  std::vector<ViewDims>* parts = refineBytes(x, operand);
  if (!parts) return std::nullopt;
  // Every result dimension replicates (stride 0) unless an operand dimension maps to it.
  std::vector<ViewDims>& out = scratch().out;
  out.clear();
  for (int64_t r = 0; r < result.rank(); ++r)
    out.push_back({ViewDim{result.dim(r), 0}});
  for (size_t i = 0; i < dims.size(); ++i)
    out[static_cast<size_t>(dims[i])] = (*parts)[i];
  out.push_back(parts->back());
  return assemble(x.offset, out);
}

}  // namespace

StridedView StridedView::identity(int64_t bytes) {
  StridedView v;
  v.dims.push_back({bytes, 1});
  v.coalesce();
  return v;
}

int64_t StridedView::byteCount() const {
  return product(dims, 0);
}

bool StridedView::isContiguous() const {
  return dims.empty() || (dims.size() == 1 && dims[0].stride == 1);
}

void StridedView::coalesce() {
  ViewDims out;
  for (const ViewDim& d : dims) {
    if (d.extent == 1) continue;
    if (!out.empty() && out.back().stride == d.extent * d.stride) {
      out.back() = {out.back().extent * d.extent, d.stride};
    } else {
      out.push_back(d);
    }
  }
  dims = std::move(out);
}

std::string StridedView::str() const {
  return "@" + std::to_string(offset) + "[" +
         joinWith(dims, ",",
                  [](const ViewDim& d) {
                    return std::to_string(d.extent) + ":" + std::to_string(d.stride);
                  }) +
         "]";
}

bool isMovement(HloOpcode opcode) {
  switch (opcode) {
    case HloOpcode::kReshape:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kCopy:
    case HloOpcode::kTranspose:
    case HloOpcode::kReverse:
    case HloOpcode::kSlice:
    case HloOpcode::kBroadcast:
      return true;
    default:
      return false;
  }
}

int64_t minPosition(const StridedView& v) {
  int64_t p = v.offset;
  for (const ViewDim& d : v.dims)
    p += d.stride < 0 ? (d.extent - 1) * d.stride : 0;
  return p;
}

int64_t maxPosition(const StridedView& v) {
  int64_t p = v.offset;
  for (const ViewDim& d : v.dims)
    p += d.stride > 0 ? (d.extent - 1) * d.stride : 0;
  return p;
}

std::optional<StridedView> padView(const StridedView& x, const hlo::Shape& operand,
                                   const std::vector<hlo::PadDim>& padding,
                                   const hlo::Shape& result) {
  if (!x.isContiguous() || padding.size() != static_cast<size_t>(operand.rank()) ||
      operand.rank() == 0)
    return std::nullopt;
  for (size_t i = 0; i < padding.size(); ++i) {
    const hlo::PadDim& d = padding[i];
    if (d.lo != 0 || d.interior != 0 || (i > 0 && d.hi != 0) || d.hi < 0) return std::nullopt;
  }
  // Only dimension 0 grows, so the row-major order keeps x's bytes first.
  StridedView v = StridedView::identity(result.byteSize());
  v.offset = x.offset;
  return v;
}

std::optional<std::vector<ViewDims>> refine(const StridedView& view,
                                            std::span<const int64_t> targets) {
  std::vector<ViewDims> parts;
  if (!refineInto(view, targets, parts)) return std::nullopt;
  return parts;
}

bool refineInto(const StridedView& view, std::span<const int64_t> targets,
                std::vector<ViewDims>& parts) {
  parts.assign(targets.size(), ViewDims{});
  ViewDims src = view.dims;
  int64_t i = static_cast<int64_t>(src.size()) - 1;
  for (int64_t j = static_cast<int64_t>(targets.size()) - 1; j >= 0; --j) {
    int64_t need = targets[static_cast<size_t>(j)];
    ViewDims& out = parts[static_cast<size_t>(j)];  // innermost first, reversed below
    while (need > 1) {
      if (i < 0) return false;
      ViewDim& d = src[static_cast<size_t>(i)];
      if (d.extent == need) {
        out.push_back(d);
        --i;
        need = 1;
      } else if (d.extent > need) {
        if (d.extent % need != 0) return false;
        out.push_back(ViewDim{need, d.stride});
        d.extent /= need;
        d.stride *= need;
        need = 1;
      } else {
        if (need % d.extent != 0) return false;
        out.push_back(d);
        need /= d.extent;
        --i;
      }
    }
    std::reverse(out.begin(), out.end());
  }
  if (i >= 0) return false;  // extents did not add up
  return true;
}

std::optional<StridedView> applyMovement(const StridedView& x, const hlo::Shape& operand,
                                         HloOpcode opcode, const hlo::HloAttributes& attrs,
                                         const hlo::Shape& result) {
  switch (opcode) {
    case HloOpcode::kReshape:
    case HloOpcode::kBitcastConvert:
    case HloOpcode::kCopy:
      return x;  // the row-major byte sequence is unchanged
    case HloOpcode::kTranspose:
      return transposeView(x, operand, *attrs.dimensions);
    case HloOpcode::kReverse:
      return reverseView(x, operand, *attrs.dimensions);
    case HloOpcode::kSlice:
      return sliceView(x, operand, *attrs.slice);
    case HloOpcode::kBroadcast:
      return broadcastView(x, operand, *attrs.dimensions, result);
    default:
      return std::nullopt;
  }
}

}  // namespace tacit::isel
