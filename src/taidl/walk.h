// The runtime walk of one instruction execution, for the oracle (docs/taidl-api.md).
//
// An instruction execution splits into a cheap control part and a data part. The walk runs the
// control part for concrete attribute values and the machine's register file:
//
//   * checks every `require` (error or warning, per WalkOptions::constraints), in textual order,
//     with the register values at entry;
//   * evaluates the cost (at entry);
//   * executes `set`s in order (mutating `regs`), decides every `if`, runs every `repeat`;
//   * evaluates the start offsets of every buffer access in execution order (declared writes
//     last, in declaration order);
//   * yields the specialisation key: the computational attribute values followed by the control
//     decisions (one word per `if`: 1 taken / 0 not; two per `repeat`: its lower bound and trip
//     count). Equal keys mean the same straight-line data program (specialize.h), so the oracle
//     caches one Specialization per (instruction, key).
//
// The walk resolves nothing by name (every reference is a slot), never allocates once the
// WalkResult has grown to the instruction's size (reuse one WalkResult per thread), and throws
// DiagnosticError located at the caller's CallSite (the program line) with a note pointing into
// the spec for: a violated constraint (in kError mode), a division by zero or inexact division,
// an overflow, and more than kMaxStatementsExecuted statements.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::taidl {

// Where the instruction is executed (the .tasm line), for diagnostics.
struct CallSite {
  std::string file;
  SourceLoc loc;
};

enum class ConstraintMode : uint8_t {
  kError,  // a violated require is a DiagnosticError (the default)
  kWarn,   // reported to WalkOptions::warnings (if given) and execution continues
};

// The bytes of one buffer of the machine, for `let` statements (docs/taidl.md section 4.7).
struct BufferBytes {
  const uint8_t* data = nullptr;
  int64_t size = 0;
};

struct WalkOptions {
  ConstraintMode constraints = ConstraintMode::kError;
  DiagnosticSink* warnings = nullptr;
  CallSite site;
  // The machine's buffers as they are at the instruction's entry (index 0 is HBM), for an
  // instruction with lets; without it such an instruction cannot be walked (an error).
  std::function<BufferBytes(int32_t buffer)> memory;
};

struct SpecKey {
  std::vector<int64_t> words;  // alpha values, then decisions
  friend bool operator==(const SpecKey&, const SpecKey&) = default;
};
struct SpecKeyHash {
  size_t operator()(const SpecKey& k) const;
};

struct WalkResult {
  SpecKey key;
  // Start offsets of every access in execution order, each with one entry per dimension of its
  // buffer's whole tensor (access and unit dimensions; declared slices start units at 0). The
  // Specialization for `key` says where each access's starts begin (SliceAccess::start_offset).
  std::vector<int64_t> starts;
  int64_t cost = 0;
  uint32_t accesses = 0;
  std::vector<int64_t> loops;       // scratch: loop-variable values
  std::vector<int64_t> lets;        // scratch: let-bound values
  std::vector<int64_t> saved_regs;  // scratch: CompiledWalk's register snapshot
};

// Walks instruction `instruction` with `attrs` (alpha then beta, in declaration order; the size
// must be numAttrs()) and the register file `regs` (one value per register, updated in place).
void walk(const Isa& isa, int32_t instruction, std::span<const int64_t> attrs,
          std::span<int64_t> regs, const WalkOptions& options, WalkResult& out);

// The walk of one instruction prepared once for many executions (the oracle's per-instruction
// path): the same WalkResult and register updates as walk(), several times cheaper. It keeps only
// the control statements (sets, accesses, ifs, repeats; ops and constants are data) and
// evaluates expressions without recursion or allocation. It declines — returns false with `regs`
// as they were — whenever walk() would do more than compute a result (a violated require, an
// evaluation failure, the statement limit) or might, and for instructions with lets (which read
// the machine's buffers): the caller then runs walk(), which reports exactly as always. The Isa
// must outlive it.
//
//   CompiledWalk cw(isa, inst);
//   if (!cw.run(attrs, regs, result)) walk(isa, inst, attrs, regs, options, result);
class CompiledWalk {
 public:
  CompiledWalk(const Isa& isa, int32_t instruction);

  // `proven` bit k set: requires_[k] is known to hold for these attributes (provablyHolds), so it
  // is not evaluated.
  bool run(std::span<const int64_t> attrs, std::span<int64_t> regs, WalkResult& out,
           uint64_t proven = 0) const;

 private:
  struct Node {
    const Stmt* stmt = nullptr;
    int32_t body = -1, else_body = -1;  // if/repeat: indices into blocks_
  };
  struct Block {
    std::vector<Node> nodes;  // the control statements, in order
    int64_t statements = 0;   // every statement of the block (walk()'s statement count)
  };
  int32_t compile(const std::vector<Stmt>& body);
  bool block(int32_t index, std::span<const int64_t> attrs, std::span<int64_t> regs,
             WalkResult& out, int64_t& executed) const;

  // Builds flat_starts_ if the body is only accesses whose starts are integers or attributes.
  void flatten();

  const Isa& isa_;
  const Instruction& inst_;
  std::vector<Block> blocks_;  // [0] = the instruction body
  bool has_sets_ = false;
  bool has_lets_ = false;  // declined: walk() reads the buffers
  // The common shape (no set, if or repeat; every start an integer or an attribute): the walk's
  // starts are read off directly, slot >= 0: attrs[slot], else `value`.
  struct FlatStart {
    int32_t slot = -1;
    int64_t value = 0;
  };
  bool flat_ = false;
  std::vector<FlatStart> flat_starts_;
  uint32_t flat_accesses_ = 0;
};

// Static proof for the oracle: true if `requires_[k]` of `instruction` holds (and evaluates
// without failure) for every attribute vector with attrs[i] in [lo[i], hi[i]]. Conservative:
// requires reading registers or loop variables, or using division, are never proven. At most 64
// requires are considered (bit k of CompiledWalk::run's `proven`).
bool provablyHolds(const Isa& isa, int32_t instruction, size_t k, std::span<const int64_t> lo,
                   std::span<const int64_t> hi);

// The instruction calls a macro call stands for (docs/taidl.md section 5): each call's attribute
// values computed from the macro's. The oracle executes them in order like any instructions.
struct ExpandedCall {
  int32_t instruction;
  std::vector<int64_t> attrs;
};
std::vector<ExpandedCall> expandMacro(const Isa& isa, int32_t macro, std::span<const int64_t> attrs,
                                      const CallSite& site = {});

// A DiagnosticError at the call site with a note at the spec offset.
[[noreturn]] void failAtCall(const Isa& isa, const CallSite& site, uint32_t spec_offset,
                             std::string message);

}  // namespace tacit::taidl
