// Results written block by block with read-modify-write instructions (isa_match.h, writeRegions).
//
// A pitched store (Gemmini's mvout with a row stride) rewrites a whole HBM region — every byte
// between its first and its last row — but only its rows change: its semantics is a
// dynamic-update-slice of the region's old content, which it reads from the very bytes it writes.
// A result whose blocks are too far apart for one contiguous store is then written by one such
// store per block, each leaving the others' bytes as it found them. The e-graph records this as
// `overlay(w_1, ..., w_n)` (ir.h): byte `at_i + p` of the result is byte p of w_i for the positions
// p of w_i's block. The identity `result = overlay(...)` holds exactly when
//  1. each w_i's unit rewrites an input read in place (the old region), through a chain that is
//     the identity on the region's bytes, with a dynamic-update-slice at zero starts whose update
//     box lands (through the output chain, a prefix of the rewritten tensor) inside the region:
//     so w_i changes exactly its block's bytes, whatever the region held before;
//  2. the update is the block of the result (the matcher matched it against that class);
//  3. the blocks, shifted to where each write lands, partition the result's bytes — and every
//     write stays inside the result's region (it rewrites no byte of another value).
// Around a result window, a block that is one contiguous run of the region may also be written by
// anything that produces exactly its bytes (a plain store): conditions 1 and 2 then hold by
// construction (its value is the block's bytes, and nothing else).
// The old content of each write is then an undefined value (the allocator places it on the
// write's own bytes) and the result's region is the overlay's storage (storage.h).
#include <algorithm>

#include "isel/isa_match.h"
#include "isel/isa_match_state.h"
#include "isel/pattern_view.h"
#include "isel/view_index.h"
#include "support/diagnostic.h"
#include "taidl/ops.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

constexpr int kMaxDepth = 6;                           // nested concatenations followed into blocks
constexpr size_t kMaxBlocks = 1024;                    // writes per region
constexpr int64_t kMaxRegionBytes = int64_t{1} << 32;  // regions split into block writes

const taidl::SymOp& opOf(const UnitPattern& p, int32_t node) {
  return p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(node)].op)];
}

bool isZeroConstant(const taidl::SymOp& op) {
  if (op.opcode != HloOpcode::kConstant) return false;
  if (op.literal.kind == taidl::LiteralValue::Kind::kFloat) return op.literal.number == 0;
  if (op.literal.kind == taidl::LiteralValue::Kind::kExpr) {
    auto v = op.literal.expr.constantValue();
    return v && *v == 0;
  }
  return false;
}

// Whether a chain only re-types bytes in order (reshape, bitcast-convert, copy).
bool preservesBytes(const UnitPattern& p, const std::vector<int32_t>& chain) {
  for (size_t k = 0; k + 1 < chain.size(); ++k) {
    HloOpcode op = opOf(p, chain[k]).opcode;
    if (op != HloOpcode::kReshape && op != HloOpcode::kBitcastConvert && op != HloOpcode::kCopy)
      return false;
  }
  return true;
}

// Calls fn(start, length) for every run of consecutive byte positions a view reads (its dims are
// coalesced: a run is its innermost dimension when that steps by one byte, else one byte).
template <typename Fn>
void forEachRun(const StridedView& v, Fn fn) {
  const size_t n = v.dims.size();
  const bool contiguous = n > 0 && v.dims[n - 1].stride == 1;
  const int64_t run = contiguous ? v.dims[n - 1].extent : 1;
  const size_t outer = contiguous ? n - 1 : n;
  std::vector<int64_t> idx(outer, 0);
  for (;;) {
    int64_t at = v.offset;
    for (size_t k = 0; k < outer; ++k)
      at += idx[k] * v.dims[k].stride;
    fn(at, run);
    size_t k = outer;
    while (k > 0 && ++idx[k - 1] == v.dims[k - 1].extent)
      idx[--k] = 0;
    if (k == 0) return;
  }
}

