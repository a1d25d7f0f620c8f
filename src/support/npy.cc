#include "support/npy.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "support/diagnostic.h"
#include "support/source.h"

namespace tacit {
namespace {

constexpr std::string_view kMagic = "\x93NUMPY";
constexpr int64_t kMaxElements = int64_t{1} << 36;  // 64 Gi elements: far beyond any real input

// A tiny reader for the Python-literal header dict: {'descr': '<f4', 'fortran_order': False,
// 'shape': (2, 3), }.
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& name) : text_(text), name_(name) {}

  void parse(std::string& descr, bool& fortran, std::vector<int64_t>& shape) {
    bool has_descr = false, has_fortran = false, has_shape = false;
    expect('{');
    while (true) {
      skipSpace();
      if (peek() == '}') break;
      std::string key = parseString();
      expect(':');
      if (key == "descr") {
        descr = parseString();
        has_descr = true;
      } else if (key == "fortran_order") {
        fortran = parseBool();
        has_fortran = true;
      } else if (key == "shape") {
        shape = parseShape();
        has_shape = true;
      } else {
        bad("unknown header key '" + key + "'");
      }
      skipSpace();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      skipSpace();
      if (peek() != '}') bad("expected ',' or '}' in header");
    }
    if (!has_descr || !has_fortran || !has_shape) {
      bad("header must have 'descr', 'fortran_order' and 'shape'");
    }
  }

 private:
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skipSpace() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_])))
      ++pos_;
  }
  void expect(char c) {
    skipSpace();
    if (peek() != c) bad(std::string("expected '") + c + "' in header");
    ++pos_;
  }
  std::string parseString() {
    skipSpace();
    char q = peek();
    if (q != '\'' && q != '"') bad("expected a quoted string in header");
    ++pos_;
    size_t start = pos_;
    while (pos_ < text_.size() && text_[pos_] != q)
      ++pos_;
    if (pos_ >= text_.size()) bad("unterminated string in header");
    std::string s(text_.substr(start, pos_ - start));
    ++pos_;
    return s;
  }
  bool parseBool() {
    skipSpace();
    if (text_.substr(pos_, 4) == "True") {
      pos_ += 4;
      return true;
    }
    if (text_.substr(pos_, 5) == "False") {
      pos_ += 5;
      return false;
    }
    bad("expected True or False for 'fortran_order'");
  }
  std::vector<int64_t> parseShape() {
    std::vector<int64_t> dims;
    expect('(');
    while (true) {
      skipSpace();
      if (peek() == ')') {
        ++pos_;
        return dims;
      }
      if (!std::isdigit(static_cast<unsigned char>(peek()))) bad("expected a dimension in 'shape'");
      int64_t v = 0;
      while (std::isdigit(static_cast<unsigned char>(peek()))) {
        v = v * 10 + (text_[pos_++] - '0');
        if (v > kMaxElements) bad("dimension too large in 'shape'");
      }
      if (peek() == 'L') ++pos_;  // Python 2 longs
      dims.push_back(v);
      skipSpace();
      if (peek() == ',') ++pos_;
    }
  }
  [[noreturn]] void bad(const std::string& what) const {
    fail(name_, {}, "malformed .npy file: " + what);
  }

  std::string_view text_;
  const std::string& name_;
  size_t pos_ = 0;
};

// Normalises a descr: byte order becomes '<' (multi-byte) or '|' (single byte or void).
std::string normaliseDescr(const std::string& d, bool& big_endian, const std::string& name) {
  if (d.size() < 3) fail(name, {}, "unsupported .npy dtype '" + d + "'");
  char order = d[0];
  char kind = d[1];
  std::string digits = d.substr(2);
  if (digits.size() > 2 ||  // item sizes are 1..16: longer digit strings would overflow stoi
      !std::all_of(digits.begin(), digits.end(), [](char c) { return std::isdigit(c); })) {
    fail(name, {}, "unsupported .npy dtype '" + d + "'");
  }
  int size = std::stoi(digits);
  if (std::string("<>|=").find(order) == std::string::npos || size <= 0 || size > 16) {
    fail(name, {}, "unsupported .npy dtype '" + d + "'");
  }
  if (std::string("biufcV").find(kind) == std::string::npos) {
    fail(name, {}, "unsupported .npy dtype '" + d + "'",
         "tacit reads booleans, integers, floats and raw 2-byte void (bf16) arrays");
  }
  big_endian = order == '>' && size > 1 && kind != 'V';
  bool single = size == 1 || kind == 'V';
  return std::string(1, single ? '|' : '<') + kind + digits;
}

}  // namespace

size_t NpyArray::itemSize() const {
  return descr.size() > 2 ? std::stoul(descr.substr(2)) : 0;
}

