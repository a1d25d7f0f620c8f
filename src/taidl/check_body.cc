// Structure of an instruction body (docs/taidl.md sections 3.4, 4 and 8.2, 8.5): resolves every
// expression for its site, checks statement placement, value definitions and uses per path
// (single assignment, defined on every path to a use, same type on both branches), declared
// slices (%In<j>, %Out<j>), explicit reads/writes against their buffers, and the opcodes and
// attributes of operations.
#include <algorithm>
#include <array>
#include <map>

#include "hlo/dtype.h"
#include "hlo/opcode.h"
#include "support/strings.h"
#include "taidl/check.h"
#include "taidl/printer.h"

namespace tacit::taidl {
namespace {

using hlo::HloOpcode;
using O = hlo::HloOpcode;

// ---- the opcode table of docs/taidl.md section 4.5 ---------------------------------------------

enum class AttrForm : uint8_t { kList, kRanges, kEnum, kExpr };

struct AttrRule {
  std::string_view name;
  AttrForm form;
};

constexpr std::array<AttrRule, 12> kAttrRules = {{
    {"direction", AttrForm::kEnum},
    {"type", AttrForm::kEnum},
    {"dimensions", AttrForm::kList},
    {"slice", AttrForm::kRanges},
    {"dynamic_slice_sizes", AttrForm::kList},
    {"padding", AttrForm::kRanges},
    {"iota_dimension", AttrForm::kExpr},
    {"lhs_batch_dims", AttrForm::kList},
    {"lhs_contracting_dims", AttrForm::kList},
    {"rhs_batch_dims", AttrForm::kList},
    {"rhs_contracting_dims", AttrForm::kList},
    {"to_apply", AttrForm::kEnum},
}};

struct OpRule {
  int min_operands;
  int max_operands;  // -1: any
  std::vector<std::string_view> required;
  std::vector<std::string_view> optional;
};

// TAIDL's elementwise operations are the HLO table's (hlo/opcode.def) unary and binary ones that
// tacit's evaluator implements on TAIDL's element types (section 4.5): all but these, for which
// it has no kernels (complex numbers; the rarer transcendentals). tests/taidl/opcode_table_test.cc
// checks the two against each other.
constexpr HloOpcode kNotEvaluated[] = {O::kReal, O::kImag,  O::kComplex, O::kTan,
                                       O::kSinh, O::kCosh,  O::kAcos,    O::kAcosh,
                                       O::kAsin, O::kAsinh, O::kAtanh};

bool isElementwiseOp(O op) {
  return (hlo::isElementwiseUnary(op) || hlo::isElementwiseBinary(op)) &&
         std::find(std::begin(kNotEvaluated), std::end(kNotEvaluated), op) ==
             std::end(kNotEvaluated);
}

const OpRule* opRule(O op) {
  static const OpRule kUnary{1, 1, {}, {}};
  static const OpRule kBinary{2, 2, {}, {}};
  static const std::map<O, OpRule> kRules = {
      {O::kCompare, {2, 2, {"direction"}, {"type"}}},
      {O::kSelect, {3, 3, {}, {}}},
      {O::kClamp, {3, 3, {}, {}}},
      {O::kConvert, {1, 1, {}, {}}},
      {O::kBitcastConvert, {1, 1, {}, {}}},
      {O::kReshape, {1, 1, {}, {}}},
      {O::kBroadcast, {1, 1, {"dimensions"}, {}}},
      {O::kTranspose, {1, 1, {"dimensions"}, {}}},
      {O::kReverse, {1, 1, {"dimensions"}, {}}},
      {O::kSlice, {1, 1, {"slice"}, {}}},
      {O::kDynamicSlice, {2, -1, {"dynamic_slice_sizes"}, {}}},
      {O::kDynamicUpdateSlice, {3, -1, {}, {}}},
      {O::kConcatenate, {1, -1, {"dimensions"}, {}}},
      {O::kPad, {2, 2, {"padding"}, {}}},
      {O::kIota, {0, 0, {"iota_dimension"}, {}}},
      {O::kDot,
       {2,
        2,
        {},
        {"lhs_batch_dims", "lhs_contracting_dims", "rhs_batch_dims", "rhs_contracting_dims"}}},
      {O::kReduce, {2, 2, {"dimensions", "to_apply"}, {}}},
  };
  if (isElementwiseOp(op)) return hlo::opcodeArity(op) == 1 ? &kUnary : &kBinary;
  auto it = kRules.find(op);
  return it == kRules.end() ? nullptr : &it->second;
}

const std::vector<std::string_view>& enumValues(std::string_view attr) {
  static const std::vector<std::string_view> kDirection = {"EQ", "NE", "LT", "LE", "GT", "GE"};
  static const std::vector<std::string_view> kType = {"FLOAT", "TOTALORDER", "SIGNED", "UNSIGNED"};
  static const std::vector<std::string_view> kReducers = {"add", "multiply", "maximum", "minimum",
                                                          "and", "or",       "xor"};
  if (attr == "direction") return kDirection;
  if (attr == "type") return kType;
  return kReducers;
}

// ---- the body walk ----------------------------------------------------------------------------

struct PathState {
  std::vector<uint8_t> def;           // per value slot: 0 undefined, 1 on some paths, 2 on all
  std::vector<const Stmt*> def_stmt;  // a statement defining it on a path reaching here
};

class BodyChecker {
 public:
  BodyChecker(Checker& c, int32_t index)
      : c_(c), isa_(c.isa()), inst_(isa_.instructions[static_cast<size_t>(index)]) {}

