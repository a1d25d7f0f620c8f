// tacit import-python: the shim record -> .taidl text, and the driver that runs the spec.
#include "import/importer.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "import/importer_ops.h"
#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit::importer {
namespace {

struct Call {
  std::string method;
  int line = 0;
  std::vector<const Json*> args;
  std::map<std::string, const Json*> kwargs;
  std::vector<int> arg_lines;
  std::map<std::string, int> kwarg_lines;
  int instruction = -1;

  // Positional argument `index`, or keyword `name`; nullptr if absent.
  const Json* arg(size_t index, const std::string& name) const {
    if (index < args.size()) return args[index];
    auto it = kwargs.find(name);
    return it == kwargs.end() ? nullptr : it->second;
  }
  int argLine(size_t index, const std::string& name) const {
    if (index < args.size() && index < arg_lines.size()) return arg_lines[index];
    auto it = kwarg_lines.find(name);
    return it == kwarg_lines.end() ? line : it->second;
  }
};

Call readCall(const Json& j) {
  Call c;
  if (const Json* m = j.find("method")) c.method = m->s;
  if (const Json* l = j.find("line")) c.line = static_cast<int>(l->i);
  if (const Json* a = j.find("args")) {
    for (const Json& v : a->items)
      c.args.push_back(&v);
  }
  if (const Json* k = j.find("kwargs")) {
    for (const auto& [name, v] : k->fields)
      c.kwargs[name] = &v;
  }
  if (const Json* al = j.find("arg_lines")) {
    for (const Json& v : al->items)
      c.arg_lines.push_back(static_cast<int>(v.i));
  }
  if (const Json* kl = j.find("kwarg_lines")) {
    for (const auto& [name, v] : kl->fields)
      c.kwarg_lines[name] = static_cast<int>(v.i);
  }
  if (const Json* ins = j.find("instruction")) c.instruction = static_cast<int>(ins->i);
  return c;
}

// A recorded value as text: strings as they are, ints and symbolic ints as markers/decimals.
std::string textOf(const Json* v, int line, const std::string& what) {
  if (v == nullptr) importer::fail(line, what + " is missing");
  if (v->isString()) return v->s;
  if (v->isInt()) return std::to_string(v->i);
  if (v->isObject()) {
    const Json* sym = v->find("sym");
    const Json* value = v->find("value");
    if (sym != nullptr && value != nullptr)
      return "\x1e" + sym->s + "\x1d" + std::to_string(value->i) + "\x1f";
  }
  importer::fail(line, what + " must be a string or an integer");
}

std::vector<const Json*> listOf(const Json* v, int line, const std::string& what) {
  std::vector<const Json*> out;
  if (v == nullptr || v->kind == Json::Kind::kNull) return out;
  if (!v->isArray()) importer::fail(line, what + " must be a list");
  for (const Json& item : v->items)
    out.push_back(&item);
  return out;
}

struct Instr {
  const Call* decl = nullptr;
  std::vector<const Call*> calls;
};

class RecordConverter {
 public:
  RecordConverter(const Json& record, std::string spec) : record_(record), spec_(std::move(spec)) {}

  std::string convert() {
    checkStatus();
    const Json* accs = record_.find("accelerators");
    std::vector<const Json*> used;
    if (accs != nullptr) {
      for (const Json& a : accs->items)
        used.push_back(&a);
    }
    if (used.empty()) importer::fail(0, "the spec created no Accelerator (is it a TAIDL spec?)");
    if (used.size() > 1) {
      const Json* calls = used[1]->find("calls");
      int line = calls && !calls->items.empty() && calls->items[0].find("line")
                     ? static_cast<int>(calls->items[0].find("line")->i)
                     : 0;
      importer::fail(line, "the spec creates a second Accelerator; tacit imports one ISA per spec");
    }
    const Json* recorded = used[0]->find("calls");
    if (recorded == nullptr || !recorded->isArray())
      importer::fail(0, "internal error: a bad shim record");
    for (const Json& c : recorded->items)
      calls_.push_back(readCall(c));
    // The shim records the Accelerator's construction first; header() names the ISA after it.
    if (calls_.empty()) importer::fail(0, "internal error: a bad shim record (no recorded call)");
    decideFlavor(*used[0]);
    collectParams(*used[0]);
    std::ostringstream out;
    header(out);
    for (const Call& c : calls_)
      declaration(c, out);
    for (const Instr& ins : instructions())
      instruction(ins, out);
    return out.str();
  }

