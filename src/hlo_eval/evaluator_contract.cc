// Contractions: dot (general) and convolution, both on the blocked GEMM of kernels/gemm.h.
//
// Accumulation (docs/numerics.md): a float result accumulates in f32 (f64 if the result or an
// operand is f64) and is rounded to the result type once at the end; an integer result
// accumulates modulo 2^32 (2^64 for 64-bit results) after widening each operand by its own
// signedness. Each output element sums its products sequentially in contracting-index order,
// starting from +0: for dot the contracting index runs over lhs_contracting_dims in the listed
// order (the first listed dimension outermost); for convolution over the kernel window positions
// in row-major order of the spatial dimensions, then the input feature (innermost). Padding and
// dilation holes of a convolution are zeros that are multiplied like any other element.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <map>
#include <optional>

#include "hlo_eval/evaluator_plan.h"
#include "hlo_eval/kernels/copy.h"
#include "hlo_eval/kernels/elementwise.h"
#include "hlo_eval/kernels/gemm.h"
#include "hlo_eval/kernels/scalar.h"
#include "support/strings.h"

namespace tacit::hlo::detail {
namespace {

using kernels::CopyNest;
using kernels::GemmWorkspace;
using kernels::MatrixView;
using P = PrimitiveType;

std::string dimsText(const std::vector<int64_t>& v) {
  return "{" + join(v, ",") + "}";
}

// The accumulation type of a contraction producing `result` from `lhs` and `rhs`.
P accumulationType(const Planner& p, const HloInstruction& inst, P lhs, P rhs, P result) {
  for (P t : {lhs, rhs, result}) {
    if (t == P::kPred) p.fail(inst, "pred operands or results are not supported in a contraction");
  }
  if (isFloat(result)) {
    return (result == P::kF64 || lhs == P::kF64 || rhs == P::kF64) ? P::kF64 : P::kF32;
  }
  if (isFloat(lhs) || isFloat(rhs)) {
    p.fail(inst, "an integer result needs integer operands");
  }
  return bitWidth(result) > 32 ? P::kU64 : P::kU32;
}

// Whether results of type `result` can be written by the GEMM directly (same storage as acc).
bool storesDirectly(P acc, P result) {
  if (acc == P::kF32) return result == P::kF32;
  if (acc == P::kF64) return result == P::kF64;
  if (acc == P::kU32) return result == P::kS32 || result == P::kU32;
  return result == P::kS64 || result == P::kU64;
}

// A group of dimensions iterated in the given order as one index: its size and element stride,
// or nullopt if the dimensions are not contiguous with each other in that order.
struct Group {
  int64_t size = 1;
  int64_t stride = 0;
};
std::optional<Group> mergeGroup(const Shape& s, const std::vector<int64_t>& dims) {
  std::vector<int64_t> st = stridesOf(s);
  Group g;
  std::optional<int64_t> inner_stride, inner_extent;
  for (auto it = dims.rbegin(); it != dims.rend(); ++it) {
    int64_t d = *it, n = s.dim(d);
    g.size *= n;
    if (n == 1) continue;
    int64_t stride = st[static_cast<size_t>(d)];
    if (inner_stride && stride != *inner_stride * *inner_extent) return std::nullopt;
    if (!inner_stride) g.stride = stride;
    inner_stride = stride;
    inner_extent = n;
  }
  return g;
}

// One dot operand as [batch, rows, cols] strides (elements), possibly after a materializing
// transpose into [batch..., rows..., cols...] order.
struct OperandView {
  int slot = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
};

OperandView viewOperand(Planner& p, const Value& v, const std::vector<int64_t>& batch,
                        const std::vector<int64_t>& rows, const std::vector<int64_t>& cols) {
  auto gb = mergeGroup(v.shape, batch), gr = mergeGroup(v.shape, rows),
       gc = mergeGroup(v.shape, cols);
  if (gb && gr && gc) return {v.slot(), gb->stride, gr->stride, gc->stride};
  // Materialize the operand in [batch, rows, cols] order.
  std::vector<int64_t> order = batch;
  order.insert(order.end(), rows.begin(), rows.end());
  order.insert(order.end(), cols.begin(), cols.end());
  std::vector<int64_t> dims, src, vs = stridesOf(v.shape);
  for (int64_t d : order) {
    dims.push_back(v.shape.dim(d));
    src.push_back(vs[static_cast<size_t>(d)]);
  }
  Value t = p.newTemp(Shape(v.shape.elementType(), dims));
  struct Copy final : Step {
    CopyNest nest;
    int src, dst;
    Copy(CopyNest n, int s, int d) : nest(std::move(n)), src(s), dst(d) {}
    void run(uint8_t* const* slots) override { nest.run(slots[src], slots[dst]); }
  };
  p.addStep(std::make_unique<Copy>(
      CopyNest(byteSize(v.shape.elementType()), dims, src, rowMajorStrides(dims)), v.slot(),
      t.slot()));
  int64_t nr = 1, nc = 1;
  for (int64_t d : rows)
    nr *= v.shape.dim(d);
  for (int64_t d : cols)
    nc *= v.shape.dim(d);
  return {t.slot(), nr * nc, nc, 1};
}

class DotStep final : public Step {
 public:
  struct Config {
    P acc, lhs_type, rhs_type, out_type;
    OperandView lhs, rhs;  // lhs: rows = M, cols = K; rhs: rows = K, cols = N
    int64_t batch, m, n, k;
    int out;
  };
  explicit DotStep(Config c) : c_(c) {
    if (!storesDirectly(c_.acc, c_.out_type)) store_ = kernels::convertKernel(c_.acc, c_.out_type);
  }
  void allocate() override {
    ws_ = GemmWorkspace(c_.acc, c_.m, c_.n, c_.k, c_.lhs_type, c_.rhs_type);
    if (store_) scratch_ = AlignedBytes(static_cast<size_t>(c_.m * c_.n * byteSize(c_.acc)));
  }
  size_t workspaceBytes() const override { return ws_.bytes() + scratch_.size(); }
  void run(uint8_t* const* slots) override {
    int le = byteSize(c_.lhs_type), re = byteSize(c_.rhs_type), oe = byteSize(c_.out_type);
    for (int64_t b = 0; b < c_.batch; ++b) {
      MatrixView a{slots[c_.lhs.slot] + b * c_.lhs.batch_stride * le, c_.lhs_type,
                   c_.lhs.row_stride, c_.lhs.col_stride};
      MatrixView w{slots[c_.rhs.slot] + b * c_.rhs.batch_stride * re, c_.rhs_type,
                   c_.rhs.row_stride, c_.rhs.col_stride};
      uint8_t* out = slots[c_.out] + b * c_.m * c_.n * oe;
      void* c = store_ ? scratch_.data() : out;
      kernels::gemm(c_.acc, a, w, c_.m, c_.n, c_.k, c, c_.n, ws_);
      if (store_) store_(c, out, c_.m * c_.n);
    }
  }

