// Pure-movement units (loads, stores, moves; isa_match.h), matched from the output side: for a
// class of the unit's output type the inverse chain gives the input, or — for a pitched load —
// the class is a strided view of a byte vector and the unit reads the bytes the view spans
// (pattern_view.h).
#include "isel/isa_match.h"
#include "isel/isa_match_state.h"

#include "isel/pattern_view.h"
#include "isel/view_index.h"
#include "taidl/ops.h"

namespace tacit::isel {

using taidl::SymOp;

bool IsaMatcher::tryPureMovement(int32_t pattern, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s = State::start(p, u);
  const SymOp& root = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(p.root)].op)];
  if (!unifyType(root.type, b_.shape(t), s.alpha) || !s.alpha.settle() ||
      !bindUndetermined(p, u, s.alpha) || !unifyIdentityLinks(p, s))
    return false;
  s.cls[static_cast<size_t>(p.root)] = t;
  std::string why = verify(p, s);
  if (!why.empty()) {
    fail(pattern, t, why);
    return false;
  }
  accepted_.push_back({pattern, std::move(s)});
  return true;
}

namespace {

bool chainHasPadOrSlice(const UnitPattern& p, const std::vector<int32_t>& chain) {
  for (int32_t n : chain) {
    const PatternNode& pn = p.nodes[static_cast<size_t>(n)];
    if (pn.input < 0 && isIdentityLink(p.sym->ops[static_cast<size_t>(pn.op)].opcode)) return true;
  }
  return false;
}

}  // namespace

// A pitched load: the pattern's whole chain (pad, reshape, slice, ...) is a strided view of its
// input's bytes. Where the class t is that view of a byte vector of the kernel (a column block of a
// row-major matrix in HBM), the unit loads t from the bytes the view spans, with the α (the pitch)
// that makes the two views equal.
bool IsaMatcher::tryStridedLoad(int32_t pattern, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  std::vector<int32_t> chain = p.out_chain;
  chain.push_back(p.skeleton_root);
  const bool pitched = chainHasPadOrSlice(p, chain);
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  State s = State::start(p, u);
  const SymOp& root = p.sym->ops[static_cast<size_t>(p.nodes[static_cast<size_t>(p.root)].op)];
  if (!unifyType(root.type, b_.shape(t), s.alpha) || !s.alpha.settle() ||
      !bindUndetermined(p, u, s.alpha))
    return false;
  // The pitch: the one α left (or none, if the case fixed everything).
  std::optional<int32_t> slot = s.alpha.singleUnknown();
  if (!pitched || (!slot && !s.alpha.complete())) return tryOpenMovement(pattern, t, s, chain);
  auto view_at = [&](int64_t x) -> std::optional<StridedView> {
    AlphaSolver a = s.alpha;
    if (slot) a.bind(*slot, x);
    std::optional<ChainView> cv = chainView(p, chain, a.env());
    if (!cv || !cv->exact()) return std::nullopt;
    return cv->view;
  };
  bool any = false;
  std::vector<BaseView> views = views_->views(t);  // a copy: construction comes later
  if (replayStrided(pattern, t, views)) return true;
  const size_t failures_from = failures_.size(), accepted_from = accepted_.size();
  for (const BaseView& bv : views) {
    if (bv.base == t || !bv.exact() || !isByteVector(b_.shape(bv.base))) continue;
    State m = s;
    if (slot) {
      std::optional<int64_t> x = solveSlot(view_at, bv.view);
      if (!x) continue;
      m.alpha.bind(*slot, *x);
    } else if (std::optional<StridedView> v = view_at(0); !v || v->dims != bv.view.dims) {
      continue;
    }
    any |= acceptViewLoad(pattern, chain, m, bv, t);
  }
  finishStrided(pattern, t, std::move(views), failures_from, accepted_from);
  return any;
}

// A movement whose types leave several α open (Gemmini `transpose` of u8[rows * cols]): where t is
// an exact view of a byte vector, each completion of α whose chain is that same view (up to the
// offset) is a match. Nothing is constructed for classes that are no such view.
bool IsaMatcher::tryOpenMovement(int32_t pattern, ClassId t, const State& s,
                                 const std::vector<int32_t>& chain) {
  if (s.alpha.complete()) return false;  // tryPureMovement's case
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  std::vector<BaseView> views = views_->views(t);  // a copy: construction comes later
  if (replayStrided(pattern, t, views)) return true;
  const size_t failures_from = failures_.size(), accepted_from = accepted_.size();
  const std::vector<AlphaSolver>* options = nullptr;
  bool any = false;
  for (const BaseView& bv : views) {
    if (bv.base == t || !bv.exact() || !isByteVector(b_.shape(bv.base))) continue;
    if (!options) options = &openCompletions(pattern, b_.shape(t), s.alpha);
    for (const AlphaSolver& a : *options) {
      std::optional<ChainView> cv = chainView(p, chain, a.env());
      if (!cv || !cv->exact() || cv->view.dims != bv.view.dims) continue;
      State m = s;
      m.alpha = a;
      if (acceptViewLoad(pattern, chain, m, bv, t)) {
        any = true;
        break;  // one completion per view: the others read the same bytes the same way
      }
    }
  }
  finishStrided(pattern, t, std::move(views), failures_from, accepted_from);
  return any;
}