  const std::vector<std::string>& warnings() const { return isa_.warnings; }

 private:
  void checkStatus() {
    const Json* status = record_.find("status");
    if (status != nullptr && status->s == "error") {
      const Json* line = record_.find("line");
      const Json* message = record_.find("message");
      importer::fail(line ? static_cast<int>(line->i) : 0,
                     message ? concreteText(message->s) : "the spec failed");
    }
  }

  // v1 or v2: by the call shapes (a string count vs. lists of dims), else by the module imported.
  void decideFlavor(const Json& acc) {
    const Json* flavor = acc.find("flavor");
    bool v1 = flavor == nullptr || !flavor->isString() || flavor->s != "v2";
    for (const Call& c : calls_) {
      if (c.method == "add_data_model" && c.args.size() >= 2) v1 = !c.args[1]->isArray();
      if (c.method == "add_initial_state") v1 = true;
    }
    isa_.v1 = v1;
  }

  // Parameter ids (__pN) that occur in the accelerator's recorded strings and values.
  static void collectIds(const Json& v, std::set<std::string>& out) {
    if (v.isString()) {
      for (size_t pos = v.s.find("__p"); pos != std::string::npos; pos = v.s.find("__p", pos + 3)) {
        size_t end = pos + 3;
        while (end < v.s.size() && v.s[end] >= '0' && v.s[end] <= '9')
          ++end;
        if (end > pos + 3) out.insert(v.s.substr(pos, end - pos));
      }
    }
    for (const Json& item : v.items)
      collectIds(item, out);
    for (const auto& [k, f] : v.fields)
      collectIds(f, out);
  }

  void collectParams(const Json& acc) {
    const Json* params = record_.find("params");
    if (params == nullptr) return;
    std::set<std::string> used_ids;
    collectIds(acc, used_ids);
    std::set<std::string> taken;
    for (const Json& p : params->items) {
      if (!p.find("id") || !p.find("name") || !p.find("value") || !p.find("kind")) continue;
      std::string id = p.find("id")->s;
      if (used_ids.count(id) == 0) continue;  // only parameters the spec's ISA uses
      std::string name = safeIdent(p.find("name")->s);
      while (taken.count(name) != 0)
        name += "_";
      taken.insert(name);
      isa_.naming.params[id] = name;
      isa_.param_env["p:" + id] = p.find("value")->i;
      params_.push_back({name, p.find("value")->i, p.find("kind")->s == "param"});
    }
    globals_ = taken;
  }

  void header(std::ostringstream& out) {
    const Call& ctor = calls_.front();
    std::string name =
        ctor.args.empty() ? "imported" : concreteText(textOf(ctor.args[0], ctor.line, "the name"));
    std::string ident = safeIdent(name);
    std::string squeezed;
    for (char c : ident) {
      if (c == '_' && !squeezed.empty() && squeezed.back() == '_') continue;
      squeezed += c;
    }
    while (squeezed.size() > 1 && squeezed.back() == '_')
      squeezed.pop_back();
    // The '_' safeIdent appends to a keyword was just squeezed off.
    if (importer::isKeyword(squeezed)) squeezed += '_';
    std::string base = std::filesystem::path(spec_).filename().string();
    out << "# Imported by `tacit import-python` from " << base << " (TAIDL "
        << (isa_.v1 ? "v1" : "v2") << " API).\n\nisa " << squeezed << ";\n";
    if (!params_.empty()) out << "\n";
    for (const Param& p : params_)
      out << (p.overridable ? "param " : "const ") << p.name << " = " << p.value << ";\n";
  }

