// The parser's types and attributes: `tensor<4x8xf32>`, `tuple<...>`, function types, and every
// attribute form JAX's modules use (numbers, strings, lists, dictionaries, `array<i64: ...>`,
// `dense<...>`, `#stablehlo.dot<...>`, `#stablehlo<... GT>` enums); other dialects' attributes are
// kept as opaque text. Part of the Parser (parser_impl.h).
#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "hlo/parser.h"
#include "stablehlo/parser_impl.h"
#include "stablehlo/types.h"

namespace tacit::stablehlo {
// ---- types ----

namespace {

// The body of `tensor<...>`: `4x8xf32`, `f32`, `?x4xf32`, `4xf32, #encoding`.
Type tensorType(const Lexer& lex, std::string_view body, size_t offset, SourceLoc loc) {
  Type t;
  t.kind = Type::Kind::kTensor;
  t.loc = loc;
  t.text = "tensor<" + std::string(body) + ">";
  size_t comma = body.find(',');
  if (comma != std::string_view::npos) {
    lex.fail(offset + comma, "tensor encodings are not supported ('" + t.text + "')",
             "tacit's HLO has static shapes without encodings; bounded dynamic dimensions "
             "(#stablehlo.bounds) and sparse tensors are left out");
  }
  std::vector<int64_t> dims;
  size_t p = 0;
  while (p < body.size() &&
         (std::isdigit(static_cast<unsigned char>(body[p])) || body[p] == '?' || body[p] == '*')) {
    size_t x = body.find('x', p);
    if (x == std::string_view::npos) lex.fail(offset + p, "expected 'x' after a dimension size");
    std::string_view dim = body.substr(p, x - p);
    if (dim == "?" || dim == "*") {
      lex.fail(offset + p,
               dim == "?" ? "dynamic dimensions are not supported"
                          : "unranked tensors are not supported",
               "tacit compiles static shapes: give every dimension a size");
    }
    if (dim.size() > 15 ||
        !std::all_of(dim.begin(), dim.end(), [](char c) { return c >= '0' && c <= '9'; }))
      lex.fail(offset + p, "bad dimension size '" + std::string(dim) + "'");
    int64_t d = std::stoll(std::string(dim));
    if (d > hlo::kMaxDimensionSize)
      lex.fail(offset + p, "dimension size " + std::string(dim) + " is above tacit's limit 2^40");
    dims.push_back(d);
    if (static_cast<int64_t>(dims.size()) > hlo::kMaxRank)
      lex.fail(offset + p, "rank above tacit's limit " + std::to_string(hlo::kMaxRank));
    p = x + 1;
  }
  std::string_view element = body.substr(p);
  while (!element.empty() && element.back() == ' ')
    element.remove_suffix(1);
  std::optional<hlo::PrimitiveType> et = elementTypeOf(element);
  if (!et) {
    lex.fail(offset + p, "element type '" + std::string(element) + "' is not supported",
             "the element types are i1, i8..i64, ui8..ui64, f16, bf16, f32, f64, the f8 types and "
             "complex<f32>/complex<f64>");
  }
  double elements = 1;
  for (int64_t d : dims)
    elements *= static_cast<double>(d);
  if (elements > static_cast<double>(hlo::kMaxShapeElements))
    lex.fail(offset, "the tensor has more than 2^50 elements");
  t.shape = hlo::Shape(*et, std::move(dims));
  return t;
}

}  // namespace

Type Parser::parseType() {
  DepthGuard guard(*this, lex_.skipBlanks());
  Token t = lex_.peek();
  SourceLoc loc = locOf(t.begin);
  if (t.isIdent("tensor")) {
    lex_.next();
    expect(Tok::kLess, "'<' after 'tensor'");
    size_t offset = lex_.offset();
    std::string_view body = lex_.rawAngle();
    return tensorType(lex_, body, offset, loc);
  }
  if (t.isIdent("tuple")) {
    lex_.next();
    expect(Tok::kLess, "'<' after 'tuple'");
    Type out;
    out.kind = Type::Kind::kTuple;
    out.loc = loc;
    std::vector<hlo::Shape> elements;
    if (!accept(Tok::kGreater)) {
      do {
        Type e = parseType();
        if (e.kind == Type::Kind::kOther)
          fail(lex_.file().name(), e.loc,
               "a tuple holds tensors, tuples and tokens, not '" + e.text + "'");
        elements.push_back(e.shape);
      } while (accept(Tok::kComma));
      expect(Tok::kGreater, "',' or '>' in a tuple type");
    }
    out.shape = hlo::Shape::tuple(std::move(elements));
    out.text = out.shape.shortStr();
    return out;
  }
  if (t.is(Tok::kBang)) {
    lex_.next();
    Type out;
    out.loc = loc;
    out.text = "!" + t.text;
    if (t.text == "stablehlo.token") {
      out.kind = Type::Kind::kToken;
      out.shape = hlo::Shape::token();
    } else if (lex_.peek().is(Tok::kLess) && lex_.peek().begin == t.end) {
      lex_.next();
      out.text += "<" + std::string(lex_.rawAngle()) + ">";
    }
    return out;
  }
  if (t.is(Tok::kIdent)) {
    // A builtin scalar type (i64 after an integer attribute, index, none, complex<f32>).
    lex_.next();
    Type out;
    out.loc = loc;
    out.text = t.text;
    if (lex_.peek().is(Tok::kLess) && lex_.peek().begin == t.end) {
      lex_.next();
      out.text += "<" + std::string(lex_.rawAngle()) + ">";
    }
    return out;
  }
  failExpected("a type", "tensor types are written tensor<4x8xf32>, scalars tensor<f32>");
}

std::vector<Type> Parser::parseTypeList() {
  std::vector<Type> out;
  do {
    out.push_back(parseType());
  } while (accept(Tok::kComma));
  return out;
}

void Parser::parseFunctionType(std::vector<Type>& inputs, std::vector<Type>& results) {
  DepthGuard guard(*this, lex_.skipBlanks());
  expect(Tok::kLParen, "'(' starting a function type (operand types) -> (result types)");
  if (!accept(Tok::kRParen)) {
    inputs = parseTypeList();
    expect(Tok::kRParen, "',' or ')' in a function type");
  }
  expect(Tok::kArrow, "'->' in a function type");
  if (accept(Tok::kLParen)) {
    if (!accept(Tok::kRParen)) {
      results = parseTypeList();
      expect(Tok::kRParen, "',' or ')' after the result types");
    }
  } else {
    results.push_back(parseType());
  }
}

// ---- attributes ----

namespace {

bool isTypeWord(std::string_view w) {
  return w == "tensor" || w == "tuple" || w == "index" || w == "none" || w == "complex" ||
         elementTypeOf(w).has_value() || w == "i1";
}

}  // namespace

void Parser::parseAttrDict(NamedAttrs& into) {
  DepthGuard guard(*this, lex_.skipBlanks());
  expect(Tok::kLBrace, "'{' starting an attribute dictionary");
  if (accept(Tok::kRBrace)) return;
  do {
    Token key = lex_.next();
    if (!key.is(Tok::kIdent) && !key.is(Tok::kString)) {
      lex_.seek(key.begin);
      failExpected("an attribute name");
    }
    if (accept(Tok::kEqual)) {
      Attr value = parseAttr();
      into.set(key.text, std::move(value));
    } else {
      Attr unit;
      unit.loc = locOf(key.begin);
      into.set(key.text, unit);
    }
  } while (accept(Tok::kComma));
  expect(Tok::kRBrace, "',' or '}' in an attribute dictionary");
}

Attr Parser::parseAttr() {
  DepthGuard guard(*this, lex_.skipBlanks());
  Token t = lex_.peek();
  Attr a;
  a.loc = locOf(t.begin);
  auto optionalType = [this] {
    if (accept(Tok::kColon)) parseType();
  };
  switch (t.kind) {
    case Tok::kInt:
      a.kind = Attr::Kind::kInt;
      a.i = parseInt("an integer");
      optionalType();
      return a;
    case Tok::kFloat:
      lex_.next();
      a.kind = Attr::Kind::kFloat;
      a.f = std::strtod(t.text.c_str(), nullptr);
      optionalType();
      return a;
    case Tok::kString:
      lex_.next();
      a.kind = Attr::Kind::kString;
      a.text = t.text;
      optionalType();
      return a;
    case Tok::kSymbol:
      lex_.next();
      a.kind = Attr::Kind::kSymbol;
      a.text = t.text;
      return a;
    case Tok::kLSquare: {
      lex_.next();
      a.kind = Attr::Kind::kList;
      bool all_ints = true;
      if (!accept(Tok::kRSquare)) {
        do {
          a.list.push_back(parseAttr());
          all_ints = all_ints && a.list.back().kind == Attr::Kind::kInt;
        } while (accept(Tok::kComma));
        expect(Tok::kRSquare, "',' or ']' in a list");
      }
      if (all_ints) {
        a.kind = Attr::Kind::kIntArray;
        for (const Attr& e : a.list)
          a.ints.push_back(e.i);
      }
      return a;
    }
    case Tok::kLBrace: {
      NamedAttrs dict;
      parseAttrDict(dict);
      a.kind = Attr::Kind::kDict;
      a.dict = std::move(dict.entries);
      return a;
    }
    case Tok::kLParen: {
      a.kind = Attr::Kind::kType;  // a function type: list = [inputs, results] of type attributes
      std::vector<Type> inputs, results;
      parseFunctionType(inputs, results);
      for (auto* types : {&inputs, &results}) {
        Attr group;
        group.kind = Attr::Kind::kList;
        for (Type& ty : *types) {
          Attr e;
          e.kind = Attr::Kind::kType;
          e.type = std::move(ty);
          group.list.push_back(std::move(e));
        }
        a.list.push_back(std::move(group));
      }
      return a;
    }
    case Tok::kHash: {
      lex_.next();
      a.kind = Attr::Kind::kOpaque;
      a.text = "#" + t.text;
      bool angle = lex_.peek().is(Tok::kLess) && lex_.peek().begin == t.end;
      if (t.text == "stablehlo.dot" && angle) {
        lex_.next();
        a.kind = Attr::Kind::kDict;
        if (!accept(Tok::kGreater)) {
          do {
            Token key = expect(Tok::kIdent, "a dimension-number field name");
            expect(Tok::kEqual, "'=' after '" + key.text + "'");
            Attr value;
            value.kind = Attr::Kind::kIntArray;
            value.loc = locOf(lex_.skipBlanks());
            value.ints = parseIntList();
            a.dict.push_back({key.text, std::move(value)});
          } while (accept(Tok::kComma));
          expect(Tok::kGreater, "',' or '>' in #stablehlo.dot<...>");
        }
        return a;
      }
      if (t.text == "stablehlo.conv" && angle) {
        lex_.next();
        if (lex_.peek().isIdent("raw")) {
          // #stablehlo.conv<raw input_batch_dimension = 0, input_spatial_dimensions = [1, 2], ...>
          lex_.next();
          a.kind = Attr::Kind::kDict;
          do {
            Token key = expect(Tok::kIdent, "a dimension-number field name");
            expect(Tok::kEqual, "'=' after '" + key.text + "'");
            Attr value;
            value.loc = locOf(lex_.skipBlanks());
            if (lex_.peek().is(Tok::kLSquare)) {
              value.kind = Attr::Kind::kIntArray;
              value.ints = parseIntList();
            } else {
              value.kind = Attr::Kind::kInt;
              value.i = parseInt("a dimension");
            }
            a.dict.push_back({key.text, std::move(value)});
          } while (accept(Tok::kComma));
        } else {
          a = parseConvDimensions();
        }
        expect(Tok::kGreater, "'>' closing #stablehlo.conv<...>");
        return a;
      }
      if (angle) {
        lex_.next();
        std::string_view body = lex_.rawAngle();
        a.text += "<" + std::string(body) + ">";
        if (t.text.rfind("stablehlo", 0) == 0) {
          // #stablehlo<comparison_direction GT>, #stablehlo<precision DEFAULT>: the enum's value
          // is the last word.
          size_t start = body.find_last_of(' ');
          a.kind = Attr::Kind::kEnum;
          a.text = std::string(start == std::string_view::npos ? body : body.substr(start + 1));
        }
      }
      return a;
    }
    case Tok::kBang:
      a.kind = Attr::Kind::kType;
      a.type = parseType();
      return a;
    case Tok::kIdent:
      break;
    default:
      failExpected("an attribute value");
  }
  // Identifiers: keywords of attribute syntax, types, enum words.
  if (t.text == "true" || t.text == "false") {
    lex_.next();
    a.kind = Attr::Kind::kBool;
    a.b = t.text == "true";
    return a;
  }
  if (t.text == "unit") {
    lex_.next();
    return a;
  }
  if (t.text == "loc") {
    a.kind = Attr::Kind::kOpaque;
    a.text = parseOptionalLoc();
    return a;
  }
  if (t.text == "dense") {
    lex_.next();
    expect(Tok::kLess, "'<' after 'dense'");
    a.kind = Attr::Kind::kDense;
    if (lex_.peek().is(Tok::kString)) {
      Token s = lex_.next();
      a.hex_bytes = true;
      a.elements.push_back(s.text);
      a.element_offsets.push_back(static_cast<int64_t>(s.begin));
    } else if (!lex_.peek().is(Tok::kGreater)) {
      // Nested lists: the length at each depth must agree (a rectangular array); `ints` records
      // them, empty for a splat.
      std::vector<int64_t> dims;
      std::vector<bool> seen;
      auto element = [&](auto&& self, size_t depth) -> void {
        DepthGuard inner(*this, lex_.skipBlanks());
        Token e = lex_.peek();
        if (e.is(Tok::kLSquare)) {
          lex_.next();
          int64_t count = 0;
          if (!lex_.peek().is(Tok::kRSquare)) {
            do {
              self(self, depth + 1);
              ++count;
            } while (accept(Tok::kComma));
          }
          Token close = expect(Tok::kRSquare, "',' or ']' in a dense literal");
          if (dims.size() <= depth) {
            dims.resize(depth + 1, -1);
            seen.resize(depth + 1, false);
          }
          if (!seen[depth]) {
            seen[depth] = true;
            dims[depth] = count;
          } else if (dims[depth] != count) {
            failAt(close,
                   "the lists of a dense literal differ in length (" + std::to_string(count) +
                       " here, " + std::to_string(dims[depth]) + " before)",
                   "dense<...> holds a rectangular array");
          }
          return;
        }
        if (e.is(Tok::kInt) || e.is(Tok::kFloat) || e.isIdent("true") || e.isIdent("false")) {
          lex_.next();
          if (static_cast<int64_t>(a.elements.size()) >= hlo::kMaxLiteralElements)
            failAt(e, "a dense literal with more than 2^27 elements");
          a.elements.push_back(e.text);
          a.element_offsets.push_back(static_cast<int64_t>(e.begin));
          return;
        }
        if (e.is(Tok::kLParen)) {
          failAt(e, "complex constants are not supported",
                 "tacit does not evaluate complex numbers");
        }
        failExpected("a dense literal element (a number, true or false, or '[')");
      };
      element(element, 0);
      a.ints = dims;
    }
    expect(Tok::kGreater, "'>' closing the dense literal");
    expect(Tok::kColon, "':' and the literal's tensor type after dense<...>");
    a.type = parseType();
    if (a.type.kind != Type::Kind::kTensor)
      fail(lex_.file().name(), a.type.loc,
           "a dense literal needs a tensor type, not '" + a.type.text + "'");
    return a;
  }
  if (t.text == "array") {
    lex_.next();
    expect(Tok::kLess, "'<' after 'array'");
    a.kind = Attr::Kind::kIntArray;
    Token et = expect(Tok::kIdent, "the element type of array<...>");
    if (et.text != "i64" && et.text != "i32" && et.text != "i1")
      failAt(et, "array<" + et.text + ": ...> is not supported", "use array<i64: ...>");
    if (accept(Tok::kColon)) {
      do {
        if (acceptIdent("true")) {
          a.ints.push_back(1);
        } else if (acceptIdent("false")) {
          a.ints.push_back(0);
        } else {
          a.ints.push_back(parseInt("an integer"));
        }
        if (static_cast<int64_t>(a.ints.size()) > hlo::kMaxLiteralElements)
          failExpected("a shorter array");
      } while (accept(Tok::kComma));
    }
    expect(Tok::kGreater, "',' or '>' in array<...>");
    return a;
  }
  if (isTypeWord(t.text)) {
    a.kind = Attr::Kind::kType;
    a.type = parseType();
    return a;
  }
  lex_.next();
  if (lex_.peek().is(Tok::kLess) && lex_.peek().begin == t.end) {
    // affine_map<...>, dense_resource<...>, sparse<...>: kept as opaque text.
    lex_.next();
    a.kind = Attr::Kind::kOpaque;
    a.text = t.text + "<" + std::string(lex_.rawAngle()) + ">";
    return a;
  }
  a.kind = Attr::Kind::kEnum;
  a.text = t.text;
  return a;
}

Attr Parser::parseConvDimensions() {
  Attr a;
  a.kind = Attr::Kind::kDict;
  a.loc = here();
  for (const char* part : {"lhs", "rhs", "out"}) {
    if (std::string_view(part) == "rhs")
      expectIdent("x", "between the input and kernel dimensions");
    if (std::string_view(part) == "out") expect(Tok::kArrow, "'->' before the output dimensions");
    Attr labels;
    labels.kind = Attr::Kind::kList;
    labels.loc = here();
    expect(Tok::kLSquare, "'[' and the dimension labels (b, f, i, o or a spatial number)");
    if (!lex_.peek().is(Tok::kRSquare)) {
      do {
        Token t = lex_.next();
        if (!t.is(Tok::kIdent) && !t.is(Tok::kInt)) {
          lex_.seek(t.begin);
          failExpected("a dimension label (b, f, i, o or a spatial number)");
        }
        Attr label;
        label.kind = Attr::Kind::kEnum;
        label.text = t.text;
        label.loc = locOf(t.begin);
        labels.list.push_back(std::move(label));
      } while (accept(Tok::kComma));
    }
    expect(Tok::kRSquare, "',' or ']' after the dimension labels");
    a.dict.push_back({part, std::move(labels)});
  }
  return a;
}

}  // namespace tacit::stablehlo
