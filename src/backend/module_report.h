// What `tacit run-module` prints (docs/backend.md, "Module execution"): the steps of a module run
// in order — which ran on the accelerator (their operations, instructions executed and the spec's
// cost) and which on the host (with the reason each stays there) — the totals and, when the run
// was verified, the outcome.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "backend/module_program.h"
#include "backend/module_run.h"

namespace tacit::backend {

struct ModuleRunReport {
  struct Step {
    bool accelerator = false;
    std::vector<std::string> operations;  // the names of the operations it computed
    std::string opcode;                   // a host step's
    std::string reason;                   // why a host step stays on the host
    int64_t instructions = 0, cost = 0, hbm_bytes = 0;
    double seconds = 0;
  };
  std::string module, isa;
  uint64_t seed = 0;
  int64_t operations = 0, offloaded = 0;  // the entry's operations (plumbing aside)
  std::vector<Step> steps;                // accelerator and host steps, in execution order
  int64_t accelerator_steps = 0, host_steps = 0, instructions = 0, cost = 0;
  // Bytes the accelerator steps moved between HBM and the on-chip buffers: a value passed from
  // one operation to the next inside a region never crosses (docs/backend.md).
  int64_t hbm_bytes = 0;
  double accelerator_seconds = 0, host_seconds = 0;
  // Set when verified: empty when every output equals the HLO evaluator's, else the first
  // difference.
  std::optional<std::string> mismatch;
  std::string text() const;
  std::string json() const;
};

ModuleRunReport moduleRunReport(const ModuleProgram& program, const ModuleRun& run,
                                const std::string& isa, uint64_t seed);

}  // namespace tacit::backend
