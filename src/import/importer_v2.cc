// TAIDL v2 semantics (ACT's HLO-like `ENTRY name { ... }` text) -> .taidl operations.
//
// `%InK = T[...] parameter(K-1)` lines are bound by `reads` declarations and skipped; every other
// line is `[ROOT] %name = TYPE[dims] op(operands), attr=value, ...` (the `;` is optional).
#include "import/importer_ops.h"

namespace tacit::importer {
namespace {

struct V2Line {
  std::string text;
  int line;
};

// Statements separated by ';' or newlines (outside brackets), with their spec lines.
std::vector<V2Line> statements(std::string_view body, int first_line) {
  std::vector<V2Line> out;
  std::string cur;
  int line = first_line, cur_line = first_line;
  int depth = 0;
  bool in_quote = false;
  auto flush = [&] {
    std::string t;
    for (char c : cur)
      t += c;
    size_t a = t.find_first_not_of(" \t\r");
    if (a != std::string::npos) out.push_back({t.substr(a), cur_line});
    cur.clear();
  };
  for (char c : body) {
    if (c == '`') in_quote = !in_quote;
    if (!in_quote && (c == '(' || c == '[' || c == '{')) ++depth;
    if (!in_quote && (c == ')' || c == ']' || c == '}')) --depth;
    if (!in_quote && depth == 0 && (c == ';' || c == '\n')) {
      flush();
      if (c == '\n') ++line;
      cur_line = line;
      continue;
    }
    if (c == '\n') ++line;
    if (cur.empty() && (c == ' ' || c == '\t')) continue;
    if (cur.empty()) cur_line = line;
    cur += c;
  }
  flush();
  return out;
}

std::string trim(std::string_view s) {
  size_t a = s.find_first_not_of(" \t\r\n");
  if (a == std::string_view::npos) return "";
  size_t b = s.find_last_not_of(" \t\r\n");
  return std::string(s.substr(a, b - a + 1));
}

class V2Converter {
 public:
  V2Converter(const IsaContext& isa, Body& body) : isa_(isa), body_(body), ops_(isa, body) {}

  void convert(std::string_view text, int first_line, const std::vector<TensorType>& inputs) {
    size_t entry = text.find("ENTRY");
    size_t open = text.find('{');
    size_t close = text.rfind('}');
    int entry_line =
        first_line + static_cast<int>(std::count(
                         text.begin(), text.begin() + std::min(entry, text.size()), '\n'));
    if (entry == std::string_view::npos || open == std::string_view::npos ||
        close == std::string_view::npos || close < open) {
      fail(entry_line, "expected 'ENTRY name { ... }' semantics");
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      std::string name = "In" + std::to_string(k + 1);
      body_.types["%" + name] = inputs[k];
      body_.current[name] = "%" + name;
    }
    int line = first_line + static_cast<int>(std::count(text.begin(), text.begin() + open, '\n'));
    for (const V2Line& st : statements(text.substr(open + 1, close - open - 1), line))
      statement(st);
  }

 private:
  void statement(const V2Line& st) {
    body_.line = st.line;
    std::string s = st.text;
    if (s.rfind("ROOT", 0) == 0 && s.size() > 4 && (s[4] == ' ' || s[4] == '\t'))
      s = trim(s.substr(4));
    size_t eq = s.find('=');
    if (s.empty() || s[0] != '%' || eq == std::string::npos) {
      fail(st.line, "expected '%name = TYPE[dims] op(...)', got '" + concreteText(s) + "'");
    }
    std::string name = trim(s.substr(1, eq - 1));
    std::string rhs = trim(s.substr(eq + 1));
    size_t lb = rhs.find('[');
    if (lb == std::string::npos) fail(st.line, "expected a type TYPE[dims]");
    std::string dtype = trim(rhs.substr(0, lb));
    if (!isDtype(dtype)) fail(st.line, "unknown element type '" + dtype + "'");
    size_t rb = rhs.find(']', lb);
    if (rb == std::string::npos) fail(st.line, "missing ']' in the type");
    TensorType type{dtype, {}};
    for (const std::string& d : splitTopLevel(rhs.substr(lb + 1, rb - lb - 1), ',', st.line)) {
      type.dims.push_back(parsePyExpr(d, st.line));
    }
    std::string call = trim(rhs.substr(rb + 1));
    size_t paren = call.find('(');
    if (paren == std::string::npos) fail(st.line, "expected an operation 'op(...)'");
    std::string opname = trim(call.substr(0, paren));
    if (opname == "parameter") {
      parameter(name, type, st.line);
      return;
    }
    size_t end = matchBracket(call, paren, st.line) - 1;  // the operand list's ')'
    std::vector<std::string> args;
    for (const std::string& a :
         splitTopLevel(call.substr(paren + 1, end - paren - 1), ',', st.line)) {
      args.push_back(trim(a));
    }
    AttrList attrs;
    std::string rest = trim(call.substr(end + 1));
    if (!rest.empty()) {
      if (rest[0] != ',')
        fail(st.line, "unexpected '" + concreteText(rest) + "' after the operands");
      for (const std::string& a : splitTopLevel(rest.substr(1), ',', st.line)) {
        size_t e = a.find('=');
        if (e == std::string::npos)
          fail(st.line, "expected attribute=value, got '" + concreteText(a) + "'");
        attrs.emplace_back(trim(a.substr(0, e)), removeSpaces(a.substr(e + 1)));
      }
    }
    ops_.operation(name, type, opname, args, attrs, st.line);
  }

  static std::string removeSpaces(std::string_view s) {
    std::string out;
    for (char c : s) {
      if (c != ' ' && c != '\t') out += c;
    }
    return out;
  }

  // %InK = T[...] parameter(K-1): bound by the K-th `reads`; the declared type must match.
  void parameter(const std::string& name, const TensorType& type, int line) {
    auto it = body_.types.find("%" + name);
    if (it == body_.types.end()) {
      fail(line, "parameter %" + name + " has no matching set_inputs entry");
    }
    if (printType(it->second, isa_.naming) != printType(type, isa_.naming)) {
      const_cast<IsaContext&>(isa_).warnings.push_back(
          std::to_string(line) + ": parameter %" + name + " is declared " +
          printType(type, isa_.naming) + " but its input slice is " +
          printType(it->second, isa_.naming));
    }
  }

  const IsaContext& isa_;
  Body& body_;
  OpConverter ops_;
};

}  // namespace

void convertV2Semantics(std::string_view text, int first_line, const IsaContext& isa,
                        const std::vector<TensorType>& inputs, Body& body) {
  V2Converter(isa, body).convert(text, first_line, inputs);
}

}  // namespace tacit::importer