// Condition 3: every byte of the region is written by exactly one block (or, around a result
// window, kept by exactly one kept block): the blocks' runs, sorted, tile [0, bytes) without
// gap or overlap. (Runs, not bytes: a tile of a 1024x1024 result is ~50 runs, not a megabyte.)
bool partitions(const std::vector<OverlayPart>& parts, int64_t bytes) {
  std::vector<std::pair<int64_t, int64_t>> runs;
  for (const OverlayPart& part : parts) {
    if (part.block.byteCount() == 0) continue;
    forEachRun(part.block,
               [&](int64_t at, int64_t length) { runs.emplace_back(part.at + at, length); });
  }
  std::sort(runs.begin(), runs.end());
  int64_t next = 0;
  for (const auto& [at, length] : runs) {
    if (at != next) return false;  // a gap, or an overlap
    next = at + length;
  }
  return next == bytes;
}

// The positions of the box [starts, starts + dims(part)) of `whole` in whole's row-major bytes.
std::optional<StridedView> boxView(const hlo::Shape& whole, const std::vector<int64_t>& starts,
                                   const hlo::Shape& part) {
  hlo::HloAttributes box;
  std::vector<hlo::SliceDim> dims;
  for (int64_t i = 0; i < whole.rank(); ++i) {
    size_t k = static_cast<size_t>(i);
    dims.push_back({starts[k], starts[k] + part.dim(i), 1});
  }
  box.slice = std::move(dims);
  return applyMovement(StridedView::identity(whole.byteSize()), whole, HloOpcode::kSlice, box,
                       part);
}

}  // namespace

// The input a pattern rewrites in place (condition 1's structure), if it is a region write: its
// skeleton is a dynamic-update-slice at zero starts of that input's chain, in a byte buffer.
std::optional<size_t> IsaMatcher::rewrittenInput(const UnitPattern& p) const {
  if (p.pure_movement) return std::nullopt;
  const PatternNode& dus = p.nodes[static_cast<size_t>(p.skeleton_root)];
  if (opOf(p, p.skeleton_root).opcode != HloOpcode::kDynamicUpdateSlice) return std::nullopt;
  for (size_t k = 2; k < dus.children.size(); ++k) {
    if (!isZeroConstant(opOf(p, dus.children[k]))) return std::nullopt;
  }
  const taidl::SymSlice& out = p.sym->outputs[static_cast<size_t>(p.output)];
  if (out.state || !isa_.buffers[static_cast<size_t>(out.buffer)].is_hbm) return std::nullopt;
  for (size_t i = 0; i < p.inputs.size(); ++i) {
    if (p.inputs[i].leaf == dus.children[0] && readsInPlace(*p.sym, i) &&
        p.sym->inputs[i].buffer == out.buffer)
      return i;
  }
  return std::nullopt;
}

