#include "isel/kernel.h"

#include <algorithm>
#include <map>
#include <numeric>

#include "hlo/builder.h"
#include "hlo_eval/evaluator.h"
#include "support/diagnostic.h"
#include "support/strings.h"

namespace tacit::isel {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// Logical -> physical byte order of a layout: transpose to major-to-minor order, then split the
// tiled dims into (outer, tile) and move the tile parts minor.
struct LayoutPlan {
  std::vector<int64_t> to_physical;  // transpose permutation (empty: identity)
  std::vector<int64_t> physical_dims;
  std::vector<int64_t> split_dims;  // reshape of the physical tensor (empty: no tiling)
  std::vector<int64_t> tile_perm;   // transpose after the split
};

bool isIdentity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

std::vector<int64_t> inverse(const std::vector<int64_t>& perm) {
  std::vector<int64_t> inv(perm.size());
  for (size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<size_t>(perm[i])] = static_cast<int64_t>(i);
  return inv;
}

LayoutPlan planLayout(const hlo::Shape& s, const std::string& file, SourceLoc loc) {
  LayoutPlan plan;
  int64_t n = s.rank();
  std::vector<int64_t> m2m = s.minorToMajor();
  std::vector<int64_t> major_to_minor(m2m.rbegin(), m2m.rend());
  for (int64_t d : major_to_minor)
    plan.physical_dims.push_back(s.dim(d));
  if (!isIdentity(major_to_minor)) plan.to_physical = major_to_minor;
  if (!s.layout() || s.layout()->tiles.empty()) return plan;
  const hlo::Layout& layout = *s.layout();
  if (layout.tiles.size() > 1) {
    fail(file, loc, "layout " + s.str() + " has nested tilings, which tacit does not model",
         "use a single tiling T(...)");
  }
  const std::vector<int64_t>& tile = layout.tiles[0].dims;
  int64_t k = static_cast<int64_t>(tile.size());
  if (k > n) fail(file, loc, "tiling of " + s.str() + " has more dimensions than the shape");
  std::vector<int64_t> outer_pos, inner_pos;
  for (int64_t i = 0; i < n - k; ++i) {
    plan.split_dims.push_back(plan.physical_dims[static_cast<size_t>(i)]);
    plan.tile_perm.push_back(i);
  }
  for (int64_t j = 0; j < k; ++j) {
    int64_t d = plan.physical_dims[static_cast<size_t>(n - k + j)];
    int64_t t = tile[static_cast<size_t>(j)];
    if (t <= 0 || d % t != 0) {
      fail(file, loc,
           "layout " + s.str() + ": dimension of size " + std::to_string(d) +
               " is not a multiple of its tile " + (t < 0 ? std::string("*") : std::to_string(t)),
           "tacit models tiled layouts without partial tiles");
    }
    outer_pos.push_back(static_cast<int64_t>(plan.split_dims.size()));
    plan.split_dims.push_back(d / t);
    inner_pos.push_back(static_cast<int64_t>(plan.split_dims.size()));
    plan.split_dims.push_back(t);
  }
  for (int64_t p : outer_pos)
    plan.tile_perm.push_back(p);
  for (int64_t p : inner_pos)
    plan.tile_perm.push_back(p);
  return plan;
}

// The value in its physical order: the tensor whose row-major bytes are the layout's.
ClassId toPhysical(IrBuilder& b, ClassId value, const LayoutPlan& plan) {
  ClassId x = value;
  if (!plan.to_physical.empty()) x = b.transpose(x, plan.to_physical);
  if (!plan.split_dims.empty()) {
    x = b.reshape(x, plan.split_dims);
    if (!isIdentity(plan.tile_perm)) x = b.transpose(x, plan.tile_perm);
  }
  return x;
}

// Where element `index` of a tensor laid out by `plan` is in its physical tensor (tiled
// dimensions split into tile and position in the tile, then ordered by tile_perm).
std::vector<int64_t> physicalIndex(const LayoutPlan& plan, const std::vector<int64_t>& index) {
  std::vector<int64_t> at;
  if (plan.to_physical.empty()) {
    at = index;
  } else {
    for (int64_t d : plan.to_physical)
      at.push_back(index[static_cast<size_t>(d)]);
  }
  if (plan.split_dims.empty()) return at;
  const size_t k = plan.split_dims.size() - at.size();  // the tiled dims, the last k
  std::vector<int64_t> split(at.begin(), at.end() - static_cast<std::ptrdiff_t>(k));
  for (size_t j = 0; j < k; ++j) {
    const int64_t tile = plan.split_dims[split.size() + 1];
    const int64_t x = at[at.size() - k + j];
    split.push_back(x / tile);
    split.push_back(x % tile);
  }
  std::vector<int64_t> out;
  for (int64_t p : plan.tile_perm)
    out.push_back(split[static_cast<size_t>(p)]);
  return out;
}

const ResultWindow* windowOf(const ImportOptions& options, size_t result) {
  if (result >= options.windows.size() || !options.windows[result]) return nullptr;
  return &*options.windows[result];
}

std::optional<Residence> residence(const std::vector<std::optional<Residence>>& list, size_t i) {
  return i < list.size() ? list[i] : std::nullopt;
}

class Importer {
 public:
  Importer(const hlo::HloModule& m, IrBuilder& b, const ImportOptions& options)
      : module_(m), b_(b), options_(options), file_(m.sourceFile()) {}

