#include "oracle/direct_nest.h"

namespace tacit::oracle::detail {

namespace {

// a * b + c, or INT64_MAX if it overflows (a count of statements that no step limit allows).
int64_t saturatedMulAdd(int64_t a, int64_t b, int64_t c) {
  int64_t p = 0, r = 0;
  if (__builtin_mul_overflow(a, b, &p) || __builtin_add_overflow(p, c, &r)) return INT64_MAX;
  return r;
}

}  // namespace

void DirectNest::clear() {
  nodes_.clear();
  args_.clear();
  ptrs_.clear();
  terms_.clear();
  open_.assign(1, Open{});
}

void DirectNest::beginLoop(int64_t lo, int64_t hi) {
  Node n;
  n.lo = lo;
  n.hi = hi;
  open_.push_back({static_cast<uint32_t>(nodes_.size()),
                   saturatedMulAdd(open_.back().executions, std::max<int64_t>(hi - lo, 0), 0), 0});
  nodes_.push_back(n);
}

void DirectNest::endLoop() {
  Open o = open_.back();
  open_.pop_back();
  Node& n = nodes_[o.node];
  n.end = static_cast<uint32_t>(nodes_.size());
  // As block() and loop() count: the statement once, each further iteration once more, and the
  // body per iteration; a loop without a body once and once per iteration.
  int64_t iterations = std::max<int64_t>(n.hi - n.lo, 0);
  bool empty = n.end == o.node + 1;
  const int64_t steps = iterations == 0 ? 1
                        : empty         ? saturatedMulAdd(1, iterations, 1)
                                        : saturatedMulAdd(iterations, o.steps, iterations);
  open_.back().steps = saturatedMulAdd(1, open_.back().steps, steps);
}

void DirectNest::addPtr(const CompiledSite& c, uint32_t access, int64_t extra, uint32_t arg) {
  Ptr p;
  p.arg = arg;
  p.buffer = c.entry->accesses[access].buffer;
  p.offset = c.base[access] + extra;
  p.terms = static_cast<uint32_t>(terms_.size());
  for (const CompiledSite::Term& t : c.terms) {
    if (t.access == access) terms_.push_back({t.coeff, t.depth});
  }
  p.terms_end = static_cast<uint32_t>(terms_.size());
  ptrs_.push_back(p);
}

void DirectNest::call(const CompiledSite& c) {
  const Entry& e = *c.entry;
  Node n;
  n.site = &c;
  n.executions = open_.back().executions;
  n.args = static_cast<uint32_t>(args_.size());
  n.ptrs = static_cast<uint32_t>(ptrs_.size());
  if (e.direct) {
    n.fn = e.direct->fn;
    n.n = e.direct->n;
    args_.insert(args_.end(), e.direct_bases.begin(), e.direct_bases.end());  // the constants
    for (const Entry::DirectSlice& d : e.direct_slices)
      addPtr(c, d.access, 0, n.args + d.base);
  } else {
    for (const Entry::Move& m : e.moves) {
      auto at = static_cast<uint32_t>(args_.size());
      args_.resize(args_.size() + 2);
      addPtr(c, m.write, m.out_off, at);
      addPtr(c, m.read, m.in_off, at + 1);
    }
  }
  n.ptrs_end = static_cast<uint32_t>(ptrs_.size());
  nodes_.push_back(n);
  open_.back().steps = saturatedMulAdd(1, open_.back().steps, 1);
}

// Each written slice's bytes over every value its loop variables may take (the ranges the
// call was compiled for): ZeroedMemory::wrote needs a conservative mark.
void DirectNest::markWrites(State& state) const {
  for (const Node& n : nodes_) {
    if (n.site == nullptr) continue;
    const CompiledSite& c = *n.site;
    for (const Entry::Written& w : c.entry->written) {
      int64_t lo = c.base[w.access], hi = lo;
      for (const CompiledSite::Term& t : c.terms) {
        if (t.access != w.access) continue;
        int64_t a = t.coeff * c.loop_lo[t.depth], b = t.coeff * c.loop_hi[t.depth];
        lo += std::min(a, b);
        hi += std::max(a, b);
      }
      state.buffers[static_cast<size_t>(w.buffer)].wrote(static_cast<size_t>(lo),
                                                         static_cast<size_t>(hi + w.span_bytes));
    }
  }
}

void DirectNest::run(State& state, std::vector<int64_t>& loops, int64_t lo, int64_t hi) {
  for (Ptr& p : ptrs_)
    p.data = state.buffers[static_cast<size_t>(p.buffer)].data();
  markWrites(state);
  size_t depth = loops.size() - 1;
  for (int64_t v = lo; v < hi; ++v) {
    loops[depth] = v;
    body(0, static_cast<uint32_t>(nodes_.size()), loops);
  }
}

void DirectNest::body(uint32_t begin, uint32_t end, std::vector<int64_t>& loops) {
  for (uint32_t k = begin; k < end;) {
    const Node& n = nodes_[k];
    if (n.site == nullptr) {
      loops.push_back(n.lo);
      for (int64_t v = n.lo; v < n.hi; ++v) {
        loops.back() = v;
        body(k + 1, n.end, loops);
      }
      loops.pop_back();
      k = n.end;
      continue;
    }
    const int64_t* values = loops.data();
    for (uint32_t i = n.ptrs; i < n.ptrs_end; ++i) {
      const Ptr& p = ptrs_[i];
      int64_t at = p.offset;  // inside the buffer once summed (compileCall proved it)
      for (uint32_t t = p.terms; t < p.terms_end; ++t)
        at += terms_[t].coeff * values[terms_[t].depth];
      args_[p.arg] = p.data + at;
    }
    if (n.fn != nullptr) {
      n.fn(args_.data() + n.args, n.n);
    } else {
      const std::vector<Entry::Move>& moves = n.site->entry->moves;
      for (size_t m = 0; m < moves.size(); ++m)
        copyPieces(args_[n.args + 2 * m], args_[n.args + 2 * m + 1], moves[m]);
    }
    ++k;
  }
}

}  // namespace tacit::oracle::detail
