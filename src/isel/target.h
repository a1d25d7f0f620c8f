// One ISA as instruction selection sees it, built once per ISA and shared by every kernel compiled
// for it (docs/isel.md, "Target"): the spec, its selectable units (units.h), what those units need
// of the IR (IsaNeeds, isa_analysis.h) and the IR rules selected for those needs. `tacit compile`
// and generated backends build one per run; each part of a piecewise compile, the explanation of
// the chosen graph and phase 2 use the same one, as the tiling layer's tile kernels will.
#pragma once

#include <vector>

#include "isel/rules.h"
#include "isel/units.h"
#include "taidl/isa.h"

namespace tacit::isel {

class Target {
 public:
  // `isa` must outlive the Target.
  explicit Target(const taidl::Isa& isa);
  Target(const Target&) = delete;
  Target& operator=(const Target&) = delete;

  const taidl::Isa& isa() const { return isa_; }
  const UnitSet& units() const { return units_; }
  const IsaNeeds& needs() const { return needs_; }
  // The IR rules reachable from the units' operators (selectRules), in library order.
  const std::vector<const IrRule*>& rules() const { return rules_; }

 private:
  const taidl::Isa& isa_;
  UnitSet units_;
  IsaNeeds needs_;
  std::vector<const IrRule*> rules_;
};

}  // namespace tacit::isel
