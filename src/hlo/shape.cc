#include "hlo/shape.h"

#include "support/strings.h"

namespace tacit::hlo {

Shape::Shape(PrimitiveType element_type, std::vector<int64_t> dims)
    : element_type_(element_type), dims_(std::move(dims)) {}

Shape Shape::tuple(std::vector<Shape> elements) {
  Shape s;
  s.element_type_ = PrimitiveType::kTuple;
  s.tuple_shapes_ = std::move(elements);
  return s;
}

Shape Shape::token() {
  Shape s;
  s.element_type_ = PrimitiveType::kToken;
  return s;
}

bool Shape::isDynamic() const {
  for (bool d : dynamic_) {
    if (d) return true;
  }
  for (const Shape& t : tuple_shapes_) {
    if (t.isDynamic()) return true;
  }
  return false;
}

void Shape::setDynamicDim(int64_t i, bool dynamic) {
  if (dynamic_.empty()) {
    if (!dynamic) return;
    dynamic_.assign(dims_.size(), false);
  }
  dynamic_[static_cast<size_t>(i)] = dynamic;
  bool any = false;
  for (bool d : dynamic_)
    any |= d;
  if (!any) dynamic_.clear();  // canonical: no flags when nothing is dynamic
}

int64_t Shape::elementCount() const {
  int64_t n = 1;
  for (int64_t d : dims_)
    n *= d;
  return n;
}

int64_t Shape::byteSize() const {
  return elementCount() * hlo::byteSize(element_type_);
}

void Shape::clearLayouts() {
  layout_.reset();
  for (Shape& t : tuple_shapes_)
    t.clearLayouts();
}

std::vector<int64_t> Shape::minorToMajor() const {
  if (layout_) return layout_->minor_to_major;
  std::vector<int64_t> m2m(dims_.size());
  for (size_t i = 0; i < dims_.size(); ++i)
    m2m[i] = static_cast<int64_t>(dims_.size() - 1 - i);
  return m2m;
}

bool Shape::hasDefaultLayout() const {
  if (!layout_) return true;
  if (layout_->hasExtras()) return false;
  for (size_t i = 0; i < dims_.size(); ++i) {
    if (layout_->minor_to_major[i] != static_cast<int64_t>(dims_.size() - 1 - i)) return false;
  }
  return true;
}

bool Shape::compatible(const Shape& other) const {
  if (element_type_ != other.element_type_) return false;
  if (isTuple()) {
    if (tuple_shapes_.size() != other.tuple_shapes_.size()) return false;
    for (size_t i = 0; i < tuple_shapes_.size(); ++i) {
      if (!tuple_shapes_[i].compatible(other.tuple_shapes_[i])) return false;
    }
    return true;
  }
  return dims_ == other.dims_;
}

std::string layoutStr(const Layout& layout) {
  std::string out = "{" + join(layout.minor_to_major, ",");
  if (layout.hasExtras()) {
    out += ":";
    out += layout.dim_level_types;
    if (!layout.tiles.empty()) {
      out += "T";
      for (const Tile& t : layout.tiles) {
        out += "(" +
               joinWith(t.dims, ",",
                        [](int64_t d) { return d < 0 ? std::string("*") : std::to_string(d); }) +
               ")";
      }
    }
    out += layout.tail;
  }
  return out + "}";
}

static std::string shapeStr(const Shape& s, bool with_layout) {
  if (s.isTuple()) {
    return "(" +
           joinWith(s.tupleShapes(), ", ",
                    [&](const Shape& t) { return shapeStr(t, with_layout); }) +
           ")";
  }
  std::string out(primitiveTypeName(s.elementType()));
  out += "[";
  for (int64_t i = 0; i < s.rank(); ++i) {
    if (i) out += ",";
    if (s.isDynamicDim(i)) {
      out += s.dim(i) < 0 ? "?" : "<=" + std::to_string(s.dim(i));
    } else {
      out += std::to_string(s.dim(i));
    }
  }
  out += "]";
  if (with_layout && s.layout()) out += layoutStr(*s.layout());
  return out;
}

std::string Shape::str() const {
  return shapeStr(*this, true);
}
std::string Shape::shortStr() const {
  return shapeStr(*this, false);
}

std::vector<int64_t> rowMajorStrides(std::span<const int64_t> dims) {
  std::vector<int64_t> strides(dims.size());
  int64_t s = 1;
  for (size_t i = dims.size(); i-- > 0;) {
    strides[i] = s;
    s *= dims[i];
  }
  return strides;
}

}  // namespace tacit::hlo
