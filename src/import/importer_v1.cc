// TAIDL v1 semantics text (the MICRO'25 artifact syntax) -> .taidl statements.
//
// The text is preprocessed as the artifact does (all spaces deleted, split into lines, empty lines
// dropped). Each line is IF(...), ELSE, REPEAT(...), a brace, or `%name:TTYPE OP RHS` with OP the
// first of `<-` (read), `->` (write), `=` (operation) after the colon.
#include <random>

#include "import/importer_ops.h"

namespace tacit::importer {
namespace {

struct Line {
  std::string text;
  int line;
};

std::vector<Line> preprocess(std::string_view text, int first_line) {
  std::vector<Line> out;
  int line = first_line;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string_view::npos) end = text.size();
    std::string squeezed;
    for (char c : text.substr(start, end - start)) {
      if (c != ' ' && c != '\t' && c != '\r') squeezed += c;
    }
    if (!squeezed.empty()) out.push_back({squeezed, line});
    ++line;
    start = end + 1;
  }
  return out;
}

// Splits `%name:TTYPE OP RHS` at the first `<-`, `->` or `=` after the colon.
struct Statement {
  std::string name, type, op, rhs;
};

Statement splitStatement(const Line& l) {
  std::string_view s = l.text;
  size_t colon = s.find(':');
  if (s.empty() || s[0] != '%' || colon == std::string_view::npos) {
    fail(l.line,
         "expected '%name:TYPE <- ...', '-> ...' or '= ...', got '" + concreteText(s) + "'");
  }
  for (size_t i = colon + 1; i < s.size(); ++i) {
    char c = s[i];
    if (size_t end = skipOpaque(s, i, l.line); end != i) {
      i = end;
      continue;
    }
    std::string op;
    if (s.substr(i, 2) == "<-" || s.substr(i, 2) == "->")
      op = std::string(s.substr(i, 2));
    else if (c == '=')
      op = "=";
    if (op.empty()) continue;
    Statement st{std::string(s.substr(1, colon - 1)),
                 std::string(s.substr(colon + 1, i - colon - 1)), op,
                 std::string(s.substr(i + op.size()))};
    while (!st.rhs.empty() && st.rhs.back() == ';')
      st.rhs.pop_back();
    return st;
  }
  fail(l.line, "no '<-', '->' or '=' in '" + concreteText(s) + "'");
}

// buf[i0, i1:e1:s1, ...] -> buffer name and index entries (start[:end[:step]]).
struct Access {
  std::string buffer;
  std::vector<std::vector<std::string>> indices;
};

Access parseAccess(std::string_view rhs, int line) {
  size_t open = rhs.find('[');
  if (open == std::string_view::npos || rhs.back() != ']') {
    fail(line, "expected 'buffer[indices]', got '" + concreteText(rhs) + "'");
  }
  if (matchBracket(rhs, open, line) != rhs.size()) fail(line, "unexpected text after ']'");
  Access a;
  a.buffer = std::string(rhs.substr(0, open));
  for (const std::string& idx :
       splitTopLevel(rhs.substr(open + 1, rhs.size() - open - 2), ',', line)) {
    a.indices.push_back(splitTopLevel(idx, ':', line));
  }
  return a;
}

class V1Converter {
 public:
  static constexpr int kMaxNesting = 64;

  V1Converter(const IsaContext& isa, Body& body) : isa_(isa), body_(body), ops_(isa, body) {}

  void block(const std::vector<Line>& lines, size_t& i, bool in_braces) {
    if (body_.indent > kMaxNesting) {
      fail(lines.empty() ? 0 : lines[std::min(i, lines.size() - 1)].line,
           "IF/REPEAT blocks nested too deeply");
    }
    while (i < lines.size()) {
      const Line& l = lines[i];
      if (l.text == "}") {
        if (!in_braces) fail(l.line, "'}' without a matching '{'");
        ++i;
        return;
      }
      if (l.text.rfind("IF(", 0) == 0) {
        ifStatement(lines, i);
      } else if (l.text.rfind("REPEAT(", 0) == 0) {
        repeatStatement(lines, i);
      } else if (l.text == "ELSE" || l.text.rfind("ELSE", 0) == 0) {
        fail(l.line, "ELSE without a preceding IF block");
      } else {
        statement(l);
        ++i;
      }
    }
    if (in_braces) fail(lines.empty() ? 0 : lines.back().line, "missing '}'");
  }

 private:
  // After IF(...)/REPEAT(...) the block opens with '{', on the same line or the next.
  std::string header(const std::vector<Line>& lines, size_t& i, std::string_view keyword) {
    const Line& l = lines[i];
    size_t open = keyword.size() - 1;
    size_t close = matchBracket(l.text, open, l.line);
    std::string inner = l.text.substr(open + 1, close - open - 2);
    std::string rest = l.text.substr(close);
    ++i;
    if (rest == "{") return inner;
    if (!rest.empty())
      fail(l.line,
           "unexpected '" + concreteText(rest) + "' after " + std::string(keyword) + "...)");
    if (i >= lines.size() || lines[i].text != "{")
      fail(l.line, "expected '{' after " + std::string(keyword) + "...)");
    ++i;
    return inner;
  }

