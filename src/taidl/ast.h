// The .taidl syntax tree (docs/taidl.md sections 2-5).
//
// The parser fills the syntactic fields; the checker (check.h) fills the "resolved" fields:
// expression references get kinds and slots, statements get buffer indices and value slots.
// Every node keeps the byte offset of its text so diagnostics and the printer can use source
// names and positions (Isa::loc turns an offset into file:line:col).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "hlo/dtype.h"
#include "hlo/opcode.h"
#include "taidl/expr.h"

namespace tacit::taidl {

struct Ident {
  std::string text;
  uint32_t offset = 0;
};

// `s8[DIM, 4 * n]`, `f32[]`.
struct TypeExpr {
  hlo::PrimitiveType dtype = hlo::PrimitiveType::kInvalid;
  std::vector<Expr> dims;
  uint32_t offset = 0;
};

// `[start:limit]` or `[start:limit:stride]` (slice) / `[lo:hi:interior]` (padding).
struct RangeExpr {
  Expr start, limit, stride;  // stride empty if absent
  uint32_t offset = 0;
};

// One operation attribute `name=value`.
struct OpAttr {
  enum class Kind : uint8_t { kList, kRanges, kExpr };
  Ident name;
  Kind kind = Kind::kExpr;
  std::vector<Expr> list;         // kList: {1, 0}
  std::vector<RangeExpr> ranges;  // kRanges: {[0:n], [0:64:2]}
  Expr expr;                      // kExpr: an expression, or a bare name for enums (direction=LT)
  uint32_t value_offset = 0;
};

// The argument of constant(...): an integer expression, a float, or a nested array literal.
struct LiteralValue {
  enum class Kind : uint8_t { kExpr, kFloat, kNested };
  Kind kind = Kind::kExpr;
  Expr expr;
  double number = 0;
  std::vector<LiteralValue> elements;
  uint32_t offset = 0;
};

enum class StmtKind : uint8_t {
  kRequire,
  kCost,
  kSet,
  kReads,     // reads B[starts] size [sizes];
  kWrites,    // writes B[starts] size [sizes];
  kRead,      // %v : T = read B[starts];
  kWrite,     // write B[starts] = %v;
  kOp,        // %v = T opcode(%a, ...), attrs;
  kConstant,  // %v = T constant(literal);
  kIf,
  kRepeat,
  kTiming,  // timing ENGINE(interval = e, latency = e);
  kLet,     // let i = B[starts];  an integer read from a buffer at entry (section 4.7)
};

struct Stmt {
  StmtKind kind = StmtKind::kRequire;
  uint32_t offset = 0;

  Expr expr;     // require/cost: the expression; set: the value; if: the condition; repeat: lo;
                 // timing: the interval (empty if not given)
  Expr expr2;    // repeat: hi; timing: the latency (empty if not given)
  Expr expr3;    // timing: the HBM bytes it moves (empty if not given)
  Ident name;    // set: the register (without $); read/op/constant: the value defined (without %);
                 // write: the value written; repeat: the loop variable; timing: the engine;
                 // let: the integer it binds
  Ident buffer;  // reads/writes/read/write/let
  std::vector<Expr> starts;  // slices
  std::vector<Expr> sizes;   // reads/writes
  TypeExpr type;             // read/op/constant
  Ident opcode;              // op: the spelling
  hlo::HloOpcode hlo_opcode = hlo::HloOpcode::kUnknown;
  std::vector<Ident> operands;  // op
  std::vector<OpAttr> attrs;    // op
  LiteralValue literal;         // constant
  std::vector<Stmt> body;       // if: then-branch; repeat: body
  std::vector<Stmt> else_body;  // if: else-branch (an else-if is one nested kIf)
  bool has_else = false;
  bool else_is_if = false;  // printed as `else if`

