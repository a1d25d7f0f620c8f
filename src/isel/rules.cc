// The rule library: every IR→IR rule, in the order they are tried, and the selection of those an
// ISA needs (rules.h). The rules themselves live by topic: rules_dot.cc, rules_convert.cc,
// rules_elementwise.cc, rules_movement.cc.
#include "isel/rules.h"

#include <algorithm>

#include "hlo/attributes.h"
#include "isel/rules_shared.h"

namespace tacit::isel {
namespace {

using hlo::HloOpcode;

std::vector<std::unique_ptr<IrRule>> makeLibrary() {
  std::vector<std::unique_ptr<IrRule>> rules;
  rules.push_back(makeDotSplitFree(true));
  rules.push_back(makeDotSplitFree(false));
  rules.push_back(makeDotSplitContracting());
  rules.push_back(makeDotPadRows());
  rules.push_back(makeDotOrient());
  rules.push_back(makeDotRankOne());
  rules.push_back(makeMovementThroughConvert());
  rules.push_back(makeClampMinMax());
  rules.push_back(makeRoundIntegral());
  rules.push_back(makeConvertGuardedS32());
  rules.push_back(makeConvertNarrowSignedness());
  rules.push_back(makeSliceOfBroadcast());
  rules.push_back(makeElementwiseOverConcat());
  rules.push_back(makeElementwiseSplit(true));
  rules.push_back(makeElementwiseSplit(false));
  rules.push_back(makeElementwiseVectorRows());
  rules.push_back(makeElementwiseFlatten());
  rules.push_back(makeFlattenOverConcat());
  rules.push_back(makeMovementOverConcat());
  return rules;
}

}  // namespace

std::string IrRule::rewriteName(HloOpcode op) const {
  return name() + "-" + std::string(hlo::opcodeName(op));
}

const std::vector<std::unique_ptr<IrRule>>& ruleLibrary() {
  static const std::vector<std::unique_ptr<IrRule>> rules = makeLibrary();
  return rules;
}

std::vector<const IrRule*> selectRules(const IsaNeeds& needs) {
  std::set<HloOpcode> used = needs.ops;
  std::vector<bool> chosen(ruleLibrary().size(), false);
  bool changed = true;
  while (changed) {
    changed = false;
    for (size_t i = 0; i < ruleLibrary().size(); ++i) {
      if (chosen[i]) continue;
      const IrRule& r = *ruleLibrary()[i];
      const std::vector<HloOpcode>& rhs = r.rhsOps();
      bool produces_used =
          std::any_of(rhs.begin(), rhs.end(), [&](HloOpcode op) { return used.count(op) != 0; });
      if (!produces_used) continue;
      chosen[i] = true;
      changed = true;
      for (HloOpcode op : r.lhsOps())
        used.insert(op);
    }
  }
  std::vector<const IrRule*> out;
  for (size_t i = 0; i < chosen.size(); ++i) {
    if (chosen[i]) out.push_back(ruleLibrary()[i].get());
  }
  return out;
}

}  // namespace tacit::isel
