// Data movement: iota, reshape, bitcast, broadcast, transpose, slice, dynamic-slice,
// dynamic-update-slice, concatenate, pad, reverse. All of them are CopyNests (kernels/copy.h)
// built at compile time; dynamic slices only add a start offset at run time.
#include <algorithm>
#include <cstring>
#include <numeric>

#include "hlo_eval/evaluator_plan.h"
#include "hlo_eval/kernels/copy.h"
#include "hlo_eval/kernels/scalar.h"
#include "support/strings.h"

namespace tacit::hlo::detail {
namespace {

using kernels::CopyNest;

std::string dimsText(const std::vector<int64_t>& v) {
  return "{" + join(v, ",") + "}";
}

class CopyStep final : public Step {
 public:
  CopyStep(CopyNest nest, int src, int64_t src_offset, int dst, int64_t dst_offset)
      : nest_(std::move(nest)), src_(src), dst_(dst), src_off_(src_offset), dst_off_(dst_offset) {}
  void run(uint8_t* const* slots) override {
    nest_.run(slots[src_] + src_off_, slots[dst_] + dst_off_);
  }

 private:
  CopyNest nest_;
  int src_, dst_;
  int64_t src_off_, dst_off_;  // bytes
};

class FillStep final : public Step {
 public:
  FillStep(int value, int dst, int64_t count, int elem)
      : value_(value), dst_(dst), count_(count), elem_(elem) {}
  void run(uint8_t* const* slots) override {
    kernels::fillElements(slots[dst_], count_, elem_, slots[value_]);
  }

 private:
  int value_, dst_;
  int64_t count_;
  int elem_;
};

// Reads a scalar start index of any integer type as int64 (u64 beyond INT64_MAX saturates).
using IndexReader = int64_t (*)(const uint8_t*);

IndexReader indexReader(PrimitiveType t) {
  return dispatchEvaluable(t, [&]<PrimitiveType kT>() -> IndexReader {
    if constexpr (kernels::kIsInt<kT>) {
      return [](const uint8_t* p) -> int64_t {
        kernels::Native<kT> v;
        std::memcpy(&v, p, sizeof(v));
        if constexpr (std::is_same_v<decltype(v), uint64_t>) {
          return v > static_cast<uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<int64_t>(v);
        }
        return static_cast<int64_t>(v);
      };
    }
    return nullptr;
  });
}

// Start indices of dynamic-slice / dynamic-update-slice: one scalar operand per dimension (or,
// in the old form, one rank-1 operand). Resolves them to element offsets at run time, clamping
// (XLA) or failing (EvalOptions::kError).
class DynamicStart {
 public:
  DynamicStart(const Planner& p, const HloInstruction& inst, std::span<const Value> index_ops,
               const Shape& operand, const std::vector<int64_t>& sizes)
      : where_(p.where(inst)),
        error_(p.options().dynamic_index_mode == DynamicIndexMode::kError),
        dims_(operand.dims()),
        sizes_(sizes),
        strides_(stridesOf(operand)),
        elem_(byteSize(operand.elementType())) {
    auto rank = static_cast<size_t>(operand.rank());
    bool vector_form = index_ops.size() == 1 && index_ops[0].shape.rank() == 1 && rank != 1;
    if (!vector_form && index_ops.size() != rank) {
      p.fail(inst, "expects " + plural(static_cast<int64_t>(rank), "start index") +
                       " (one per dimension), got " + std::to_string(index_ops.size()));
    }
    for (size_t d = 0; d < rank; ++d) {
      const Value& v = index_ops[vector_form ? 0 : d];
      PrimitiveType t = v.shape.elementType();
      if (!v.shape.isArray() || !isInteger(t) ||
          (vector_form ? v.shape.dims() != std::vector<int64_t>{static_cast<int64_t>(rank)}
                       : !v.shape.isScalar())) {
        p.fail(inst, "start indices must be integer scalars (or one integer vector), got " +
                         v.shape.shortStr());
      }
      slots_.push_back(v.slot());
      offsets_.push_back(vector_form ? static_cast<int64_t>(d) * byteSize(t) : 0);
      readers_.push_back(indexReader(t));
    }
  }

