#include "oracle/program.h"

#include <algorithm>

#include "support/strings.h"

namespace tacit::oracle {

// ---- Affine ------------------------------------------------------------------------------------

namespace {

// `a` with loop `depth` at `value` and the loops deeper than it one level shallower.
Affine atValue(const Affine& a, uint32_t depth, int64_t value) {
  Affine out(a.constant);
  for (const Affine::Term& t : a.terms) {
    if (t.depth == depth) {
      out = out + t.coeff * Affine(value);
    } else {
      out = out + Affine::var(t.depth > depth ? t.depth - 1 : t.depth, t.coeff);
    }
  }
  return out;
}

void substitute(std::vector<Stmt>& body, uint32_t depth, int64_t value) {
  for (Stmt& s : body) {
    for (Affine& a : s.attrs)
      a = atValue(a, depth, value);
    s.lo = atValue(s.lo, depth, value);
    s.hi = atValue(s.hi, depth, value);
    for (DebugRange& r : s.ranges) {
      r.start = atValue(r.start, depth, value);
      r.end = atValue(r.end, depth, value);
    }
    substitute(s.body, depth, value);
  }
}

void inlineLoops(std::vector<Stmt>& body, uint32_t depth) {
  std::vector<Stmt> out;
  out.reserve(body.size());
  for (Stmt& s : body) {
    if (s.kind != StmtKind::kLoop) {
      out.push_back(std::move(s));
      continue;
    }
    inlineLoops(s.body, depth + 1);
    if (!s.lo.isConstant() || !s.hi.isConstant() || s.hi.constant - s.lo.constant != 1) {
      out.push_back(std::move(s));
      continue;
    }
    substitute(s.body, depth, s.lo.constant);
    for (Stmt& inner : s.body)
      out.push_back(std::move(inner));
  }
  body = std::move(out);
}

}  // namespace

void inlineSingleIterationLoops(Program& program) {
  inlineLoops(program.body, 0);
}

Affine Affine::var(uint32_t depth, int64_t coeff, int64_t constant) {
  Affine a(constant);
  if (coeff != 0) a.terms.push_back({depth, coeff});
  return a;
}

bool Affine::eval(std::span<const int64_t> loops, int64_t* out) const {
  int64_t v = constant;
  for (const Term& t : terms) {
    int64_t p = 0;
    if (t.depth >= loops.size() || __builtin_mul_overflow(t.coeff, loops[t.depth], &p) ||
        __builtin_add_overflow(v, p, &v))
      return false;
  }
  *out = v;
  return true;
}

namespace {

int64_t add(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_add_overflow(a, b, &r)) fail("affine value overflows 64-bit integers");
  return r;
}

int64_t mul(int64_t a, int64_t b) {
  int64_t r = 0;
  if (__builtin_mul_overflow(a, b, &r)) fail("affine value overflows 64-bit integers");
  return r;
}

}  // namespace

Affine operator+(const Affine& a, const Affine& b) {
  Affine r;
  r.constant = add(a.constant, b.constant);
  size_t i = 0, j = 0;
  while (i < a.terms.size() || j < b.terms.size()) {
    Affine::Term t;
    if (j == b.terms.size() || (i < a.terms.size() && a.terms[i].depth < b.terms[j].depth)) {
      t = a.terms[i++];
    } else if (i == a.terms.size() || b.terms[j].depth < a.terms[i].depth) {
      t = b.terms[j++];
    } else {
      t.depth = a.terms[i].depth;
      t.coeff = add(a.terms[i].coeff, b.terms[j].coeff);
      ++i, ++j;
    }
    if (t.coeff != 0) r.terms.push_back(t);
  }
  return r;
}

Affine operator*(int64_t k, const Affine& a) {
  Affine r;
  r.constant = mul(a.constant, k);
  if (k == 0) return r;
  for (const Affine::Term& t : a.terms)
    r.terms.push_back({t.depth, mul(t.coeff, k)});
  return r;
}

Affine operator-(const Affine& a, const Affine& b) {
  return a + (-1) * b;
}

std::string_view tensorKindName(TensorKind k) {
  switch (k) {
    case TensorKind::kInput:
      return "input";
    case TensorKind::kOutput:
      return "output";
    case TensorKind::kConst:
      return "const";
  }
  return "?";
}

