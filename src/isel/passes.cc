#include "isel/passes.h"

#include <algorithm>
#include <map>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include "hlo_eval/evaluator.h"
#include "isel/to_hlo.h"
#include "isel/view.h"
#include "isel/view_index.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

// The identity of (base, type, view) as words, written into a reused buffer (the view pass builds
// one per view of every class: allocating each was most of its time).
void viewKey(std::vector<int64_t>& key, ClassId base, const hlo::Shape& type,
             const StridedView& v) {
  key.clear();
  key.push_back(base.value);
  key.push_back(static_cast<int64_t>(type.elementType()));
  key.push_back(type.rank());
  key.insert(key.end(), type.dims().begin(), type.dims().end());
  key.push_back(v.offset);
  for (const ViewDim& d : v.dims) {
    key.push_back(d.extent);
    key.push_back(d.stride);
  }
}

// The first class of every view key: an open-addressing table over keys copied into one arena
// (an unordered_map of strings allocated twice per view and missed the cache on every probe and
// rehash: most of the view pass on large e-graphs).
class ViewOwners {
 public:
  explicit ViewOwners(size_t expected) {
    size_t capacity = 64;
    while (capacity < 2 * expected)
      capacity *= 2;
    slots_.resize(capacity);
  }

  // The owner of `key`, which becomes `c` if the key is new.
  ClassId tryEmplace(std::span<const int64_t> key, ClassId c) {
    uint64_t h = hash(key);
    size_t mask = slots_.size() - 1;
    for (size_t i = h & mask;; i = (i + 1) & mask) {
      Slot& s = slots_[i];
      if (s.length == 0) {
        s = {h, static_cast<uint32_t>(arena_.size()), static_cast<uint32_t>(key.size()), c};
        arena_.insert(arena_.end(), key.begin(), key.end());
        if (++size_ * 2 > slots_.size()) grow();
        return c;
      }
      if (s.hash == h && s.length == key.size() &&
          std::equal(key.begin(), key.end(), arena_.begin() + s.offset))
        return s.owner;
    }
  }

 private:
  struct Slot {
    uint64_t hash = 0;
    uint32_t offset = 0;
    uint32_t length = 0;  // 0: empty (a key is never empty)
    ClassId owner;
  };

  static uint64_t hash(std::span<const int64_t> key) {
    uint64_t h = 0x9e3779b97f4a7c15ULL ^ key.size();
    for (int64_t w : key) {
      h ^= static_cast<uint64_t>(w) + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
      h *= 0xff51afd7ed558ccdULL;
    }
    h ^= h >> 33;
    h *= 0xc4ceb9fe1a85ec53ULL;
    h ^= h >> 33;
    return h;
  }

  void grow() {
    std::vector<Slot> old = std::move(slots_);
    slots_.assign(old.size() * 2, Slot{});
    size_t mask = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.length == 0) continue;
      size_t i = s.hash & mask;
      while (slots_[i].length != 0)
        i = (i + 1) & mask;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  std::vector<int64_t> arena_;
  size_t size_ = 0;
};

// Calls fn(position) for every byte position of `v`, in row-major order.
template <typename Fn>
void forEachPosition(const StridedView& v, Fn&& fn) {
  std::vector<int64_t> index(v.dims.size(), 0);
  int64_t count = v.byteCount();
  int64_t at = v.offset;
  for (int64_t i = 0; i < count; ++i) {
    fn(at);
    for (size_t k = v.dims.size(); k-- > 0;) {
      at += v.dims[k].stride;
      if (++index[k] < v.dims[k].extent) break;
      at -= v.dims[k].stride * v.dims[k].extent;
      index[k] = 0;
    }
  }
}

// Byte vectors that are views of one base: a vector holding every byte of the base once (a
// permutation: a kernel result's HBM region in its physical layout) and smaller vectors whose
// bytes are a contiguous run of it (a row of a tile of that result) are that run's `slice`.
struct ByteViews {
  std::vector<std::pair<ClassId, StridedView>> whole, parts;
};

constexpr int64_t kMaxPermutedBytes = 1 << 16;

// Whether an operator other than data movement reads class c: only then may a part of its stored
// bytes have to be read back (a value that is only stored never is).
bool computedWith(const egraph::EGraph& g, const IrLanguage& ir, ClassId c) {
  bool computed = false;
  g.forEachParent(c, [&](NodeId n) {
    auto op = ir.opcodeOf(g.node(n).op());
    computed |= op && !isMovement(*op) && *op != HloOpcode::kConcatenate && *op != HloOpcode::kPad;
  });
  return computed;
}

// Whether units write class c to memory: it has a pii or overlay e-node, or is the concatenation of
// such classes (a tiled result stored tile by tile).
bool written(const egraph::EGraph& g, const IrLanguage& ir, ClassId c, int depth = 3) {
  bool yes = false;
  g.forEachNode(c, [&](NodeId n) {
    if (yes) return;
    egraph::ENode e = g.node(n);
    if (e.op() == ir.piiOp() || e.op() == ir.overlayOp()) {
      yes = true;
    } else if (depth > 0 && ir.opcodeOf(e.op()) == HloOpcode::kConcatenate) {
      yes = std::all_of(e.children().begin(), e.children().end(),
                        [&](ClassId part) { return written(g, ir, part, depth - 1); });
    }
  });
  return yes;
}

}  // namespace

