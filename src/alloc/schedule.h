// Ordering and liveness of an instruction graph (docs/algorithm.md §4.1, §4.3, §4.4).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

#include "isel/storage.h"

namespace tacit::alloc {

// The calls in execution order (node indices); views, inputs and constants emit nothing.
using Order = std::vector<int32_t>;

// Sethi–Ullman numbering extended to several buffers of different sizes: a post-order DFS from
// the results that visits the operand with the largest relative buffer requirement first, so the
// value that needs most of a buffer is computed while the fewest others occupy it.
Order sethiUllmanOrder(const taidl::Isa& isa, const isel::PiiGraph& graph,
                       const isel::Storage& storage);

// `order` with every load (a call that reads only HBM and writes a scratchpad) moved to just
// before the first later call that reads or writes the storage it writes, behind no other load
// (loads keep their relative order). The post-order walk places a load where its subtree is
// visited, which can be long before its value is needed: a result assembled on chip from parts
// that went through HBM (QKV's transposing round trip of a product wider than 64 columns) then
// holds its whole buffer from its first part on, while the other parts are still computed. A load
// that moves later only shortens the scratchpad life of what it writes.
Order loadsAsLateAsPossible(const isel::PiiGraph& graph, const isel::Storage& storage, Order order);

// Live interval of every storage root at program points 1..N (the positions of the calls):
// inputs [0, N] (they must be intact at the end), results [def, N], intermediates
// [def, last_use - 1] (an operand may share storage with the result of the call that reads it),
// values nobody reads [def, def], undefined regions empty.
struct Interval {
  int64_t begin = 0, end = -1;
  bool empty() const { return end < begin; }
  bool overlaps(const Interval& o) const {
    return !empty() && !o.empty() && begin <= o.end && o.begin <= end;
  }
};
// `repeated` (AllocOptions::repeated): constants and HBM results live for the whole program.
std::vector<Interval> liveIntervals(const isel::PiiGraph& graph, const isel::Storage& storage,
                                    const Order& order, bool repeated = false);

// The vertices of the interference graph: storage roots, except that a root several calls write
// part by part (a result assembled on chip) is its parts, each live from the call that writes it
// to the root's end. A part not yet written holds nothing, so another value may occupy it until
// then — an in-place operand may be loaded into the slot its result will fill while the parts
// written before it are live. Parts the calls write again in place (the same region) are one
// part, live from the first write. A root holding data from elsewhere (an input, a constant), one
// written by one call, or one whose parts overlap partly is one vertex, live as the whole root —
// except that a root holding only data from elsewhere and undefined regions is that data's
// members: its undefined bytes may lie on anything (the rows a load reads past an input).
struct StoragePiece {
  int32_t value = -1;  // the root, or a call's output inside it
  Interval live;
  // An input or constant inside a root whose other members are undefined regions (an input padded
  // to a unit's rows): only these bytes hold anything, so pairs name them, never the root.
  bool held = false;
};
// Each root's pieces, in `Storage::roots` order.
using StoragePieces = std::vector<std::vector<StoragePiece>>;
StoragePieces storagePieces(const isel::PiiGraph& graph, const isel::Storage& storage,
                            const Order& order, const std::vector<Interval>& live,
                            bool repeated = false);

// Pairs of pieces' values (a < b) in the same buffer whose live intervals overlap: the
// interference graph. Where a piece overlaps every piece of another root, the pair names that
// root instead (one constraint in place of one per part).
using Interference = std::vector<std::pair<int32_t, int32_t>>;
Interference interference(const isel::PiiGraph& graph, const isel::Storage& storage,
                          const StoragePieces& pieces);

// Every topological order of the calls, the Sethi–Ullman order first, then the others in a
// deterministic order (depth-first, preferring calls early in the Sethi–Ullman order).
class OrderEnumerator {
 public:
  OrderEnumerator(const isel::PiiGraph& graph, Order preferred);
  std::optional<Order> next();

 private:
  struct Frame {
    std::vector<int32_t> ready;  // sorted by preference
    size_t next = 0;
  };
  std::vector<int32_t> rank_;                // preference rank per node
  std::vector<int32_t> pending_;             // unscheduled call operands per call
  std::vector<std::vector<int32_t>> users_;  // calls that depend on a call
  std::vector<Frame> stack_;
  Order current_;
  size_t calls_ = 0;
  bool done_ = false;
};

}  // namespace tacit::alloc
