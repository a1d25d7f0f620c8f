// Specialisation: the straight-line data program of one instruction for one specialisation key
// (walk.h), for the oracle (docs/taidl-api.md).
//
// Replaying the instruction with the key's alpha values and control decisions gives the ordered
// list of buffer accesses and the HLO computing the written values from the read values. Reads
// that follow a write to the same buffer must observe it, so the program is split into phases:
// each phase reads its slices, runs its HLO computation, then writes its slices (in order).
//
//   phase k HLO:  parameters = reads[0..r) ++ carried-in values   (parameter numbers in order)
//                 result     = tuple(writes[0..w) ++ carried-out values)
//
// Values computed in one phase and used in a later one are carried: phase k's carried-out
// values are, in order, phase k+1's carried-in parameters. A phase without outputs has no module
// (its reads still happen and are bounds-checked). Build once per key and cache; a
// Specialization is immutable and can be shared between threads (compile one hlo::EvalPlan per
// phase and thread).
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "hlo/instruction.h"
#include "taidl/walk.h"

namespace tacit::taidl {

struct SliceAccess {
  bool write = false;
  int32_t buffer = -1;
  hlo::Shape shape;           // the slice: its extent in every dimension of the buffer tensor
  uint32_t start_offset = 0;  // its starts in WalkResult::starts: [start_offset, + rank)
  uint32_t phase = 0;
  uint32_t index = 0;        // reads: parameter number in the phase; writes: tuple index
  uint32_t spec_offset = 0;  // the statement in the spec (for diagnostics)
};

struct Phase {
  std::vector<uint32_t> reads;             // access indices, in parameter order
  std::vector<uint32_t> writes;            // access indices, in result order (also the write order)
  uint32_t carried_in = 0;                 // parameters after the reads
  uint32_t carried_out = 0;                // result elements after the writes
  std::unique_ptr<hlo::HloModule> module;  // null if the phase has no outputs
};

struct Specialization {
  int32_t instruction = -1;
  SpecKey key;
  std::vector<SliceAccess> accesses;  // in execution order (the walk's order)
  std::vector<Phase> phases;
  size_t start_count = 0;  // WalkResult::starts.size() for this key
};

// Builds the specialisation of `instruction` for `key` (produced by walk()). Errors (a type that
// is invalid for these attribute values, a constant too large) are DiagnosticErrors at `site`.
std::unique_ptr<Specialization> specialize(const Isa& isa, int32_t instruction, const SpecKey& key,
                                           const CallSite& site = {});

// Checks every access of a walk against its buffer (HBM has `hbm_bytes` bytes): a start below 0
// or a slice past the end is a DiagnosticError at `site` naming the instruction, its attribute
// values, the slice and the buffer bounds.
void checkAccesses(const Isa& isa, const Specialization& spec, const WalkResult& walk,
                   std::span<const int64_t> attrs, int64_t hbm_bytes, const CallSite& site = {});

}  // namespace tacit::taidl
