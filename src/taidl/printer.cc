// Canonical .taidl text (docs/taidl.md section 9): declarations in source order, one statement
// per line, two-space indentation, minimal parentheses, operation attributes in the order of the
// opcode table, comments dropped. print(parse(print(x))) == print(x).
#include <algorithm>
#include <array>
#include <cmath>

#include "hlo/dtype.h"
#include "support/strings.h"
#include "taidl/isa.h"
#include "taidl/printer.h"

namespace tacit::taidl {
namespace {

constexpr std::array<std::string_view, 12> kAttrOrder = {"direction",
                                                         "type",
                                                         "dimensions",
                                                         "slice",
                                                         "dynamic_slice_sizes",
                                                         "padding",
                                                         "iota_dimension",
                                                         "lhs_batch_dims",
                                                         "lhs_contracting_dims",
                                                         "rhs_batch_dims",
                                                         "rhs_contracting_dims",
                                                         "to_apply"};

size_t attrRank(std::string_view name) {
  auto it = std::find(kAttrOrder.begin(), kAttrOrder.end(), name);
  return static_cast<size_t>(it - kAttrOrder.begin());
}

std::string exprs(const std::vector<Expr>& list) {
  return joinWith(list, ", ", [](const Expr& e) { return exprText(e); });
}

void line(std::string& out, int indent, const std::string& text) {
  out.append(static_cast<size_t>(indent) * 2, ' ');
  out += text;
  out += '\n';
}

void printBlock(std::string& out, const std::vector<Stmt>& body, int indent);

void printIf(std::string& out, const Stmt& s, int indent, bool chained) {
  std::string head = "if (" + exprText(s.expr) + ") {";
  if (chained) {
    // `} else if (...) {` continues the previous line.
    out.resize(out.size() - 1);
    out += " else " + head + "\n";
  } else {
    line(out, indent, head);
  }
  printBlock(out, s.body, indent + 1);
  line(out, indent, "}");
  if (!s.has_else) return;
  if (s.else_is_if && s.else_body.size() == 1 && s.else_body[0].kind == StmtKind::kIf) {
    printIf(out, s.else_body[0], indent, true);
    return;
  }
  out.resize(out.size() - 1);
  out += " else {\n";
  printBlock(out, s.else_body, indent + 1);
  line(out, indent, "}");
}

void printStmt(std::string& out, const Stmt& s, int indent) {
  switch (s.kind) {
    case StmtKind::kIf:
      printIf(out, s, indent, false);
      return;
    case StmtKind::kRepeat:
      line(out, indent,
           "repeat " + s.name.text + " in [" + exprText(s.expr) + ", " + exprText(s.expr2) + ") {");
      printBlock(out, s.body, indent + 1);
      line(out, indent, "}");
      return;
    default:
      line(out, indent, stmtText(s));
  }
}

void printBlock(std::string& out, const std::vector<Stmt>& body, int indent) {
  for (const Stmt& s : body)
    printStmt(out, s, indent);
}

std::string attrsText(const std::vector<Attribute>& attrs, int32_t num_alpha) {
  auto names = [&](size_t from, size_t to) {
    std::string out;
    for (size_t i = from; i < to; ++i)
      out += (i > from ? ", " : "") + attrs[i].name.text;
    return out;
  };
  auto split = static_cast<size_t>(num_alpha);
  std::string alpha = names(0, split);
  if (split == attrs.size()) return "(" + alpha + ")";
  return "(" + alpha + "; " + names(split, attrs.size()) + ")";
}

std::string argsText(const std::vector<CallArg>& args) {
  return "(" +
         joinWith(args, ", ",
                  [](const CallArg& a) {
                    return (a.name.text.empty() ? std::string() : a.name.text + " = ") +
                           exprText(a.value);
                  }) +
         ")";
}

std::string callText(const Call& c) {
  return c.callee.text + argsText(c.args) + ";";
}

}  // namespace

std::string floatText(double v) {
  std::string s = formatDouble(v);
  // Keep it a floating-point token: "1" would read back as an integer expression.
  if (s.find_first_of(".eEn") == std::string::npos) s += ".0";
  return s;
}

std::string typeText(const TypeExpr& t) {
  return std::string(hlo::primitiveTypeName(t.dtype)) + "[" + exprs(t.dims) + "]";
}

std::string literalText(const LiteralValue& v) {
  switch (v.kind) {
    case LiteralValue::Kind::kExpr:
      return exprText(v.expr);
    case LiteralValue::Kind::kFloat:
      return floatText(v.number);
    case LiteralValue::Kind::kNested:
      return "{" +
             joinWith(v.elements, ", ", [](const LiteralValue& e) { return literalText(e); }) + "}";
  }
  return "";
}

std::string opAttrText(const OpAttr& a) {
  std::string value;
  switch (a.kind) {
    case OpAttr::Kind::kExpr:
      value = exprText(a.expr);
      break;
    case OpAttr::Kind::kList:
      value = "{" + exprs(a.list) + "}";
      break;
    case OpAttr::Kind::kRanges:
      value = "{" +
              joinWith(a.ranges, ", ",
                       [](const RangeExpr& r) {
                         std::string t = "[" + exprText(r.start) + ":" + exprText(r.limit);
                         if (!r.stride.empty()) t += ":" + exprText(r.stride);
                         return t + "]";
                       }) +
              "}";
      break;
  }
  return a.name.text + "=" + value;
}

std::string opText(const Stmt& s) {
  std::vector<const OpAttr*> attrs;
  for (const OpAttr& a : s.attrs)
    attrs.push_back(&a);
  std::stable_sort(attrs.begin(), attrs.end(), [](const OpAttr* x, const OpAttr* y) {
    return attrRank(x->name.text) < attrRank(y->name.text);
  });
  std::string out = "%" + s.name.text + " = " + typeText(s.type) + " " + s.opcode.text + "(" +
                    joinWith(s.operands, ", ", [](const Ident& o) { return "%" + o.text; }) + ")";
  for (const OpAttr* a : attrs)
    out += ", " + opAttrText(*a);
  return out + ";";
}

std::string stmtText(const Stmt& s) {
  switch (s.kind) {
    case StmtKind::kRequire:
      return "require " + exprText(s.expr) + ";";
    case StmtKind::kCost:
      return "cost " + exprText(s.expr) + ";";
    case StmtKind::kTiming: {
      std::vector<std::string> settings;
      if (!s.expr.empty()) settings.push_back("interval = " + exprText(s.expr));
      if (!s.expr2.empty()) settings.push_back("latency = " + exprText(s.expr2));
      if (!s.expr3.empty()) settings.push_back("bytes = " + exprText(s.expr3));
      return "timing " + s.name.text + "(" + join(settings, ", ") + ");";
    }
    case StmtKind::kSet:
      return "set $" + s.name.text + " = " + exprText(s.expr) + ";";
    case StmtKind::kLet:
      return "let " + s.name.text + " = " + s.buffer.text + "[" + exprs(s.starts) + "];";
    case StmtKind::kReads:
    case StmtKind::kWrites:
      return std::string(s.kind == StmtKind::kReads ? "reads " : "writes ") + s.buffer.text + "[" +
             exprs(s.starts) + "] size [" + exprs(s.sizes) + "];";
    case StmtKind::kRead:
      return "%" + s.name.text + " : " + typeText(s.type) + " = read " + s.buffer.text + "[" +
             exprs(s.starts) + "];";
    case StmtKind::kWrite:
      return "write " + s.buffer.text + "[" + exprs(s.starts) + "] = %" + s.name.text + ";";
    case StmtKind::kOp:
      return opText(s);
    case StmtKind::kConstant:
      return "%" + s.name.text + " = " + typeText(s.type) + " constant(" + literalText(s.literal) +
             ");";
    case StmtKind::kIf:
      return "if (" + exprText(s.expr) + ") { ... }";
    case StmtKind::kRepeat:
      return "repeat " + s.name.text + " in [" + exprText(s.expr) + ", " + exprText(s.expr2) +
             ") { ... }";
  }
  return "";
}

std::string printIsa(const Isa& isa) {
  std::string out = "isa " + isa.name + ";\n";
  std::optional<ItemKind> previous;
  for (const Item& item : isa.items) {
    bool big = item.kind == ItemKind::kInstruction || item.kind == ItemKind::kMacro;
    if (big || previous != item.kind) out += '\n';
    previous = item.kind;
    auto i = static_cast<size_t>(item.index);
    switch (item.kind) {
      case ItemKind::kParam:
      case ItemKind::kConst: {
        const Param& p = item.kind == ItemKind::kParam ? isa.params[i] : isa.consts[i];
        std::string value = p.overridden ? std::to_string(p.value) : exprText(p.expr);
        out += std::string(item.kind == ItemKind::kParam ? "param " : "const ") + p.name.text +
               " = " + value + ";\n";
        break;
      }
      case ItemKind::kBuffer: {
        const Buffer& b = isa.buffers[i];
        out += "buffer " + b.name.text + "[" + exprs(b.access_exprs) + "] of " +
               std::string(hlo::primitiveTypeName(b.dtype)) + "[" + exprs(b.unit_exprs) + "];\n";
        break;
      }
      case ItemKind::kRegister: {
        const Register& r = isa.registers[i];
        out += "reg $" + r.name.text + " = " + exprText(r.init) + ";\n";
        break;
      }
      case ItemKind::kInstruction: {
        const Instruction& inst = isa.instructions[i];
        out += "instruction " + inst.name.text + attrsText(inst.attrs, inst.num_alpha) + " {\n";
        printBlock(out, inst.body, 1);
        out += "}\n";
        break;
      }
      case ItemKind::kMacro: {
        const Macro& m = isa.macros[i];
        out += "macro " + m.name.text + attrsText(m.attrs, m.num_alpha) + " {\n";
        for (const Call& c : m.calls)
          line(out, 1, callText(c));
        out += "}\n";
        break;
      }
      case ItemKind::kEngine: {
        const Engine& e = isa.engines[i];
        out += "engine " + e.name.text + (e.settings.empty() ? "" : argsText(e.settings)) + ";\n";
        break;
      }
      case ItemKind::kMemory:
        out += "memory" + argsText(isa.memory->settings) + ";\n";
        break;
    }
  }
  return out;
}

}  // namespace tacit::taidl
