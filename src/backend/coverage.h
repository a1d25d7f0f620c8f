// `tacit coverage`: which operations of a whole HLO module an ISA can compute, in which regions
// (issue 25's partitioning; docs/backend.md, "Coverage"). The question is the compiler's, never a
// table per ISA: the entry computation's operations (data plumbing aside) are split into
// connected regions, each region is compiled as a kernel of its own (the values it takes from
// outside as parameters, the values used outside as results), and a region that does not compile
// gives up the operation its diagnostic points at — that operation stays on the host, with the
// diagnostic as its reason — and is asked again as the connected pieces that remain. Regions are
// asked largest first because operations often compile only together (Gemmini's int8 GEMM is a
// dot, a clamp and a convert: none of them alone). Per opcode the report counts the operations
// and the share of the module's FLOPs and bytes offloaded.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "hlo/instruction.h"
#include "isel/target.h"

namespace tacit::backend {

struct CoverageOptions {
  std::chrono::milliseconds time_limit{2000};  // each region's compile
  int64_t max_compiles = 256;                  // then what is left stays on the host, "not tried"
  size_t max_region = 64;  // operations of a first region (larger components are cut)
  // A region whose operations read and write more than this is not compiled (it stays on the
  // host, "not tried"): compiles of multi-gigabyte tensors exhaust memory (docs/backend.md).
  double max_region_bytes = 256.0 * (1 << 20);
};

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
  std::string text() const;
  std::string json() const;
};

CoverageReport coverage(const isel::Target& target, const hlo::HloModule& module,
                        const CoverageOptions& options = {});

// "12.5 %" (part of whole), "-" when whole is 0: the report's shares.
std::string share(double part, double whole);

// What one operation computes: 2 per multiply-add of a dot or a convolution, one per result
// element of an elementwise operation, one per input element of a reduction, 0 for data
// movement.
double operationFlops(const hlo::HloInstruction& op);

}  // namespace tacit::backend