 private:
  Config c_;
  kernels::UnaryFn store_ = nullptr;
  GemmWorkspace ws_;
  AlignedBytes scratch_;
};

// Validates a list of dimension numbers: in range and not used by another list.
void claimDims(const Planner& p, const HloInstruction& inst, const std::vector<int64_t>& dims,
               std::vector<bool>& used, const char* what) {
  for (int64_t d : dims) {
    if (d < 0 || d >= static_cast<int64_t>(used.size()) || used[static_cast<size_t>(d)]) {
      p.fail(inst,
             std::string(what) + "=" + dimsText(dims) + " names an invalid or repeated dimension");
    }
    used[static_cast<size_t>(d)] = true;
  }
}

}  // namespace

Value compileDot(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.size() != 2) p.fail(inst, "expects 2 operands, got " + std::to_string(ops.size()));
  const Value &l = ops[0], &r = ops[1];
  requireEvaluableArray(p, inst, l.shape, "lhs");
  requireEvaluableArray(p, inst, r.shape, "rhs");
  requireEvaluableArray(p, inst, inst.shape(), "result");
  DotDims dd = inst.attrs().dot_dims.value_or(DotDims{});
  if (dd.lhs_batch.size() != dd.rhs_batch.size() ||
      dd.lhs_contracting.size() != dd.rhs_contracting.size()) {
    p.fail(inst, "lhs and rhs need the same number of batch and of contracting dimensions");
  }
  std::vector<bool> lused(static_cast<size_t>(l.shape.rank()), false);
  std::vector<bool> rused(static_cast<size_t>(r.shape.rank()), false);
  claimDims(p, inst, dd.lhs_batch, lused, "lhs_batch_dims");
  claimDims(p, inst, dd.lhs_contracting, lused, "lhs_contracting_dims");
  claimDims(p, inst, dd.rhs_batch, rused, "rhs_batch_dims");
  claimDims(p, inst, dd.rhs_contracting, rused, "rhs_contracting_dims");
  std::vector<int64_t> out_dims, lfree, rfree;
  int64_t batch = 1, m = 1, n = 1, k = 1;
  for (size_t i = 0; i < dd.lhs_batch.size(); ++i) {
    int64_t ln = l.shape.dim(dd.lhs_batch[i]), rn = r.shape.dim(dd.rhs_batch[i]);
    if (ln != rn)
      p.fail(inst,
             "batch dimension sizes differ: " + std::to_string(ln) + " vs " + std::to_string(rn));
    out_dims.push_back(ln);
    batch *= ln;
  }
  for (size_t i = 0; i < dd.lhs_contracting.size(); ++i) {
    int64_t ln = l.shape.dim(dd.lhs_contracting[i]), rn = r.shape.dim(dd.rhs_contracting[i]);
    if (ln != rn) {
      p.fail(inst, "contracting dimension sizes differ: " + std::to_string(ln) + " vs " +
                       std::to_string(rn));
    }
    k *= ln;
  }
  for (int64_t d = 0; d < l.shape.rank(); ++d) {
    if (!lused[static_cast<size_t>(d)]) {
      lfree.push_back(d);
      out_dims.push_back(l.shape.dim(d));
      m *= l.shape.dim(d);
    }
  }
  for (int64_t d = 0; d < r.shape.rank(); ++d) {
    if (!rused[static_cast<size_t>(d)]) {
      rfree.push_back(d);
      out_dims.push_back(r.shape.dim(d));
      n *= r.shape.dim(d);
    }
  }
  P out_type = inst.shape().elementType();
  requireResultShape(p, inst, Shape(out_type, out_dims));
  P acc = accumulationType(p, inst, l.shape.elementType(), r.shape.elementType(), out_type);
  DotStep::Config c;
  c.acc = acc;
  c.lhs_type = l.shape.elementType();
  c.rhs_type = r.shape.elementType();
  c.out_type = out_type;
  c.lhs = viewOperand(p, l, dd.lhs_batch, lfree, dd.lhs_contracting);
  c.rhs = viewOperand(p, r, dd.rhs_batch, dd.rhs_contracting, rfree);
  c.batch = batch;
  c.m = m;
  c.n = n;
  c.k = k;
  Value out = p.newTemp(inst.shape());
  c.out = out.slot();
  p.addStep(std::make_unique<DotStep>(c));
  return out;
}

