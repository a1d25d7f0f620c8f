// The building blocks the rule files share (rules_shared.h).
#include "isel/rules_shared.h"

#include "isel/isa_analysis.h"

namespace tacit::isel::rules_shared {

std::optional<int64_t> tileBelow(const std::set<int64_t>& sizes, int64_t extent) {
  std::optional<int64_t> best;
  for (int64_t s : sizes) {
    if (s > 0 && s < extent && extent % s == 0 && (!best || s > *best)) best = s;
  }
  return best;
}

std::vector<hlo::SliceDim> fullSlice(const hlo::Shape& s) {
  std::vector<hlo::SliceDim> out;
  for (int64_t d : s.dims())
    out.push_back({0, d, 1});
  return out;
}

ClassId sliceDim(IrBuilder& b, ClassId x, int64_t dim, int64_t start, int64_t limit) {
  std::vector<hlo::SliceDim> sl = fullSlice(b.shape(x));
  sl[static_cast<size_t>(dim)] = {start, limit, 1};
  return b.slice(x, sl);
}

ClassId tiled(IrBuilder& b, ClassId whole, int64_t dim, int64_t extent, int64_t tile,
              const std::function<ClassId(int64_t, int64_t)>& part) {
  std::vector<ClassId> parts;
  for (int64_t at = 0; at < extent; at += tile) {
    ClassId p = part(at, at + tile);
    b.egraph().unite(p, sliceDim(b, whole, dim, at, at + tile));
    parts.push_back(p);
  }
  return b.concatenate(parts, dim);
}

Rewrite elementwiseRewrite(
    IrBuilder& b, std::string name, HloOpcode op, egraph::ApplierReads reads,
    std::function<std::optional<ClassId>(const OpDesc&, ClassId, std::vector<ClassId>)> apply) {
  int arity = elementwiseArity(op);
  PatternBuilder pb(b.ir().lang());
  std::vector<PatternBuilder::Ref> kids;
  for (int i = 0; i < arity; ++i)
    kids.push_back(pb.var("x" + std::to_string(i)));
  Pattern p = pb.build(pb.node(b.ir().opFor(op), AttrMatch::bind("e"), kids));
  Pattern keep = p;
  return Rewrite(std::move(name), std::move(p),
                 [&b, keep, arity, apply](EGraph&, ClassId matched,
                                          const Subst& s) -> std::optional<ClassId> {
                   std::vector<ClassId> operands;
                   for (int i = 0; i < arity; ++i)
                     operands.push_back(s[keep.var("x" + std::to_string(i))]);
                   return apply(bound(b, keep, s, "e"), matched, std::move(operands));
                 })
      .reads(reads);
}

std::optional<Cut> concatOf(IrBuilder& b, ClassId c) {
  std::optional<Cut> cut;
  b.egraph().forEachNode(c, [&](NodeId n) {
    if (cut) return;
    egraph::ENode e = b.egraph().node(n);
    if (b.ir().opcodeOf(e.op()) != HloOpcode::kConcatenate || e.arity() < 2) return;
    Cut k;
    k.dim = (*b.ir().opDesc(e.attr()).attrs.dimensions)[0];
    k.bounds.push_back(0);
    for (ClassId part : e.children()) {
      k.parts.push_back(part);
      k.bounds.push_back(k.bounds.back() + b.shape(part).dim(k.dim));
    }
    cut = std::move(k);
  });
  return cut;
}

}  // namespace tacit::isel::rules_shared
