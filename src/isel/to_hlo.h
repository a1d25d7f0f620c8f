// Rebuilds HLO from e-graph operator descriptions: constant folding evaluates one operator, and the
// tests evaluate whole terms (rule soundness, candidate equivalence) with hlo::evaluate.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "hlo/builder.h"
#include "isel/ir.h"

namespace tacit::isel {

class HloEmitter {
 public:
  explicit HloEmitter(std::string name = "term");

  hlo::HloInstruction* parameter(int64_t number, const hlo::Shape& shape);
  // One operator; reducers become scalar computations of the module (one per kind and type).
  hlo::HloInstruction* op(const OpDesc& desc, const std::vector<hlo::HloInstruction*>& operands);
  // Finishes the entry computation with `root` and returns the module.
  std::unique_ptr<hlo::HloModule> finish(hlo::HloInstruction* root);

 private:
  std::unique_ptr<hlo::HloModule> module_;
  hlo::HloBuilder builder_;
  std::map<std::pair<Reducer, hlo::PrimitiveType>, hlo::HloComputation*> reducers_;
};

}  // namespace tacit::isel
