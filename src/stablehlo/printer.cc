#include "stablehlo/printer.h"

#include <algorithm>
#include <map>
#include <set>

#include "hlo/printer.h"
#include "stablehlo/dense.h"
#include "stablehlo/ops.h"
#include "stablehlo/parser.h"
#include "stablehlo/types.h"
#include "stablehlo/window.h"
#include "support/strings.h"

namespace tacit::stablehlo {
namespace {

using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;

// A string as MLIR writes it: \" \\ and other non-printable bytes as two hex digits.
std::string mlirQuote(std::string_view s) {
  static const char* digits = "0123456789ABCDEF";
  std::string out = "\"";
  for (char c : s) {
    const auto u = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (u < 0x20 || u == 0x7F) {
      out += '\\';
      out += digits[u >> 4];
      out += digits[u & 0xF];
    } else {
      out += c;
    }
  }
  return out + "\"";
}

// The text of an HLO string attribute's canonical value ("\"foo\"" -> foo).
std::string unquoteHlo(std::string_view v) {
  if (v.size() < 2 || v.front() != '"' || v.back() != '"') return std::string(v);
  std::string out;
  for (size_t i = 1; i + 1 < v.size(); ++i) {
    if (v[i] == '\\' && i + 2 < v.size()) {
      char e = v[++i];
      out += e == 'n' ? '\n' : e == 't' ? '\t' : e;
    } else {
      out += v[i];
    }
  }
  return out;
}

// @name, quoted unless it is a bare identifier.
std::string symbol(const std::string& name) {
  bool bare =
      !name.empty() && (std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name)
    bare =
        bare && (std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '$' || c == '.');
  return "@" + (bare ? name : mlirQuote(name));
}

std::string intList(const std::vector<int64_t>& v) {
  return "[" + join(v, ", ") + "]";
}

// An op with several results in StableHLO, one tuple in HLO: a variadic reduce, reduce-window or
// sort. Its results are written %r#i.
bool multiResult(const HloInstruction* i) {
  return ((i->opcode() == HloOpcode::kReduce || i->opcode() == HloOpcode::kReduceWindow) &&
          i->operandCount() > 2) ||
         (i->opcode() == HloOpcode::kSort && i->operandCount() > 1);
}

class Printer {
 public:
  explicit Printer(const hlo::HloModule& m) : m_(m) {}

  std::string run();

 private:
  [[noreturn]] void unsupported(const HloInstruction& inst, const std::string& why) const {
    fail(m_.sourceFile(), inst.loc(),
         "'" + inst.opcodeSpelling() + "' (%" + inst.name() + ") " + why,
         "the ops StableHLO output covers are listed in docs/stablehlo.md");
  }
  std::string type(const HloInstruction& inst) const;
  std::string value(const HloInstruction* inst) const;
  std::string operandTypes(const HloInstruction& inst) const;
  // The element types of a tuple-shaped instruction: "T0, T1".
  std::string resultTypes(const HloInstruction& inst) const;
  // What `return` writes for a computation's root: "%r : T" or "%r#0, %r#1 : T0, T1".
  std::string returned(const HloInstruction& root) const;
  std::string functionType(const HloInstruction& inst) const {
    return "(" + operandTypes(inst) + ") -> " + type(inst);
  }
  void function(const HloComputation& c);
  // Prints the instructions of `c` (its parameters are already named) at `indent`.
  // flatten_root: a root `tuple` is returned as its elements (a variadic reducer returns N
  // values in StableHLO, a tuple in HLO).
  void body(const HloComputation& c, const std::string& indent, bool region,
            bool flatten_root = false);
  void instruction(const HloInstruction& inst, const std::string& indent);
  void reduce(const HloInstruction& inst, const std::string& indent, const std::string& lhs);
  // A computation as a region of a generic op: `^bb0(%p: T, ...):` and its body.
  void genericRegion(const HloComputation& c, const std::string& indent, bool flatten_root = false);
  void whileLoop(const HloInstruction& inst, const std::string& indent, const std::string& lhs);
  // Names the values of `c`, renaming those its enclosing function already defines.
  void nameValues(const HloComputation& c);