  // Byte offset of the slice start in the operand.
  int64_t offset(uint8_t* const* slots) const {
    int64_t off = 0;
    for (size_t d = 0; d < dims_.size(); ++d) {
      int64_t start = readers_[d](slots[slots_[d]] + offsets_[d]);
      int64_t hi = dims_[d] - sizes_[d];
      if (error_ && (start < 0 || start > hi)) reportOutOfRange(slots);
      off += std::clamp<int64_t>(start, 0, hi) * strides_[d];
    }
    return off * elem_;
  }

 private:
  [[noreturn]] void reportOutOfRange(uint8_t* const* slots) const {
    std::vector<int64_t> starts;
    for (size_t d = 0; d < dims_.size(); ++d)
      starts.push_back(readers_[d](slots[slots_[d]] + offsets_[d]));
    where_.fail("start indices " + dimsText(starts) + " with sizes " + dimsText(sizes_) +
                    " reach outside the operand of dimensions " + dimsText(dims_),
                "XLA would clamp the start; the oracle reports it (DynamicIndexMode::kError)");
  }

  Where where_;
  bool error_;
  std::vector<int64_t> dims_, sizes_, strides_;
  int64_t elem_;
  std::vector<int> slots_;
  std::vector<int64_t> offsets_;
  std::vector<IndexReader> readers_;
};

class DynamicSliceStep final : public Step {
 public:
  DynamicSliceStep(DynamicStart start, CopyNest nest, int src, int dst)
      : start_(std::move(start)), nest_(std::move(nest)), src_(src), dst_(dst) {}
  void run(uint8_t* const* slots) override {
    int64_t off = start_.offset(slots);  // checks the start even when nothing is copied
    // An empty slice copies nothing; its operand may be empty too (no buffer to offset).
    if (nest_.elementCount() > 0) nest_.run(slots[src_] + off, slots[dst_]);
  }

 private:
  DynamicStart start_;
  CopyNest nest_;
  int src_, dst_;
};

class DynamicUpdateSliceStep final : public Step {
 public:
  DynamicUpdateSliceStep(DynamicStart start, CopyNest nest, int operand, int update, int dst,
                         size_t bytes)
      : start_(std::move(start)),
        nest_(std::move(nest)),
        operand_(operand),
        update_(update),
        dst_(dst),
        bytes_(bytes) {}
  void run(uint8_t* const* slots) override {
    int64_t off = start_.offset(slots);  // before writing: indices may not alias the result
    if (bytes_) std::memmove(slots[dst_], slots[operand_], bytes_);
    if (nest_.elementCount() > 0) nest_.run(slots[update_], slots[dst_] + off);
  }

