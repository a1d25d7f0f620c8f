// HLO shapes: array shapes with optional layouts, tuples, tokens.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "hlo/dtype.h"

namespace tacit::hlo {

// One tiling `T(a,b)` of a layout; -1 stands for `*` (combine dimensions).
struct Tile {
  std::vector<int64_t> dims;
  friend bool operator==(const Tile&, const Tile&) = default;
};

// `{minor_to_major : extras}`. Only minor_to_major and tiles have meaning in tacit; the other
// extras (D(...) before the tiles; L, #, *, E, S, SC, P, M after them) are kept as canonical text
// so that printing round-trips.
struct Layout {
  std::vector<int64_t> minor_to_major;
  std::string dim_level_types;  // e.g. "D(D,C)" or empty
  std::vector<Tile> tiles;
  std::string tail;  // e.g. "S(1)" or "E(4)S(5)", empty if none

  bool hasExtras() const { return !dim_level_types.empty() || !tiles.empty() || !tail.empty(); }
  friend bool operator==(const Layout&, const Layout&) = default;
};

class Shape {
 public:
  Shape() = default;
  // An array shape (scalar if dims is empty).
  Shape(PrimitiveType element_type, std::vector<int64_t> dims);
  static Shape tuple(std::vector<Shape> elements);
  static Shape token();

  PrimitiveType elementType() const { return element_type_; }
  bool isTuple() const { return element_type_ == PrimitiveType::kTuple; }
  bool isArray() const { return isArrayType(element_type_); }
  bool isToken() const { return element_type_ == PrimitiveType::kToken; }
  bool isScalar() const { return isArray() && dims_.empty(); }

  int64_t rank() const { return static_cast<int64_t>(dims_.size()); }
  const std::vector<int64_t>& dims() const { return dims_; }
  int64_t dim(int64_t i) const { return dims_[static_cast<size_t>(i)]; }
  // Dynamic dimensions: `<=N` (bounded, dims()[i] = N) or `?` (unbounded, dims()[i] = -1).
  bool isDynamicDim(int64_t i) const {
    return !dynamic_.empty() && dynamic_[static_cast<size_t>(i)];
  }
  bool isDynamic() const;
  void setDynamicDim(int64_t i, bool dynamic);

  int64_t elementCount() const;  // product of dims (1 for scalars); arrays only
  int64_t byteSize() const;      // elementCount * byteSize(element type); arrays only

  const std::vector<Shape>& tupleShapes() const { return tuple_shapes_; }
  std::vector<Shape>& tupleShapes() { return tuple_shapes_; }

  const std::optional<Layout>& layout() const { return layout_; }
  void setLayout(std::optional<Layout> layout) { layout_ = std::move(layout); }
  void clearLayouts();  // recursively drops layouts
  // minor_to_major of the layout, or the default {rank-1, ..., 0}.
  std::vector<int64_t> minorToMajor() const;
  bool hasDefaultLayout() const;  // no layout, or {rank-1..0} without extras

  // Same element type and dims (and tuple structure); layouts ignored.
  bool compatible(const Shape& other) const;
  // Exact equality including layouts and dynamic flags.
  friend bool operator==(const Shape&, const Shape&) = default;

  // "f32[2,3]{1,0}", "(f32[], s32[4])", "token[]". Layouts printed only when present.
  std::string str() const;
  // Same as str() without layouts: "f32[2,3]".
  std::string shortStr() const;

 private:
  PrimitiveType element_type_ = PrimitiveType::kInvalid;
  std::vector<int64_t> dims_;
  std::vector<bool> dynamic_;  // empty, or one flag per dim
  std::optional<Layout> layout_;
  std::vector<Shape> tuple_shapes_;
};

// Row-major (C order) strides in elements for the given dims.
std::vector<int64_t> rowMajorStrides(std::span<const int64_t> dims);
std::string layoutStr(const Layout& layout);

}  // namespace tacit::hlo