  ImportedKernel run() {
    const HloComputation* entry = module_.entry();
    if (entry == nullptr) fail(file_, {}, "module has no entry computation");
    std::vector<hlo::Shape> parameter_shapes = entryParameterShapes(module_);
    std::vector<ClassId> bytes, args;
    for (int64_t i = 0; i < entry->parameterCount(); ++i) {
      const HloInstruction* p = entry->parameter(i);
      const hlo::Shape& shape = parameter_shapes[static_cast<size_t>(i)];
      checkArray(shape, p);
      if (auto r = residence(options_.resident_parameters, static_cast<size_t>(i))) {
        // The value itself, in its buffer (its row form): no HBM bytes.
        hlo::Shape type = r->held ? *r->held : hlo::Shape(shape.elementType(), shape.dims());
        bytes.push_back(b_.egraph().add(
            b_.ir().inputOp(), b_.ir().encode(InputDesc{static_cast<int>(i), 0, r->buffer, type})));
        args.push_back(r->held ? fromHeld(bytes.back(), shape) : bytes.back());
        continue;
      }
      bytes.push_back(
          b_.egraph().add(b_.ir().inputOp(),
                          b_.ir().encode(InputDesc{static_cast<int>(i), shape.byteSize(), 0, {}})));
      args.push_back(unflattenWithLayout(b_, bytes.back(), shape, file_, p->loc()));
    }
    Values root = importComputation(*entry, args);
    std::vector<hlo::Shape> result_shapes = entryResultShapes(module_);
    if (result_shapes.size() != root.size())
      fail(file_, entry->root()->loc(), "entry result does not match its layout");
    for (const hlo::Shape& shape : result_shapes)
      checkArray(shape, entry->root());
    // Every shape is an array now: the HBM layout, then its classes.
    ImportedKernel out = hbmLayout(module_, options_);
    out.origins = std::move(origins_);
    for (size_t i = 0; i < args.size(); ++i) {
      out.parameters[i].bytes_class = bytes[i];
      out.parameters[i].value_class = args[i];
    }
    for (size_t i = 0; i < root.size(); ++i) {
      KernelResult& r = out.results[i];
      r.value_class = root[i];
      if (const ResultWindow* w = windowOf(options_, i)) {
        r.windowed = true;
        if (!r.resident && !r.shape.hasDefaultLayout()) {
          // A window of a laid-out tensor is a box of its physical tensor when it is whole
          // tiles of the layout (then each of its tiles is the tiles' bytes, in the region's
          // order): the window and the kept elements around it are built in physical order.
          r.window_class = physicalWindow(root[i], result_shapes[i], r.shape, *w);
          r.value_class = surround(r.window_class, physicalRegion(r.shape, *w), 0);
          r.bytes_class = b_.flatten(r.value_class);
          continue;
        }
        r.window_class = root[i];
        r.value_class = surround(root[i], *w, 0);
      }
      r.bytes_class =
          r.resident ? (r.resident->held ? toHeld(r.value_class, *r.resident->held) : r.value_class)
                     : flattenWithLayout(b_, r.value_class, r.shape, file_, entry->root()->loc());
    }
    return out;
  }

