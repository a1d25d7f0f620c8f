// `tacit coverage`: which operations of a whole HLO module an ISA can compute, in which regions
// (issue 25; docs/backend.md, "Coverage"). The report is derived from the module's partition
// (backend/partition.h): per opcode the operations and the share of the module's FLOPs and bytes
// offloaded, and the reasons the others stay on the host.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "backend/partition.h"
#include "hlo/instruction.h"
#include "isel/target.h"

namespace tacit::backend {

using CoverageOptions = PartitionOptions;

struct OffloadedRegion {
  size_t operations = 0;
  int64_t statements = 0;  // of its program (loops not unrolled)
};

struct OpcodeCoverage {
  std::string opcode;
  int64_t operations = 0, offloaded = 0;
  double flops = 0, flops_offloaded = 0;   // 2 per multiply-add, 1 per elementwise result
  double bytes = 0, bytes_offloaded = 0;   // operands and result
  std::map<std::string, int64_t> reasons;  // why operations stayed on the host: how many each
};

struct CoverageReport {
  std::string module, isa;
  std::vector<OpcodeCoverage> opcodes;  // by opcode name
  int64_t operations = 0, offloaded = 0;
  double flops = 0, flops_offloaded = 0, bytes = 0, bytes_offloaded = 0;
  std::vector<OffloadedRegion> regions;  // in the order they compiled
  int64_t compiles = 0;                  // regions asked
  // Convolutions rewritten as im2col and GEMMs (backend/module_lowering.h; each one's GEMM is
  // its "convolution" row, the data movement its own opcodes' rows) and left as they are.
  int64_t convolutions_lowered = 0, convolutions_kept = 0;
  int64_t fusions_inlined = 0;  // their operations are the rows of their own opcodes
  std::string text() const;
  std::string json() const;
};

CoverageReport coverage(const isel::Target& target, const hlo::HloModule& module,
                        const CoverageOptions& options = {});
// The report of a partition already made (for the ISA named `isa`).
CoverageReport coverageOf(const ModulePartition& partition, const std::string& isa);

// "12.5 %" (part of whole), "-" when whole is 0: the report's shares.
std::string share(double part, double whole);

// What one operation computes: 2 per multiply-add of a dot or a convolution, one per result
// element of an elementwise operation, one per input element of a reduction, 0 for data
// movement.
double operationFlops(const hlo::HloInstruction& op);

}  // namespace tacit::backend
