// What the rule files (rules_dot.cc, rules_convert.cc, rules_elementwise.cc, rules_movement.cc)
// share: the building blocks of their rewrites and the factory of each rule, which rules.cc lists
// in the library's order. Private to isel's rules; everything else uses rules.h.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "egraph/pattern.h"
#include "egraph/rewrite.h"
#include "isel/ir_builder.h"
#include "isel/rules.h"

namespace tacit::isel {

namespace rules_shared {

// The names every rule file uses unqualified (`using namespace rules_shared;`).
using egraph::AttrMatch;
using egraph::EGraph;
using egraph::Pattern;
using egraph::PatternBuilder;
using egraph::Rewrite;
using egraph::Subst;
using hlo::HloOpcode;

inline const OpDesc& bound(IrBuilder& b, const Pattern& p, const Subst& s, std::string_view var) {
  return b.ir().opDesc(s[p.attrVar(var)]);
}

// A rule example: an HLO module whose entry computation is `body` (instruction lines, each after a
// newline), so each example lists only its instructions.
inline std::string entryModule(std::string_view body) {
  return "HloModule e\nENTRY m {" + std::string(body) + "}";
}

// The largest tile size below `extent` that divides it, if any.
std::optional<int64_t> tileBelow(const std::set<int64_t>& sizes, int64_t extent);

std::vector<hlo::SliceDim> fullSlice(const hlo::Shape& s);

ClassId sliceDim(IrBuilder& b, ClassId x, int64_t dim, int64_t start, int64_t limit);

// concatenate_dim(part(0, tile), part(tile, 2*tile), ...) over [0, extent), each part also united
// with the same slice of `whole` (so units can match a tile wherever the kernel slices it).
ClassId tiled(IrBuilder& b, ClassId whole, int64_t dim, int64_t extent, int64_t tile,
              const std::function<ClassId(int64_t, int64_t)>& part);

// A rewrite for each elementwise operator of `ops`, binding its operands x0.. and its desc `e`;
// `reads` is what `apply` reads of the e-graph (egraph::ApplierReads).
egraph::Rewrite elementwiseRewrite(
    IrBuilder& b, std::string name, hlo::HloOpcode op, egraph::ApplierReads reads,
    std::function<std::optional<ClassId>(const OpDesc&, ClassId, std::vector<ClassId>)> apply);

struct Cut {
  int64_t dim = -1;
  std::vector<ClassId> parts;
  std::vector<int64_t> bounds;  // part i spans [bounds[i], bounds[i+1]) along dim
};

// A concatenate node of class c, if it has one (the first, deterministically).
std::optional<Cut> concatOf(IrBuilder& b, ClassId c);

}  // namespace rules_shared

// rules_dot.cc
std::unique_ptr<IrRule> makeDotSplitFree(bool rows);
std::unique_ptr<IrRule> makeDotSplitContracting();
std::unique_ptr<IrRule> makeDotPadRows();
std::unique_ptr<IrRule> makeDotOrient();
std::unique_ptr<IrRule> makeDotRankOne();
// rules_convert.cc
std::unique_ptr<IrRule> makeMovementThroughConvert();
std::unique_ptr<IrRule> makeClampMinMax();
std::unique_ptr<IrRule> makeRoundIntegral();
std::unique_ptr<IrRule> makeConvertGuardedS32();
std::unique_ptr<IrRule> makeConvertNarrowSignedness();
// rules_elementwise.cc
std::unique_ptr<IrRule> makeElementwiseOverConcat();
std::unique_ptr<IrRule> makeElementwiseSplit(bool rows);
std::unique_ptr<IrRule> makeElementwiseVectorRows();
std::unique_ptr<IrRule> makeElementwiseFlatten();
// rules_movement.cc
std::unique_ptr<IrRule> makeSliceOfBroadcast();
std::unique_ptr<IrRule> makeFlattenOverConcat();
std::unique_ptr<IrRule> makeMovementOverConcat();

}  // namespace tacit::isel