int64_t NpyArray::elementCount() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

NpyArray parseNpy(std::string_view bytes, const std::string& name) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != kMagic) {
    fail(name, {}, "not a .npy file (missing \\x93NUMPY magic)",
         "save arrays with numpy.save(); tacit reads .npy, not .npz or raw data");
  }
  int major = static_cast<unsigned char>(bytes[6]);
  size_t header_len = 0, header_start = 0;
  auto byte = [&](size_t i) { return static_cast<size_t>(static_cast<unsigned char>(bytes[i])); };
  if (major == 1) {
    header_len = byte(8) | (byte(9) << 8);
    header_start = 10;
  } else if (major == 2 || major == 3) {
    if (bytes.size() < 12) fail(name, {}, "malformed .npy file: truncated header");
    header_len = byte(8) | (byte(9) << 8) | (byte(10) << 16) | (byte(11) << 24);
    header_start = 12;
  } else {
    fail(name, {}, "unsupported .npy format version " + std::to_string(major));
  }
  if (header_start + header_len > bytes.size())
    fail(name, {}, "malformed .npy file: truncated header");

  NpyArray arr;
  bool fortran = false;
  HeaderReader(bytes.substr(header_start, header_len), name).parse(arr.descr, fortran, arr.shape);
  bool big_endian = false;
  arr.descr = normaliseDescr(arr.descr, big_endian, name);

  int64_t count = 1;
  for (int64_t d : arr.shape) {
    if (d != 0 && count > kMaxElements / d) fail(name, {}, "malformed .npy file: shape too large");
    count *= d;
  }
  size_t item = arr.itemSize();
  size_t data_bytes = static_cast<size_t>(count) * item;
  size_t data_start = header_start + header_len;
  if (bytes.size() - data_start != data_bytes) {
    fail(name, {},
         "malformed .npy file: expected " + std::to_string(data_bytes) +
             " bytes of data for shape and dtype '" + arr.descr + "', found " +
             std::to_string(bytes.size() - data_start));
  }
  arr.data.assign(bytes.begin() + static_cast<std::ptrdiff_t>(data_start), bytes.end());
  if (big_endian) {
    for (size_t i = 0; i < data_bytes; i += item)
      std::reverse(&arr.data[i], &arr.data[i + item]);
  }
  if (fortran && arr.shape.size() > 1) {
    // Column-major on disk: gather into C order. Element (i0..in) sits at sum(i_k * fstride_k).
    std::vector<uint8_t> c_order(arr.data.size());
    size_t rank = arr.shape.size();
    std::vector<int64_t> fstride(rank), idx(rank, 0);
    int64_t s = 1;
    for (size_t k = 0; k < rank; ++k) {
      fstride[k] = s;
      s *= arr.shape[k];
    }
    for (int64_t e = 0; e < count; ++e) {
      int64_t src = 0;
      for (size_t k = 0; k < rank; ++k)
        src += idx[k] * fstride[k];
      std::memcpy(&c_order[static_cast<size_t>(e) * item],
                  &arr.data[static_cast<size_t>(src) * item], item);
      for (size_t k = rank; k-- > 0;) {
        if (++idx[k] < arr.shape[k]) break;
        idx[k] = 0;
      }
    }
    arr.data = std::move(c_order);
  }
  return arr;
}

NpyArray readNpy(const std::string& path) {
  return parseNpy(readFile(path), path);
}

std::string serializeNpy(const NpyArray& array) {
  std::string dict = "{'descr': '" + array.descr + "', 'fortran_order': False, 'shape': (";
  for (size_t i = 0; i < array.shape.size(); ++i) {
    dict += std::to_string(array.shape[i]);
    if (array.shape.size() == 1 || i + 1 < array.shape.size()) dict += ", ";
  }
  dict += "), }";
  // The header (magic, version, length, dict, padding, '\n') is a multiple of 64 bytes.
  size_t prefix = 10;
  size_t total = prefix + dict.size() + 1;
  size_t padded = (total + 63) / 64 * 64;
  bool v2 = padded - prefix > 65535;
  if (v2) {
    prefix = 12;
    total = prefix + dict.size() + 1;
    padded = (total + 63) / 64 * 64;
  }
  dict.append(padded - total, ' ');
  dict += '\n';
  std::string out(kMagic);
  out += static_cast<char>(v2 ? 2 : 1);
  out += '\0';
  size_t len = dict.size();
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>((len >> 8) & 0xFF);
  if (v2) {
    out += static_cast<char>((len >> 16) & 0xFF);
    out += static_cast<char>((len >> 24) & 0xFF);
  }
  out += dict;
  out.append(reinterpret_cast<const char*>(array.data.data()), array.data.size());
  return out;
}

}  // namespace tacit
