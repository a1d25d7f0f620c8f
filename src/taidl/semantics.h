// Register-free symbolic semantics of an instruction or a macro, for the instruction selector
// (docs/taidl-api.md, "Symbolic semantics").
//
// For every instruction and macro the checker computes a Semantics by symbolic execution
// (symbolic.h): registers start unknown and take symbolic values when set, `if`s decided by
// known values are resolved, `if`s on alpha are split into cases, `repeat`s with constant trip
// counts are unrolled, and a read of a slice written earlier (same buffer, same symbolic starts
// and extents) receives the written value. The result is either a list of straight-line cases
// over the attributes, or the reason why the unit is not selectable.
//
// Expressions in a Semantics refer only to the unit's own attributes (kAlpha / kBeta with the
// unit's slots), folded parameters and integer literals. Types and operation attributes use
// alpha only; slice starts are affine in beta (with coefficients over alpha).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "support/diagnostic.h"
#include "taidl/ast.h"
#include "taidl/poly.h"

namespace tacit::taidl {

// A slice of a buffer read or written as a whole-unit operand: B[starts .. starts + extents) over
// the access dimensions, all unit dimensions whole.
struct SymSlice {
  int32_t buffer = -1;
  std::vector<Expr> starts;    // one per access dimension, over alpha and beta
  std::vector<Affine> affine;  // the same starts as affine forms in beta
  std::vector<Expr> extents;   // one per access dimension, over alpha
  TypeExpr type;               // the value's full type: extents ++ unit dims
  int32_t value = -1;          // index into SymCase::ops (input: its parameter op)
  SourceLoc loc;               // the access in the spec
  bool state = false;          // the buffer has no access dimensions (bias, weights, ...)
};

// One operation of the straight-line data program. Inputs are kParameter ops (in input order).
struct SymOp {
  hlo::HloOpcode opcode = hlo::HloOpcode::kParameter;
  int32_t input = -1;             // kParameter: index into SymCase::inputs
  TypeExpr type;                  // result type over alpha
  std::vector<int32_t> operands;  // indices of earlier ops
  std::vector<OpAttr> attrs;      // attribute expressions over alpha
  LiteralValue literal;           // kConstant
  SourceLoc loc;                  // the defining statement
};

// A `let` of the unit (docs/taidl.md section 4.7) as the compiler sees it: the element of
// `buffer` at `starts` (over alpha) holds a word the program provides. Its uses are bit fields
// of that word, `word // divisor % modulus`, each an extra addressing attribute (slot past the
// unit's own attributes: Semantics::let_fields): the allocator chooses the addresses, and the
// program stores the word they make in the buffer before the unit runs (docs/backend.md,
// "Micro-op words").
struct SymLet {
  int32_t buffer = -1;
  std::vector<Expr> starts;     // one per dimension of the buffer's whole tensor, over alpha
  std::vector<int32_t> fields;  // indices into Semantics::let_fields
  SourceLoc loc;
};

struct SymLetField {
  int32_t slot = -1;    // the attribute slot the field's value takes
  int64_t divisor = 1;  // the field is word // divisor % modulus
  int64_t modulus = 0;  // 0: no modulus (the word's top field)
  std::string name;     // for listings: `word[11:22]`
};

struct SymCase {
  // Everything that must hold for this case: the requires of the unit (and of each call of a
  // macro, substituted) and the conditions of the alpha `if`s that chose this case.
  std::vector<Expr> constraints;
  std::vector<Expr> path;  // the case-split conditions alone (also in constraints)
  std::vector<SymSlice> inputs;
  std::vector<SymOp> ops;
  std::vector<SymSlice> outputs;  // in write order; a later write of the same slice replaces one
  std::vector<SymLet> lets;       // the words this case reads from buffers (lets), in order
  Expr cost;
};

struct Semantics {
  bool selectable = false;
  std::string reason;  // why not selectable (empty if selectable)
  SourceLoc reason_loc;
  std::vector<SymCase> cases;  // empty if not selectable
  // The bit fields of let words, over all cases: field k is attribute slot (unit's attributes +
  // k), an addressing attribute the program encodes into a word rather than an operand.
  std::vector<SymLetField> let_fields;
};

}  // namespace tacit::taidl
