// The matcher's internal state, shared by its files (isa_match.cc, isa_match_movement.cc,
// isa_match_run.cc, region_write.cc; not a public header).
#pragma once

#include <cstdint>
#include <utility>
#include <vector>

#include "isel/isa_match.h"

namespace tacit::isel {

// How a pattern node was matched when it was not matched to an e-node of its own opcode.
enum Skip : uint8_t {
  kMatched = 0,
  kIdentityOp = 1,       // an operator that α makes the identity (pad by zeros, full slice, ...)
  kIdentityElement = 2,  // add/subtract/multiply/... with its identity element as other operand
  kIdentityDot =
      3,           // an integer dot with an identity matrix as one operand (ACT's x -> dot(x, eye))
  kOverwrite = 4,  // a dynamic-update-slice whose update covers its operand: the update
};

struct IsaMatcher::State {
  std::vector<ClassId> cls;
  std::vector<NodeId> enode;
  std::vector<uint8_t> skipped;
  AlphaSolver alpha;
  std::vector<std::pair<int32_t, int32_t>>
      identity_dots;                  // (dot node, operand that is the identity)
  std::vector<int32_t> undef_leaves;  // leaves whose value does not matter (overwritten regions)
  // Input leaves phase 1 supplies as a splat of an operator's identity element (an accumulator
  // input of `acc + dot(...)` matched against a plain dot: the accumulator starts at zero).
  std::vector<std::pair<int32_t, int64_t>> identity_leaves;
  // Set when the movement chains were decided as strided views (pattern_view.h) rather than as
  // identities: their pads and slices need not be identities for α.
  bool views_checked = false;
  // A pitched load: its input is bytes [offset, offset + bytes) of the byte vector `base`.
  ClassId view_base;
  int64_t view_offset = 0, view_bytes = 0;

  // The empty state for matching pattern p of unit u.
  static State start(const UnitPattern& p, const Unit& u) {
    size_t n = p.nodes.size();
    return State{std::vector<ClassId>(n),
                 std::vector<NodeId>(n),
                 std::vector<uint8_t>(n, 0),
                 AlphaSolver(u.num_attrs, u.num_alpha),
                 {},
                 {},
                 {},
                 false,
                 ClassId(),
                 0,
                 0};
  }
};

// A match found on the clean e-graph, constructed after every pattern was matched.
struct IsaMatcher::Accepted {
  int32_t pattern;
  State state;
  uint32_t record = kNoRecord;   // in records_: its (pattern, class) pair (not a strided load)
  bool replayed = false;         // the state is the previous run's (the pair did not change)
  uint32_t strided = kNoRecord;  // in strided_: its strided load's (pattern, class) record
  static constexpr uint32_t kNoRecord = ~uint32_t{0};
};

// The pii node's payload for a match of pattern p (unit u) with solved α, producing `shape`.
inline PiiDesc piiDescFor(const UnitPattern& p, const Unit& u, const AlphaSolver& alpha,
                          hlo::Shape shape) {
  PiiDesc pii;
  pii.unit = p.unit;
  pii.case_index = p.case_index;
  pii.alpha.assign(alpha.values().begin(), alpha.values().begin() + u.num_alpha);
  pii.output = p.output;
  pii.buffer = p.sym->outputs[static_cast<size_t>(p.output)].buffer;
  pii.shape = std::move(shape);
  return pii;
}

}  // namespace tacit::isel