  void declaration(const Call& c, std::ostringstream& out) {
    if (c.method == "add_data_model") {
      if (isa_.buffers.empty() && !declared_any_) out << "\n";
      declared_any_ = true;
      dataModel(c, out);
    } else if (c.method == "add_initial_state") {
      if (!declared_any_) out << "\n";
      declared_any_ = true;
      const Json* value = c.arg(1, "value");
      std::string name = textOf(c.arg(0, "state_name"), c.line, "the register name");
      ExprPtr v = parsePyExpr(textOf(value, c.line, "the initial value"), c.line);
      isa_.registers.insert(name);
      out << "reg $" << safeIdent(name) << " = " << printExpr(*v, isa_.naming) << ";\n";
    }
  }

  void dataModel(const Call& c, std::ostringstream& out) {
    std::string name = textOf(c.arg(0, "model_name"), c.line, "the buffer name");
    BufferInfo b;
    b.name = safeIdent(name);
    if (b.name == "d0") b.name = "d0_";  // d0 is tacit's HBM
    std::vector<ExprPtr> access, unit;
    if (isa_.v1) {
      if (name == "hbm")
        importer::fail(c.line, "'hbm' is the implicit HBM; a buffer cannot be named so");
      for (const std::string& d :
           importer::splitTopLevel(textOf(c.arg(1, "count"), c.line, "the count"), 'x', c.line)) {
        if (!d.empty()) access.push_back(parsePyExpr(d, c.line));  // an empty count: no access dims
      }
      TensorType t = importer::parseV1Type(textOf(c.arg(2, "shape"), c.line, "the shape"), c.line);
      unit = t.dims;
      b.dtype = t.dtype;
    } else {
      if (name == "d0") return;  // ACT's implicit HBM
      for (const Json* d : listOf(c.arg(1, "dimensions"), c.line, "the access dimensions")) {
        access.push_back(parsePyExpr(textOf(d, c.line, "a dimension"), c.line));
      }
      for (const Json* d : listOf(c.arg(2, "unit_dim"), c.line, "the unit dimensions")) {
        unit.push_back(parsePyExpr(textOf(d, c.line, "a dimension"), c.line));
      }
      b.dtype = textOf(c.arg(3, "var_type"), c.line, "the element type");
      if (!importer::isDtype(b.dtype))
        importer::fail(c.line, "unknown element type '" + b.dtype + "'");
    }
    b.access_rank = access.size();
    b.dims = access;
    b.dims.insert(b.dims.end(), unit.begin(), unit.end());
    if (isa_.buffers.count(name) != 0 || globals_.count(b.name) != 0) {
      importer::fail(c.line, "buffer '" + name + "' is declared twice");
    }
    globals_.insert(b.name);
    isa_.buffers[name] = b;
    TensorType at{b.dtype, access}, ut{b.dtype, unit};
    std::string a = importer::printType(at, isa_.naming), u = importer::printType(ut, isa_.naming);
    out << "buffer " << b.name << a.substr(b.dtype.size()) << " of " << u << ";\n";
  }

  std::vector<Instr> instructions() const {
    std::vector<Instr> out;
    for (const Call& c : calls_) {
      if (c.method == "add_instruction") {
        out.push_back({&c, {}});
      } else if (c.instruction >= 0 && static_cast<size_t>(c.instruction) < out.size()) {
        out[static_cast<size_t>(c.instruction)].calls.push_back(&c);
      }
    }
    return out;
  }

  void instruction(const Instr& ins, std::ostringstream& out);

  struct Param {
    std::string name;
    int64_t value;
    bool overridable;
  };