  BodyFacts run() {
    facts_.attr_used.assign(inst_.attrs.size(), false);
    facts_.alpha_relevant.assign(inst_.attrs.size(), false);
    PathState st;
    block(inst_.body, st, true);
    finishDeclaredSlices(st);
    checkLetBuffers();
    facts_.value_used.resize(inst_.value_names.size(), false);
    return std::move(facts_);
  }

 private:
  [[noreturn]] void fail(uint32_t offset, std::string message, std::string hint = {}) {
    isa_.fail(offset, std::move(message), std::move(hint));
  }

  void resolve(Expr& e, Site site) {
    Scope scope{&inst_.attrs, &loops_, &lets_, &facts_.attr_used, "instruction " + inst_.name.text};
    c_.resolve(e, scope, site);
    bool relevant = site == Site::kType || site == Site::kOpAttr || site == Site::kLiteral ||
                    site == Site::kCond || site == Site::kBound || site == Site::kSize;
    if (!relevant) return;
    for (const ExprNode& n : e.nodes()) {
      if (n.op == ExprOp::kRef && n.ref == RefKind::kAlpha)
        facts_.alpha_relevant[static_cast<size_t>(n.slot)] = true;
    }
  }

  void resolveType(TypeExpr& t) {
    if (!hlo::isEvaluable(t.dtype)) {
      fail(t.offset,
           "element type " + std::string(hlo::primitiveTypeName(t.dtype)) + " is not supported",
           "tacit evaluates pred, s8..s64, u8..u64, f16, bf16, f32 and f64");
    }
    if (static_cast<int64_t>(t.dims.size()) > kMaxRank)
      fail(t.offset, "a type may have at most " + std::to_string(kMaxRank) + " dimensions");
    for (Expr& d : t.dims)
      resolve(d, Site::kType);
  }

  const Buffer& buffer(Stmt& s) {
    int32_t b = isa_.findBuffer(s.buffer.text);
    if (b < 0) {
      std::string hint;
      if (!c_.globalKind(s.buffer.text).empty())
        hint = "'" + s.buffer.text + "' is " + c_.globalKind(s.buffer.text) + ", not a buffer";
      fail(s.buffer.offset, "unknown buffer '" + s.buffer.text + "'", hint);
    }
    s.buffer_index = b;
    return isa_.buffers[static_cast<size_t>(b)];
  }

  std::string bufferType(const Buffer& b) {
    std::vector<std::string> dims;
    for (int64_t d : b.access)
      dims.push_back(d == kUnknownSize ? "N" : std::to_string(d));
    for (int64_t d : b.unit)
      dims.push_back(std::to_string(d));
    return std::string(hlo::primitiveTypeName(b.dtype)) + "[" + join(dims, ", ") + "]";
  }

  int32_t slot(const std::string& name) {
    auto [it, fresh] = slots_.emplace(name, static_cast<int32_t>(inst_.value_names.size()));
    if (fresh) {
      inst_.value_names.push_back(name);
      facts_.value_defs.push_back(nullptr);
    }
    return it->second;
  }

  static void grow(PathState& st, size_t n) {
    if (st.def.size() < n) {
      st.def.resize(n, 0);
      st.def_stmt.resize(n, nullptr);
    }
  }

