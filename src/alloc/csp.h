// The constraint problem of phase 2 (ACT-ALGORITHM.md §4.2), solved with Gecode.
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
  std::chrono::milliseconds time_limit{2000};
};

SolveResult solve(const CspInput& in);

}  // namespace tacit::alloc
