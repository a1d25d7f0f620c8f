#include "isel/target.h"

namespace tacit::isel {

Target::Target(const taidl::Isa& isa)
    : isa_(isa),
      units_(buildUnits(isa)),
      needs_(analyzeIsa(isa, units_)),
      rules_(selectRules(needs_)) {}

}  // namespace tacit::isel
