// Instruction graphs (docs/algorithm.md §2.1): what phase 1 hands to phase 2.
//
// A DAG of calls of selectable units with α fixed and β unknown, identity views (slices and
// concatenations of values along a buffer's access dimensions, which emit no code), kernel inputs
// and constants (HBM data). Every value lives in one buffer as a slice of whole units; its extent
// per access dimension follows from its type. A call produces every output of its unit — also the
// ones nobody reads (clobbers), because the instruction writes them anyway and phase 2 must
// reserve their slices.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/literal.h"
#include "isel/units.h"

namespace tacit::isel {

// kUndef: an HBM region whose old content does not matter (an operand the instruction overwrites).
// kOverlayView: a region assembled by calls that each rewrite one block of it (ir.h OverlayDesc);
// each operand sits at its `part_offsets` byte in the region.
enum class PiiKind : uint8_t {
  kInput,
  kConstant,
  kCall,
  kSliceView,
  kConcatView,
  kUndef,
  kOverlayView
};

struct PiiValue {
  int32_t producer = -1;  // node index
  int32_t output = 0;     // output index of the producer (calls); 0 otherwise
  int32_t buffer = 0;     // buffer index in the ISA (0 = HBM)
  hlo::Shape shape;       // the logical type
};

struct PiiNode {
  PiiKind kind = PiiKind::kCall;
  // kCall
  int32_t unit = -1;
  int32_t case_index = 0;
  std::vector<int64_t> alpha;
  // Operands (calls: in the unit's input order; views: the viewed values).
  std::vector<int32_t> operands;
  // Values produced (calls: one per output of the unit's case; others: one).
  std::vector<int32_t> outputs;
  // kSliceView: start and limit per access dimension of the operand's buffer.
  std::vector<int64_t> view_start, view_limit;
  // kConcatView: the access dimension.
  int32_t concat_dim = -1;
  // kOverlayView: the byte offset of each operand in the region.
  std::vector<int64_t> part_offsets;
  // kInput: the entry parameter; kConstant: the value.
  int32_t parameter = -1;
  std::shared_ptr<const hlo::Literal> literal;
};

struct PiiGraph {
  std::vector<PiiNode> nodes;  // topologically ordered: operands before users
  std::vector<PiiValue> values;
  std::vector<int32_t> results;  // the value of each kernel result (in HBM)

  size_t callCount() const;
  // A canonical hash of the graph (equal graphs, equal hashes) for deduplicating candidates.
  uint64_t fingerprint() const;
  // One line per node: "%3 = load_rm(n=64)(%1) -> d1", for tests and --explain.
  std::string str(const taidl::Isa& isa, const UnitSet& units) const;
};

}  // namespace tacit::isel