  const hlo::HloModule& m_;
  std::string out_;
  std::map<const HloInstruction*, std::string> names_;  // value text, "%x" or "%r#1"
  std::set<std::string> taken_;                         // names defined in the current function
  int region_depth_ = 0;                                // reducers being printed, nested
};

std::string Printer::type(const HloInstruction& inst) const {
  const hlo::Shape& s = inst.shape();
  auto check = [&](const hlo::Shape& shape, auto&& self) -> void {
    if (shape.isTuple()) {
      for (const hlo::Shape& e : shape.tupleShapes())
        self(e, self);
    } else if (shape.isDynamic()) {
      unsupported(inst, "has a dynamic shape, which tacit's StableHLO output leaves out");
    } else if (!shape.isArray() && !shape.isToken()) {
      unsupported(inst, "has type " + shape.shortStr() + ", which StableHLO has no tensor for");
    }
  };
  check(s, check);
  return typeText(s);
}

std::string Printer::value(const HloInstruction* inst) const {
  auto it = names_.find(inst);
  return it == names_.end() ? "%" + inst->name() : it->second;
}

std::string Printer::operandTypes(const HloInstruction& inst) const {
  return joinWith(inst.operands(), ", ", [this](const HloInstruction* o) { return type(*o); });
}

void Printer::nameValues(const HloComputation& c) {
  for (const auto& inst : c.instructions()) {
    std::string name = inst->name();
    if (taken_.count(name)) {
      int n = 1;
      while (taken_.count(name + "_" + std::to_string(n)))
        ++n;
      name += "_" + std::to_string(n);
    }
    taken_.insert(name);
    names_[inst.get()] = "%" + name;
  }
}

void Printer::reduce(const HloInstruction& inst, const std::string& indent,
                     const std::string& lhs) {
  const int64_t n = inst.operandCount() / 2;
  const HloComputation* r = inst.called("to_apply");
  if (n == 0 || inst.operandCount() % 2 != 0 || !r || r->parameterCount() != 2 * n ||
      std::count(r->parameters().begin(), r->parameters().end(), nullptr) != 0)
    unsupported(inst, "has no reducer of 2N parameters for its N inputs and N initial values");
  // Reducers that reduce are printed inside each other, on the stack: bounded as the parser bounds
  // the regions it reads.
  if (++region_depth_ > kMaxNestingDepth)
    unsupported(inst, "nests reducers deeper than " + std::to_string(kMaxNestingDepth) + " levels");
  std::vector<std::string> results;
  if (n == 1) {
    results.push_back(type(inst));
  } else {
    for (const hlo::Shape& s : inst.shape().tupleShapes())
      results.push_back(typeText(s));
  }
  const std::string result_types = n == 1 ? results[0] : "(" + join(results, ", ") + ")";
  if (inst.opcode() == HloOpcode::kReduceWindow) {
    // reduce_window has no pretty form: the generic one, its region's block taking every
    // accumulator, then every value.
    if (!inst.attrs().window) unsupported(inst, "has no window");
    out_ += indent + lhs + "\"stablehlo.reduce_window\"(" +
            joinWith(inst.operands(), ", ", [this](const HloInstruction* o) { return value(o); }) +
            ") " + reduceWindowProperties(*inst.attrs().window) + " ({\n";
    genericRegion(*r, indent, /*flatten_root=*/n > 1);
    out_ += indent + "}) : (" + operandTypes(inst) + ") -> " + result_types + "\n";
    --region_depth_;
    return;
  }
  out_ += indent + lhs + "stablehlo.reduce";
  for (int64_t i = 0; i < n; ++i) {
    out_ +=
        (i ? ", (" : "(") + value(inst.operand(i)) + " init: " + value(inst.operand(n + i)) + ")";
  }
  out_ +=
      " across dimensions = " + intList(inst.attrs().dimensions.value_or(std::vector<int64_t>{})) +
      " : (" + operandTypes(inst) + ") -> " + result_types + "\n";
  nameValues(*r);
  out_ += indent + " reducer";
  for (int64_t i = 0; i < n; ++i) {
    const HloInstruction* a = r->parameter(i);
    const HloInstruction* b = r->parameter(n + i);
    out_ += "(" + value(a) + ": " + type(*a) + ", " + value(b) + ": " + type(*b) + ")";
    out_ += i + 1 < n ? " " : "";
  }
  out_ += " {\n";
  body(*r, indent + "  ", /*region=*/true, /*flatten_root=*/n > 1);
  out_ += indent + "}\n";
  --region_depth_;
}

void Printer::genericRegion(const HloComputation& c, const std::string& indent, bool flatten_root) {
  nameValues(c);
  out_ += indent + "^bb0(" +
          joinWith(c.parameters(), ", ",
                   [this](const HloInstruction* p) { return value(p) + ": " + type(*p); }) +
          "):\n";
  body(c, indent + "  ", /*region=*/true, flatten_root);
}

void Printer::whileLoop(const HloInstruction& inst, const std::string& indent,
                        const std::string& lhs) {
  // The generic form: HLO's condition and body name their parameters apart, and the pretty form
  // gives both regions the same names. The one carried value stays one (a tuple stays a tuple).
  const HloComputation* cond = inst.called("condition");
  const HloComputation* body_c = inst.called("body");
  for (const HloComputation* c : {cond, body_c}) {
    if (!c || c->parameterCount() != 1 || !c->parameter(0))
      unsupported(inst, "has no condition and body of one parameter");
  }
  if (++region_depth_ > kMaxNestingDepth)
    unsupported(inst, "nests loops deeper than " + std::to_string(kMaxNestingDepth) + " levels");
  out_ += indent + lhs + "\"stablehlo.while\"(" + value(inst.operand(0)) + ") ({\n";
  genericRegion(*cond, indent);
  out_ += indent + "}, {\n";
  genericRegion(*body_c, indent);
  out_ += indent + "}) : (" + operandTypes(inst) + ") -> " + type(inst) + "\n";
  --region_depth_;
}

void Printer::instruction(const HloInstruction& inst, const std::string& indent) {
  const HloOpcode op = inst.opcode();
  if (op == HloOpcode::kParameter) return;
  const std::string lhs = value(&inst) + " = ";
  if (op == HloOpcode::kGetTupleElement && inst.operandCount() == 1 &&
      multiResult(inst.operand(0))) {
    names_[&inst] = value(inst.operand(0)) + "#" + std::to_string(inst.attrs().index.value_or(0));
    return;
  }
  for (const HloInstruction* o : inst.operands()) {
    if (multiResult(o) && op != HloOpcode::kGetTupleElement)
      unsupported(inst, "uses a variadic reduce's tuple other than through get-tuple-element");
  }
  const OpInfo* info = opFor(op);
  if (!info) unsupported(inst, "has no StableHLO op in tacit's subset");
  // Structure the verifier checks, checked here too: the printer takes unverified modules.
  const int arity = hlo::opcodeArity(op);
  if (arity != hlo::kVariadicArity && inst.operandCount() != arity)
    unsupported(inst, "has " + std::to_string(inst.operandCount()) + " operands, not " +
                          std::to_string(arity));
  if (op == HloOpcode::kConcatenate &&
      (!inst.attrs().dimensions || inst.attrs().dimensions->size() != 1))
    unsupported(inst, "needs one concatenated dimension");
  const std::string name(info->name);
  const std::string operands =
      joinWith(inst.operands(), ", ", [this](const HloInstruction* o) { return value(o); });
  const hlo::HloAttributes& a = inst.attrs();
  std::string line = indent + lhs + name;
  switch (info->form) {
    case OpForm::kElementwise: {
      if (name.rfind("chlo.", 0) == 0) {  // CHLO's form: `chlo.erf %x : T -> T`
        line += " " + operands + " : " + operandTypes(inst) + " -> " + type(inst);
        break;
      }
      // select always names its predicate's type first (`: tensor<4xi1>, tensor<4xf32>`), even
      // when that is the values' type.
      bool same = op != HloOpcode::kSelect;
      for (const HloInstruction* o : inst.operands())
        same = same && o->shape().compatible(inst.shape());
      if (same) {
        line += " " + operands + " : " + type(inst);
      } else if (op == HloOpcode::kSelect && inst.operand(1)->shape().compatible(inst.shape()) &&
                 inst.operand(2)->shape().compatible(inst.shape())) {
        line += " " + operands + " : " + type(*inst.operand(0)) + ", " + type(inst);
      } else {
        line += " " + operands + " : " + functionType(inst);
      }
      break;
    }
    case OpForm::kConstant:
      if (!inst.literal() || inst.literal()->isUnknown() || !inst.shape().isArray())
        unsupported(inst, "has no array value (an elided {...} or a tuple constant)");
      if (hlo::isComplex(inst.shape().elementType()))
        unsupported(inst, "is complex: tacit's StableHLO leaves complex constants out");
      type(inst);
      line += " " + denseText(*inst.literal()) + " : " + type(inst);
      break;
    case OpForm::kIota:
      line += " dim = " + std::to_string(a.iota_dimension.value_or(0)) + " : " + type(inst);
      break;
    case OpForm::kCompare:
      line += " " +
              std::string(hlo::comparisonDirectionName(
                  a.direction.value_or(hlo::ComparisonDirection::kEq))) +
              ", " + operands;
      if (a.comparison_type)
        line += ", " + std::string(hlo::comparisonTypeName(*a.comparison_type));
      line += " : " + functionType(inst);
      break;
    case OpForm::kBroadcastInDim:
    case OpForm::kTranspose:
      line += " " + operands +
              ", dims = " + intList(a.dimensions.value_or(std::vector<int64_t>{})) + " : " +
              functionType(inst);
      break;
    case OpForm::kReverse:
      line += " " + operands +
              ", dims = " + intList(a.dimensions.value_or(std::vector<int64_t>{})) + " : " +
              type(inst);
      break;
    case OpForm::kConcatenate:
      line += " " + operands +
              ", dim = " + std::to_string(a.dimensions.value_or(std::vector<int64_t>{0}).at(0)) +
              " : " + functionType(inst);
      break;
    case OpForm::kSlice: {
      std::vector<std::string> dims;
      for (const hlo::SliceDim& d : a.slice.value_or(std::vector<hlo::SliceDim>{})) {
        dims.push_back(std::to_string(d.start) + ":" + std::to_string(d.limit) +
                       (d.stride != 1 ? ":" + std::to_string(d.stride) : ""));
      }
      line += " " + operands + " [" + join(dims, ", ") + "] : " + functionType(inst);
      break;
    }
    case OpForm::kDynamicSlice:
      line += " " + operands +
              ", sizes = " + intList(a.dynamic_slice_sizes.value_or(std::vector<int64_t>{})) +
              " : " + functionType(inst);
      break;
    case OpForm::kDynamicUpdateSlice:
      line += " " + operands + " : " + functionType(inst);
      break;
    case OpForm::kPad: {
      std::vector<int64_t> lo, hi, interior;
      for (const hlo::PadDim& d : a.padding.value_or(std::vector<hlo::PadDim>{})) {
        lo.push_back(d.lo);
        hi.push_back(d.hi);
        interior.push_back(d.interior);
      }
      line += " " + operands + ", low = " + intList(lo) + ", high = " + intList(hi) +
              ", interior = " + intList(interior) + " : " + functionType(inst);
      break;
    }
    case OpForm::kDotGeneral:
    case OpForm::kDot: {
      const hlo::DotDims d = a.dot_dims.value_or(hlo::DotDims{});
      line += " " + operands;
      if (!d.lhs_batch.empty() || !d.rhs_batch.empty())
        line += ", batching_dims = " + intList(d.lhs_batch) + " x " + intList(d.rhs_batch);
      line +=
          ", contracting_dims = " + intList(d.lhs_contracting) + " x " + intList(d.rhs_contracting);
      line += " : " + functionType(inst);
      break;
    }
    case OpForm::kConvolution: {
      if (!a.conv_dims || !a.window) unsupported(inst, "has no dim_labels or window");
      line = indent + lhs + name + "(" + operands +
             ") dim_numbers = " + convDimensionsText(*a.conv_dims) +
             ", window = " + convWindowText(*a.window) +
             " {batch_group_count = " + std::to_string(a.batch_group_count.value_or(1)) +
             " : i64, feature_group_count = " + std::to_string(a.feature_group_count.value_or(1)) +
             " : i64} : " + functionType(inst);
      break;
    }
    case OpForm::kReduce:
    case OpForm::kReduceWindow: {
      const int64_t n = inst.operandCount() / 2;
      reduce(inst, indent, n == 1 ? lhs : value(&inst) + ":" + std::to_string(n) + " = ");
      return;
    }
    case OpForm::kWhile:
      whileLoop(inst, indent, lhs);
      return;
    case OpForm::kSort: {
      // No pretty form: the generic one, the comparator as its region.
      const HloComputation* cmp = inst.called("to_apply");
      if (!cmp || cmp->parameterCount() != 2 * inst.operandCount() ||
          std::count(cmp->parameters().begin(), cmp->parameters().end(), nullptr) != 0 ||
          !a.dimensions || a.dimensions->size() != 1)
        unsupported(inst, "has no comparator of 2N parameters or no sort dimension");
      if (++region_depth_ > kMaxNestingDepth)
        unsupported(inst,
                    "nests regions deeper than " + std::to_string(kMaxNestingDepth) + " levels");
      std::vector<std::string> results;
      if (inst.operandCount() == 1) {
        results.push_back(type(inst));
      } else {
        for (const hlo::Shape& r : inst.shape().tupleShapes())
          results.push_back(typeText(r));
      }
      const std::string sort_lhs =
          inst.operandCount() == 1
              ? lhs
              : value(&inst) + ":" + std::to_string(inst.operandCount()) + " = ";
      out_ += indent + sort_lhs + "\"stablehlo.sort\"(" + operands +
              ") <{dimension = " + std::to_string(a.dimensions->at(0)) + " : i64" +
              (a.is_stable.value_or(false) ? ", is_stable = true" : "") + "}> ({\n";
      genericRegion(*cmp, indent);
      out_ += indent + "}) : (" + operandTypes(inst) + ") -> " +
              (results.size() == 1 ? results[0] : "(" + join(results, ", ") + ")") + "\n";
      --region_depth_;
      return;
    }
    case OpForm::kOptimizationBarrier:
      // One value, as HLO carries it (a tuple stays a tuple).
      line += " " + operands + " : " + type(inst);
      break;
    case OpForm::kReducePrecision:
      line += " " + operands + ", format = e" + std::to_string(a.exponent_bits.value_or(0)) + "m" +
              std::to_string(a.mantissa_bits.value_or(0)) + " : " + type(inst);
      break;
    case OpForm::kTuple:
      line += " " + operands + " : " + type(inst);
      break;
    case OpForm::kGetTupleElement:
      line +=
          " " + operands + "[" + std::to_string(a.index.value_or(0)) + "] : " + functionType(inst);
      break;
    case OpForm::kCustomCall: {
      const hlo::RawAttribute* target = inst.raw("custom_call_target");
      if (!target) unsupported(inst, "has no custom_call_target");
      std::vector<std::string> attrs;
      if (const hlo::RawAttribute* config = inst.raw("backend_config");
          config && config->value.front() == '"')
        attrs.push_back("backend_config = " + mlirQuote(unquoteHlo(config->value)));
      if (const hlo::RawAttribute* effect = inst.raw("custom_call_has_side_effect");
          effect && effect->value == "true")
        attrs.push_back("has_side_effect = true");
      if (const hlo::RawAttribute* version = inst.raw("api_version")) {
        static const char* versions[] = {
            "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
        for (int v = 0; v < 5; ++v)
          if (version->value == versions[v] && v != 1)
            attrs.push_back("api_version = " + std::to_string(v) + " : i32");
      }
      line = indent + lhs + name + " " + symbol(unquoteHlo(target->value)) + "(" + operands + ")";
      if (!attrs.empty()) line += " {" + join(attrs, ", ") + "}";
      line += " : " + functionType(inst);
      break;
    }
    case OpForm::kCall: {
      const HloComputation* callee = inst.called("to_apply");
      if (!callee) unsupported(inst, "has no to_apply computation");
      line = indent + lhs + "func.call " + symbol(callee->name()) + "(" + operands +
             ") : " + functionType(inst);
      break;
    }
    case OpForm::kReturn:
      unsupported(inst, "has no StableHLO op");
  }
  out_ += line + "\n";
}

std::string Printer::resultTypes(const HloInstruction& inst) const {
  type(inst);  // checks the shape
  return joinWith(inst.shape().tupleShapes(), ", ",
                  [](const hlo::Shape& s) { return typeText(s); });
}

std::string Printer::returned(const HloInstruction& root) const {
  if (!multiResult(&root)) return value(&root) + " : " + type(root);
  std::vector<std::string> values;
  for (size_t i = 0; i < root.shape().tupleShapes().size(); ++i)
    values.push_back(value(&root) + "#" + std::to_string(i));
  return join(values, ", ") + " : " + resultTypes(root);
}

void Printer::body(const HloComputation& c, const std::string& indent, bool region,
                   bool flatten_root) {
  const HloInstruction* root = c.root();
  const bool flat = flatten_root && root->opcode() == HloOpcode::kTuple;
  for (const auto& inst : c.instructions()) {
    if (!(flat && inst.get() == root)) instruction(*inst, indent);
  }
  const std::string values = flat ? joinWith(root->operands(), ", ",
                                             [this](const HloInstruction* o) { return value(o); }) +
                                        " : " + operandTypes(*root)
                                  : returned(*root);
  out_ += indent + (region ? "stablehlo.return " : "return ") + values + "\n";
}

void Printer::function(const HloComputation& c) {
  taken_.clear();
  nameValues(c);
  const bool entry = &c == m_.entry();
  // The entry's layouts (entry_computation_layout, else the parameters' and root's own) as JAX
  // writes them: mhlo.layout_mode = "{1,0:T(16,4)}".
  auto layout = [](const hlo::Shape& s) -> std::string {
    if (!s.isArray() || !s.layout() || s.hasDefaultLayout()) return {};
    return " {mhlo.layout_mode = " + mlirQuote(hlo::layoutStr(*s.layout())) + "}";
  };
  const std::optional<hlo::ProgramShape>& given = m_.entryLayout();
  std::vector<std::string> args;
  if (std::count(c.parameters().begin(), c.parameters().end(), nullptr) != 0)
    unsupported(*c.root(), "is in a computation whose parameter numbers have gaps");
  for (const HloInstruction* p : c.parameters()) {
    const hlo::Shape& s =
        entry && given && static_cast<size_t>(p->parameterNumber()) < given->parameters.size()
            ? given->parameters[static_cast<size_t>(p->parameterNumber())]
            : p->shape();
    args.push_back(value(p) + ": " + type(*p) + (entry ? layout(s) : ""));
  }
  std::string result = multiResult(c.root()) ? "(" + resultTypes(*c.root()) + ")" : type(*c.root());
  if (entry && !multiResult(c.root())) {
    const hlo::Shape& r = given ? given->result : c.root()->shape();
    if (!layout(r).empty()) result = "(" + result + layout(r) + ")";
  }
  out_ += "  func.func " + std::string(entry ? "public " : "private ") + symbol(c.name()) + "(" +
          join(args, ", ") + ") -> " + result + " {\n";
  body(c, "    ", /*region=*/false);
  out_ += "  }\n";
}

std::string Printer::run() {
  // Reducers are printed inline; the entry and every computation a call names are functions.
  std::set<const HloComputation*> functions = {m_.entry()};
  for (const auto& c : m_.computations()) {
    for (const auto& inst : c->instructions()) {
      if (inst->opcode() == HloOpcode::kCall) {
        if (const HloComputation* callee = inst->called("to_apply")) functions.insert(callee);
      } else if (inst->opcode() != HloOpcode::kReduce &&
                 inst->opcode() != HloOpcode::kReduceWindow &&
                 inst->opcode() != HloOpcode::kWhile && inst->opcode() != HloOpcode::kSort &&
                 !inst->attrs().called.empty()) {
        if (!opFor(inst->opcode())) unsupported(*inst, "has no StableHLO op in tacit's subset");
        unsupported(*inst, "calls a computation tacit's StableHLO output cannot write");
      }
    }
  }
  out_ = "module " + symbol(m_.name()) + " {\n";
  for (const auto& c : m_.computations())
    if (functions.count(c.get())) function(*c);
  out_ += "}\n";
  return out_;
}

}  // namespace

std::string printStableHlo(const hlo::HloModule& module) {
  Printer p(module);
  return p.run();
}

}  // namespace tacit::stablehlo