// ---- building ----------------------------------------------------------------------------------

namespace {

Tensor makeTensor(TensorKind kind, std::string name, int64_t addr, hlo::Shape shape) {
  Tensor t;
  t.kind = kind;
  t.name = std::move(name);
  t.addr = addr;
  t.shape = std::move(shape);
  return t;
}

// Index of the unit called `name`: instructions first, then macros.
std::pair<bool, int32_t> findUnit(const taidl::Isa& isa, std::string_view name) {
  if (int32_t i = isa.findInstruction(name); i >= 0) return {false, i};
  if (int32_t m = isa.findMacro(name); m >= 0) return {true, m};
  fail("the ISA " + isa.name + " has no instruction or macro '" + std::string(name) + "'");
}

const std::vector<taidl::Attribute>& unitAttrs(const taidl::Isa& isa, bool is_macro, int32_t unit) {
  return is_macro ? isa.macros[static_cast<size_t>(unit)].attrs
                  : isa.instructions[static_cast<size_t>(unit)].attrs;
}

}  // namespace

Tensor& Program::addInput(std::string tensor_name, int64_t addr, hlo::Shape shape) {
  tensors.push_back(makeTensor(TensorKind::kInput, std::move(tensor_name), addr, std::move(shape)));
  return tensors.back();
}

Tensor& Program::addOutput(std::string tensor_name, int64_t addr, hlo::Shape shape) {
  tensors.push_back(
      makeTensor(TensorKind::kOutput, std::move(tensor_name), addr, std::move(shape)));
  return tensors.back();
}

Tensor& Program::addConst(std::string tensor_name, int64_t addr, hlo::Literal value,
                          std::string path) {
  tensors.push_back(makeTensor(TensorKind::kConst, std::move(tensor_name), addr, value.shape()));
  tensors.back().value = std::move(value);
  tensors.back().file = std::move(path);
  return tensors.back();
}

std::vector<Stmt>& Program::cursor() {
  std::vector<Stmt>* list = &body;
  for (size_t i : open_)
    list = &(*list)[i].body;
  return *list;
}

Stmt& Program::append(Stmt s) {
  std::vector<Stmt>& list = cursor();
  list.push_back(std::move(s));
  return list.back();
}

Stmt& Program::callUnit(const taidl::Isa& isa, bool is_macro, int32_t unit,
                        std::vector<Affine> attrs) {
  size_t count = is_macro ? isa.macros.size() : isa.instructions.size();
  if (unit < 0 || static_cast<size_t>(unit) >= count)
    fail("callUnit: no " + std::string(is_macro ? "macro" : "instruction") + " number " +
         std::to_string(unit));
  const auto& decl = unitAttrs(isa, is_macro, unit);
  if (attrs.size() != decl.size())
    fail("a call of " + std::string(is_macro ? "macro " : "") +
         (is_macro ? isa.macros[static_cast<size_t>(unit)].name.text
                   : isa.instructions[static_cast<size_t>(unit)].name.text) +
         " needs " + plural(static_cast<int64_t>(decl.size()), "attribute") + ", got " +
         std::to_string(attrs.size()));
  for (const Affine& a : attrs) {
    if (a.depthNeeded() > open_.size())
      fail("an attribute value uses a loop variable outside its loop");
  }
  Stmt s;
  s.kind = StmtKind::kCall;
  s.is_macro = is_macro;
  s.unit = unit;
  s.attrs = std::move(attrs);
  return append(std::move(s));
}

Stmt& Program::call(const taidl::Isa& isa, std::string_view unit, std::vector<Affine> positional) {
  auto [is_macro, index] = findUnit(isa, unit);
  return callUnit(isa, is_macro, index, std::move(positional));
}

