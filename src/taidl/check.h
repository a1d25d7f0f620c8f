// The .taidl checker (docs/taidl.md section 8). Internal to the taidl module: loadIsa (isa.h) is
// the public entry point.
//
// The checker runs in declaration order, so every lookup sees only earlier declarations:
//   declarations   names, parameter/constant folding, buffer sizes, register initial values
//   instructions   body structure (check_body.cc): name resolution with the alpha/beta/register
//                  discipline, value definitions and uses per path, declared slices
//                  ranges (ranges.cc): bounds of the attributes from the requires
//                  types (check_types.cc): HLO shape inference at alpha instantiation points
//                  slices (check_slices.cc): every slice fits its buffer
//                  warnings (check_warnings.cc)
//   macros         call binding (check_macros.cc), then symbolic composition (symbolic.h)
#pragma once

#include <map>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "taidl/isa.h"

namespace tacit::taidl {

// Where an expression appears: decides which references are allowed (section 3.4).
enum class Site : uint8_t {
  kConstExpr,  // parameter, constant, buffer dimension, register initial value
  kStart,      // slice start
  kSize,       // declared slice size
  kType,       // dimension of a type
  kOpAttr,     // operation attribute
  kLiteral,    // constant(...) literal
  kCond,       // if condition
  kBound,      // repeat bound
  kRequire,
  kCost,
  kTiming,  // a timing clause's interval or latency
  kSet,
  kAlphaArg,  // macro call argument for a computational attribute
  kBetaArg,   // macro call argument for an addressing attribute
};

std::string_view siteName(Site site);

// The names an expression may refer to besides the globals.
struct Scope {
  const std::vector<Attribute>* attrs = nullptr;
  const std::vector<std::pair<std::string, int32_t>>* loops = nullptr;  // innermost last
  const std::vector<std::pair<std::string, int32_t>>* lets = nullptr;   // in scope, latest last
  std::vector<bool>* attr_used = nullptr;
  std::string owner;  // "instruction load_rm", for messages
};

// Symbolic equality of two types: dtypes and ranks, then dimension by dimension as polynomials
// (or structurally). kUnknown: some dimension is not a polynomial; compare at instantiation points.
enum class TypeEq : uint8_t { kEqual, kDifferent, kUnknown };
TypeEq compareTypes(const TypeExpr& a, const TypeExpr& b, size_t* differing_dim = nullptr);

// A type equality that could not be decided symbolically; checked at every typing point.
struct DeferredTypeEq {
  const TypeExpr* a;
  const TypeExpr* b;
  uint32_t offset;
  std::string what;  // "the two branches define %x with different types"
};

// One buffer access, for the slice-fits proofs and the overwrite warning.
struct AccessInfo {
  const Stmt* stmt = nullptr;
  const TypeExpr* value_type = nullptr;  // the value written / read
  std::vector<int32_t> loops;            // enclosing loop slots
};

// Per-instruction facts gathered by the body check and used by the later passes.
struct BodyFacts {
  std::vector<DeferredTypeEq> deferred;
  std::vector<AccessInfo> accesses;
  std::vector<const Stmt*> loop_stmts;  // loop slot -> its repeat statement
  std::vector<bool> attr_used;
  std::vector<bool> alpha_relevant;     // alpha used in a type, attribute, condition, bound, size
  std::vector<const Stmt*> value_defs;  // slot -> first defining statement
  std::vector<bool> value_used;
};

class Checker {
 public:
  Checker(Isa& isa, const ParamOverrides& overrides, DiagnosticSink* warnings);
  void run();

  // ---- shared helpers ----
  Isa& isa() { return isa_; }
  void warn(uint32_t offset, std::string message, std::string hint = {});
  // Resolves every reference of `e` for `site`; errors name the offending reference.
  void resolve(Expr& e, const Scope& scope, Site site);
  // "a parameter", "a buffer", ... if `name` is a global declared so far; empty otherwise.
  std::string globalKind(std::string_view name) const;
  // Resolves (constants only) and evaluates; `what` names the declaration in errors.
  int64_t fold(Expr& e, std::string_view what);
  // The index of engine `name` if it is declared before this point (check_timing.cc); an error
  // otherwise.
  int32_t engineDeclared(const Ident& name) const;

 private:
  struct Global {
    ItemKind kind;
    int32_t index;
  };
  void declare(const Ident& name, ItemKind kind, int32_t index);
  void checkParam(Param& p, bool is_const);
  void checkBuffer(Buffer& b);
  void checkRegister(Register& r);
  void checkAttributes(const std::vector<Attribute>& attrs, std::string_view owner);
  void applyOverrides();
  void checkInstructionUnit(int32_t index);
  void checkMacroUnit(int32_t index);
  void checkEngine(Engine& e);  // check_timing.cc
  void checkMemory(MemoryPort& m);
  void finishMacros();

  Isa& isa_;
  ParamOverrides overrides_;
  DiagnosticSink* warnings_;
  std::map<std::string, Global, std::less<>> globals_;
  std::map<std::string, uint32_t, std::less<>> all_names_;  // declared so far -> offset
  std::set<std::string, std::less<>> future_names_;         // every global, for "declared later"
  int32_t engines_checked_ = 0;                             // engines declared so far
};

// Passes over one instruction (each in its own file).
BodyFacts checkBody(Checker& checker, int32_t instruction);
// Bounds of every attribute (alpha and beta) implied by `constraints` (expressions over the
// attributes, parameters and constants only; others are ignored).
std::vector<Interval> inferBounds(const std::vector<Expr>& constraints, int32_t num_attrs);
void checkTypes(Checker& checker, int32_t instruction, const BodyFacts& facts);
void checkSlices(Checker& checker, int32_t instruction, const BodyFacts& facts,
                 const std::vector<Interval>& attr_bounds);
void checkWarnings(Checker& checker, int32_t instruction, const BodyFacts& facts,
                   const std::vector<Interval>& attr_bounds);
void checkMacroCalls(Checker& checker, int32_t macro);

// `e` split into its top-level conjuncts (a && b -> a, b).
void splitConjuncts(const Expr& e, std::vector<Expr>& out);
// The conjuncts of the requires that mention no register (the ones attribute bounds come from).
std::vector<Expr> attributeConstraints(const Instruction& inst);

}  // namespace tacit::taidl
