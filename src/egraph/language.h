// The runtime-defined language of an e-graph: operators (name + arity) and interned attributes.
//
// An e-node is (operator, attribute, children). The attribute carries everything that is part of
// the node's identity besides its children: a constant's value, a transpose permutation, slice
// bounds, a buffer tag, an instruction's alpha binding. Payloads are byte strings interned into
// AttrIds, so node hashing and equality compare one 32-bit id. Structured values are serialised
// with AttrWriter and read back with AttrReader (or the typed helpers such as internInts()).
//
// One Language is shared (std::shared_ptr) by e-graphs, patterns and rules that use the same op and
// attribute ids. It is not thread-safe: interning mutates it.
#pragma once

#include <cstdint>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <vector>

#include "egraph/id_table.h"
#include "egraph/ids.h"

namespace tacit::egraph {

// Arity of an operator that accepts any number of children (including none).
inline constexpr int kVariadic = -1;

// Serialises a structured attribute value into bytes. Integers are 8 bytes little-endian, lists
// and strings carry a 4-byte length, so equal values always give equal bytes and the encoding is
// unambiguous when read back in the same order. Prefix a tag byte (u8) if several value kinds can
// appear under one operator.
class AttrWriter {
 public:
  // u8, i64 and intsOf are inline: the isel rules encode an attribute for every node they build.
  AttrWriter& u8(uint8_t v) {
    bytes_.push_back(static_cast<char>(v));
    return *this;
  }
  AttrWriter& i64(int64_t v) {
    appendLE(static_cast<uint64_t>(v), 8);
    return *this;
  }
  AttrWriter& ints(std::span<const int64_t> v) {
    return intsOf(v.size(), [&](size_t i) { return v[i]; });
  }
  // The same bytes as ints() of {get(0), ..., get(n - 1)}, without building that list.
  template <typename Get>
  AttrWriter& intsOf(size_t n, Get get) {
    if (n > UINT32_MAX) throw EGraphError("AttrWriter: list too long");
    bytes_.reserve(bytes_.size() + 4 + 8 * n);
    appendLE(n, 4);
    for (size_t i = 0; i < n; ++i)
      i64(get(i));
    return *this;
  }
  AttrWriter& str(std::string_view v);
  // Appends the object representation of a trivially copyable value (no padding please: padding
  // bytes are indeterminate and would make equal values intern differently).
  template <typename T>
  AttrWriter& raw(const T& v) {
    static_assert(std::is_trivially_copyable_v<T> && std::has_unique_object_representations_v<T>);
    bytes_.append(reinterpret_cast<const char*>(&v), sizeof(T));
    return *this;
  }
  std::string_view bytes() const { return bytes_; }
  // Empties the writer, keeping its buffer (reuse one writer to avoid an allocation per value).
  void clear() { bytes_.clear(); }

 private:
  void appendLE(uint64_t v, int count) {
    char le[8];
    for (int i = 0; i < count; ++i)
      le[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
    bytes_.append(le, static_cast<size_t>(count));
  }

  std::string bytes_;
};

// Reads what an AttrWriter wrote, in the same order. Reading past the end, or finishing with
// bytes left over (done()), is a client bug and throws EGraphError.
class AttrReader {
 public:
  explicit AttrReader(std::string_view bytes) : bytes_(bytes) {}
  uint8_t u8();
  int64_t i64();
  std::vector<int64_t> ints();
  std::string_view str();
  template <typename T>
  T raw() {
    static_assert(std::is_trivially_copyable_v<T>);
    T v;
    std::memcpy(&v, take(sizeof(T)), sizeof(T));
    return v;
  }
  bool atEnd() const { return pos_ == bytes_.size(); }
  // Throws unless every byte has been read.
  void done() const;

 private:
  const char* take(size_t n);
  std::string_view bytes_;
  size_t pos_ = 0;
};

// Interns byte strings. AttrId 0 (kNoAttr) is the empty string. Bytes live in chunked storage, so
// a string_view returned by bytes() stays valid for the table's lifetime.
class AttrTable {
 public:
  AttrTable();
  AttrTable(const AttrTable&) = delete;
  AttrTable& operator=(const AttrTable&) = delete;

  AttrId intern(std::string_view bytes);
  std::optional<AttrId> find(std::string_view bytes) const;
  std::string_view bytes(AttrId id) const;  // throws for an id this table did not hand out
  bool contains(AttrId id) const { return id.value < views_.size(); }
  size_t size() const { return views_.size(); }

  // Typed helpers over AttrWriter/AttrReader.
  AttrId internInt(int64_t v);
  AttrId internInts(std::span<const int64_t> v);
  AttrId internString(std::string_view s) { return intern(s); }
  int64_t intValue(AttrId id) const;                // throws unless written by internInt
  std::vector<int64_t> intsValue(AttrId id) const;  // throws unless written by internInts

  size_t memoryBytes() const;

 private:
  std::vector<std::unique_ptr<char[]>> chunks_;
  size_t chunk_used_ = 0;
  size_t chunk_size_ = 0;
  size_t chunk_bytes_ = 0;
  std::vector<std::string_view> views_;
  detail::IdTable table_;
  AttrWriter scratch_;  // encodes typed values without allocating
};

struct OpInfo {
  std::string name;
  int arity = 0;  // kVariadic for any number of children
};

class Language {
 public:
  // How attributes print (DOT, terms, patterns) and parse (the text form of patterns and terms,
  // `op[text]`). Defaults: print printable payloads as-is and others as 0x-hex; parse interns the
  // text's bytes.
  using AttrFormatter = std::function<std::string(const Language&, OpId, AttrId)>;
  using AttrParser = std::function<AttrId(Language&, OpId, std::string_view text)>;

  Language() = default;
  Language(const Language&) = delete;
  Language& operator=(const Language&) = delete;

  // Registers an operator; names are unique, non-empty and contain no whitespace, brackets or
  // parentheses (so that they can appear in pattern text). arity >= 0 or kVariadic.
  OpId addOp(std::string name, int arity);
  std::optional<OpId> findOp(std::string_view name) const;
  OpId op(std::string_view name) const;  // throws EGraphError if unknown
  const OpInfo& info(OpId op) const;     // throws EGraphError if unknown
  const std::string& name(OpId op) const { return info(op).name; }
  int arity(OpId op) const { return info(op).arity; }
  size_t opCount() const { return ops_.size(); }
  bool contains(OpId op) const { return op.value < ops_.size(); }
  // Throws EGraphError unless `op` exists and accepts `children` children.
  void checkNode(OpId op, size_t children) const;

  AttrTable& attrs() { return attrs_; }
  const AttrTable& attrs() const { return attrs_; }

  void setAttrFormatter(AttrFormatter f) { formatter_ = std::move(f); }
  void setAttrParser(AttrParser p) { parser_ = std::move(p); }
  // "" for kNoAttr.
  std::string formatAttr(OpId op, AttrId attr) const;
  AttrId parseAttr(OpId op, std::string_view text);

  size_t memoryBytes() const { return attrs_.memoryBytes() + ops_.capacity() * sizeof(OpInfo); }

 private:
  std::vector<OpInfo> ops_;
  std::unordered_map<std::string, OpId> by_name_;
  AttrTable attrs_;
  AttrFormatter formatter_;
  AttrParser parser_;
};

// The default attribute text: printable ASCII as-is, anything else as 0x followed by hex bytes.
std::string defaultAttrText(std::string_view bytes);

}  // namespace tacit::egraph