// ---- Convolution -------------------------------------------------------------------------------

namespace {

struct ConvGeometry {
  int64_t spatial = 0;                     // number of spatial dimensions S
  std::vector<int64_t> in_size, out_size;  // per spatial dim
  std::vector<WindowDim> window;
  int64_t window_count = 1;                   // W = product of window sizes
  int64_t groups = 1, cin_g = 0, cout_g = 0;  // G, input features and output features per group
  bool batch_groups = false;
  int64_t out_batch = 0, in_batch = 0, in_features = 0;
  // Element strides of the operands and result.
  std::vector<int64_t> in_sp_stride, k_sp_stride, out_sp_stride;
  int64_t in_b_stride = 0, in_f_stride = 0, k_i_stride = 0, k_o_stride = 0;
  int64_t out_b_stride = 0, out_f_stride = 0;
};

// A set of output positions that share the same valid window taps (see ConvStep).
struct TapClass {
  std::vector<int64_t> taps;       // window positions (row-major index), in window order
  std::vector<int64_t> positions;  // output spatial positions (row-major index)
};

// Convolution as GEMMs over im2col rows. Per group: the kernel is repacked into a
// [window*Cin_g, Cout_g] matrix (reversal applied); a chunk of output rows (batch, position) is
// expanded into im2col rows (window tap, input feature), padding and dilation holes as zeros;
// the GEMM sums each output's products in that K order; results are converted and stored at
// their place in the output layout.
//
// With lhs dilation most taps of an output fall into holes. Their products are zeros that never
// change a sum that starts at +0 (x + +-0 == x, and the sum is never -0) unless the kernel holds
// inf or NaN, so when the repacked kernel is finite, outputs are grouped by the taps that can
// land on data (a function of position modulo the dilation) and only those taps are expanded:
// the same sums, computed without the holes.
class ConvStep final : public Step {
 public:
  ConvStep(ConvGeometry g, P acc, P in_type, P k_type, P out_type, int in, int kernel, int out)
      : g_(std::move(g)),
        acc_(acc),
        in_type_(in_type),
        k_type_(k_type),
        out_type_(out_type),
        in_(in),
        kernel_(kernel),
        out_(out) {
    kdim_ = g_.window_count * g_.cin_g;
    positions_ = 1;
    for (int64_t s : g_.out_size)
      positions_ *= s;
    int64_t row_bytes = std::max<int64_t>(kdim_ * byteSize(in_type_), 1);
    chunk_ = std::clamp<int64_t>((int64_t{1} << 20) / row_bytes, 16, 4096);
    chunk_ = std::min(chunk_, std::max<int64_t>(positions_ * g_.out_batch, 1));
    store_ = kernels::convertKernel(acc_, out_type_);
    buildKernelRepack();
    buildInputRepack();
    buildTapClasses();
  }

