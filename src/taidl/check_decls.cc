// The checker's driver and the declarations: names, parameters, constants, buffers, registers,
// and expression resolution (docs/taidl.md sections 3 and 8.2).
#include <algorithm>

#include "support/strings.h"
#include "taidl/check.h"
#include "taidl/symbolic.h"

namespace tacit::taidl {

std::string_view siteName(Site site) {
  switch (site) {
    case Site::kConstExpr:
      return "a constant expression";
    case Site::kStart:
      return "a slice start";
    case Site::kSize:
      return "a declared slice size";
    case Site::kType:
      return "a type";
    case Site::kOpAttr:
      return "an operation attribute";
    case Site::kLiteral:
      return "a constant literal";
    case Site::kCond:
      return "an if condition";
    case Site::kBound:
      return "a repeat bound";
    case Site::kRequire:
      return "a require";
    case Site::kCost:
      return "a cost";
    case Site::kTiming:
      return "a timing clause";
    case Site::kSet:
      return "a set";
    case Site::kAlphaArg:
      return "the argument of a computational attribute";
    case Site::kBetaArg:
      return "the argument of an addressing attribute";
  }
  return "an expression";
}

namespace {

bool allowsBeta(Site s) {
  return s == Site::kStart || s == Site::kRequire || s == Site::kCost || s == Site::kTiming ||
         s == Site::kSet || s == Site::kBetaArg;
}
// A let's integer is read from a buffer while the instruction executes (section 4.7): it may
// address and decide, but not set a register (registers never depend on tensor data) nor appear
// at entry (require, cost, timing) or in a shape.
bool allowsLet(Site s) {
  return s == Site::kStart || s == Site::kCond || s == Site::kBound;
}

bool allowsRegister(Site s) {
  return s == Site::kStart || s == Site::kCond || s == Site::kBound || s == Site::kRequire ||
         s == Site::kCost || s == Site::kSet;
}

std::string_view kindName(ItemKind k) {
  switch (k) {
    case ItemKind::kParam:
      return "a parameter";
    case ItemKind::kConst:
      return "a constant";
    case ItemKind::kBuffer:
      return "a buffer";
    case ItemKind::kRegister:
      return "a register";
    case ItemKind::kInstruction:
      return "an instruction";
    case ItemKind::kMacro:
      return "a macro";
    case ItemKind::kEngine:
      return "an engine";
    case ItemKind::kMemory:
      return "the memory interface";
  }
  return "a name";
}

}  // namespace

Checker::Checker(Isa& isa, const ParamOverrides& overrides, DiagnosticSink* warnings)
    : isa_(isa), overrides_(overrides), warnings_(warnings) {}

void Checker::warn(uint32_t offset, std::string message, std::string hint) {
  if (warnings_) warnings_->report(isa_.warning(offset, std::move(message), std::move(hint)));
}

std::string Checker::globalKind(std::string_view name) const {
  auto it = globals_.find(name);
  return it == globals_.end() ? std::string() : std::string(kindName(it->second.kind));
}

void Checker::declare(const Ident& name, ItemKind kind, int32_t index) {
  auto it = globals_.find(name.text);
  if (it != globals_.end()) {
    if (it->second.kind == ItemKind::kBuffer && it->second.index == 0) {
      isa_.fail(name.offset, "'d0' is the implicit HBM buffer and cannot be declared");
    }
    uint32_t at = all_names_.count(name.text) ? all_names_.at(name.text) : 0;
    isa_.fail(name.offset,
              "duplicate name '" + name.text + "': already declared as " +
                  std::string(kindName(it->second.kind)) + " at " + isa_.locText(at),
              "parameters, constants, buffers, instructions and macros share one namespace");
  }
  globals_.emplace(name.text, Global{kind, index});
  all_names_.emplace(name.text, name.offset);
}

void Checker::resolve(Expr& e, const Scope& scope, Site site) {
  for (ExprNode& n : e.mutableNodes()) {
    if (n.op != ExprOp::kRef) continue;
    const std::string& name = e.refName(n);
    if (n.ref == RefKind::kReg) {
      int32_t r = isa_.findRegister(name);
      if (r < 0) isa_.fail(n.offset, "unknown register $" + name);
      if (!allowsRegister(site)) {
        isa_.fail(n.offset,
                  "register $" + name + " cannot appear in " + std::string(siteName(site)),
                  "registers may appear only in slice starts, if conditions, repeat bounds, "
                  "require, cost and set (a shape or attribute that depends on machine state "
                  "cannot be planned)");
      }
      n.slot = r;
      continue;
    }
    if (n.ref != RefKind::kUnresolved) continue;
    if (scope.lets) {
      auto it = std::find_if(scope.lets->rbegin(), scope.lets->rend(),
                             [&](const auto& l) { return l.first == name; });
      if (it != scope.lets->rend()) {
        if (!allowsLet(site))
          isa_.fail(n.offset,
                    "let-bound '" + name + "' cannot appear in " + std::string(siteName(site)),
                    "an integer read by `let` may appear only in slice starts, if conditions and "
                    "repeat bounds (it is data: a shape, a register or a constraint at entry "
                    "cannot depend on it)");
        n.ref = RefKind::kLet;
        n.slot = it->second;
        continue;
      }
    }
    if (scope.loops) {
      auto it = std::find_if(scope.loops->rbegin(), scope.loops->rend(),
                             [&](const auto& l) { return l.first == name; });
      if (it != scope.loops->rend()) {
        n.ref = RefKind::kLoop;
        n.slot = it->second;
        continue;
      }
    }
    if (scope.attrs) {
      for (size_t i = 0; i < scope.attrs->size(); ++i) {
        const Attribute& a = (*scope.attrs)[i];
        if (a.name.text != name) continue;
        if (!a.alpha && !allowsBeta(site)) {
          isa_.fail(
              n.offset,
              "addressing attribute '" + name + "' cannot appear in " + std::string(siteName(site)),
              "addressing (beta) attributes, after ';', may appear only in slice starts, "
              "require, cost and set; an attribute that fixes a shape, an operation "
              "attribute or a condition is computational (before ';')");
        }
        n.ref = a.alpha ? RefKind::kAlpha : RefKind::kBeta;
        n.slot = static_cast<int32_t>(i);
        if (scope.attr_used) (*scope.attr_used)[i] = true;
        break;
      }
      if (n.ref != RefKind::kUnresolved) continue;
    }
    auto g = globals_.find(name);
    if (g == globals_.end()) {
      std::string hint;
      if (future_names_.count(name))
        hint = "'" + name + "' is declared later; declarations must precede their uses";
      else if (scope.attrs && !scope.attrs->empty())
        hint = "the attributes of " + scope.owner + " are " +
               joinWith(*scope.attrs, ", ", [](const Attribute& a) { return a.name.text; });
      if (isa_.findRegister(name) >= 0) hint = "registers are written with '$': $" + name;
      isa_.fail(n.offset, "unknown name '" + name + "'", hint);
    }
    if (g->second.kind != ItemKind::kParam && g->second.kind != ItemKind::kConst) {
      isa_.fail(n.offset,
                "'" + name + "' is " + std::string(kindName(g->second.kind)) + ", not an integer");
    }
    const Param& p = g->second.kind == ItemKind::kParam
                         ? isa_.params[static_cast<size_t>(g->second.index)]
                         : isa_.consts[static_cast<size_t>(g->second.index)];
    n.ref = g->second.kind == ItemKind::kParam ? RefKind::kParam : RefKind::kConst;
    n.slot = g->second.index;
    n.value = p.value;
  }
}

int64_t Checker::fold(Expr& e, std::string_view what) {
  resolve(e, Scope{}, Site::kConstExpr);
  try {
    return evalExpr(e, EvalEnv{});
  } catch (const ExprError& err) {
    isa_.fail(err.offset, err.message + " in " + std::string(what));
  }
}

void Checker::applyOverrides() {
  for (const auto& override : overrides_) {
    const std::string& key = override.first;
    int64_t value = override.second;
    bool known = std::any_of(isa_.params.begin(), isa_.params.end(),
                             [&](const Param& p) { return p.name.text == key; });
    if (known) continue;
    std::string hint =
        isa_.params.empty()
            ? "the spec declares no parameters"
            : "the parameters of " + isa_.name + " are " +
                  joinWith(isa_.params, ", ", [](const Param& p) { return p.name.text; });
    fail("unknown parameter '" + key + "' (--param " + key + "=" + std::to_string(value) + ")",
         hint);
  }
}

void Checker::checkParam(Param& p, bool is_const) {
  p.value = fold(p.expr, std::string(is_const ? "constant " : "parameter ") + p.name.text);
  if (!is_const) {
    for (const auto& [key, value] : overrides_) {
      if (key != p.name.text) continue;
      p.value = value;
      p.overridden = true;
    }
  }
  auto& list = is_const ? isa_.consts : isa_.params;
  declare(p.name, is_const ? ItemKind::kConst : ItemKind::kParam,
          static_cast<int32_t>(&p - list.data()));
}

void Checker::checkBuffer(Buffer& b) {
  declare(b.name, ItemKind::kBuffer, static_cast<int32_t>(&b - isa_.buffers.data()));
  if (!hlo::isEvaluable(b.dtype)) {
    isa_.fail(b.dtype_offset,
              "element type " + std::string(hlo::primitiveTypeName(b.dtype)) + " is not supported",
              "tacit evaluates pred, s8..s64, u8..u64, f16, bf16, f32 and f64");
  }
  if (static_cast<int64_t>(b.access_exprs.size() + b.unit_exprs.size()) > kMaxRank)
    isa_.fail(b.offset, "buffer " + b.name.text + " has more than " + std::to_string(kMaxRank) +
                            " dimensions");
  int64_t bytes = hlo::byteSize(b.dtype);
  auto dims = [&](std::vector<Expr>& exprs, std::vector<int64_t>& out) {
    for (Expr& e : exprs) {
      int64_t v = fold(e, "the size of buffer " + b.name.text);
      if (v < 1)
        isa_.fail(e.offset(), "buffer dimension must be positive, got " + std::to_string(v));
      if (__builtin_mul_overflow(bytes, v, &bytes) || bytes > kMaxBufferBytes)
        isa_.fail(e.offset(), "buffer " + b.name.text + " is too large (the limit is 64 GiB)");
      out.push_back(v);
    }
  };
  dims(b.access_exprs, b.access);
  dims(b.unit_exprs, b.unit);
}

void Checker::checkRegister(Register& r) {
  for (const Register& other : isa_.registers) {
    if (&other == &r) break;
    if (other.name.text == r.name.text)
      isa_.fail(r.name.offset, "register $" + r.name.text + " is already declared at " +
                                   isa_.locText(other.name.offset));
  }
  r.value = fold(r.init, "the initial value of $" + r.name.text);
}

void Checker::checkAttributes(const std::vector<Attribute>& attrs, std::string_view owner) {
  for (size_t i = 0; i < attrs.size(); ++i) {
    const Ident& n = attrs[i].name;
    for (size_t j = 0; j < i; ++j) {
      if (attrs[j].name.text == n.text)
        isa_.fail(n.offset,
                  "attribute '" + n.text + "' of " + std::string(owner) + " is declared twice");
    }
    auto g = globals_.find(n.text);
    if (g != globals_.end())
      isa_.fail(n.offset,
                "attribute '" + n.text + "' shadows " + std::string(kindName(g->second.kind)) +
                    " of the same name",
                "attribute names may not reuse a global name");
  }
}

void Checker::checkInstructionUnit(int32_t index) {
  Instruction& inst = isa_.instructions[static_cast<size_t>(index)];
  declare(inst.name, ItemKind::kInstruction, index);
  checkAttributes(inst.attrs, "instruction " + inst.name.text);
  BodyFacts facts = checkBody(*this, index);
  std::vector<Interval> bounds = inferBounds(attributeConstraints(inst), inst.numAttrs());
  auto& ranges = isa_.instruction_ranges[static_cast<size_t>(index)];
  for (int32_t i = 0; i < inst.num_alpha; ++i)
    ranges.push_back(AlphaRange{bounds[static_cast<size_t>(i)]});
  checkTypes(*this, index, facts);
  checkSlices(*this, index, facts, bounds);
  checkWarnings(*this, index, facts, bounds);
  isa_.instruction_semantics[static_cast<size_t>(index)] = instructionSemantics(isa_, index);
}

void Checker::checkMacroUnit(int32_t index) {
  Macro& m = isa_.macros[static_cast<size_t>(index)];
  declare(m.name, ItemKind::kMacro, index);
  checkAttributes(m.attrs, "macro " + m.name.text);
  checkMacroCalls(*this, index);
  std::vector<Expr> constraints;
  Semantics sem = macroSemantics(isa_, index, &constraints);
  std::vector<Interval> bounds = inferBounds(constraints, m.numAttrs());
  auto& ranges = isa_.macro_ranges[static_cast<size_t>(index)];
  for (int32_t i = 0; i < m.num_alpha; ++i)
    ranges.push_back(AlphaRange{bounds[static_cast<size_t>(i)]});
  isa_.macro_semantics[static_cast<size_t>(index)] = std::move(sem);
}

// After every unit: macros following a register protocol may become selectable (symbolic.h); the
// others are reported.
void Checker::finishMacros() {
  selectRegisterProtocolMacros(isa_);
  for (size_t i = 0; i < isa_.macros.size(); ++i) {
    const Semantics& sem = isa_.macro_semantics[i];
    const Macro& m = isa_.macros[i];
    if (!sem.selectable)
      warn(m.name.offset, "macro " + m.name.text + " is not selectable: " + sem.reason);
  }
}

void Checker::run() {
  applyOverrides();
  declare(isa_.buffers[0].name, ItemKind::kBuffer, 0);
  auto remember = [&](const auto& list) {
    for (const auto& item : list)
      future_names_.insert(item.name.text);
  };
  remember(isa_.params);
  remember(isa_.consts);
  remember(isa_.buffers);
  remember(isa_.instructions);
  remember(isa_.macros);
  isa_.instruction_ranges.assign(isa_.instructions.size(), {});
  isa_.macro_ranges.assign(isa_.macros.size(), {});
  isa_.instruction_semantics.assign(isa_.instructions.size(), {});
  isa_.macro_semantics.assign(isa_.macros.size(), {});
  for (const Item& item : isa_.items) {
    auto i = static_cast<size_t>(item.index);
    switch (item.kind) {
      case ItemKind::kParam:
        checkParam(isa_.params[i], false);
        break;
      case ItemKind::kConst:
        checkParam(isa_.consts[i], true);
        break;
      case ItemKind::kBuffer:
        checkBuffer(isa_.buffers[i]);
        break;
      case ItemKind::kRegister:
        checkRegister(isa_.registers[i]);
        break;
      case ItemKind::kInstruction:
        checkInstructionUnit(item.index);
        break;
      case ItemKind::kMacro:
        checkMacroUnit(item.index);
        break;
      case ItemKind::kEngine:
        checkEngine(isa_.engines[i]);
        break;
      case ItemKind::kMemory:
        checkMemory(*isa_.memory);
        break;
    }
  }
  finishMacros();
}

}  // namespace tacit::taidl
