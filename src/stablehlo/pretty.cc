// The pretty (custom assembly) form of each op of the subset, into the generic attribute names
// (syntax.h): `stablehlo.transpose %a, dims = [1, 0]` sets `permutation`, and so on. An op name
// without a pretty form here must be written generically; the conversion names it if it is outside
// the subset.
#include <set>

#include "stablehlo/ops.h"
#include "stablehlo/parser_impl.h"

namespace tacit::stablehlo {
namespace {

Attr ints(std::vector<int64_t> values, SourceLoc loc) {
  Attr a;
  a.kind = Attr::Kind::kIntArray;
  a.ints = std::move(values);
  a.loc = loc;
  return a;
}

Attr integer(int64_t v, SourceLoc loc) {
  Attr a;
  a.kind = Attr::Kind::kInt;
  a.i = v;
  a.loc = loc;
  return a;
}

Attr word(std::string text, SourceLoc loc) {
  Attr a;
  a.kind = Attr::Kind::kEnum;
  a.text = std::move(text);
  a.loc = loc;
  return a;
}

// Ops printed as `op %a, %b : T` when every operand and the result have type T, and as
// `op %a, %b : (T1, T2) -> T3` otherwise.
const std::set<std::string, std::less<>>& sameTypeOps() {
  static const std::set<std::string, std::less<>> ops = {"abs",
                                                         "add",
                                                         "and",
                                                         "atan2",
                                                         "cbrt",
                                                         "ceil",
                                                         "clamp",
                                                         "complex",
                                                         "convert",
                                                         "bitcast_convert",
                                                         "cosine",
                                                         "count_leading_zeros",
                                                         "divide",
                                                         "exponential",
                                                         "exponential_minus_one",
                                                         "floor",
                                                         "imag",
                                                         "is_finite",
                                                         "log",
                                                         "log_plus_one",
                                                         "logistic",
                                                         "maximum",
                                                         "minimum",
                                                         "multiply",
                                                         "negate",
                                                         "not",
                                                         "or",
                                                         "popcnt",
                                                         "power",
                                                         "real",
                                                         "remainder",
                                                         "reshape",
                                                         "round_nearest_afz",
                                                         "round_nearest_even",
                                                         "rsqrt",
                                                         "shift_left",
                                                         "shift_right_arithmetic",
                                                         "shift_right_logical",
                                                         "sign",
                                                         "sine",
                                                         "sqrt",
                                                         "subtract",
                                                         "tan",
                                                         "tanh",
                                                         "xor"};
  return ops;
}

}  // namespace

void Parser::parsePrettyOp(Op& op) {
  const std::string& n = op.name;
  const SourceFile& file = lex_.file();
  // `: T` (every operand and the result have type T) or `: (T...) -> T`.
  auto sameOrFunctionType = [&] {
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the type of '" + n + "'");
    if (lex_.peek().is(Tok::kLParen)) {
      parseFunctionType(op.operand_types, op.result_types);
    } else {
      Type t = parseType();
      op.operand_types.assign(op.operands.size(), t);
      op.result_types.assign(std::max<int64_t>(op.result_count, 1), t);
    }
  };
  auto functionType = [&] {
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the function type of '" + n + "'");
    parseFunctionType(op.operand_types, op.result_types);
  };
  // `, keyword = ` before an attribute of the pretty form.
  auto keyword = [&](std::string_view kw) {
    expect(Tok::kComma, "',' and '" + std::string(kw) + " = ...'");
    expectIdent(kw, "in '" + n + "'");
    expect(Tok::kEqual, "'=' after '" + std::string(kw) + "'");
    return here();
  };
  auto done = [&] { checkCounts(file, op); };
  // `@symbol(%a, ...) : (T, ...) -> T`: call's callee and custom_call's target, kept as the
  // attribute `name` of `kind`.
  auto symbolAndOperands = [&](const char* name, Attr::Kind kind, std::string_view what) {
    Token symbol = expect(Tok::kSymbol, what);
    Attr a;
    a.kind = kind;
    a.text = symbol.text;
    a.loc = locOf(symbol.begin);
    op.attrs.set(name, a);
    expect(Tok::kLParen, "'(' and the operands");
    op.operands = parseValueRefList();
    expect(Tok::kRParen, "',' or ')' after the operands");
    functionType();
    done();
  };

  if (n == "func.return" || n == "return" || n == "stablehlo.return") {
    op.operands = parseValueRefList();
    if (!op.operands.empty()) {
      expect(Tok::kColon, "':' and the types of the returned values");
      op.operand_types = parseTypeList();
    }
    return done();
  }
  if (n == "call" || n == "func.call")
    return symbolAndOperands("callee", Attr::Kind::kSymbol, "the callee (@name)");
  if (!findOp(n)) {
    fail(file.name(), op.loc,
         "'" + n + "' is not supported; supported ops are " + supportedOpNames(),
         "tacit reads the StableHLO subset JAX's exports use (docs/stablehlo.md)");
  }
  if (n.rfind("chlo.", 0) == 0) {
    // CHLO's unary ops: `chlo.erf %x : T -> T` (or the functional `: (T) -> T`).
    op.operands = parseValueRefList();
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the type of '" + n + "'");
    if (lex_.peek().is(Tok::kLParen)) {
      parseFunctionType(op.operand_types, op.result_types);
    } else {
      op.operand_types = parseTypeList();
      expect(Tok::kArrow, "'->' and the result type");
      op.result_types = {parseType()};
    }
    return done();
  }
  const std::string_view short_name = std::string_view(n).substr(n.find('.') + 1);
  if (lex_.peek().is(Tok::kLParen) && short_name != "reduce" && short_name != "convolution" &&
      short_name != "while") {
    // The generic tail after a bare op name (`stablehlo.constant() <{value = ...}> : ...`).
    parseGenericOp(op);
    return;
  }

  if (short_name == "constant") {
    parseOptionalAttrDict(op.attrs);
    Attr value = parseAttr();
    if (value.kind != Attr::Kind::kDense)
      fail(file.name(), value.loc, "expected a dense<...> literal after 'stablehlo.constant'");
    op.result_types = {value.type};
    op.attrs.set("value", std::move(value));
    return done();
  }
  if (short_name == "iota") {
    expectIdent("dim", "after 'stablehlo.iota'");
    expect(Tok::kEqual, "'=' after 'dim'");
    SourceLoc loc = here();
    op.attrs.set("iota_dimension", integer(parseInt("the iota dimension"), loc));
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the result type");
    op.result_types = {parseType()};
    return done();
  }
  if (short_name == "compare") {
    Token dir = expect(Tok::kIdent, "a comparison direction (EQ, NE, GE, GT, LE, LT)");
    op.attrs.set("comparison_direction", word(dir.text, locOf(dir.begin)));
    expect(Tok::kComma, "',' after the comparison direction");
    op.operands.push_back(parseValueRef());
    expect(Tok::kComma, "',' and the second operand");
    op.operands.push_back(parseValueRef());
    if (accept(Tok::kComma)) {
      Token type = expect(Tok::kIdent, "a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
      op.attrs.set("compare_type", word(type.text, locOf(type.begin)));
    }
    functionType();
    return done();
  }
  if (short_name == "select") {
    op.operands = parseValueRefList();
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the types of 'stablehlo.select'");
    if (lex_.peek().is(Tok::kLParen)) {
      parseFunctionType(op.operand_types, op.result_types);
    } else {
      Type pred = parseType();
      expect(Tok::kComma, "',' and the type of the values after the predicate's type");
      Type value = parseType();
      op.operand_types = {pred, value, value};
      op.result_types = {value};
    }
    return done();
  }
  if (short_name == "tuple") {
    op.operands = parseValueRefList();
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the tuple type");
    Type t = parseType();
    if (t.kind == Type::Kind::kTuple && t.shape.tupleShapes().size() == op.operands.size()) {
      for (const hlo::Shape& s : t.shape.tupleShapes()) {
        Type e;
        e.kind = s.isTuple()   ? Type::Kind::kTuple
                 : s.isToken() ? Type::Kind::kToken
                               : Type::Kind::kTensor;
        e.shape = s;
        e.loc = t.loc;
        e.text = s.shortStr();
        op.operand_types.push_back(e);
      }
    } else {
      fail(file.name(), t.loc, "the type of 'stablehlo.tuple' is the tuple of its operands' types");
    }
    op.result_types = {t};
    return done();
  }
  if (short_name == "get_tuple_element") {
    op.operands = {parseValueRef()};
    expect(Tok::kLSquare, "'[' and the element index");
    SourceLoc loc = here();
    op.attrs.set("index", integer(parseInt("the element index"), loc));
    expect(Tok::kRSquare, "']' after the index");
    functionType();
    return done();
  }
  if (short_name == "custom_call")
    return symbolAndOperands("call_target_name", Attr::Kind::kString, "the call target (@name)");
  if (short_name == "reduce") {
    // (%x init: %c), (%y init: %d) applies stablehlo.add across dimensions = [1] : ...
    // or the same with `across dimensions = [...] : type` then `reducer(%a: T, %b: T) {...}`.
    std::vector<ValueRef> inputs, inits;
    do {
      expect(Tok::kLParen, "'(' and '%input init: %init'");
      inputs.push_back(parseValueRef());
      expectIdent("init", "after the reduced value");
      expect(Tok::kColon, "':' after 'init'");
      inits.push_back(parseValueRef());
      expect(Tok::kRParen, "')' after the initial value");
    } while (accept(Tok::kComma));
    op.operands = inputs;
    op.operands.insert(op.operands.end(), inits.begin(), inits.end());
    if (acceptIdent("applies")) {
      Token body = expect(Tok::kIdent, "the reducer op (stablehlo.add, ...)");
      op.attrs.set("applies", word(body.text, locOf(body.begin)));
    }
    expectIdent("across", "in 'stablehlo.reduce'");
    expectIdent("dimensions", "after 'across'");
    expect(Tok::kEqual, "'=' after 'dimensions'");
    SourceLoc loc = here();
    op.attrs.set("dimensions", ints(parseIntList(), loc));
    functionType();
    if (!op.attrs.find("applies")) {
      expectIdent("reducer", "and the reducer's region");
      Region region;
      std::vector<BlockArg> lhs, rhs;
      while (accept(Tok::kLParen)) {
        for (auto* side : {&lhs, &rhs}) {
          BlockArg arg;
          Token name = expect(Tok::kValue, "a reducer argument (%name: type)");
          arg.name = name.text;
          arg.loc = locOf(name.begin);
          expect(Tok::kColon, "':' and the argument's type");
          arg.type = parseType();
          arg.loc_name = parseOptionalLoc();
          side->push_back(std::move(arg));
          if (side == &lhs) expect(Tok::kComma, "',' and the second argument of the pair");
        }
        expect(Tok::kRParen, "')' after the pair of reducer arguments");
        countValues(2, op.loc);
      }
      parseRegionBody(region, /*allow_label=*/false);
      region.args = std::move(lhs);  // block order: every lhs, then every rhs
      region.args.insert(region.args.end(), rhs.begin(), rhs.end());
      op.regions.push_back(std::move(region));
    }
    return done();
  }
  if (short_name == "convolution") {
    // (%lhs, %rhs) dim_numbers = [b, 0, 1, f]x[0, 1, i, o]->[b, 0, 1, f], window = {stride = [..],
    // pad = [[lo, hi], ..], lhs_dilate = [..], rhs_dilate = [..], reverse = [..]} {attrs} : ...
    expect(Tok::kLParen, "'(' and the operands");
    op.operands = parseValueRefList();
    expect(Tok::kRParen, "')' after the operands");
    expectIdent("dim_numbers", "after the operands of 'stablehlo.convolution'");
    expect(Tok::kEqual, "'=' after 'dim_numbers'");
    op.attrs.set("dimension_numbers", parseConvDimensions());
    if (accept(Tok::kComma)) {
      expectIdent("window", "after the dimension numbers");
      expect(Tok::kEqual, "'=' after 'window'");
      NamedAttrs window;
      parseAttrDict(window);
      static const std::pair<std::string_view, const char*> names[] = {
          {"stride", "window_strides"},
          {"pad", "padding"},
          {"lhs_dilate", "lhs_dilation"},
          {"rhs_dilate", "rhs_dilation"},
          {"reverse", "window_reversal"}};
      for (AttrEntry& e : window.entries) {
        const char* generic = nullptr;
        for (const auto& [pretty_name, generic_name] : names)
          if (e.name == pretty_name) generic = generic_name;
        if (!generic) {
          fail(file.name(), e.value.loc, "unknown window field '" + e.name + "'",
               "expected stride, pad, lhs_dilate, rhs_dilate or reverse");
        }
        op.attrs.set(generic, std::move(e.value));
      }
    }
    functionType();
    return done();
  }
  if (short_name == "while") {
    // (%iterArg = %x, ...) : T, ... cond { ... } do { ... }: both regions take the iterArgs.
    Region args;
    expect(Tok::kLParen, "'(' and the loop's '%iterArg = %init' pairs");
    if (!accept(Tok::kRParen)) {
      do {
        BlockArg arg;
        Token name = expect(Tok::kValue, "a loop argument (%iterArg)");
        arg.name = name.text;
        arg.loc = locOf(name.begin);
        expect(Tok::kEqual, "'=' and the loop argument's initial value");
        op.operands.push_back(parseValueRef());
        args.args.push_back(std::move(arg));
        countValues(1, op.loc);
      } while (accept(Tok::kComma));
      expect(Tok::kRParen, "',' or ')' after the loop arguments");
    }
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the types of the loop arguments");
    op.operand_types = parseTypeList();
    if (op.operand_types.size() != args.args.size())
      fail(file.name(), op.loc,
           "'stablehlo.while' lists " + std::to_string(op.operand_types.size()) + " types for " +
               std::to_string(args.args.size()) + " loop arguments");
    for (size_t i = 0; i < args.args.size(); ++i)
      args.args[i].type = op.operand_types[i];
    op.result_types = op.operand_types;
    parseOptionalAttrDict(op.attrs);
    for (const char* part : {"cond", "do"}) {
      expectIdent(part, std::string("and the loop's ") + (part[0] == 'c' ? "condition" : "body"));
      Region region;
      parseRegionBody(region, /*allow_label=*/false);
      region.args = args.args;
      op.regions.push_back(std::move(region));
    }
    return done();
  }
  if (short_name == "reduce_precision") {
    op.operands = {parseValueRef()};
    SourceLoc loc = keyword("format");
    Token f = expect(Tok::kIdent, "a format eXmY (e8m10)");
    size_t m = f.text.find('m');
    if (f.text.size() < 4 || f.text[0] != 'e' || m == std::string::npos || m + 1 >= f.text.size() ||
        f.text.size() > 12)
      failAt(f, "expected a format eXmY (e8m10), got '" + f.text + "'");
    try {
      op.attrs.set("exponent_bits", integer(std::stoll(f.text.substr(1, m - 1)), loc));
      op.attrs.set("mantissa_bits", integer(std::stoll(f.text.substr(m + 1)), loc));
    } catch (const std::exception&) {
      failAt(f, "expected a format eXmY (e8m10), got '" + f.text + "'");
    }
    sameOrFunctionType();
    return done();
  }

  op.operands = parseValueRefList();
  if (short_name == "optimization_barrier") {
    // %a, %b : T1, T2 (each result has its operand's type).
    parseOptionalAttrDict(op.attrs);
    expect(Tok::kColon, "':' and the types of the values");
    op.operand_types = parseTypeList();
    op.result_types = op.operand_types;
    return done();
  }
  if (short_name == "broadcast_in_dim" || short_name == "transpose" || short_name == "reverse") {
    SourceLoc loc = keyword("dims");
    const char* attr = short_name == "broadcast_in_dim" ? "broadcast_dimensions"
                       : short_name == "transpose"      ? "permutation"
                                                        : "dimensions";
    op.attrs.set(attr, ints(parseIntList(), loc));
    if (short_name == "reverse") {
      sameOrFunctionType();
    } else {
      functionType();
    }
  } else if (short_name == "concatenate") {
    SourceLoc loc = keyword("dim");
    op.attrs.set("dimension", integer(parseInt("the concatenated dimension"), loc));
    functionType();
  } else if (short_name == "dynamic_slice") {
    SourceLoc loc = keyword("sizes");
    op.attrs.set("slice_sizes", ints(parseIntList(), loc));
    functionType();
  } else if (short_name == "pad") {
    SourceLoc low = keyword("low");
    op.attrs.set("edge_padding_low", ints(parseIntList(), low));
    SourceLoc high = keyword("high");
    op.attrs.set("edge_padding_high", ints(parseIntList(), high));
    SourceLoc interior = keyword("interior");
    op.attrs.set("interior_padding", ints(parseIntList(), interior));
    functionType();
  } else if (short_name == "slice") {
    // %a [start:limit(:stride)?, ...]
    SourceLoc loc = here();
    expect(Tok::kLSquare, "'[' and the slice bounds start:limit:stride");
    std::vector<int64_t> starts, limits, strides;
    if (!accept(Tok::kRSquare)) {
      do {
        starts.push_back(parseInt("the slice start"));
        expect(Tok::kColon, "':' between start and limit");
        limits.push_back(parseInt("the slice limit"));
        strides.push_back(accept(Tok::kColon) ? parseInt("the slice stride") : 1);
      } while (accept(Tok::kComma));
      expect(Tok::kRSquare, "',' or ']' after the slice bounds");
    }
    op.attrs.set("start_indices", ints(starts, loc));
    op.attrs.set("limit_indices", ints(limits, loc));
    op.attrs.set("strides", ints(strides, loc));
    functionType();
  } else if (short_name == "dot_general") {
    Attr dims;
    dims.kind = Attr::Kind::kDict;
    dims.loc = here();
    while (accept(Tok::kComma)) {
      Token kw = expect(Tok::kIdent, "batching_dims, contracting_dims, precision or algorithm");
      expect(Tok::kEqual, "'=' after '" + kw.text + "'");
      SourceLoc loc = here();
      if (kw.text == "batching_dims" || kw.text == "contracting_dims") {
        std::string which = kw.text == "batching_dims" ? "batching" : "contracting";
        dims.dict.push_back({"lhs_" + which + "_dimensions", ints(parseIntList(), loc)});
        expectIdent("x", "between the lhs and rhs dimensions");
        SourceLoc rloc = here();
        dims.dict.push_back({"rhs_" + which + "_dimensions", ints(parseIntList(), rloc)});
      } else if (kw.text == "precision") {
        op.attrs.set("precision_config", parseAttr());
      } else if (kw.text == "algorithm") {
        op.attrs.set("algorithm", parseAttr());
      } else {
        failAt(kw, "unknown dot_general field '" + kw.text + "'",
               "expected batching_dims, contracting_dims, precision or algorithm");
      }
    }
    op.attrs.set("dot_dimension_numbers", std::move(dims));
    functionType();
  } else if (short_name == "dot") {
    if (accept(Tok::kComma)) {
      expectIdent("precision", "after the operands of 'stablehlo.dot'");
      expect(Tok::kEqual, "'=' after 'precision'");
      op.attrs.set("precision_config", parseAttr());
    }
    functionType();
  } else if (short_name == "dynamic_update_slice") {
    functionType();
  } else if (sameTypeOps().count(short_name)) {
    sameOrFunctionType();
  } else {
    fail(file.name(), op.loc,
         "'" + n + "' is not supported; supported ops are " + supportedOpNames(),
         "tacit reads the StableHLO subset JAX's exports use (docs/stablehlo.md)");
  }
  done();
}

}  // namespace tacit::stablehlo