  void define(Stmt& s, PathState& st) {
    int32_t v = slot(s.name.text);
    grow(st, inst_.value_names.size());
    auto i = static_cast<size_t>(v);
    if (st.def[i] == 2) {
      fail(s.name.offset,
           "value %" + s.name.text + " is already defined at " +
               isa_.locText(st.def_stmt[i]->offset),
           "values are single-assignment: give the new value another name");
    }
    if (st.def[i] == 1)
      fail(s.name.offset, "value %" + s.name.text + " may already be defined on another path (at " +
                              isa_.locText(st.def_stmt[i]->offset) + ")");
    st.def[i] = 2;
    st.def_stmt[i] = &s;
    s.value = v;
    if (!facts_.value_defs[i]) facts_.value_defs[i] = &s;
  }

  int32_t use(const Ident& v, PathState& st) {
    auto it = slots_.find(v.text);
    grow(st, inst_.value_names.size());
    if (it == slots_.end()) fail(v.offset, "unknown value %" + v.text);
    auto i = static_cast<size_t>(it->second);
    if (st.def[i] == 0) {
      std::string hint;
      if (facts_.value_defs[i])
        hint = "%" + v.text + " is defined at " + isa_.locText(facts_.value_defs[i]->offset) +
               ", which does not reach this use";
      fail(v.offset, "value %" + v.text + " is not defined here", hint);
    }
    if (st.def[i] == 1)
      fail(v.offset, "value %" + v.text + " is not defined on every path to this use",
           "define it in both branches of the if (with the same type) or before it");
    if (facts_.value_used.size() < inst_.value_names.size())
      facts_.value_used.resize(inst_.value_names.size(), false);
    facts_.value_used[i] = true;
    return it->second;
  }

  std::vector<int32_t> activeLoops() const {
    std::vector<int32_t> out;
    for (const auto& l : loops_)
      out.push_back(l.second);
    return out;
  }

  void topOnly(const Stmt& s, bool top, std::string_view what, std::string_view hint) {
    if (!top)
      fail(s.offset, std::string(what) + " must be at the top level of the body",
           std::string(hint));
  }

  void block(std::vector<Stmt>& body, PathState& st, bool top) {
    size_t lets = lets_.size();  // a let is in scope until the end of its block
    for (Stmt& s : body)
      stmt(s, st, top);
    lets_.resize(lets);
  }

  void stmt(Stmt& s, PathState& st, bool top) {
    switch (s.kind) {
      case StmtKind::kRequire:
        topOnly(s, top, "require", "constraints are checked at entry, before any statement");
        resolve(s.expr, Site::kRequire);
        inst_.requires_.push_back(&s);
        return;
      case StmtKind::kCost:
        topOnly(s, top, "cost", "the cost is evaluated at entry");
        if (inst_.cost)
          fail(s.offset, "instruction " + inst_.name.text + " has a second cost (the first is at " +
                             isa_.locText(inst_.cost->offset) + ")");
        resolve(s.expr, Site::kCost);
        inst_.cost = &s;
        return;
      case StmtKind::kTiming:
        topOnly(s, top, "timing", "the timing clause is evaluated at entry");
        if (inst_.timing)
          fail(s.offset, "instruction " + inst_.name.text +
                             " has a second timing clause (the first is at " +
                             isa_.locText(inst_.timing->offset) + ")");
        s.engine = c_.engineDeclared(s.name);
        if (!s.expr.empty()) resolve(s.expr, Site::kTiming);
        if (!s.expr2.empty()) resolve(s.expr2, Site::kTiming);
        if (!s.expr3.empty()) resolve(s.expr3, Site::kTiming);
        inst_.timing = &s;
        return;
      case StmtKind::kSet:
        s.reg = isa_.findRegister(s.name.text);
        if (s.reg < 0) fail(s.name.offset, "unknown register $" + s.name.text);
        resolve(s.expr, Site::kSet);
        return;
      case StmtKind::kLet:
        let(s);
        return;
      case StmtKind::kReads:
      case StmtKind::kWrites:
        declaredSlice(s, st, top);
        return;
      case StmtKind::kRead:
        read(s, st);
        return;
      case StmtKind::kWrite:
        write(s, st);
        return;
      case StmtKind::kOp:
        op(s, st);
        return;
      case StmtKind::kConstant:
        constant(s, st);
        return;
      case StmtKind::kIf:
        ifStmt(s, st);
        return;
      case StmtKind::kRepeat:
        repeat(s, st);
        return;
    }
  }