 private:
  using Values = std::vector<ClassId>;  // one class per array; several for a tuple

  // A value held as raw bytes of a buffer's element type (Residence::held) and back: each
  // element's bytes in order (little-endian) along the last dimension, then the buffer's dims.
  ClassId fromHeld(ClassId held, const hlo::Shape& value) {
    const hlo::PrimitiveType from = b_.shape(held).elementType();
    std::vector<int64_t> lanes = value.dims();
    const int64_t ratio = hlo::byteSize(value.elementType()) / hlo::byteSize(from);
    if (ratio > 1) lanes.push_back(ratio);
    ClassId x = b_.reshape(held, lanes);
    if (from == value.elementType()) return x;
    return b_.bitcastConvert(x, hlo::Shape(value.elementType(), value.dims()));
  }
  ClassId toHeld(ClassId value, const hlo::Shape& held) {
    const hlo::Shape shape = b_.shape(value);
    std::vector<int64_t> lanes = shape.dims();
    const int64_t ratio = hlo::byteSize(shape.elementType()) / hlo::byteSize(held.elementType());
    if (ratio > 1) lanes.push_back(ratio);
    ClassId x = value;
    if (held.elementType() != shape.elementType())
      x = b_.bitcastConvert(value, hlo::Shape(held.elementType(), lanes));
    return b_.reshape(x, held.dims());
  }

  // The window of a laid-out region in physical order; it must be whole tiles of the layout.
  ClassId physicalWindow(ClassId window, const hlo::Shape& window_shape, const hlo::Shape& region,
                         const ResultWindow& w) {
    const HloInstruction* root = module_.entry()->root();
    if (region.layout() && !region.layout()->tiles.empty()) {
      const std::vector<int64_t>& tile = region.layout()->tiles[0].dims;
      const std::vector<int64_t> m2m = region.minorToMajor();
      for (size_t j = 0; j < tile.size() && j < m2m.size(); ++j) {
        // The j-th tiled dimension from the minor end is the layout's j-th most minor one.
        const auto d = static_cast<size_t>(m2m[tile.size() - 1 - j]);
        const int64_t t = tile[j];
        if (t <= 0 || w.starts[d] % t != 0 || window_shape.dim(static_cast<int64_t>(d)) % t != 0)
          fail(file_, root->loc(),
               "a window of " + region.str() + " at (" + join(w.starts, ", ") + ") of " +
                   window_shape.str() + " is not whole tiles of its layout",
               "tile sizes that are multiples of the layout's tiles");
      }
    }
    hlo::Shape laid(window_shape.elementType(), window_shape.dims());
    laid.setLayout(region.layout());
    return toPhysical(b_, window, planLayout(laid, file_, root->loc()));
  }
  // The region's physical dimensions and where the window starts in them.
  ResultWindow physicalRegion(const hlo::Shape& region, const ResultWindow& w) {
    const LayoutPlan plan = planLayout(region, file_, module_.entry()->root()->loc());
    return ResultWindow{physicalShape(region).dims(), physicalIndex(plan, w.starts)};
  }

