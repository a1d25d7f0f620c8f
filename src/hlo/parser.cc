#include "hlo/parser.h"

#include <algorithm>
#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <limits>
#include <unordered_map>
#include <unordered_set>

#include "hlo/attributes.h"
#include "hlo/float8.h"
#include "hlo/lexer.h"
#include "hlo/shape_inference.h"
#include "support/strings.h"

namespace tacit::hlo {
namespace {

bool reservedWord(std::string_view s) {
  return isReservedWord(s);
}

class Parser {
 public:
  Parser(const SourceFile& file, DiagnosticSink* warnings = nullptr)
      : lex_(file), warnings_(warnings) {
    advance();
  }

  std::unique_ptr<HloModule> module();
  Shape shapeOnly();
  Literal literalOnly(const Shape& shape);

 private:
  // One computation being parsed: its instruction names and anonymous instructions.
  struct Scope {
    HloComputation* comp = nullptr;
    std::unordered_map<std::string_view, HloInstruction*> names;
    std::vector<HloInstruction*> anonymous;
    HloInstruction* root = nullptr;
    // Instructions join the computation only when its body is complete, so parameter numbers can
    // be bounded by the instruction count first (the computation sizes its parameter table by the
    // largest number: a hostile parameter(1000000000000) must not allocate).
    std::vector<std::unique_ptr<HloInstruction>> pending;
    std::vector<std::pair<const HloInstruction*, size_t>> parameter_offsets;
  };

  class DepthGuard {
   public:
    DepthGuard(Parser& p, size_t offset) : p_(p) {
      if (++p_.depth_ > kMaxNestingDepth) {
        p_.lex_.fail(offset, "nesting is too deep (more than " + std::to_string(kMaxNestingDepth) +
                                 " levels)");
      }
    }
    ~DepthGuard() { --p_.depth_; }
    DepthGuard(const DepthGuard&) = delete;
    DepthGuard& operator=(const DepthGuard&) = delete;

   private:
    Parser& p_;
  };

  // ---- tokens ----
  void advance() {
    prev_end_ = tok_.end;
    tok_ = lex_.lex(tok_.end);
  }
  Token peek() const { return lex_.lex(tok_.end); }
  Token peek2() const { return lex_.lex(lex_.lex(tok_.end).end); }
  [[noreturn]] void failHere(std::string message, std::string hint = {}) const {
    lex_.fail(tok_.begin, std::move(message), std::move(hint));
  }
  [[noreturn]] void fail(size_t offset, std::string message, std::string hint = {}) const {
    lex_.fail(offset, std::move(message), std::move(hint));
  }
  std::string describe(const Token& t) const {
    switch (t.kind) {
      case Tok::kEof:
        return "end of input";
      case Tok::kName:
        return "name '" + std::string(t.text) + "'";
      case Tok::kAttrName:
        return "attribute name '" + std::string(t.text) + "='";
      case Tok::kString:
        return "a string";
      default:
        return "'" +
               std::string(lex_.text().substr(t.begin, std::min<size_t>(t.end - t.begin, 40))) +
               "'";
    }
  }
  [[noreturn]] void expected(std::string_view what, std::string hint = {}) const {
    failHere("expected " + std::string(what) + ", found " + describe(tok_), std::move(hint));
  }
  void expect(Tok kind, std::string_view context = {}) {
    if (!tok_.is(kind)) {
      expected(std::string(tokName(kind)) + (context.empty() ? "" : " " + std::string(context)));
    }
    advance();
  }
  bool accept(Tok kind) {
    if (!tok_.is(kind)) return false;
    advance();
    return true;
  }
  SourceLoc locOf(size_t offset) const { return lex_.file().locate(offset); }

  int64_t parseInt(std::string_view what);
  int64_t parseNonNegative(std::string_view what);
  bool parseBool();
  std::vector<int64_t> parseIntList(std::string_view what);
  std::string parseNameToken(std::string_view what);

  // ---- shapes ----
  bool atShapeStart() const;
  Shape parseShape();
  void parseDims(Shape* shape);
  Layout parseLayout(const Shape& shape);
  void parseLayoutExtras(Layout* layout, size_t layout_begin);
  void checkLayoutStart(const Shape& shape);

  // ---- literals ----
  Literal parseLiteralOf(const Shape& shape);
  void parseDenseLevel(Literal& lit, int64_t dim, int64_t* index);
  void parseScalarInto(Literal& lit, int64_t index);
  void parseScalarInto(PrimitiveType t, uint8_t* dst);
  double parseFloatValue(uint64_t* payload, bool* finite_input);
  void storeFloat(PrimitiveType t, uint8_t* dst, size_t offset_of_token);

  // ---- module structure ----
  void parseHeader(HloModule& m);
  void parseHeaderAttribute(HloModule& m, std::unordered_set<std::string>& seen);
  ProgramShape parseProgramShape();
  void parseComputation(HloModule& m);
  void parseBody(Scope& scope);
  HloComputation* parseInlineComputation();
  void finishScope(Scope& scope);
  void parseInstruction(Scope& scope);
  HloInstruction* parseInstructionRhs(Scope& scope, std::string name, size_t name_offset,
                                      bool allow_attributes);
  void parseOperands(Scope& scope, HloOpcode opcode, const Shape* shape, HloInstruction* pending,
                     std::vector<HloInstruction*>* operands, size_t opcode_offset);
  HloInstruction* parseOperand(Scope& scope);
  void singleInstruction(HloModule& m);
  HloInstruction* newParameter(Scope& scope, const Shape& shape, std::string name, size_t offset);
  HloInstruction* lookupInstruction(Scope& scope, const Token& t);
  HloComputation* lookupComputation(const Token& t);

  // ---- attributes ----
  void parseAttributes(Scope& scope, HloInstruction& inst, size_t opcode_offset);
  void parseAttribute(Scope& scope, HloInstruction& inst, const Token& name_tok, AttrKind kind);
  void parseRawValue(AttrKind kind, std::string_view name);
  void parseGenericValue();
  void parseBalanced();
  std::vector<SliceDim> parseSlice();
  std::vector<PadDim> parsePadding();
  std::vector<WindowDim> parseWindow();
  ConvDims parseDimLabels();
  void parseSharding();
  void parseSingleSharding();
  void parseReplicaGroups();
  std::string parseFrontendAttributes();

