#include "hlo/npy_literal.h"

#include <cstring>

#include "support/diagnostic.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

using P = PrimitiveType;

struct DtypeEntry {
  P type;
  const char* descr;
};

constexpr DtypeEntry kDtypes[] = {
    {P::kPred, "|b1"}, {P::kS8, "|i1"},  {P::kS16, "<i2"}, {P::kS32, "<i4"}, {P::kS64, "<i8"},
    {P::kU8, "|u1"},   {P::kU16, "<u2"}, {P::kU32, "<u4"}, {P::kU64, "<u8"}, {P::kF16, "<f2"},
    {P::kBF16, "|V2"}, {P::kF32, "<f4"}, {P::kF64, "<f8"},
};

std::string npyShapeText(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return "(" + std::to_string(dims[0]) + ",)";
  return "(" + join(dims, ", ") + ")";
}

void checkPred(const Literal& l, const std::string& name) {
  const uint8_t* p = l.bytes();
  for (size_t i = 0; i < l.byteCount(); ++i) {
    if (p[i] > 1) {
      fail(name, {},
           "boolean array holds the byte " + std::to_string(p[i]) + " at element " +
               std::to_string(i) + "; pred values must be 0 or 1");
    }
  }
}

Literal fromArray(const NpyArray& array, P type, const std::string& name) {
  Literal l(Shape(type, array.shape));
  if (l.byteCount() != array.data.size()) {
    fail(name, {},
         "data size does not match dtype '" + array.descr + "' and shape " +
             npyShapeText(array.shape));
  }
  if (!array.data.empty()) std::memcpy(l.bytes(), array.data.data(), array.data.size());
  if (type == P::kPred) checkPred(l, name);
  return l;
}

}  // namespace

std::string npyDescr(P type) {
  for (const DtypeEntry& e : kDtypes) {
    if (e.type == type) return e.descr;
  }
  fail("element type " + std::string(primitiveTypeName(type)) + " has no .npy representation");
}

NpyArray literalToNpy(const Literal& literal) {
  if (literal.isTuple()) fail("a tuple cannot be written as one .npy array");
  if (literal.isUnknown()) fail("a literal with unknown data cannot be written");
  NpyArray a;
  a.descr = npyDescr(literal.shape().elementType());
  a.shape = literal.shape().dims();
  a.data.assign(literal.bytes(), literal.bytes() + literal.byteCount());
  return a;
}

std::string serializeNpyLiteral(const Literal& literal) {
  return serializeNpy(literalToNpy(literal));
}

Literal npyToLiteral(const NpyArray& array, const Shape& expected, const std::string& name,
                     const std::string& what) {
  if (!expected.isArray() || !isEvaluable(expected.elementType())) {
    fail(name, {}, what + " has shape " + expected.shortStr() + ", which no .npy array can hold");
  }
  P type = expected.elementType();
  std::string want = npyDescr(type);
  bool ok = array.descr == want || (type == P::kBF16 && array.descr == "<u2");
  if (!ok) {
    fail(name, {},
         "dtype '" + array.descr + "' does not match " + what + " of type " +
             std::string(primitiveTypeName(type)) + " (expected '" + want + "')",
         type == P::kBF16 ? "bf16 arrays are stored as raw bits: dtype '|V2' or '<u2'"
                          : "convert the array to the parameter's type before saving it");
  }
  if (array.shape != expected.dims()) {
    fail(name, {},
         "shape " + npyShapeText(array.shape) + " does not match " + what + " of shape " +
             expected.shortStr());
  }
  Literal l = fromArray(array, type, name);
  return l;
}

Literal npyToLiteral(const NpyArray& array, const std::string& name) {
  for (const DtypeEntry& e : kDtypes) {
    if (array.descr == e.descr) return fromArray(array, e.type, name);
  }
  fail(name, {}, "dtype '" + array.descr + "' has no HLO element type",
       "tacit reads |b1, |i1, <i2, <i4, <i8, |u1, <u2, <u4, <u8, <f2, |V2 (bf16), <f4 and <f8");
}

Literal readNpyLiteral(const std::string& path, const Shape& expected, const std::string& what) {
  return npyToLiteral(readNpy(path), expected, path, what);
}

Literal readNpyLiteral(const std::string& path) {
  return npyToLiteral(readNpy(path), path);
}

}  // namespace tacit::hlo