  // The window `x` inside its region from dimension `d` on: along d, the kept elements before it
  // (IrLanguage::keptOp), the window, the kept elements after it; the inner dimensions first.
  ClassId surround(ClassId x, const ResultWindow& w, size_t d) {
    if (d == w.region.size()) return x;
    ClassId inner = surround(x, w, d + 1);
    hlo::Shape shape = b_.shape(inner);
    const int64_t before = w.starts[d],
                  after = w.region[d] - before - shape.dim(static_cast<int64_t>(d));
    if (before < 0 || after < 0) fail(file_, {}, "a result window lies outside its region");
    std::vector<ClassId> parts;
    auto undef = [&](int64_t extent) {
      std::vector<int64_t> dims = shape.dims();
      dims[d] = extent;
      parts.push_back(b_.kept(hlo::Shape(shape.elementType(), dims)));
    };
    if (before > 0) undef(before);
    parts.push_back(inner);
    if (after > 0) undef(after);
    return parts.size() == 1 ? inner : b_.concatenate(parts, static_cast<int64_t>(d));
  }

  void checkArray(const hlo::Shape& s, const HloInstruction* inst) const {
    if (!s.isArray()) {
      fail(file_, inst->loc(),
           "kernel inputs and results must be arrays; '" + inst->name() + "' is " + s.str(),
           "flatten tuple parameters into separate parameters");
    }
    if (!hlo::isEvaluable(s.elementType())) {
      fail(file_, inst->loc(),
           "element type " + std::string(hlo::primitiveTypeName(s.elementType())) + " of '" +
               inst->name() + "' is not supported by the compiler");
    }
    if (s.isDynamic())
      fail(file_, inst->loc(),
           "dynamic shape " + s.str() + " of '" + inst->name() + "' is not supported");
  }

  Values importComputation(const HloComputation& comp, const std::vector<ClassId>& args) {
    std::map<const HloInstruction*, Values> values;
    for (const auto& owned : comp.instructions()) {
      const HloInstruction* inst = owned.get();
      values[inst] = importInstruction(*inst, values, args);
      if (values[inst].size() == 1) origins_.push_back({values[inst][0], inst});
    }
    return values.at(comp.root());
  }

  Values importInstruction(const HloInstruction& inst,
                           std::map<const HloInstruction*, Values>& values,
                           const std::vector<ClassId>& args) {
    auto operand = [&](int64_t i) -> ClassId {
      const Values& v = values.at(inst.operand(i));
      if (v.size() != 1) unsupported(inst, "tuple-valued operands");
      return v[0];
    };
    switch (inst.opcode()) {
      case HloOpcode::kParameter:
        return {args.at(static_cast<size_t>(inst.parameterNumber()))};
      case HloOpcode::kTuple: {
        Values out;
        for (int64_t i = 0; i < inst.operandCount(); ++i)
          out.push_back(operand(i));
        return out;
      }
      case HloOpcode::kGetTupleElement: {
        const Values& t = values.at(inst.operand(0));
        int64_t index = inst.attrs().index.value_or(0);
        if (index < 0 || static_cast<size_t>(index) >= t.size())
          unsupported(inst, "this get-tuple-element");
        return {t[static_cast<size_t>(index)]};
      }
      case HloOpcode::kCall:
      case HloOpcode::kFusion: {
        const HloComputation* callee =
            inst.called(inst.opcode() == HloOpcode::kCall ? "to_apply" : "calls");
        if (callee == nullptr) unsupported(inst, "a call without its computation");
        Values call_args;
        for (int64_t i = 0; i < inst.operandCount(); ++i)
          call_args.push_back(operand(i));
        return importComputation(*callee, call_args);
      }
      case HloOpcode::kDynamicUpdateSlice:
        return {importConstantUpdate(inst, operand(0), operand(1))};
      default:
        break;
    }
    if (!iselSupports(inst.opcode()))
      unsupported(inst, "the opcode '" + inst.opcodeSpelling() + "'");
    if (!inst.shape().isArray() || !hlo::isEvaluable(inst.shape().elementType())) {
      unsupported(inst, "the result type " + inst.shape().str());
    }
    if (inst.shape().isDynamic()) unsupported(inst, "dynamic shapes");
    OpDesc d;
    d.opcode = inst.opcode();
    d.shape = inst.shape();
    d.shape.clearLayouts();
    copyTypedAttributes(inst, d);
    std::vector<ClassId> kids;
    for (int64_t i = 0; i < inst.operandCount(); ++i)
      kids.push_back(operand(i));
    try {
      return {b_.add(std::move(d), kids)};
    } catch (const std::logic_error& e) {
      fail(file_, inst.loc(), std::string("cannot model '") + inst.name() + "': " + e.what());
    }
  }