  const Json& record_;
  std::string spec_;
  std::vector<Call> calls_;
  std::vector<Param> params_;
  std::set<std::string> globals_;
  IsaContext isa_;
  bool declared_any_ = false;
};

// Constraint lists: a Python list of strings, or one string with one constraint per line.
std::vector<std::pair<std::string, int>> constraintTexts(const Json* v, int line) {
  std::vector<std::pair<std::string, int>> out;
  if (v == nullptr || v->kind == Json::Kind::kNull) return out;
  if (v->isString()) {
    int l = line;
    std::istringstream in(v->s);
    for (std::string s; std::getline(in, s); ++l) {
      if (s.find_first_not_of(" \t\r") != std::string::npos) out.emplace_back(s, l);
    }
    return out;
  }
  for (const Json* item : listOf(v, line, "the constraints"))
    out.emplace_back(textOf(item, line, "a constraint"), line);
  return out;
}

// `@s.r = e`, `@s.r += e`, ... -> (register, expression).
std::pair<std::string, ExprPtr> parseUpdate(const std::string& text, int line) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0)
    importer::fail(line, "expected an update '@s.reg = expr', got '" + text + "'");
  std::string lhs = text.substr(0, eq);
  std::string op;
  if (!lhs.empty() && std::string("+-*%/").find(lhs.back()) != std::string::npos) {
    op = std::string(1, lhs.back());
    lhs.pop_back();
    if (!lhs.empty() && lhs.back() == '/') {
      op = "//";
      lhs.pop_back();
    }
  }
  ExprPtr target = parsePyExpr(lhs, line);
  if (target->kind != importer::Expr::Kind::kRef || target->prefix != 's') {
    importer::fail(line,
                   "an update must assign a register (@s.name), got '" + concreteText(lhs) + "'");
  }
  ExprPtr rhs = parsePyExpr(text.substr(eq + 1), line);
  if (!op.empty()) rhs = importer::makeBinary(op, target, rhs);
  return {target->name, rhs};
}

// Converts one instruction: its declaration and the calls made on it.
class InstructionBuilder {
 public:
  InstructionBuilder(const Call& decl, IsaContext& isa, const std::set<std::string>& globals)
      : decl_(decl), isa_(isa), local_(isa) {
    name_ = textOf(decl.arg(0, "instruction"), decl.line, "the instruction name");
    if (isa_.v1) {
      beta_ = names(decl.arg(1, "parameters"), "the attribute list");
    } else {
      alpha_ = names(decl.arg(1, "computation_attr"), "the computational attributes");
      beta_ = names(decl.arg(2, "addressing_attr"), "the addressing attributes");
    }
    for (const auto* list : {&alpha_, &beta_}) {
      for (const std::string& a : *list)
        local_.naming.attrs[a] = globals.count(a) ? a + "_" : safeIdent(a);
    }
  }

  void build(const std::vector<const Call*>& calls) {
    if (isa_.v1) {
      requires_ = constraints(decl_.arg(2, "constraints"), decl_.argLine(2, "constraints"));
      sets_ = updates(decl_.arg(3, "update"), decl_.line);
    } else {
      requires_ = constraints(decl_.arg(5, "constraints"), decl_.argLine(5, "constraints"));
      sets_ = updates(decl_.arg(4, "update"), decl_.line);
      if (const Json* c = decl_.arg(3, "cost"))
        cost_ = "cost " + expr(textOf(c, decl_.line, "the cost"), decl_.line, false) + ";";
    }
    const Call* semantics = nullptr;
    for (const Call* c : calls) {
      if (c->method == "add_constraints")
        requires_ = constraints(c->arg(0, "constraints"), c->argLine(0, "constraints"));
      else if (c->method == "add_update")
        sets_ = updates(c->arg(0, "update_list"), c->line);
      else if (c->method == "add_semantics")
        semantics = c;
      else if (c->method == "set_inputs")
        slices(*c, true);
      else if (c->method == "set_outputs")
        slices(*c, false);
    }
    if (semantics != nullptr) convertSemantics(*semantics);
    checkDeclared();
    classify();
  }

