// `tacit optimize` (docs/optimize.md): an Autocomp-style search in which a language model proposes
// program changes and tacit accepts only the ones it can prove: each proposal is parsed, checked
// against the kernel's interface, run on the oracle against the HLO evaluator on several random
// input sets bit for bit, and timed by the timing model; the verified, faster ones form a beam.
// Every rejected proposal is kept with its reason.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "backend/compiler.h"
#include "hlo/instruction.h"
#include "optimize/llm.h"
#include "oracle/program.h"
#include "taidl/isa.h"

namespace tacit::optimize {

struct OptimizeOptions {
  int beam = 2;        // programs kept per iteration
  int iterations = 3;  // rounds of proposals (one per beam member each)
  std::chrono::milliseconds budget{std::chrono::minutes(10)};  // wall time for the rounds
  uint64_t seed = 1;                                           // the menu's dropout
  int verify_sets = 3;        // random input sets each proposal must match on
  double menu_dropout = 0.3;  // each optimisation kind left out of a plan's menu this often
  // A proposal may execute at most this many times the starting program's statements (plus a
  // million): a model's loop bound is data, not a licence to run forever.
  int64_t max_steps_factor = 16;
};

// What became of one proposal.
struct Proposal {
  int iteration = 0;
  int parent = 0;    // the beam member it improves on (0: the starting program)
  std::string form;  // "tasm", "schedule" or "" (nothing usable in the reply)
  bool accepted = false;
  std::string reason;  // why not (a parse error with its position, the first differing
                       // element, the violated constraint, "not faster", ...)
  int64_t cycles = 0;  // the timing model's, when it was measured
  int64_t parent_cycles = 0;
  std::string json() const;  // one line of the proposal log
};

struct OptimizeResult {
  oracle::Program best;
  std::string best_tasm;
  int64_t start_cycles = 0, best_cycles = 0;
  std::vector<Proposal> proposals;
};

// Runs the search from tacit's own program for `kernel` (compiled with `compile`). The result's
// program is the fastest verified one (the starting program when nothing better was found).
// `progress`, if given, receives each proposal as it is decided.
OptimizeResult optimize(const taidl::Isa& isa, const hlo::HloModule& kernel, Llm& llm,
                        const backend::CompileOptions& compile, const OptimizeOptions& options,
                        const std::function<void(const Proposal&)>& progress = {});

// The fenced block of `reply` in `language` ("tasm", "json"): its text, or nullopt.
std::optional<std::string> fencedBlock(const std::string& reply, const std::string& language);

}  // namespace tacit::optimize