// A write of class c, whose bytes are at `block` in the region, by pattern `pattern`.
std::optional<IsaMatcher::RegionWrite> IsaMatcher::findWriter(int32_t pattern, ClassId c,
                                                              const StridedView& block,
                                                              int64_t region_bytes) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  std::optional<size_t> old = rewrittenInput(p);
  if (!old) return std::nullopt;
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  int32_t dus = p.skeleton_root;
  int32_t update = p.nodes[static_cast<size_t>(dus)].children[1];
  // The update is c's bytes in the update's element type: a bitcast for the same width; for a
  // narrower one (AMX's tile store of an s32 block as 64-byte rows), each element's bytes in
  // order along the last dimension, the block's row-major bytes.
  const hlo::Shape shape = b_.shape(c);
  hlo::PrimitiveType want = opOf(p, update).type.dtype;
  const int64_t wide = hlo::byteSize(shape.elementType()), narrow = hlo::byteSize(want);
  if (narrow <= 0 || wide % narrow != 0 || shape.rank() == 0 ||
      static_cast<int64_t>(opOf(p, update).type.dims.size()) != shape.rank())
    return std::nullopt;
  ClassId bytes = c;
  if (want != shape.elementType() && wide == narrow) {
    bytes = b_.bitcastConvert(c, hlo::Shape(want, shape.dims()));
  } else if (wide > narrow) {
    std::vector<int64_t> lanes = shape.dims();
    lanes.push_back(wide / narrow);
    std::vector<int64_t> rows = shape.dims();
    rows.back() *= wide / narrow;
    bytes = b_.reshape(b_.bitcastConvert(c, hlo::Shape(want, lanes)), rows);
  }
  b_.egraph().rebuild();  // matching reads the e-graph, which must be clean
  std::vector<State> found;
  State start = State::start(p, u);
  matchNode(p, update, bytes, start, [&](State& m) {
    if (found.size() < 4 && m.alpha.settle()) found.push_back(m);
  });
  std::vector<int32_t> out_chain = p.out_chain;
  out_chain.push_back(dus);
  const std::vector<int32_t>& old_chain = p.inputs[*old].chain;
  for (State& m : found) {
    // The update's positions in the unit's output bytes at α (nullopt: condition 1 fails).
    auto view_at = [&](const AlphaSolver& a) -> std::optional<StridedView> {
      taidl::EvalEnv env = a.env();
      std::optional<ChainView> out = chainView(p, out_chain, env);
      std::optional<ChainView> in = chainView(p, old_chain, env);
      std::optional<StridedView> box;
      try {
        box = updateBox(taidl::evalType(opOf(p, dus).type, env),
                        taidl::evalType(opOf(p, update).type, env));
      } catch (const taidl::ExprError&) {
        return std::nullopt;
      }
      // The rewritten tensor holds padding past the old region: only the prefix must be exact.
      if (!out || !in || !box || !out->exact()) return std::nullopt;
      int64_t len = out->view.byteCount();
      // Output = prefix of the rewritten tensor; rewritten tensor = the old region (then padding).
      bool prefix = out->view.isContiguous() && out->view.offset == 0;
      bool identity = in->view.isContiguous() && in->view.offset == 0 && in->valid_end >= len;
      if (!prefix || !identity || maxPosition(*box) >= len) return std::nullopt;
      return box;
    };
    if (!m.alpha.complete()) {
      std::optional<int32_t> slot = m.alpha.singleUnknown();
      if (!slot) continue;
      std::optional<int64_t> x = solveSlot(
          [&](int64_t v) {
            AlphaSolver a = m.alpha;
            a.bind(*slot, v);
            return view_at(a);
          },
          block);
      // An α the block does not depend on (the pitch of a one-row write): its smallest value.
      const taidl::AlphaRange& range = (*u.ranges)[static_cast<size_t>(*slot)];
      if (!x && range.range.hasLo()) x = range.range.lo;
      if (!x) continue;
      m.alpha.bind(*slot, *x);
    }
    std::optional<StridedView> at_block = view_at(m.alpha);
    if (!at_block || at_block->dims != block.dims) continue;
    int64_t at = block.offset - at_block->offset;
    int64_t len = taidl::evalType(opOf(p, p.root).type, m.alpha.env()).byteSize();
    if (at < 0 || at + len > region_bytes) continue;  // condition 3: only the result's bytes
    m.views_checked = true;
    m.undef_leaves.push_back(p.inputs[*old].leaf);
    if (std::string why = verify(p, m); !why.empty()) {
      fail(pattern, c, why);
      continue;
    }
    Built<std::vector<ClassId>> built = constructInputs(p, m);
    if (!built.value) {
      fail(pattern, c, built.error);
      continue;
    }
    std::vector<ClassId>& inputs = *built.value;
    // The written block itself when the update is its bytes unchanged (no class to unite later).
    for (size_t k = 0; k < p.inputs.size(); ++k) {
      if (p.inputs[k].leaf == update && preservesBytes(p, p.inputs[k].chain) &&
          taidl::evalType(p.sym->inputs[k].type, m.alpha.env()).compatible(shape))
        inputs[k] = c;
    }
    PiiDesc pii = piiDescFor(p, u, m.alpha, hlo::Shape(hlo::PrimitiveType::kU8, {len}));
    ClassId writer = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), inputs);
    b_.egraph().rebuild();
    return RegionWrite{writer, OverlayPart{at, *at_block}};
  }
  return std::nullopt;
}

