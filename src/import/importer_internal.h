// Internals of `tacit import-python` (import/importer.h): the shim record's JSON, Python
// expressions, and the converters of TAIDL v1 semantics text and TAIDL v2 (ACT) HLO text.
// Only the importer's own files include this header.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

namespace tacit::importer {

// ---------------------------------------------------------------------------------------------
// JSON (the shim's record)
// ---------------------------------------------------------------------------------------------

struct JsonField;

struct Json {
  enum class Kind { kNull, kBool, kInt, kDouble, kString, kArray, kObject };
  Kind kind = Kind::kNull;
  bool b = false;
  int64_t i = 0;
  double d = 0;
  std::string s;
  std::vector<Json> items;  // array elements
  // Object members, in order. (A vector of a struct declared below: std::pair<string, Json> would
  // need Json complete here, which libstdc++ enforces under clang.)
  std::vector<JsonField> fields;

  bool isString() const { return kind == Kind::kString; }
  bool isArray() const { return kind == Kind::kArray; }
  bool isObject() const { return kind == Kind::kObject; }
  bool isInt() const { return kind == Kind::kInt; }
  const Json* find(std::string_view key) const;  // object member or nullptr
};

struct JsonField {
  std::string key;
  Json value;
};

// Parses JSON text; throws std::runtime_error (an internal error: the shim wrote it).
Json parseJson(std::string_view text);

// ---------------------------------------------------------------------------------------------
// Errors: every conversion error names a line of the spec.
// ---------------------------------------------------------------------------------------------

struct ImportError {
  int line = 0;
  std::string message;
};
[[noreturn]] void fail(int line, std::string message);

// How deep an expression of the spec may nest as .taidl text (unary operators, parentheses,
// min/max, conditionals): .taidl reads 64 levels with the blocks around it (taidl/isa.h), and an
// instruction's body and its IF blocks take a few (docs/import-python.md, "Limitations").
inline constexpr int kMaxExprNesting = 48;

// ---------------------------------------------------------------------------------------------
// Expressions (Python syntax in, .taidl syntax out)
// ---------------------------------------------------------------------------------------------

struct Expr;
using ExprPtr = std::shared_ptr<const Expr>;

struct Expr {
  enum class Kind {
    kInt,      // value
    kFloat,    // text (only where a float constant is allowed)
    kRef,      // prefix 'a' (attribute), 'c' (computational attribute), 's' (register),
               // 'l' (loop variable), 'p' (spec parameter id __pN), 'n' (bare name): name
    kUnary,    // op: "-", "!"
    kBinary,   // op: + - * / // % == != < <= > >= && ||
    kTernary,  // kids: cond, then, else
    kCall,     // op: "min" / "max"
  };
  Kind kind = Kind::kInt;
  int64_t value = 0;
  std::string text;  // float text
  char prefix = 0;
  std::string name;
  std::string op;
  std::vector<ExprPtr> kids;
};

ExprPtr makeInt(int64_t v);
ExprPtr makeBinary(std::string op, ExprPtr a, ExprPtr b);

// Parses a Python expression (with @a./@c./@s./@l. references and parameter markers
// \x1eEXPR\x1dVALUE\x1f). Errors name `line`.
// A float literal is an error unless `floats` is kAllowed: .taidl expressions are integers, and
// floats stand only as constant(...) values (OpConverter::literal).
enum class FloatLiterals { kRejected, kAllowed };
// Whether a float literal stands anywhere in the expression.
bool hasFloat(const Expr& e);
// A Python float literal's text (".32", "1e5", "5.") as a .taidl float literal ("0.32",
// "1e+05", "5.0"): the shortest text of the same double, never digits alone.
std::string floatText(std::string_view python_text);
ExprPtr parsePyExpr(std::string_view text, int line,
                    FloatLiterals floats = FloatLiterals::kRejected);

// How references print: attributes by (renamed) name, registers as $name, parameters by name.
struct Naming {
  std::map<std::string, std::string> attrs;   // attribute name -> printed name
  std::map<std::string, std::string> params;  // __pN -> parameter name
  std::map<std::string, std::string> loops;   // loop variable -> printed name
};

std::string printExpr(const Expr& e, const Naming& naming);
// Every attribute (prefix 'a' or 'c') referenced by the expression.
void collectAttrs(const Expr& e, std::set<std::string>& out);
// Evaluates with attribute/parameter values from `env` (keys "a:name", "p:__pN", ...); nullopt if
// a reference is missing, a division is inexact or by zero.
std::optional<int64_t> evalExpr(const Expr& e, const std::map<std::string, int64_t>& env);

// Replaces every marker \x1eEXPR\x1dVALUE\x1f by VALUE (for names and messages).
std::string concreteText(std::string_view text);
// True if the text holds a marker.
bool hasMarker(std::string_view text);
// If text[i] opens a backquoted span or a parameter marker (\x1e), the index of the character
// that closes it, else i: the scanners of statements and operand lists step over both, whose text
// may hold any bracket or operator. One left open is an ImportError naming `line` (a record is the
// output of a user's Python run: anything goes).
size_t skipOpaque(std::string_view text, size_t i, int line);

// ---------------------------------------------------------------------------------------------
// Instruction conversion (shared by v1 and v2)
// ---------------------------------------------------------------------------------------------

struct TensorType {
  std::string dtype;
  std::vector<ExprPtr> dims;
};

struct BufferInfo {
  std::string name;  // as declared (after renaming)
  std::string dtype;
  size_t access_rank = 0;
  std::vector<ExprPtr> dims;  // access dims ++ unit dims
};

// State while converting one instruction body.
struct Body {
  std::vector<std::string> lines;  // emitted statements, indented
  int indent = 1;
  std::set<std::string> alpha_uses;      // attributes used in computational positions
  std::set<std::string> all_uses;        // attributes used anywhere else (addresses)
  std::map<std::string, int> first_use;  // attribute -> spec line of its first use
  int line = 0;                          // spec line of the statement being converted

