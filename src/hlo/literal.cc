#include "hlo/literal.h"

#include <cmath>
#include <cstdlib>
#include <limits>
#include <new>

namespace tacit::hlo {

void AlignedBytes::Free::operator()(uint8_t* p) const {
  std::free(p);
}

AlignedBytes::AlignedBytes(size_t size) : size_(size) {
  if (size == 0) return;
  size_t rounded = (size + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded);
  if (p == nullptr) throw std::bad_alloc();
  std::memset(p, 0, rounded);
  data_.reset(static_cast<uint8_t*>(p));
}

AlignedBytes::AlignedBytes(const AlignedBytes& other) : AlignedBytes(other.size_) {
  if (size_) std::memcpy(data_.get(), other.data_.get(), size_);
}

AlignedBytes& AlignedBytes::operator=(const AlignedBytes& other) {
  if (this != &other) {
    AlignedBytes copy(other);
    *this = std::move(copy);
  }
  return *this;
}

Literal::Literal(const Shape& shape) : shape_(shape) {
  if (shape.isTuple()) {
    for (const Shape& s : shape.tupleShapes())
      elements_.emplace_back(s);
  } else if (shape.isArray()) {
    data_ = AlignedBytes(static_cast<size_t>(shape.byteSize()));
  }
}

Literal Literal::unknown(const Shape& shape) {
  Literal l;
  l.shape_ = shape;
  l.unknown_ = true;
  return l;
}

Literal Literal::tuple(std::vector<Literal> elements) {
  std::vector<Shape> shapes;
  for (const Literal& e : elements)
    shapes.push_back(e.shape());
  Literal l;
  l.shape_ = Shape::tuple(std::move(shapes));
  l.elements_ = std::move(elements);
  return l;
}

namespace {

template <typename T>
double toDouble(T v) {
  if constexpr (std::is_same_v<T, half>) {
    return f16ToF32(v);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return bf16ToF32(v);
  } else {
    return static_cast<double>(v);
  }
}

// float -> integer as XLA's convert: truncate toward zero, saturate, NaN -> 0.
template <typename I>
I saturatingCast(double v) {
  if (std::isnan(v)) return 0;
  if (v <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (v >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(v);
}

template <typename T>
T fromDouble(double v) {
  if constexpr (std::is_same_v<T, half>) {
    return f64ToF16(v);
  } else if constexpr (std::is_same_v<T, bfloat16>) {
    return f64ToBf16(v);
  } else if constexpr (std::is_floating_point_v<T>) {
    return static_cast<T>(v);
  } else {
    return saturatingCast<T>(v);
  }
}

}  // namespace

double Literal::getDouble(int64_t index) const {
  return dispatchEvaluable(shape_.elementType(), [&]<PrimitiveType kT>() -> double {
    using T = typename NativeType<kT>::type;
    return toDouble(data<T>()[static_cast<size_t>(index)]);
  });
}

int64_t Literal::getInt64(int64_t index) const {
  return dispatchEvaluable(shape_.elementType(), [&]<PrimitiveType kT>() -> int64_t {
    using T = typename NativeType<kT>::type;
    T v = data<T>()[static_cast<size_t>(index)];
    if constexpr (std::is_integral_v<T>) {
      return static_cast<int64_t>(v);
    } else {
      return saturatingCast<int64_t>(toDouble(v));
    }
  });
}

void Literal::setDouble(int64_t index, double value) {
  dispatchEvaluable(shape_.elementType(), [&]<PrimitiveType kT>() {
    using T = typename NativeType<kT>::type;
    T v = fromDouble<T>(value);
    if constexpr (kT == PrimitiveType::kPred) v = value != 0.0;
    data<T>()[static_cast<size_t>(index)] = v;
  });
}

void Literal::setInt64(int64_t index, int64_t value) {
  dispatchEvaluable(shape_.elementType(), [&]<PrimitiveType kT>() {
    using T = typename NativeType<kT>::type;
    if constexpr (kT == PrimitiveType::kPred) {
      data<T>()[static_cast<size_t>(index)] = value != 0;
    } else if constexpr (std::is_integral_v<T>) {
      data<T>()[static_cast<size_t>(index)] = static_cast<T>(value);  // wraps, as convert does
    } else {
      data<T>()[static_cast<size_t>(index)] = fromDouble<T>(static_cast<double>(value));
    }
  });
}

bool Literal::bitwiseEqual(const Literal& other) const {
  if (!shape_.compatible(other.shape_) || unknown_ != other.unknown_) return false;
  if (isTuple()) {
    for (size_t i = 0; i < elements_.size(); ++i) {
      if (!elements_[i].bitwiseEqual(other.elements_[i])) return false;
    }
    return true;
  }
  return data_.size() == other.data_.size() &&
         (data_.size() == 0 || std::memcmp(data_.data(), other.data_.data(), data_.size()) == 0);
}

}  // namespace tacit::hlo