  // dynamic-update-slice at constant starts is the concatenation of the untouched slices of the
  // operand around the update, dimension by dimension (starts clamped into range as XLA does). A
  // start computed at run time has no static position, so there is nothing to select for it.
  ClassId importConstantUpdate(const HloInstruction& inst, ClassId x, ClassId update) {
    const hlo::Shape& xs = inst.operand(0)->shape();
    const hlo::Shape& us = inst.operand(1)->shape();
    std::vector<int64_t> starts;
    for (int64_t d = 0; d < xs.rank(); ++d) {
      const HloInstruction* s = inst.operand(2 + d);
      if (s->opcode() != HloOpcode::kConstant || !s->literal() || s->literal()->isUnknown())
        unsupported(inst, "a dynamic-update-slice whose start indices are not constants");
      int64_t start = s->literal()->getInt64(0);
      starts.push_back(std::clamp<int64_t>(start, 0, xs.dim(d) - us.dim(d)));
    }
    return updateFrom(x, xs.dims(), update, us.dims(), starts, 0);
  }

  // x (of extents `xd`) with the update placed at `starts`, for dimensions dim.. (the earlier
  // ones are already cut to the update's rows).
  ClassId updateFrom(ClassId x, std::vector<int64_t> xd, ClassId update,
                     const std::vector<int64_t>& ud, const std::vector<int64_t>& starts,
                     size_t dim) {
    if (dim == xd.size()) return update;
    auto part = [&](int64_t lo, int64_t hi) {
      std::vector<hlo::SliceDim> box;
      for (size_t d = 0; d < xd.size(); ++d) {
        box.push_back(d == dim ? hlo::SliceDim{lo, hi, 1} : hlo::SliceDim{0, xd[d], 1});
      }
      return b_.slice(x, box);
    };
    const int64_t lo = starts[dim], hi = lo + ud[dim], end = xd[dim];
    std::vector<ClassId> parts;
    if (lo > 0) parts.push_back(part(0, lo));
    ClassId rows = lo == 0 && hi == end ? x : part(lo, hi);
    xd[dim] = ud[dim];
    parts.push_back(updateFrom(rows, xd, update, ud, starts, dim + 1));
    if (hi < end) parts.push_back(part(hi, end));
    return parts.size() == 1 ? parts[0] : b_.concatenate(parts, static_cast<int64_t>(dim));
  }

  void copyTypedAttributes(const HloInstruction& inst, OpDesc& d) {
    const hlo::HloAttributes& a = inst.attrs();
    d.attrs.dimensions = a.dimensions;
    // A scalar's broadcast may leave its (empty) dimensions out; the IR's rules and views read
    // them on every broadcast.
    if (inst.opcode() == HloOpcode::kBroadcast && !d.attrs.dimensions)
      d.attrs.dimensions = std::vector<int64_t>{};
    d.attrs.iota_dimension = a.iota_dimension;
    d.attrs.slice = a.slice;
    d.attrs.padding = a.padding;
    d.attrs.direction = a.direction;
    d.attrs.comparison_type = a.comparison_type;
    if (inst.opcode() == HloOpcode::kDot) d.attrs.dot_dims = a.dot_dims.value_or(hlo::DotDims{});
    if (inst.opcode() == HloOpcode::kConstant) {
      if (!inst.literal() || inst.literal()->isUnknown()) {
        fail(file_, inst.loc(), "constant '" + inst.name() + "' has unknown data ({...})",
             "print the module with its large constants");
      }
      auto lit = std::make_shared<hlo::Literal>(*inst.literal());
      d.literal = std::move(lit);
    }
    if (inst.opcode() == HloOpcode::kReduce) {
      if (inst.operandCount() != 2) unsupported(inst, "variadic reduce");
      d.reducer = classifyReducer(inst);
    }
  }