  void print(std::ostringstream& out) {
    std::string ident = safeIdent(name_);
    if (ident != name_) {
      isa_.warnings.push_back(std::to_string(decl_.line) + ": instruction '" + name_ +
                              "' is imported as '" + ident + "' (not a valid .taidl name)");
    }
    out << "\ninstruction " << ident << "(" << attrList(alpha_);
    if (!beta_.empty()) out << "; " << attrList(beta_);
    out << ") {\n";
    for (const std::string& l : requires_)
      out << "  " << l << "\n";
    bool first = true;
    for (const std::string& l : body_.derived) {
      if (std::find(requires_.begin(), requires_.end(), l) != requires_.end()) continue;
      if (first) out << "  # derived by tacit import-python: slices in bounds, exact divisions\n";
      first = false;
      out << "  " << l << "\n";
    }
    if (!cost_.empty()) out << "  " << cost_ << "\n";
    for (const auto* lines : {&sets_, &decls_}) {
      for (const std::string& l : *lines)
        out << "  " << l << "\n";
    }
    for (const std::string& l : body_.lines)
      out << l << "\n";
    out << "}\n";
    for (const std::string& w : local_.warnings) {
      if (std::find(isa_.warnings.begin(), isa_.warnings.end(), w) == isa_.warnings.end())
        isa_.warnings.push_back(w);
    }
  }

 private:
  std::vector<std::string> names(const Json* list, const std::string& what) const {
    std::vector<std::string> out;
    for (const Json* n : listOf(list, decl_.line, what))
      out.push_back(textOf(n, decl_.line, what));
    return out;
  }

  // A Python expression in .taidl syntax; `alpha`: a computational position.
  std::string expr(const std::string& text, int line, bool alpha) {
    ExprPtr e = parsePyExpr(text, line);
    body_.line = line;
    body_.use(*e, alpha);
    if (alpha) importer::deriveExactDivisions(body_, *e, local_.naming);
    return printExpr(*e, local_.naming);
  }

  std::vector<std::string> constraints(const Json* v, int line) {
    std::vector<std::string> out;
    for (const auto& [text, l] : constraintTexts(v, line))
      out.push_back("require " + expr(text, l, false) + ";");
    return out;
  }

  std::vector<std::string> updates(const Json* v, int line) {
    std::vector<std::string> out;
    for (const Json* u : listOf(v, line, "the updates")) {
      auto [reg, e] = parseUpdate(textOf(u, line, "an update"), line);
      body_.line = line;
      body_.use(*e, false);
      out.push_back("set $" + safeIdent(reg) + " = " + printExpr(*e, local_.naming) + ";");
    }
    return out;
  }

  // v2 set_inputs / set_outputs: [buffer, [starts], [sizes]] -> reads / writes declarations.
  void slices(const Call& c, bool in) {
    for (const Json* slice : listOf(c.arg(0, in ? "inputs" : "outputs"), c.line, "the slices")) {
      std::vector<const Json*> parts = listOf(slice, c.line, "a slice");
      if (parts.size() != 3) importer::fail(c.line, "a slice is [buffer, [starts], [sizes]]");
      std::string buf = textOf(parts[0], c.line, "the buffer");
      const BufferInfo* b = nullptr;
      if (buf != "d0") {
        auto it = isa_.buffers.find(buf);
        if (it == isa_.buffers.end()) importer::fail(c.line, "unknown buffer '" + buf + "'");
        b = &it->second;
      }
      TensorType t{b ? b->dtype : "u8", {}};
      std::vector<std::string> starts, sizes;
      std::vector<ExprPtr> start_exprs;
      for (const Json* s : listOf(parts[1], c.line, "the starts")) {
        std::string text = textOf(s, c.line, "a start");
        starts.push_back(expr(text, c.line, false));
        start_exprs.push_back(parsePyExpr(text, c.line));
      }
      for (const Json* s : listOf(parts[2], c.line, "the sizes")) {
        std::string text = textOf(s, c.line, "a size");
        sizes.push_back(expr(text, c.line, true));
        t.dims.push_back(parsePyExpr(text, c.line));
        importer::deriveNonNegative(body_, *t.dims.back(), local_.naming);
      }
      std::vector<ExprPtr> access;
      if (b != nullptr) {
        access.assign(b->dims.begin(),
                      b->dims.begin() + static_cast<std::ptrdiff_t>(b->access_rank));
      }
      importer::deriveSliceBounds(body_, start_exprs, t.dims, access, local_.naming);
      if (b != nullptr)
        t.dims.insert(t.dims.end(), b->dims.begin() + static_cast<std::ptrdiff_t>(b->access_rank),
                      b->dims.end());
      decls_.push_back(std::string(in ? "reads " : "writes ") + (b ? b->name : "d0") + "[" +
                       join(starts) + "] size [" + join(sizes) + "];");
      if (in) inputs_.push_back(t);
    }
  }