  void allocate() override {
    ws_ = GemmWorkspace(acc_, chunk_, g_.cout_g, kdim_);
    int ke = byteSize(k_type_);
    kmat_ = AlignedBytes(static_cast<size_t>(kdim_ * g_.cout_g * ke));
    if (!classes_.empty()) kclass_ = AlignedBytes(static_cast<size_t>(kdim_ * g_.cout_g * ke));
    cols_ = AlignedBytes(static_cast<size_t>(chunk_ * kdim_ * byteSize(in_type_)));
    acc_buf_ = AlignedBytes(static_cast<size_t>(chunk_ * g_.cout_g * byteSize(acc_)));
    if (input_nest_)
      input_copy_ = AlignedBytes(static_cast<size_t>(input_elems_ * byteSize(in_type_)));
    out_row_.assign(static_cast<size_t>(chunk_), 0);
  }
  size_t workspaceBytes() const override {
    return ws_.bytes() + kmat_.size() + kclass_.size() + cols_.size() + acc_buf_.size() +
           input_copy_.size();
  }

  void run(uint8_t* const* slots) override {
    const uint8_t* input = slots[in_];
    if (input_nest_) {
      input_nest_->run(input, input_copy_.data());
      input = input_copy_.data();
    }
    int ke = byteSize(k_type_);
    for (int64_t grp = 0; grp < g_.groups; ++grp) {
      kernel_nest_.run(slots[kernel_] + (kernel_base_ + grp * g_.cout_g * g_.k_o_stride) * ke,
                       kmat_.data());
      if (!classes_.empty() && kernelFinite()) {
        for (const TapClass& c : classes_)
          runClass(input, slots[out_], grp, c.taps, &c.positions, gatherKernel(c.taps));
      } else {
        runClass(input, slots[out_], grp, all_taps_, nullptr, kmat_.data());
      }
    }
  }

 private:
  // Kernel repack: dims [spatial..., Cin_g, Cout_g] of one group, reversed where requested.
  void buildKernelRepack() {
    std::vector<int64_t> dims, src;
    for (int64_t d = 0; d < g_.spatial; ++d) {
      const WindowDim& w = g_.window[static_cast<size_t>(d)];
      int64_t st = g_.k_sp_stride[static_cast<size_t>(d)];
      dims.push_back(w.size);
      src.push_back(w.reversal ? -st : st);
      if (w.reversal) kernel_base_ += (w.size - 1) * st;
    }
    dims.push_back(g_.cin_g);
    src.push_back(g_.k_i_stride);
    dims.push_back(g_.cout_g);
    src.push_back(g_.k_o_stride);
    kernel_nest_ = CopyNest(byteSize(k_type_), dims, src, rowMajorStrides(dims));
  }

