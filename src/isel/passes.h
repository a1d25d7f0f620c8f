// Whole-e-graph passes run between rewrite iterations (docs/isel.md, "Saturation").
//
// * Views: classes that are the same strided view (view.h) of the same base class with the same
//   type are united — this decides every reshape/transpose/slice/bitcast/broadcast identity at
//   once — and a contiguous byte range of a rank-1 u8 class (an HBM region) gains an explicit
//   `slice` node, so that extraction can read it as a view of HBM. Likewise a byte vector that
//   units write to memory and that holds every byte of a computed base once (a kernel result in
//   its physical layout), when the base is also read by computation: each smaller byte vector of
//   the base whose bytes are a contiguous run of it is that run's `slice` (a row of one tile of a
//   tiled s32 result, loaded back into a vector register).
// * Constants: a class computed by an operator from classes that hold literals gets the literal
//   itself (evaluated with hlo::evaluate), so instruction patterns that contain constants
//   (tilezero's zeros, an identity matrix) match however the kernel spelled them.
#pragma once

#include <cstddef>
#include <memory>

#include "isel/ir_builder.h"

namespace tacit::isel {

class ViewIndex;

struct PassStats {
  size_t unions = 0;
  size_t nodes_added = 0;
};

// All require a clean e-graph and leave it rebuilt.
PassStats runViewPass(egraph::EGraph& g, IrBuilder& b);
// The view pass run again and again on one growing e-graph (the selector's iterations): what it
// learnt stays, and each run computes views only for the classes whose movement closure changed
// (the same unions and slices as runViewPass; docs/isel.md, "Saturation").
class ViewPass {
 public:
  ViewPass(egraph::EGraph& g, IrBuilder& b);
  ~ViewPass();
  PassStats run();
  // The views it keeps (other passes of the same e-graph may query them after a refresh()).
  ViewIndex& views();

 private:
  struct State;
  egraph::EGraph& g_;
  IrBuilder& b_;
  std::unique_ptr<State> state_;
};
// Tiling for data movement: a tensor that is a view of a byte vector (an HBM region) whose rows
// are contiguous but not adjacent (a column block of a row-major matrix) is also the
// concatenation of its rows, each of which a contiguous load or store can move. At most
// `max_rows` rows.
// `views`: a ViewIndex kept across runs (refreshed here), else one of its own.
PassStats runRowSplitPass(egraph::EGraph& g, IrBuilder& b, int64_t max_rows = 256,
                          ViewIndex* views = nullptr);
PassStats runConstantFoldPass(egraph::EGraph& g, IrBuilder& b, int64_t max_elements = 1 << 16);

// The literal a class holds, if one of its e-nodes is a constant.
const hlo::Literal* literalOf(const egraph::EGraph& g, const IrLanguage& ir, ClassId c);

}  // namespace tacit::isel
