// Test helpers: evaluate a term taken out of an isel e-graph with the HLO evaluator, on a kernel's
// inputs given as their HBM bytes (the `input` leaves of the IR).
#pragma once

#include <cstring>
#include <map>
#include <random>
#include <span>
#include <stdexcept>
#include <vector>

#include "egraph/term.h"
#include "hlo_eval/evaluator.h"
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

// Evaluates `t` (HLO operators over `input` and `undef` leaves). `inputs[i]` are the bytes of
// kernel parameter i. An `undef` leaf (a region whose content does not matter) holds arbitrary
// bits — NaNs, infinities and extreme integers included: a term that names one must equal the
// kernel whatever they are.
inline hlo::Literal evaluateTerm(const IrLanguage& ir, const egraph::Term& t,
                                 std::span<const hlo::Literal> inputs) {
  HloEmitter emitter("term");
  std::vector<hlo::Literal> args(inputs.begin(), inputs.end());
  std::vector<hlo::HloInstruction*> params;
  for (size_t i = 0; i < inputs.size(); ++i)
    params.push_back(emitter.parameter(static_cast<int64_t>(i), inputs[i].shape()));
  std::mt19937_64 bits(1);
  std::vector<hlo::HloInstruction*> value(t.size());
  for (size_t i = 0; i < t.size(); ++i) {
    const egraph::TermNode& n = t[i];
    if (n.op == ir.inputOp()) {
      value[i] = params.at(static_cast<size_t>(ir.inputDesc(n.attr).parameter));
      continue;
    }
    if (n.op == ir.undefOp()) {
      hlo::Literal any(ir.opDesc(n.attr).shape);
      for (size_t k = 0; k < any.byteCount(); ++k)
        any.bytes()[k] = static_cast<uint8_t>(bits());
      value[i] = emitter.parameter(static_cast<int64_t>(args.size()), any.shape());
      args.push_back(std::move(any));
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
  return hlo::evaluate(*module, args);
}

}  // namespace tacit::isel::testing
