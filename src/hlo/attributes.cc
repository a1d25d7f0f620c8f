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
  constexpr size_t n = static_cast<size_t>(O::kUnknown) + 1;
  std::vector<OpcodeSpec> table(n, OpcodeSpec{0, -1, "", ""});
  auto set = [&](O op, int lo, int hi, std::string_view req = "", std::string_view opt = "") {
    table[static_cast<size_t>(op)] = OpcodeSpec{lo, hi, req, opt};
  };
  for (size_t i = 0; i < n - 1; ++i) {
    auto op = static_cast<O>(i);
    if (isElementwiseUnary(op)) set(op, 1, 1, "", isTranscendental(op) ? "result_accuracy" : "");
    if (isElementwiseBinary(op)) set(op, 2, 2);
  }
  set(O::kCompare, 2, 2, "direction", "type");
  set(O::kConvert, 1, 1);
  set(O::kBitcastConvert, 1, 1);
  set(O::kBitcast, 1, 1);
  set(O::kOptBarrier, 1, 1);
  set(O::kSelect, 3, 3);
  set(O::kClamp, 3, 3);
  set(O::kReducePrecision, 1, 1, "exponent_bits mantissa_bits");
  set(O::kParameter, 0, 0);
  set(O::kConstant, 0, 0);
  set(O::kIota, 0, 0, "iota_dimension");
  set(O::kTuple, 0, -1);
  set(O::kGetTupleElement, 1, 1, "index");
  set(O::kAfterAll, 0, -1);
  set(O::kAddDependency, 2, 2);
  set(O::kPartitionId, 0, 0);
  set(O::kReplicaId, 0, 0);
  set(O::kBroadcast, 1, 1, "", "dimensions");
  set(O::kReshape, 1, 1, "", "inferred_dimension");
  set(O::kTranspose, 1, 1, "dimensions");
  set(O::kReverse, 1, 1, "dimensions");
  set(O::kConcatenate, 1, -1, "dimensions");
  set(O::kSlice, 1, 1, "slice");
  set(O::kDynamicSlice, 2, -1, "dynamic_slice_sizes");
  set(O::kDynamicUpdateSlice, 3, -1);
  set(O::kPad, 2, 2, "padding");
  set(O::kGather, 2, 2,
      "offset_dims collapsed_slice_dims start_index_map index_vector_dim slice_sizes",
      "indices_are_sorted operand_batching_dims start_indices_batching_dims");
  set(O::kScatter, 3, -1,
      "update_window_dims inserted_window_dims scatter_dims_to_operand_dims index_vector_dim "
      "to_apply",
      "indices_are_sorted unique_indices input_batching_dims scatter_indices_batching_dims");
  set(O::kGetDimensionSize, 1, 1, "dimensions");
  set(O::kSetDimensionSize, 2, 2, "dimensions");
  set(O::kDynamicReshape, 1, -1);
  set(O::kDot, 2, 2, "", kDotOptional);
  set(O::kRaggedDot, 3, 3, "",
      "lhs_batch_dims lhs_contracting_dims rhs_batch_dims rhs_contracting_dims "
      "lhs_ragged_dims rhs_group_dims operand_precision");
  set(O::kScaledDot, 4, 4, "", kDotOptional);
  set(O::kConvolution, 2, 2, "dim_labels",
      "window feature_group_count batch_group_count operand_precision");
  set(O::kReduce, 2, -1, "dimensions to_apply");
  set(O::kReduceWindow, 2, -1, "to_apply", "window");
  set(O::kSelectAndScatter, 3, 3, "select scatter", "window padding");
  set(O::kMap, 1, -1, "to_apply", "dimensions");
  set(O::kSort, 1, -1, "dimensions to_apply", "is_stable");
  set(O::kTopk, 1, 1, "k", "largest");
  set(O::kCall, 0, -1, "to_apply", "is_composite");
  set(O::kWhile, 1, 1, "condition body");
  set(O::kConditional, 1, -1, "", "true_computation false_computation branch_computations");
  set(O::kFusion, 0, -1, "kind calls", "output_to_operand_aliasing");
  set(O::kCustomCall, 0, -1, "custom_call_target",
      "api_version custom_call_has_side_effect literal schedule to_apply called_computations "
      "output_to_operand_aliasing operand_layout_constraints window dim_labels feature_group_count "
      "batch_group_count padding_type operand_precision");
  set(O::kTriangularSolve, 2, 2, "", "left_side lower unit_diagonal transpose_a");
  set(O::kCholesky, 1, 1, "", "lower");
  set(O::kBatchNormTraining, 3, 3, "epsilon feature_index");
  set(O::kBatchNormInference, 5, 5, "epsilon feature_index");
  set(O::kBatchNormGrad, 5, 5, "epsilon feature_index");
  set(O::kFft, 1, 1, "fft_type fft_length");
  set(O::kRng, 2, 2, "distribution");
  set(O::kRngBitGenerator, 1, 1, "algorithm");
  set(O::kRngGetAndUpdateState, 0, 0, "delta");
  set(O::kDomain, 1, 1, "domain");
  set(O::kInfeed, 1, 1, "", "infeed_config");
  set(O::kOutfeed, 2, 2, "", "outfeed_shape outfeed_config");
  set(O::kSend, 2, 2, "channel_id", "is_host_transfer");
  set(O::kSendDone, 1, 1, "", "channel_id is_host_transfer");
  set(O::kRecv, 1, 1, "channel_id", "is_host_transfer");
  set(O::kRecvDone, 1, 1, "", "channel_id is_host_transfer");
  set(O::kAllReduce, 1, -1, "to_apply", kCollective);
  set(O::kAllReduceStart, 1, -1, "to_apply", kCollective);
  set(O::kAllReduceDone, 1, 1);
  set(O::kReduceScatter, 1, -1, "to_apply dimensions", kCollective);
  set(O::kAllGather, 1, -1, "dimensions", kCollective);
  set(O::kAllGatherStart, 1, -1, "dimensions", kCollective);
  set(O::kAllGatherDone, 1, 1);
  set(O::kAllToAll, 1, -1, "", "dimensions replica_groups channel_id constrain_layout");
  set(O::kRaggedAllToAll, 6, 6, "", "replica_groups channel_id");
  set(O::kCollectivePermute, 1, 4, "source_target_pairs", "channel_id slice_sizes");
  set(O::kCollectivePermuteStart, 1, 4, "source_target_pairs", "channel_id slice_sizes");
  set(O::kCollectivePermuteDone, 1, 1);
  set(O::kCollectiveBroadcast, 1, -1, "", "replica_groups channel_id");
  set(O::kCopyStart, 1, 1, "", "cross_program_prefetch_index");
  set(O::kCopyDone, 1, 1);
  set(O::kAsyncStart, 0, -1, "calls", "async_execution_thread");
  set(O::kAsyncUpdate, 1, 1, "", "calls async_execution_thread");
  set(O::kAsyncDone, 1, 1, "", "calls async_execution_thread");
  set(O::kStochasticConvert, 2, 2);
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