  Reducer classifyReducer(const HloInstruction& inst) {
    const HloComputation* c = inst.called("to_apply");
    if (c == nullptr || c->parameterCount() != 2) unsupported(inst, "this reducer");
    const HloInstruction* root = c->root();
    for (Reducer r : {Reducer::kAdd, Reducer::kMultiply, Reducer::kMaximum, Reducer::kMinimum,
                      Reducer::kAnd, Reducer::kOr, Reducer::kXor}) {
      if (root->opcode() != reducerOpcode(r) || root->operandCount() != 2) continue;
      const HloInstruction* x = root->operand(0);
      const HloInstruction* y = root->operand(1);
      bool params = x->opcode() == HloOpcode::kParameter && y->opcode() == HloOpcode::kParameter &&
                    x->parameterNumber() != y->parameterNumber();
      if (params) return r;
    }
    unsupported(
        inst,
        "reducers other than one add/multiply/maximum/minimum/and/or/xor of the two parameters");
  }

  [[noreturn]] void unsupported(const HloInstruction& inst, const std::string& what) {
    fail(file_, inst.loc(), "the compiler does not support " + what + " ('" + inst.name() + "')");
  }

  const hlo::HloModule& module_;
  IrBuilder& b_;
  const ImportOptions& options_;
  const std::string file_;
  std::vector<Origin> origins_;  // where each class came from, in import order
};

}  // namespace

ClassId flattenWithLayout(IrBuilder& b, ClassId value, const hlo::Shape& with_layout,
                          const std::string& file, SourceLoc loc) {
  return b.flatten(toPhysical(b, value, planLayout(with_layout, file, loc)));
}

ClassId unflattenWithLayout(IrBuilder& b, ClassId bytes, const hlo::Shape& with_layout,
                            const std::string& file, SourceLoc loc) {
  LayoutPlan plan = planLayout(with_layout, file, loc);
  hlo::PrimitiveType type = with_layout.elementType();
  ClassId x;
  if (!plan.split_dims.empty()) {
    std::vector<int64_t> tiled;
    for (int64_t p : plan.tile_perm)
      tiled.push_back(plan.split_dims[static_cast<size_t>(p)]);
    x = b.unflatten(bytes, hlo::Shape(type, tiled));
    if (!isIdentity(plan.tile_perm)) x = b.transpose(x, inverse(plan.tile_perm));
    x = b.reshape(x, plan.physical_dims);
  } else {
    x = b.unflatten(bytes, hlo::Shape(type, plan.physical_dims));
  }
  if (!plan.to_physical.empty()) x = b.transpose(x, inverse(plan.to_physical));
  return x;
}

ImportedKernel importKernel(const hlo::HloModule& module, IrBuilder& b,
                            const ImportOptions& options) {
  return Importer(module, b, options).run();
}

std::vector<hlo::Shape> entryParameterShapes(const hlo::HloModule& module) {
  std::vector<hlo::Shape> out;
  const HloComputation& entry = *module.entry();
  for (int64_t i = 0; i < entry.parameterCount(); ++i) {
    const std::optional<hlo::ProgramShape>& layout = module.entryLayout();
    bool given = layout && static_cast<size_t>(i) < layout->parameters.size();
    out.push_back(given ? layout->parameters[static_cast<size_t>(i)] : entry.parameter(i)->shape());
  }
  return out;
}

std::vector<hlo::Shape> entryResultShapes(const hlo::HloModule& module) {
  hlo::Shape root =
      module.entryLayout() ? module.entryLayout()->result : module.entry()->root()->shape();
  return root.isTuple() ? root.tupleShapes() : std::vector<hlo::Shape>{root};
}

