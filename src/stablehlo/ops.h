// The op subset: each StableHLO op tacit reads and writes, the HLO opcode it maps to, and the form
// of its attributes. The one table the conversion (convert.cc), the printer (printer.cc) and the
// diagnostics read.
#pragma once

#include <string>
#include <string_view>

#include "hlo/opcode.h"

namespace tacit::stablehlo {

enum class OpForm {
  kElementwise,  // operands and result only (unary, binary, select, clamp, convert, reshape, ...)
  kConstant,
  kIota,
  kCompare,
  kBroadcastInDim,
  kTranspose,
  kReverse,
  kConcatenate,
  kSlice,
  kDynamicSlice,
  kDynamicUpdateSlice,
  kPad,
  kDotGeneral,
  kDot,  // the legacy stablehlo.dot (read only; written as dot_general)
  kConvolution,
  kReduce,
  kReduceWindow,
  kWhile,
  kSort,
  kOptimizationBarrier,
  kReducePrecision,
  kTuple,
  kGetTupleElement,
  kCustomCall,
  kCall,    // func.call / call
  kReturn,  // func.return / return / stablehlo.return
};

struct OpInfo {
  std::string_view name;  // "stablehlo.add"
  hlo::HloOpcode opcode;  // kUnknown for func.call/return forms without one
  OpForm form;
};

// The entry of an op name (pretty or generic spelling; `return` and `call` too), or nullptr.
const OpInfo* findOp(std::string_view name);
// The op an HLO opcode is written as, or nullptr when it has none in the subset.
const OpInfo* opFor(hlo::HloOpcode opcode);
// "stablehlo.abs, stablehlo.add, ..." for diagnostics.
std::string supportedOpNames();

}  // namespace tacit::stablehlo