  void ifStatement(const std::vector<Line>& lines, size_t& i) {
    int line = lines[i].line;
    body_.line = line;
    ExprPtr cond = parsePyExpr(header(lines, i, "IF("), line);
    ops_.useAlpha(*cond);
    body_.emit("if (" + printExpr(*cond, isa_.naming) + ") {");
    auto saved = body_.current;
    ++body_.indent;
    block(lines, i, true);
    --body_.indent;
    auto then_names = body_.current;
    if (i < lines.size() && (lines[i].text == "ELSE" || lines[i].text == "ELSE{")) {
      body_.current = saved;
      if (lines[i].text == "ELSE{") {
        ++i;
      } else {
        ++i;
        if (i >= lines.size() || lines[i].text != "{")
          fail(lines[i - 1].line, "expected '{' after ELSE");
        ++i;
      }
      body_.emit("} else {");
      auto outer = body_.other_branch;
      for (const auto& [name, ssa] : then_names) {
        auto it = saved.find(name);
        if (it == saved.end() || it->second != ssa) body_.other_branch[name] = ssa;
      }
      ++body_.indent;
      block(lines, i, true);
      --body_.indent;
      body_.other_branch = outer;
      mergeNames(then_names);
    } else {
      body_.current = then_names;
    }
    body_.emit("}");
  }

  // After an if/else a name refers to the value of the branch that ran. A name both branches
  // define has one SSA name (see OpConverter::define); the else branch's entries are current.
  void mergeNames(const std::map<std::string, std::string>& then_names) {
    for (const auto& [name, ssa] : then_names)
      body_.current.emplace(name, ssa);
  }

  void repeatStatement(const std::vector<Line>& lines, size_t& i) {
    int line = lines[i].line;
    body_.line = line;
    std::string inner = header(lines, i, "REPEAT(");
    std::vector<std::string> parts = splitTopLevel(inner, ',', line);
    if (parts.size() != 2) fail(line, "REPEAT needs (variable, count)");
    std::string var = safeIdent(parts[0]);
    ExprPtr count = parsePyExpr(parts[1], line);
    ops_.useAlpha(*count);
    body_.emit("repeat " + var + " in [0, " + printExpr(*count, isa_.naming) + ") {");
    ++body_.indent;
    block(lines, i, true);
    --body_.indent;
    body_.emit("}");
  }

  void statement(const Line& l) {
    body_.line = l.line;
    Statement st = splitStatement(l);
    if (st.op == "<-")
      read(st, l.line);
    else if (st.op == "->")
      write(st, l.line);
    else
      ops_.operation(st.name, parseV1Type(st.type, l.line), st.rhs, l.line);
  }

  // Checks an index's end (and step 1) against the read extent, at a few sample attribute values:
  // the artifact ignored them; tacit uses the extent and warns where they disagree.
  void checkExtent(const std::vector<std::string>& index, const ExprPtr& extent, int line) {
    if (index.size() < 2 || index[1].empty()) return;
    ExprPtr start = parsePyExpr(index[0].empty() ? "0" : index[0], line);
    ExprPtr end = parsePyExpr(index[1], line);
    std::set<std::string> names;
    collectAttrs(*start, names);
    collectAttrs(*end, names);
    collectAttrs(*extent, names);
    std::mt19937 rng(7);
    for (int trial = 0; trial < 4; ++trial) {
      std::map<std::string, int64_t> env = isa_.param_env;
      for (const std::string& n : names) {
        int64_t v = static_cast<int64_t>(rng() % 61) + 4;
        env["a:" + n] = v;
        env["c:" + n] = v;
      }
      auto s = evalExpr(*start, env), e = evalExpr(*end, env), x = evalExpr(*extent, env);
      if (s && e && x && *e - *s != *x) {
        warn(line, "the index range '" + concreteText(index[0]) + ":" + concreteText(index[1]) +
                       "' does not span the read's extent; the extent of the type is used, as "
                       "TAIDL-TO does");
        return;
      }
    }
  }

  void warn(int line, const std::string& message) {
    const_cast<IsaContext&>(isa_).warnings.push_back(std::to_string(line) + ": " + message);
  }

  void read(const Statement& st, int line) {
    TensorType type = parseV1Type(st.type, line);
    Access acc = parseAccess(st.rhs, line);
    ops_.useAlphaType(type);
    bool hbm = acc.buffer == "hbm";
    size_t rank = hbm ? 1 : bufferFor(acc.buffer, line).dims.size();
    if (acc.indices.size() != rank) {
      fail(line, "'" + acc.buffer + "' needs " + std::to_string(rank) + " indices, got " +
                     std::to_string(acc.indices.size()));
    }
    if (!hbm && type.dims.size() != rank) {
      fail(line, "a read of '" + acc.buffer + "' must have the buffer's rank " +
                     std::to_string(rank) + " (unit dimensions included)");
    }
    std::vector<ExprPtr> starts = startsOf(acc, line);
    for (size_t d = 0; d < acc.indices.size() && d < type.dims.size(); ++d) {
      checkExtent(acc.indices[d], type.dims[d], line);
    }
    deriveSliceBounds(body_, starts, type.dims,
                      hbm ? std::vector<ExprPtr>{} : bufferFor(acc.buffer, line).dims, isa_.naming);
    std::string ssa = ops_.define(st.name, type);
    if (!hbm) {
      body_.emit(ssa + " : " + printType(type, isa_.naming) + " = read " +
                 bufferFor(acc.buffer, line).name + "[" + join(printed(starts)) + "];");
      return;
    }
    hbmRead(ssa, type, printExpr(*starts[0], isa_.naming), line);
  }

