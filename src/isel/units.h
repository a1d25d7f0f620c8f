// Selectable units and their patterns (docs/algorithm.md §3.3(b)).
//
// A unit is an instruction or a macro of the ISA whose symbolic semantics (taidl/semantics.h) is
// register-free. For every case of its semantics and every output it writes, the output's value
// graph becomes a pattern: a DAG of HLO operators over the unit's inputs, with types and operator
// attributes given as expressions over α. Chains of invertible data movement (reshape,
// bitcast-convert, transpose, reverse, copy — and pads/slices where α makes them identities) next
// to the inputs and at the output are cut off the
// pattern: the matcher constructs them instead of requiring the kernel to spell them the same way,
// and the view pass (passes.h) decides whether what it constructed is something the kernel has.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "hlo/opcode.h"
#include "taidl/isa.h"

namespace tacit::isel {

struct Unit {
  bool is_macro = false;
  int32_t index = -1;  // into Isa::instructions or Isa::macros
  std::string name;
  int32_t num_alpha = 0;
  int32_t num_attrs = 0;
  const taidl::Semantics* semantics = nullptr;
  const std::vector<taidl::AlphaRange>* ranges = nullptr;
};

// One node of a pattern: an input of the unit or one of its operations (indexes SymCase::ops).
struct PatternNode {
  int32_t op = -1;                // index into SymCase::ops
  int32_t input = -1;             // >= 0 for an input (kParameter op)
  std::vector<int32_t> children;  // pattern node indices
  int32_t uses = 0;               // parents within the pattern
};

struct UnitPattern {
  int32_t unit = -1;
  int32_t case_index = 0;
  int32_t output = 0;
  const taidl::SymCase* sym = nullptr;
  std::vector<PatternNode> nodes;  // nodes[i] stands for sym->ops[nodes[i].op]
  int32_t root = -1;
  // Output chain: movement nodes from the root down (root first); the unit's result is
  // chain(skeleton value).
  std::vector<int32_t> out_chain;
  int32_t skeleton_root = -1;
  // Per input: the movement chain above it (top first, the input last) and the chain's top, which
  // the skeleton binds to a class.
  struct InputChain {
    std::vector<int32_t> chain;
    int32_t leaf = -1;
  };
  std::vector<InputChain> inputs;
  bool pure_movement = false;  // the whole pattern is one movement chain from input 0
  // Per α slot: the case's data uses it (an operator's type, attributes or literal, a slice's
  // address or extent). An α only constraints and let indices use (where a one-trip loop starts,
  // which micro-op a GEMM reads) changes no value the unit computes: the program's free choice.
  std::vector<bool> data_alpha;
};

// A pattern per (selectable unit, case, output), and for each unit that yields none the reason.
struct UnitSet {
  std::vector<Unit> units;
  std::vector<UnitPattern> patterns;
  std::vector<std::string> not_selectable;  // per unit: why it has no pattern (empty if it has)
};

UnitSet buildUnits(const taidl::Isa& isa);

bool isInvertibleMovement(hlo::HloOpcode op);
// Whether input k of a case is read from the slice an output writes (an in-place operand, e.g. an
// accumulator): the instruction destroys that operand's value.
bool readsInPlace(const taidl::SymCase& c, size_t input);
// Chain links that are not invertible in general: rules use them only where α makes them the
// identity (a pad by zero elements, a full slice).
bool isIdentityLink(hlo::HloOpcode op);
// The value of a type dimension at the top of the unit's α ranges (constant dims as they are):
// the largest one for dimensions that grow with α. nullopt if a range is unbounded.
std::optional<int64_t> largestOverAlpha(const taidl::Expr& e, const Unit& u);

}  // namespace tacit::isel
