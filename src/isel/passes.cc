#include "isel/passes.h"

#include <algorithm>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "hlo/evaluator.h"
#include "isel/to_hlo.h"
#include "isel/view.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

struct BaseView {
  ClassId base;
  StridedView view;
  friend bool operator==(const BaseView&, const BaseView&) = default;
};

constexpr size_t kMaxViewsPerClass = 8;

class ViewIndex {
 public:
  ViewIndex(const egraph::EGraph& g, IrBuilder& b) : g_(g), b_(b) {}

  const std::vector<BaseView>& views(ClassId c) {
    c = g_.find(c);
    auto it = memo_.find(c.value);
    if (it != memo_.end()) return it->second;
    std::vector<BaseView> result{{c, StridedView::identity(b_.shape(c).byteSize())}};
    if (!visiting_.insert(c.value).second) return memo_[c.value] = result;  // cycle: identity only
    for (NodeId n : g_.nodes(c)) {
      egraph::ENode e = g_.node(n);
      auto opcode = b_.ir().opcodeOf(e.op());
      if (!opcode || !isMovement(*opcode)) continue;
      ClassId child = g_.find(e.child(0));
      std::vector<BaseView> child_views = views(child);  // copy: the memo may rehash
      const OpDesc& d = b_.ir().opDesc(e.attr());
      for (const BaseView& bv : child_views) {
        if (bv.base == c) continue;
        auto v = applyMovement(bv.view, b_.shape(child), *opcode, d.attrs, d.shape);
        if (!v) continue;
        BaseView candidate{bv.base, std::move(*v)};
        if (std::find(result.begin(), result.end(), candidate) == result.end())
          result.push_back(candidate);
      }
    }
    // Deterministic cap: keep the identity and the views of the oldest bases.
    std::stable_sort(result.begin() + 1, result.end(), [](const BaseView& a, const BaseView& x) {
      return a.base.value < x.base.value;
    });
    if (result.size() > kMaxViewsPerClass) result.resize(kMaxViewsPerClass);
    visiting_.erase(c.value);
    return memo_[c.value] = result;
  }

 private:
  const egraph::EGraph& g_;
  IrBuilder& b_;
  std::unordered_map<uint32_t, std::vector<BaseView>> memo_;
  std::unordered_set<uint32_t> visiting_;
};

std::string viewKey(ClassId base, const hlo::Shape& type, const StridedView& v) {
  egraph::AttrWriter w;
  w.i64(base.value).u8(static_cast<uint8_t>(type.elementType())).ints(type.dims()).i64(v.offset);
  for (const ViewDim& d : v.dims)
    w.i64(d.extent).i64(d.stride);
  return std::string(w.bytes());
}

bool isByteVector(const hlo::Shape& s) {
  return s.elementType() == hlo::PrimitiveType::kU8 && s.rank() == 1;
}

}  // namespace

const hlo::Literal* literalOf(const egraph::EGraph& g, const IrLanguage& ir, ClassId c) {
  for (NodeId n : g.nodes(g.find(c))) {
    egraph::ENode e = g.node(n);
    if (ir.opcodeOf(e.op()) == HloOpcode::kConstant) return ir.opDesc(e.attr()).literal.get();
  }
  return nullptr;
}

PassStats runViewPass(egraph::EGraph& g, IrBuilder& b) {
  PassStats stats;
  ViewIndex index(g, b);
  std::unordered_map<std::string, ClassId> owner;
  std::vector<std::pair<ClassId, ClassId>> unions;
  struct SliceRequest {
    ClassId target, base;
    int64_t start, limit;
  };
  std::vector<SliceRequest> slices;
  std::vector<ClassId> classes(g.classes().begin(), g.classes().end());
  for (ClassId c : classes) {
    const hlo::Shape& type = b.shape(c);
    for (const BaseView& bv : index.views(c)) {
      auto [it, inserted] = owner.emplace(viewKey(bv.base, type, bv.view), c);
      if (!inserted && !g.same(it->second, c)) unions.emplace_back(it->second, c);
      bool range_of_bytes = bv.base != c && isByteVector(type) && isByteVector(b.shape(bv.base)) &&
                            bv.view.isContiguous() && bv.view.byteCount() < b.shape(bv.base).dim(0);
      if (range_of_bytes)
        slices.push_back({c, bv.base, bv.view.offset, bv.view.offset + bv.view.byteCount()});
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

PassStats runRowSplitPass(egraph::EGraph& g, IrBuilder& b, int64_t max_rows) {
  PassStats stats;
  ViewIndex index(g, b);
  std::vector<ClassId> split;
  for (ClassId c : std::vector<ClassId>(g.classes().begin(), g.classes().end())) {
    const hlo::Shape& type = b.shape(c);
    if (type.rank() < 2 || type.dim(0) < 2 || type.dim(0) > max_rows) continue;
    for (const BaseView& bv : index.views(c)) {
      if (bv.base == c || !isByteVector(b.shape(bv.base)) || bv.view.isContiguous()) continue;
      // Rows contiguous: refined to (rows, row bytes), the row part is one unit-stride run.
      int64_t row_bytes = type.byteSize() / type.dim(0);
      int64_t extents[] = {type.dim(0), row_bytes};
      auto parts = refine(bv.view, extents);
      if (!parts) continue;
      const std::vector<ViewDim>& row = (*parts)[1];
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
