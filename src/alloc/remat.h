// Rematerialisation (docs/backend.md "Rematerialisation"): when the values live at some program
// point do not fit a scratchpad, a value that can be recomputed at any time is duplicated so that
// each copy lives only around the calls that read it.
//
// A storage group (a value and its views) is *recomputable* when every node producing one of its
// members is a call with one output or a view, and reads only members of the group and data that
// is always available: kernel inputs, constants and views of them (e.g. a load of an input, or a
// concatenation of row loads). Duplication is graph surgery on the instruction graph, the same
// for every ISA:
//  * by region: readers of different parts of the group each get a copy of what they read; a
//    copy of a group produced by one byte-preserving call from HBM (its semantics is a chain of
//    reshapes and bitcast-converts, so output rows [s, e) are input bytes [s·r, e·r)) is
//    *narrowed* to that part: the same unit with the α that gives the smaller extent, reading a
//    slice of the same HBM bytes;
//  * by reader: every call reading the group gets its own copy.
// Choice (deterministic): at the first program point where a scratchpad's capacity is exceeded
// (or, after a solver failure, the point of highest relative load), among the recomputable groups
// live there, the duplication that adds the least cost by the compile's cost model; ties go to
// the larger group, then the lower value number.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "alloc/schedule.h"
#include "isel/storage.h"

namespace tacit::alloc {

// The cost of one call of a graph under the compile's cost model (unset: 1 per call).
using CallCost = std::function<int64_t(const isel::PiiGraph&, const isel::PiiNode&)>;

// A program point of a scratchpad and the units live there.
struct Peak {
  int32_t buffer = -1;
  int64_t point = 0;
  int64_t load = 0, capacity = 0;
  std::string describe(const taidl::Isa& isa) const;  // "d1 holds 128 units but 192 are live ..."
};

// The first point where the pieces (schedule.h) live in a scratchpad exceed its capacity. The
// pieces live at a point interfere pairwise, so an order that overflows cannot be placed, nor can
// any order whose interference graph contains its own.
std::optional<Peak> firstOverflow(const taidl::Isa& isa, const isel::PiiGraph& graph,
                                  const isel::Storage& storage, const StoragePieces& pieces);
// The point of highest load relative to its scratchpad's capacity (first on ties).
std::optional<Peak> highestLoad(const taidl::Isa& isa, const isel::PiiGraph& graph,
                                const isel::Storage& storage, const StoragePieces& pieces);

enum class SplitKind { kByRegion, kByReader };

struct Rematerialisation {
  int32_t root = -1;  // the duplicated group (a storage root of the original graph)
  SplitKind kind = SplitKind::kByRegion;
  int64_t added_cost = 0;
  isel::PiiGraph graph;  // the rewritten graph
};

// The duplication the rule above picks at `peak` of `order`, or nullopt if no recomputable group
// live there can be split.
std::optional<Rematerialisation> chooseRematerialisation(const taidl::Isa& isa,
                                                         const isel::UnitSet& units,
                                                         const isel::PiiGraph& graph,
                                                         const isel::Storage& storage,
                                                         const std::vector<Interval>& live,
                                                         const Peak& peak, const CallCost& cost);

// The graph surgery itself: the readers of group `root` get copies (by region or by reader);
// nodes left without readers are removed and the nodes put back in topological order. nullopt if
// the group is not recomputable or the split would leave it as it is.
std::optional<isel::PiiGraph> splitGroup(const taidl::Isa& isa, const isel::UnitSet& units,
                                         const isel::PiiGraph& graph, const isel::Storage& storage,
                                         int32_t root, SplitKind kind);

// Sum of the cost of every call of the graph.
int64_t graphCost(const isel::PiiGraph& graph, const CallCost& cost);

}  // namespace tacit::alloc