ImportedKernel hbmLayout(const hlo::HloModule& module, const ImportOptions& options) {
  ImportedKernel k;
  k.file = module.sourceFile();
  int64_t offset = 0;
  const int64_t align = std::max<int64_t>(1, options.hbm_alignment);
  auto aligned = [align](int64_t x) { return (x + align - 1) / align * align; };
  std::vector<hlo::Shape> parameters = entryParameterShapes(module);
  for (size_t i = 0; i < parameters.size(); ++i) {
    KernelParameter p;
    p.name = module.entry()->parameter(static_cast<int64_t>(i))->name();
    p.shape = parameters[i];
    p.resident = residence(options.resident_parameters, i);
    p.bytes = p.resident ? 0 : p.shape.byteSize();
    p.hbm_offset = p.bytes ? aligned(offset) : offset;
    offset = p.hbm_offset + p.bytes;
    k.parameters.push_back(std::move(p));
  }
  std::vector<hlo::Shape> results = entryResultShapes(module);
  for (size_t i = 0; i < results.size(); ++i) {
    KernelResult r;
    r.shape = results[i];
    if (const ResultWindow* w = windowOf(options, i)) {
      std::optional<hlo::Layout> layout = r.shape.layout();
      r.shape = hlo::Shape(r.shape.elementType(), w->region);
      r.shape.setLayout(std::move(layout));
    }
    r.resident = residence(options.resident_results, i);
    r.bytes = r.resident ? 0 : r.shape.byteSize();
    r.hbm_offset = r.bytes ? aligned(offset) : offset;
    offset = r.hbm_offset + r.bytes;
    k.results.push_back(std::move(r));
  }
  k.io_bytes = std::max(offset, options.reserved_hbm);
  return k;
}

int64_t physicalOffset(const hlo::Shape& with_layout, const std::vector<int64_t>& index) {
  const std::vector<int64_t> at = physicalIndex(planLayout(with_layout, "", {}), index);
  const std::vector<int64_t> dims = physicalShape(with_layout).dims();
  int64_t offset = 0;
  for (size_t d = 0; d < dims.size(); ++d)
    offset = offset * dims[d] + at[d];
  return offset * hlo::byteSize(with_layout.elementType());
}

hlo::Shape physicalShape(const hlo::Shape& with_layout) {
  LayoutPlan plan = planLayout(with_layout, "", {});
  if (plan.split_dims.empty()) return hlo::Shape(with_layout.elementType(), plan.physical_dims);
  std::vector<int64_t> tiled;
  for (int64_t p : plan.tile_perm)
    tiled.push_back(plan.split_dims[static_cast<size_t>(p)]);
  return hlo::Shape(with_layout.elementType(), tiled);
}

namespace {

// Evaluates the layout's movement chain (or its inverse) on a literal.
hlo::Literal relayout(const hlo::Literal& value, const hlo::Shape& with_layout, bool to_physical) {
  LayoutPlan plan = planLayout(with_layout, "", {});
  hlo::Shape logical(with_layout.elementType(), with_layout.dims());
  hlo::HloBuilder b("relayout");
  hlo::HloInstruction* x = b.parameter(0, to_physical ? logical : physicalShape(with_layout));
  if (to_physical) {
    if (!plan.to_physical.empty()) x = b.transpose(x, plan.to_physical);
    if (!plan.split_dims.empty()) {
      x = b.reshape(x, plan.split_dims);
      if (!isIdentity(plan.tile_perm)) x = b.transpose(x, plan.tile_perm);
    }
  } else {
    if (!plan.split_dims.empty()) {
      if (!isIdentity(plan.tile_perm)) x = b.transpose(x, inverse(plan.tile_perm));
      x = b.reshape(x, plan.physical_dims);
    }
    if (!plan.to_physical.empty()) x = b.transpose(x, inverse(plan.to_physical));
  }
  if (x->opcode() == HloOpcode::kParameter) return value;  // the default layout
  auto comp = b.build(x);
  return hlo::evaluate(*comp, std::span<const hlo::Literal>(&value, 1));
}

}  // namespace

hlo::Literal toPhysical(const hlo::Literal& logical, const hlo::Shape& with_layout) {
  return relayout(logical, with_layout, true);
}

hlo::Literal fromPhysical(const hlo::Literal& physical, const hlo::Shape& with_layout) {
  return relayout(physical, with_layout, false);
}

}  // namespace tacit::isel
