#include "isel/to_hlo.h"

namespace tacit::isel {

HloEmitter::HloEmitter(std::string name)
    : module_(std::make_unique<hlo::HloModule>(name)), builder_(std::move(name)) {}

hlo::HloInstruction* HloEmitter::parameter(int64_t number, const hlo::Shape& shape) {
  return builder_.parameter(number, shape);
}

hlo::HloInstruction* HloEmitter::op(const OpDesc& d,
                                    const std::vector<hlo::HloInstruction*>& operands) {
  switch (d.opcode) {
    case hlo::HloOpcode::kConstant:
      return builder_.constant(*d.literal);
    case hlo::HloOpcode::kReduce: {
      hlo::PrimitiveType t = d.shape.elementType();
      hlo::HloComputation*& reducer = reducers_[{d.reducer, t}];
      if (reducer == nullptr)
        reducer = hlo::addScalarReducer(*module_, reducerOpcode(d.reducer), t);
      return builder_.reduce({operands[0]}, {operands[1]}, *d.attrs.dimensions, reducer);
    }
    default:
      return builder_.add(d.opcode, operands, d.attrs, d.shape);
  }
}

std::unique_ptr<hlo::HloModule> HloEmitter::finish(hlo::HloInstruction* root) {
  builder_.addTo(*module_, /*entry=*/true, root);
  return std::move(module_);
}

}  // namespace tacit::isel
