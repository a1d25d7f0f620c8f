// Identifier types shared by every part of the e-graph engine, and its error type.
//
// Every id is a 32-bit index wrapped in its own type so that a class id can never be passed where
// a node id is expected. Ids are dense and start at 0; the default-constructed id is invalid.
#pragma once

#include <compare>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <ostream>
#include <stdexcept>
#include <string>

namespace tacit::egraph {

// Thrown on invalid use of the engine by its client (unknown operator, wrong arity, a class id
// that does not exist, a pattern that does not parse, querying an e-graph that needs rebuild(),
// ...). These are bugs in the calling code, not user errors, so the CLI reports them as internal
// errors.
class EGraphError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

template <typename Tag>
struct StrongId {
  static constexpr uint32_t kInvalidValue = std::numeric_limits<uint32_t>::max();
  uint32_t value = kInvalidValue;

  constexpr StrongId() = default;
  constexpr explicit StrongId(uint32_t v) : value(v) {}
  constexpr bool valid() const { return value != kInvalidValue; }
  constexpr size_t index() const { return value; }
  friend constexpr auto operator<=>(StrongId, StrongId) = default;
};

// An e-class. Class ids handed out by the e-graph may stop being canonical after a union; use
// EGraph::find() to get the representative.
using ClassId = StrongId<struct ClassTag>;
// One e-node in the e-graph's node table (stable for the e-graph's lifetime).
using NodeId = StrongId<struct NodeTag>;
// An operator registered in a Language.
using OpId = StrongId<struct OpTag>;
// An interned attribute payload (see AttrTable). AttrId 0 is the empty payload, kNoAttr.
using AttrId = StrongId<struct AttrTag>;

inline constexpr AttrId kNoAttr{0};

inline std::ostream& operator<<(std::ostream& os, ClassId id) {
  return os << 'c' << id.value;
}
inline std::ostream& operator<<(std::ostream& os, NodeId id) {
  return os << 'n' << id.value;
}
inline std::ostream& operator<<(std::ostream& os, OpId id) {
  return os << "op" << id.value;
}
inline std::ostream& operator<<(std::ostream& os, AttrId id) {
  return os << 'a' << id.value;
}

}  // namespace tacit::egraph

template <typename Tag>
struct std::hash<tacit::egraph::StrongId<Tag>> {
  size_t operator()(tacit::egraph::StrongId<Tag> id) const noexcept {
    return std::hash<uint32_t>()(id.value);
  }
};
