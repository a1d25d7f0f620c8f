#include "isel/storage.h"

#include <algorithm>

namespace tacit::isel {
namespace {

class Builder {
 public:
  Builder(const taidl::Isa& isa, const PiiGraph& g) : g_(g) {
    size_t n = g.values.size();
    s_.root.resize(n);
    s_.offset.resize(n);
    s_.extents.resize(n);
    for (size_t v = 0; v < n; ++v) {
      s_.root[v] = static_cast<int32_t>(v);
      s_.extents[v] = extentsOf(isa, g.values[v].buffer, g.values[v].shape);
      s_.offset[v].assign(s_.extents[v].size(), 0);
    }
  }

  Storage run() {
    for (size_t i = 0; i < g_.nodes.size() && s_.conflict.empty(); ++i) {
      const PiiNode& node = g_.nodes[i];
      if (node.kind == PiiKind::kSliceView) slice(node);
      if (node.kind == PiiKind::kConcatView) concat(node);
      if (node.kind == PiiKind::kOverlayView) overlay(node);
      if (!s_.conflict.empty()) s_.conflict_node = static_cast<int32_t>(i);
    }
    for (size_t v = 0; v < s_.root.size(); ++v) {
      if (s_.root[v] == static_cast<int32_t>(v)) s_.roots.push_back(static_cast<int32_t>(v));
    }
    return std::move(s_);
  }

 private:
  void slice(const PiiNode& node) {
    int32_t x = node.operands[0];
    int32_t v = node.outputs[0];
    s_.root[static_cast<size_t>(v)] = s_.root[static_cast<size_t>(x)];
    for (size_t k = 0; k < node.view_start.size(); ++k) {
      s_.offset[static_cast<size_t>(v)][k] =
          s_.offset[static_cast<size_t>(x)][k] + node.view_start[k];
    }
  }

  // Moves every member of x's group under root r at `shift`.
  void reroot(int32_t x_root, int32_t r, const std::vector<int64_t>& shift) {
    for (size_t m = 0; m < s_.root.size(); ++m) {
      if (s_.root[m] != x_root) continue;
      s_.root[m] = r;
      for (size_t k = 0; k < shift.size(); ++k)
        s_.offset[m][k] += shift[k];
    }
  }

  void concat(const PiiNode& node) {
    int32_t c = node.outputs[0];
    size_t dim = static_cast<size_t>(node.concat_dim);
    const std::vector<int32_t>& parts = node.operands;
    // Parts that already share one group must lie next to each other there: the concatenation
    // is then a view of that group.
    int32_t common = s_.root[static_cast<size_t>(parts[0])];
    bool same_group = std::all_of(parts.begin(), parts.end(), [&](int32_t p) {
      return s_.root[static_cast<size_t>(p)] == common;
    });
    if (same_group) {
      std::vector<int64_t> at = s_.offset[static_cast<size_t>(parts[0])];
      for (int32_t p : parts) {
        if (s_.offset[static_cast<size_t>(p)] != at) {
          s_.conflict = "concatenated slices are not adjacent in their buffer";
          return;
        }
        at[dim] += s_.extents[static_cast<size_t>(p)][dim];
      }
      s_.root[static_cast<size_t>(c)] = common;
      s_.offset[static_cast<size_t>(c)] = s_.offset[static_cast<size_t>(parts[0])];
      return;
    }
    // Otherwise every part must be a group of its own, which the concatenation places.
    std::vector<int64_t> at(s_.extents[static_cast<size_t>(c)].size(), 0);
    for (int32_t p : parts) {
      int32_t r = s_.root[static_cast<size_t>(p)];
      if (r != p || std::count(parts.begin(), parts.end(), p) > 1) {
        s_.conflict = "a value is placed by two views (a concatenation and another view)";
        return;
      }
      reroot(p, c, at);
      at[dim] += s_.extents[static_cast<size_t>(p)][dim];
    }
  }

  // Every write of an overlay is a group of its own, placed at its byte in the region (the writes'
  // regions may overlap: each changes only its block).
  void overlay(const PiiNode& node) {
    int32_t c = node.outputs[0];
    for (size_t i = 0; i < node.operands.size(); ++i) {
      int32_t p = node.operands[i];
      int32_t r = s_.root[static_cast<size_t>(p)];
      if (r != p || std::count(node.operands.begin(), node.operands.end(), p) > 1) {
        s_.conflict = "a value is placed by two views (an overlay and another view)";
        return;
      }
      reroot(p, c, {node.part_offsets[i]});
    }
  }

  const PiiGraph& g_;
  Storage s_;
};

}  // namespace

Storage buildStorage(const taidl::Isa& isa, const PiiGraph& graph) {
  return Builder(isa, graph).run();
}

std::vector<int64_t> extentsOf(const taidl::Isa& isa, int32_t buffer, const hlo::Shape& shape) {
  const taidl::Buffer& b = isa.buffers[static_cast<size_t>(buffer)];
  if (b.is_hbm) return {shape.byteSize()};
  return std::vector<int64_t>(shape.dims().begin(),
                              shape.dims().begin() + static_cast<std::ptrdiff_t>(b.access.size()));
}

}  // namespace tacit::isel