  // ---- resolved by the checker ----
  int32_t reg = -1;           // set
  int32_t buffer_index = -1;  // reads/writes/read/write/let
  int32_t value = -1;         // slot of the defined value (read/op/constant) or written one (write)
  std::vector<int32_t> operand_values;  // op
  int32_t loop = -1;                    // repeat: loop-variable slot; let: its slot
  int32_t decl = -1;                    // reads: j for %In<j>; writes: j for %Out<j>
  int32_t engine = -1;                  // timing: the engine index
};

struct Attribute {
  Ident name;
  bool alpha = true;
};

struct Instruction {
  Ident name;
  uint32_t offset = 0;
  std::vector<Attribute> attrs;  // alpha first, then beta
  int32_t num_alpha = 0;
  std::vector<Stmt> body;

  // ---- resolved by the checker ----
  std::vector<std::string> value_names;  // slot -> value name (without %)
  std::vector<std::string> loop_names;   // slot -> loop variable
  std::vector<std::string> let_names;    // slot -> let-bound integer (section 4.7)
  std::vector<const Stmt*> requires_;    // in textual order
  const Stmt* cost = nullptr;
  const Stmt* timing = nullptr;     // the timing clause (docs/taidl.md section 4.1), if any
  std::vector<const Stmt*> reads;   // declared reads, %In1.. in order
  std::vector<const Stmt*> writes;  // declared writes, %Out0.. in order

  int32_t numAttrs() const { return static_cast<int32_t>(attrs.size()); }
};

struct CallArg {
  Ident name;  // empty text: positional
  Expr value;
  uint32_t offset = 0;
};

struct Call {
  Ident callee;
  std::vector<CallArg> args;
  uint32_t offset = 0;

  // ---- resolved by the checker ----
  bool callee_is_macro = false;
  int32_t callee_index = -1;
  std::vector<Expr> bound;  // one expression per callee attribute, over the macro's attributes
};

struct Macro {
  Ident name;
  uint32_t offset = 0;
  std::vector<Attribute> attrs;
  int32_t num_alpha = 0;
  std::vector<Call> calls;

  int32_t numAttrs() const { return static_cast<int32_t>(attrs.size()); }
};

struct Param {
  Ident name;
  Expr expr;
  uint32_t offset = 0;
  int64_t value = 0;  // resolved: the folded (or overridden) value
  bool overridden = false;
};

struct Buffer {
  Ident name;
  uint32_t offset = 0;
  std::vector<Expr> access_exprs;
  std::vector<Expr> unit_exprs;
  hlo::PrimitiveType dtype = hlo::PrimitiveType::kInvalid;
  uint32_t dtype_offset = 0;
  bool is_hbm = false;  // the implicit d0 (its one access dimension is sized per program)

  // ---- resolved by the checker ----
  std::vector<int64_t> access;  // for d0: {kUnknownSize}
  std::vector<int64_t> unit;

  int64_t rank() const { return static_cast<int64_t>(access.size() + unit.size()); }
};

struct Register {
  Ident name;  // without $
  Expr init;
  uint32_t offset = 0;
  int64_t value = 0;  // resolved
};

// An engine of the timing model (docs/taidl.md section 3.5): `engine load(queue = 8);`.
struct Engine {
  Ident name;
  std::vector<CallArg> settings;  // named
  int64_t queue = 1;              // resolved: instructions it holds, dispatched and not finished
};

// The memory interface of the timing model: `memory(beat = 16, request = 64, in_flight = 16,
// latency = MEM_LATENCY);` (docs/taidl.md section 3.5).
struct MemoryPort {
  uint32_t offset = 0;
  std::vector<CallArg> settings;  // named
  // ---- resolved ----
  int64_t beat = 1;       // bytes per cycle on the bus
  int64_t request = 1;    // bytes per request (also the granule of HBM dependencies)
  int64_t in_flight = 1;  // requests outstanding at once
  int64_t latency = 0;    // cycles from a request to its response
};

enum class ItemKind : uint8_t {
  kParam,
  kConst,
  kBuffer,
  kRegister,
  kInstruction,
  kMacro,
  kEngine,
  kMemory,
};
struct Item {
  ItemKind kind;
  int32_t index;
};

}  // namespace tacit::taidl