// Writes for class c at box `starts` of `whole`: one write of c, or the writes of the parts of one
// of its concatenations. Around a result window, a kept block (IrLanguage::keptOp) needs no write.
bool IsaMatcher::collectWrites(ClassId c, const std::vector<int64_t>& starts,
                               const hlo::Shape& whole, int depth, bool may_split,
                               const RegionOf& region, std::vector<RegionWrite>& out) {
  c = b_.egraph().find(c);
  const hlo::Shape shape = b_.shape(c);
  if (depth > kMaxDepth || out.size() >= kMaxBlocks || shape.rank() != whole.rank()) return false;
  std::optional<StridedView> block = boxView(whole, starts, shape);
  if (!block) return false;
  if (region.result.windowed) {
    for (NodeId n : b_.egraph().nodes(c)) {
      if (b_.egraph().node(n).op() != b_.ir().keptOp()) continue;
      out.push_back(RegionWrite{ClassId(), OverlayPart{0, *block}});
      return true;
    }
  }
  for (size_t pi = 0; pi < units_.patterns.size() && !region.plain_first; ++pi) {
    if (auto w = findWriter(static_cast<int32_t>(pi), c, *block, region.bytes)) {
      out.push_back(*w);
      return true;
    }
  }
  std::vector<NodeId> nodes(b_.egraph().nodes(c).begin(), b_.egraph().nodes(c).end());
  for (NodeId n : nodes) {
    egraph::ENode e = b_.egraph().node(n);
    if (b_.ir().opcodeOf(e.op()) != HloOpcode::kConcatenate) continue;
    size_t dim = static_cast<size_t>((*b_.ir().opDesc(e.attr()).attrs.dimensions)[0]);
    std::vector<ClassId> parts(e.children().begin(), e.children().end());
    std::vector<RegionWrite> mine;
    std::vector<int64_t> at = starts;
    bool ok = true;
    for (ClassId part : parts) {
      // The window of a result is split like a whole result (it is the kernel's value).
      bool split = region.result.windowed && b_.egraph().same(part, region.result.window_class);
      ok = ok && collectWrites(part, at, whole, depth + 1, split, region, mine);
      at[dim] += b_.shape(part).dim(static_cast<int64_t>(dim));
    }
    if (ok) {
      out.insert(out.end(), mine.begin(), mine.end());
      return true;
    }
  }
  // Around a window, a block that no concatenation splits into writes and whose bytes are one
  // contiguous run of the region is written by whatever produces exactly those bytes in HBM (a
  // plain store of a row: AMX's mm512_store of 16 f32 lanes): such a write changes its block and
  // nothing else, whatever the unit.
  if (region.result.windowed && block->isContiguous() && region.plain_stores) {
    ClassId bytes = b_.flatten(c);
    b_.egraph().rebuild();
    out.push_back(
        RegionWrite{bytes, OverlayPart{block->offset, StridedView::identity(block->byteCount())}});
    return true;
  }
  // A result that no write covers and no concatenation of it splits into writes (a copy of an
  // input wider than a store's block) is also the concatenation of its blocks of one writer's
  // largest update: data movement, exact.
  if (may_split) {
    if (std::optional<std::vector<int64_t>> box = writerBlock(shape)) {
      ClassId blocks = concatOfBlocks(c, *box, 0, std::vector<int64_t>(shape.dims().size(), 0));
      b_.egraph().unite(blocks, c);
      b_.egraph().rebuild();
      return collectWrites(c, starts, whole, depth + 1, false, region, out);
    }
  }
  return false;
}

// Whether some unit writes HBM other than by rewriting a region in place (a plain store).
bool IsaMatcher::plainStores() const {
  for (const UnitPattern& p : units_.patterns) {
    const taidl::SymSlice& out = p.sym->outputs[static_cast<size_t>(p.output)];
    if (!out.state && isa_.buffers[static_cast<size_t>(out.buffer)].is_hbm && !rewrittenInput(p))
      return true;
  }
  return false;
}

