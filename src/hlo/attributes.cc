#include "hlo/attributes.h"

#include <algorithm>
#include <vector>

namespace tacit::hlo {
namespace {

using K = AttrKind;

constexpr AttrInfo kAttributes[] = {
    {"algorithm", K::kEnum},
    {"allow_spmd_sharding_propagation_to_output", K::kBoolOrBoolList},
    {"allow_spmd_sharding_propagation_to_parameters", K::kBoolOrBoolList},
    {"api_version", K::kEnum},
    {"async_execution_thread", K::kString},
    {"backend_config", K::kBackendConfig},
    {"batch_group_count", K::kBatchGroupCount},
    {"body", K::kComputation},
    {"branch_computations", K::kComputationList},
    {"called_computations", K::kComputationList},
    {"calls", K::kComputation},
    {"channel_id", K::kInt},
    {"collapsed_slice_dims", K::kIntList},
    {"condition", K::kComputation},
    {"constrain_layout", K::kBool},
    {"control-predecessors", K::kControlPredecessors},
    {"cross_program_prefetch_index", K::kInt},
    {"custom_call_has_side_effect", K::kBool},
    {"custom_call_target", K::kString},
    {"delta", K::kInt},
    {"dim_labels", K::kDimLabels},
    {"dimensions", K::kDimensions},
    {"direction", K::kDirection},
    {"distribution", K::kEnum},
    {"domain", K::kBraced},
    {"dynamic_slice_sizes", K::kDynamicSliceSizes},
    {"epsilon", K::kFloat},
    {"exponent_bits", K::kExponentBits},
    {"false_computation", K::kComputation},
    {"feature_group_count", K::kFeatureGroupCount},
    {"feature_index", K::kInt},
    {"fft_length", K::kIntList},
    {"fft_type", K::kEnum},
    {"frontend_attributes", K::kFrontendAttributes},
    {"index", K::kIndex},
    {"index_vector_dim", K::kInt},
    {"indices_are_sorted", K::kBool},
    {"inferred_dimension", K::kInt},
    {"infeed_config", K::kString},
    {"input_batching_dims", K::kIntList},
    {"inserted_window_dims", K::kIntList},
    {"iota_dimension", K::kIotaDimension},
    {"is_composite", K::kBool},
    {"is_host_transfer", K::kBool},
    {"is_stable", K::kIsStable},
    {"k", K::kInt},
    {"kind", K::kEnum},
    {"largest", K::kBool},
    {"left_side", K::kBool},
    {"lhs_batch_dims", K::kLhsBatchDims},
    {"lhs_contracting_dims", K::kLhsContractingDims},
    {"lhs_ragged_dims", K::kIntList},
    {"literal", K::kShapedLiteral},
    {"lower", K::kBool},
    {"mantissa_bits", K::kMantissaBits},
    {"metadata", K::kBraced},
    {"offset_dims", K::kIntList},
    {"operand_batching_dims", K::kIntList},
    {"operand_layout_constraints", K::kShapeList},
    {"operand_precision", K::kEnumList},
    {"origin", K::kBraced},
    {"outfeed_config", K::kString},
    {"outfeed_shape", K::kShape},
    {"output_to_operand_aliasing", K::kBraced},
    {"padding", K::kPadding},
    {"padding_type", K::kEnum},
    {"parameter_replication", K::kBoolOrBoolList},
    {"replica_groups", K::kReplicaGroups},
    {"result_accuracy", K::kBraced},
    {"rhs_batch_dims", K::kRhsBatchDims},
    {"rhs_contracting_dims", K::kRhsContractingDims},
    {"rhs_group_dims", K::kIntList},
    {"scatter", K::kComputation},
    {"scatter_dims_to_operand_dims", K::kIntList},
    {"scatter_indices_batching_dims", K::kIntList},
    {"schedule", K::kEnum},
    {"select", K::kComputation},
    {"sharding", K::kSharding},
    {"slice", K::kSlice},
    {"slice_sizes", K::kIntList},
    {"source_target_pairs", K::kIntListList},
    {"start_index_map", K::kIntList},
    {"start_indices_batching_dims", K::kIntList},
    {"statistics", K::kBraced},
    {"to_apply", K::kComputation},
    {"transpose_a", K::kEnum},
    {"true_computation", K::kComputation},
    {"type", K::kComparisonType},
    {"unique_indices", K::kBool},
    {"unit_diagonal", K::kBool},
    {"update_window_dims", K::kIntList},
    {"use_global_device_ids", K::kBool},
    {"window", K::kWindow},
};

constexpr std::string_view kCommon[] = {"backend_config",
                                        "control-predecessors",
                                        "frontend_attributes",
                                        "metadata",
                                        "origin",
                                        "parameter_replication",
                                        "sharding",
                                        "statistics"};

constexpr std::string_view kDotOptional =
    "lhs_batch_dims lhs_contracting_dims rhs_batch_dims rhs_contracting_dims operand_precision "
    "algorithm";
constexpr std::string_view kCollective =
    "replica_groups channel_id use_global_device_ids constrain_layout";

using O = HloOpcode;

std::vector<OpcodeSpec> buildTable() {
  // Operand counts come from the opcode table (hlo/opcode.def); a variadic opcode's range and
  // every opcode's attributes are set below.
  std::vector<OpcodeSpec> table(kOpcodeCount);
  for (size_t i = 0; i < kOpcodeCount; ++i) {
    auto op = static_cast<O>(i);
    int arity = opcodeArity(op);
    table[i] =
        arity == kVariadicArity ? OpcodeSpec{0, -1, "", ""} : OpcodeSpec{arity, arity, "", ""};
    if (isTranscendental(op)) table[i].optional = "result_accuracy";
  }
  auto set = [&](O op, std::string_view req, std::string_view opt = "") {
    table[static_cast<size_t>(op)].required = req;
    table[static_cast<size_t>(op)].optional = opt;
  };
  auto setRange = [&](O op, int lo, int hi, std::string_view req = "", std::string_view opt = "") {
    table[static_cast<size_t>(op)] = OpcodeSpec{lo, hi, req, opt};
  };
  set(O::kCompare, "direction", "type");
  set(O::kReducePrecision, "exponent_bits mantissa_bits");
  set(O::kIota, "iota_dimension");
  setRange(O::kTuple, 0, -1);
  set(O::kGetTupleElement, "index");
  setRange(O::kAfterAll, 0, -1);
  set(O::kBroadcast, "", "dimensions");
  set(O::kReshape, "", "inferred_dimension");
  set(O::kTranspose, "dimensions");
  set(O::kReverse, "dimensions");
  setRange(O::kConcatenate, 1, -1, "dimensions");
  set(O::kSlice, "slice");
  setRange(O::kDynamicSlice, 2, -1, "dynamic_slice_sizes");
  setRange(O::kDynamicUpdateSlice, 3, -1);
  set(O::kPad, "padding");
  set(O::kGather, "offset_dims collapsed_slice_dims start_index_map index_vector_dim slice_sizes",
      "indices_are_sorted operand_batching_dims start_indices_batching_dims");
  setRange(O::kScatter, 3, -1,
           "update_window_dims inserted_window_dims scatter_dims_to_operand_dims index_vector_dim "
           "to_apply",
           "indices_are_sorted unique_indices input_batching_dims scatter_indices_batching_dims");
  set(O::kGetDimensionSize, "dimensions");
  set(O::kSetDimensionSize, "dimensions");
  setRange(O::kDynamicReshape, 1, -1);
  set(O::kDot, "", kDotOptional);
  set(O::kRaggedDot, "",
      "lhs_batch_dims lhs_contracting_dims rhs_batch_dims rhs_contracting_dims "
      "lhs_ragged_dims rhs_group_dims operand_precision");
  set(O::kScaledDot, "", kDotOptional);
  set(O::kConvolution, "dim_labels",
      "window feature_group_count batch_group_count operand_precision");
  setRange(O::kReduce, 2, -1, "dimensions to_apply");
  setRange(O::kReduceWindow, 2, -1, "to_apply", "window");
  set(O::kSelectAndScatter, "select scatter", "window padding");
  setRange(O::kMap, 1, -1, "to_apply", "dimensions");
  setRange(O::kSort, 1, -1, "dimensions to_apply", "is_stable");
  set(O::kTopk, "k", "largest");
  setRange(O::kCall, 0, -1, "to_apply", "is_composite");
  set(O::kWhile, "condition body");
  setRange(O::kConditional, 1, -1, "", "true_computation false_computation branch_computations");
  setRange(O::kFusion, 0, -1, "kind calls", "output_to_operand_aliasing");
  setRange(
      O::kCustomCall, 0, -1, "custom_call_target",
      "api_version custom_call_has_side_effect literal schedule to_apply called_computations "
      "output_to_operand_aliasing operand_layout_constraints window dim_labels feature_group_count "
      "batch_group_count padding_type operand_precision");
  set(O::kTriangularSolve, "", "left_side lower unit_diagonal transpose_a");
  set(O::kCholesky, "", "lower");
  set(O::kBatchNormTraining, "epsilon feature_index");
  set(O::kBatchNormInference, "epsilon feature_index");
  set(O::kBatchNormGrad, "epsilon feature_index");
  set(O::kFft, "fft_type fft_length");
  set(O::kRng, "distribution");
  set(O::kRngBitGenerator, "algorithm");
  set(O::kRngGetAndUpdateState, "delta");
  set(O::kDomain, "domain");
  set(O::kInfeed, "", "infeed_config");
  set(O::kOutfeed, "", "outfeed_shape outfeed_config");
  set(O::kSend, "channel_id", "is_host_transfer");
  set(O::kSendDone, "", "channel_id is_host_transfer");
  set(O::kRecv, "channel_id", "is_host_transfer");
  set(O::kRecvDone, "", "channel_id is_host_transfer");
  setRange(O::kAllReduce, 1, -1, "to_apply", kCollective);
  setRange(O::kAllReduceStart, 1, -1, "to_apply", kCollective);
  setRange(O::kReduceScatter, 1, -1, "to_apply dimensions", kCollective);
  setRange(O::kAllGather, 1, -1, "dimensions", kCollective);
  setRange(O::kAllGatherStart, 1, -1, "dimensions", kCollective);
  setRange(O::kAllToAll, 1, -1, "", "dimensions replica_groups channel_id constrain_layout");
  set(O::kRaggedAllToAll, "", "replica_groups channel_id");
  setRange(O::kCollectivePermute, 1, 4, "source_target_pairs", "channel_id slice_sizes");
  setRange(O::kCollectivePermuteStart, 1, 4, "source_target_pairs", "channel_id slice_sizes");
  setRange(O::kCollectiveBroadcast, 1, -1, "", "replica_groups channel_id");
  set(O::kCopyStart, "", "cross_program_prefetch_index");
  setRange(O::kAsyncStart, 0, -1, "calls", "async_execution_thread");
  set(O::kAsyncUpdate, "", "calls async_execution_thread");
  set(O::kAsyncDone, "", "calls async_execution_thread");
  return table;
}

bool listContains(std::string_view list, std::string_view name) {
  while (!list.empty()) {
    size_t space = list.find(' ');
    if (list.substr(0, space) == name) return true;
    if (space == std::string_view::npos) break;
    list.remove_prefix(space + 1);
  }
  return false;
}

}  // namespace

const AttrInfo* findAttribute(std::string_view name) {
  static const std::vector<AttrInfo> sorted = [] {
    std::vector<AttrInfo> v(std::begin(kAttributes), std::end(kAttributes));
    std::sort(v.begin(), v.end(),
              [](const AttrInfo& a, const AttrInfo& b) { return a.name < b.name; });
    return v;
  }();
  auto it = std::lower_bound(sorted.begin(), sorted.end(), name,
                             [](const AttrInfo& a, std::string_view n) { return a.name < n; });
  return it != sorted.end() && it->name == name ? &*it : nullptr;
}

const OpcodeSpec& opcodeSpec(HloOpcode op) {
  static const std::vector<OpcodeSpec> table = buildTable();
  return table[static_cast<size_t>(op)];
}

bool isCommonAttribute(std::string_view name) {
  return std::find(std::begin(kCommon), std::end(kCommon), name) != std::end(kCommon);
}

bool attributeAllowed(HloOpcode op, std::string_view name) {
  if (isCommonAttribute(name)) return true;
  if (op == HloOpcode::kUnknown) return findAttribute(name) != nullptr;
  const OpcodeSpec& spec = opcodeSpec(op);
  return listContains(spec.required, name) || listContains(spec.optional, name);
}

}  // namespace tacit::hlo