 private:
  DynamicStart start_;
  CopyNest nest_;
  int operand_, update_, dst_;
  size_t bytes_;
};

// Adds a step copying `src` (dims, strides in elements, byte offset) into a fresh or given slot.
// An empty copy adds none: its slots may be empty buffers, with no address to offset.
void addCopy(Planner& p, int elem, const std::vector<int64_t>& dims,
             const std::vector<int64_t>& src_strides, int src, int64_t src_off,
             const std::vector<int64_t>& dst_strides, int dst, int64_t dst_off) {
  CopyNest nest(elem, dims, src_strides, dst_strides);
  if (nest.elementCount() == 0) return;
  p.addStep(std::make_unique<CopyStep>(std::move(nest), src, src_off * elem, dst, dst_off * elem));
}

const Value& single(const Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.size() != 1) p.fail(inst, "expects 1 operand, got " + std::to_string(ops.size()));
  requireEvaluableArray(p, inst, ops[0].shape, "operand");
  return ops[0];
}

std::vector<int64_t> requireDims(const Planner& p, const HloInstruction& inst) {
  if (!inst.attrs().dimensions) p.fail(inst, "missing dimensions=");
  return *inst.attrs().dimensions;
}

Value compileIota(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (!ops.empty()) p.fail(inst, "iota takes no operands");
  const Shape& s = inst.shape();
  if (!inst.attrs().iota_dimension) p.fail(inst, "missing iota_dimension=");
  int64_t dim = *inst.attrs().iota_dimension;
  if (dim < 0 || dim >= s.rank()) {
    p.fail(inst, "iota_dimension=" + std::to_string(dim) + " is out of range for " + s.shortStr());
  }
  if (s.elementType() == PrimitiveType::kPred) p.fail(inst, "iota is not defined on pred");
  // A constant: computed once at compile time, value = index along `dim` converted to the type.
  AlignedBytes data;
  if (p.allocating()) {
    data = AlignedBytes(static_cast<size_t>(s.byteSize()));
    int64_t inner = stridesOf(s)[static_cast<size_t>(dim)], extent = s.dim(dim);
    dispatchEvaluable(s.elementType(), [&]<PrimitiveType kT>() {
      auto* out = reinterpret_cast<kernels::Native<kT>*>(data.data());
      for (int64_t i = 0; i < s.elementCount(); ++i) {
        out[i] = kernels::convert<PrimitiveType::kS64, kT>((i / inner) % extent);
      }
    });
  }
  return p.newConstantOwned(s, std::move(data));
}

Value compileReshape(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value& x = single(p, inst, ops);
  const Shape& s = inst.shape();
  if (s.elementType() != x.shape.elementType() || s.elementCount() != x.shape.elementCount()) {
    p.fail(inst, "cannot reshape " + x.shape.shortStr() + " to " + s.shortStr());
  }
  return Value{s, x.leaves};  // row-major data is the same bytes
}

// Permutation taking logical dimensions to the physical (major-to-minor) order of a layout.
std::vector<int64_t> majorToMinor(const Shape& s) {
  std::vector<int64_t> m2m = s.minorToMajor();
  std::reverse(m2m.begin(), m2m.end());
  return m2m;
}

// bitcast reinterprets the physical bytes: with default layouts it is a reshape; otherwise the
// operand is laid out physically (transpose by its major-to-minor order) and read back through
// the result's layout.
Value compileBitcast(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value& x = single(p, inst, ops);
  const Shape& s = inst.shape();
  int elem = byteSize(s.elementType());
  if (elem != byteSize(x.shape.elementType()) || s.elementCount() != x.shape.elementCount() ||
      (s.elementType() == PrimitiveType::kPred) !=
          (x.shape.elementType() == PrimitiveType::kPred)) {
    p.fail(inst, "cannot bitcast " + x.shape.shortStr() + " to " + s.shortStr(),
           "bitcast keeps the bytes: element width and count must match");
  }
  for (const Shape* sh : {&x.shape, &s}) {
    if (sh->layout() && !sh->layout()->tiles.empty()) {
      p.fail(inst, "bitcast with a tiled layout is not supported: " + sh->str());
    }
  }
  int mid = x.slot();
  if (!x.shape.hasDefaultLayout()) {
    std::vector<int64_t> perm = majorToMinor(x.shape), dims, src;
    std::vector<int64_t> xs = stridesOf(x.shape);
    for (int64_t d : perm) {
      dims.push_back(x.shape.dim(d));
      src.push_back(xs[static_cast<size_t>(d)]);
    }
    mid = p.newTemp(Shape(x.shape.elementType(), dims)).slot();
    addCopy(p, elem, dims, src, x.slot(), 0, rowMajorStrides(dims), mid, 0);
  }
  if (s.hasDefaultLayout()) return Value{s, {mid}};
  // Physical array Q has dims s.dims()[perm]; result element y reads Q at y permuted.
  std::vector<int64_t> perm = majorToMinor(s), qdims;
  for (int64_t d : perm)
    qdims.push_back(s.dim(d));
  std::vector<int64_t> qs = rowMajorStrides(qdims), src(static_cast<size_t>(s.rank()));
  for (size_t k = 0; k < perm.size(); ++k)
    src[static_cast<size_t>(perm[k])] = qs[k];
  Value out = p.newTemp(s);
  addCopy(p, elem, s.dims(), src, mid, 0, stridesOf(s), out.slot(), 0);
  return out;
}

Value compileBroadcast(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value& x = single(p, inst, ops);
  const Shape& s = inst.shape();
  std::vector<int64_t> dims = inst.attrs().dimensions.value_or(std::vector<int64_t>{});
  if (static_cast<int64_t>(dims.size()) != x.shape.rank()) {
    p.fail(inst, "dimensions=" + dimsText(dims) + " must map each of the operand's " +
                     std::to_string(x.shape.rank()) + " dimensions");
  }
  if (x.shape.elementType() != s.elementType())
    p.fail(inst, "broadcast cannot change the element type");
  std::vector<int64_t> src(static_cast<size_t>(s.rank()), 0), xs = stridesOf(x.shape);
  std::vector<bool> used(static_cast<size_t>(s.rank()), false);
  for (size_t i = 0; i < dims.size(); ++i) {
    int64_t d = dims[i];
    if (d < 0 || d >= s.rank() || used[static_cast<size_t>(d)] ||
        s.dim(d) != x.shape.dim(static_cast<int64_t>(i))) {
      p.fail(inst, "dimensions=" + dimsText(dims) + " do not map " + x.shape.shortStr() + " into " +
                       s.shortStr());
    }
    used[static_cast<size_t>(d)] = true;
    src[static_cast<size_t>(d)] = xs[i];
  }
  Value out = p.newTemp(s);
  addCopy(p, byteSize(s.elementType()), s.dims(), src, x.slot(), 0, stridesOf(s), out.slot(), 0);
  return out;
}

// A permutation of 0..rank-1.
bool isPermutation(const std::vector<int64_t>& perm, int64_t rank) {
  if (static_cast<int64_t>(perm.size()) != rank) return false;
  std::vector<bool> seen(static_cast<size_t>(rank), false);
  for (int64_t d : perm) {
    if (d < 0 || d >= rank || seen[static_cast<size_t>(d)]) return false;
    seen[static_cast<size_t>(d)] = true;
  }
  return true;
}

Value compileTranspose(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value& x = single(p, inst, ops);
  std::vector<int64_t> perm = requireDims(p, inst);
  if (!isPermutation(perm, x.shape.rank())) {
    p.fail(inst,
           "dimensions=" + dimsText(perm) + " is not a permutation of the operand's dimensions");
  }
  std::vector<int64_t> dims, src, xs = stridesOf(x.shape);
  for (int64_t d : perm) {
    dims.push_back(x.shape.dim(d));
    src.push_back(xs[static_cast<size_t>(d)]);
  }
  requireResultShape(p, inst, Shape(x.shape.elementType(), dims));
  std::vector<int64_t> identity(perm.size());
  std::iota(identity.begin(), identity.end(), 0);
  if (perm == identity) return Value{inst.shape(), x.leaves};
  Value out = p.newTemp(inst.shape());
  addCopy(p, byteSize(x.shape.elementType()), dims, src, x.slot(), 0, rowMajorStrides(dims),
          out.slot(), 0);
  return out;
}

Value compileSlice(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value& x = single(p, inst, ops);
  if (!inst.attrs().slice) p.fail(inst, "missing slice=");
  const auto& sl = *inst.attrs().slice;
  if (static_cast<int64_t>(sl.size()) != x.shape.rank()) {
    p.fail(inst, "slice= needs one range per dimension of " + x.shape.shortStr());
  }
  std::vector<int64_t> dims, src, xs = stridesOf(x.shape);
  int64_t offset = 0;
  for (size_t d = 0; d < sl.size(); ++d) {
    const SliceDim& r = sl[d];
    int64_t extent = x.shape.dim(static_cast<int64_t>(d));
    if (r.start < 0 || r.limit < r.start || r.limit > extent || r.stride < 1) {
      p.fail(inst, "slice range [" + std::to_string(r.start) + ":" + std::to_string(r.limit) + ":" +
                       std::to_string(r.stride) + "] is invalid for dimension " +
                       std::to_string(d) + " of size " + std::to_string(extent));
    }
    dims.push_back((r.limit - r.start + r.stride - 1) / r.stride);
    src.push_back(xs[d] * r.stride);
    offset += r.start * xs[d];
  }
  requireResultShape(p, inst, Shape(x.shape.elementType(), dims));
  Value out = p.newTemp(inst.shape());
  addCopy(p, byteSize(x.shape.elementType()), dims, src, x.slot(), offset, rowMajorStrides(dims),
          out.slot(), 0);
  return out;
}

Value compileDynamicSlice(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.empty()) p.fail(inst, "expects an operand and start indices");
  const Value& x = ops[0];
  requireEvaluableArray(p, inst, x.shape, "operand");
  if (!inst.attrs().dynamic_slice_sizes) p.fail(inst, "missing dynamic_slice_sizes=");
  std::vector<int64_t> sizes = *inst.attrs().dynamic_slice_sizes;
  if (static_cast<int64_t>(sizes.size()) != x.shape.rank()) {
    p.fail(inst, "dynamic_slice_sizes=" + dimsText(sizes) + " needs one size per dimension of " +
                     x.shape.shortStr());
  }
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (sizes[d] < 0 || sizes[d] > x.shape.dim(static_cast<int64_t>(d))) {
      p.fail(inst, "dynamic_slice_sizes=" + dimsText(sizes) + " exceed the operand " +
                       x.shape.shortStr());
    }
  }
  requireResultShape(p, inst, Shape(x.shape.elementType(), sizes));
  DynamicStart start(p, inst, ops.subspan(1), x.shape, sizes);
  Value out = p.newTemp(inst.shape());
  CopyNest nest(byteSize(x.shape.elementType()), sizes, stridesOf(x.shape), rowMajorStrides(sizes));
  p.addStep(
      std::make_unique<DynamicSliceStep>(std::move(start), std::move(nest), x.slot(), out.slot()));
  return out;
}

