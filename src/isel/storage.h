// Storage of an instruction graph's values (docs/algorithm.md §4.3 "Views"): slices and
// concatenations emit no code, so a value and its views share storage. Values joined by view edges
// form an alias group with one root; every member sits at a fixed offset (per access dimension)
// inside the root's region.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "isel/pii_graph.h"

namespace tacit::isel {

struct Storage {
  std::vector<int32_t> root;                  // per value: the root value of its alias group
  std::vector<std::vector<int64_t>> offset;   // per value: offset inside the root, per access dim
  std::vector<std::vector<int64_t>> extents;  // per value: extent per access dim
  std::vector<int32_t> roots;                 // every root, ascending
  std::string conflict;                       // non-empty: the views cannot share storage
  int32_t conflict_node = -1;                 // the view node (graph node index) that conflicts
};

Storage buildStorage(const taidl::Isa& isa, const PiiGraph& graph);

// Extents of a value of type `shape` living in `buffer`: its leading access dimensions (HBM: its
// byte count).
std::vector<int64_t> extentsOf(const taidl::Isa& isa, int32_t buffer, const hlo::Shape& shape);

}  // namespace tacit::isel