  // When features are not the input's innermost dimension, im2col would gather them one by one:
  // copy the input once per run into [batch, spatial..., feature] order instead.
  void buildInputRepack() {
    if (g_.in_f_stride == 1 || g_.cin_g == 1) return;
    std::vector<int64_t> dims = {g_.in_batch}, src = {g_.in_b_stride};
    for (int64_t d = 0; d < g_.spatial; ++d) {
      dims.push_back(g_.in_size[static_cast<size_t>(d)]);
      src.push_back(g_.in_sp_stride[static_cast<size_t>(d)]);
    }
    dims.push_back(g_.in_features);
    src.push_back(g_.in_f_stride);
    std::vector<int64_t> dst = rowMajorStrides(dims);
    input_nest_.emplace(byteSize(in_type_), dims, src, dst);
    input_elems_ = 1;
    for (int64_t d : dims)
      input_elems_ *= d;
    g_.in_b_stride = dst[0];
    for (size_t d = 0; d < g_.in_sp_stride.size(); ++d)
      g_.in_sp_stride[d] = dst[d + 1];
    g_.in_f_stride = 1;
  }

  // Window positions in row-major order; with lhs dilation, the tap classes.
  void buildTapClasses() {
    auto S = static_cast<size_t>(g_.spatial);
    std::vector<int64_t> pos(S, 0);
    for (int64_t w = 0; w < g_.window_count; ++w) {
      window_pos_.insert(window_pos_.end(), pos.begin(), pos.end());
      all_taps_.push_back(w);
      for (size_t d = S; d-- > 0;) {
        if (++pos[d] < g_.window[d].size) break;
        pos[d] = 0;
      }
    }
    bool dilated = false;
    for (const WindowDim& w : g_.window)
      dilated |= w.lhs_dilation > 1;
    if (!dilated || positions_ == 0) return;
    // Taps of output position o that may land on data: (o*stride + w*rhs_dil - pad_lo) is a
    // multiple of lhs_dil. Positions with equal tap sets form a class.
    std::map<std::vector<int64_t>, size_t> index;
    std::vector<int64_t> o(S, 0);
    for (int64_t p = 0; p < positions_; ++p) {
      std::vector<int64_t> taps;
      for (int64_t w = 0; w < g_.window_count; ++w) {
        bool ok = true;
        for (size_t d = 0; d < S && ok; ++d) {
          const WindowDim& wd = g_.window[d];
          int64_t x = o[d] * wd.stride +
                      window_pos_[static_cast<size_t>(w) * S + d] * wd.rhs_dilation - wd.pad_lo;
          ok = ((x % wd.lhs_dilation) + wd.lhs_dilation) % wd.lhs_dilation == 0;
        }
        if (ok) taps.push_back(w);
      }
      auto [it, fresh] = index.emplace(taps, classes_.size());
      if (fresh) classes_.push_back({std::move(taps), {}});
      classes_[it->second].positions.push_back(p);
      for (size_t d = S; d-- > 0;) {
        if (++o[d] < g_.out_size[d]) break;
        o[d] = 0;
      }
    }
  }

  bool kernelFinite() const {
    if (!isFloat(k_type_)) return true;
    return dispatchEvaluable(k_type_, [&]<P kT>() {
      if constexpr (kernels::kIsFloat<kT>) {
        const auto* k = reinterpret_cast<const kernels::Native<kT>*>(kmat_.data());
        for (int64_t i = 0; i < kdim_ * g_.cout_g; ++i) {
          if (!std::isfinite(kernels::load<kT>(k[i]))) return false;
        }
      }
      return true;
    });
  }

  // The rows of the kernel matrix for the given taps.
  const uint8_t* gatherKernel(const std::vector<int64_t>& taps) {
    size_t row = static_cast<size_t>(g_.cin_g * g_.cout_g * byteSize(k_type_));
    for (size_t t = 0; t < taps.size(); ++t) {
      std::memcpy(kclass_.data() + t * row, kmat_.data() + static_cast<size_t>(taps[t]) * row, row);
    }
    return kclass_.data();
  }

