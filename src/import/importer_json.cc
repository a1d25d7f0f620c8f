// A small JSON reader for the shim's record (written by Python's json module, so well-formed;
// any malformation is an internal error, not a user's).
#include <stdexcept>

#include "import/importer_internal.h"

namespace tacit::importer {
namespace {

class Reader {
 public:
  explicit Reader(std::string_view text) : text_(text) {}

  Json document() {
    Json v = value(0);
    skipSpace();
    if (pos_ != text_.size()) error("trailing characters");
    return v;
  }

 private:
  static constexpr int kMaxDepth = 200;

  [[noreturn]] void error(const std::string& what) const {
    throw std::runtime_error("shim record: " + what + " at offset " + std::to_string(pos_));
  }

  void skipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\n' ||
                                   text_[pos_] == '\t' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) != word) return false;
    pos_ += word.size();
    return true;
  }

  Json value(int depth) {
    if (depth > kMaxDepth) error("nesting too deep");
    skipSpace();
    if (pos_ >= text_.size()) error("unexpected end");
    char c = text_[pos_];
    Json v;
    if (c == '{') return object(depth);
    if (c == '[') return array(depth);
    if (c == '"') {
      v.kind = Json::Kind::kString;
      v.s = string();
      return v;
    }
    if (consume("null")) return v;
    if (consume("true") || consume("false")) {
      v.kind = Json::Kind::kBool;
      v.b = text_[pos_ - 1] == 'e' && text_[pos_ - 2] == 'u';
      return v;
    }
    return number();
  }

  Json object(int depth) {
    Json v;
    v.kind = Json::Kind::kObject;
    ++pos_;
    skipSpace();
    if (consume("}")) return v;
    while (true) {
      skipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') error("expected a key");
      std::string key = string();
      skipSpace();
      if (!consume(":")) error("expected ':'");
      v.fields.push_back(JsonField{std::move(key), value(depth + 1)});
      skipSpace();
      if (consume("}")) return v;
      if (!consume(",")) error("expected ',' or '}'");
    }
  }

  Json array(int depth) {
    Json v;
    v.kind = Json::Kind::kArray;
    ++pos_;
    skipSpace();
    if (consume("]")) return v;
    while (true) {
      v.items.push_back(value(depth + 1));
      skipSpace();
      if (consume("]")) return v;
      if (!consume(",")) error("expected ',' or ']'");
    }
  }

  Json number() {
    size_t start = pos_;
    bool is_float = false;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size()) {
      char c = text_[pos_];
      if (c == '.' || c == 'e' || c == 'E' || c == '+') {
        is_float = true;
      } else if (!(c >= '0' && c <= '9') && c != '-') {
        break;
      }
      ++pos_;
    }
    std::string lit(text_.substr(start, pos_ - start));
    if (lit.empty() || lit == "-") error("expected a value");
    Json v;
    try {
      if (is_float) {
        v.kind = Json::Kind::kDouble;
        v.d = std::stod(lit);
      } else {
        v.kind = Json::Kind::kInt;
        v.i = std::stoll(lit);
      }
    } catch (const std::exception&) {
      // Python ints are unbounded; an out-of-range one stays a (lossy) double.
      v.kind = Json::Kind::kDouble;
      v.d = std::strtod(lit.c_str(), nullptr);
    }
    return v;
  }

  static void appendUtf8(std::string& out, uint32_t cp) {
    if (cp < 0x80) {
      out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      out += static_cast<char>(0xC0 | (cp >> 6));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      out += static_cast<char>(0xE0 | (cp >> 12));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      out += static_cast<char>(0xF0 | (cp >> 18));
      out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  uint32_t hex4() {
    if (pos_ + 4 > text_.size()) error("bad \\u escape");
    uint32_t v = 0;
    for (int k = 0; k < 4; ++k) {
      char c = text_[pos_++];
      v <<= 4;
      if (c >= '0' && c <= '9')
        v |= static_cast<uint32_t>(c - '0');
      else if (c >= 'a' && c <= 'f')
        v |= static_cast<uint32_t>(c - 'a' + 10);
      else if (c >= 'A' && c <= 'F')
        v |= static_cast<uint32_t>(c - 'A' + 10);
      else
        error("bad \\u escape");
    }
    return v;
  }

  std::string string() {
    ++pos_;  // opening quote
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) error("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return out;
      if (c != '\\') {
        out += c;
        continue;
      }
      if (pos_ >= text_.size()) error("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case 'n':
          out += '\n';
          break;
        case 't':
          out += '\t';
          break;
        case 'r':
          out += '\r';
          break;
        case 'b':
          out += '\b';
          break;
        case 'f':
          out += '\f';
          break;
        case 'u': {
          uint32_t cp = hex4();
          if (cp >= 0xD800 && cp < 0xDC00 && text_.substr(pos_, 2) == "\\u") {
            pos_ += 2;
            uint32_t lo = hex4();
            cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
          }
          appendUtf8(out, cp);
          break;
        }
        default:
          out += e;
          break;
      }
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

}  // namespace

const Json* Json::find(std::string_view key) const {
  for (const auto& [k, v] : fields) {
    if (k == key) return &v;
  }
  return nullptr;
}

Json parseJson(std::string_view text) {
  return Reader(text).document();
}

}  // namespace tacit::importer