  void declaredSlice(Stmt& s, PathState& st, bool top) {
    bool is_read = s.kind == StmtKind::kReads;
    topOnly(s, top, "declared slices (reads/writes)",
            "inside if and repeat, use explicit `%v : T = read B[...]` and `write B[...] = %v`");
    const Buffer& b = buffer(s);
    size_t rank = b.access.size();
    auto count = [&](const std::vector<Expr>& list, std::string_view what) {
      if (list.size() == rank) return;
      fail(s.buffer.offset,
           "buffer " + b.name.text + " has " +
               plural(static_cast<int64_t>(rank), "access dimension") + ", but the slice gives " +
               plural(static_cast<int64_t>(list.size()), std::string(what)),
           "one start and one size per access dimension; units are whole");
    };
    count(s.starts, "start");
    count(s.sizes, "size");
    for (Expr& e : s.starts)
      resolve(e, Site::kStart);
    for (Expr& e : s.sizes)
      resolve(e, Site::kSize);
    s.type = TypeExpr{b.dtype, s.sizes, s.offset};
    for (int64_t u : b.unit)
      s.type.dims.push_back(Expr::integer(u, s.offset));
    if (is_read) {
      s.decl = static_cast<int32_t>(inst_.reads.size()) + 1;
      s.name = Ident{"In" + std::to_string(s.decl), s.offset};
      inst_.reads.push_back(&s);
      define(s, st);
    } else {
      s.decl = static_cast<int32_t>(inst_.writes.size());
      s.name = Ident{"Out" + std::to_string(s.decl), s.offset};
      inst_.writes.push_back(&s);
    }
    facts_.accesses.push_back(AccessInfo{&s, &s.type, {}});
  }

  void read(Stmt& s, PathState& st) {
    const Buffer& b = buffer(s);
    auto rank = static_cast<size_t>(b.rank());
    if (s.starts.size() != rank) {
      fail(s.buffer.offset,
           "read of " + b.name.text + " needs " + plural(static_cast<int64_t>(rank), "start") +
               " (one per dimension of " + bufferType(b) + ", unit dimensions included), found " +
               std::to_string(s.starts.size()),
           "a declared slice `reads B[...] size [...]` addresses the access dimensions only");
    }
    if (s.type.dims.size() != rank)
      fail(s.type.offset, "read of " + b.name.text + " needs a type of rank " +
                              std::to_string(rank) + " (the rank of " + bufferType(b) + ")");
    if (s.type.dtype != b.dtype)
      fail(s.type.offset, "buffer " + b.name.text + " holds " +
                              std::string(hlo::primitiveTypeName(b.dtype)) +
                              " values; the read's type is " + typeText(s.type));
    for (Expr& e : s.starts)
      resolve(e, Site::kStart);
    resolveType(s.type);
    define(s, st);
    facts_.accesses.push_back(AccessInfo{&s, &s.type, activeLoops()});
  }

  void write(Stmt& s, PathState& st) {
    const Buffer& b = buffer(s);
    auto rank = static_cast<size_t>(b.rank());
    if (s.starts.size() != rank) {
      fail(s.buffer.offset,
           "write to " + b.name.text + " needs " + plural(static_cast<int64_t>(rank), "start") +
               " (one per dimension of " + bufferType(b) + ", unit dimensions included), found " +
               std::to_string(s.starts.size()));
    }
    for (Expr& e : s.starts)
      resolve(e, Site::kStart);
    s.value = use(s.name, st);
    const TypeExpr& t = st.def_stmt[static_cast<size_t>(s.value)]->type;
    if (t.dims.size() != rank)
      fail(s.name.offset, "write to " + b.name.text + " needs a value of rank " +
                              std::to_string(rank) + " (the rank of " + bufferType(b) + "); %" +
                              s.name.text + " is " + typeText(t));
    if (t.dtype != b.dtype)
      fail(s.name.offset,
           "buffer " + b.name.text + " holds " + std::string(hlo::primitiveTypeName(b.dtype)) +
               " values; %" + s.name.text + " is " + typeText(t),
           "convert the value first");
    facts_.accesses.push_back(AccessInfo{&s, &t, activeLoops()});
  }