  // GEMMs over the output rows (batch x positions, or all rows if positions is null) using taps.
  void runClass(const uint8_t* input, uint8_t* output, int64_t grp,
                const std::vector<int64_t>& taps, const std::vector<int64_t>* positions,
                const uint8_t* kernel) {
    int64_t np = positions ? static_cast<int64_t>(positions->size()) : positions_;
    int64_t rows_total = np * g_.out_batch, kdim = static_cast<int64_t>(taps.size()) * g_.cin_g;
    if (rows_total == 0) return;
    MatrixView b{kernel, k_type_, g_.cout_g, 1};
    for (int64_t r0 = 0; r0 < rows_total; r0 += chunk_) {
      int64_t rows = std::min(chunk_, rows_total - r0);
      for (int64_t r = 0; r < rows; ++r) {
        int64_t row = r0 + r, nb = row / np, p = row % np;
        fillRow(input, grp, nb, positions ? (*positions)[static_cast<size_t>(p)] : p, taps, r);
      }
      MatrixView a{cols_.data(), in_type_, kdim, 1};
      kernels::gemm(acc_, a, b, rows, g_.cout_g, kdim, acc_buf_.data(), g_.cout_g, ws_);
      storeRows(output, grp, rows);
    }
  }

  // im2col row r of the chunk: output batch nb at spatial position p (row-major), the given taps.
  void fillRow(const uint8_t* input, int64_t grp, int64_t nb, int64_t p,
               const std::vector<int64_t>& taps, int64_t r) {
    int ie = byteSize(in_type_);
    auto S = static_cast<size_t>(g_.spatial);
    int64_t o[64];
    int64_t out_off = nb * g_.out_b_stride;
    for (size_t d = S; d-- > 0;) {
      o[d] = p % g_.out_size[d];
      p /= g_.out_size[d];
      out_off += o[d] * g_.out_sp_stride[d];
    }
    out_row_[static_cast<size_t>(r)] = out_off;
    int64_t in_feature0 = g_.batch_groups ? 0 : grp * g_.cin_g;
    int64_t batch0 = g_.batch_groups ? grp * g_.out_batch : 0;
    const uint8_t* base =
        input + ((batch0 + nb) * g_.in_b_stride + in_feature0 * g_.in_f_stride) * ie;
    uint8_t* dst = cols_.data() + r * static_cast<int64_t>(taps.size()) * g_.cin_g * ie;
    for (size_t t = 0; t < taps.size(); ++t) {
      const int64_t* wp = window_pos_.data() + taps[t] * g_.spatial;
      int64_t off = 0;
      bool valid = true;
      for (size_t d = 0; d < S && valid; ++d) {
        const WindowDim& wd = g_.window[d];
        int64_t pos = o[d] * wd.stride + wp[d] * wd.rhs_dilation - wd.pad_lo;
        valid = pos >= 0 && pos % wd.lhs_dilation == 0 && pos / wd.lhs_dilation < g_.in_size[d];
        off += valid ? (pos / wd.lhs_dilation) * g_.in_sp_stride[d] : 0;
      }
      uint8_t* cell = dst + static_cast<int64_t>(t) * g_.cin_g * ie;
      if (!valid) {
        std::memset(cell, 0, static_cast<size_t>(g_.cin_g * ie));
      } else if (g_.in_f_stride == 1) {
        std::memcpy(cell, base + off * ie, static_cast<size_t>(g_.cin_g * ie));
      } else {
        for (int64_t f = 0; f < g_.cin_g; ++f) {
          std::memcpy(cell + f * ie, base + (off + f * g_.in_f_stride) * ie,
                      static_cast<size_t>(ie));
        }
      }
    }
  }

  void storeRows(uint8_t* output, int64_t grp, int64_t rows) {
    int oe = byteSize(out_type_), ae = byteSize(acc_);
    int64_t f0 = grp * g_.cout_g;
    for (int64_t r = 0; r < rows; ++r) {
      const uint8_t* src = acc_buf_.data() + r * g_.cout_g * ae;
      uint8_t* dst = output + (out_row_[static_cast<size_t>(r)] + f0 * g_.out_f_stride) * oe;
      if (g_.out_f_stride == 1) {
        store_(src, dst, g_.cout_g);
      } else {
        for (int64_t f = 0; f < g_.cout_g; ++f)
          store_(src + f * ae, dst + f * g_.out_f_stride * oe, 1);
      }
    }
  }