Stmt& Program::callNamed(const taidl::Isa& isa, std::string_view unit,
                         const std::vector<std::pair<std::string, Affine>>& named) {
  auto [is_macro, index] = findUnit(isa, unit);
  const auto& decl = unitAttrs(isa, is_macro, index);
  std::vector<Affine> attrs(decl.size());
  std::vector<bool> given(decl.size(), false);
  for (const auto& arg : named) {
    const std::string& attr = arg.first;
    auto it = std::find_if(decl.begin(), decl.end(),
                           [&](const taidl::Attribute& a) { return a.name.text == attr; });
    if (it == decl.end())
      fail(std::string(unit) + " has no attribute '" + attr + "'",
           "attributes: " + joinWith(decl, ", ", [](const auto& a) { return a.name.text; }));
    auto k = static_cast<size_t>(it - decl.begin());
    if (given[k]) fail(std::string(unit) + ": attribute '" + attr + "' is given twice");
    given[k] = true;
    attrs[k] = arg.second;
  }
  for (size_t k = 0; k < decl.size(); ++k) {
    if (!given[k]) fail(std::string(unit) + ": missing attribute '" + decl[k].name.text + "'");
  }
  return callUnit(isa, is_macro, index, std::move(attrs));
}

Stmt& Program::call(const taidl::Isa& isa, std::string_view unit,
                    std::initializer_list<std::pair<std::string_view, Affine>> named) {
  std::vector<std::pair<std::string, Affine>> v;
  for (const auto& [k, a] : named)
    v.emplace_back(std::string(k), a);
  return callNamed(isa, unit, v);
}

Affine Program::beginLoop(std::string var, Affine lo, Affine hi) {
  if (open_.size() >= kMaxLoopDepth)
    fail("loops nest more than " + std::to_string(kMaxLoopDepth) + " deep");
  if (lo.depthNeeded() > open_.size() || hi.depthNeeded() > open_.size())
    fail("a loop bound uses the loop's own variable or one outside its loop");
  Stmt s;
  s.kind = StmtKind::kLoop;
  s.var = std::move(var);
  s.lo = std::move(lo);
  s.hi = std::move(hi);
  auto depth = static_cast<uint32_t>(open_.size());
  std::vector<Stmt>& list = cursor();
  list.push_back(std::move(s));
  open_.push_back(list.size() - 1);
  return Affine::var(depth);
}

void Program::endLoop() {
  if (open_.empty()) fail("endLoop() without an open loop");
  open_.pop_back();
}

Stmt& Program::debug(const taidl::Isa& isa, std::string label, std::string_view buffer,
                     std::vector<DebugRange> ranges, hlo::PrimitiveType view) {
  int32_t b = isa.findBuffer(buffer);
  if (b < 0) fail("the ISA " + isa.name + " has no buffer '" + std::string(buffer) + "'");
  Stmt s;
  s.kind = StmtKind::kDebug;
  s.label = std::move(label);
  s.buffer = b;
  s.ranges = std::move(ranges);
  s.view = view;
  return append(std::move(s));
}

const Tensor* Program::findTensor(std::string_view tensor_name) const {
  for (const Tensor& t : tensors) {
    if (t.name == tensor_name) return &t;
  }
  return nullptr;
}

namespace {

size_t countStatements(const std::vector<Stmt>& list) {
  size_t n = 0;
  for (const Stmt& s : list)
    n += 1 + countStatements(s.body);
  return n;
}

bool sameStmts(const std::vector<Stmt>& a, const std::vector<Stmt>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const Stmt& x = a[i];
    const Stmt& y = b[i];
    if (x.kind != y.kind || x.is_macro != y.is_macro || x.unit != y.unit || x.attrs != y.attrs ||
        x.var != y.var || x.lo != y.lo || x.hi != y.hi || x.label != y.label ||
        x.buffer != y.buffer || x.ranges != y.ranges || x.view != y.view ||
        !sameStmts(x.body, y.body))
      return false;
  }
  return true;
}

}  // namespace

size_t Program::statementCount() const {
  return countStatements(body);
}

bool sameProgram(const Program& a, const Program& b) {
  if (a.name != b.name || a.hbm_bytes != b.hbm_bytes || a.tensors.size() != b.tensors.size())
    return false;
  for (size_t i = 0; i < a.tensors.size(); ++i) {
    const Tensor& x = a.tensors[i];
    const Tensor& y = b.tensors[i];
    if (x.kind != y.kind || x.name != y.name || x.addr != y.addr || x.shape != y.shape ||
        x.file != y.file)
      return false;
    if (x.kind == TensorKind::kConst && !x.value.bitwiseEqual(y.value)) return false;
  }
  return sameStmts(a.body, b.body);
}

}  // namespace tacit::oracle