bool isTranscendental(HloOpcode op) {
  switch (op) {
    case O::kExponential:
    case O::kExponentialMinusOne:
    case O::kLog:
    case O::kLogPlusOne:
    case O::kLogistic:
    case O::kSqrt:
    case O::kCbrt:
    case O::kRsqrt:
    case O::kTanh:
    case O::kErf:
    case O::kSine:
    case O::kCosine:
    case O::kTan:
    case O::kSinh:
    case O::kCosh:
    case O::kAcos:
    case O::kAcosh:
    case O::kAsin:
    case O::kAsinh:
    case O::kAtanh:
      return true;
    default:
      return false;
  }
}

bool isElementwiseUnary(HloOpcode op) {
  if (isTranscendental(op)) return true;
  switch (op) {
    case O::kAbs:
    case O::kCeil:
    case O::kFloor:
    case O::kNot:
    case O::kNegate:
    case O::kSign:
    case O::kPopcnt:
    case O::kCountLeadingZeros:
    case O::kIsFinite:
    case O::kReal:
    case O::kImag:
    case O::kRoundNearestAfz:
    case O::kRoundNearestEven:
    case O::kCopy:
      return true;
    default:
      return false;
  }
}

bool isElementwiseBinary(HloOpcode op) {
  switch (op) {
    case O::kAdd:
    case O::kSubtract:
    case O::kMultiply:
    case O::kDivide:
    case O::kRemainder:
    case O::kPower:
    case O::kMaximum:
    case O::kMinimum:
    case O::kAtan2:
    case O::kComplex:
    case O::kAnd:
    case O::kOr:
    case O::kXor:
    case O::kShiftLeft:
    case O::kShiftRightArithmetic:
    case O::kShiftRightLogical:
    case O::kStochasticConvert:
      return true;
    default:
      return false;
  }
}

}  // namespace tacit::hlo
