// Value ranges of e-classes: what every element of a class's value can be, for any kernel input,
// read from the e-nodes of the class and its operands (clamps with constant bounds, roundings,
// maximum/minimum, selects, conversions from integers, data movement). IR→IR rules whose identity
// holds only for bounded values use it as their precondition (rules.h: a float -> int convert
// whose operand is known to be in the target's range).
//
// Sound by construction: every e-node of a class computes the class's value, so the value lies in
// the intersection of the ranges of its e-nodes; an e-node this file does not understand (or one
// reached again on a cycle, or below the depth limit) contributes its type's full range.
#pragma once

#include <cstdint>
#include <limits>
#include <vector>

#include "isel/ir.h"

namespace tacit::isel {

struct ValueRange {
  // Every element that is not NaN is a number in [lo, hi] (-0 and +0 are both 0; ±inf are the
  // infinite bounds).
  double lo = -std::numeric_limits<double>::infinity();
  double hi = std::numeric_limits<double>::infinity();
  bool nan = true;        // an element may be NaN
  bool integral = false;  // every finite element is an integer

  // The full range of an element type (integers: their limits; floats: everything, NaN too).
  static ValueRange of(hlo::PrimitiveType t);
  // The range within [lo, hi] ∪ {NaN}.
  bool within(double low, double high) const { return lo >= low && hi <= high; }
};

// The range of class `c` (requires a clean e-graph). `depth` bounds the operand levels looked at.
ValueRange valueRange(const egraph::EGraph& g, const IrLanguage& ir, const ShapeAnalysis& shapes,
                      ClassId c, int depth = 8);

// valueRange() with the classes' ranges remembered across queries for one index generation of the
// e-graph (EGraph::indexGeneration: the rule applications between two rebuilds). A range is a fact
// about a class's value, so one computed before nodes were added later in the same generation is
// still sound, only possibly wider than a fresh query's; a class is looked at again when asked
// with more depth than it was computed with.
class RangeMemo {
 public:
  ValueRange of(const egraph::EGraph& g, const IrLanguage& ir, const ShapeAnalysis& shapes,
                ClassId c, int depth = 8);

  struct Entry {
    ValueRange range;
    int depth = 0;  // 0: not computed
  };

 private:
  std::vector<Entry> entries_;  // per class id
  uint64_t generation_ = 0;
};

}  // namespace tacit::isel