  void checkAttr(Stmt& s, OpAttr& a, const OpRule& rule) {
    std::string op = s.opcode.text;
    bool allowed =
        std::find(rule.required.begin(), rule.required.end(), a.name.text) != rule.required.end() ||
        std::find(rule.optional.begin(), rule.optional.end(), a.name.text) != rule.optional.end();
    if (!allowed) {
      std::vector<std::string_view> all = rule.required;
      all.insert(all.end(), rule.optional.begin(), rule.optional.end());
      fail(a.name.offset, "attribute '" + a.name.text + "' is not valid for " + op,
           all.empty() ? op + " takes no attributes" : op + " takes " + join(all, ", "));
    }
    for (const OpAttr& other : s.attrs) {
      if (&other == &a) break;
      if (other.name.text == a.name.text)
        fail(a.name.offset, "attribute '" + a.name.text + "' is given twice");
    }
    AttrForm form = std::find_if(kAttrRules.begin(), kAttrRules.end(), [&](const AttrRule& r) {
                      return r.name == a.name.text;
                    })->form;
    switch (form) {
      case AttrForm::kList:
        if (a.kind != OpAttr::Kind::kList)
          fail(a.value_offset,
               a.name.text + " expects a list of integers, e.g. " + a.name.text + "={1, 0}");
        if (s.hlo_opcode == O::kConcatenate && a.list.size() != 1)
          fail(a.value_offset, "concatenate takes one dimension: dimensions={d}");
        for (Expr& e : a.list)
          resolve(e, Site::kOpAttr);
        return;
      case AttrForm::kRanges:
        if (a.kind != OpAttr::Kind::kRanges)
          fail(a.value_offset,
               a.name.text + " expects ranges, e.g. " + a.name.text +
                   (a.name.text == "slice" ? "={[0:n], [0:64:2]}" : "={[0:0], [0:64 - k]}"));
        for (RangeExpr& r : a.ranges) {
          resolve(r.start, Site::kOpAttr);
          resolve(r.limit, Site::kOpAttr);
          if (!r.stride.empty()) resolve(r.stride, Site::kOpAttr);
        }
        return;
      case AttrForm::kEnum: {
        const auto& values = enumValues(a.name.text);
        bool bare = a.kind == OpAttr::Kind::kExpr && a.expr.nodes().size() == 1 &&
                    a.expr.root().op == ExprOp::kRef && a.expr.root().ref == RefKind::kUnresolved;
        if (!bare ||
            std::find(values.begin(), values.end(), a.expr.refName(a.expr.root())) == values.end())
          fail(a.value_offset, a.name.text + " must be one of " + join(values, ", "));
        return;
      }
      case AttrForm::kExpr:
        if (a.kind != OpAttr::Kind::kExpr)
          fail(a.value_offset, a.name.text + " expects an integer expression");
        resolve(a.expr, Site::kOpAttr);
        return;
    }
  }

  void op(Stmt& s, PathState& st) {
    if (s.hlo_opcode == O::kUnknown)
      fail(s.opcode.offset, "unknown opcode '" + s.opcode.text + "'");
    const OpRule* rule = opRule(s.hlo_opcode);
    if (!rule)
      fail(s.opcode.offset, "opcode '" + s.opcode.text + "' is not supported in .taidl",
           "see the opcode table of docs/taidl.md section 4.5");
    auto n = static_cast<int>(s.operands.size());
    if (n < rule->min_operands || (rule->max_operands >= 0 && n > rule->max_operands)) {
      std::string want = rule->min_operands == rule->max_operands
                             ? plural(rule->min_operands, "operand")
                             : "at least " + plural(rule->min_operands, "operand");
      fail(s.opcode.offset, s.opcode.text + " takes " + want + ", found " + std::to_string(n));
    }
    resolveType(s.type);
    s.operand_values.clear();
    for (const Ident& o : s.operands)
      s.operand_values.push_back(use(o, st));
    for (OpAttr& a : s.attrs)
      checkAttr(s, a, *rule);
    for (std::string_view req : rule->required) {
      bool present = std::any_of(s.attrs.begin(), s.attrs.end(),
                                 [&](const OpAttr& a) { return a.name.text == req; });
      if (present) continue;
      std::string hint;
      if (s.hlo_opcode == O::kBroadcast)
        hint = "dimensions is mandatory, also for scalars: dimensions={}";
      fail(s.opcode.offset, s.opcode.text + " requires the attribute " + std::string(req), hint);
    }
    define(s, st);
  }

