#include "hlo/opcode.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <utility>

namespace tacit::hlo {
namespace {

constexpr std::pair<HloOpcode, std::string_view> kOpcodes[] = {
#define TACIT_HLO_OPCODE(id, spelling, arity, category) {HloOpcode::id, spelling},
#include "hlo/opcode.def"
#undef TACIT_HLO_OPCODE
};

}  // namespace

std::string_view opcodeName(HloOpcode op) {
  auto index = static_cast<size_t>(op);
  return index < std::size(kOpcodes) ? kOpcodes[index].second : std::string_view("unknown");
}

std::optional<HloOpcode> parseOpcode(std::string_view spelling) {
  // kOpcodes is sorted by spelling (the .def file is generated sorted).
  auto it =
      std::lower_bound(std::begin(kOpcodes), std::end(kOpcodes), spelling,
                       [](const auto& entry, std::string_view s) { return entry.second < s; });
  if (it != std::end(kOpcodes) && it->second == spelling) return it->first;
  return std::nullopt;
}

std::string_view modernSpelling(std::string_view old_spelling) {
  if (old_spelling == "cross-replica-sum") return "all-reduce";
  if (old_spelling == "generate-token") return "after-all";
  if (old_spelling == "tuple-select") return "select";
  if (old_spelling == "trace") return "custom-call";
  return {};
}

}  // namespace tacit::hlo
