// HLO opcodes.
#pragma once

#include <optional>
#include <string_view>

namespace tacit::hlo {

enum class HloOpcode : uint16_t {
#define TACIT_HLO_OPCODE(id, spelling) id,
#include "hlo/opcode.def"
#undef TACIT_HLO_OPCODE
  kUnknown,  // an opcode this version of tacit does not know; its spelling is kept on the
             // instruction
};

std::string_view opcodeName(HloOpcode op);
std::optional<HloOpcode> parseOpcode(std::string_view spelling);
// Spellings older XLA accepted, with the modern one as a hint: tuple-select, trace,
// cross-replica-sum -> all-reduce, generate-token -> after-all. Empty if not an old name.
std::string_view modernSpelling(std::string_view old_spelling);

}  // namespace tacit::hlo