Value compileDynamicUpdateSlice(Planner& p, const HloInstruction& inst,
                                std::span<const Value> ops) {
  if (ops.size() < 2) p.fail(inst, "expects an operand, an update and start indices");
  const Value &x = ops[0], &u = ops[1];
  requireEvaluableArray(p, inst, x.shape, "operand");
  requireEvaluableArray(p, inst, u.shape, "update");
  if (u.shape.elementType() != x.shape.elementType() || u.shape.rank() != x.shape.rank()) {
    p.fail(inst,
           "update " + u.shape.shortStr() + " does not match the operand " + x.shape.shortStr());
  }
  for (int64_t d = 0; d < x.shape.rank(); ++d) {
    if (u.shape.dim(d) > x.shape.dim(d)) {
      p.fail(inst,
             "update " + u.shape.shortStr() + " is larger than the operand " + x.shape.shortStr());
    }
  }
  requireResultShape(p, inst, x.shape);
  DynamicStart start(p, inst, ops.subspan(2), x.shape, u.shape.dims());
  Value out = p.newTemp(inst.shape());
  CopyNest nest(byteSize(x.shape.elementType()), u.shape.dims(), stridesOf(u.shape),
                stridesOf(x.shape));
  p.addStep(std::make_unique<DynamicUpdateSliceStep>(std::move(start), std::move(nest), x.slot(),
                                                     u.slot(), out.slot(),
                                                     static_cast<size_t>(x.shape.byteSize())));
  return out;
}

