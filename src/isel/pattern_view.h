// Byte views of a unit pattern's movement chains at a concrete α, and the α a view determines.
//
// A pitched move (Gemmini's mvin/mvout with a row `stride`) is spelled in its spec as pad, reshape,
// slice, reshape...: for a pitch larger than the rows, the pad and the slice are not identities,
// so the matcher cannot invert the chain; but the whole chain is a strided view of the input's
// bytes (the slice drops every padding byte again). Its pitch is not a function of the output's
// type: it is the row pitch of the kernel's view. `solveSlot` finds it by comparing the chain's
// view, which is affine in that α for every spec chain, with the kernel's view.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "isel/units.h"
#include "isel/view.h"
#include "taidl/expr.h"

namespace tacit::isel {

struct ChainView {
  StridedView view;
  int64_t valid_end = 0;  // positions at or past it are padding, not the chain's start
  bool exact() const { return minPosition(view) >= 0 && maxPosition(view) < valid_end; }
};

// The view of chain[0]'s value over the bytes of the chain's last node (chain is top first, each
// node the operand of the one before, as UnitPattern keeps its chains). nullopt if a link is not
// a movement or a dimension-0 pad, or α makes a type invalid.
std::optional<ChainView> chainView(const UnitPattern& p, const std::vector<int32_t>& chain,
                                   const taidl::EvalEnv& env);

// The byte positions the update of a dynamic-update-slice at zero starts occupies in its result:
// the update's box, row-major, as a view of the result's bytes.
std::optional<StridedView> updateBox(const hlo::Shape& result, const hlo::Shape& update);

// The value x of one α slot for which view_at(x) has the same dimensions (extents and strides) as
// `target`, offsets aside. view_at must be affine in x (checked at three probes); nullopt if it is
// not, if x does not change the view or if no integer x fits.
std::optional<int64_t> solveSlot(const std::function<std::optional<StridedView>(int64_t)>& view_at,
                                 const StridedView& target);

}  // namespace tacit::isel
