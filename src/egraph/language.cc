#include "egraph/language.h"

#include <algorithm>
#include <cctype>

namespace tacit::egraph {

namespace {

constexpr size_t kAttrChunkBytes = 64 * 1024;

uint32_t hashBytes(std::string_view s) {
  uint64_t h = s.size();
  size_t i = 0;
  for (; i + 8 <= s.size(); i += 8) {
    uint64_t w;
    std::memcpy(&w, s.data() + i, 8);
    h = detail::hashMix(h, w);
  }
  uint64_t tail = 0;
  std::memcpy(&tail, s.data() + i, s.size() - i);
  h = detail::hashMix(h, tail);
  return static_cast<uint32_t>(detail::hashFinish(h));
}

uint64_t readLE(const char* p, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; ++i)
    v |= uint64_t{static_cast<unsigned char>(p[i])} << (8 * i);
  return v;
}

bool validOpName(std::string_view name) {
  if (name.empty()) return false;
  for (char c : name) {
    if (std::isspace(static_cast<unsigned char>(c)) || c == '(' || c == ')' || c == '[' ||
        c == ']' || c == '?' || c == '"')
      return false;
  }
  return true;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// AttrWriter / AttrReader

AttrWriter& AttrWriter::str(std::string_view v) {
  if (v.size() > UINT32_MAX) throw EGraphError("AttrWriter::str: string too long");
  appendLE(v.size(), 4);
  bytes_.append(v);
  return *this;
}

const char* AttrReader::take(size_t n) {
  if (bytes_.size() - pos_ < n)
    throw EGraphError("AttrReader: attribute payload too short (wanted " + std::to_string(n) +
                      " more bytes at offset " + std::to_string(pos_) + " of " +
                      std::to_string(bytes_.size()) + ")");
  const char* p = bytes_.data() + pos_;
  pos_ += n;
  return p;
}

uint8_t AttrReader::u8() {
  return static_cast<uint8_t>(*take(1));
}

int64_t AttrReader::i64() {
  return static_cast<int64_t>(readLE(take(8), 8));
}

std::vector<int64_t> AttrReader::ints() {
  size_t n = readLE(take(4), 4);
  if (n > (bytes_.size() - pos_) / 8) throw EGraphError("AttrReader: list length exceeds payload");
  std::vector<int64_t> out(n);
  for (auto& x : out)
    x = i64();
  return out;
}

std::string_view AttrReader::str() {
  size_t n = readLE(take(4), 4);
  const char* p = take(n);
  return {p, n};
}

void AttrReader::done() const {
  if (!atEnd())
    throw EGraphError("AttrReader: " + std::to_string(bytes_.size() - pos_) +
                      " unread bytes left in attribute payload");
}

// ---------------------------------------------------------------------------------------------
// AttrTable

AttrTable::AttrTable() {
  views_.emplace_back();
}  // kNoAttr = ""

std::optional<AttrId> AttrTable::find(std::string_view bytes) const {
  if (bytes.empty()) return kNoAttr;
  uint32_t h = hashBytes(bytes);
  uint32_t id = table_.find(h, [&](uint32_t cand) { return views_[cand] == bytes; });
  if (id == detail::IdTable::kEmpty) return std::nullopt;
  return AttrId(id);
}

AttrId AttrTable::intern(std::string_view bytes) {
  if (bytes.empty()) return kNoAttr;
  uint32_t h = hashBytes(bytes);
  uint32_t id = table_.find(h, [&](uint32_t cand) { return views_[cand] == bytes; });
  if (id != detail::IdTable::kEmpty) return AttrId(id);
  if (views_.size() >= UINT32_MAX - 1) throw EGraphError("AttrTable: too many attributes");
  // Copy into the arena: a fresh chunk when the current one is too small (big payloads get a
  // chunk of their own), so earlier views are never moved.
  if (chunks_.empty() || chunk_size_ - chunk_used_ < bytes.size()) {
    size_t size = std::max(kAttrChunkBytes, bytes.size());
    chunks_.push_back(std::make_unique_for_overwrite<char[]>(size));
    chunk_size_ = size;
    chunk_used_ = 0;
    chunk_bytes_ += size;
  }
  char* dst = chunks_.back().get() + chunk_used_;
  std::memcpy(dst, bytes.data(), bytes.size());
  chunk_used_ += bytes.size();
  auto new_id = static_cast<uint32_t>(views_.size());
  views_.emplace_back(dst, bytes.size());
  table_.insert(h, new_id);
  return AttrId(new_id);
}

AttrId AttrTable::internInt(int64_t v) {
  scratch_.clear();
  return intern(scratch_.i64(v).bytes());
}

AttrId AttrTable::internInts(std::span<const int64_t> v) {
  scratch_.clear();
  return intern(scratch_.ints(v).bytes());
}

std::string_view AttrTable::bytes(AttrId id) const {
  if (!contains(id))
    throw EGraphError("attribute id " + std::to_string(id.value) + " is not in this table (" +
                      std::to_string(views_.size()) + " attributes)");
  return views_[id.value];
}

int64_t AttrTable::intValue(AttrId id) const {
  AttrReader r(bytes(id));
  int64_t v = r.i64();
  r.done();
  return v;
}

std::vector<int64_t> AttrTable::intsValue(AttrId id) const {
  AttrReader r(bytes(id));
  auto v = r.ints();
  r.done();
  return v;
}

size_t AttrTable::memoryBytes() const {
  return chunk_bytes_ + views_.capacity() * sizeof(std::string_view) + table_.memoryBytes() +
         chunks_.capacity() * sizeof(void*);
}

// ---------------------------------------------------------------------------------------------
// Language

OpId Language::addOp(std::string name, int arity) {
  if (!validOpName(name))
    throw EGraphError("invalid operator name '" + name +
                      "': it must be non-empty without whitespace, brackets, '?' or quotes");
  if (arity < kVariadic) throw EGraphError("operator '" + name + "': invalid arity");
  if (by_name_.count(name)) throw EGraphError("operator '" + name + "' is already registered");
  if (ops_.size() >= UINT32_MAX - 1) throw EGraphError("too many operators");
  OpId id(static_cast<uint32_t>(ops_.size()));
  by_name_.emplace(name, id);
  ops_.push_back(OpInfo{std::move(name), arity});
  return id;
}

std::optional<OpId> Language::findOp(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  if (it == by_name_.end()) return std::nullopt;
  return it->second;
}

OpId Language::op(std::string_view name) const {
  if (auto id = findOp(name)) return *id;
  throw EGraphError("unknown operator '" + std::string(name) + "'");
}

const OpInfo& Language::info(OpId op) const {
  if (!contains(op))
    throw EGraphError("unknown operator id " + std::to_string(op.value) + " (the language has " +
                      std::to_string(ops_.size()) + " operators)");
  return ops_[op.value];
}

void Language::checkNode(OpId op, size_t children) const {
  const OpInfo& oi = info(op);
  if (oi.arity != kVariadic && static_cast<size_t>(oi.arity) != children)
    throw EGraphError("operator '" + oi.name + "' takes " + std::to_string(oi.arity) +
                      " children, got " + std::to_string(children));
}

std::string Language::formatAttr(OpId op, AttrId attr) const {
  if (attr == kNoAttr) return {};
  if (formatter_) return formatter_(*this, op, attr);
  return defaultAttrText(attrs_.bytes(attr));
}

AttrId Language::parseAttr(OpId op, std::string_view text) {
  if (parser_) return parser_(*this, op, text);
  return attrs_.intern(text);
}

std::string defaultAttrText(std::string_view bytes) {
  bool printable = true;
  for (char c : bytes)
    if (!std::isprint(static_cast<unsigned char>(c)) || c == ']' || c == '"') printable = false;
  if (printable) return std::string(bytes);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out = "0x";
  for (char c : bytes) {
    auto b = static_cast<unsigned char>(c);
    out.push_back(kHex[b >> 4]);
    out.push_back(kHex[b & 15]);
  }
  return out;
}

}  // namespace tacit::egraph