const hlo::Literal* literalOf(const egraph::EGraph& g, const IrLanguage& ir, ClassId c) {
  for (NodeId n : g.nodes(g.find(c))) {
    egraph::ENode e = g.node(n);
    if (ir.opcodeOf(e.op()) == HloOpcode::kConstant) return ir.opDesc(e.attr()).literal.get();
  }
  return nullptr;
}

struct ViewPass::State {
  State(egraph::EGraph& g, IrBuilder& b) : index(g, b), owner(0) {}
  ViewIndex index;
  ViewOwners owner;  // every exact view key registered so far, with its first class
  // Per class id: ViewIndex::computedAt() of the views whose keys are registered (the matcher and
  // the row split may compute views between two runs of the pass).
  std::vector<uint32_t> registered;
};

ViewPass::ViewPass(egraph::EGraph& g, IrBuilder& b)
    : g_(g), b_(b), state_(std::make_unique<State>(g, b)) {}

ViewPass::~ViewPass() = default;

ViewIndex& ViewPass::views() {
  return state_->index;
}

// A class whose views come from the memo had them registered when they were computed (view keys
// are facts: a class never stops being a view it was), so only classes with views not registered
// yet register theirs and unite with earlier owners; the permutation runs below look at every
// class.
PassStats ViewPass::run() {
  egraph::EGraph& g = g_;
  IrBuilder& b = b_;
  ViewIndex& index = state_->index;
  ViewOwners& owner = state_->owner;
  index.refresh();
  PassStats stats;
  std::vector<int64_t> key;
  std::vector<std::pair<ClassId, ClassId>> unions;
  struct SliceRequest {
    ClassId target, base;
    int64_t start, limit;
  };
  std::vector<SliceRequest> slices;
  std::map<ClassId, ByteViews> byte_views;
  std::vector<ClassId> classes(g.classes().begin(), g.classes().end());
  for (ClassId c : classes) {
    const hlo::Shape& type = b.shape(c);
    const std::vector<BaseView>& views = index.views(c);
    if (c.value >= state_->registered.size()) state_->registered.resize(c.value + 1, 0);
    const uint32_t computed_at = index.computedAt(c);
    const bool unregistered = state_->registered[c.value] != computed_at;
    state_->registered[c.value] = computed_at;
    for (const BaseView& bv : views) {
      if (!bv.exact()) continue;  // reads padding: not a view of the base
      if (unregistered) {
        viewKey(key, bv.base, type, bv.view);
        ClassId first = owner.tryEmplace(key, c);
        if (first != c && !g.same(first, c)) unions.emplace_back(first, c);
        bool range_of_bytes = bv.base != c && isByteVector(type) &&
                              isByteVector(b.shape(bv.base)) && bv.view.isContiguous() &&
                              bv.view.byteCount() < b.shape(bv.base).dim(0);
        if (range_of_bytes)
          slices.push_back({c, bv.base, bv.view.offset, bv.view.offset + bv.view.byteCount()});
      }
      if (bv.base != c && isByteVector(type) && !isByteVector(b.shape(bv.base))) {
        int64_t base_bytes = b.shape(bv.base).byteSize();
        if (base_bytes > kMaxPermutedBytes) continue;
        ByteViews& v = byte_views[bv.base];
        (bv.view.byteCount() == base_bytes ? v.whole : v.parts).emplace_back(c, bv.view);
      }
    }
  }
  // A run of a permutation of the base's bytes (see ByteViews).
  std::vector<int64_t> index_of;
  for (const auto& entry : byte_views) {
    const ClassId base = entry.first;  // a named copy: clang 14 cannot capture a structured binding
    const ByteViews& v = entry.second;
    if (v.whole.empty() || v.parts.empty() || !computedWith(g, b.ir(), base)) continue;
    // A view of HBM bytes already (an input): its runs are slices of those.
    const std::vector<BaseView>& of_base = index.views(base);
    if (std::any_of(of_base.begin(), of_base.end(), [&](const BaseView& bv) {
          return bv.base != base && bv.exact() && isByteVector(b.shape(bv.base));
        }))
      continue;
    index_of.assign(static_cast<size_t>(b.shape(base).byteSize()), -1);
    for (const auto& [whole, wv] : v.whole) {
      if (!written(g, b.ir(), whole) || minPosition(wv) < 0 ||
          maxPosition(wv) >= static_cast<int64_t>(index_of.size()))
        continue;
      std::fill(index_of.begin(), index_of.end(), -1);
      bool permutation = true;
      int64_t i = 0;
      forEachPosition(wv, [&](int64_t p) {
        int64_t& slot = index_of[static_cast<size_t>(p)];
        permutation &= slot < 0;
        slot = i++;
      });
      if (!permutation) continue;
      for (const auto& [part, pv] : v.parts) {
        if (g.same(part, whole) || minPosition(pv) < 0 ||
            maxPosition(pv) >= static_cast<int64_t>(index_of.size()))
          continue;
        int64_t start = index_of[static_cast<size_t>(pv.offset)], next = start;
        bool run = true;
        forEachPosition(pv, [&](int64_t p) { run &= index_of[static_cast<size_t>(p)] == next++; });
        if (run) slices.push_back({part, whole, start, next});
      }
    }
  }
  size_t before = g.nodeCount();
  for (auto [a, c] : unions)
    stats.unions += g.unite(a, c) ? 1 : 0;
  for (const SliceRequest& s : slices) {
    ClassId sliced = b.slice(s.base, {hlo::SliceDim{s.start, s.limit, 1}});
    stats.unions += g.unite(sliced, s.target) ? 1 : 0;
  }
  g.rebuild();
  stats.nodes_added = g.nodeCount() > before ? g.nodeCount() - before : 0;
  return stats;
}