  ConvGeometry g_;
  P acc_, in_type_, k_type_, out_type_;
  int in_, kernel_, out_;
  int64_t kdim_ = 0, positions_ = 0, chunk_ = 1, kernel_base_ = 0, input_elems_ = 0;
  kernels::UnaryFn store_ = nullptr;
  CopyNest kernel_nest_;
  std::optional<CopyNest> input_nest_;
  std::vector<int64_t> window_pos_, all_taps_, out_row_;
  std::vector<TapClass> classes_;
  GemmWorkspace ws_;
  AlignedBytes kmat_, kclass_, cols_, acc_buf_, input_copy_;
};

bool isPermutationOf(std::vector<int64_t> dims, int64_t rank) {
  std::sort(dims.begin(), dims.end());
  for (int64_t i = 0; i < rank; ++i) {
    if (static_cast<size_t>(i) >= dims.size() || dims[static_cast<size_t>(i)] != i) return false;
  }
  return static_cast<int64_t>(dims.size()) == rank;
}

}  // namespace

Value compileConvolution(Planner& p, const HloInstruction& inst, std::span<const Value> ops) {
  if (ops.size() != 2) p.fail(inst, "expects 2 operands, got " + std::to_string(ops.size()));
  const Value &in = ops[0], &ker = ops[1];
  requireEvaluableArray(p, inst, in.shape, "input");
  requireEvaluableArray(p, inst, ker.shape, "kernel");
  requireEvaluableArray(p, inst, inst.shape(), "result");
  if (!inst.attrs().conv_dims) p.fail(inst, "missing dim_labels=");
  const ConvDims& cd = *inst.attrs().conv_dims;
  const Shape &is = in.shape, &ks = ker.shape, &os = inst.shape();
  ConvGeometry g;
  g.spatial = static_cast<int64_t>(cd.input_spatial.size());
  auto S = static_cast<size_t>(g.spatial);
  std::vector<int64_t> idims = {cd.input_batch, cd.input_feature};
  std::vector<int64_t> kdims = {cd.kernel_input_feature, cd.kernel_output_feature};
  std::vector<int64_t> odims = {cd.output_batch, cd.output_feature};
  idims.insert(idims.end(), cd.input_spatial.begin(), cd.input_spatial.end());
  kdims.insert(kdims.end(), cd.kernel_spatial.begin(), cd.kernel_spatial.end());
  odims.insert(odims.end(), cd.output_spatial.begin(), cd.output_spatial.end());
  if (cd.kernel_spatial.size() != S || cd.output_spatial.size() != S ||
      !isPermutationOf(idims, is.rank()) || !isPermutationOf(kdims, ks.rank()) ||
      os.rank() != is.rank() || !isPermutationOf(odims, os.rank())) {
    p.fail(inst, "dim_labels do not match the ranks of input " + is.shortStr() + ", kernel " +
                     ks.shortStr() + " and result " + os.shortStr());
  }
  if (inst.attrs().window) {
    g.window = *inst.attrs().window;
  } else {
    for (int64_t d : cd.kernel_spatial)
      g.window.push_back(WindowDim{ks.dim(d), 1, 0, 0, 1, 1, false});
  }
  if (g.window.size() != S) p.fail(inst, "window= needs one entry per spatial dimension");
  int64_t fgc = inst.attrs().feature_group_count.value_or(1);
  int64_t bgc = inst.attrs().batch_group_count.value_or(1);
  int64_t in_batch = is.dim(cd.input_batch), in_feat = is.dim(cd.input_feature);
  int64_t k_in = ks.dim(cd.kernel_input_feature), k_out = ks.dim(cd.kernel_output_feature);
  if (fgc < 1 || bgc < 1 || (fgc > 1 && bgc > 1)) {
    p.fail(inst, "feature_group_count and batch_group_count must be >= 1, and not both > 1");
  }
  if (in_feat != k_in * fgc || k_out % fgc != 0) {
    p.fail(inst, "input features (" + std::to_string(in_feat) +
                     ") must equal kernel input features (" + std::to_string(k_in) +
                     ") x feature_group_count, and kernel output features (" +
                     std::to_string(k_out) + ") must divide into the groups");
  }
  if (bgc > 1 && (in_batch % bgc != 0 || k_out % bgc != 0 || k_in != in_feat)) {
    p.fail(inst, "batch_group_count=" + std::to_string(bgc) + " must divide the input batch (" +
                     std::to_string(in_batch) + ") and the kernel output features (" +
                     std::to_string(k_out) + ")");
  }
  g.groups = std::max(fgc, bgc);
  g.batch_groups = bgc > 1;
  g.cin_g = k_in;
  g.cout_g = k_out / g.groups;
  g.out_batch = in_batch / bgc;
  g.in_batch = in_batch;
  g.in_features = in_feat;
  std::vector<int64_t> out_dims(static_cast<size_t>(os.rank()));
  out_dims[static_cast<size_t>(cd.output_batch)] = g.out_batch;
  out_dims[static_cast<size_t>(cd.output_feature)] = k_out;
  for (size_t d = 0; d < S; ++d) {
    const WindowDim& w = g.window[d];
    int64_t n = is.dim(cd.input_spatial[d]);
    if (w.size != ks.dim(cd.kernel_spatial[d]) || w.stride < 1 || w.lhs_dilation < 1 ||
        w.rhs_dilation < 1) {
      p.fail(inst,
             "window dimension " + std::to_string(d) + " is invalid for kernel " + ks.shortStr());
    }
    int64_t dilated = n == 0 ? 0 : (n - 1) * w.lhs_dilation + 1;
    int64_t padded = dilated + w.pad_lo + w.pad_hi;
    int64_t span = w.size == 0 ? 0 : (w.size - 1) * w.rhs_dilation + 1;
    int64_t out = padded < span ? 0 : (padded - span) / w.stride + 1;
    out_dims[static_cast<size_t>(cd.output_spatial[d])] = out;
    g.in_size.push_back(n);
    g.out_size.push_back(out);
    g.window_count *= w.size;
  }
  P out_type = os.elementType();
  requireResultShape(p, inst, Shape(out_type, out_dims));
  P acc = accumulationType(p, inst, is.elementType(), ks.elementType(), out_type);
  std::vector<int64_t> ist = stridesOf(is), kst = stridesOf(ks), ost = stridesOf(os);
  for (size_t d = 0; d < S; ++d) {
    g.in_sp_stride.push_back(ist[static_cast<size_t>(cd.input_spatial[d])]);
    g.k_sp_stride.push_back(kst[static_cast<size_t>(cd.kernel_spatial[d])]);
    g.out_sp_stride.push_back(ost[static_cast<size_t>(cd.output_spatial[d])]);
  }
  g.in_b_stride = ist[static_cast<size_t>(cd.input_batch)];
  g.in_f_stride = ist[static_cast<size_t>(cd.input_feature)];
  g.k_i_stride = kst[static_cast<size_t>(cd.kernel_input_feature)];
  g.k_o_stride = kst[static_cast<size_t>(cd.kernel_output_feature)];
  g.out_b_stride = ost[static_cast<size_t>(cd.output_batch)];
  g.out_f_stride = ost[static_cast<size_t>(cd.output_feature)];
  Value out = p.newTemp(os);
  if (os.elementCount() == 0) return out;
  if (g.window_count == 0 || g.cin_g == 0) {
    // Empty contraction: every output is +0 (fill from a zero constant).
    AlignedBytes zero(static_cast<size_t>(byteSize(out_type)));
    Value z = p.newConstantOwned(Shape(out_type, {}), std::move(zero));
    struct Fill final : Step {
      int v, dst, elem;
      int64_t n;
      Fill(int a, int b, int c, int64_t d) : v(a), dst(b), elem(c), n(d) {}
      void run(uint8_t* const* slots) override {
        kernels::fillElements(slots[dst], n, elem, slots[v]);
      }
    };
    p.addStep(std::make_unique<Fill>(z.slot(), out.slot(), byteSize(out_type), os.elementCount()));
    return out;
  }
  p.addStep(std::make_unique<ConvStep>(std::move(g), acc, is.elementType(), ks.elementType(),
                                       out_type, in.slot(), ker.slot(), out.slot()));
  return out;
}

}  // namespace tacit::hlo::detail
