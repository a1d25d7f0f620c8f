#include "stablehlo/dense.h"

#include <cerrno>
#include <cmath>
#include <cstdlib>
#include <cstring>

#include "hlo/float8.h"
#include "hlo/parser.h"
#include "hlo/printer.h"

namespace tacit::stablehlo {
namespace {

int hexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Writes `bits` (the element's width) into element `index` of an array literal.
void setBits(hlo::Literal& l, int64_t index, uint64_t bits) {
  const int size = hlo::byteSize(l.shape().elementType());
  std::memcpy(l.bytes() + index * size, &bits, static_cast<size_t>(size));  // little-endian host
}

struct ElementParser {
  const SourceFile& file;
  const Attr& dense;
  hlo::PrimitiveType type;

  [[noreturn]] void bad(size_t i, const std::string& message, std::string hint = {}) const {
    file.fail(static_cast<size_t>(dense.element_offsets[i]), message, std::move(hint));
  }

  void set(hlo::Literal& l, int64_t index, size_t i) const {
    const std::string& text = dense.elements[i];
    const std::string tname = std::string(hlo::primitiveTypeName(type));
    if (type == hlo::PrimitiveType::kPred) {
      if (text == "true" || text == "1") return l.setInt64(index, 1);
      if (text == "false" || text == "0") return l.setInt64(index, 0);
      bad(i, "expected true or false for an i1 element, got '" + text + "'");
    }
    if (text == "true" || text == "false") bad(i, "'" + text + "' is not a value of type " + tname);
    const bool hex = text.find("0x") != std::string::npos;
    if (hlo::isInteger(type)) {
      if (text.find('.') != std::string::npos)
        bad(i, "'" + text + "' is not an integer (the element type is " + tname + ")");
      errno = 0;
      const int bits = hlo::bitWidth(type);
      if (hlo::isUnsignedInteger(type) || hex) {
        if (text[0] == '-') {
          if (hlo::isUnsignedInteger(type))
            bad(i, "negative value " + text + " for unsigned type " + tname);
          long long v = std::strtoll(text.c_str(), nullptr, 16);
          if (errno == ERANGE) bad(i, "value " + text + " does not fit in " + tname);
          return l.setInt64(index, v);
        }
        unsigned long long v = std::strtoull(text.c_str(), nullptr, hex ? 16 : 10);
        if (errno == ERANGE || (bits < 64 && v >> bits != 0))
          bad(i, "value " + text + " does not fit in " + tname);
        return setBits(l, index, v);
      }
      long long v = std::strtoll(text.c_str(), nullptr, 10);
      const long long lo = bits >= 64 ? INT64_MIN : -(1LL << (bits - 1));
      const long long hi = bits >= 64 ? INT64_MAX : (1LL << (bits - 1)) - 1;
      if (errno == ERANGE || v < lo || v > hi)
        bad(i, "value " + text + " does not fit in " + tname,
            "the range of " + tname + " is " + std::to_string(lo) + ".." + std::to_string(hi));
      return l.setInt64(index, v);
    }
    if (!hlo::isFloat(type)) bad(i, "constants of type " + tname + " are not supported");
    if (hex) {  // the bit pattern of the element
      if (text[0] == '-') bad(i, "a bit pattern cannot be negative");
      errno = 0;
      unsigned long long v = std::strtoull(text.c_str(), nullptr, 16);
      const int bits = hlo::bitWidth(type);
      if (errno == ERANGE || (bits < 64 && v >> bits != 0))
        bad(i, "bit pattern " + text + " is wider than " + tname);
      return setBits(l, index, v);
    }
    const double v = std::strtod(text.c_str(), nullptr);
    if (std::isinf(v)) bad(i, "value " + text + " overflows", "write infinity as its bit pattern");
    if (auto format = hlo::minifloatFormat(type)) {
      uint8_t bits = 0;
      if (hlo::encodeMinifloat(*format, v, 0, &bits) != hlo::MinifloatStatus::kOk)
        bad(i, "value " + text + " is not representable in " + tname);
      return setBits(l, index, bits);
    }
    if (type == hlo::PrimitiveType::kF16 && std::fabs(v) > 65520)
      bad(i, "value " + text + " overflows f16");
    if (type == hlo::PrimitiveType::kF32 && std::fabs(v) > 3.4028235677973366e38)
      bad(i, "value " + text + " overflows f32");
    l.setDouble(index, v);
  }
};

}  // namespace

hlo::Literal denseLiteral(const SourceFile& file, const Attr& dense) {
  const hlo::Shape& shape = dense.type.shape;
  const hlo::PrimitiveType type = shape.elementType();
  const std::string where = dense.type.text;
  auto failHere = [&](const std::string& message, std::string hint = {}) {
    fail(file.name(), dense.loc, message, std::move(hint));
  };
  if (!shape.isArray()) failHere("a constant needs a tensor type");
  const int64_t count = shape.elementCount();
  if (hlo::isComplex(type)) failHere("complex constants are not supported");
  hlo::Literal out;
  if (dense.hex_bytes) {
    const std::string& hex = dense.elements[0];
    if (hex.size() < 2 || hex.substr(0, 2) != "0x" || hex.size() % 2 != 0)
      file.fail(static_cast<size_t>(dense.element_offsets[0]),
                "expected \"0x\" and an even number of hex digits");
    if (hlo::bitWidth(type) < 8)
      failHere("hex constants of sub-byte types are not supported", "write the elements out");
    const size_t bytes = (hex.size() - 2) / 2;
    const size_t size = static_cast<size_t>(hlo::byteSize(type));
    const bool splat = bytes == size && count != 1;
    if (splat ? count > hlo::kMaxSplatElements : count > hlo::kMaxLiteralElements)
      failHere("a constant of " + std::to_string(count) + " elements is above tacit's limit");
    if (!splat && bytes != size * static_cast<size_t>(count)) {
      failHere("the hex constant holds " + std::to_string(bytes) + " bytes; " + where + " needs " +
               std::to_string(size * static_cast<size_t>(count)));
    }
    std::vector<uint8_t> raw(bytes);
    for (size_t i = 0; i < bytes; ++i) {
      int hi = hexDigit(hex[2 + 2 * i]), lo = hexDigit(hex[3 + 2 * i]);
      if (hi < 0 || lo < 0)
        file.fail(static_cast<size_t>(dense.element_offsets[0]) + 3 + 2 * i,
                  "bad hex digit in a constant");
      raw[i] = static_cast<uint8_t>(hi * 16 + lo);
    }
    out = hlo::Literal(shape);
    for (int64_t e = 0; e < count; ++e)
      std::memcpy(out.bytes() + e * static_cast<int64_t>(size),
                  raw.data() + (splat ? 0 : e * static_cast<int64_t>(size)), size);
    return out;
  }
  const bool splat = dense.ints.empty() && dense.elements.size() == 1;
  if (splat) {
    if (count > hlo::kMaxSplatElements)
      failHere(
          "a splat constant of " + std::to_string(count) + " elements is above tacit's limit 2^20",
          "broadcast a scalar constant instead");
  } else if (dense.ints != shape.dims() &&
             !(dense.ints.empty() && dense.elements.empty() && count == 0)) {
    std::string dims;
    for (int64_t d : dense.ints)
      dims += (dims.empty() ? "" : "x") + std::to_string(d);
    failHere("the literal's shape [" + dims + "] does not match its type " + where,
             "nest the elements as the type's dimensions, or give one element for all");
  }
  out = hlo::Literal(shape);
  ElementParser parser{file, dense, type};
  if (splat) {
    parser.set(out, 0, 0);
    const size_t size = static_cast<size_t>(hlo::byteSize(type));
    for (int64_t e = 1; e < count; ++e)
      std::memcpy(out.bytes() + e * static_cast<int64_t>(size), out.bytes(), size);
  } else {
    for (int64_t e = 0; e < count; ++e)
      parser.set(out, e, static_cast<size_t>(e));
  }
  return out;
}

namespace {

std::string elementText(const hlo::Literal& l, int64_t index) {
  const hlo::PrimitiveType type = l.shape().elementType();
  if (type == hlo::PrimitiveType::kPred) return l.bytes()[index] ? "true" : "false";
  std::string text = hlo::literalElementText(l, index);
  if (!hlo::isFloat(type)) return text;
  if (text.find_first_of("ni") != std::string::npos) {  // nan, inf: MLIR writes the bits
    uint64_t bits = 0;
    const int size = hlo::byteSize(type);
    std::memcpy(&bits, l.bytes() + index * size, static_cast<size_t>(size));
    static const char* digits = "0123456789ABCDEF";
    std::string hex;
    for (int d = size * 2 - 1; d >= 0; --d)
      hex += digits[(bits >> (4 * d)) & 0xF];
    return "0x" + hex;
  }
  if (text.find_first_of(".e") == std::string::npos) text += ".0";  // MLIR floats need a '.'
  if (text.find('.') == std::string::npos) {
    size_t e = text.find('e');  // 1e+10 -> 1.0e+10
    text.insert(e, ".0");
  }
  return text;
}

}  // namespace

std::string denseText(const hlo::Literal& l) {
  const int64_t count = l.elementCount();
  const size_t size = static_cast<size_t>(hlo::byteSize(l.shape().elementType()));
  if (count == 0) return "dense<>";
  bool splat = true;
  for (int64_t e = 1; e < count && splat; ++e)
    splat = std::memcmp(l.bytes(), l.bytes() + e * static_cast<int64_t>(size), size) == 0;
  // A splat reads back only up to the splat limit; a larger constant of one value is written out.
  if (l.shape().rank() == 0 || (splat && count <= hlo::kMaxSplatElements))
    return "dense<" + elementText(l, 0) + ">";
  if (count > hlo::kMaxSplatElements &&
      size == static_cast<size_t>(hlo::bitWidth(l.shape().elementType()) / 8)) {
    // MLIR's raw form for large constants: the bytes, little-endian, as hex.
    static const char* digits = "0123456789ABCDEF";
    std::string out = "dense<\"0x";
    out.reserve(out.size() + l.byteCount() * 2 + 3);
    for (size_t i = 0; i < l.byteCount(); ++i) {
      out += digits[l.bytes()[i] >> 4];
      out += digits[l.bytes()[i] & 0xF];
    }
    return out + "\">";
  }
  std::string out = "dense<";
  const std::vector<int64_t>& dims = l.shape().dims();
  std::vector<int64_t> index(dims.size(), 0);
  // Row-major walk, opening and closing a bracket per dimension.
  out.append(dims.size(), '[');
  for (int64_t e = 0; e < count; ++e) {
    out += elementText(l, e);
    int64_t d = static_cast<int64_t>(dims.size()) - 1;
    int closed = 0;
    while (d >= 0 && ++index[static_cast<size_t>(d)] == dims[static_cast<size_t>(d)]) {
      index[static_cast<size_t>(d)] = 0;
      ++closed;
      --d;
    }
    out.append(static_cast<size_t>(closed), ']');
    if (d >= 0) {
      out += ", ";
      out.append(static_cast<size_t>(closed), '[');
    }
  }
  return out + ">";
}

}  // namespace tacit::stablehlo
