// `.tasm` programs (docs/tasm.md): the oracle's input and the backend's output.
//
// A Program is a kernel: an HBM size, tensors at HBM byte addresses (inputs, outputs, constants
// with their values) and a body of statements — instruction or macro calls whose attribute values
// are affine in the enclosing loop variables, nestable loops, and debug prints. Calls are
// resolved against an Isa (unit index, one value per attribute in declaration order), so a
// Program always belongs to the Isa it was parsed or built for.
//
// Building one in memory (what the backend does with its allocation result):
//
//   oracle::Program p("attention", 40960);
//   p.addInput("q", 0, hlo::Shape(bf16, {64, 64}));
//   p.addOutput("o", 24576, hlo::Shape(bf16, {64, 64}));
//   p.call(isa, "load_rm", {64, 0, 0});                          // positional
//   p.call(isa, "gemm", {{"addr_1", 0}, {"addr_2", 64}, {"addr_out", 0}});   // named
//   oracle::Affine j = p.beginLoop("j", 0, 4);
//   p.call(isa, "mvin", {16, 256 * j, 16 * j});                 // affine in j
//   p.endLoop();
//   std::string text = oracle::printProgram(isa, p);            // docs/tasm.md syntax
//
// Builder methods throw DiagnosticError (without a position) for unknown units, attribute
// mistakes and misuse (endLoop without a loop); tensor placement (overlap, HBM overflow) is
// checked by checkProgram(), which the parser and every run call.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "hlo/literal.h"
#include "hlo/shape.h"
#include "support/diagnostic.h"
#include "taidl/isa.h"

namespace tacit::oracle {

// Limits (docs/tasm.md "Limits").
inline constexpr int64_t kMaxHbmBytes = int64_t{1} << 34;      // 16 GiB of HBM per kernel
inline constexpr size_t kMaxLoopDepth = 16;                    // nested loops
inline constexpr size_t kMaxTensors = 4096;                    // input/output/const declarations
inline constexpr int64_t kDefaultMaxSteps = int64_t{1} << 32;  // executed statements per run

// constant + Σ coeff·loop[depth]: an attribute value or loop bound. Loop variables are numbered
// by nesting depth (0 = outermost enclosing loop).
struct Affine {
  struct Term {
    uint32_t depth = 0;
    int64_t coeff = 0;
    friend bool operator==(const Term&, const Term&) = default;
  };
  int64_t constant = 0;
  std::vector<Term> terms;  // sorted by depth, no zero coefficients, each depth at most once

  Affine() = default;
  Affine(int64_t c) : constant(c) {}  // NOLINT: plain integers are affine values
  Affine(int c) : constant(c) {}      // NOLINT
  // coeff·loop[depth] + constant.
  static Affine var(uint32_t depth, int64_t coeff = 1, int64_t constant = 0);

  bool isConstant() const { return terms.empty(); }
  // The largest depth used + 1 (0 for constants).
  uint32_t depthNeeded() const { return terms.empty() ? 0 : terms.back().depth + 1; }
  // Evaluates with the loop values (one per depth); false on int64 overflow.
  bool eval(std::span<const int64_t> loops, int64_t* out) const;

  // Exact affine arithmetic (overflow throws DiagnosticError).
  friend Affine operator+(const Affine& a, const Affine& b);
  friend Affine operator-(const Affine& a, const Affine& b);
  friend Affine operator*(int64_t k, const Affine& a);
  friend Affine operator*(const Affine& a, int64_t k) { return k * a; }
  friend bool operator==(const Affine&, const Affine&) = default;
};

enum class TensorKind : uint8_t { kInput, kOutput, kConst };
std::string_view tensorKindName(TensorKind k);  // "input", "output", "const"

struct Tensor {
  TensorKind kind = TensorKind::kInput;
  std::string name;
  int64_t addr = 0;    // HBM byte address
  hlo::Shape shape;    // an array shape; its bytes are stored C order, little-endian at addr
  hlo::Literal value;  // kConst: the value (of `shape`)
  std::string file;    // kConst from `file "x.npy"`: the path as written (else empty)
  SourceLoc loc;

  int64_t byteSize() const { return shape.byteSize(); }
};

enum class StmtKind : uint8_t { kCall, kLoop, kDebug };

// One range of a debug slice: [start, end) of one buffer dimension.
struct DebugRange {
  Affine start, end;
  friend bool operator==(const DebugRange&, const DebugRange&) = default;
};

struct Stmt {
  StmtKind kind = StmtKind::kCall;
  SourceLoc loc;  // where it is in the program text (unknown for built programs)

