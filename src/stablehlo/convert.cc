#include "stablehlo/convert.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "hlo/builder.h"
#include "hlo/lexer.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "stablehlo/dense.h"
#include "stablehlo/ops.h"
#include "stablehlo/parser.h"
#include "stablehlo/types.h"
#include "stablehlo/window.h"
#include "support/strings.h"

namespace tacit::stablehlo {
namespace {

using hlo::HloBuilder;
using hlo::HloComputation;
using hlo::HloInstruction;
using hlo::HloOpcode;
using hlo::Shape;

// A name HLO accepts for an instruction or computation: [A-Za-z_][A-Za-z0-9_.-]*.
bool isHloName(std::string_view s) {
  return !s.empty() && hlo::isIdentStart(s[0]) && std::all_of(s.begin(), s.end(), hlo::isIdentChar);
}

// Gives each instruction its source name where it has one (the first to claim a name wins) and
// keeps the builder's name otherwise, renaming those that a source name took.
void assignNames(HloComputation& c,
                 const std::unordered_map<HloInstruction*, std::string>& desired) {
  std::set<std::string> claimed;
  std::set<HloInstruction*> winners;
  for (const auto& inst : c.instructions()) {
    auto it = desired.find(inst.get());
    if (it != desired.end() && claimed.insert(it->second).second) winners.insert(inst.get());
  }
  std::set<std::string> used;
  for (const auto& inst : c.instructions()) {
    if (winners.count(inst.get())) {
      inst->setName(desired.at(inst.get()));
    } else if (claimed.count(inst->name()) || used.count(inst->name())) {
      std::string base = inst->name();
      int n = 1;
      while (claimed.count(base + "." + std::to_string(n)) ||
             used.count(base + "." + std::to_string(n)) ||
             c.findInstruction(base + "." + std::to_string(n)))
        ++n;
      inst->setName(base + "." + std::to_string(n));
    }
    used.insert(inst->name());
  }
}

class Converter {
 public:
  Converter(const SourceFile& file, const Module& m) : file_(file), m_(m) {}

  std::unique_ptr<hlo::HloModule> run();

 private:
  // The values of one block under construction.
  struct Scope {
    HloBuilder b;
    std::unordered_map<std::string, HloInstruction*> values;
    std::unordered_map<HloInstruction*, std::string> desired;  // names from the source
    explicit Scope(std::string name) : b(std::move(name)) {}
  };

  [[noreturn]] void failAt(SourceLoc loc, std::string message, std::string hint = {}) const {
    fail(file_.name(), loc, std::move(message), std::move(hint));
  }

  HloComputation* function(const std::string& name, SourceLoc use);
  // Builds a block's computation; `results` names the single result (jax.result_info).
  // tuple_args: the block's arguments are the elements of one tuple parameter (a while loop's
  // condition and body over several values, as HLO's while carries one value).
  std::unique_ptr<HloComputation> block(const Region& region, const std::string& name,
                                        bool tuple_args, const std::vector<Type>* result_types,
                                        const std::string& result_name);
  void op(Scope& s, const Op& op);
  std::vector<HloInstruction*> build(Scope& s, const Op& op, const OpInfo& info,
                                     const std::vector<HloInstruction*>& operands);
  // mhlo.layout_mode = "{1,0:T(16,4)}" on the entry's arguments and results: the parameters',
  // the root's and the module's entry layouts.
  void applyLayouts(const Func& f, HloComputation& c);
  std::optional<hlo::Layout> layoutOf(const NamedAttrs& attrs, const Shape& shape) const;
  HloComputation* reducer(const Op& op, const std::vector<HloInstruction*>& operands);
  HloComputation* addShared(std::unique_ptr<HloComputation> c);