PassStats runViewPass(egraph::EGraph& g, IrBuilder& b) {
  return ViewPass(g, b).run();
}

PassStats runRowSplitPass(egraph::EGraph& g, IrBuilder& b, int64_t max_rows, ViewIndex* views) {
  PassStats stats;
  std::optional<ViewIndex> own;
  ViewIndex& index = refreshedOrOwn(views, own, g, b);
  std::vector<ClassId> split;
  for (ClassId c : std::vector<ClassId>(g.classes().begin(), g.classes().end())) {
    const hlo::Shape& type = b.shape(c);
    if (type.rank() < 2 || type.dim(0) < 2 || type.dim(0) > max_rows) continue;
    for (const BaseView& bv : index.views(c)) {
      if (bv.base == c || !bv.exact() || !isByteVector(b.shape(bv.base)) || bv.view.isContiguous())
        continue;
      // Rows contiguous: refined to (rows, row bytes), the row part is one unit-stride run.
      int64_t row_bytes = type.byteSize() / type.dim(0);
      int64_t extents[] = {type.dim(0), row_bytes};
      auto parts = refine(bv.view, extents);
      if (!parts) continue;
      const ViewDims& row = (*parts)[1];
      bool contiguous_rows = row.empty() || (row.size() == 1 && row[0].stride == 1);
      if (contiguous_rows) {
        split.push_back(c);
        break;
      }
    }
  }
  size_t before = g.nodeCount();
  for (ClassId c : split) {
    const hlo::Shape type = b.shape(c);
    std::vector<ClassId> rows;
    for (int64_t r = 0; r < type.dim(0); ++r) {
      std::vector<hlo::SliceDim> sl;
      for (int64_t d = 0; d < type.rank(); ++d)
        sl.push_back({d == 0 ? r : 0, d == 0 ? r + 1 : type.dim(d), 1});
      rows.push_back(b.slice(c, sl));
    }
    stats.unions += g.unite(b.concatenate(rows, 0), c) ? 1 : 0;
  }
  g.rebuild();
  stats.nodes_added = g.nodeCount() - before;
  return stats;
}

PassStats runConstantFoldPass(egraph::EGraph& g, IrBuilder& b, int64_t max_elements) {
  PassStats stats;
  struct Fold {
    ClassId target;
    hlo::Literal value;
  };
  std::vector<Fold> folds;
  const IrLanguage& ir = b.ir();
  for (ClassId c : std::vector<ClassId>(g.classes().begin(), g.classes().end())) {
    if (literalOf(g, ir, c) != nullptr || b.shape(c).elementCount() > max_elements) continue;
    for (NodeId n : g.nodes(c)) {
      egraph::ENode e = g.node(n);
      auto opcode = ir.opcodeOf(e.op());
      if (!opcode || *opcode == HloOpcode::kConstant) continue;
      std::vector<const hlo::Literal*> args;
      for (ClassId child : e.children())
        args.push_back(literalOf(g, ir, child));
      if (std::find(args.begin(), args.end(), nullptr) != args.end()) continue;
      // Evaluate the one operator on its literal operands.
      HloEmitter emitter("fold");
      std::vector<hlo::HloInstruction*> operands;
      for (const hlo::Literal* a : args) {
        OpDesc k;
        k.opcode = HloOpcode::kConstant;
        k.shape = a->shape();
        k.literal = std::make_shared<hlo::Literal>(*a);
        operands.push_back(emitter.op(k, {}));
      }
      auto module = emitter.finish(emitter.op(ir.opDesc(e.attr()), operands));
      folds.push_back({c, hlo::evaluate(*module, {})});
      break;
    }
  }
  size_t before = g.nodeCount();
  for (Fold& f : folds)
    stats.unions += g.unite(b.constant(std::move(f.value)), f.target) ? 1 : 0;
  g.rebuild();
  stats.nodes_added = g.nodeCount() - before;
  return stats;
}

}  // namespace tacit::isel