  void convertSemantics(const Call& c) {
    std::string text = textOf(c.arg(0, "semantics"), c.line, "the semantics");
    int first = c.argLine(0, "semantics");
    if (isa_.v1)
      importer::convertV1Semantics(text, first, local_, body_);
    else
      importer::convertV2Semantics(text, first, local_, inputs_, body_);
  }

  // Every referenced attribute must be declared.
  void checkDeclared() const {
    std::set<std::string> declared(alpha_.begin(), alpha_.end());
    declared.insert(beta_.begin(), beta_.end());
    for (const std::set<std::string>* uses : {&body_.alpha_uses, &body_.all_uses}) {
      for (const std::string& u : *uses) {
        if (declared.count(u) != 0) continue;
        auto where = body_.first_use.find(u);
        importer::fail(
            where != body_.first_use.end() && where->second > 0 ? where->second : decl_.line,
            "instruction '" + name_ + "' uses the undeclared attribute '" + u + "'");
      }
    }
  }

  // v1: an attribute is computational (α) if it fixes the computation (docs/taidl.md §10). v2:
  // an addressing attribute in such a position is moved to α, with a warning.
  void classify() {
    std::vector<std::string> all = beta_;
    beta_.clear();
    for (const std::string& a : all) {
      if (body_.alpha_uses.count(a) == 0) {
        beta_.push_back(a);
        continue;
      }
      alpha_.push_back(a);
      if (!isa_.v1) {
        isa_.warnings.push_back(
            std::to_string(decl_.line) + ": addressing attribute '" + a + "' of '" + name_ +
            "' fixes a shape or an operation attribute; imported as computational");
      }
    }
  }

  std::string attrList(const std::vector<std::string>& v) const {
    std::vector<std::string> printed;
    for (const std::string& a : v)
      printed.push_back(local_.naming.attrs.at(a));
    return join(printed);
  }

  static std::string join(const std::vector<std::string>& parts) {
    std::string s;
    for (size_t k = 0; k < parts.size(); ++k)
      s += (k ? ", " : "") + parts[k];
    return s;
  }

  const Call& decl_;
  IsaContext& isa_;
  IsaContext local_;  // the ISA with this instruction's attribute names
  std::string name_;
  std::vector<std::string> alpha_, beta_;
  std::vector<std::string> requires_, sets_, decls_;
  std::string cost_;
  std::vector<TensorType> inputs_;
  Body body_;
};

void RecordConverter::instruction(const Instr& ins, std::ostringstream& out) {
  InstructionBuilder builder(*ins.decl, isa_, globals_);
  builder.build(ins.calls);
  builder.print(out);
}

// ---------------------------------------------------------------------------------------------
// Running the spec
// ---------------------------------------------------------------------------------------------

