// The enumerator keeps the current term as a preorder array of frames. A frame's subtree
// occupies exactly `size` consecutive frames (one frame per term node), so child i of frame f
// starts at f + 1 + (sizes of children 0..i-1). Advancing works like an odometer on the last
// child first; whenever a child advances, everything after it in the array belongs to later
// siblings and is rebuilt, so "the subtree being advanced is at the end of the array" always
// holds and truncation is the only memory management needed.
#include "egraph/enumerate.h"

#include <algorithm>
#include <bit>
#include <string>

namespace tacit::egraph {

namespace {
constexpr uint32_t kNone = UINT32_MAX;
}

Enumerator::Enumerator(const EGraph& g, ClassId root, EnumOptions opts)
    : g_(g), opts_(std::move(opts)), version_(g.version()) {
  if (!g.clean()) throw EGraphError("Enumerator: the e-graph needs rebuild() first");
  if (opts_.max_size < 1 || opts_.max_size > kMaxEnumSize)
    throw EGraphError("Enumerator: max_size must be in 1.." + std::to_string(kMaxEnumSize));
  words_ = (opts_.max_size + 1 + 63) / 64;
  discover(g.find(root));
  computeFeasible();
}

// Collects every (class, context) pair reachable from the root and each pair's allowed nodes
// with their children's pairs. The client hooks run here only, once per (pair, node).
void Enumerator::discover(ClassId root) {
  auto pairOf = [&](uint32_t cls, Context ctx) {
    uint64_t key = (uint64_t{cls} << 32) | ctx;
    auto [it, inserted] = pair_index_.try_emplace(key, static_cast<uint32_t>(pairs_.size()));
    if (inserted) {
      if (pairs_.size() >= opts_.max_pairs)
        throw EGraphError("Enumerator: more than max_pairs (class, context) pairs");
      pairs_.push_back(Pair{cls, ctx});
    }
    return it->second;
  };
  pairOf(root.value, opts_.root_context);
  for (uint32_t p = 0; p < pairs_.size(); ++p) {
    const uint32_t cls = pairs_[p].cls;
    const Context ctx = pairs_[p].ctx;
    const auto alt_begin = static_cast<uint32_t>(alts_.size());
    for (NodeId n : g_.nodes(ClassId(cls))) {
      if (opts_.allowed && !opts_.allowed(g_, n, ctx)) continue;
      ENode e = g_.node(n);
      Alt alt{n.value, static_cast<uint32_t>(e.arity()),
              static_cast<uint32_t>(alt_children_.size()), 0};
      for (size_t i = 0; i < e.arity(); ++i) {
        Context cc = opts_.child_context ? opts_.child_context(g_, n, ctx, i) : ctx;
        alt_children_.push_back(pairOf(e.child(i).value, cc));  // may grow pairs_
      }
      alts_.push_back(alt);
    }
    pairs_[p].alt_begin = alt_begin;
    pairs_[p].alt_count = static_cast<uint32_t>(alts_.size()) - alt_begin;
  }
}

// out = {a + b : a in A, b in B, a + b <= max_size}.
void Enumerator::sumset(const uint64_t* a, const uint64_t* b, uint64_t* out) const {
  std::fill(out, out + words_, 0);
  // The members of A, word by word (sets are often sparse: {0} for a node's first child).
  for (size_t aw = 0; aw < words_; ++aw) {
    for (uint64_t bits = a[aw]; bits != 0; bits &= bits - 1) {
      const size_t x = aw * 64 + static_cast<size_t>(std::countr_zero(bits));
      if (x > opts_.max_size) break;
      shiftOr(b, x, out);
    }
  }
  // Clear bits above max_size.
  size_t top = opts_.max_size + 1;
  if (top % 64 != 0) out[words_ - 1] &= (uint64_t{1} << (top % 64)) - 1;
}

// out |= B shifted up by x (sizes past the last word are dropped).
void Enumerator::shiftOr(const uint64_t* b, size_t x, uint64_t* out) const {
  const size_t word_shift = x >> 6, bit_shift = x & 63;
  for (size_t w = words_; w-- > word_shift;) {
    uint64_t v = b[w - word_shift] << bit_shift;
    if (bit_shift != 0 && w - word_shift >= 1) v |= b[w - word_shift - 1] >> (64 - bit_shift);
    out[w] |= v;
  }
}

// Fixpoint of feasible(pair) = union over allowed nodes of 1 + sumset(children's feasible sets):
// the sizes a term of the pair could have if the path rule did not exist (a superset of the
// sizes that really occur, used to prune).
void Enumerator::computeFeasible() {
  feasible_.assign(pairs_.size() * words_, 0);
  std::vector<uint64_t> acc(words_), tmp(words_), zero(words_, 0);
  zero[0] = 1;
  for (bool changed = true; changed;) {
    changed = false;
    for (uint32_t p = 0; p < pairs_.size(); ++p) {
      for (uint32_t a = 0; a < pairs_[p].alt_count; ++a) {
        const Alt& alt = alts_[pairs_[p].alt_begin + a];
        std::copy(zero.begin(), zero.end(), acc.begin());
        for (uint32_t i = 0; i < alt.arity; ++i) {
          sumset(acc.data(), feasibleSet(alt_children_[alt.child_begin + i]), tmp.data());
          acc.swap(tmp);
        }
        // Shift by one for the node itself; sizes above max_size are dropped before comparing,
        // or the fixpoint would never be reached.
        uint64_t* dst = &feasible_[p * words_];
        uint64_t carry = 0;
        const size_t top = opts_.max_size + 1;
        for (size_t w = 0; w < words_; ++w) {
          uint64_t v = (acc[w] << 1) | carry;
          carry = acc[w] >> 63;
          if (w + 1 == words_ && top % 64 != 0) v &= (uint64_t{1} << (top % 64)) - 1;
          if ((dst[w] | v) != dst[w]) changed = true;
          dst[w] |= v;
        }
      }
    }
  }
  // Suffix sumsets per alternative: suffix[i] = sizes children i..arity-1 can add up to.
  for (Alt& alt : alts_) {
    alt.suffix_begin = static_cast<uint32_t>(suffix_.size() / words_);
    suffix_.resize(suffix_.size() + (alt.arity + 1) * words_, 0);
    uint64_t* last = &suffix_[(alt.suffix_begin + alt.arity) * words_];
    last[0] = 1;
    for (uint32_t i = alt.arity; i-- > 0;) {
      sumset(feasibleSet(alt_children_[alt.child_begin + i]),
             &suffix_[(alt.suffix_begin + i + 1) * words_], tmp.data());
      std::copy(tmp.begin(), tmp.end(), suffix_.begin() + (alt.suffix_begin + i) * words_);
    }
  }
}

bool Enumerator::step() {
  if (aborted_) return false;
  if (++steps_ > opts_.max_steps) {
    aborted_ = true;
    return false;
  }
  return true;
}

bool Enumerator::allowRevisit() const {
  return opts_.revisit == RevisitPolicy::kAllow ||
         (opts_.revisit == RevisitPolicy::kAfterSameSize && pass_ == 1);
}

bool Enumerator::onPath(uint32_t pair, uint32_t parent) const {
  for (uint32_t p = parent; p != kNone; p = frames_[p].parent)
    if (frames_[p].pair == pair) return true;
  return false;
}

// Appends the first term of `pair` with exactly `size` nodes; on failure frames_ is unchanged.
bool Enumerator::firstTerm(uint32_t pair, uint32_t size, uint32_t parent) {
  if (!step() || !test(feasibleSet(pair), size)) return false;
  bool revisit = onPath(pair, parent);
  if (revisit && !allowRevisit()) return false;
  const auto f = static_cast<uint32_t>(frames_.size());
  frames_.push_back(Frame{pair, size, 0, parent, revisit});
  for (uint32_t a = 0; a < pairs_[pair].alt_count && !aborted_; ++a) {
    frames_[f].alt = a;
    if (tryAlt(f)) return true;
    frames_.resize(f + 1);
  }
  frames_.resize(f);
  return false;
}

// Frame f (last in the array) with its current alternative: builds the first children.
bool Enumerator::tryAlt(uint32_t f) {
  const Alt& alt = alts_[pairs_[frames_[f].pair].alt_begin + frames_[f].alt];
  const uint32_t size = frames_[f].size;
  if (alt.arity == 0) return size == 1;
  if (size < 1 + alt.arity || !test(suffixSet(alt, 0), size - 1)) return false;
  return seqFrom(f, alt, 0, size - 1, 1);
}

// Appends children i.. of frame f summing to `remaining` nodes, child i getting at least
// min_size nodes: the first such assignment in order.
bool Enumerator::seqFrom(uint32_t f, const Alt& alt, uint32_t i, uint32_t remaining,
                         uint32_t min_size) {
  if (i == alt.arity) return remaining == 0;
  const uint32_t child = alt_children_[alt.child_begin + i];
  const auto pos = static_cast<uint32_t>(frames_.size());
  for (uint32_t s = min_size; s <= remaining && !aborted_; ++s) {
    if (!test(feasibleSet(child), s) || !test(suffixSet(alt, i + 1), remaining - s)) continue;
    if (!firstTerm(child, s, f)) continue;
    do {
      if (seqFrom(f, alt, i + 1, remaining - s, 1)) return true;
      frames_.resize(pos + s);
    } while (nextTerm(pos));
    frames_.resize(pos);
  }
  return false;
}

// Advances children i.. of frame f (child i at frames_[pos], the rest after it).
bool Enumerator::nextSeq(uint32_t f, const Alt& alt, uint32_t i, uint32_t remaining, uint32_t pos) {
  if (i == alt.arity) return false;
  const uint32_t s = frames_[pos].size;
  if (nextSeq(f, alt, i + 1, remaining - s, pos + s)) return true;
  frames_.resize(pos + s);
  while (nextTerm(pos)) {
    if (seqFrom(f, alt, i + 1, remaining - s, 1)) return true;
    frames_.resize(pos + s);
  }
  frames_.resize(pos);
  return seqFrom(f, alt, i, remaining, s + 1);
}

// Advances the term at frame f, whose subtree is at the end of the array.
bool Enumerator::nextTerm(uint32_t f) {
  if (!step()) return false;
  const Pair& pair = pairs_[frames_[f].pair];
  const Alt& alt = alts_[pair.alt_begin + frames_[f].alt];
  if (alt.arity > 0 && nextSeq(f, alt, 0, frames_[f].size - 1, f + 1)) return true;
  for (uint32_t a = frames_[f].alt + 1; a < pair.alt_count && !aborted_; ++a) {
    frames_.resize(f + 1);
    frames_[f].alt = a;
    if (tryAlt(f)) return true;
  }
  return false;
}

uint32_t Enumerator::emit(uint32_t f, Term& out) const {
  const Frame& fr = frames_[f];
  const Pair& pair = pairs_[fr.pair];
  const Alt& alt = alts_[pair.alt_begin + fr.alt];
  uint32_t kids_inline[16];
  std::vector<uint32_t> kids_heap;
  uint32_t* kids = kids_inline;
  if (alt.arity > 16) {
    kids_heap.resize(alt.arity);
    kids = kids_heap.data();
  }
  uint32_t pos = f + 1;
  for (uint32_t i = 0; i < alt.arity; ++i) {
    kids[i] = emit(pos, out);
    pos += frames_[pos].size;
  }
  ENode e = g_.node(NodeId(alt.node));
  TermNode tn;
  tn.op = e.op();
  tn.attr = e.attr();
  tn.eclass = ClassId(pair.cls);
  tn.enode = NodeId(alt.node);
  tn.context = pair.ctx;
  return out.add(tn, std::span<const uint32_t>(kids, alt.arity));
}

bool Enumerator::next(Term& out) {
  if (g_.version() != version_ || !g_.clean())
    throw EGraphError("Enumerator::next: the e-graph changed during enumeration");
  while (!done_) {
    bool ok = started_ ? nextTerm(0) : firstTerm(0, size_, kNone);
    if (aborted_) {
      done_ = true;
      frames_.clear();
      return false;
    }
    if (ok) {
      started_ = true;
      bool revisit =
          std::any_of(frames_.begin(), frames_.end(), [](const Frame& fr) { return fr.revisit; });
      // The revisiting pass re-generates revisit-free terms; they were produced by pass 0.
      if (opts_.revisit == RevisitPolicy::kAfterSameSize && pass_ == 1 && !revisit) continue;
      last_revisit_ = revisit;
      out.clear();
      emit(0, out);
      return true;
    }
    started_ = false;
    frames_.clear();
    if (opts_.revisit == RevisitPolicy::kAfterSameSize && pass_ == 0) {
      pass_ = 1;
    } else {
      pass_ = 0;
      if (++size_ > opts_.max_size) done_ = true;
    }
  }
  return false;
}

}  // namespace tacit::egraph
