// Direct loop nests (internal to oracle::Machine; docs/oracle.md, "Direct loop nests"): a loop
// whose every statement, nested loops included, is a compiled call that runs at once and in
// place whenever nothing is queued (a native kernel proven safe in place, or byte moves between
// distinct buffers of an entry that never batches) runs without the executor's dispatch. Each
// call's argument addresses are affine in the loop variables; they are resolved against the
// buffers once per loop instance, the writes are marked once for the instance, and an iteration
// is address arithmetic and kernel calls. Nothing is queued, checked or counted per call: the
// caller counts the statements and executions of the instance at once.
#pragma once

#include <cstdint>
#include <vector>

#include "oracle/compiled_site.h"
#include "oracle/exec.h"

namespace tacit::oracle::detail {

class DirectNest {
 public:
  // Building, in program order, the body of the loop the nest runs: calls (Executor::runsAtOnce)
  // and loops with constant bounds around them.
  void clear();
  void beginLoop(int64_t lo, int64_t hi);
  void endLoop();
  void call(const CompiledSite& c);

  // Runs iterations [lo, hi) of the nest's loop, at depth loops.size() - 1 (the enclosing loop
  // variables set), on `state`, with nothing queued.
  void run(State& state, std::vector<int64_t>& loops, int64_t lo, int64_t hi);

  // Per iteration of the nest's loop: the statements block() would count (each statement once
  // per execution, a loop once per iteration), and each call's executions.
  int64_t stepsPerIteration() const { return open_.front().steps; }
  template <typename F>
  void forEachCall(F&& f) const {
    for (const Node& n : nodes_) {
      if (n.site != nullptr) f(*n.site, n.executions);
    }
  }

 private:
  // A call (site != nullptr) or a loop (its body: the nodes up to `end`).
  struct Node {
    const CompiledSite* site = nullptr;
    hlo::DirectKernel::Fn fn = nullptr;  // null: the entry's moves
    int64_t n = 0;
    uint32_t args = 0;                // its argument addresses in args_
    uint32_t ptrs = 0, ptrs_end = 0;  // the addresses that are slices, in ptrs_
    int64_t executions = 0;           // per iteration of the nest's loop
    int64_t lo = 0, hi = 0;           // a loop's bounds
    uint32_t end = 0;                 // a loop's body: nodes [index + 1, end)
  };
  // An argument address: a buffer's data, plus a constant, plus coeff * loop value per term.
  struct Ptr {
    uint32_t arg = 0;
    int32_t buffer = -1;
    int64_t offset = 0;  // the access's base offset, plus a move's offset in its slice
    uint32_t terms = 0, terms_end = 0;
    uint8_t* data = nullptr;  // resolved per instance: the buffer's data
  };
  struct Term {
    int64_t coeff = 0;
    uint32_t depth = 0;
  };

  void addPtr(const CompiledSite& c, uint32_t access, int64_t extra, uint32_t arg);
  void body(uint32_t begin, uint32_t end, std::vector<int64_t>& loops);
  void markWrites(State& state) const;

  std::vector<Node> nodes_;
  std::vector<uint8_t*> args_;  // every call's kernel arguments (moves: destination, source)
  std::vector<Ptr> ptrs_;
  std::vector<Term> terms_;
  // Building: per open loop (the nest's own first), its node, its executions per iteration of
  // the nest's loop and the statements its body counts so far.
  struct Open {
    uint32_t node = 0;
    int64_t executions = 1;
    int64_t steps = 0;
  };
  std::vector<Open> open_{Open{}};
};

}  // namespace tacit::oracle::detail
