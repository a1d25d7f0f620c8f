#include "hlo/dtype.h"

#include <array>
#include <utility>

namespace tacit::hlo {
namespace {

struct TypeInfo {
  PrimitiveType type;
  std::string_view name;
  int bits;
};

constexpr std::array<TypeInfo, 33> kTypes = {{
    {PrimitiveType::kPred, "pred", 8},
    {PrimitiveType::kS1, "s1", 1},
    {PrimitiveType::kS2, "s2", 2},
    {PrimitiveType::kS4, "s4", 4},
    {PrimitiveType::kS8, "s8", 8},
    {PrimitiveType::kS16, "s16", 16},
    {PrimitiveType::kS32, "s32", 32},
    {PrimitiveType::kS64, "s64", 64},
    {PrimitiveType::kU1, "u1", 1},
    {PrimitiveType::kU2, "u2", 2},
    {PrimitiveType::kU4, "u4", 4},
    {PrimitiveType::kU8, "u8", 8},
    {PrimitiveType::kU16, "u16", 16},
    {PrimitiveType::kU32, "u32", 32},
    {PrimitiveType::kU64, "u64", 64},
    {PrimitiveType::kF16, "f16", 16},
    {PrimitiveType::kBF16, "bf16", 16},
    {PrimitiveType::kF32, "f32", 32},
    {PrimitiveType::kF64, "f64", 64},
    {PrimitiveType::kF8E5M2, "f8e5m2", 8},
    {PrimitiveType::kF8E4M3, "f8e4m3", 8},
    {PrimitiveType::kF8E4M3FN, "f8e4m3fn", 8},
    {PrimitiveType::kF8E4M3B11FNUZ, "f8e4m3b11fnuz", 8},
    {PrimitiveType::kF8E3M4, "f8e3m4", 8},
    {PrimitiveType::kF8E5M2FNUZ, "f8e5m2fnuz", 8},
    {PrimitiveType::kF8E4M3FNUZ, "f8e4m3fnuz", 8},
    {PrimitiveType::kF8E8M0FNU, "f8e8m0fnu", 8},
    {PrimitiveType::kF4E2M1FN, "f4e2m1fn", 4},
    {PrimitiveType::kC64, "c64", 64},
    {PrimitiveType::kC128, "c128", 128},
    {PrimitiveType::kToken, "token", 0},
    {PrimitiveType::kOpaque, "opaque", 0},
    {PrimitiveType::kTuple, "tuple", 0},
}};

const TypeInfo* find(PrimitiveType t) {
  for (const TypeInfo& info : kTypes) {
    if (info.type == t) return &info;
  }
  return nullptr;
}

}  // namespace

std::string_view primitiveTypeName(PrimitiveType t) {
  const TypeInfo* info = find(t);
  return info ? info->name : "invalid";
}

std::optional<PrimitiveType> parsePrimitiveType(std::string_view name) {
  if (name == "opaque_type") return PrimitiveType::kOpaque;
  if (name == "tuple") return std::nullopt;
  for (const TypeInfo& info : kTypes) {
    if (info.name == name) return info.type;
  }
  return std::nullopt;
}

int bitWidth(PrimitiveType t) {
  const TypeInfo* info = find(t);
  return info ? info->bits : 0;
}

int byteSize(PrimitiveType t) {
  int bits = bitWidth(t);
  return bits == 0 ? 0 : (bits + 7) / 8;
}

bool isArrayType(PrimitiveType t) {
  return t != PrimitiveType::kInvalid && t != PrimitiveType::kTuple && t != PrimitiveType::kToken &&
         t != PrimitiveType::kOpaque;
}

bool isSignedInteger(PrimitiveType t) {
  return t >= PrimitiveType::kS1 && t <= PrimitiveType::kS64;
}
bool isUnsignedInteger(PrimitiveType t) {
  return t >= PrimitiveType::kU1 && t <= PrimitiveType::kU64;
}
bool isInteger(PrimitiveType t) {
  return isSignedInteger(t) || isUnsignedInteger(t);
}
bool isFloat(PrimitiveType t) {
  return t >= PrimitiveType::kF16 && t <= PrimitiveType::kF4E2M1FN;
}
bool isComplex(PrimitiveType t) {
  return t == PrimitiveType::kC64 || t == PrimitiveType::kC128;
}

bool isEvaluable(PrimitiveType t) {
  switch (t) {
    case PrimitiveType::kPred:
    case PrimitiveType::kS8:
    case PrimitiveType::kS16:
    case PrimitiveType::kS32:
    case PrimitiveType::kS64:
    case PrimitiveType::kU8:
    case PrimitiveType::kU16:
    case PrimitiveType::kU32:
    case PrimitiveType::kU64:
    case PrimitiveType::kF16:
    case PrimitiveType::kBF16:
    case PrimitiveType::kF32:
    case PrimitiveType::kF64:
      return true;
    default:
      return false;
  }
}

}  // namespace tacit::hlo