Value compileConcatenate(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.empty()) p.fail(inst, "expects at least one operand");
  std::vector<int64_t> dim_attr = requireDims(p, inst);
  if (dim_attr.size() != 1) p.fail(inst, "dimensions= must name exactly one dimension");
  int64_t cd = dim_attr[0];
  const Shape& first = ops[0].shape;
  if (cd < 0 || cd >= first.rank())
    p.fail(inst, "concatenation dimension " + std::to_string(cd) + " is out of range");
  std::vector<int64_t> dims = first.dims();
  dims[static_cast<size_t>(cd)] = 0;
  for (const Value& v : ops) {
    requireEvaluableArray(p, inst, v.shape, "operand");
    bool ok = v.shape.elementType() == first.elementType() && v.shape.rank() == first.rank();
    for (int64_t d = 0; ok && d < first.rank(); ++d)
      ok = d == cd || v.shape.dim(d) == first.dim(d);
    if (!ok) p.fail(inst, "operand " + v.shape.shortStr() + " does not match " + first.shortStr());
    dims[static_cast<size_t>(cd)] += v.shape.dim(cd);
  }
  requireResultShape(p, inst, Shape(first.elementType(), dims));
  Value out = p.newTemp(inst.shape());
  std::vector<int64_t> os = stridesOf(inst.shape());
  int64_t offset = 0;
  for (const Value& v : ops) {
    addCopy(p, byteSize(first.elementType()), v.shape.dims(), stridesOf(v.shape), v.slot(), 0, os,
            out.slot(), offset * os[static_cast<size_t>(cd)]);
    offset += v.shape.dim(cd);
  }
  return out;
}

