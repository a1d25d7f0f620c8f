// Literal: a typed tensor value (array, tuple, or elided "unknown" data).
//
// Array data is stored densely in row-major (C) order regardless of the shape's layout; layouts
// only matter where bytes are laid out in memory (HBM byte-flattening, see isel). Element storage:
// pred as uint8_t 0/1, sNN/uNN as intNN_t/uintNN_t, f16 as hlo::half, bf16 as hlo::bfloat16,
// f32/f64 as float/double, c64/c128 as std::complex, f8/f4 types as one byte of raw bits.
#pragma once

#include <complex>
#include <cstdint>
#include <cstring>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "hlo/dtype.h"
#include "hlo/float16.h"
#include "hlo/shape.h"

namespace tacit::hlo {

// 64-byte aligned, zero-initialised byte storage.
class AlignedBytes {
 public:
  AlignedBytes() = default;
  explicit AlignedBytes(size_t size);
  AlignedBytes(const AlignedBytes& other);
  AlignedBytes& operator=(const AlignedBytes& other);
  AlignedBytes(AlignedBytes&&) noexcept = default;
  AlignedBytes& operator=(AlignedBytes&&) noexcept = default;

  uint8_t* data() { return data_.get(); }
  const uint8_t* data() const { return data_.get(); }
  size_t size() const { return size_; }

 private:
  struct Free {
    void operator()(uint8_t* p) const;
  };
  std::unique_ptr<uint8_t[], Free> data_;
  size_t size_ = 0;
};

class Literal {
 public:
  Literal() = default;
  // Zero-filled value of `shape` (tuples get zero-filled elements).
  explicit Literal(const Shape& shape);
  // A literal whose data is unknown (the text `{...}`): it prints, but cannot be evaluated.
  static Literal unknown(const Shape& shape);
  static Literal tuple(std::vector<Literal> elements);

  const Shape& shape() const { return shape_; }
  bool isUnknown() const { return unknown_; }
  bool isTuple() const { return shape_.isTuple(); }

  // Array storage.
  uint8_t* bytes() { return data_.data(); }
  const uint8_t* bytes() const { return data_.data(); }
  size_t byteCount() const { return data_.size(); }
  int64_t elementCount() const { return shape_.elementCount(); }
  template <typename T>
  std::span<T> data() {
    return {reinterpret_cast<T*>(data_.data()), data_.size() / sizeof(T)};
  }
  template <typename T>
  std::span<const T> data() const {
    return {reinterpret_cast<const T*>(data_.data()), data_.size() / sizeof(T)};
  }

  // Tuple elements.
  const std::vector<Literal>& elements() const { return elements_; }
  std::vector<Literal>& elements() { return elements_; }

  // Element access by linear (row-major) index through double / int64 for any evaluable type.
  // Conversions follow `convert` semantics (float->int truncates and saturates).
  double getDouble(int64_t index) const;
  int64_t getInt64(int64_t index) const;
  void setDouble(int64_t index, double value);
  void setInt64(int64_t index, int64_t value);

  // Bitwise equality: same shape (layouts ignored), same bytes, same tuple structure.
  bool bitwiseEqual(const Literal& other) const;

 private:
  Shape shape_;
  AlignedBytes data_;
  std::vector<Literal> elements_;
  bool unknown_ = false;
};

// ---- Static dispatch over element types --------------------------------------------------------

template <PrimitiveType kType>
struct NativeType;
template <>
struct NativeType<PrimitiveType::kPred> {
  using type = uint8_t;
};
template <>
struct NativeType<PrimitiveType::kS8> {
  using type = int8_t;
};
template <>
struct NativeType<PrimitiveType::kS16> {
  using type = int16_t;
};
template <>
struct NativeType<PrimitiveType::kS32> {
  using type = int32_t;
};
template <>
struct NativeType<PrimitiveType::kS64> {
  using type = int64_t;
};
template <>
struct NativeType<PrimitiveType::kU8> {
  using type = uint8_t;
};
template <>
struct NativeType<PrimitiveType::kU16> {
  using type = uint16_t;
};
template <>
struct NativeType<PrimitiveType::kU32> {
  using type = uint32_t;
};
template <>
struct NativeType<PrimitiveType::kU64> {
  using type = uint64_t;
};
template <>
struct NativeType<PrimitiveType::kF16> {
  using type = half;
};
template <>
struct NativeType<PrimitiveType::kBF16> {
  using type = bfloat16;
};
template <>
struct NativeType<PrimitiveType::kF32> {
  using type = float;
};
template <>
struct NativeType<PrimitiveType::kF64> {
  using type = double;
};

// Calls `fn.template operator()<kType>()` for an evaluable element type; for any other type
// throws std::invalid_argument (callers check isEvaluable() first and report a diagnostic).
template <typename Fn>
decltype(auto) dispatchEvaluable(PrimitiveType t, Fn&& fn) {
  using P = PrimitiveType;
  switch (t) {
    case P::kPred:
      return fn.template operator()<P::kPred>();
    case P::kS8:
      return fn.template operator()<P::kS8>();
    case P::kS16:
      return fn.template operator()<P::kS16>();
    case P::kS32:
      return fn.template operator()<P::kS32>();
    case P::kS64:
      return fn.template operator()<P::kS64>();
    case P::kU8:
      return fn.template operator()<P::kU8>();
    case P::kU16:
      return fn.template operator()<P::kU16>();
    case P::kU32:
      return fn.template operator()<P::kU32>();
    case P::kU64:
      return fn.template operator()<P::kU64>();
    case P::kF16:
      return fn.template operator()<P::kF16>();
    case P::kBF16:
      return fn.template operator()<P::kBF16>();
    case P::kF32:
      return fn.template operator()<P::kF32>();
    case P::kF64:
      return fn.template operator()<P::kF64>();
    default:
      throw std::invalid_argument("element type " + std::string(primitiveTypeName(t)) +
                                  " is not evaluable");
  }
}

}  // namespace tacit::hlo
