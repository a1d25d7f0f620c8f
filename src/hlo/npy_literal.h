// .npy files <-> Literals (docs/formats.md).
//
// dtype mapping (little-endian): pred |b1, s8 |i1, s16 <i2, s32 <i4, s64 <i8, u8 |u1, u16 <u2,
// u32 <u4, u64 <u8, f16 <f2, bf16 |V2 (raw bit patterns; NumPy has no bfloat16), f32 <f4,
// f64 <f8. When a bf16 array is expected, <u2 (the bit patterns as uint16) is accepted too.
#pragma once

#include <string>

#include "hlo/literal.h"
#include "hlo/shape.h"
#include "support/npy.h"

namespace tacit::hlo {

// The .npy descr of an evaluable element type ("<f4", "|V2", ...).
std::string npyDescr(PrimitiveType type);

// An array literal as a .npy array / file contents. Tuples and unknown data are errors.
NpyArray literalToNpy(const Literal& literal);
std::string serializeNpyLiteral(const Literal& literal);

// Converts a .npy array into a literal of exactly `expected` (element type and dimensions); a
// dtype or shape mismatch, or a pred array holding a value other than 0/1, is a DiagnosticError
// naming `name` (the file) and `what` (e.g. "parameter 'q'").
Literal npyToLiteral(const NpyArray& array, const Shape& expected, const std::string& name,
                     const std::string& what);
// Converts a .npy array, choosing the element type from its dtype (|V2 is bf16).
Literal npyToLiteral(const NpyArray& array, const std::string& name);

// Reads a .npy file (see npyToLiteral).
Literal readNpyLiteral(const std::string& path, const Shape& expected, const std::string& what);
Literal readNpyLiteral(const std::string& path);

}  // namespace tacit::hlo