const std::vector<AlphaSolver>& IsaMatcher::openCompletions(int32_t pattern, const hlo::Shape& type,
                                                            const AlphaSolver& start) {
  auto key = std::make_pair(pattern, type.str());
  auto it = open_completions_.find(key);
  if (it != open_completions_.end()) return it->second;
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  return open_completions_.emplace(std::move(key), completions(p, u, start, 64)).first->second;
}

// Accepts the movement `pattern` at t reading the bytes of bv's base that its chain (with m's α)
// views as t.
bool IsaMatcher::acceptViewLoad(int32_t pattern, const std::vector<int32_t>& chain, State& m,
                                const BaseView& bv, ClassId t) {
  const UnitPattern& p = units_.patterns[static_cast<size_t>(pattern)];
  std::optional<ChainView> cv = chainView(p, chain, m.alpha.env());
  if (!cv) return false;
  int64_t in_bytes = taidl::evalType(p.sym->inputs[0].type, m.alpha.env()).byteSize();
  int64_t offset = bv.view.offset - cv->view.offset;
  if (offset < 0 || offset + in_bytes > b_.shape(bv.base).byteSize()) return false;
  m.cls[static_cast<size_t>(p.root)] = t;
  m.views_checked = true;
  m.view_base = bv.base;
  m.view_offset = offset;
  m.view_bytes = in_bytes;
  if (std::string why = verify(p, m); !why.empty()) {
    fail(pattern, t, why);
    return false;
  }
  accepted_.push_back({pattern, std::move(m)});
  return true;
}

// The bytes a pitched load reads: a slice of the byte vector its view is over.
ClassId IsaMatcher::viewInput(const State& s) {
  if (s.view_offset == 0 && s.view_bytes == b_.shape(s.view_base).byteSize()) return s.view_base;
  return b_.slice(s.view_base, {hlo::SliceDim{s.view_offset, s.view_offset + s.view_bytes, 1}});
}

Built<ClassId> IsaMatcher::constructPureMovement(const UnitPattern& p, const State& s) {
  const Unit& u = units_.units[static_cast<size_t>(p.unit)];
  ClassId t = s.cls[static_cast<size_t>(p.root)];
  std::vector<int32_t> chain = p.out_chain;
  chain.push_back(p.skeleton_root);
  Built<ClassId> input =
      s.view_base.valid() ? Built<ClassId>{viewInput(s), {}} : invertChain(p, chain, t, s);
  if (!input.value) return input;
  PiiDesc pii = piiDescFor(p, u, s.alpha, b_.shape(t));
  ClassId node = b_.egraph().add(b_.ir().piiOp(), b_.ir().encode(pii), {*input.value});
  uniteConstructed(node, t);
  return {t, {}};
}

bool IsaMatcher::replayStrided(int32_t pattern, ClassId t, const std::vector<BaseView>& views) {
  const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(pattern)) << 32) | t.value;
  auto it = previous_strided_index_.find(key);
  if (it == previous_strided_index_.end()) return false;
  StridedRecord& before = previous_strided_[it->second];
  if (!before.constructed || before.views != views) return false;
  const auto index = static_cast<uint32_t>(strided_.size());
  StridedRecord& record = strided_.emplace_back();
  record.key = key;
  record.views = std::move(before.views);
  record.failures = std::move(before.failures);
  for (const MatchFailure& f : record.failures)
    replayFailure(f);
  for (State& s : before.accepted)
    accepted_.push_back({pattern, std::move(s), Accepted::kNoRecord, true, index});
  previous_strided_index_.erase(it);  // its states moved
  return true;
}

void IsaMatcher::finishStrided(int32_t pattern, ClassId t, std::vector<BaseView> views,
                               size_t failures_from, size_t accepted_from) {
  const auto index = static_cast<uint32_t>(strided_.size());
  StridedRecord& record = strided_.emplace_back();
  record.key = (static_cast<uint64_t>(static_cast<uint32_t>(pattern)) << 32) | t.value;
  record.views = std::move(views);
  record.failures.assign(failures_.begin() + static_cast<std::ptrdiff_t>(failures_from),
                         failures_.end());
  for (size_t i = accepted_from; i < accepted_.size(); ++i)
    accepted_[i].strided = index;
}

}  // namespace tacit::isel
