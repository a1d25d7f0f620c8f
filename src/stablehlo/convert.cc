// The conversion's frame: functions and their calls, blocks and their values, names, entry
// layouts. Each op's conversion is in convert_ops.cc.
#include "stablehlo/convert.h"

#include <algorithm>
#include <set>
#include <unordered_map>

#include "hlo/lexer.h"
#include "hlo/parser.h"
#include "hlo/printer.h"
#include "stablehlo/convert_impl.h"
#include "stablehlo/dense.h"
#include "stablehlo/parser.h"
#include "stablehlo/types.h"

namespace tacit::stablehlo {
namespace {

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

}  // namespace

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

std::vector<int64_t> Converter::intsAttr(const Op& op, std::string_view name) const {
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

HloInstruction* Converter::lookup(Scope& s, const ValueRef& ref) const {
  std::string key = ref.name;
  if (ref.result >= 0) key += "#" + std::to_string(ref.result);
  if (ref.result == 0 && !s.values.count(key) && !s.elements.count(key)) key = ref.name;
  if (auto it = s.values.find(key); it != s.values.end()) return it->second;
  if (auto it = s.elements.find(key); it != s.elements.end()) {
    // First use of a result of an op with several: take it out of the tuple here.
    HloInstruction* element = s.b.getTupleElement(it->second.first, it->second.second);
    s.values.emplace(key, element);
    return element;
  }
  failAt(ref.loc, "use of undefined value %" + key,
         "values are defined before their uses, in the same function or region");
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
  std::optional<Built> built;
  try {
    built = build(s, o, *info, operands);
  } catch (DiagnosticError& e) {
    if (e.diagnostic().loc.known()) throw;
    std::string message = e.diagnostic().message;
    if (message.rfind("builder: ", 0) == 0) message = message.substr(9);
    failAt(o.loc, "'" + o.name + "': " + message, e.diagnostic().hint);
  }
  // The results' shapes, whether instructions or a tuple's elements.
  std::vector<const Shape*> shapes;
  if (built->tuple) {
    for (const Shape& e : built->tuple->shape().tupleShapes())
      shapes.push_back(&e);
  } else {
    for (const HloInstruction* v : built->values)
      shapes.push_back(&v->shape());
  }
  if (o.result_count != 0 && static_cast<int64_t>(shapes.size()) != o.result_count) {
    failAt(o.loc, "'" + o.name + "' has " + std::to_string(shapes.size()) + " results, not " +
                      std::to_string(o.result_count));
  }
  for (size_t i = 0; i < shapes.size() && i < o.result_types.size(); ++i) {
    if (!shapes[i]->compatible(o.result_types[i].shape)) {
      failAt(o.result_types[i].loc, "'" + o.name + "' yields " + typeText(*shapes[i]) +
                                        ", not the declared " + o.result_types[i].text);
    }
  }
  for (size_t i = 0; i < shapes.size() && i < o.results.size(); ++i) {
    const std::string& name = o.results[i];
    const bool fresh =
        built->tuple
            ? s.elements.emplace(name, std::pair{built->tuple, static_cast<int64_t>(i)}).second &&
                  !s.values.count(name)
            : s.values.emplace(name, built->values[i]).second && !s.elements.count(name);
    if (!fresh) failAt(o.loc, "value %" + name + " is defined twice");
    if (!built->tuple && o.results.size() == 1 && isHloName(name))
      s.desired[built->values[i]] = name;
  }
  // %r:2 names the tuple r.
  if (built->tuple && !o.results.empty()) {
    const std::string base = o.results[0].substr(0, o.results[0].find('#'));
    if (isHloName(base)) s.desired[built->tuple] = base;
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
  // Returning every result of one op, in order, returns its tuple (no elements taken apart).
  HloInstruction* whole = nullptr;
  if (ret.operands.size() > 1) {
    for (size_t i = 0; i < ret.operands.size(); ++i) {
      const ValueRef& ref = ret.operands[i];
      auto it = s.elements.find(ref.name + "#" + std::to_string(ref.result));
      if (ref.result < 0 || it == s.elements.end() ||
          it->second.second != static_cast<int64_t>(i) || (whole && it->second.first != whole) ||
          s.values.count(it->first)) {
        whole = nullptr;
        break;
      }
      whole = it->second.first;
    }
    if (whole && whole->shape().tupleShapes().size() != ret.operands.size()) whole = nullptr;
  }
  // The returned values' shapes, checked against the declared result types.
  std::vector<HloInstruction*> values;
  std::vector<const Shape*> shapes;
  if (whole) {
    for (const Shape& e : whole->shape().tupleShapes())
      shapes.push_back(&e);
  } else {
    for (const ValueRef& ref : ret.operands) {
      values.push_back(lookup(s, ref));
      shapes.push_back(&values.back()->shape());
    }
  }
  if (shapes.empty())
    failAt(ret.loc, "a function or region must return a value",
           "tacit's HLO computations have a result");
  if (result_types && result_types->size() != shapes.size()) {
    failAt(ret.loc, "the function declares " + std::to_string(result_types->size()) +
                        " results but returns " + std::to_string(shapes.size()));
  }
  for (size_t i = 0; i < shapes.size(); ++i) {
    const Type* declared = result_types
                               ? &(*result_types)[i]
                               : (i < ret.operand_types.size() ? &ret.operand_types[i] : nullptr);
    if (declared && !shapes[i]->compatible(declared->shape))
      failAt(ret.operands[i].loc, "returned %" + ret.operands[i].name + " has type " +
                                      typeText(*shapes[i]) + ", not " + declared->text);
  }
  HloInstruction* root = whole ? whole : values.size() == 1 ? values[0] : s.b.tuple(values);
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

std::unique_ptr<hlo::HloModule> convertModule(const SourceFile& file, const Module& module) {
  Converter c(file, module);
  return c.run();
}

}  // namespace tacit::stablehlo
