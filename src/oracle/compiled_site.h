// Compiled call sites (internal to oracle::Machine; docs/oracle.md, "Compiled call sites"): a
// call whose every access is an affine function of the enclosing loop variables, proven inside
// its buffer over the loop ranges, runs without the walk; a loop whose body is only such calls
// runs them from a flat list, and proofs that the body's calls touch nothing an earlier queued
// execution writes let them skip the executor's conflict test.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "oracle/exec.h"
#include "oracle/program.h"
#include "taidl/walk.h"

namespace tacit::oracle::detail {

struct CompiledSite {
  // What it was compiled for (a later run reuses it only for an identical call in identical
  // loop ranges and HBM size; the Stmt may have changed in between).
  int32_t unit = -1;
  std::vector<Affine> attrs;
  std::vector<int64_t> loop_lo, loop_hi;
  int64_t hbm_bytes = 0;
  uint64_t serial = 0;  // unique per compilation in the machine (what a proof was made for)
  Entry* entry = nullptr;
  int64_t cost = 0;
  // A direct kernel's call whose every execution passes Executor::directSafe (directSafeAlways):
  // the test is skipped.
  bool direct_safe = false;
  std::vector<int64_t> base;  // per access
  // The terms of the accesses whose offset moves with a loop variable, grouped by access, in one
  // flat array (a call walks it in one loop without nested bounds): the first term of an access
  // starts from its base. A call rewrites only these in `offsets` (the others keep their base).
  struct Term {
    int64_t coeff = 0;
    int64_t start = 0;  // the access's base if `first`
    uint32_t access = 0;
    uint32_t depth = 0;
    bool first = false;
  };
  std::vector<Term> terms;
  mutable std::vector<int64_t> offsets;  // per access, for Executor::executePlaced

  // Sets `offsets` for the loop variables' values `loops`.
  void place(const int64_t* loops) const {
    int64_t* off = offsets.data();
    for (const Term& t : terms) {
      int64_t x = t.first ? t.start : off[t.access];
      off[t.access] = x + t.coeff * loops[t.depth];
    }
  }
};

// What is known of a call after its first execution through the full path.
struct ExecutedCall {
  const Stmt* stmt = nullptr;
  std::span<const int64_t> attrs;  // the attribute values of that execution
  Entry* entry = nullptr;          // the entry it used
  uint64_t proven = 0;             // bit k: require k holds over the loop ranges
  bool attrs_fit = false;          // every attribute's range over the loop ranges fits in int64
  const std::vector<int64_t>* loop_lo = nullptr;  // the enclosing loop variables' ranges
  const std::vector<int64_t>* loop_hi = nullptr;
};

// Compiles `call` into `out` (its accesses, cost and entry) if it qualifies: see compiled_site.cc.
bool compileCall(const taidl::Isa& isa, const taidl::CompiledWalk& walk,
                 std::span<const int64_t> regs, int64_t hbm_bytes, const ExecutedCall& call,
                 CompiledSite& out);

// The values an affine expression takes with loop[d] in [lo[d], hi[d]] (false: unknown or
// overflow).
bool affineRange(const Affine& a, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi,
                 int64_t* min, int64_t* max);

// Per call of a loop body made of compiled calls (run in this order per iteration): whether none
// of its accesses overlaps a write of an execution of a call that may be queued (a batchable
// entry, or one not checked yet) earlier in the same loop instance: an earlier call of the same
// iteration or any call of an earlier one. Offsets are affine in the loop variables, the loop's
// own at depth `depth`, over its whole range.
std::vector<uint8_t> fastDisjoint(const std::vector<const CompiledSite*>& body, size_t depth);

// Whether every execution of compiled call `c` of a direct kernel (Entry::direct) writes each of
// its slices either exactly onto a slice it reads (the kernel loading before storing) or apart
// from it, whatever the loop values: Executor::directSafe always holds.
bool directSafeAlways(const CompiledSite& c);

}  // namespace tacit::oracle::detail
