// The constraint problem of phase 2 (docs/algorithm.md §4.2), solved with Gecode.
//
// Variables: every call's β and every storage root's start per access dimension. Constraints:
// CSP1 each call's `require`s (α substituted) and its result slices equal to its address
// functions; CSP2 each operand's slice equal to the address function of the call that reads it;
// CSP3 inputs and results pinned to their HBM bytes, constants and HBM scratch above them;
// CSP4 exact non-overlap of interfering roots: disjoint in at least one access dimension
// (rectangles, not per-dimension separation — the reference implementation's mistake). Search is
// deterministic (fixed variable order, smallest value first) and bounded by a time limit.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>
#include <vector>

#include "alloc/call_info.h"
#include "alloc/schedule.h"
#include "isel/kernel.h"
#include "support/deadline.h"

namespace tacit::alloc {

enum class SolveStatus { kSolved, kInfeasible, kLimit };

struct Placement {
  std::vector<std::vector<int64_t>> attrs;  // per node: α then β (calls only)
  std::vector<std::vector<int64_t>> start;  // per value: start per access dimension
  int64_t hbm_bytes = 0;  // HBM the program needs (inputs, results, data, scratch)
};

struct SolveResult {
  SolveStatus status = SolveStatus::kInfeasible;
  Placement placement;
  std::string reason;  // for kInfeasible: what the propagation found, if it found it early
  double seconds = 0;
};

struct CspInput {
  const taidl::Isa* isa = nullptr;
  const isel::PiiGraph* graph = nullptr;
  const isel::ImportedKernel* kernel = nullptr;
  const isel::Storage* storage = nullptr;
  const std::vector<CallInfo>* calls = nullptr;  // per node (calls only)
  Interference interference;
  Deadline deadline;        // of this solve (AllocOptions: the per-order limit or the compile's)
  uint64_t fail_limit = 0;  // failures the search may meet (0: no limit)
  // For explanations: when non-empty, only the calls marked here post their constraints, and the
  // call `focus` posts only the requires marked in `focus_requires`.
  std::vector<bool> posted;
  int32_t focus = -1;
  std::vector<bool> focus_requires;
};

SolveResult solve(const CspInput& in);

// Why an infeasible problem fails, naming a call, its `require` (text and spec location) and the
// buffers involved: the first call whose constraints fail on their own, else the shortest prefix
// of `order` whose calls (and the non-overlap of the values they touch) fail, its last call and
// the requires without which that prefix could be placed. Each probe is one bounded solve;
// returns "" if a probe reaches its limit or `deadline`.
std::string explainInfeasible(const CspInput& in, const Order& order, Deadline deadline);

}  // namespace tacit::alloc
