// A whole module's entry computation split into accelerator regions and host operations (issue
// 25; docs/backend.md, "Coverage" and "Module execution"). The question is always the compiler's,
// never a table per ISA: the entry's operations (data plumbing aside) are split into connected
// regions, each region is compiled as a kernel of its own (backend/region_kernel.h), and a region
// that does not compile gives up the operation its diagnostic points at — that operation stays on
// the host, with the diagnostic as its reason — and is asked again as the connected pieces that
// remain. Regions are asked largest first because operations often compile only together (an int8
// GEMM saturated to int8 is a dot, a clamp and converts, which an ISA may compute only as a whole).
//
// Every region is convex: no path leaves it (through host operations, plumbing or other regions)
// and comes back into it, so each region runs as one step and the steps have a topological order
// (backend/module_program.h). A region that is not is split before it is compiled: the operations
// reached by such a path are asked as a region of their own, after the others.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <unordered_set>
#include <vector>

#include "backend/compiler.h"
#include "backend/module_lowering.h"
#include "hlo/instruction.h"
#include "isel/target.h"

namespace tacit::backend {

struct PartitionOptions {
  std::chrono::milliseconds time_limit{2000};  // each region's compile
  int64_t max_compiles = 256;                  // then what is left stays on the host, "not tried"
  size_t max_region = 64;  // operations of a first region (larger components are cut)
  // A region whose operations read and write more than this is not compiled (it stays on the
  // host, "not tried"): compiles of multi-gigabyte tensors exhaust memory (docs/backend.md).
  double max_region_bytes = 256.0 * (1 << 20);
  // Fusions are inlined and convolutions rewritten as im2col and GEMMs first
  // (backend/module_lowering.h), so the partition asks the ISA for a fusion's operations and for
  // a convolution's GEMM and data movement rather than for a fusion or a convolution whole.
  bool lower = true;
};

// Operations offloaded together: one kernel, one program, one step of the module's execution.
struct AcceleratorRegion {
  std::vector<const hlo::HloInstruction*> operations;  // in the computation's order
  // The kernel's parameters, in parameter-number order: values computed outside the region.
  std::vector<const hlo::HloInstruction*> parameters;
  // The values used outside the region (or the entry's root), in the kernel's result order.
  std::vector<const hlo::HloInstruction*> results;
  std::string text;                        // the region kernel, HLO text
  std::unique_ptr<hlo::HloModule> kernel;  // `text` parsed
  CompileResult compiled;
};

struct HostOperation {
  const hlo::HloInstruction* operation = nullptr;
  std::string reason;  // the compiler's diagnostic, or why it was not tried
};

struct ModulePartition {
  // The module given to partition(), the one a run is verified against.
  const hlo::HloModule* source = nullptr;
  // The module partitioned: `source`, or `lowered` when its convolutions were rewritten.
  const hlo::HloModule* module = nullptr;
  std::unique_ptr<hlo::HloModule> lowered;
  int64_t convolutions_lowered = 0, convolutions_kept = 0, fusions_inlined = 0;
  std::unordered_set<const hlo::HloInstruction*> convolution_gemms;  // in `lowered`
  // The entry's operations (plumbing aside), in the computation's order.
  std::vector<const hlo::HloInstruction*> operations;
  std::vector<AcceleratorRegion> regions;  // in the order they compiled
  std::vector<HostOperation> host;         // every other operation, in the computation's order
  int64_t compiles = 0;                    // regions asked
};

// How the target's GEMM units shape the rewrite of convolutions: their smallest depth and column
// extents (backend/module_lowering.h).
ModuleLowering moduleLowering(const isel::Target& target);

// Partitions `module`'s entry computation for the target's ISA (after lowering its convolutions
// when options.lower). The partition points into `module` (or into its own lowered
// copy), which must outlive it.
ModulePartition partition(const isel::Target& target, const hlo::HloModule& module,
                          const PartitionOptions& options = {});

}  // namespace tacit::backend
