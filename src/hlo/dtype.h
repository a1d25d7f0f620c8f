// HLO element types: names, sizes and classification.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

namespace tacit::hlo {

// Every element-type name XLA's text format knows. Only the "evaluable" subset (pred, s8..s64,
// u8..u64, f16, bf16, f32, f64) has semantics in tacit; the others parse and print.
enum class PrimitiveType : uint8_t {
  kInvalid,
  kPred,
  kS1,
  kS2,
  kS4,
  kS8,
  kS16,
  kS32,
  kS64,
  kU1,
  kU2,
  kU4,
  kU8,
  kU16,
  kU32,
  kU64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kF8E5M2,
  kF8E4M3,
  kF8E4M3FN,
  kF8E4M3B11FNUZ,
  kF8E3M4,
  kF8E5M2FNUZ,
  kF8E4M3FNUZ,
  kF8E8M0FNU,
  kF4E2M1FN,
  kC64,
  kC128,
  kToken,
  kOpaque,
  kTuple,  // not a spelling: the element type of tuple shapes
};

std::string_view primitiveTypeName(PrimitiveType t);
// Parses an element-type name ("f32", "bf16", "opaque_type" ...). "tuple" is not a name.
std::optional<PrimitiveType> parsePrimitiveType(std::string_view name);

// Width of one element in bits (pred = 8 as stored; sub-byte types report their logical width).
int bitWidth(PrimitiveType t);
// Bytes one element occupies in a Literal and in HBM (sub-byte types round up to 1).
int byteSize(PrimitiveType t);

bool isArrayType(PrimitiveType t);  // not tuple/token/opaque/invalid
bool isInteger(PrimitiveType t);    // s* and u* (not pred)
bool isSignedInteger(PrimitiveType t);
bool isUnsignedInteger(PrimitiveType t);
bool isFloat(PrimitiveType t);  // f16, bf16, f32, f64 and the f8/f4 types
bool isComplex(PrimitiveType t);
// The types tacit evaluates: pred, s8..s64, u8..u64, f16, bf16, f32, f64.
bool isEvaluable(PrimitiveType t);

}  // namespace tacit::hlo