  // v1 HBM is s8 bytes; tacit's d0 is u8: read bytes and bitcast to the declared byte type.
  void hbmRead(const std::string& ssa, const TensorType& type, const std::string& start, int line) {
    if (type.dims.size() != 1 || dtypeBytes(type.dtype) != 1) {
      fail(line,
           "a read of hbm must be a 1-D byte tensor (N x s8), got " + printType(type, isa_.naming));
    }
    if (type.dtype == "u8") {
      body_.emit(ssa + " : " + printType(type, isa_.naming) + " = read d0[" + start + "];");
      return;
    }
    TensorType bytes{"u8", type.dims};
    std::string raw = ops_.helper(ssa, "u8", bytes);
    body_.emit(raw + " : " + printType(bytes, isa_.naming) + " = read d0[" + start + "];");
    body_.emit(ssa + " = " + printType(type, isa_.naming) + " bitcast-convert(" + raw + ");");
  }

  void write(const Statement& st, int line) {
    Access acc = parseAccess(st.rhs, line);
    std::string value = ops_.value("%" + st.name, line);
    const TensorType& type = body_.types.at(value);
    bool hbm = acc.buffer == "hbm";
    std::vector<ExprPtr> start_exprs = startsOf(acc, line);
    std::vector<std::string> starts = printed(start_exprs);
    deriveSliceBounds(body_, start_exprs, type.dims,
                      hbm ? std::vector<ExprPtr>{} : bufferFor(acc.buffer, line).dims, isa_.naming);
    if (!hbm) {
      const BufferInfo& b = bufferFor(acc.buffer, line);
      if (starts.size() != b.dims.size() || type.dims.size() != b.dims.size()) {
        fail(line, "a write to '" + acc.buffer + "' needs " + std::to_string(b.dims.size()) +
                       " indices and a value of that rank");
      }
      body_.emit("write " + b.name + "[" + join(starts) + "] = " + value + ";");
      return;
    }
    if (starts.size() != 1 || type.dims.size() != 1 || dtypeBytes(type.dtype) != 1) {
      fail(line, "a write to hbm needs one index and a 1-D byte tensor, got " +
                     printType(type, isa_.naming));
    }
    std::string bytes = value;
    if (type.dtype != "u8") {
      TensorType u{"u8", type.dims};
      bytes = ops_.helper(value, "u8", u);
      body_.emit(bytes + " = " + printType(u, isa_.naming) + " bitcast-convert(" + value + ");");
    }
    body_.emit("write d0[" + starts[0] + "] = " + bytes + ";");
  }

  // The start of each index (addressing uses of the attributes in it).
  std::vector<ExprPtr> startsOf(const Access& acc, int line) {
    std::vector<ExprPtr> out;
    for (const auto& index : acc.indices) {
      out.push_back(parsePyExpr(index.empty() || index[0].empty() ? "0" : index[0], line));
      body_.use(*out.back(), false);
    }
    return out;
  }

  std::vector<std::string> printed(const std::vector<ExprPtr>& exprs) const {
    std::vector<std::string> out;
    for (const ExprPtr& e : exprs)
      out.push_back(printExpr(*e, isa_.naming));
    return out;
  }

  const BufferInfo& bufferFor(const std::string& name, int line) const {
    auto it = isa_.buffers.find(name);
    if (it == isa_.buffers.end()) fail(line, "unknown buffer '" + name + "'");
    return it->second;
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string out;
    for (size_t k = 0; k < parts.size(); ++k)
      out += (k ? ", " : "") + parts[k];
    return out;
  }

  const IsaContext& isa_;
  Body& body_;
  OpConverter ops_;
};

}  // namespace

TensorType parseV1Type(std::string_view text, int line) {
  std::vector<std::string> fields = splitTopLevel(text, 'x', line);
  if (fields.empty() || !isDtype(fields.back())) {
    fail(line, "expected a type like 16x16xs8, got '" + concreteText(text) + "'");
  }
  TensorType t;
  t.dtype = fields.back();
  for (size_t k = 0; k + 1 < fields.size(); ++k) {
    if (fields[k].empty()) fail(line, "empty dimension in type '" + concreteText(text) + "'");
    t.dims.push_back(parsePyExpr(fields[k], line));
  }
  return t;
}

void convertV1Semantics(std::string_view text, int first_line, const IsaContext& isa, Body& body) {
  std::vector<Line> lines = preprocess(text, first_line);
  V1Converter converter(isa, body);
  size_t i = 0;
  converter.block(lines, i, false);
}

}  // namespace tacit::importer