class TempDir {
 public:
  TempDir() {
    const char* base = std::getenv("TMPDIR");
    std::string pattern = std::string(base && *base ? base : "/tmp") + "/tacit-import-XXXXXX";
    std::vector<char> buf(pattern.begin(), pattern.end());
    buf.push_back('\0');
    if (::mkdtemp(buf.data()) == nullptr)
      tacit::fail("cannot create a temporary directory under " + pattern);
    path_ = buf.data();
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

void writeShim(const std::string& dir) {
  for (const auto& [rel, source] : shimFiles()) {
    std::filesystem::path p = std::filesystem::path(dir) / rel;
    std::error_code ec;
    std::filesystem::create_directories(p.parent_path(), ec);
    std::ofstream out(p, std::ios::binary);
    out << source;
    if (!out) tacit::fail("cannot write the import shim into " + dir);
  }
}

// Runs the interpreter on the shim's runner; returns the exit status (-1: killed on timeout).
int runPython(const ImportOptions& options, const std::string& dir, const std::string& spec) {
  std::string runner = dir + "/_tacit_run.py";
  std::string record = dir + "/record.json";
  std::string log = dir + "/output.log";
  pid_t pid = ::fork();
  if (pid < 0) tacit::fail("cannot start " + options.python + ": fork failed");
  if (pid == 0) {
    int fd = ::open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    if (fd >= 0) {
      ::dup2(fd, 1);
      ::dup2(fd, 2);
      ::close(fd);
    }
    if (::chdir(dir.c_str()) != 0) ::_exit(126);
    const char* argv[] = {options.python.c_str(), "-I",        "-B",
                          runner.c_str(),         dir.c_str(), spec.c_str(),
                          record.c_str(),         nullptr};
    ::execv(options.python.c_str(), const_cast<char* const*>(argv));
    ::_exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(options.timeout_seconds);
  while (true) {
    int status = 0;
    pid_t r = ::waitpid(pid, &status, WNOHANG);
    if (r == pid) return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (r < 0) return 125;
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &status, 0);
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::string tail(const std::string& path) {
  std::ifstream in(path);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.size() > 600) text = "..." + text.substr(text.size() - 600);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' '))
    text.pop_back();
  return text;
}

[[noreturn]] void failAt(const std::string& spec, const ImportError& e) {
  if (e.line > 0) tacit::fail(spec + ":" + std::to_string(e.line), {}, e.message);
  tacit::fail(spec, {}, e.message);
}

}  // namespace

ImportResult convertShimRecord(std::string_view record_json, const std::string& spec_path) {
  Json record;
  try {
    record = importer::parseJson(record_json);
  } catch (const std::exception& e) {
    tacit::fail(
        spec_path, {},
        std::string("internal error: the import shim wrote a bad record (") + e.what() + ")");
  }
  try {
    RecordConverter converter(record, spec_path);
    ImportResult result;
    result.text = converter.convert();
    for (const std::string& w : converter.warnings()) {
      size_t colon = w.find(": ");
      result.warnings.push_back(spec_path + ":" + w.substr(0, colon) +
                                ": warning: " + w.substr(colon + 2));
    }
    return result;
  } catch (const ImportError& e) {
    failAt(spec_path, e);
  }
}

ImportResult importPythonSpec(const std::string& spec_path, const ImportOptions& options) {
  if (!fileExists(spec_path)) tacit::fail(spec_path, {}, "cannot read the spec (no such file)");
  if (!fileExists(options.python)) {
    tacit::fail("cannot run the spec: no Python interpreter at " + options.python,
                "tacit import-python needs the system Python 3 (apt-get install python3)");
  }
  std::string spec = std::filesystem::absolute(spec_path).lexically_normal().string();
  TempDir dir;
  writeShim(dir.path());
  int status = runPython(options, dir.path(), spec);
  std::string record_path = dir.path() + "/record.json";
  if (status == -1) {
    tacit::fail(spec_path, {},
                "the spec did not finish within " + std::to_string(options.timeout_seconds) + " s");
  }
  if (status != 0 || !fileExists(record_path)) {
    tacit::fail(spec_path, {},
                "running the spec under the import shim failed (status " + std::to_string(status) +
                    "): " + tail(dir.path() + "/output.log"));
  }
  return convertShimRecord(readFile(record_path), spec_path);
}

}  // namespace tacit::importer
