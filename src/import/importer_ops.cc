#include "import/importer_ops.h"

#include <algorithm>
#include <regex>

namespace tacit::importer {
namespace {

// HLO elementwise opcodes the importer passes through (TAIDL spells them with '_').
const std::set<std::string>& unaryOps() {
  static const std::set<std::string> kOps = {"reshape",
                                             "convert",
                                             "copy",
                                             "sign",
                                             "tanh",
                                             "sqrt",
                                             "rsqrt",
                                             "abs",
                                             "negate",
                                             "log",
                                             "log-plus-one",
                                             "floor",
                                             "ceil",
                                             "exponential",
                                             "exponential-minus-one",
                                             "logistic",
                                             "cosine",
                                             "sine",
                                             "not",
                                             "round-nearest-even",
                                             "round-nearest-afz",
                                             "is-finite",
                                             "cbrt",
                                             "erf",
                                             "popcnt",
                                             "count-leading-zeros",
                                             "bitcast-convert"};
  return kOps;
}

const std::set<std::string>& binaryOps() {
  static const std::set<std::string> kOps = {"add",
                                             "subtract",
                                             "multiply",
                                             "divide",
                                             "maximum",
                                             "minimum",
                                             "xor",
                                             "and",
                                             "or",
                                             "remainder",
                                             "power",
                                             "atan2",
                                             "shift-left",
                                             "shift-right-logical",
                                             "shift-right-arithmetic"};
  return kOps;
}

std::string hloName(const std::string& op) {
  if (op == "exp") return "exponential";
  std::string out = op;
  for (char& c : out) {
    if (c == '_') c = '-';
  }
  return out;
}

std::string joinStrings(const std::vector<std::string>& parts) {
  std::string out;
  for (size_t k = 0; k < parts.size(); ++k)
    out += (k ? ", " : "") + parts[k];
  return out;
}

bool isLiteralOne(const Expr& e) {
  return e.kind == Expr::Kind::kInt && e.value == 1;
}

std::string stripBraces(const std::string& text, int line) {
  if (text.size() < 2 || text.front() != '{' || text.back() != '}') {
    fail(line, "expected '{...}', got '" + concreteText(text) + "'");
  }
  return text.substr(1, text.size() - 2);
}

// Walks s from `from` over every character outside the opaque spans (skipOpaque), with the
// bracket depth after it; returns the first position where stop(i, c, depth) holds, else npos.
template <typename Stop>
size_t scanTopLevel(std::string_view s, size_t from, int line, Stop stop) {
  int depth = 0;
  for (size_t i = from; i < s.size(); ++i) {
    if (size_t end = skipOpaque(s, i, line); end != i) {
      i = end;
      continue;
    }
    const char c = s[i];
    if (c == '(' || c == '[' || c == '{') {
      ++depth;
    } else if (c == ')' || c == ']' || c == '}') {
      --depth;
    }
    if (stop(i, c, depth)) return i;
  }
  return std::string_view::npos;
}

}  // namespace

std::vector<std::string> splitTopLevel(std::string_view s, char sep, int line) {
  std::vector<std::string> out;
  size_t start = 0;
  scanTopLevel(s, 0, line, [&](size_t i, char c, int depth) {
    if (c == sep && depth == 0) {
      out.emplace_back(s.substr(start, i - start));
      start = i + 1;
    }
    return false;
  });
  out.emplace_back(s.substr(start));
  if (out.size() == 1 && out[0].empty()) out.clear();
  return out;
}

size_t matchBracket(std::string_view s, size_t open, int line) {
  size_t close = scanTopLevel(s, open, line, [](size_t, char c, int depth) {
    return depth == 0 && (c == ')' || c == ']' || c == '}');
  });
  if (close == std::string_view::npos)
    fail(line, "unbalanced brackets in '" + concreteText(s) + "'");
  return close + 1;
}

void Body::use(const Expr& e, bool alpha) {
  std::set<std::string> names;
  collectAttrs(e, names);
  for (const std::string& n : names) {
    (alpha ? alpha_uses : all_uses).insert(n);
    first_use.emplace(n, line);
  }
}

void Body::derive(const std::string& require_line) {
  if (std::find(derived.begin(), derived.end(), require_line) == derived.end())
    derived.push_back(require_line);
}

namespace {

// True if the expression refers only to attributes and parameters (no register, repeat variable
// or unknown name), and to at least one attribute.
bool overAttributes(const Expr& e, bool& any_attr) {
  if (e.kind == Expr::Kind::kRef) {
    if (e.prefix == 'a' || e.prefix == 'c') any_attr = true;
    if (e.prefix == 's' || e.prefix == 'l' || e.prefix == 'n') return false;
  }
  for (const ExprPtr& k : e.kids) {
    if (!overAttributes(*k, any_attr)) return false;
  }
  return true;
}

}  // namespace

void deriveSliceBounds(Body& body, const std::vector<ExprPtr>& starts,
                       const std::vector<ExprPtr>& extents, const std::vector<ExprPtr>& dims,
                       const Naming& naming) {
  for (size_t d = 0; d < starts.size(); ++d) {
    bool any_attr = false;
    bool usable = overAttributes(*starts[d], any_attr);
    if (!dims.empty())
      usable =
          usable && d < extents.size() && d < dims.size() && overAttributes(*extents[d], any_attr);
    if (!usable || !any_attr) continue;
    const Expr& start = *starts[d];
    bool zero = start.kind == Expr::Kind::kInt && start.value == 0;
    std::vector<std::string> parts;
    if (!zero) parts.push_back(printExpr(*makeBinary(">=", starts[d], makeInt(0)), naming));
    if (!dims.empty()) {
      ExprPtr end = zero ? extents[d] : makeBinary("+", starts[d], extents[d]);
      parts.push_back(printExpr(*makeBinary("<=", end, dims[d]), naming));
    }
    if (parts.empty()) continue;
    std::string line = "require " + parts[0];
    for (size_t k = 1; k < parts.size(); ++k)
      line += " && " + parts[k];
    body.derive(line + ";");
  }
}

void deriveNonNegative(Body& body, const Expr& dim, const Naming& naming) {
  if (dim.kind == Expr::Kind::kRef && (dim.prefix == 'a' || dim.prefix == 'c')) {
    body.derive("require " + printExpr(dim, naming) + " >= 0;");
  }
}

void deriveExactDivisions(Body& body, const Expr& e, const Naming& naming) {
  for (const ExprPtr& k : e.kids)
    deriveExactDivisions(body, *k, naming);
  if (e.kind != Expr::Kind::kBinary || e.op != "/") return;
  bool any_attr = false;
  if (!overAttributes(e, any_attr) || !any_attr) return;
  ExprPtr rem = makeBinary("%", e.kids[0], e.kids[1]);
  body.derive("require " + printExpr(*makeBinary("==", rem, makeInt(0)), naming) + ";");
}

void OpConverter::useAlphaType(const TensorType& t) {
  for (const ExprPtr& d : t.dims) {
    useAlpha(*d);
    deriveNonNegative(body_, *d, isa_.naming);
  }
}

std::string OpConverter::define(const std::string& name, const TensorType& type) {
  std::string base = "%" + safeValueName(name);
  // v1 names such as %In1/%Out0 are ordinary values; keep them clear of the declared-slice
  // names of .taidl (%In<k>, %Out<k>).
  static const std::regex kSlotName("(In|Out)[0-9]+");
  if (isa_.v1 && std::regex_match(name, kSlotName)) base += "_";
  std::string ssa = base;
  auto other = body_.other_branch.find(name);
  if (other != body_.other_branch.end() &&
      printType(body_.types.at(other->second), isa_.naming) == printType(type, isa_.naming)) {
    ssa = other->second;  // defined by the other branch of the enclosing if: the same value name
  } else if (body_.current.count(name) != 0 || body_.types.count(base) != 0) {
    // A redefinition (v1 allows them): a fresh version, since .taidl values are single-assignment.
    int& count = body_.versions[name];
    do {
      ssa = base + "." + std::to_string(++count);
    } while (body_.types.count(ssa) != 0);
  }
  body_.types[ssa] = type;
  body_.current[name] = ssa;
  useAlphaType(type);
  return ssa;
}

std::string OpConverter::helper(const std::string& base, const std::string& tag,
                                const TensorType& type) {
  std::string ssa = base + "." + tag;
  for (int k = 2; body_.types.count(ssa) != 0; ++k)
    ssa = base + "." + tag + std::to_string(k);
  body_.types[ssa] = type;
  return ssa;
}

std::string OpConverter::value(const std::string& ref, int line) const {
  if (ref.size() < 2 || ref[0] != '%')
    fail(line, "expected a value (%name), got '" + concreteText(ref) + "'");
  auto it = body_.current.find(ref.substr(1));
  if (it == body_.current.end()) fail(line, "value " + ref + " is used before it is defined");
  return it->second;
}

std::vector<std::string> OpConverter::operands(const std::vector<std::string>& args, size_t count,
                                               const std::string& op, int line) const {
  if (args.size() != count) {
    fail(line, "'" + op + "' takes " + std::to_string(count) + " operand(s), got " +
                   std::to_string(args.size()));
  }
  std::vector<std::string> out;
  for (const std::string& a : args)
    out.push_back(value(a, line));
  return out;
}

std::string OpConverter::exprList(const std::string& text, int line) {
  std::vector<std::string> items;
  for (const std::string& item : splitTopLevel(stripBraces(text, line), ',', line)) {
    ExprPtr e = parsePyExpr(item, line);
    useAlpha(*e);
    items.push_back(printExpr(*e, isa_.naming));
  }
  return "{" + joinStrings(items) + "}";
}

std::string OpConverter::sliceList(const std::string& text, int line) {
  std::vector<std::string> ranges;
  for (const std::string& item : splitTopLevel(stripBraces(text, line), ',', line)) {
    if (item.size() < 2 || item.front() != '[' || item.back() != ']') {
      fail(line, "expected a range [start:limit(:stride)], got '" + concreteText(item) + "'");
    }
    std::vector<std::string> parts = splitTopLevel(item.substr(1, item.size() - 2), ':', line);
    if (parts.size() < 2 || parts.size() > 3)
      fail(line, "a slice range needs start:limit(:stride)");
    std::vector<std::string> printed;
    for (size_t k = 0; k < parts.size(); ++k) {
      ExprPtr e = parsePyExpr(parts[k], line);
      useAlpha(*e);
      if (k == 2 && e->kind == Expr::Kind::kInt && e->value == 1) break;  // stride 1 is the default
      printed.push_back(printExpr(*e, isa_.naming));
    }
    std::string range = "[" + printed[0] + ":" + printed[1];
    if (printed.size() == 3) range += ":" + printed[2];
    ranges.push_back(range + "]");
  }
  return "{" + joinStrings(ranges) + "}";
}

// A constant's literal: float<lit> (v1), a number, or an integer expression over attributes.
std::string OpConverter::literal(const std::string& text, int line) {
  std::string t = text;
  if (t.rfind("float", 0) == 0) t = t.substr(5);
  if (t.empty()) fail(line, "constant() needs a value");
  ExprPtr e = parsePyExpr(t, line, FloatLiterals::kAllowed);
  bool negated = e->kind == Expr::Kind::kUnary && e->op == "-";
  const Expr& f = negated ? *e->kids[0] : *e;
  std::string sign = negated ? "-" : "";
  if (f.kind == Expr::Kind::kFloat) return sign + floatText(f.text);
  if (f.kind == Expr::Kind::kRef && (f.name == "inf" || f.name == "nan")) return sign + f.name;
  if (hasFloat(*e)) fail(line, "a floating-point number inside the expression '" + t + "'");
  useAlpha(*e);
  return printExpr(*e, isa_.naming);
}

std::string OpConverter::typedConstant(const std::string& base, const std::string& tag,
                                       const std::string& dtype, const std::string& text,
                                       int line) {
  if (!isDtype(dtype)) fail(line, "unknown element type '" + dtype + "'");
  TensorType scalar{dtype, {}};
  std::string h = helper(base, tag, scalar);
  body_.emit(h + " = " + typeText(scalar) + " constant(" + literal(text, line) + ");");
  return h;
}

void OpConverter::operation(const std::string& name, const TensorType& type, const std::string& rhs,
                            int line) {
  size_t open = rhs.find('(');
  if (open == std::string::npos || open == 0)
    fail(line, "expected an operation 'op(...)', got '" + concreteText(rhs) + "'");
  std::string opname = rhs.substr(0, open);
  size_t close = matchBracket(rhs, open, line) - 1;  // the operand list's ')'
  std::vector<std::string> args = splitTopLevel(rhs.substr(open + 1, close - open - 1), ',', line);
  AttrList attrs;
  std::string rest = rhs.substr(close + 1);
  if (!rest.empty()) {
    if (rest[0] != ',') fail(line, "unexpected '" + concreteText(rest) + "' after the operands");
    for (const std::string& a : splitTopLevel(rest.substr(1), ',', line)) {
      size_t eq = a.find('=');
      if (eq == std::string::npos)
        fail(line, "expected attribute=value, got '" + concreteText(a) + "'");
      attrs.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    }
  }
  operation(name, type, opname, args, attrs, line);
}

std::string OpConverter::attrText(const std::string& key, const std::string& value, int line) {
  if (key == "slice") return "slice=" + sliceList(value, line);
  if (key == "direction") return key + "=" + value;
  return key + "=" + exprList(value, line);
}

void OpConverter::operation(const std::string& name, const TensorType& type,
                            const std::string& opname, const std::vector<std::string>& args,
                            const AttrList& attrs, int line) {
  std::string op = hloName(opname);
  auto emitWith = [&](const std::string& ssa, const std::string& call,
                      const std::string& attr_text) {
    body_.emit(ssa + " = " + typeText(type) + " " + call + attr_text + ";");
  };
  auto attrsOf = [&](std::initializer_list<const char*> allowed) {
    std::string out;
    for (const auto& [k, v] : attrs) {
      bool ok = false;
      for (const char* a : allowed)
        ok = ok || k == a;
      if (!ok) fail(line, "'" + opname + "' does not take the attribute '" + k + "'");
      out += ", " + attrText(k, v, line);
    }
    return out;
  };
  if (unaryOps().count(op) != 0 || binaryOps().count(op) != 0) {
    std::vector<std::string> ops = operands(args, unaryOps().count(op) ? 1 : 2, opname, line);
    std::string ssa = define(name, type);
    emitWith(ssa, op + "(" + joinStrings(ops) + ")", attrsOf({}));
  } else if (op == "transpose" || op == "concatenate") {
    std::vector<std::string> ops;
    for (const std::string& a : args)
      ops.push_back(value(a, line));
    if (ops.empty() || (op == "transpose" && ops.size() != 1))
      fail(line, "'" + opname + "' needs operands");
    std::string attr_text = attrsOf({"dimensions"});
    if (attr_text.empty()) {
      if (op == "transpose") fail(line, "transpose needs dimensions={...}");
      attr_text = ", dimensions={0}";  // TAIDL v1's concatenate always joins along dimension 0
    }
    std::string ssa = define(name, type);
    emitWith(ssa, op + "(" + joinStrings(ops) + ")", attr_text);
  } else if (op == "slice") {
    std::vector<std::string> ops = operands(args, 1, opname, line);
    std::string attr_text = attrsOf({"slice"});
    if (attr_text.empty()) fail(line, "slice needs slice={[start:limit], ...}");
    std::string ssa = define(name, type);
    emitWith(ssa, "slice(" + ops[0] + ")", attr_text);
  } else if (op == "constant") {
    if (args.size() != 1) fail(line, "constant takes one value");
    std::string lit = literal(args[0], line);
    std::string ssa = define(name, type);
    emitWith(ssa, "constant(" + lit + ")", "");
  } else if (op == "dot") {
    dot(name, type, operands(args, 2, opname, line), attrs, line);
  } else if (op == "broadcast" || op == "broadcast-dim" || op == "broadcast-type") {
    std::string dims;
    if (op == "broadcast-dim") {
      if (args.size() != 2) fail(line, "broadcast_dim takes (value, {dims})");
      dims = exprList(args[1], line);
    } else {
      if (args.size() != 1) fail(line, "'" + opname + "' takes one operand");
      for (const auto& [k, v] : attrs) {
        if (k != "dimensions") fail(line, "broadcast does not take the attribute '" + k + "'");
        dims = exprList(v, line);
      }
      if (op == "broadcast-type") dims = "{}";
    }
    broadcast(name, type, value(args[0], line), dims, op == "broadcast" && isa_.v1, line);
  } else if (op == "reduce" || op == "reduce-add") {
    reduce(name, type, args, attrs, op == "reduce-add", line);
  } else if (op == "dynamic-update-slice") {
    dynamicUpdateSlice(name, type, args, line);
  } else if (op == "clamp") {
    clamp(name, type, args, line);
  } else if (op == "select-lt") {
    selectLt(name, type, args, line);
  } else {
    fail(line, "unsupported operator '" + opname + "'");
  }
}

void OpConverter::dot(const std::string& name, const TensorType& type,
                      const std::vector<std::string>& ops, const AttrList& attrs, int line) {
  static const char* kOrder[] = {"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims",
                                 "rhs_contracting_dims"};
  std::map<std::string, std::string> lists;
  for (const auto& [k, v] : attrs) {
    bool known = false;
    for (const char* o : kOrder)
      known = known || k == o;
    if (!known && k != "operand_precision")
      fail(line, "dot does not take the attribute '" + k + "'");
    if (known) lists[k] = exprList(v, line);
  }
  if (!isa_.v1 && lists.empty()) {
    // ACT's v2 defaults: contract lhs dimension 1 with rhs dimension 0.
    lists["lhs_contracting_dims"] = "{1}";
    lists["rhs_contracting_dims"] = "{0}";
  }
  std::string attr_text;
  for (const char* o : kOrder) {
    auto it = lists.find(o);
    if (it != lists.end() && it->second != "{}")
      attr_text += std::string(", ") + o + "=" + it->second;
  }
  std::string ssa = define(name, type);
  body_.emit(ssa + " = " + typeText(type) + " dot(" + ops[0] + ", " + ops[1] + ")" + attr_text +
             ";");
}

// v1 broadcast(%A) (dims {r-1..0}) only splats: a scalar or all-1 operand becomes a fill; an
// operand of the result's rank with size-1 dimensions is broadcast along them (numpy style).
// broadcast_dim keeps its dims; v2 honours its declared dims (a [1] operand with {} is a fill).
void OpConverter::broadcast(const std::string& name, const TensorType& type,
                            const std::string& operand, const std::string& dims_attr, bool v1_plain,
                            int line) {
  TensorType in = typeOf(operand);
  std::string src = operand;
  std::string dims = dims_attr;
  bool all_ones = !in.dims.empty();
  for (const ExprPtr& d : in.dims)
    all_ones = all_ones && isLiteralOne(*d);
  if (in.dims.empty()) {
    dims = "{}";
  } else if (all_ones && (v1_plain || dims == "{}")) {
    TensorType scalar{in.dtype, {}};
    src = helper(operand, "scalar", scalar);
    body_.emit(src + " = " + typeText(scalar) + " reshape(" + operand + ");");
    dims = "{}";
  } else if (v1_plain) {
    if (in.dims.size() != type.dims.size()) {
      fail(line, "broadcast of " + typeText(in) + " to " + typeText(type) +
                     " is not a splat; use broadcast_dim with explicit dimensions");
    }
    TensorType kept{in.dtype, {}};
    std::vector<std::string> positions;
    for (size_t k = 0; k < in.dims.size(); ++k) {
      if (isLiteralOne(*in.dims[k])) continue;
      if (printExpr(*in.dims[k], isa_.naming) != printExpr(*type.dims[k], isa_.naming)) {
        fail(line, "broadcast of " + typeText(in) + " to " + typeText(type) + ": dimension " +
                       std::to_string(k) + " differs and is not 1");
      }
      kept.dims.push_back(in.dims[k]);
      positions.push_back(std::to_string(k));
    }
    src = helper(operand, "squeezed", kept);
    body_.emit(src + " = " + typeText(kept) + " reshape(" + operand + ");");
    dims = "{" + joinStrings(positions) + "}";
  } else if (dims.empty()) {
    fail(line, "broadcast needs dimensions={...}");
  }
  std::string ssa = define(name, type);
  body_.emit(ssa + " = " + typeText(type) + " broadcast(" + src + "), dimensions=" + dims + ";");
}

void OpConverter::reduce(const std::string& name, const TensorType& type,
                         const std::vector<std::string>& args, const AttrList& attrs,
                         bool add_sugar, int line) {
  std::string x, init, dims, fn;
  if (add_sugar) {  // v2 reduce_add(%x), dimensions={...}
    if (args.size() != 1) fail(line, "reduce_add takes one operand");
    x = value(args[0], line);
    for (const auto& [k, v] : attrs) {
      if (k != "dimensions") fail(line, "reduce_add does not take the attribute '" + k + "'");
      dims = exprList(v, line);
    }
    init = typedConstant(x, "zero", typeOf(x).dtype, "0", line);
    fn = "add";
  } else {  // v1 reduce(%x, %init, {dims}, add_func_f32)
    if (args.size() != 4) fail(line, "reduce takes (value, init, {dimensions}, reducer)");
    x = value(args[0], line);
    init = value(args[1], line);
    dims = exprList(args[2], line);
    static const std::map<std::string, std::string> kReducers = {{"add_func_", "add"},
                                                                 {"max_func_", "maximum"},
                                                                 {"min_func_", "minimum"},
                                                                 {"mul_func_", "multiply"}};
    for (const auto& [prefix, hlo] : kReducers) {
      if (args[3].rfind(prefix, 0) == 0) {
        fn = hlo;
        std::string rtype = args[3].substr(prefix.size());
        if (rtype != typeOf(x).dtype) {
          fail(line, "reducer '" + args[3] + "' applied to " + typeOf(x).dtype + " values");
        }
      }
    }
    if (fn.empty())
      fail(line, "unknown reducer '" + args[3] + "' (add_func_T, max_func_T, min_func_T)");
  }
  if (dims.empty()) fail(line, "reduce needs dimensions");
  std::string ssa = define(name, type);
  body_.emit(ssa + " = " + typeText(type) + " reduce(" + x + ", " + init + "), dimensions=" + dims +
             ", to_apply=" + fn + ";");
}

// Start indices: %values, or `T[] constant(K)` / plain integers (typed s32 constants).
void OpConverter::dynamicUpdateSlice(const std::string& name, const TensorType& type,
                                     const std::vector<std::string>& args, int line) {
  if (args.size() < 2) fail(line, "dynamic_update_slice takes (operand, update, starts...)");
  std::string x = value(args[0], line), update = value(args[1], line);
  std::vector<std::string> parts = {x, update};
  static const std::regex kConst("([a-z0-9]+)\\[\\]constant\\((.+)\\)");
  for (size_t k = 2; k < args.size(); ++k) {
    std::smatch m;
    if (!args[k].empty() && args[k][0] == '%') {
      parts.push_back(value(args[k], line));
    } else if (std::regex_match(args[k], m, kConst)) {
      parts.push_back(typedConstant(x, "start", m[1], m[2], line));
    } else {
      parts.push_back(typedConstant(x, "start", "s32", args[k], line));
    }
  }
  if (parts.size() - 2 != typeOf(x).dims.size()) {
    fail(line, "dynamic_update_slice needs one start per dimension of the operand");
  }
  std::string ssa = define(name, type);
  body_.emit(ssa + " = " + typeText(type) + " dynamic-update-slice(" + joinStrings(parts) + ");");
}

// v1 clamp(lo, %x, hi): literal bounds become constants of %x's element type (the artifact
// always emitted s32 bounds, which is ill-typed for other element types).
void OpConverter::clamp(const std::string& name, const TensorType& type,
                        const std::vector<std::string>& args, int line) {
  if (args.size() != 3) fail(line, "clamp takes (low, value, high)");
  std::string x = value(args[1], line);
  const std::string& dtype = typeOf(x).dtype;
  auto bound = [&](const std::string& a, const char* tag) {
    return !a.empty() && a[0] == '%' ? value(a, line) : typedConstant(x, tag, dtype, a, line);
  };
  std::string lo = bound(args[0], "lo");
  std::string hi = bound(args[2], "hi");
  std::string ssa = define(name, type);
  body_.emit(ssa + " = " + typeText(type) + " clamp(" + lo + ", " + x + ", " + hi + ");");
}

// select_lt(a, b, c, d) = a < b ? c : d.
void OpConverter::selectLt(const std::string& name, const TensorType& type,
                           const std::vector<std::string>& args, int line) {
  std::vector<std::string> ops = operands(args, 4, "select_lt", line);
  TensorType pred{"pred", type.dims};
  std::string ssa = define(name, type);
  std::string lt = helper(ssa, "lt", pred);
  body_.emit(lt + " = " + typeText(pred) + " compare(" + ops[0] + ", " + ops[1] +
             "), direction=LT;");
  body_.emit(ssa + " = " + typeText(type) + " select(" + lt + ", " + ops[2] + ", " + ops[3] + ");");
}

std::string printType(const TensorType& t, const Naming& naming) {
  std::string out = t.dtype + "[";
  for (size_t k = 0; k < t.dims.size(); ++k)
    out += (k ? ", " : "") + printExpr(*t.dims[k], naming);
  return out + "]";
}

}  // namespace tacit::importer
