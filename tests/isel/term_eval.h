// Test helpers: evaluate a term taken out of an isel e-graph with the HLO evaluator, on a kernel's
// inputs given as their HBM bytes (the `input` leaves of the IR).
#pragma once

#include <cstring>
#include <map>
#include <span>
#include <stdexcept>
#include <vector>

#include "egraph/term.h"
#include "hlo/evaluator.h"
#include "isel/kernel.h"
#include "isel/to_hlo.h"

namespace tacit::isel::testing {

// The HBM bytes of a kernel input: its physical (laid out) tensor as u8[bytes].
inline hlo::Literal hbmBytes(const hlo::Literal& logical, const hlo::Shape& with_layout) {
  hlo::Literal physical = toPhysical(logical, with_layout);
  int64_t n = static_cast<int64_t>(physical.byteCount());
  hlo::Literal bytes(hlo::Shape(hlo::PrimitiveType::kU8, {n}));
  std::memcpy(bytes.bytes(), physical.bytes(), static_cast<size_t>(n));
  return bytes;
}

// Evaluates `t` (HLO operators over `input` leaves only). `inputs[i]` are the bytes of kernel
// parameter i.
inline hlo::Literal evaluateTerm(const IrLanguage& ir, const egraph::Term& t,
                                 std::span<const hlo::Literal> inputs) {
  HloEmitter emitter("term");
  std::vector<hlo::HloInstruction*> params;
  for (size_t i = 0; i < inputs.size(); ++i)
    params.push_back(emitter.parameter(static_cast<int64_t>(i), inputs[i].shape()));
  std::vector<hlo::HloInstruction*> value(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const egraph::TermNode& n = t[i];
    if (n.op == ir.inputOp()) {
      value[i] = params.at(static_cast<size_t>(ir.inputDesc(n.attr).parameter));
      continue;
    }
    if (!ir.isHloOp(n.op))
      throw std::logic_error("term has a non-HLO node: " + ir.describe(n.op, n.attr));
    std::vector<hlo::HloInstruction*> operands;
    for (uint32_t c : t.children(i))
      operands.push_back(value[c]);
    value[i] = emitter.op(ir.opDesc(n.attr), operands);
  }
  auto module = emitter.finish(value[t.root()]);
  return hlo::evaluate(*module, inputs);
}

}  // namespace tacit::isel::testing
