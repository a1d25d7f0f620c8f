#include "backend/coverage.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "backend/region_kernel.h"
#include "support/strings.h"

namespace tacit::backend {

using hlo::HloInstruction;
using hlo::HloOpcode;

double operationFlops(const HloInstruction& op) {
  const hlo::Shape& r = op.shape();
  if (!r.isArray()) return 0;
  const double results = static_cast<double>(r.elementCount());
  const hlo::HloAttributes& a = op.attrs();
  switch (op.opcode()) {
    case HloOpcode::kDot: {
      double depth = 1;
      if (a.dot_dims) {
        for (int64_t d : a.dot_dims->lhs_contracting)
          depth *= static_cast<double>(op.operand(0)->shape().dims()[static_cast<size_t>(d)]);
      }
      return 2 * results * depth;
    }
    case HloOpcode::kConvolution: {
      // Each result element sums the kernel's elements of one output feature.
      const hlo::Shape& k = op.operand(1)->shape();
      if (!a.conv_dims || !k.isArray()) return 0;
      const double outputs =
          static_cast<double>(k.dims()[static_cast<size_t>(a.conv_dims->kernel_output_feature)]);
      return 2 * results * static_cast<double>(k.elementCount()) / std::max(1.0, outputs);
    }
    case HloOpcode::kReduce:
    case HloOpcode::kReduceWindow:
      return op.operandCount() > 0 && op.operand(0)->shape().isArray()
                 ? static_cast<double>(op.operand(0)->shape().elementCount())
                 : 0;
    default:
      break;
  }
  const hlo::OpcodeCategory c = hlo::opcodeCategory(op.opcode());
  const bool elementwise =
      c == hlo::OpcodeCategory::kUnary || c == hlo::OpcodeCategory::kTranscendental ||
      c == hlo::OpcodeCategory::kBinary || c == hlo::OpcodeCategory::kComparison ||
      c == hlo::OpcodeCategory::kTernary;
  return elementwise ? results : 0;
}

const std::string kConvolutionRow = "convolution";

CoverageReport coverageOf(const ModulePartition& partition, const std::string& isa) {
  CoverageReport report;
  report.module = partition.module->name();
  report.isa = isa;
  report.compiles = partition.compiles;
  report.convolutions_lowered = partition.convolutions_lowered;
  report.convolutions_kept = partition.convolutions_kept;
  report.fusions_inlined = partition.fusions_inlined;
  std::unordered_set<const HloInstruction*> offloaded;
  for (const AcceleratorRegion& r : partition.regions) {
    offloaded.insert(r.operations.begin(), r.operations.end());
    report.regions.push_back(
        {r.operations.size(), static_cast<int64_t>(r.compiled.program.statementCount())});
  }
  std::unordered_map<const HloInstruction*, const std::string*> reason;
  for (const HostOperation& h : partition.host)
    reason[h.operation] = &h.reason;
  std::map<std::string, OpcodeCoverage> by_opcode;
  for (const HloInstruction* op : partition.operations) {
    const std::string& opcode =
        partition.convolution_gemms.count(op) ? kConvolutionRow : op->opcodeSpelling();
    OpcodeCoverage& row = by_opcode[opcode];
    row.opcode = opcode;
    const double flops = operationFlops(*op);
    const double bytes = operationBytes(*op);
    ++row.operations;
    row.flops += flops;
    row.bytes += bytes;
    if (offloaded.count(op)) {
      ++row.offloaded;
      row.flops_offloaded += flops;
      row.bytes_offloaded += bytes;
    } else {
      auto why = reason.find(op);
      ++row.reasons[why != reason.end() ? *why->second : "not asked"];
    }
  }
  for (auto& [name, row] : by_opcode) {
    report.operations += row.operations;
    report.offloaded += row.offloaded;
    report.flops += row.flops;
    report.flops_offloaded += row.flops_offloaded;
    report.bytes += row.bytes;
    report.bytes_offloaded += row.bytes_offloaded;
    report.opcodes.push_back(std::move(row));
  }
  return report;
}

CoverageReport coverage(const isel::Target& target, const hlo::HloModule& module,
                        const CoverageOptions& options) {
  return coverageOf(partition(target, module, options), target.isa().name);
}

std::string share(double part, double whole) {
  if (whole <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%.1f %%", 100 * part / whole);
  return buf;
}

std::string CoverageReport::text() const {
  std::string out = module + " on " + isa + ": " + std::to_string(offloaded) + " of " +
                    std::to_string(operations) + " operations offloaded, " +
                    share(flops_offloaded, flops) + " of the FLOPs, " +
                    share(bytes_offloaded, bytes) + " of the bytes, in " +
                    plural(static_cast<int64_t>(regions.size()), "region") + " (" +
                    plural(compiles, "compile") + ")\n";
  if (fusions_inlined > 0) out += plural(fusions_inlined, "fusion") + " inlined\n";
  if (convolutions_lowered > 0 || convolutions_kept > 0)
    out += plural(convolutions_lowered, "convolution") +
           " lowered to im2col and a GEMM (the GEMM is "
           "the convolution's row), " +
           std::to_string(convolutions_kept) + " kept as they are\n";
  char line[160];
  std::snprintf(line, sizeof(line), "%-24s %10s %10s %10s %10s\n", "opcode", "operations",
                "offloaded", "FLOPs", "bytes");
  out += line;
  for (const OpcodeCoverage& r : opcodes) {
    std::snprintf(line, sizeof(line), "%-24s %10lld %10lld %10s %10s\n", r.opcode.c_str(),
                  static_cast<long long>(r.operations), static_cast<long long>(r.offloaded),
                  share(r.flops_offloaded, r.flops).c_str(),
                  share(r.bytes_offloaded, r.bytes).c_str());
    out += line;
    for (const auto& [why, n] : r.reasons)
      out += "    " + std::to_string(n) + "x " + why + "\n";
  }
  return out;
}

std::string CoverageReport::json() const {
  nlohmann::json rows = nlohmann::json::array();
  for (const OpcodeCoverage& r : opcodes) {
    nlohmann::json reasons = nlohmann::json::array();
    for (const auto& [why, n] : r.reasons)
      reasons.push_back({{"reason", why}, {"operations", n}});
    rows.push_back({{"opcode", r.opcode},
                    {"operations", r.operations},
                    {"offloaded", r.offloaded},
                    {"flops", r.flops},
                    {"flops_offloaded", r.flops_offloaded},
                    {"bytes", r.bytes},
                    {"bytes_offloaded", r.bytes_offloaded},
                    {"reasons", reasons}});
  }
  nlohmann::json regions_json = nlohmann::json::array();
  for (const OffloadedRegion& r : regions)
    regions_json.push_back({{"operations", r.operations}, {"statements", r.statements}});
  nlohmann::json j = {{"module", module},
                      {"isa", isa},
                      {"operations", operations},
                      {"offloaded", offloaded},
                      {"flops", flops},
                      {"flops_offloaded", flops_offloaded},
                      {"bytes", bytes},
                      {"bytes_offloaded", bytes_offloaded},
                      {"compiles", compiles},
                      {"regions", regions_json},
                      {"convolutions_lowered", convolutions_lowered},
                      {"convolutions_kept", convolutions_kept},
                      {"fusions_inlined", fusions_inlined},
                      {"opcodes", rows}};
  return j.dump(2) + "\n";
}

}  // namespace tacit::backend