  void use(const Expr& e, bool alpha);

  // Constraints the importer derives (printed `require` lines, in order, without duplicates):
  // every slice inside its buffer, every `/` in a shape exact. The published specs state
  // neither (TAIDL-TO clamped slices and truncated quotients silently); the .taidl checker needs
  // both to prove the spec well-formed.
  std::vector<std::string> derived;
  void derive(const std::string& require_line);
  std::map<std::string, TensorType> types;          // SSA value -> type
  std::map<std::string, std::string> current;       // source name -> SSA name on this path
  std::map<std::string, int> versions;              // source name -> redefinitions so far
  std::map<std::string, std::string> other_branch;  // in an else: names the then-branch defined
  int fresh = 0;

  void emit(const std::string& line) { lines.push_back(std::string(2 * indent, ' ') + line); }
};

// What both converters need to know about the ISA.
struct IsaContext {
  std::map<std::string, BufferInfo> buffers;  // by source name ("hbm"/"d0" excluded)
  std::set<std::string> registers;
  Naming naming;
  std::map<std::string, int64_t> param_env;  // "p:__pN" -> default value (for sample checks)
  bool v1 = true;                            // which API the spec uses
  std::vector<std::string> warnings;         // "LINE: message"
};

// Formats a type "s8[n, 16]".
std::string printType(const TensorType& t, const Naming& naming);
// A v1 type string (16x`@a.n`xs8, s32) or a v2 one (s8[`@c.n`, 16]) into a TensorType.
TensorType parseV1Type(std::string_view text, int line);

// Converts one v1 semantics text into statements of `body` (which records α uses).
void convertV1Semantics(std::string_view text, int first_line, const IsaContext& isa, Body& body);

// Converts one v2 `ENTRY name { ... }` module. `inputs` are the types of %In1.. (from
// set_inputs), `outputs` the buffers written by %Out0.. .
void convertV2Semantics(std::string_view text, int first_line, const IsaContext& isa,
                        const std::vector<TensorType>& inputs, Body& body);

// Derives `start >= 0 && start + extent <= dim` per dimension of a slice (only `start >= 0` for
// HBM, where `dims` is empty); dimensions whose start or extent involves registers or repeat
// variables, or no attribute at all, are left to the checker and the oracle.
void deriveSliceBounds(Body& body, const std::vector<ExprPtr>& starts,
                       const std::vector<ExprPtr>& extents, const std::vector<ExprPtr>& dims,
                       const Naming& naming);
// Derives `x >= 0` for a dimension that is exactly an attribute x (sizes are not negative; this
// gives the checker a lower bound to enumerate from).
void deriveNonNegative(Body& body, const Expr& dim, const Naming& naming);
// Derives `a % b == 0` for every exact division `a / b` in an expression over attributes.
void deriveExactDivisions(Body& body, const Expr& e, const Naming& naming);

// Element type checks.
bool isDtype(std::string_view s);
int dtypeBytes(std::string_view dtype);  // 0 for pred or unknown

// Identifier hygiene: .taidl keywords get a trailing '_'.
bool isKeyword(std::string_view s);
std::string safeIdent(std::string_view s);
// `s` as a .taidl value name (after the '%'): HLO and v1 names may hold characters that one cannot
// (a '-', any byte the spec's text carries), which become '_'; a clash is versioned like a
// redefinition (OpConverter::define).
std::string safeValueName(std::string_view s);

}  // namespace tacit::importer