  Lexer lex_;
  DiagnosticSink* warnings_ = nullptr;
  Token tok_;
  size_t prev_end_ = 0;
  int depth_ = 0;
  bool single_ = false;  // single-instruction mode: undefined operands become parameters
  HloModule* module_ = nullptr;
  std::unordered_map<std::string, HloComputation*> computations_;
  std::vector<HloComputation*> generated_computations_;
  std::vector<std::unique_ptr<HloComputation>> pending_inline_;
};

// ================================================================================================
// Basic values

int64_t Parser::parseInt(std::string_view what) {
  if (!tok_.is(Tok::kInt)) expected(what);
  if (tok_.int_is_big_unsigned) failHere(std::string(what) + " is out of range");
  int64_t v = tok_.int_value;
  advance();
  return v;
}

int64_t Parser::parseNonNegative(std::string_view what) {
  size_t at = tok_.begin;
  int64_t v = parseInt(what);
  if (v < 0) fail(at, std::string(what) + " must be non-negative, got " + std::to_string(v));
  return v;
}

bool Parser::parseBool() {
  if (tok_.isIdent("true") || tok_.isIdent("false")) {
    bool v = tok_.text == "true";
    advance();
    return v;
  }
  expected("'true' or 'false'");
}

std::vector<int64_t> Parser::parseIntList(std::string_view what) {
  std::vector<int64_t> out;
  expect(Tok::kLBrace, "to start " + std::string(what));
  if (!tok_.is(Tok::kRBrace)) {
    do {
      if (out.size() >= static_cast<size_t>(kMaxShapeElements)) failHere("list is too long");
      out.push_back(parseInt("an integer in " + std::string(what)));
    } while (accept(Tok::kComma));
  }
  expect(Tok::kRBrace, "to close " + std::string(what));
  return out;
}

// A name written as %name, name: (signatures) or a bare identifier.
std::string Parser::parseNameToken(std::string_view what) {
  if (tok_.is(Tok::kName) || (tok_.is(Tok::kIdent) && !reservedWord(tok_.text))) {
    std::string name(tok_.text);
    advance();
    return name;
  }
  if (tok_.is(Tok::kIdent)) {
    failHere("'" + std::string(tok_.text) + "' is a reserved word and cannot be a bare " +
                 std::string(what),
             "write %" + std::string(tok_.text));
  }
  expected(what);
}

// ================================================================================================
// Shapes

bool Parser::atShapeStart() const {
  if (tok_.is(Tok::kLParen)) return true;
  if (!tok_.is(Tok::kIdent)) return false;
  if (parsePrimitiveType(tok_.text).has_value()) return true;
  // Not a type, but shaped like one: parseShape() reports the misspelled type / buffer shape.
  Token next = peek();
  return next.is(Tok::kLSquare) || (tok_.text == "b" && next.is(Tok::kLParen));
}

Shape Parser::parseShape() {
  DepthGuard guard(*this, tok_.begin);
  if (accept(Tok::kLParen)) {
    std::vector<Shape> elements;
    if (!tok_.is(Tok::kRParen)) {
      do {
        elements.push_back(parseShape());
      } while (accept(Tok::kComma));
    }
    expect(Tok::kRParen, "to close the tuple shape");
    return Shape::tuple(std::move(elements));
  }
  if (!tok_.is(Tok::kIdent)) expected("a shape");
  if (tok_.text == "b" && peek().is(Tok::kLParen)) {
    failHere("buffer shapes 'b(...)' are not supported by tacit");
  }
  std::optional<PrimitiveType> type = parsePrimitiveType(tok_.text);
  if (!type) {
    std::string hint;
    if (tok_.text == "i8" || tok_.text == "i16" || tok_.text == "i32" || tok_.text == "i64") {
      hint = "HLO spells signed integers s8, s16, s32, s64";
    }
    failHere("expected an element type, found " + describe(tok_), hint);
  }
  advance();
  Shape shape(*type, {});
  if (*type == PrimitiveType::kToken) shape = Shape::token();
  if (!tok_.is(Tok::kLSquare)) expected("'[' after the element type", "scalars are written f32[]");
  parseDims(&shape);
  if ((shape.isToken() || *type == PrimitiveType::kOpaque) && shape.rank() != 0) {
    failHere(std::string(primitiveTypeName(*type)) + " shapes have no dimensions");
  }
  checkLayoutStart(shape);
  if (tok_.is(Tok::kLBrace)) {
    Token next = peek();
    if (next.is(Tok::kInt) || next.is(Tok::kColon)) shape.setLayout(parseLayout(shape));
  }
  return shape;
}

// A '{' followed by a layout extra without minor_to_major (the ACT paper's `{T(16,64)}`).
void Parser::checkLayoutStart(const Shape& shape) {
  if (!tok_.is(Tok::kLBrace)) return;
  Token next = peek();
  if (!next.is(Tok::kIdent) && !next.is(Tok::kStar) && !next.is(Tok::kHash)) return;
  static constexpr std::string_view kExtras[] = {"D", "T", "L", "E", "S", "SC", "P", "M"};
  bool extra = next.kind != Tok::kIdent ||
               std::find(std::begin(kExtras), std::end(kExtras), next.text) != std::end(kExtras);
  if (extra && lex_.lex(next.end).is(Tok::kLParen)) {
    std::string example =
        "{" + join(shape.minorToMajor(), ",") + ":" + std::string(next.text) + "(...)}";
    failHere("a layout must list minor_to_major before its ':' extras", "e.g. " + example);
  }
}

void Parser::parseDims(Shape* shape) {
  expect(Tok::kLSquare);
  std::vector<int64_t> dims;
  std::vector<bool> dynamic;
  if (!tok_.is(Tok::kRSquare)) {
    do {
      if (static_cast<int64_t>(dims.size()) >= kMaxRank) {
        failHere("shape rank exceeds the limit of " + std::to_string(kMaxRank));
      }
      if (accept(Tok::kQuestion)) {
        dims.push_back(-1);
        dynamic.push_back(true);
        continue;
      }
      bool bounded = accept(Tok::kLeq);
      size_t at = tok_.begin;
      int64_t d = parseInt(bounded ? "a dimension bound" : "a dimension size");
      if (d < 0) fail(at, "dimension size must be non-negative, got " + std::to_string(d));
      if (d > kMaxDimensionSize) {
        fail(at, "dimension size " + std::to_string(d) + " exceeds the limit of 2^40");
      }
      dims.push_back(d);
      dynamic.push_back(bounded);
    } while (accept(Tok::kComma));
  }
  size_t close = tok_.begin;
  expect(Tok::kRSquare, "to close the dimensions");
  long double product = 1;
  for (int64_t d : dims)
    product *= static_cast<long double>(d < 0 ? 1 : d);
  if (product > static_cast<long double>(kMaxShapeElements)) {
    fail(close, "shape has more than 2^50 elements");
  }
  PrimitiveType t = shape->elementType();
  *shape = Shape(t, dims);
  for (size_t i = 0; i < dynamic.size(); ++i) {
    if (dynamic[i]) shape->setDynamicDim(static_cast<int64_t>(i), true);
  }
}

Layout Parser::parseLayout(const Shape& shape) {
  size_t begin = tok_.begin;
  expect(Tok::kLBrace);
  Layout layout;
  if (tok_.is(Tok::kInt)) {
    do {
      if (static_cast<int64_t>(layout.minor_to_major.size()) >= kMaxRank)
        failHere("layout is too long");
      layout.minor_to_major.push_back(parseInt("a dimension number"));
    } while (accept(Tok::kComma));
  }
  if (static_cast<int64_t>(layout.minor_to_major.size()) != shape.rank()) {
    fail(begin,
         "layout lists " + plural(static_cast<int64_t>(layout.minor_to_major.size()), "dimension") +
             " but the shape " + shape.shortStr() + " has rank " + std::to_string(shape.rank()),
         "minor_to_major must name every dimension once, e.g. " +
             layoutStr(Layout{shape.minorToMajor(), {}, {}, {}}));
  }
  std::vector<bool> seen(static_cast<size_t>(shape.rank()), false);
  for (int64_t d : layout.minor_to_major) {
    if (d < 0 || d >= shape.rank() || seen[static_cast<size_t>(d)]) {
      fail(begin, "layout " + layoutStr(layout) + " is not a permutation of the dimensions of " +
                      shape.shortStr());
    }
    seen[static_cast<size_t>(d)] = true;
  }
  if (accept(Tok::kColon)) parseLayoutExtras(&layout, begin);
  expect(Tok::kRBrace, "to close the layout");
  return layout;
}

void Parser::parseLayoutExtras(Layout* layout, size_t layout_begin) {
  (void)layout_begin;
  auto isExtra = [&](std::string_view name) {
    return tok_.isIdent(name) && peek().is(Tok::kLParen);
  };
  auto parenInt = [&](std::string_view letter) {
    advance();
    expect(Tok::kLParen);
    int64_t v = parseInt("an integer");
    expect(Tok::kRParen);
    return std::string(letter) + "(" + std::to_string(v) + ")";
  };
  if (isExtra("D")) {
    advance();
    expect(Tok::kLParen);
    std::string text = "D(";
    bool first = true;
    do {
      if (!(tok_.isIdent("D") || tok_.isIdent("C") || tok_.isIdent("S") || tok_.isIdent("H"))) {
        expected("a dimension level type (D, C, S or H)");
      }
      if (!first) text += ",";
      first = false;
      text += tok_.text;
      advance();
      if (accept(Tok::kPlus)) text += "+";
      if (accept(Tok::kTilde)) text += "~";
    } while (accept(Tok::kComma));
    expect(Tok::kRParen);
    layout->dim_level_types = text + ")";
  }
  if (isExtra("T")) {
    advance();
    while (accept(Tok::kLParen)) {
      Tile tile;
      do {
        if (tile.dims.size() >= static_cast<size_t>(kMaxRank))
          failHere("tile has too many dimensions");
        if (accept(Tok::kStar)) {
          tile.dims.push_back(-1);
        } else {
          size_t at = tok_.begin;
          int64_t d = parseInt("a tile dimension");
          if (d <= 0) fail(at, "tile dimensions must be positive");
          tile.dims.push_back(d);
        }
      } while (accept(Tok::kComma));
      expect(Tok::kRParen, "to close the tile");
      if (layout->tiles.size() >= static_cast<size_t>(kMaxRank)) failHere("too many tiles");
      layout->tiles.push_back(std::move(tile));
    }
  }
  std::string tail;
  if (isExtra("L")) tail += parenInt("L");
  for (Tok sym : {Tok::kHash, Tok::kStar}) {
    if (!tok_.is(sym)) continue;
    std::string mark(tok_.text);
    advance();
    expect(Tok::kLParen);
    if (!tok_.is(Tok::kIdent) || !parsePrimitiveType(tok_.text)) expected("an element type");
    tail += mark + "(" + std::string(tok_.text) + ")";
    advance();
    expect(Tok::kRParen);
  }
  if (isExtra("E")) tail += parenInt("E");
  if (isExtra("S")) tail += parenInt("S");
  if (isExtra("SC")) {
    advance();
    tail += "SC";
    while (accept(Tok::kLParen)) {
      int64_t dim = parseInt("a split dimension");
      expect(Tok::kColon);
      std::vector<int64_t> indices;
      do {
        indices.push_back(parseInt("a split index"));
        if (indices.size() > static_cast<size_t>(kMaxRank)) failHere("too many split indices");
      } while (accept(Tok::kComma));
      expect(Tok::kRParen);
      tail += "(" + std::to_string(dim) + ":" + join(indices, ",") + ")";
    }
  }
  if (isExtra("P")) {
    advance();
    expect(Tok::kLParen);
    Shape physical = parseShape();
    expect(Tok::kRParen);
    tail += "P(" + physical.str() + ")";
  }
  if (isExtra("M")) tail += parenInt("M");
  layout->tail = tail;
  if (!tok_.is(Tok::kRBrace)) {
    expected("'}' or a layout extra in the order D T L # * E S SC P M");
  }
}

// ================================================================================================
// Literals

Literal Parser::parseLiteralOf(const Shape& shape) {
  DepthGuard guard(*this, tok_.begin);
  if (shape.isTuple()) {
    expect(Tok::kLParen, "to start the tuple literal");
    std::vector<Literal> elements;
    for (size_t i = 0; i < shape.tupleShapes().size(); ++i) {
      if (i) expect(Tok::kComma, "between tuple literal elements");
      elements.push_back(parseLiteralOf(shape.tupleShapes()[i]));
    }
    expect(Tok::kRParen, "to close the tuple literal (" +
                             plural(static_cast<int64_t>(elements.size()), "element") +
                             " expected)");
    Literal lit = Literal::tuple(std::move(elements));
    return lit;
  }
  if (!shape.isArray()) failHere("a constant cannot have shape " + shape.str());
  if (shape.isDynamic()) failHere("a constant cannot have the dynamic shape " + shape.str());
  if (tok_.is(Tok::kLBrace) && peek().is(Tok::kDots)) {
    advance();
    advance();
    expect(Tok::kRBrace, "after '...'");
    return Literal::unknown(shape);
  }
  int64_t count = shape.elementCount();
  bool splat = shape.rank() > 0 && !tok_.is(Tok::kLBrace);
  size_t remaining = lex_.text().size() - tok_.begin;
  if (splat ? count > kMaxSplatElements
            : (count > kMaxLiteralElements || static_cast<uint64_t>(count) > remaining)) {
    failHere("constant of shape " + shape.shortStr() + " has " + std::to_string(count) +
                 (splat ? " elements, more than a scalar may fill (2^20)"
                        : " elements, more than the text can hold"),
             "large constants can be elided as {...}");
  }
  Literal lit(shape);
  if (shape.rank() == 0 || splat) {
    // XLA also accepts one scalar for an array constant (f32[3072] constant(0.3)): every element
    // takes the value (a zero-element shape still needs a valid value).
    alignas(16) uint8_t value[16] = {};
    parseScalarInto(shape.elementType(), value);
    size_t size = static_cast<size_t>(byteSize(shape.elementType()));
    for (int64_t i = 0; i < count; ++i)
      std::memcpy(lit.bytes() + static_cast<size_t>(i) * size, value, size);
    return lit;
  }
  int64_t index = 0;
  parseDenseLevel(lit, 0, &index);
  return lit;
}

void Parser::parseDenseLevel(Literal& lit, int64_t dim, int64_t* index) {
  DepthGuard guard(*this, tok_.begin);
  const Shape& shape = lit.shape();
  int64_t size = shape.dim(dim);
  size_t open = tok_.begin;
  expect(Tok::kLBrace, "to start dimension " + std::to_string(dim) + " of the literal (size " +
                           std::to_string(size) + ")");
  int64_t n = 0;
  if (!tok_.is(Tok::kRBrace)) {
    do {
      if (n == size) {
        failHere("too many elements in dimension " + std::to_string(dim) +
                 " of the literal: expected " + std::to_string(size) + " for shape " +
                 shape.shortStr());
      }
      if (dim + 1 < shape.rank()) {
        parseDenseLevel(lit, dim + 1, index);
      } else {
        parseScalarInto(lit, (*index)++);
      }
      ++n;
    } while (accept(Tok::kComma));
  }
  if (n != size) {
    fail(open, "dimension " + std::to_string(dim) + " of the literal has " + plural(n, "element") +
                   " but shape " + shape.shortStr() + " needs " + std::to_string(size));
  }
  expect(Tok::kRBrace, "to close dimension " + std::to_string(dim) + " of the literal");
}

// A real number token as a double: INT, DECIMAL (incl. nan with payload), inf, -inf.
double Parser::parseFloatValue(uint64_t* payload, bool* finite_input) {
  *payload = 0;
  double v;
  if (tok_.is(Tok::kInt)) {
    v = tok_.int_is_big_unsigned ? static_cast<double>(static_cast<uint64_t>(tok_.int_value))
                                 : static_cast<double>(tok_.int_value);
    if (v == 0 && tok_.text[0] == '-') v = -0.0;  // `-0` is negative zero (XLA reads +0)
  } else if (tok_.is(Tok::kDecimal)) {
    v = tok_.decimal_value;
    *payload = tok_.nan_payload;
  } else if (tok_.isIdent("inf")) {
    v = HUGE_VAL;
  } else if (tok_.is(Tok::kNegInf)) {
    v = -HUGE_VAL;
  } else {
    expected("a number");
  }
  *finite_input = std::isfinite(v);
  advance();
  return v;
}

template <typename Bits>
Bits withPayload(Bits bits, uint64_t payload, int mantissa_bits, bool* ok) {
  if (payload == 0) return bits;
  Bits mant_mask = static_cast<Bits>((Bits{1} << mantissa_bits) - 1);
  *ok = payload <= mant_mask;
  return static_cast<Bits>((bits & ~mant_mask) | (static_cast<Bits>(payload) & mant_mask));
}

void Parser::storeFloat(PrimitiveType t, uint8_t* dst, size_t at) {
  uint64_t payload = 0;
  bool finite_input = true;
  double v = parseFloatValue(&payload, &finite_input);
  std::string type(primitiveTypeName(t));
  std::string overflow = "value " + formatDouble(v) + " overflows " + type;
  bool payload_ok = true;
  switch (t) {
    case PrimitiveType::kF64: {
      uint64_t bits = withPayload(std::bit_cast<uint64_t>(v), payload, 52, &payload_ok);
      std::memcpy(dst, &bits, 8);
      break;
    }
    case PrimitiveType::kF32: {
      auto f = static_cast<float>(v);
      if (finite_input && std::isinf(f)) fail(at, overflow);
      uint32_t bits = withPayload(std::bit_cast<uint32_t>(f), payload, 23, &payload_ok);
      std::memcpy(dst, &bits, 4);
      break;
    }
    case PrimitiveType::kBF16:
    case PrimitiveType::kF16: {
      bool bf = t == PrimitiveType::kBF16;
      uint16_t bits = bf ? f64ToBf16(v).bits : f64ToF16(v).bits;
      bool is_inf = (bits & 0x7fff) == (bf ? 0x7f80 : 0x7c00);
      if (finite_input && is_inf) fail(at, overflow);
      bits = withPayload(bits, payload, bf ? 7 : 10, &payload_ok);
      std::memcpy(dst, &bits, 2);
      break;
    }
    default: {
      std::optional<MinifloatFormat> format = minifloatFormat(t);
      if (!format) fail(at, "cannot store a number in " + type);
      switch (encodeMinifloat(*format, v, payload, dst)) {
        case MinifloatStatus::kOk:
          break;
        case MinifloatStatus::kOverflow:
          fail(at, overflow);
        case MinifloatStatus::kNoInf:
          fail(at, type + " has no infinities");
        case MinifloatStatus::kNoNan:
          fail(at, type + " has no NaN" + (payload ? " with this payload" : ""));
        case MinifloatStatus::kNoZero:
          fail(at, type + " cannot represent zero or values this small");
      }
      if (payload && !format->ieee_nan) fail(at, type + " NaNs carry no payload");
    }
  }
  if (!payload_ok) fail(at, "NaN payload does not fit in the mantissa of " + type);
}

void Parser::parseScalarInto(Literal& lit, int64_t index) {
  PrimitiveType t = lit.shape().elementType();
  parseScalarInto(t, lit.bytes() + static_cast<size_t>(index) * static_cast<size_t>(byteSize(t)));
}

// One element of type `t` into `dst` (byteSize(t) bytes).
void Parser::parseScalarInto(PrimitiveType t, uint8_t* dst) {
  size_t at = tok_.begin;
  if (t == PrimitiveType::kPred) {
    if (tok_.isIdent("true") || tok_.isIdent("false")) {
      *dst = tok_.text == "true";
    } else if (tok_.is(Tok::kInt) && (tok_.int_value == 0 || tok_.int_value == 1) &&
               !tok_.int_is_big_unsigned) {
      *dst = static_cast<uint8_t>(tok_.int_value);
    } else {
      expected("a pred value (true, false, 0 or 1)");
    }
    advance();
    return;
  }
  if (isInteger(t)) {
    if (!tok_.is(Tok::kInt)) {
      expected(std::string("an integer for ") + std::string(primitiveTypeName(t)));
    }
    int bits = bitWidth(t);
    bool big = tok_.int_is_big_unsigned;
    int64_t v = tok_.int_value;
    bool ok;
    if (isSignedInteger(t)) {
      int64_t lo = bits == 64 ? std::numeric_limits<int64_t>::min() : -(int64_t{1} << (bits - 1));
      int64_t hi =
          bits == 64 ? std::numeric_limits<int64_t>::max() : (int64_t{1} << (bits - 1)) - 1;
      ok = !big && v >= lo && v <= hi;
    } else {
      ok = big ? bits == 64 : (v >= 0 && (bits == 64 || v < (int64_t{1} << bits)));
    }
    if (!ok)
      failHere("value " + std::string(tok_.text) + " is out of range for " +
               std::string(primitiveTypeName(t)));
    uint64_t u = static_cast<uint64_t>(v);
    std::memcpy(dst, &u, static_cast<size_t>(byteSize(t)));  // little-endian low bytes
    advance();
    return;
  }
  if (isComplex(t)) {
    expect(Tok::kLParen, "to start a complex value (re, im)");
    bool c64 = t == PrimitiveType::kC64;
    PrimitiveType part = c64 ? PrimitiveType::kF32 : PrimitiveType::kF64;
    size_t part_size = c64 ? 4 : 8;
    storeFloat(part, dst, tok_.begin);
    expect(Tok::kComma, "between the real and imaginary parts");
    storeFloat(part, dst + part_size, tok_.begin);
    expect(Tok::kRParen, "to close the complex value");
    return;
  }
  if (isFloat(t)) {
    storeFloat(t, dst, at);
    return;
  }
  failHere("a constant cannot have element type " + std::string(primitiveTypeName(t)));
}

// ================================================================================================
// Module, computations

std::unique_ptr<HloModule> Parser::module() {
  auto m = std::make_unique<HloModule>("");
  m->setSourceFile(lex_.file().name());
  module_ = m.get();
  bool has_header = tok_.isIdent("HloModule");
  if (has_header) {
    parseHeader(*m);
  } else if (tok_.is(Tok::kEof)) {
    failHere("expected 'HloModule' or a computation, found end of input", "the file is empty");
  } else {
    Token next = peek();
    bool computation_start =
        tok_.isIdent("ENTRY") || ((tok_.is(Tok::kName) || tok_.is(Tok::kIdent)) &&
                                  (next.is(Tok::kLBrace) || next.is(Tok::kLParen)));
    bool instruction_start =
        tok_.isIdent("ROOT") || atShapeStart() ||
        ((tok_.is(Tok::kName) || tok_.is(Tok::kIdent)) && next.is(Tok::kEqual));
    if (!computation_start && instruction_start) {
      singleInstruction(*m);
      return m;
    }
    if (!computation_start) expected("'HloModule' or a computation");
  }
  HloComputation* entry = nullptr;
  while (!tok_.is(Tok::kEof)) {
    bool is_entry = tok_.isIdent("ENTRY");
    if (is_entry && entry != nullptr) failHere("a module has at most one ENTRY computation");
    parseComputation(*m);
    if (is_entry) entry = m->computations().back().get();
  }
  if (m->computations().empty()) failHere("the module has no computations");
  if (entry == nullptr) entry = m->computations().back().get();
  m->setEntry(entry);
  if (!has_header) m->setName("module_" + entry->name());
  // Names for inline computations, unique among the module's computations.
  int suffix = 0;
  for (HloComputation* c : generated_computations_) {
    std::string name = "_";
    while (computations_.count(name))
      name = "_." + std::to_string(++suffix);
    c->setName(name);
    computations_[name] = c;
  }
  return m;
}

void Parser::parseHeader(HloModule& m) {
  advance();  // HloModule
  if (!tok_.is(Tok::kName) && !tok_.is(Tok::kIdent)) expected("the module name after 'HloModule'");
  if (tok_.is(Tok::kIdent) && reservedWord(tok_.text)) {
    failHere("'" + std::string(tok_.text) + "' is a reserved word and cannot be a bare module name",
             "write %" + std::string(tok_.text));
  }
  m.setName(std::string(tok_.text));
  advance();
  std::unordered_set<std::string> seen;
  while (accept(Tok::kComma))
    parseHeaderAttribute(m, seen);
}

void Parser::parseHeaderAttribute(HloModule& m, std::unordered_set<std::string>& seen) {
  if (!tok_.is(Tok::kAttrName)) expected("a module attribute (name=value)");
  Token name_tok = tok_;
  std::string name(tok_.text);
  if (std::find(std::begin(kModuleHeaderAttributes), std::end(kModuleHeaderAttributes), name) ==
      std::end(kModuleHeaderAttributes)) {
    failHere("unknown module attribute '" + name + "'");
  }
  if (!seen.insert(name).second) failHere("duplicate module attribute '" + name + "'");
  advance();
  size_t begin = tok_.begin;
  if (name == "entry_computation_layout") {
    expect(Tok::kLBrace, "to start the entry computation layout");
    m.setEntryLayout(parseProgramShape());
    expect(Tok::kRBrace, "to close the entry computation layout");
    return;
  }
  std::string value;
  if (name == "is_scheduled" || name == "alias_passthrough_params") {
    parseBool();
  } else if (name == "replica_count" || name == "num_partitions") {
    parseNonNegative(name);
  } else if (name.starts_with("allow_spmd")) {
    parseRawValue(AttrKind::kBoolOrBoolList, name);
  } else if (name == "frontend_attributes") {
    value = parseFrontendAttributes();
  } else {
    parseBalanced();
  }
  if (value.empty()) value = lex_.canonical(begin, prev_end_);
  m.headerAttributes().push_back(RawAttribute{name, value, locOf(name_tok.begin)});
}

ProgramShape Parser::parseProgramShape() {
  ProgramShape ps;
  expect(Tok::kLParen, "to start the parameter shapes");
  if (!tok_.is(Tok::kRParen)) {
    do {
      if (tok_.is(Tok::kName)) advance();  // old style: (name: shape, ...)
      ps.parameters.push_back(parseShape());
    } while (accept(Tok::kComma));
  }
  expect(Tok::kRParen, "to close the parameter shapes");
  expect(Tok::kArrow, "before the result shape");
  ps.result = parseShape();
  return ps;
}

void Parser::parseComputation(HloModule& m) {
  if (tok_.isIdent("ENTRY")) advance();
  size_t name_at = tok_.begin;
  std::string name = parseNameToken("computation name");
  if (computations_.count(name)) fail(name_at, "duplicate computation name '" + name + "'");
  auto comp = std::make_unique<HloComputation>(name);
  comp->setLoc(locOf(name_at));
  std::optional<Shape> declared_result;
  size_t result_at = 0;
  if (accept(Tok::kLParen)) {
    if (!tok_.is(Tok::kRParen)) {
      do {
        if (!tok_.is(Tok::kName)) expected("a parameter name in the computation signature");
        bool sigil = lex_.text()[tok_.begin] == '%';
        advance();
        if (sigil) expect(Tok::kColon, "after the parameter name");
        parseShape();
      } while (accept(Tok::kComma));
    }
    expect(Tok::kRParen, "to close the computation signature");
    expect(Tok::kArrow, "before the computation's result shape");
    result_at = tok_.begin;
    declared_result = parseShape();
  }
  if (!tok_.is(Tok::kLBrace)) expected("'{' to start the body of computation '" + name + "'");
  Scope scope;
  scope.comp = comp.get();
  parseBody(scope);
  if (declared_result && !declared_result->compatible(scope.comp->root()->shape())) {
    fail(result_at, "computation '" + name + "' declares result " + declared_result->shortStr() +
                        " but its root '" + scope.comp->root()->name() + "' has shape " +
                        scope.comp->root()->shape().shortStr());
  }
  if (tok_.is(Tok::kComma) && peek().is(Tok::kAttrName) && peek().text == "execution_thread") {
    advance();
    advance();
    if (!tok_.is(Tok::kString)) expected("a string for execution_thread");
    comp->setExecutionThread(lex_.stringValue(tok_));
    advance();
  }
  for (auto& inline_comp : pending_inline_)
    m.addComputation(std::move(inline_comp));
  pending_inline_.clear();
  computations_[name] = m.addComputation(std::move(comp));
}

void Parser::parseBody(Scope& scope) {
  DepthGuard guard(*this, tok_.begin);
  expect(Tok::kLBrace);
  while (!tok_.is(Tok::kRBrace)) {
    if (tok_.is(Tok::kEof)) {
      failHere("unexpected end of input in the body of computation '" + scope.comp->name() + "'",
               "close it with '}'");
    }
    parseInstruction(scope);
  }
  if (scope.pending.empty())
    failHere("computation '" + scope.comp->name() + "' has no instructions");
  advance();
  finishScope(scope);
}

// Root defaults to the last instruction; anonymous instructions get unique names.
void Parser::finishScope(Scope& scope) {
  HloComputation* comp = scope.comp;
  for (const auto& [param, offset] : scope.parameter_offsets) {
    if (param->parameterNumber() >= static_cast<int64_t>(scope.pending.size())) {
      fail(offset,
           "parameter number " + std::to_string(param->parameterNumber()) + " is out of range: '" +
               comp->name() + "' has only " +
               plural(static_cast<int64_t>(scope.pending.size()), "instruction"),
           "parameters are numbered 0..n-1");
    }
  }
  HloInstruction* last = scope.pending.back().get();
  for (auto& inst : scope.pending)
    comp->addInstruction(std::move(inst));
  scope.pending.clear();
  comp->setRoot(scope.root ? scope.root : last);
  std::unordered_map<std::string, int> next_suffix;  // per opcode: keeps naming linear
  for (HloInstruction* inst : scope.anonymous) {
    std::string base = std::string(inst->opcodeSpelling()) + ".anon";
    std::string name = base;
    int& i = next_suffix[base];
    while (scope.names.count(name))
      name = base + "." + std::to_string(++i);
    inst->setName(name);
    scope.names[inst->name()] = inst;
  }
}

HloComputation* Parser::parseInlineComputation() {
  auto comp = std::make_unique<HloComputation>("_");
  comp->setLoc(locOf(tok_.begin));
  Scope scope;
  scope.comp = comp.get();
  parseBody(scope);
  generated_computations_.push_back(comp.get());
  HloComputation* raw = comp.get();
  pending_inline_.push_back(std::move(comp));
  return raw;
}

void Parser::parseInstruction(Scope& scope) {
  bool is_root = false;
  if (tok_.isIdent("ROOT")) {
    if (scope.root) failHere("computation '" + scope.comp->name() + "' has more than one ROOT");
    advance();
    is_root = true;
  }
  size_t name_at = tok_.begin;
  if (tok_.is(Tok::kAttrName)) {
    failHere("expected an instruction name, found '" + std::string(tok_.text) +
                 "=' (read as an attribute name)",
             "put a space before '=' (bare names need one: '" + std::string(tok_.text) +
                 " = ...'), or write %" + std::string(tok_.text));
  }
  if (tok_.is(Tok::kName) && lex_.text()[tok_.begin] != '%') {
    failHere("expected an instruction name, found '" + std::string(tok_.text) + ":'");
  }
  std::string name = parseNameToken("instruction name");
  if (scope.names.count(name)) {
    fail(name_at,
         "duplicate instruction name '" + name + "' in computation '" + scope.comp->name() + "'");
  }
  expect(Tok::kEqual, "after the instruction name");
  HloInstruction* inst = parseInstructionRhs(scope, std::move(name), name_at, true);
  scope.names[inst->name()] = inst;
  if (is_root) scope.root = inst;
}

HloInstruction* Parser::parseInstructionRhs(Scope& scope, std::string name, size_t name_offset,
                                            bool allow_attributes) {
  DepthGuard guard(*this, tok_.begin);
  std::optional<Shape> declared;
  if (atShapeStart()) declared = parseShape();
  if (tok_.is(Tok::kLBrace)) {
    expected("an opcode",
             "'{...}' after a shape is a layout only if it lists dimension numbers, e.g. {1,0}");
  }
  if (!tok_.is(Tok::kIdent)) expected("an opcode");
  size_t opcode_at = tok_.begin;
  std::string spelling(tok_.text);
  std::optional<HloOpcode> opcode = parseOpcode(spelling);
  if (!opcode) {
    if (std::string_view modern = modernSpelling(spelling); !modern.empty()) {
      failHere("'" + spelling + "' is an old opcode name that current XLA no longer accepts",
               "write '" + std::string(modern) + "'");
    }
  }
  advance();
  auto inst = std::make_unique<HloInstruction>(opcode.value_or(HloOpcode::kUnknown),
                                               std::move(name), declared.value_or(Shape()));
  if (!opcode) inst->setUnknownOpcodeSpelling(spelling);
  inst->setLoc(locOf(name_offset));
  HloOpcode op = inst->opcode();
  std::vector<HloInstruction*> operands;
  parseOperands(scope, op, declared ? &*declared : nullptr, inst.get(), &operands, opcode_at);
  for (HloInstruction* o : operands)
    inst->addOperand(o);
  if (op == HloOpcode::kDot || op == HloOpcode::kRaggedDot || op == HloOpcode::kScaledDot) {
    inst->attrs().dot_dims = DotDims{};
  }
  if (allow_attributes) parseAttributes(scope, *inst, opcode_at);
  if (!declared) {
    if (op == HloOpcode::kUnknown) {
      fail(opcode_at, "the result shape of the unknown opcode '" + spelling + "' must be written");
    }
    if (!resultShapeOptional(op)) {
      fail(opcode_at, "the result shape of '" + spelling + "' must be written",
           "write it before the opcode: name = f32[...] " + spelling + "(...)");
    }
    std::vector<const Shape*> shapes;
    for (HloInstruction* o : inst->operands())
      shapes.push_back(&o->shape());
    ShapeResult r = inferShape(op, shapes, inst->attrs());
    if (!r.ok()) {
      fail(opcode_at, "cannot infer the result shape of '" + spelling + "': " + r.error,
           "write the result shape before the opcode");
    }
    inst->mutableShape() = *r.shape;
  }
  HloInstruction* raw = inst.get();
  scope.pending.push_back(std::move(inst));
  return raw;
}

void Parser::parseOperands(Scope& scope, HloOpcode opcode, const Shape* shape,
                           HloInstruction* pending, std::vector<HloInstruction*>* operands,
                           size_t opcode_offset) {
  expect(Tok::kLParen, "to start the operand list");
  if (opcode == HloOpcode::kParameter) {
    scope.parameter_offsets.emplace_back(pending, tok_.begin);
    pending->setParameterNumber(parseNonNegative("a parameter number"));
    if (!shape) fail(opcode_offset, "the result shape of 'parameter' must be written");
  } else if (opcode == HloOpcode::kConstant) {
    if (!shape)
      fail(opcode_offset, "the result shape of 'constant' must be written",
           "e.g. f32[] constant(1)");
    pending->setLiteral(parseLiteralOf(*shape));
  } else if (!tok_.is(Tok::kRParen)) {
    do {
      operands->push_back(parseOperand(scope));
    } while (accept(Tok::kComma));
  }
  expect(Tok::kRParen, "to close the operand list");
}

HloInstruction* Parser::parseOperand(Scope& scope) {
  size_t at = tok_.begin;
  std::optional<Shape> typed;
  if (atShapeStart()) {
    if (tok_.is(Tok::kIdent) && !peek().is(Tok::kLSquare)) {
      failHere("'" + std::string(tok_.text) +
                   "' is an element type name and cannot be a bare operand name",
               "write %" + std::string(tok_.text));
    }
    typed = parseShape();
  }
  HloInstruction* operand;
  if (tok_.is(Tok::kIdent) && peek().is(Tok::kLParen)) {
    // A nested anonymous instruction `[shape] opcode(operands)`: re-lex from the operand start so
    // that the shape is read as the nested instruction's result shape.
    tok_ = lex_.lex(at);
    operand = parseInstructionRhs(scope, "", at, false);
    scope.anonymous.push_back(operand);
    return operand;
  }
  if (single_ && typed && (tok_.is(Tok::kComma) || tok_.is(Tok::kRParen))) {
    return newParameter(scope, *typed, "", at);  // single-instruction mode: a bare shape
  }
  if (!tok_.is(Tok::kName) && !tok_.is(Tok::kIdent)) expected("an operand");
  if (single_ && !scope.names.count(tok_.text)) {
    if (!typed) {
      failHere("operand '" + std::string(tok_.text) + "' is undefined",
               "in a single instruction, undefined operands become parameters: write their shape");
    }
    operand = newParameter(scope, *typed, std::string(tok_.text), at);
    advance();
    return operand;
  }
  operand = lookupInstruction(scope, tok_);
  advance();
  if (typed && !typed->compatible(operand->shape())) {
    fail(at, "operand '" + operand->name() + "' has shape " + operand->shape().shortStr() +
                 " but is written as " + typed->shortStr());
  }
  return operand;
}

// Single-instruction mode (docs/hlo.md section 5.2): `[ROOT] [name =] shape opcode(...)
// attrs` becomes a module with one computation; operands not defined yet become parameters.
void Parser::singleInstruction(HloModule& m) {
  single_ = true;
  auto comp = std::make_unique<HloComputation>("entry");
  comp->setLoc(locOf(tok_.begin));
  Scope scope;
  scope.comp = comp.get();
  if (tok_.isIdent("ROOT")) advance();
  size_t at = tok_.begin;
  std::string name;
  if (!atShapeStart()) {
    name = parseNameToken("instruction name");
    expect(Tok::kEqual, "after the instruction name");
  }
  HloInstruction* inst = parseInstructionRhs(scope, name, at, true);
  if (name.empty()) {
    scope.anonymous.push_back(inst);
  } else if (scope.names.count(inst->name())) {
    fail(at, "the instruction name '" + name + "' is also an operand name");
  } else {
    scope.names[inst->name()] = inst;
  }
  scope.root = inst;
  if (!tok_.is(Tok::kEof)) expected("end of input after the instruction");
  finishScope(scope);
  m.setName("module_" + inst->name());
  m.setEntry(m.addComputation(std::move(comp)));
}

HloInstruction* Parser::newParameter(Scope& scope, const Shape& shape, std::string name,
                                     size_t offset) {
  auto number = static_cast<int64_t>(scope.parameter_offsets.size());
  if (name.empty()) {
    name = "p" + std::to_string(number);
    while (scope.names.count(name))
      name += "_";
  }
  auto param = std::make_unique<HloInstruction>(HloOpcode::kParameter, std::move(name), shape);
  param->setParameterNumber(number);
  param->setLoc(locOf(offset));
  HloInstruction* raw = param.get();
  scope.parameter_offsets.emplace_back(raw, offset);
  scope.pending.push_back(std::move(param));
  scope.names[raw->name()] = raw;
  return raw;
}

HloInstruction* Parser::lookupInstruction(Scope& scope, const Token& t) {
  auto it = scope.names.find(t.text);
  if (it != scope.names.end()) return it->second;
  std::string hint;
  if (t.is(Tok::kIdent) && reservedWord(t.text)) {
    hint = "'" + std::string(t.text) + "' is a reserved word: write %" + std::string(t.text);
  } else {
    hint = "operands must be defined earlier in the same computation";
  }
  fail(t.begin,
       "unknown instruction '" + std::string(t.text) + "' in computation '" + scope.comp->name() +
           "'",
       hint);
}

HloComputation* Parser::lookupComputation(const Token& t) {
  auto it = computations_.find(std::string(t.text));
  if (it != computations_.end()) return it->second;
  fail(t.begin, "unknown computation '" + std::string(t.text) + "'",
       "computations must be defined before they are referenced (callees first)");
}

// ================================================================================================
// Attributes

void Parser::parseAttributes(Scope& scope, HloInstruction& inst, size_t opcode_offset) {
  std::unordered_set<std::string_view> seen;
  HloOpcode op = inst.opcode();
  while (tok_.is(Tok::kComma)) {
    advance();
    if (!tok_.is(Tok::kAttrName)) {
      expected("an attribute (name=value)",
               tok_.is(Tok::kIdent) && peek().is(Tok::kEqual)
                   ? "attribute names are followed by '=' with no space"
                   : "");
    }
    Token name_tok = tok_;
    if (!seen.insert(name_tok.text).second)
      failHere("duplicate attribute '" + std::string(name_tok.text) + "'");
    const AttrInfo* info = findAttribute(name_tok.text);
    if (op != HloOpcode::kUnknown) {
      if (!info) failHere("unknown attribute '" + std::string(name_tok.text) + "'");
      if (!attributeAllowed(op, name_tok.text)) {
        failHere("attribute '" + std::string(name_tok.text) + "' is not valid for '" +
                 inst.opcodeSpelling() + "'");
      }
    }
    if (info && op == HloOpcode::kUnknown && info->kind < AttrKind::kInt &&
        info->kind != AttrKind::kComputation && info->kind != AttrKind::kComputationList &&
        info->kind != AttrKind::kControlPredecessors) {
      info = nullptr;  // typed fields only carry meaning for known opcodes: keep the text
    }
    advance();
    if (!info) {
      size_t begin = tok_.begin;
      parseGenericValue();
      inst.attrs().raw.push_back(RawAttribute{
          std::string(name_tok.text), lex_.canonical(begin, prev_end_), locOf(name_tok.begin)});
      continue;
    }
    parseAttribute(scope, inst, name_tok, info->kind);
  }
  if (op == HloOpcode::kUnknown) return;
  forEachRequiredAttribute(op, [&](std::string_view required) {
    if (!seen.count(required)) {
      fail(opcode_offset, "'" + inst.opcodeSpelling() + "' requires the attribute '" +
                              std::string(required) + "'");
    }
  });
  if (op == HloOpcode::kConditional && !seen.count("branch_computations") &&
      !(seen.count("true_computation") && seen.count("false_computation"))) {
    fail(opcode_offset,
         "'conditional' requires branch_computations or true_computation and false_computation");
  }
}

void Parser::parseAttribute(Scope& scope, HloInstruction& inst, const Token& name_tok,
                            AttrKind kind) {
  HloAttributes& a = inst.attrs();
  std::string name(name_tok.text);
  auto list = [&] { return parseIntList(name); };
  switch (kind) {
    case AttrKind::kDimensions:
      a.dimensions = list();
      return;
    case AttrKind::kIndex:
      a.index = parseNonNegative("a tuple index");
      return;
    case AttrKind::kIotaDimension:
      a.iota_dimension = parseNonNegative("an iota dimension");
      return;
    case AttrKind::kSlice:
      a.slice = parseSlice();
      return;
    case AttrKind::kDynamicSliceSizes:
      a.dynamic_slice_sizes = list();
      return;
    case AttrKind::kPadding:
      a.padding = parsePadding();
      return;
    case AttrKind::kWindow:
      a.window = parseWindow();
      return;
    case AttrKind::kDimLabels:
      a.conv_dims = parseDimLabels();
      return;
    case AttrKind::kFeatureGroupCount:
      a.feature_group_count = parseInt("a feature group count");
      return;
    case AttrKind::kBatchGroupCount:
      a.batch_group_count = parseInt("a batch group count");
      return;
    case AttrKind::kLhsBatchDims:
      a.dot_dims->lhs_batch = list();
      return;
    case AttrKind::kLhsContractingDims:
      a.dot_dims->lhs_contracting = list();
      return;
    case AttrKind::kRhsBatchDims:
      a.dot_dims->rhs_batch = list();
      return;
    case AttrKind::kRhsContractingDims:
      a.dot_dims->rhs_contracting = list();
      return;
    case AttrKind::kDirection: {
      static constexpr std::pair<std::string_view, ComparisonDirection> kDirs[] = {
          {"EQ", ComparisonDirection::kEq}, {"NE", ComparisonDirection::kNe},
          {"GE", ComparisonDirection::kGe}, {"GT", ComparisonDirection::kGt},
          {"LE", ComparisonDirection::kLe}, {"LT", ComparisonDirection::kLt}};
      for (const auto& [text, dir] : kDirs) {
        if (tok_.isIdent(text)) {
          a.direction = dir;
          advance();
          return;
        }
      }
      expected("a comparison direction (EQ, NE, GE, GT, LE, LT)");
    }
    case AttrKind::kComparisonType: {
      static constexpr std::pair<std::string_view, ComparisonType> kTypes[] = {
          {"FLOAT", ComparisonType::kFloat},
          {"TOTALORDER", ComparisonType::kTotalOrder},
          {"SIGNED", ComparisonType::kSigned},
          {"UNSIGNED", ComparisonType::kUnsigned}};
      for (const auto& [text, type] : kTypes) {
        if (tok_.isIdent(text)) {
          a.comparison_type = type;
          advance();
          return;
        }
      }
      expected("a comparison type (FLOAT, TOTALORDER, SIGNED, UNSIGNED)");
    }
    case AttrKind::kExponentBits:
      a.exponent_bits = parseInt("a number of exponent bits");
      return;
    case AttrKind::kMantissaBits:
      a.mantissa_bits = parseInt("a number of mantissa bits");
      return;
    case AttrKind::kIsStable:
      a.is_stable = parseBool();
      return;
    case AttrKind::kComputation: {
      CalledComputations called{name, {}, false};
      if (tok_.is(Tok::kLBrace)) {
        called.computations.push_back(parseInlineComputation());
      } else {
        if (!tok_.is(Tok::kName) && !tok_.is(Tok::kIdent)) expected("a computation name");
        called.computations.push_back(lookupComputation(tok_));
        advance();
      }
      a.called.push_back(std::move(called));
      return;
    }
    case AttrKind::kComputationList: {
      CalledComputations called{name, {}, true};
      expect(Tok::kLBrace, "to start the computation list");
      if (!tok_.is(Tok::kRBrace)) {
        do {
          if (!tok_.is(Tok::kName) && !tok_.is(Tok::kIdent)) expected("a computation name");
          called.computations.push_back(lookupComputation(tok_));
          advance();
        } while (accept(Tok::kComma));
      }
      expect(Tok::kRBrace, "to close the computation list");
      a.called.push_back(std::move(called));
      return;
    }
    case AttrKind::kControlPredecessors: {
      expect(Tok::kLBrace, "to start the control predecessors");
      if (!tok_.is(Tok::kRBrace)) {
        do {
          if (!tok_.is(Tok::kName) && !tok_.is(Tok::kIdent)) expected("an instruction name");
          inst.controlPredecessors().push_back(lookupInstruction(scope, tok_));
          advance();
        } while (accept(Tok::kComma));
      }
      expect(Tok::kRBrace, "to close the control predecessors");
      return;
    }
    default:
      break;
  }
  size_t begin = tok_.begin;
  std::string value;
  if (kind == AttrKind::kFrontendAttributes) {
    value = parseFrontendAttributes();
  } else if (kind == AttrKind::kBackendConfig && tok_.is(Tok::kLBrace)) {
    size_t end = lex_.skipJsonDict(tok_.begin);
    value = lex_.canonical(begin, end, /*json=*/true);
    tok_ = lex_.lex(end);
    prev_end_ = end;
  } else {
    parseRawValue(kind, name);
    value = lex_.canonical(begin, prev_end_);
  }
  if (name == "api_version" && value == "API_VERSION_UNSPECIFIED" && warnings_) {
    warnings_->report(
        makeWarning(lex_.file().name(), locOf(name_tok.begin),
                    "api_version=API_VERSION_UNSPECIFIED is rejected by current XLA; accepted as "
                    "PyTorch/XLA dumps use it",
                    "write API_VERSION_ORIGINAL"));
  }
  a.raw.push_back(RawAttribute{name, std::move(value), locOf(name_tok.begin)});
}

void Parser::parseRawValue(AttrKind kind, std::string_view name) {
  switch (kind) {
    case AttrKind::kInt:
      parseInt("an integer");
      return;
    case AttrKind::kFloat: {
      uint64_t payload;
      bool finite;
      parseFloatValue(&payload, &finite);
      return;
    }
    case AttrKind::kBool:
      parseBool();
      return;
    case AttrKind::kBoolOrBoolList:
      if (accept(Tok::kLBrace)) {
        if (!tok_.is(Tok::kRBrace)) {
          do {
            parseBool();
          } while (accept(Tok::kComma));
        }
        expect(Tok::kRBrace);
      } else {
        parseBool();
      }
      return;
    case AttrKind::kString:
    case AttrKind::kBackendConfig:
      if (!tok_.is(Tok::kString)) expected("a string for " + std::string(name));
      advance();
      return;
    case AttrKind::kEnum:
      if (!tok_.is(Tok::kIdent)) expected("an identifier for " + std::string(name));
      advance();
      return;
    case AttrKind::kEnumList:
      expect(Tok::kLBrace);
      if (!tok_.is(Tok::kRBrace)) {
        do {
          if (!tok_.is(Tok::kIdent)) expected("an identifier");
          advance();
        } while (accept(Tok::kComma));
      }
      expect(Tok::kRBrace);
      return;
    case AttrKind::kIntList:
      parseIntList(name);
      return;
    case AttrKind::kIntListList:
      expect(Tok::kLBrace);
      if (!tok_.is(Tok::kRBrace)) {
        do {
          parseIntList(name);
        } while (accept(Tok::kComma));
      }
      expect(Tok::kRBrace);
      return;
    case AttrKind::kReplicaGroups:
      parseReplicaGroups();
      return;
    case AttrKind::kShape:
      parseShape();
      return;
    case AttrKind::kShapeList:
      expect(Tok::kLBrace);
      if (!tok_.is(Tok::kRBrace)) {
        do {
          parseShape();
        } while (accept(Tok::kComma));
      }
      expect(Tok::kRBrace);
      return;
    case AttrKind::kSharding:
      parseSharding();
      return;
    case AttrKind::kShapedLiteral: {
      Shape shape = parseShape();
      parseLiteralOf(shape);
      return;
    }
    default:
      parseBalanced();
      return;
  }
}

// A balanced bracket group ({...}, [...], (...)) of any tokens.
void Parser::parseBalanced() {
  if (!tok_.is(Tok::kLBrace) && !tok_.is(Tok::kLSquare) && !tok_.is(Tok::kLParen)) expected("'{'");
  std::vector<Tok> stack;
  do {
    switch (tok_.kind) {
      case Tok::kLBrace:
        stack.push_back(Tok::kRBrace);
        break;
      case Tok::kLSquare:
        stack.push_back(Tok::kRSquare);
        break;
      case Tok::kLParen:
        stack.push_back(Tok::kRParen);
        break;
      case Tok::kRBrace:
      case Tok::kRSquare:
      case Tok::kRParen:
        if (tok_.kind != stack.back()) expected(std::string(tokName(stack.back())));
        stack.pop_back();
        break;
      case Tok::kEof:
        expected(std::string(tokName(stack.back())));
      default:
        break;
    }
    if (stack.size() > static_cast<size_t>(kMaxNestingDepth)) failHere("nesting is too deep");
    advance();
  } while (!stack.empty());
}

// The value of an attribute tacit does not know (on an unknown opcode): adjacent tokens and
// balanced groups up to the next ',' or the end of the instruction.
void Parser::parseGenericValue() {
  bool first = true;
  while (first || !tok_.space_before) {
    switch (tok_.kind) {
      case Tok::kLBrace:
      case Tok::kLSquare:
      case Tok::kLParen:
        parseBalanced();
        break;
      case Tok::kComma:
      case Tok::kRBrace:
      case Tok::kRSquare:
      case Tok::kRParen:
      case Tok::kEof:
        if (first) expected("an attribute value");
        return;
      default:
        advance();
        break;
    }
    first = false;
  }
}

std::vector<SliceDim> Parser::parseSlice() {
  std::vector<SliceDim> dims;
  expect(Tok::kLBrace, "to start the slice");
  if (!tok_.is(Tok::kRBrace)) {
    do {
      if (dims.size() >= static_cast<size_t>(kMaxRank)) failHere("slice has too many dimensions");
      expect(Tok::kLSquare, "to start a slice range [start:limit:stride]");
      SliceDim d;
      d.start = parseInt("a slice start");
      expect(Tok::kColon, "in the slice range");
      d.limit = parseInt("a slice limit");
      if (accept(Tok::kColon)) d.stride = parseInt("a slice stride");
      expect(Tok::kRSquare, "to close the slice range");
      dims.push_back(d);
    } while (accept(Tok::kComma));
  }
  expect(Tok::kRBrace, "to close the slice");
  return dims;
}

namespace {

// "1_2x-3_4_1" -> {{1,2,0}, {-3,4,1}}; the lexer guarantees the form.
// Returns false if a number does not fit in 64 bits.
bool splitPad(std::string_view text, std::vector<std::vector<int64_t>>* out) {
  for (std::string_view dim : split(text, 'x')) {
    std::vector<int64_t> parts;
    for (std::string_view p : split(dim, '_')) {
      errno = 0;
      parts.push_back(std::strtoll(std::string(p).c_str(), nullptr, 10));
      if (errno == ERANGE) return false;
    }
    out->push_back(std::move(parts));
  }
  return true;
}

}  // namespace

std::vector<PadDim> Parser::parsePadding() {
  std::vector<PadDim> dims;
  if (!tok_.is(Tok::kPad)) return dims;  // rank 0: `padding=` with nothing after it
  if (tok_.text.size() > 4096) failHere("padding is too long");
  std::vector<std::vector<int64_t>> split_dims;
  if (!splitPad(tok_.text, &split_dims)) failHere("padding value out of range");
  for (const auto& parts : split_dims) {
    if (parts.size() == 3 && parts[2] < 0) failHere("interior padding must be non-negative");
    dims.push_back(PadDim{parts[0], parts[1], parts.size() == 3 ? parts[2] : 0});
  }
  if (dims.size() > static_cast<size_t>(kMaxRank)) failHere("padding has too many dimensions");
  advance();
  return dims;
}

std::vector<WindowDim> Parser::parseWindow() {
  expect(Tok::kLBrace, "to start the window");
  std::vector<int64_t> size, stride, lhs_dilate, rhs_dilate, reversal;
  std::vector<std::vector<int64_t>> pad;
  std::unordered_set<std::string_view> seen;
  auto dxd = [&](std::string_view field) {
    std::vector<int64_t> v;
    if (tok_.is(Tok::kInt)) {
      v.push_back(tok_.int_value);
    } else if (tok_.is(Tok::kDxD)) {
      if (tok_.text.size() > 4096) failHere("window is too long");
      for (std::string_view p : split(tok_.text, 'x')) {
        errno = 0;
        long long n = std::strtoll(std::string(p).c_str(), nullptr, 10);
        if (errno == ERANGE) failHere("window value out of range");
        v.push_back(n);
      }
    } else {
      expected("a value like 3 or 3x3 for window " + std::string(field));
    }
    advance();
    return v;
  };
  size_t begin = tok_.begin;
  while (!tok_.is(Tok::kRBrace)) {
    if (!tok_.is(Tok::kAttrName))
      expected("a window field (size=, stride=, pad=, lhs_dilate=, rhs_dilate=, rhs_reversal=)");
    std::string_view field = tok_.text;
    if (!seen.insert(field).second) failHere("duplicate window field '" + std::string(field) + "'");
    advance();
    if (field == "size") {
      size = dxd(field);
    } else if (field == "stride") {
      stride = dxd(field);
    } else if (field == "lhs_dilate") {
      lhs_dilate = dxd(field);
    } else if (field == "rhs_dilate") {
      rhs_dilate = dxd(field);
    } else if (field == "rhs_reversal") {
      reversal = dxd(field);
    } else if (field == "pad") {
      if (!tok_.is(Tok::kPad)) expected("a padding like 1_1x0_0");
      if (tok_.text.size() > 4096 || !splitPad(tok_.text, &pad))
        failHere("window padding out of range");
      for (const auto& p : pad) {
        if (p.size() != 2) failHere("window padding is lo_hi per dimension");
      }
      advance();
    } else {
      fail(prev_end_ - field.size() - 1, "unknown window field '" + std::string(field) + "'");
    }
  }
  advance();
  if (seen.empty()) return {};
  if (size.empty()) fail(begin, "window requires 'size'");
  size_t rank = size.size();
  if (rank > static_cast<size_t>(kMaxRank)) fail(begin, "window has too many dimensions");
  auto check = [&](size_t n, std::string_view field) {
    if (n != 0 && n != rank) {
      fail(begin, "window " + std::string(field) + " has " + std::to_string(n) +
                      " dimensions but size has " + std::to_string(rank));
    }
  };
  check(stride.size(), "stride");
  check(pad.size(), "pad");
  check(lhs_dilate.size(), "lhs_dilate");
  check(rhs_dilate.size(), "rhs_dilate");
  check(reversal.size(), "rhs_reversal");
  std::vector<WindowDim> dims(rank);
  for (size_t i = 0; i < rank; ++i) {
    WindowDim& d = dims[i];
    d.size = size[i];
    if (!stride.empty()) d.stride = stride[i];
    if (!pad.empty()) {
      d.pad_lo = pad[i][0];
      d.pad_hi = pad[i][1];
    }
    if (!lhs_dilate.empty()) d.lhs_dilation = lhs_dilate[i];
    if (!rhs_dilate.empty()) d.rhs_dilation = rhs_dilate[i];
    if (!reversal.empty()) {
      if (reversal[i] != 0 && reversal[i] != 1)
        fail(begin, "window rhs_reversal values are 0 or 1");
      d.reversal = reversal[i] == 1;
    }
  }
  return dims;
}

ConvDims Parser::parseDimLabels() {
  if (!tok_.is(Tok::kDimLabels)) expected("dimension labels like b01f_01io->b01f");
  size_t at = tok_.begin;
  std::string_view text = tok_.text;
  size_t underscore = text.find('_');
  size_t arrow = text.find("->");
  std::string_view lhs = text.substr(0, underscore);
  std::string_view rhs = text.substr(underscore + 1, arrow - underscore - 1);
  std::string_view out = text.substr(arrow + 2);
  if (lhs.size() != rhs.size() || lhs.size() != out.size()) {
    fail(at, "dimension labels must have the same rank for input, kernel and output");
  }
  int64_t spatial = static_cast<int64_t>(lhs.size()) - 2;
  if (spatial < 0 || spatial > kMaxRank) fail(at, "malformed dimension labels");
  // Assigns each label character to its dimension number; every label must appear exactly once.
  auto assign = [&](std::string_view labels, char a, char b, int64_t* da, int64_t* db,
                    std::vector<int64_t>* sp, std::string_view part) {
    *da = -1;
    *db = -1;
    sp->assign(static_cast<size_t>(spatial), -1);
    for (size_t i = 0; i < labels.size(); ++i) {
      char c = labels[i];
      auto pos = static_cast<int64_t>(i);
      int64_t* slot = nullptr;
      if (c == a) {
        slot = da;
      } else if (c == b) {
        slot = db;
      } else if (c >= '0' && c <= '9' && c - '0' < spatial) {
        slot = &(*sp)[static_cast<size_t>(c - '0')];
      } else {
        fail(at, "unexpected label '" + std::string(1, c) + "' in the " + std::string(part) +
                     " dimension labels");
      }
      if (*slot != -1)
        fail(at, "label '" + std::string(1, c) + "' appears twice in the " + std::string(part) +
                     " labels");
      *slot = pos;
    }
  };
  ConvDims d;
  assign(lhs, 'b', 'f', &d.input_batch, &d.input_feature, &d.input_spatial, "input");
  assign(rhs, 'i', 'o', &d.kernel_input_feature, &d.kernel_output_feature, &d.kernel_spatial,
         "kernel");
  assign(out, 'b', 'f', &d.output_batch, &d.output_feature, &d.output_spatial, "output");
  advance();
  return d;
}

void Parser::parseSharding() {
  DepthGuard guard(*this, tok_.begin);
  expect(Tok::kLBrace, "to start the sharding");
  if (accept(Tok::kRBrace)) return;  // empty tuple sharding
  if (tok_.is(Tok::kLBrace)) {
    do {
      parseSharding();
    } while (accept(Tok::kComma));
    expect(Tok::kRBrace, "to close the tuple sharding");
    return;
  }
  parseSingleSharding();
  expect(Tok::kRBrace, "to close the sharding");
}

void Parser::parseSingleSharding() {
  auto intList = [&] {
    expect(Tok::kLSquare);
    do {
      parseInt("an integer");
    } while (accept(Tok::kComma));
    expect(Tok::kRSquare);
  };
  while (!tok_.is(Tok::kRBrace)) {
    if (tok_.is(Tok::kComma)) failHere("sharding items are separated by spaces, not commas");
    if (tok_.isIdent("replicated") || tok_.isIdent("maximal") || tok_.isIdent("manual") ||
        tok_.isIdent("unknown") || tok_.isIdent("unreduced") ||
        tok_.isIdent("last_tile_dim_replicate")) {
      advance();
    } else if (tok_.isIdent("shard_as") || tok_.isIdent("shard_like")) {
      advance();
      parseInt("a sharding group id");
    } else if (tok_.is(Tok::kAttrName) && tok_.text == "device") {
      advance();
      parseInt("a device number");
    } else if (tok_.is(Tok::kAttrName) && tok_.text == "devices") {
      advance();
      intList();
      if (accept(Tok::kLeq)) {
        intList();
        if (tok_.isIdent("T") && peek().is(Tok::kLParen)) {
          advance();
          expect(Tok::kLParen);
          do {
            parseInt("a permutation index");
          } while (accept(Tok::kComma));
          expect(Tok::kRParen);
        }
      } else {
        do {
          parseInt("a device number");
          if (!tok_.is(Tok::kComma) || !peek().is(Tok::kInt)) break;
          advance();
        } while (true);
      }
    } else if (tok_.is(Tok::kAttrName) &&
               (tok_.text == "last_tile_dims" || tok_.text == "metadata")) {
      advance();
      parseBalanced();
    } else {
      expected(
          "a sharding item (replicated, maximal, manual, device=, devices=, "
          "last_tile_dim_replicate, ...)");
    }
  }
}

void Parser::parseReplicaGroups() {
  if (tok_.is(Tok::kLSquare)) {  // iota form [G,S]<=[N] or [G,S]<=[a,b]T(1,0)
    parseBalanced();
    expect(Tok::kLeq, "in the iota replica groups");
    parseBalanced();
    if (tok_.isIdent("T") && peek().is(Tok::kLParen) && !tok_.space_before) {
      advance();
      parseBalanced();
    }
    return;
  }
  parseRawValue(AttrKind::kIntListList, "replica_groups");
}

std::string Parser::parseFrontendAttributes() {
  expect(Tok::kLBrace, "to start the attributes");
  std::vector<std::string> items;
  if (!tok_.is(Tok::kRBrace)) {
    do {
      if (!tok_.is(Tok::kAttrName)) expected("key=value");
      std::string item = std::string(tok_.text) + "=";
      advance();
      if (tok_.is(Tok::kString)) {
        item += tok_.text;
        advance();
      } else if (tok_.is(Tok::kLBrace)) {
        size_t end = lex_.skipJsonDict(tok_.begin);
        item += lex_.canonical(tok_.begin, end, /*json=*/true);
        tok_ = lex_.lex(end);
        prev_end_ = end;
      } else {
        expected("a string or a {...} value");
      }
      items.push_back(std::move(item));
    } while (accept(Tok::kComma));
  }
  expect(Tok::kRBrace, "to close the attributes");
  return "{" + join(items, ",") + "}";
}

Shape Parser::shapeOnly() {
  Shape s = parseShape();
  if (!tok_.is(Tok::kEof)) expected("end of input after the shape");
  return s;
}

Literal Parser::literalOnly(const Shape& shape) {
  Literal l = parseLiteralOf(shape);
  if (!tok_.is(Tok::kEof)) expected("end of input after the literal");
  return l;
}

}  // namespace

std::unique_ptr<HloModule> parseModule(std::string_view text, const std::string& filename,
                                       DiagnosticSink* warnings) {
  SourceFile file(filename, std::string(text));
  Parser parser(file, warnings);
  return parser.module();
}

std::vector<InputPart> splitInputFile(std::string_view text) {
  std::vector<InputPart> parts;
  size_t part_start = 0;
  uint32_t part_line = 1;
  uint32_t line = 1;
  size_t pos = 0;
  auto emit = [&](size_t end) {
    InputPart p;
    p.first_line = part_line;
    p.text.assign(part_line - 1, '\n');
    p.text.append(text.substr(part_start, end - part_start));
    parts.push_back(std::move(p));
  };
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    size_t end = eol == std::string_view::npos ? text.size() : eol;
    if (trim(text.substr(pos, end - pos)) == "// -----") {
      emit(pos);
      part_start = end == text.size() ? end : end + 1;
      part_line = line + 1;
    }
    pos = end == text.size() ? end : end + 1;
    ++line;
  }
  emit(text.size());
  return parts;
}

std::vector<std::unique_ptr<HloModule>> parseModules(std::string_view text,
                                                     const std::string& filename,
                                                     DiagnosticSink* warnings) {
  std::vector<std::unique_ptr<HloModule>> modules;
  for (const InputPart& part : splitInputFile(text))
    modules.push_back(parseModule(part.text, filename, warnings));
  return modules;
}

Shape parseShape(std::string_view text, const std::string& filename) {
  SourceFile file(filename, std::string(text));
  Parser parser(file);
  return parser.shapeOnly();
}

Literal parseLiteral(std::string_view text, const Shape& shape, const std::string& filename) {
  SourceFile file(filename, std::string(text));
  Parser parser(file);
  return parser.literalOnly(shape);
}

}  // namespace tacit::hlo
