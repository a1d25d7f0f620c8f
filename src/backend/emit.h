// Emission (docs/algorithm.md §5): a compiled program as an oracle::Program (printed as .tasm by
// the oracle's printer), as a TAIDL-TO-style Python kernel, or as JSON.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "backend/cost.h"
#include "isel/kernel.h"
#include "oracle/program.h"

namespace tacit::backend {

// Tensor names: the kernel's parameter names made into identifiers (`Arg_0.1` -> `Arg_0_1`),
// `out` (or `out0`, `out1`, ... for tuples) for the results, `c0`, `c1`, ... for constants. A value
// with a non-default layout is declared with its physical (tiled) shape: its bytes in HBM. Calls
// that read words with lets get them loaded first, from a table placed past the program's HBM at
// `hbm_alignment` (let_words.h).
oracle::Program buildProgram(const taidl::Isa& isa, const isel::UnitSet& units,
                             const isel::PiiGraph& graph, const alloc::AllocResult& allocation,
                             const isel::ImportedKernel& kernel, const std::string& name,
                             int64_t hbm_alignment);

// `def NAME(kernel, api):` returning an `@kernel(hbm=..., input=[...], constant=[...],
// output=[...])` function that calls `api.<instr>(attr=value, ...)`; macros are expanded into
// their instructions (TAIDL-TO has no macros).
std::string emitPython(const taidl::Isa& isa, const oracle::Program& program);

struct JsonExtras {
  ProgramCosts costs;
  std::string cost_model;
  std::string statistics_json;  // an object, spliced in as "statistics"
};
std::string emitJson(const taidl::Isa& isa, const oracle::Program& program,
                     const JsonExtras& extras);

// The instruction calls (instruction index, attribute values) a call of a unit executes: itself, or
// a macro's calls expanded recursively.
std::vector<std::pair<int32_t, std::vector<int64_t>>> expandCall(const taidl::Isa& isa,
                                                                 bool is_macro, int32_t unit,
                                                                 const std::vector<int64_t>& attrs);

// A valid identifier for a tensor name.
std::string identifier(const std::string& name);

}  // namespace tacit::backend