// The largest update block of the first region writer that splits `shape` into equal blocks
// (smaller in some dimension), if no writer's largest block covers all of it.
std::optional<std::vector<int64_t>> IsaMatcher::writerBlock(const hlo::Shape& shape) const {
  std::optional<std::vector<int64_t>> split;
  for (const UnitPattern& p : units_.patterns) {
    if (!rewrittenInput(p)) continue;
    const Unit& u = units_.units[static_cast<size_t>(p.unit)];
    const taidl::SymOp& update = opOf(p, p.nodes[static_cast<size_t>(p.skeleton_root)].children[1]);
    if (static_cast<int64_t>(update.type.dims.size()) != shape.rank()) continue;
    std::vector<int64_t> box;
    bool splits = false;
    for (int64_t d = 0; d < shape.rank(); ++d) {
      std::optional<int64_t> most = largestOverAlpha(update.type.dims[static_cast<size_t>(d)], u);
      if (!most || *most <= 0) break;
      int64_t extent = std::min(*most, shape.dim(d));
      if (shape.dim(d) % extent != 0) break;
      splits |= extent < shape.dim(d);
      box.push_back(extent);
    }
    if (static_cast<int64_t>(box.size()) != shape.rank()) continue;
    if (!splits) return std::nullopt;  // one write of this unit may cover the whole result
    if (!split) split = box;
  }
  return split;
}

// c as nested concatenations (dimension `dim` outermost) of its slices of extent `box`, the
// slice at `starts` in the dimensions before `dim`.
ClassId IsaMatcher::concatOfBlocks(ClassId c, const std::vector<int64_t>& box, size_t dim,
                                   std::vector<int64_t> starts) {
  const hlo::Shape shape = b_.shape(c);  // a copy: adding nodes may move the analysis data
  if (dim == box.size()) {
    std::vector<hlo::SliceDim> slice;
    for (size_t k = 0; k < box.size(); ++k)
      slice.push_back({starts[k], starts[k] + box[k], 1});
    return b_.slice(c, slice);
  }
  std::vector<ClassId> parts;
  for (int64_t at = 0; at < shape.dim(static_cast<int64_t>(dim)); at += box[dim]) {
    starts[dim] = at;
    parts.push_back(concatOfBlocks(c, box, dim + 1, starts));
  }
  return parts.size() == 1 ? parts[0] : b_.concatenate(parts, static_cast<int64_t>(dim));
}

size_t IsaMatcher::writeRegions(const std::vector<KernelResult>& results) {
  egraph::EGraph& g = b_.egraph();
  g.rebuild();
  size_t before = g.nodeCount(), unions = 0;
  const bool plain = plainStores();
  for (const KernelResult& result : results) {
    ClassId region = g.find(result.bytes_class);
    const hlo::Shape bytes = b_.shape(region);
    if (!isByteVector(bytes) || bytes.dim(0) > kMaxRegionBytes) continue;
    ViewIndex views(g, b_);
    std::vector<BaseView> candidates = views.views(region);
    for (const BaseView& bv : candidates) {
      // The region must be the row-major bytes of a tensor whose blocks are written.
      if (bv.base == region || !bv.exact() || bv.view != StridedView::identity(bytes.dim(0)))
        continue;
      const hlo::Shape whole = b_.shape(bv.base);
      // Around a window, two alternatives when the ISA has plain stores: block writes where some
      // unit writes a block, and plain stores of contiguous runs (rows) everywhere — the first
      // may need a value in a buffer it cannot reach (AMX's pitched tile store of an f32 epilogue
      // held in zmm), the second more calls; extraction chooses.
      bool written = false;
      for (bool plain_first : {false, true}) {
        if (plain_first && !(result.windowed && plain)) break;
        std::vector<RegionWrite> writes;
        if (!collectWrites(bv.base, std::vector<int64_t>(static_cast<size_t>(whole.rank()), 0),
                           whole, 0, g.same(bv.base, result.value_class),
                           RegionOf{result, bytes.dim(0), plain_first, plain}, writes) ||
            writes.size() < 2)  // one write of everything is an ordinary store
          continue;
        OverlayDesc desc{bytes.dim(0), {}};
        std::vector<ClassId> writers;
        std::vector<OverlayPart> blocks;  // the writes' and the kept blocks
        for (const RegionWrite& w : writes) {
          blocks.push_back(w.part);
          if (!w.writer.valid()) continue;
          desc.parts.push_back(w.part);
          writers.push_back(w.writer);
        }
        if (writers.empty() || !partitions(blocks, desc.bytes)) continue;
        unions += g.unite(b_.overlay(desc, writers), region) ? 1 : 0;
        g.rebuild();
        written = true;
      }
      if (written) break;
    }
  }
  return unions + (g.nodeCount() - before);
}

}  // namespace tacit::isel
