#include "stablehlo/ops.h"

namespace tacit::stablehlo {
namespace {

using hlo::HloOpcode;

constexpr OpInfo kOps[] = {
    {"stablehlo.abs", HloOpcode::kAbs, OpForm::kElementwise},
    {"stablehlo.add", HloOpcode::kAdd, OpForm::kElementwise},
    {"stablehlo.and", HloOpcode::kAnd, OpForm::kElementwise},
    {"stablehlo.atan2", HloOpcode::kAtan2, OpForm::kElementwise},
    {"stablehlo.bitcast_convert", HloOpcode::kBitcastConvert, OpForm::kElementwise},
    {"stablehlo.broadcast_in_dim", HloOpcode::kBroadcast, OpForm::kBroadcastInDim},
    {"stablehlo.cbrt", HloOpcode::kCbrt, OpForm::kElementwise},
    {"stablehlo.ceil", HloOpcode::kCeil, OpForm::kElementwise},
    {"stablehlo.clamp", HloOpcode::kClamp, OpForm::kElementwise},
    {"stablehlo.compare", HloOpcode::kCompare, OpForm::kCompare},
    {"stablehlo.complex", HloOpcode::kComplex, OpForm::kElementwise},
    {"stablehlo.concatenate", HloOpcode::kConcatenate, OpForm::kConcatenate},
    {"stablehlo.constant", HloOpcode::kConstant, OpForm::kConstant},
    {"stablehlo.convert", HloOpcode::kConvert, OpForm::kElementwise},
    {"stablehlo.convolution", HloOpcode::kConvolution, OpForm::kConvolution},
    {"stablehlo.cosine", HloOpcode::kCosine, OpForm::kElementwise},
    {"stablehlo.count_leading_zeros", HloOpcode::kCountLeadingZeros, OpForm::kElementwise},
    {"stablehlo.custom_call", HloOpcode::kCustomCall, OpForm::kCustomCall},
    {"stablehlo.divide", HloOpcode::kDivide, OpForm::kElementwise},
    {"stablehlo.dot", HloOpcode::kDot, OpForm::kDot},
    {"stablehlo.dot_general", HloOpcode::kDot, OpForm::kDotGeneral},
    {"stablehlo.dynamic_slice", HloOpcode::kDynamicSlice, OpForm::kDynamicSlice},
    {"stablehlo.dynamic_update_slice", HloOpcode::kDynamicUpdateSlice, OpForm::kDynamicUpdateSlice},
    {"stablehlo.exponential", HloOpcode::kExponential, OpForm::kElementwise},
    {"stablehlo.exponential_minus_one", HloOpcode::kExponentialMinusOne, OpForm::kElementwise},
    {"stablehlo.floor", HloOpcode::kFloor, OpForm::kElementwise},
    {"stablehlo.imag", HloOpcode::kImag, OpForm::kElementwise},
    {"stablehlo.get_tuple_element", HloOpcode::kGetTupleElement, OpForm::kGetTupleElement},
    {"stablehlo.iota", HloOpcode::kIota, OpForm::kIota},
    {"stablehlo.is_finite", HloOpcode::kIsFinite, OpForm::kElementwise},
    {"stablehlo.log", HloOpcode::kLog, OpForm::kElementwise},
    {"stablehlo.log_plus_one", HloOpcode::kLogPlusOne, OpForm::kElementwise},
    {"stablehlo.logistic", HloOpcode::kLogistic, OpForm::kElementwise},
    {"stablehlo.maximum", HloOpcode::kMaximum, OpForm::kElementwise},
    {"stablehlo.minimum", HloOpcode::kMinimum, OpForm::kElementwise},
    {"stablehlo.multiply", HloOpcode::kMultiply, OpForm::kElementwise},
    {"stablehlo.negate", HloOpcode::kNegate, OpForm::kElementwise},
    {"stablehlo.not", HloOpcode::kNot, OpForm::kElementwise},
    {"stablehlo.optimization_barrier", HloOpcode::kOptBarrier, OpForm::kOptimizationBarrier},
    {"stablehlo.or", HloOpcode::kOr, OpForm::kElementwise},
    {"stablehlo.pad", HloOpcode::kPad, OpForm::kPad},
    {"stablehlo.popcnt", HloOpcode::kPopcnt, OpForm::kElementwise},
    {"stablehlo.power", HloOpcode::kPower, OpForm::kElementwise},
    {"stablehlo.real", HloOpcode::kReal, OpForm::kElementwise},
    {"stablehlo.reduce", HloOpcode::kReduce, OpForm::kReduce},
    {"stablehlo.reduce_window", HloOpcode::kReduceWindow, OpForm::kReduceWindow},
    {"stablehlo.reduce_precision", HloOpcode::kReducePrecision, OpForm::kReducePrecision},
    {"stablehlo.remainder", HloOpcode::kRemainder, OpForm::kElementwise},
    {"stablehlo.reshape", HloOpcode::kReshape, OpForm::kElementwise},
    {"stablehlo.reverse", HloOpcode::kReverse, OpForm::kReverse},
    {"stablehlo.round_nearest_afz", HloOpcode::kRoundNearestAfz, OpForm::kElementwise},
    {"stablehlo.round_nearest_even", HloOpcode::kRoundNearestEven, OpForm::kElementwise},
    {"stablehlo.rsqrt", HloOpcode::kRsqrt, OpForm::kElementwise},
    {"stablehlo.select", HloOpcode::kSelect, OpForm::kElementwise},
    {"stablehlo.shift_left", HloOpcode::kShiftLeft, OpForm::kElementwise},
    {"stablehlo.shift_right_arithmetic", HloOpcode::kShiftRightArithmetic, OpForm::kElementwise},
    {"stablehlo.shift_right_logical", HloOpcode::kShiftRightLogical, OpForm::kElementwise},
    {"stablehlo.sign", HloOpcode::kSign, OpForm::kElementwise},
    {"stablehlo.sine", HloOpcode::kSine, OpForm::kElementwise},
    {"stablehlo.slice", HloOpcode::kSlice, OpForm::kSlice},
    {"stablehlo.sort", HloOpcode::kSort, OpForm::kSort},
    {"stablehlo.sqrt", HloOpcode::kSqrt, OpForm::kElementwise},
    {"stablehlo.subtract", HloOpcode::kSubtract, OpForm::kElementwise},
    {"stablehlo.tan", HloOpcode::kTan, OpForm::kElementwise},
    {"stablehlo.tanh", HloOpcode::kTanh, OpForm::kElementwise},
    {"stablehlo.transpose", HloOpcode::kTranspose, OpForm::kTranspose},
    {"stablehlo.tuple", HloOpcode::kTuple, OpForm::kTuple},
    {"stablehlo.while", HloOpcode::kWhile, OpForm::kWhile},
    {"stablehlo.xor", HloOpcode::kXor, OpForm::kElementwise},
    // CHLO ops with an HLO opcode of their own (JAX writes erf, the hyperbolic and inverse
    // trigonometric functions in CHLO); after the StableHLO entries, so that tan prints as
    // stablehlo.tan.
    {"chlo.acos", HloOpcode::kAcos, OpForm::kElementwise},
    {"chlo.acosh", HloOpcode::kAcosh, OpForm::kElementwise},
    {"chlo.asin", HloOpcode::kAsin, OpForm::kElementwise},
    {"chlo.asinh", HloOpcode::kAsinh, OpForm::kElementwise},
    {"chlo.atanh", HloOpcode::kAtanh, OpForm::kElementwise},
    {"chlo.cosh", HloOpcode::kCosh, OpForm::kElementwise},
    {"chlo.erf", HloOpcode::kErf, OpForm::kElementwise},
    {"chlo.sinh", HloOpcode::kSinh, OpForm::kElementwise},
    {"chlo.tan", HloOpcode::kTan, OpForm::kElementwise},
    {"func.call", HloOpcode::kCall, OpForm::kCall},
    {"func.return", HloOpcode::kUnknown, OpForm::kReturn},
    {"stablehlo.return", HloOpcode::kUnknown, OpForm::kReturn},
};

// Spellings that are another entry's (pretty `call`/`return`).
constexpr std::pair<std::string_view, std::string_view> kAliases[] = {{"call", "func.call"},
                                                                      {"return", "func.return"}};

}  // namespace

const OpInfo* findOp(std::string_view name) {
  for (const auto& [alias, target] : kAliases)
    if (name == alias) name = target;
  for (const OpInfo& op : kOps)
    if (op.name == name) return &op;
  return nullptr;
}

const OpInfo* opFor(hlo::HloOpcode opcode) {
  for (const OpInfo& op : kOps) {
    // dot is written as dot_general (the legacy stablehlo.dot only reads); the return forms have
    // no opcode (kUnknown must not find them).
    if (op.opcode == opcode && op.form != OpForm::kDot && op.form != OpForm::kReturn) return &op;
  }
  return nullptr;
}

std::string supportedOpNames() {
  std::string out;
  for (const OpInfo& op : kOps) {
    if (!out.empty()) out += ", ";
    out += op.name;
  }
  return out;
}

}  // namespace tacit::stablehlo
