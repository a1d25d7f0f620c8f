// HLO opcodes: the enumerators, their spellings, operand counts and categories, all read from
// the one table hlo/opcode.def.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>

namespace tacit::hlo {

enum class HloOpcode : uint16_t {
#define TACIT_HLO_OPCODE(id, spelling, arity, category) id,
#include "hlo/opcode.def"
#undef TACIT_HLO_OPCODE
  kUnknown,  // an opcode this version of tacit does not know; its spelling is kept on the
             // instruction
};

// What kind of operation an opcode is (hlo/opcode.def explains each category).
enum class OpcodeCategory : uint8_t {
  kUnary,
  kTranscendental,
  kBinary,
  kComparison,
  kTernary,
  kConversion,
  kOther,
};

// The arity of an opcode whose operand count is a range (the bounds are in attributes.cc).
inline constexpr int kVariadicArity = -1;

namespace detail {
struct OpcodeTraits {
  int arity;
  OpcodeCategory category;
};
inline constexpr OpcodeTraits kOpcodeTraits[] = {
#define TACIT_HLO_OPCODE(id, spelling, arity, category) {arity, OpcodeCategory::category},
#include "hlo/opcode.def"
#undef TACIT_HLO_OPCODE
    {kVariadicArity, OpcodeCategory::kOther},  // kUnknown
};
}  // namespace detail

// The number of opcodes, kUnknown included (a size for per-opcode tables).
inline constexpr size_t kOpcodeCount = static_cast<size_t>(HloOpcode::kUnknown) + 1;

// The operand count of `op`, or kVariadicArity.
constexpr int opcodeArity(HloOpcode op) {
  return detail::kOpcodeTraits[static_cast<size_t>(op)].arity;
}
constexpr OpcodeCategory opcodeCategory(HloOpcode op) {
  return detail::kOpcodeTraits[static_cast<size_t>(op)].category;
}
// Transcendental unary opcodes (they accept result_accuracy).
constexpr bool isTranscendental(HloOpcode op) {
  return opcodeCategory(op) == OpcodeCategory::kTranscendental;
}
// kUnary or kTranscendental.
constexpr bool isElementwiseUnary(HloOpcode op) {
  return opcodeCategory(op) == OpcodeCategory::kUnary || isTranscendental(op);
}
constexpr bool isElementwiseBinary(HloOpcode op) {
  return opcodeCategory(op) == OpcodeCategory::kBinary;
}

std::string_view opcodeName(HloOpcode op);
std::optional<HloOpcode> parseOpcode(std::string_view spelling);
// Spellings older XLA accepted, with the modern one as a hint: tuple-select, trace,
// cross-replica-sum -> all-reduce, generate-token -> after-all. Empty if not an old name.
std::string_view modernSpelling(std::string_view old_spelling);

}  // namespace tacit::hlo