  void literal(LiteralValue& v, hlo::PrimitiveType t) {
    switch (v.kind) {
      case LiteralValue::Kind::kFloat:
        if (!hlo::isFloat(t))
          fail(v.offset, "a floating-point literal for the non-floating-point type " +
                             std::string(hlo::primitiveTypeName(t)));
        return;
      case LiteralValue::Kind::kExpr:
        resolve(v.expr, Site::kLiteral);
        return;
      case LiteralValue::Kind::kNested:
        for (LiteralValue& e : v.elements)
          literal(e, t);
        return;
    }
  }

  void constant(Stmt& s, PathState& st) {
    resolveType(s.type);
    literal(s.literal, s.type.dtype);
    define(s, st);
  }

  void joinPaths(PathState& st, const PathState& t, const PathState& e, const Stmt& s) {
    size_t n = inst_.value_names.size();
    grow(st, n);
    for (size_t i = 0; i < n; ++i) {
      uint8_t td = i < t.def.size() ? t.def[i] : 0;
      uint8_t ed = i < e.def.size() ? e.def[i] : 0;
      uint8_t joined = (td == 2 && ed == 2) ? 2 : (td || ed) ? 1 : 0;
      if (joined == 2 && st.def[i] != 2 && t.def_stmt[i] != e.def_stmt[i]) {
        const TypeExpr& a = t.def_stmt[i]->type;
        const TypeExpr& b = e.def_stmt[i]->type;
        std::string what = "the branches of the if at " + isa_.locText(s.offset) + " define %" +
                           inst_.value_names[i] + " with different types: " + typeText(a) +
                           " and " + typeText(b);
        switch (compareTypes(a, b)) {
          case TypeEq::kDifferent:
            fail(e.def_stmt[i]->name.offset, what);
          case TypeEq::kUnknown:
            facts_.deferred.push_back({&a, &b, e.def_stmt[i]->offset, what});
            break;
          case TypeEq::kEqual:
            break;
        }
      }
      if (joined) st.def_stmt[i] = td ? t.def_stmt[i] : e.def_stmt[i];
      st.def[i] = joined;
    }
  }

  void ifStmt(Stmt& s, PathState& st) {
    resolve(s.expr, Site::kCond);
    PathState t = st;
    block(s.body, t, false);
    PathState e = st;
    block(s.else_body, e, false);
    joinPaths(st, t, e, s);
  }

  // A loop variable or let name may not shadow a global, an attribute, an enclosing loop
  // variable or a let in scope.
  void checkLocalName(const Ident& name, std::string_view what) {
    const std::string& v = name.text;
    std::string w(what);
    if (!c_.globalKind(v).empty())
      fail(name.offset, w + " '" + v + "' shadows " + c_.globalKind(v) + " of the same name");
    for (const Attribute& a : inst_.attrs) {
      if (a.name.text == v) fail(name.offset, w + " '" + v + "' shadows an attribute");
    }
    for (const auto& l : loops_) {
      if (l.first == v) fail(name.offset, w + " '" + v + "' shadows an enclosing loop variable");
    }
    for (const auto& l : lets_) {
      if (l.first == v) fail(name.offset, w + " '" + v + "' shadows a let in scope");
    }
  }

  // `let i = B[starts];` (section 4.7): one integer element of B, bound to `i`.
  void let(Stmt& s) {
    checkLocalName(s.name, "let");
    const Buffer& b = buffer(s);
    auto rank = static_cast<size_t>(b.rank());
    if (s.starts.size() != rank)
      fail(s.buffer.offset, "let reads one element of " + b.name.text + ": it needs " +
                                plural(static_cast<int64_t>(rank), "start") +
                                " (one per dimension of " + bufferType(b) +
                                ", unit dimensions included), found " +
                                std::to_string(s.starts.size()));
    if (!hlo::isInteger(b.dtype))
      fail(s.buffer.offset,
           "let reads an integer, but buffer " + b.name.text + " holds " +
               std::string(hlo::primitiveTypeName(b.dtype)) + " values",
           "declare the buffer with an integer element type (s8..s64, u8..u64)");
    for (Expr& e : s.starts)
      resolve(e, Site::kStart);
    s.loop = static_cast<int32_t>(inst_.let_names.size());
    inst_.let_names.push_back(s.name.text);
    lets_.emplace_back(s.name.text, s.loop);
    let_stmts_.push_back(&s);
  }