  HloInstruction* lookup(Scope& s, const ValueRef& ref) const;
  const Attr& attr(const Op& op, std::string_view name, Attr::Kind kind) const;
  // A list of integers: [1, 2], array<i64: 1, 2>, or the older dense<[1, 2]> : tensor<2xi64>.
  std::vector<int64_t> intsAttr(const Op& op, std::string_view name) const {
    if (const Attr* a = op.attrs.find(name); a && a->kind == Attr::Kind::kDense &&
                                             hlo::isInteger(a->type.shape.elementType()) &&
                                             a->type.shape.rank() == 1) {
      hlo::Literal l = denseLiteral(file_, *a);
      std::vector<int64_t> out;
      for (int64_t i = 0; i < l.elementCount(); ++i)
        out.push_back(l.getInt64(i));
      return out;
    }
    return attr(op, name, Attr::Kind::kIntArray).ints;
  }
  int64_t intAttr(const Op& op, std::string_view name) const {
    return attr(op, name, Attr::Kind::kInt).i;
  }

  const SourceFile& file_;
  const Module& m_;
  std::unique_ptr<hlo::HloModule> out_;
  std::map<std::string, const Func*> funcs_;
  std::map<std::string, HloComputation*> converted_;
  std::set<std::string> in_progress_;
  std::map<std::string, HloComputation*> shared_;  // reducer text -> computation
  int regions_ = 0;
};

const Attr& Converter::attr(const Op& op, std::string_view name, Attr::Kind kind) const {
  const Attr* a = op.attrs.find(name);
  if (!a) failAt(op.loc, "'" + op.name + "' needs the attribute '" + std::string(name) + "'");
  if (a->kind != kind) {
    static const char* kinds[] = {"a unit",          "an integer",         "a float",
                                  "a bool",          "a string",           "a symbol",
                                  "a keyword",       "a list of integers", "a list",
                                  "a dense literal", "a dictionary",       "a type",
                                  "an attribute"};
    failAt(a->loc, "attribute '" + std::string(name) + "' of '" + op.name + "' must be " +
                       kinds[static_cast<int>(kind)]);
  }
  return *a;
}

HloInstruction* Converter::lookup(Scope& s, const ValueRef& ref) const {
  std::string key = ref.name;
  if (ref.result >= 0) key += "#" + std::to_string(ref.result);
  auto it = s.values.find(key);
  if (it == s.values.end() && ref.result == 0) it = s.values.find(ref.name);
  if (it == s.values.end()) {
    failAt(ref.loc, "use of undefined value %" + key,
           "values are defined before their uses, in the same function or region");
  }
  return it->second;
}

HloComputation* Converter::addShared(std::unique_ptr<HloComputation> c) {
  // Identical reducers (the same body whatever the names) are one computation, as a module that
  // JAX or XLA prints shares one reducer between its reduces: the key is the computation printed
  // with canonical names.
  std::string name = c->name();
  std::vector<std::string> names;
  for (const auto& inst : c->instructions()) {
    names.push_back(inst->name());
    inst->setName("v" + std::to_string(names.size()));
  }
  c->setName("r");
  std::string key = hlo::printComputation(*c);
  if (auto it = shared_.find(key); it != shared_.end()) return it->second;
  c->setName(name);
  for (size_t i = 0; i < names.size(); ++i)
    c->instructions()[i]->setName(names[i]);
  HloComputation* added = out_->addComputation(std::move(c));
  shared_[key] = added;
  return added;
}

HloComputation* Converter::reducer(const Op& op, const std::vector<HloInstruction*>& operands) {
  const size_t n = operands.size() / 2;
  if (const Attr* applies = op.attrs.find("applies")) {
    const OpInfo* info = findOp(applies->text);
    if (!info || info->form != OpForm::kElementwise || n != 1 ||
        hlo::opcodeCategory(info->opcode) != hlo::OpcodeCategory::kBinary) {
      failAt(applies->loc,
             "'applies " + applies->text + "' needs a binary elementwise op and one input",
             "write the reducer as a region");
    }
    const hlo::PrimitiveType t = operands[1]->shape().elementType();
    HloBuilder b("region_" + std::to_string(regions_++));
    HloInstruction* x = b.parameter(0, Shape(t, {}), "Arg_0");
    HloInstruction* y = b.parameter(1, Shape(t, {}), "Arg_1");
    b.binary(info->opcode, x, y);
    return addShared(b.build());
  }
  if (op.regions.size() != 1) failAt(op.loc, "'" + op.name + "' needs one region, its reducer");
  return addShared(block(op.regions[0], "region_" + std::to_string(regions_++),
                         /*tuple_args=*/false, nullptr, ""));
}

std::vector<HloInstruction*> Converter::build(Scope& s, const Op& op, const OpInfo& info,
                                              const std::vector<HloInstruction*>& x) {
  HloBuilder& b = s.b;
  auto arity = [&](size_t lo, size_t hi) {
    if (x.size() < lo || x.size() > hi) {
      failAt(op.loc, "'" + op.name + "' takes " +
                         (lo == hi ? std::to_string(lo) : std::to_string(lo) + " or more") +
                         " operands, got " + std::to_string(x.size()));
    }
  };
  auto declared = [&]() -> std::optional<Shape> {
    if (op.result_types.size() != 1) return std::nullopt;
    return op.result_types[0].shape;
  };
  switch (info.form) {
    case OpForm::kElementwise: {
      std::optional<Shape> shape = declared();
      if (!shape) failAt(op.loc, "'" + op.name + "' has one result");
      return {b.add(info.opcode, x, {}, shape)};
    }
    case OpForm::kConstant: {
      arity(0, 0);
      return {b.constant(denseLiteral(file_, attr(op, "value", Attr::Kind::kDense)))};
    }
    case OpForm::kIota: {
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'stablehlo.iota' needs a tensor result type");
      return {b.iota(*shape, intAttr(op, "iota_dimension"))};
    }
    case OpForm::kCompare: {
      arity(2, 2);
      const Attr& dir = attr(op, "comparison_direction", Attr::Kind::kEnum);
      static const std::pair<std::string_view, hlo::ComparisonDirection> dirs[] = {
          {"EQ", hlo::ComparisonDirection::kEq}, {"NE", hlo::ComparisonDirection::kNe},
          {"GE", hlo::ComparisonDirection::kGe}, {"GT", hlo::ComparisonDirection::kGt},
          {"LE", hlo::ComparisonDirection::kLe}, {"LT", hlo::ComparisonDirection::kLt}};
      std::optional<hlo::ComparisonDirection> d;
      for (const auto& [word, value] : dirs)
        if (dir.text == word) d = value;
      if (!d)
        failAt(dir.loc, "unknown comparison direction '" + dir.text + "'",
               "EQ, NE, GE, GT, LE or LT");
      std::optional<hlo::ComparisonType> type;
      if (const Attr* t = op.attrs.find("compare_type")) {
        static const std::pair<std::string_view, hlo::ComparisonType> types[] = {
            {"FLOAT", hlo::ComparisonType::kFloat},
            {"TOTALORDER", hlo::ComparisonType::kTotalOrder},
            {"SIGNED", hlo::ComparisonType::kSigned},
            {"UNSIGNED", hlo::ComparisonType::kUnsigned}};
        for (const auto& [word, value] : types)
          if (t->text == word) type = value;
        if (!type)
          failAt(t->loc, "unknown comparison type '" + t->text + "'",
                 "FLOAT, TOTALORDER, SIGNED or UNSIGNED");
      }
      return {b.compare(x[0], x[1], *d, type)};
    }
    case OpForm::kBroadcastInDim: {
      arity(1, 1);
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'" + op.name + "' needs a tensor result type");
      std::vector<int64_t> dims = intsAttr(op, "broadcast_dimensions");
      HloInstruction* operand = x[0];
      // StableHLO also expands an operand dimension of size 1 to any size; HLO's broadcast maps
      // sizes one to one, so such dimensions are reshaped away first (as XLA's import does).
      const Shape& in = operand->shape();
      if (in.isArray() && static_cast<int64_t>(dims.size()) == in.rank()) {
        std::vector<int64_t> kept_dims, kept_sizes;
        for (int64_t i = 0; i < in.rank(); ++i) {
          const int64_t d = dims[static_cast<size_t>(i)];
          const bool expands = in.dim(i) == 1 && d >= 0 && d < shape->rank() && shape->dim(d) != 1;
          if (!expands) {
            kept_dims.push_back(d);
            kept_sizes.push_back(in.dim(i));
          }
        }
        if (kept_dims.size() != dims.size()) {
          operand = b.reshape(operand, kept_sizes);
          dims = kept_dims;
        }
      }
      return {b.broadcast(operand, shape->dims(), dims)};
    }
    case OpForm::kTranspose:
      arity(1, 1);
      return {b.transpose(x[0], intsAttr(op, "permutation"))};
    case OpForm::kReverse:
      arity(1, 1);
      return {b.reverse(x[0], intsAttr(op, "dimensions"))};
    case OpForm::kConcatenate:
      arity(1, SIZE_MAX);
      return {b.concatenate(x, intAttr(op, "dimension"))};
    case OpForm::kSlice: {
      arity(1, 1);
      std::vector<int64_t> strides;
      if (op.attrs.find("strides")) strides = intsAttr(op, "strides");
      return {b.slice(x[0], intsAttr(op, "start_indices"), intsAttr(op, "limit_indices"), strides)};
    }
    case OpForm::kDynamicSlice:
      arity(1, SIZE_MAX);
      return {b.dynamicSlice(x[0], {x.begin() + 1, x.end()}, intsAttr(op, "slice_sizes"))};
    case OpForm::kDynamicUpdateSlice:
      arity(2, SIZE_MAX);
      return {b.dynamicUpdateSlice(x[0], x[1], {x.begin() + 2, x.end()})};
    case OpForm::kPad: {
      arity(2, 2);
      const std::vector<int64_t> lo = intsAttr(op, "edge_padding_low");
      const std::vector<int64_t> hi = intsAttr(op, "edge_padding_high");
      const std::vector<int64_t> interior = intsAttr(op, "interior_padding");
      if (lo.size() != hi.size() || lo.size() != interior.size())
        failAt(op.loc, "the padding lists of 'stablehlo.pad' differ in length");
      std::vector<hlo::PadDim> padding;
      for (size_t i = 0; i < lo.size(); ++i)
        padding.push_back({lo[i], hi[i], interior[i]});
      return {b.pad(x[0], x[1], padding)};
    }
    case OpForm::kDotGeneral:
    case OpForm::kDot: {
      arity(2, 2);
      hlo::DotDims dims;
      if (info.form == OpForm::kDotGeneral) {
        const Attr& d = attr(op, "dot_dimension_numbers", Attr::Kind::kDict);
        for (const auto& [key, value] : d.dict) {
          std::vector<int64_t>* field =
              key == "lhs_batching_dimensions"      ? &dims.lhs_batch
              : key == "rhs_batching_dimensions"    ? &dims.rhs_batch
              : key == "lhs_contracting_dimensions" ? &dims.lhs_contracting
              : key == "rhs_contracting_dimensions" ? &dims.rhs_contracting
                                                    : nullptr;
          if (!field || value.kind != Attr::Kind::kIntArray)
            failAt(value.loc, "unknown dot dimension field '" + key + "'");
          *field = value.ints;
        }
      } else {
        // The legacy dot contracts the lhs's last dimension with the rhs's first.
        if (x[0]->shape().rank() < 1 || x[0]->shape().rank() > 2 || x[1]->shape().rank() < 1 ||
            x[1]->shape().rank() > 2)
          failAt(op.loc, "'stablehlo.dot' takes vectors and matrices");
        dims.lhs_contracting = {x[0]->shape().rank() - 1};
        dims.rhs_contracting = {0};
      }
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'" + op.name + "' needs a tensor result type");
      return {b.dot(x[0], x[1], dims, shape->elementType())};
    }
    case OpForm::kConvolution: {
      arity(2, 2);
      std::optional<Shape> shape = declared();
      if (!shape || !shape->isArray())
        failAt(op.loc, "'" + op.name + "' needs a tensor result type");
      return {b.add(HloOpcode::kConvolution, x, convolutionAttributes(file_, op, x[1]->shape()),
                    shape)};
    }
    case OpForm::kReduce: {
      if (x.size() < 2 || x.size() % 2 != 0)
        failAt(op.loc, "'stablehlo.reduce' takes inputs and as many initial values");
      const size_t n = x.size() / 2;
      HloComputation* r = reducer(op, x);
      HloInstruction* reduce =
          b.reduce({x.begin(), x.begin() + static_cast<long>(n)},
                   {x.begin() + static_cast<long>(n), x.end()}, intsAttr(op, "dimensions"), r);
      if (n == 1) return {reduce};
      std::vector<HloInstruction*> results;
      for (size_t i = 0; i < n; ++i)
        results.push_back(b.getTupleElement(reduce, static_cast<int64_t>(i)));
      return results;
    }
    case OpForm::kReduceWindow: {
      if (x.size() < 2 || x.size() % 2 != 0)
        failAt(op.loc, "'stablehlo.reduce_window' takes inputs and as many initial values");
      const size_t n = x.size() / 2;
      hlo::HloAttributes attrs;
      attrs.window =
          reduceWindowWindow(file_, op, x[0]->shape().isArray() ? x[0]->shape().rank() : 0);
      attrs.called.push_back({"to_apply", {reducer(op, x)}, false});
      HloInstruction* rw = b.add(HloOpcode::kReduceWindow, x, attrs);
      if (n == 1) return {rw};
      std::vector<HloInstruction*> results;
      for (size_t i = 0; i < n; ++i)
        results.push_back(b.getTupleElement(rw, static_cast<int64_t>(i)));
      return results;
    }
    case OpForm::kWhile: {
      // HLO's while carries one value: several operands travel as a tuple, the condition and the
      // body take it apart, and the results are its elements.
      if (x.empty()) failAt(op.loc, "'stablehlo.while' needs at least one operand");
      if (op.regions.size() != 2)
        failAt(op.loc, "'stablehlo.while' needs two regions, cond and do");
      const bool tupled = x.size() > 1;
      for (const Region& r : op.regions) {
        if (r.args.size() != x.size())
          failAt(r.loc, "the region takes " + std::to_string(r.args.size()) +
                            " arguments; the loop carries " + std::to_string(x.size()) + " values");
      }
      hlo::HloAttributes attrs;
      attrs.called.push_back(
          {"condition",
           {addShared(
               block(op.regions[0], "region_" + std::to_string(regions_++), tupled, nullptr, ""))},
           false});
      attrs.called.push_back(
          {"body",
           {addShared(
               block(op.regions[1], "region_" + std::to_string(regions_++), tupled, nullptr, ""))},
           false});
      HloInstruction* loop = b.add(HloOpcode::kWhile, {tupled ? b.tuple(x) : x[0]}, attrs);
      if (!tupled) return {loop};
      std::vector<HloInstruction*> results;
      for (size_t i = 0; i < x.size(); ++i)
        results.push_back(b.getTupleElement(loop, static_cast<int64_t>(i)));
      return results;
    }
    case OpForm::kReducePrecision: {
      arity(1, 1);
      hlo::HloAttributes attrs;
      attrs.exponent_bits = intAttr(op, "exponent_bits");
      attrs.mantissa_bits = intAttr(op, "mantissa_bits");
      return {b.add(HloOpcode::kReducePrecision, x, attrs)};
    }
    case OpForm::kTuple:
      return {b.tuple(x)};
    case OpForm::kGetTupleElement:
      arity(1, 1);
      return {b.getTupleElement(x[0], intAttr(op, "index"))};
    case OpForm::kCustomCall: {
      hlo::HloAttributes attrs;
      const Attr& target = attr(op, "call_target_name", Attr::Kind::kString);
      attrs.raw.push_back({"custom_call_target", quote(target.text), target.loc});
      if (const Attr* effect = op.attrs.find("has_side_effect");
          effect && effect->kind == Attr::Kind::kBool && effect->b)
        attrs.raw.push_back({"custom_call_has_side_effect", "true", effect->loc});
      if (const Attr* config = op.attrs.find("backend_config");
          config && config->kind == Attr::Kind::kString && !config->text.empty())
        attrs.raw.push_back({"backend_config", quote(config->text), config->loc});
      if (const Attr* version = op.attrs.find("api_version");
          version && version->kind == Attr::Kind::kInt) {
        static const char* versions[] = {
            "API_VERSION_UNSPECIFIED", "API_VERSION_ORIGINAL", "API_VERSION_STATUS_RETURNING",
            "API_VERSION_STATUS_RETURNING_UNIFIED", "API_VERSION_TYPED_FFI"};
        if (version->i < 0 || version->i > 4)
          failAt(version->loc, "unknown custom_call api_version");
        if (version->i != 1)
          attrs.raw.push_back({"api_version", versions[version->i], version->loc});
      }
      Shape shape;
      if (op.result_types.size() == 1) {
        shape = op.result_types[0].shape;
      } else {
        std::vector<Shape> shapes;
        for (const Type& t : op.result_types)
          shapes.push_back(t.shape);
        shape = Shape::tuple(std::move(shapes));
      }
      HloInstruction* call = b.add(HloOpcode::kCustomCall, x, attrs, shape);
      if (op.result_types.size() == 1) return {call};
      std::vector<HloInstruction*> results;
      for (size_t i = 0; i < op.result_types.size(); ++i)
        results.push_back(b.getTupleElement(call, static_cast<int64_t>(i)));
      return results;
    }
    case OpForm::kCall: {
      const Attr& callee = attr(op, "callee", Attr::Kind::kSymbol);
      hlo::HloAttributes attrs;
      attrs.called.push_back({"to_apply", {function(callee.text, callee.loc)}, false});
      HloInstruction* call = b.add(HloOpcode::kCall, x, attrs);
      if (op.result_types.size() <= 1) return {call};
      std::vector<HloInstruction*> results;
      for (size_t i = 0; i < op.result_types.size(); ++i)
        results.push_back(b.getTupleElement(call, static_cast<int64_t>(i)));
      return results;
    }
    case OpForm::kReturn:
      break;
  }
  failAt(op.loc, "'" + op.name + "' cannot appear here");
}

void Converter::op(Scope& s, const Op& o) {
  const OpInfo* info = findOp(o.name);
  if (!info) {
    failAt(o.loc, "'" + o.name + "' is not supported; supported ops are " + supportedOpNames(),
           "tacit reads the StableHLO subset JAX's exports use (docs/stablehlo.md)");
  }
  if (info->form == OpForm::kReturn) failAt(o.loc, "'" + o.name + "' must end its block");
  std::vector<HloInstruction*> operands;
  for (const ValueRef& ref : o.operands)
    operands.push_back(lookup(s, ref));
  for (size_t i = 0; i < o.operand_types.size() && i < operands.size(); ++i) {
    const Type& t = o.operand_types[i];
    if (t.kind == Type::Kind::kOther) failAt(t.loc, "type '" + t.text + "' is not supported");
    if (!operands[i]->shape().compatible(t.shape)) {
      failAt(o.operands[i].loc, "%" + o.operands[i].name + " has type " +
                                    typeText(operands[i]->shape()) + " but '" + o.name +
                                    "' declares " + t.text);
    }
  }
  for (const Type& t : o.result_types)
    if (t.kind == Type::Kind::kOther) failAt(t.loc, "type '" + t.text + "' is not supported");
  std::vector<HloInstruction*> results;
  try {
    results = build(s, o, *info, operands);
  } catch (DiagnosticError& e) {
    if (e.diagnostic().loc.known()) throw;
    std::string message = e.diagnostic().message;
    if (message.rfind("builder: ", 0) == 0) message = message.substr(9);
    failAt(o.loc, "'" + o.name + "': " + message, e.diagnostic().hint);
  }
  if (o.result_count != 0 && static_cast<int64_t>(results.size()) != o.result_count) {
    failAt(o.loc, "'" + o.name + "' has " + std::to_string(results.size()) + " results, not " +
                      std::to_string(o.result_count));
  }
  for (size_t i = 0; i < results.size() && i < o.result_types.size(); ++i) {
    if (!results[i]->shape().compatible(o.result_types[i].shape)) {
      failAt(o.result_types[i].loc, "'" + o.name + "' yields " + typeText(results[i]->shape()) +
                                        ", not the declared " + o.result_types[i].text);
    }
  }
  for (size_t i = 0; i < results.size() && i < o.results.size(); ++i) {
    const std::string& name = o.results[i];
    if (!s.values.emplace(name, results[i]).second)
      failAt(o.loc, "value %" + name + " is defined twice");
    if (o.results.size() == 1 && isHloName(name)) s.desired[results[i]] = name;
  }
}

std::unique_ptr<HloComputation> Converter::block(const Region& region, const std::string& name,
                                                 bool tuple_args,
                                                 const std::vector<Type>* result_types,
                                                 const std::string& result_name) {
  Scope s(name);
  HloInstruction* tuple = nullptr;
  if (tuple_args) {
    std::vector<Shape> shapes;
    for (const BlockArg& arg : region.args)
      shapes.push_back(arg.type.shape);
    tuple = s.b.parameter(0, Shape::tuple(std::move(shapes)));
  }
  for (size_t i = 0; i < region.args.size(); ++i) {
    const BlockArg& arg = region.args[i];
    if (arg.type.kind == Type::Kind::kOther)
      failAt(arg.type.loc, "type '" + arg.type.text + "' is not supported");
    std::string hlo_name;
    if (isHloName(arg.loc_name)) hlo_name = arg.loc_name;
    if (hlo_name.empty() && isHloName(arg.name)) hlo_name = arg.name;
    HloInstruction* p = tuple ? s.b.getTupleElement(tuple, static_cast<int64_t>(i))
                              : s.b.parameter(static_cast<int64_t>(i), arg.type.shape);
    if (!hlo_name.empty()) s.desired[p] = hlo_name;
    if (!s.values.emplace(arg.name, p).second)
      failAt(arg.loc, "argument %" + arg.name + " is defined twice");
  }
  if (region.ops.empty() || findOp(region.ops.back().name) == nullptr ||
      findOp(region.ops.back().name)->form != OpForm::kReturn) {
    failAt(region.loc, "the block does not end with a return",
           "end it with `return %value : type`");
  }
  for (size_t i = 0; i + 1 < region.ops.size(); ++i)
    op(s, region.ops[i]);
  const Op& ret = region.ops.back();
  std::vector<HloInstruction*> values;
  for (const ValueRef& ref : ret.operands)
    values.push_back(lookup(s, ref));
  if (values.empty())
    failAt(ret.loc, "a function or region must return a value",
           "tacit's HLO computations have a result");
  if (result_types && result_types->size() != values.size()) {
    failAt(ret.loc, "the function declares " + std::to_string(result_types->size()) +
                        " results but returns " + std::to_string(values.size()));
  }
  for (size_t i = 0; i < values.size(); ++i) {
    const Type* declared = result_types
                               ? &(*result_types)[i]
                               : (i < ret.operand_types.size() ? &ret.operand_types[i] : nullptr);
    if (declared && !values[i]->shape().compatible(declared->shape))
      failAt(ret.operands[i].loc, "returned %" + ret.operands[i].name + " has type " +
                                      typeText(values[i]->shape()) + ", not " + declared->text);
  }
  HloInstruction* root = values.size() == 1 ? values[0] : s.b.tuple(values);
  if (!result_name.empty() && root->opcode() != HloOpcode::kParameter)
    s.desired[root] = result_name;
  std::unique_ptr<HloComputation> c = s.b.build(root);
  assignNames(*c, s.desired);
  return c;
}

HloComputation* Converter::function(const std::string& name, SourceLoc use) {
  if (auto it = converted_.find(name); it != converted_.end()) return it->second;
  auto it = funcs_.find(name);
  if (it == funcs_.end()) failAt(use, "call of undefined function @" + name);
  if (!in_progress_.insert(name).second)
    failAt(use, "recursive call of @" + name, "tacit's HLO has no recursion");
  // Each call converts its callee first, on the stack: a bound keeps a hostile chain of calls
  // from exhausting it.
  if (static_cast<int>(in_progress_.size()) > kMaxNestingDepth) {
    failAt(use, "calls nested deeper than " + std::to_string(kMaxNestingDepth) + " functions",
           "tacit limits call nesting (docs/stablehlo.md)");
  }
  const Func& f = *it->second;
  std::string result_name;
  if (f.result_attrs.size() == 1) {
    if (const Attr* info = f.result_attrs[0].find("jax.result_info");
        info && info->kind == Attr::Kind::kString && isHloName(info->text) &&
        info->text != "result")
      result_name = info->text;
  }
  std::string comp_name =
      isHloName(f.name) ? f.name : "function_" + std::to_string(converted_.size());
  if (out_->findComputation(comp_name))
    comp_name += "." + std::to_string(out_->computations().size());
  std::unique_ptr<HloComputation> c =
      block(f.body, comp_name, /*tuple_args=*/false, &f.result_types, result_name);
  c->setLoc(f.loc);
  HloComputation* added = out_->addComputation(std::move(c));
  in_progress_.erase(name);
  converted_[name] = added;
  return added;
}

std::optional<hlo::Layout> Converter::layoutOf(const NamedAttrs& attrs, const Shape& shape) const {
  const Attr* mode = attrs.find("mhlo.layout_mode");
  if (!mode || mode->kind != Attr::Kind::kString || mode->text.empty() || mode->text[0] != '{')
    return std::nullopt;  // "default", "auto": no layout asked for
  if (!shape.isArray()) failAt(mode->loc, "a layout applies to a tensor");
  try {
    return hlo::parseShape(shape.shortStr() + mode->text, "layout").layout();
  } catch (const DiagnosticError& e) {
    failAt(
        mode->loc,
        "bad layout \"" + mode->text + "\" for " + typeText(shape) + ": " + e.diagnostic().message,
        "an XLA layout: {1,0} or {1,0:T(16,4)}");
  }
}

void Converter::applyLayouts(const Func& f, HloComputation& c) {
  bool any = false;
  for (size_t i = 0; i < f.body.args.size(); ++i) {
    HloInstruction* p = c.parameter(static_cast<int64_t>(i));
    if (std::optional<hlo::Layout> l = layoutOf(f.body.args[i].attrs, p->shape())) {
      p->mutableShape().setLayout(std::move(l));
      any = true;
    }
  }
  HloInstruction* root = c.root();
  for (size_t i = 0; i < f.result_attrs.size(); ++i) {
    Shape* shape = &root->mutableShape();
    if (shape->isTuple()) {
      if (i >= shape->tupleShapes().size()) break;
      shape = &shape->tupleShapes()[i];
    }
    if (std::optional<hlo::Layout> l = layoutOf(f.result_attrs[i], *shape)) {
      shape->setLayout(std::move(l));
      any = true;
    }
  }
  if (!any) return;
  hlo::ProgramShape layout;
  for (HloInstruction* p : c.parameters())
    layout.parameters.push_back(p->shape());
  layout.result = root->shape();
  out_->setEntryLayout(std::move(layout));
}

std::unique_ptr<hlo::HloModule> Converter::run() {
  std::string name = isHloName(m_.name) ? m_.name : "module";
  out_ = std::make_unique<hlo::HloModule>(name);
  out_->setSourceFile(file_.name());
  const Func* entry = nullptr;
  const Func* only_public = nullptr;
  int publics = 0;
  for (const Func& f : m_.funcs) {
    if (!funcs_.emplace(f.name, &f).second)
      failAt(f.loc, "function @" + f.name + " is defined twice");
    if (f.name == "main" && f.visibility != "private") entry = &f;
    if (f.visibility != "private") {
      ++publics;
      only_public = &f;
    }
  }
  if (!entry && publics == 1) entry = only_public;
  if (!entry && m_.funcs.size() == 1) entry = &m_.funcs[0];
  if (!entry) failAt(m_.loc, "the module has no entry function", "name the entry function @main");
  HloComputation* e = function(entry->name, entry->loc);
  out_->setEntry(e);
  applyLayouts(*entry, *e);
  return std::move(out_);
}

}  // namespace

std::unique_ptr<hlo::HloModule> convertModule(const SourceFile& file, const Module& module) {
  Converter c(file, module);
  return c.run();
}

}  // namespace tacit::stablehlo
