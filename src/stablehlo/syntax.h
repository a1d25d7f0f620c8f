// The syntax tree of a StableHLO module: what the parser reads, before any HLO meaning.
//
// Both syntaxes land here: an op in pretty form (`stablehlo.add %a, %b : tensor<4xf32>`) and
// the same op in generic form (`"stablehlo.add"(%a, %b) : (...) -> ...`) give the same Op, with
// the attributes under their generic names (`broadcast_dimensions`, `comparison_direction`, ...),
// so the conversion to HLO (convert.h) reads one form only.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "hlo/shape.h"
#include "support/diagnostic.h"

namespace tacit::stablehlo {

// A type: a ranked tensor, a tuple of types, a token, or anything else (kept as text to name it
// in a diagnostic).
struct Type {
  enum class Kind { kTensor, kTuple, kToken, kOther } kind = Kind::kOther;
  hlo::Shape shape;  // kTensor: element type and dims; kTuple: the tuple shape; kToken: token
  std::string text;  // the source text, for diagnostics
  SourceLoc loc;
};

struct AttrEntry;  // a name and its attribute (below: Attr holds a list of them)

// An attribute value.
struct Attr {
  enum class Kind {
    kUnit,      // a name without a value (`{foo}`)
    kInt,       // 3 : i64 (the type is dropped)
    kFloat,     // 1.5 : f32
    kBool,      // true / false
    kString,    // "text"
    kSymbol,    // @name
    kEnum,      // #stablehlo<comparison_direction GT>, or a bare word (GT, FLOAT): `text`
    kIntArray,  // array<i64: 1, 2>, dense<[1, 2]> : tensor<2xi64> and [1, 2] of integers
    kList,      // [a, b] of other attributes
    kDense,     // dense<...> : tensor<...> (elements kept as text tokens, see below)
    kDict,      // {a = 1, b} and #stablehlo.dot<...> fields
    kType,      // a type in attribute position
    kOpaque,    // anything else (#loc, #sdy..., affine maps): skipped, kept as text
  } kind = Kind::kUnit;
  int64_t i = 0;
  double f = 0;
  bool b = false;
  std::string text;             // kString, kSymbol, kEnum, kOpaque
  std::vector<int64_t> ints;    // kIntArray
  std::vector<Attr> list;       // kList
  std::vector<AttrEntry> dict;  // kDict (in source order)
  Type type;                    // kDense: the tensor type; kType
  // kDense: the element tokens in row-major order (numbers, true/false, 0x... bit patterns), or
  // one "0x..." string of raw little-endian bytes (hex_bytes = true).
  std::vector<std::string> elements;
  std::vector<int64_t> element_offsets;  // source offset of each element token, for diagnostics
  bool hex_bytes = false;
  SourceLoc loc;

  const Attr* find(std::string_view name) const;  // kDict field
};

struct AttrEntry {
  std::string name;
  Attr value;
};

struct NamedAttrs {
  std::vector<AttrEntry> entries;
  const Attr* find(std::string_view name) const;
  void set(std::string name, Attr value);
};

// A use of a value: %name or %name#N.
struct ValueRef {
  std::string name;
  int64_t result = -1;  // -1: the only (or first) result
  SourceLoc loc;
};

struct Op;

struct BlockArg {
  std::string name;
  Type type;
  NamedAttrs attrs;      // func arguments: {jax.arg_info = "x", mhlo.layout_mode = "..."}
  std::string loc_name;  // a name location, loc("x") or an alias of one
  SourceLoc loc;
};

struct Region {
  std::vector<BlockArg> args;
  std::vector<Op> ops;
  SourceLoc loc;
};

struct Op {
  std::string name;                  // "stablehlo.add", "func.return", ...
  std::vector<std::string> results;  // defined value names (%0:2 defines "0" with 2 results)
  int64_t result_count = 0;          // values defined (`%0:2` = 2)
  std::vector<ValueRef> operands;
  NamedAttrs attrs;
  std::vector<Region> regions;
  std::vector<Type> operand_types;
  std::vector<Type> result_types;
  std::string loc_name;  // a name location on the op, if any
  SourceLoc loc;
};

struct Func {
  std::string name;
  std::string visibility;  // "public", "private" or ""
  Region body;             // args are the parameters
  std::vector<Type> result_types;
  std::vector<NamedAttrs> result_attrs;
  SourceLoc loc;
};

struct Module {
  std::string name;  // may be empty (`module {`)
  NamedAttrs attrs;
  std::vector<Func> funcs;
  SourceLoc loc;
};

}  // namespace tacit::stablehlo