  // A let reads the buffer as it is when the instruction starts; the instruction may not write
  // that buffer, so the element it reads is the same at every point of the execution.
  void checkLetBuffers() {
    for (const Stmt* l : let_stmts_) {
      for (const AccessInfo& a : facts_.accesses) {
        const Stmt& w = *a.stmt;
        bool writes = w.kind == StmtKind::kWrite || w.kind == StmtKind::kWrites;
        if (writes && w.buffer_index == l->buffer_index)
          fail(l->offset,
               "let reads buffer " + l->buffer.text + ", which " + inst_.name.text +
                   " also writes (at " + isa_.locText(w.offset) + ")",
               "a let reads the state at the instruction's entry: the buffer it reads must not "
               "be written by the same instruction");
      }
    }
  }

  void repeat(Stmt& s, PathState& st) {
    const std::string& v = s.name.text;
    checkLocalName(s.name, "loop variable");
    resolve(s.expr, Site::kBound);
    resolve(s.expr2, Site::kBound);
    s.loop = static_cast<int32_t>(inst_.loop_names.size());
    inst_.loop_names.push_back(v);
    facts_.loop_stmts.push_back(&s);
    loops_.emplace_back(v, s.loop);
    PathState body = st;  // values defined in the body are local to one iteration
    block(s.body, body, false);
    loops_.pop_back();
    grow(st, inst_.value_names.size());
  }

  void finishDeclaredSlices(PathState& st) {
    grow(st, inst_.value_names.size());
    for (const Stmt* w : inst_.writes) {
      auto it = slots_.find(w->name.text);
      Stmt& ws = const_cast<Stmt&>(*w);
      if (it == slots_.end() || st.def[static_cast<size_t>(it->second)] == 0)
        fail(w->offset,
             "writes declares %" + w->name.text + ", but %" + w->name.text + " is never defined",
             "the value of the j-th `writes` (from 0) is %Out<j>");
      auto i = static_cast<size_t>(it->second);
      if (st.def[i] == 1)
        fail(w->offset,
             "%" + w->name.text + " is not defined on every path to the end of " + inst_.name.text);
      ws.value = it->second;
      facts_.value_used.resize(inst_.value_names.size(), false);
      facts_.value_used[i] = true;
      const TypeExpr& t = st.def_stmt[i]->type;
      std::string what = "%" + w->name.text + " is " + typeText(t) + ", but " + stmtText(*w) +
                         " needs " + typeText(w->type);
      switch (compareTypes(t, w->type)) {
        case TypeEq::kDifferent:
          fail(st.def_stmt[i]->name.offset, what,
               "the value of a declared write has the shape size ++ unit dimensions");
        case TypeEq::kUnknown:
          facts_.deferred.push_back({&t, &w->type, w->offset, what});
          break;
        case TypeEq::kEqual:
          break;
      }
    }
    facts_.value_used.resize(inst_.value_names.size(), false);
    for (const Stmt* r : inst_.reads) {
      if (!facts_.value_used[static_cast<size_t>(r->value)])
        fail(r->offset, "%" + r->name.text + " (" + stmtText(*r) + ") is never used",
             "every declared read must feed the computation; remove it or use the value");
    }
  }

  Checker& c_;
  Isa& isa_;
  Instruction& inst_;
  BodyFacts facts_;
  std::map<std::string, int32_t> slots_;
  std::vector<std::pair<std::string, int32_t>> loops_;
  std::vector<std::pair<std::string, int32_t>> lets_;  // in scope
  std::vector<const Stmt*> let_stmts_;
};

}  // namespace

TypeEq compareTypes(const TypeExpr& a, const TypeExpr& b, size_t* differing_dim) {
  if (a.dtype != b.dtype || a.dims.size() != b.dims.size()) return TypeEq::kDifferent;
  bool unknown = false;
  for (size_t i = 0; i < a.dims.size(); ++i) {
    std::optional<Poly> pa = toPoly(a.dims[i]);
    std::optional<Poly> pb = toPoly(b.dims[i]);
    if (pa && pb) {
      if (*pa == *pb) continue;
      if (differing_dim) *differing_dim = i;
      return TypeEq::kDifferent;
    }
    if (!a.dims[i].sameAs(b.dims[i])) unknown = true;
  }
  return unknown ? TypeEq::kUnknown : TypeEq::kEqual;
}

BodyFacts checkBody(Checker& checker, int32_t instruction) {
  return BodyChecker(checker, instruction).run();
}

}  // namespace tacit::taidl