  // kCall: instruction or macro `unit` of the Isa, one value per attribute (alpha, then beta).
  bool is_macro = false;
  int32_t unit = -1;
  std::vector<Affine> attrs;

  // kLoop: `loop var in [lo, hi) { body }`; bounds over the enclosing loops.
  std::string var;
  Affine lo, hi;
  std::vector<Stmt> body;

  // kDebug: `debug "label" buffer[ranges] as dtype;` — leading dimensions given, the rest whole;
  // `view` (HBM only) reinterprets the bytes as another element type (kInvalid: none).
  std::string label;
  int32_t buffer = -1;
  std::vector<DebugRange> ranges;
  hlo::PrimitiveType view = hlo::PrimitiveType::kInvalid;
};

class Program {
 public:
  Program() = default;
  Program(std::string name, int64_t hbm_bytes) : name(std::move(name)), hbm_bytes(hbm_bytes) {}

  std::string name = "kernel";
  int64_t hbm_bytes = 0;
  std::vector<Tensor> tensors;  // in declaration order
  std::vector<Stmt> body;
  std::string file;  // the program's file (diagnostics; .npy paths are relative to its folder)

  // ---- building (appends to the innermost open loop) ----
  Tensor& addInput(std::string name, int64_t addr, hlo::Shape shape);
  Tensor& addOutput(std::string name, int64_t addr, hlo::Shape shape);
  // A constant with its value; `file` (optional) is the .npy path printed for it.
  Tensor& addConst(std::string name, int64_t addr, hlo::Literal value, std::string file = {});

  // A call with positional attribute values (every attribute, in declaration order). A unit
  // without attributes: call(isa, "name", std::vector<Affine>{}).
  Stmt& call(const taidl::Isa& isa, std::string_view unit, std::vector<Affine> positional);
  // A call with named attribute values (every attribute exactly once).
  Stmt& call(const taidl::Isa& isa, std::string_view unit,
             std::initializer_list<std::pair<std::string_view, Affine>> named);
  Stmt& callNamed(const taidl::Isa& isa, std::string_view unit,
                  const std::vector<std::pair<std::string, Affine>>& named);
  // A call by index (is_macro selects the table); attrs in declaration order.
  Stmt& callUnit(const taidl::Isa& isa, bool is_macro, int32_t unit, std::vector<Affine> attrs);

  // Opens `loop var in [lo, hi)`; returns the loop variable (use it in affine attribute values).
  Affine beginLoop(std::string var, Affine lo, Affine hi);
  void endLoop();
  size_t openLoops() const { return open_.size(); }

  // A debug print of buffer[ranges] (leading dimensions; the rest whole).
  Stmt& debug(const taidl::Isa& isa, std::string label, std::string_view buffer,
              std::vector<DebugRange> ranges = {},
              hlo::PrimitiveType view = hlo::PrimitiveType::kInvalid);

  const Tensor* findTensor(std::string_view name) const;
  // Total statements (calls, loops, debugs) in the text, loops not unrolled.
  size_t statementCount() const;

 private:
  std::vector<Stmt>& cursor();
  Stmt& append(Stmt s);
  std::vector<size_t> open_;  // path of open loops: indices into body, then into each loop's body
};

// Replaces every loop that runs exactly once (constant bounds, hi = lo + 1) by its body, its
// variable at its one value and the loops inside it one level shallower: the same executions,
// fewer statements (a tiled program's loop of one group of buffered copies).
void inlineSingleIterationLoops(Program& program);

// Checks a program against its Isa: HBM size within (0, kMaxHbmBytes], tensors with unique
// names, array shapes, inside HBM, inputs and constants pairwise disjoint, outputs pairwise
// disjoint, constant values of their declared shape, every call with its unit's attribute count,
// loop variables used only inside their loops, loops nested at most kMaxLoopDepth deep, debug
// slices of existing buffers. The first problem is a DiagnosticError at the statement's or
// tensor's location in `program.file`.
void checkProgram(const taidl::Isa& isa, const Program& program);

// Structural equality (locations ignored; constant values compared bitwise).
bool sameProgram(const Program& a, const Program& b);

}  // namespace tacit::oracle
