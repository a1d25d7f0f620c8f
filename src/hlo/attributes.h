// What each opcode takes: operand counts, required and optional attributes, and the value form of
// every attribute name XLA's text format knows (docs/hlo.md sections 3 and 4). One table
// shared by the parser (which attributes to accept and how to read them) and the verifier
// (operand counts, required attributes).
#pragma once

#include <cstdint>
#include <string_view>

#include "hlo/opcode.h"

namespace tacit::hlo {

// The `HloModule name, key=value, ...` header attributes XLA knows, in XLA's printing order: the
// parser accepts these, the printer writes them in this order.
inline constexpr std::string_view kModuleHeaderAttributes[] = {
    "is_scheduled",
    "input_output_alias",
    "buffer_donor",
    "alias_passthrough_params",
    "entry_computation_layout",
    "allow_spmd_sharding_propagation_to_parameters",
    "allow_spmd_sharding_propagation_to_output",
    "replica_count",
    "num_partitions",
    "frontend_attributes",
    "origin_recovery_table"};

enum class AttrKind : uint8_t {
  // Typed: stored in HloAttributes fields.
  kDimensions,
  kIndex,
  kIotaDimension,
  kSlice,
  kDynamicSliceSizes,
  kPadding,
  kWindow,
  kDimLabels,
  kFeatureGroupCount,
  kBatchGroupCount,
  kLhsBatchDims,
  kLhsContractingDims,
  kRhsBatchDims,
  kRhsContractingDims,
  kDirection,
  kComparisonType,
  kExponentBits,
  kMantissaBits,
  kIsStable,
  kComputation,          // to_apply=, calls=, ...: one computation (name or inline body)
  kComputationList,      // branch_computations={a, b}, called_computations={...}
  kControlPredecessors,  // control-predecessors={a, b}
  // Raw: kept as canonical text in HloAttributes::raw, validated by form.
  kInt,
  kFloat,
  kBool,
  kBoolOrBoolList,  // parameter_replication={true,false}, allow_spmd_...={true}
  kString,
  kEnum,           // an identifier: kind=kLoop, fft_type=FFT, api_version=...
  kEnumList,       // operand_precision={default,high}
  kIntList,        // {1,2}
  kIntListList,    // source_target_pairs={{0,1},{1,0}}
  kReplicaGroups,  // {{0,1},{2,3}} or [2,2]<=[4] ...
  kShape,          // outfeed_shape=(f32[2], s32[])
  kShapeList,      // operand_layout_constraints={f32[2]{0}, ...}
  kSharding,
  kFrontendAttributes,  // {key="v", key2={json}}
  kBackendConfig,       // "string" or a JSON dict
  kShapedLiteral,       // custom-call literal=s32[] 1
  kBraced,              // metadata, statistics, origin, domain, aliasing, result_accuracy, ...
};

// The value form of an instruction attribute name, or nullopt-like nullptr for names XLA does not
// know.
struct AttrInfo {
  std::string_view name;
  AttrKind kind;
};
const AttrInfo* findAttribute(std::string_view name);

// Operand counts and attributes of one opcode. The counts are the opcode table's arity
// (hlo/opcode.def) where it is fixed. `required`/`optional` are space-separated names; attributes
// every instruction accepts (sharding, metadata, ...) are not listed.
struct OpcodeSpec {
  int min_operands = 0;
  int max_operands = -1;  // -1: unbounded
  std::string_view required;
  std::string_view optional;
};
const OpcodeSpec& opcodeSpec(HloOpcode op);

// True if `name` is an attribute every instruction accepts.
bool isCommonAttribute(std::string_view name);
// True if `op` accepts `name` (common, required or optional for it). Unknown opcodes accept
// every known attribute.
bool attributeAllowed(HloOpcode op, std::string_view name);
// Calls fn(name) for each required attribute of `op`.
template <typename Fn>
void forEachRequiredAttribute(HloOpcode op, Fn&& fn) {
  std::string_view list = opcodeSpec(op).required;
  while (!list.empty()) {
    size_t space = list.find(' ');
    fn(list.substr(0, space));
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
}

}  // namespace tacit::hlo