Value compilePad(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.size() != 2) p.fail(inst, "expects an operand and a padding value");
  const Value &x = ops[0], &v = ops[1];
  requireEvaluableArray(p, inst, x.shape, "operand");
  if (!v.shape.isScalar() || v.shape.elementType() != x.shape.elementType()) {
    p.fail(inst, "the padding value must be a scalar of the operand's element type");
  }
  if (!inst.attrs().padding) p.fail(inst, "missing padding=");
  const auto& pad = *inst.attrs().padding;
  if (static_cast<int64_t>(pad.size()) != x.shape.rank()) {
    p.fail(inst, "padding= needs one entry per dimension of " + x.shape.shortStr());
  }
  std::vector<int64_t> dims;
  for (size_t d = 0; d < pad.size(); ++d) {
    int64_t n = x.shape.dim(static_cast<int64_t>(d));
    if (pad[d].interior < 0) p.fail(inst, "interior padding must not be negative");
    int64_t out = pad[d].lo + pad[d].hi + n + std::max<int64_t>(n - 1, 0) * pad[d].interior;
    if (out < 0) p.fail(inst, "padding makes dimension " + std::to_string(d) + " negative");
    dims.push_back(out);
  }
  Shape result(x.shape.elementType(), dims);
  requireResultShape(p, inst, result);
  int elem = byteSize(x.shape.elementType());
  Value out = p.newTemp(inst.shape());
  p.addStep(std::make_unique<FillStep>(v.slot(), out.slot(), result.elementCount(), elem));
  // The operand elements that land inside the result (negative padding crops).
  std::vector<int64_t> cdims, src, dst, xs = stridesOf(x.shape), os = stridesOf(result);
  int64_t src_off = 0, dst_off = 0;
  for (size_t d = 0; d < pad.size(); ++d) {
    int64_t step = pad[d].interior + 1, lo = pad[d].lo, n = x.shape.dim(static_cast<int64_t>(d));
    int64_t first = lo >= 0 ? 0 : (-lo + step - 1) / step;
    int64_t last = std::min(n - 1, dims[d] - 1 - lo < 0 ? -1 : (dims[d] - 1 - lo) / step);
    int64_t count = std::max<int64_t>(last - first + 1, 0);
    cdims.push_back(count);
    src.push_back(xs[d]);
    dst.push_back(os[d] * step);
    src_off += first * xs[d];
    dst_off += (lo + first * step) * os[d];
  }
  if (std::find(cdims.begin(), cdims.end(), 0) == cdims.end()) {
    addCopy(p, elem, cdims, src, x.slot(), src_off, dst, out.slot(), dst_off);
  }
  return out;
}

Value compileReverse(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  const Value& x = single(p, inst, ops);
  std::vector<int64_t> rev = requireDims(p, inst);
  std::vector<int64_t> src = stridesOf(x.shape);
  int64_t offset = 0;
  std::vector<bool> seen(static_cast<size_t>(x.shape.rank()), false);
  for (int64_t d : rev) {
    if (d < 0 || d >= x.shape.rank() || seen[static_cast<size_t>(d)]) {
      p.fail(inst, "dimensions=" + dimsText(rev) + " are not distinct dimensions of " +
                       x.shape.shortStr());
    }
    seen[static_cast<size_t>(d)] = true;
    offset += (x.shape.dim(d) - 1) * src[static_cast<size_t>(d)];
    src[static_cast<size_t>(d)] = -src[static_cast<size_t>(d)];
  }
  requireResultShape(p, inst, x.shape);
  if (x.shape.elementCount() == 0) offset = 0;
  Value out = p.newTemp(inst.shape());
  addCopy(p, byteSize(x.shape.elementType()), x.shape.dims(), src, x.slot(), offset,
          stridesOf(x.shape), out.slot(), 0);
  return out;
}

}  // namespace

Value compileShapeOp(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  requireEvaluableArray(p, inst, inst.shape(), "result");
  switch (inst.opcode()) {
    case HloOpcode::kIota:
      return compileIota(p, inst, ops);
    case HloOpcode::kReshape:
      return compileReshape(p, inst, ops);
    case HloOpcode::kBitcast:
      return compileBitcast(p, inst, ops);
    case HloOpcode::kBroadcast:
      return compileBroadcast(p, inst, ops);
    case HloOpcode::kTranspose:
      return compileTranspose(p, inst, ops);
    case HloOpcode::kSlice:
      return compileSlice(p, inst, ops);
    case HloOpcode::kDynamicSlice:
      return compileDynamicSlice(p, inst, ops);
    case HloOpcode::kDynamicUpdateSlice:
      return compileDynamicUpdateSlice(p, inst, ops);
    case HloOpcode::kConcatenate:
      return compileConcatenate(p, inst, ops);
    case HloOpcode::kPad:
      return compilePad(p, inst, ops);
    case HloOpcode::kReverse:
      return compileReverse(p, inst, ops);
    default:
      p.fail(inst, "not a data-movement op");
  }
}

}  // namespace tacit::hlo::detail
