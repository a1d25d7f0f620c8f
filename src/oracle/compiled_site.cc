#include "oracle/compiled_site.h"

#include <algorithm>

namespace tacit::oracle::detail {
namespace {

// Whether every start of instruction `inst`'s slices is an integer, a parameter or one attribute,
// its body has no set, if or repeat, and its cost reads no beta attribute, register or loop
// variable: then with constant alpha values every call has one entry and one cost, and starts
// that are affine in the program's loop variables.
bool flatInstruction(const taidl::Instruction& inst) {
  using taidl::ExprOp;
  using taidl::RefKind;
  for (const taidl::Stmt& st : inst.body) {
    switch (st.kind) {
      case taidl::StmtKind::kSet:
      case taidl::StmtKind::kLet:
      case taidl::StmtKind::kIf:
      case taidl::StmtKind::kRepeat:
        return false;
      default:
        break;
    }
    for (const taidl::Expr& e : st.starts) {
      if (e.nodes().size() != 1) return false;
      const taidl::ExprNode& n = e.nodes()[0];
      bool ok = n.op == ExprOp::kInt ||
                (n.op == ExprOp::kRef && (n.ref == RefKind::kAlpha || n.ref == RefKind::kBeta ||
                                          n.ref == RefKind::kParam || n.ref == RefKind::kConst));
      if (!ok) return false;
    }
  }
  if (inst.cost != nullptr) {
    for (const taidl::ExprNode& n : inst.cost->expr.nodes()) {
      if (n.op == ExprOp::kRef && (n.ref == RefKind::kBeta || n.ref == RefKind::kReg ||
                                   n.ref == RefKind::kLoop || n.ref == RefKind::kUnresolved))
        return false;
    }
  }
  return true;
}

// Which attribute each slice start of `call` is (-1: a constant), read off the compiled walk at
// the call's values `at` and with each beta attribute moved by one; false if a start moves by
// anything but 0 or 1, or with two attributes.
bool startSlots(const taidl::CompiledWalk& walk, std::span<const int64_t> regs, uint64_t all,
                const ExecutedCall& call, int32_t num_alpha, const taidl::WalkResult& at,
                std::vector<int32_t>& slot) {
  slot.assign(at.starts.size(), -1);
  std::vector<int64_t> attrs(call.attrs.begin(), call.attrs.end());
  std::vector<int64_t> scratch_regs(regs.begin(), regs.end());
  taidl::WalkResult moved;
  for (size_t k = static_cast<size_t>(num_alpha); k < attrs.size(); ++k) {
    if (attrs[k] == INT64_MAX) return false;
    attrs[k] += 1;
    bool ok = walk.run(attrs, scratch_regs, moved, all) &&
              moved.starts.size() == at.starts.size() && moved.key.words == at.key.words;
    attrs[k] -= 1;
    if (!ok) return false;
    for (size_t j = 0; j < at.starts.size(); ++j) {
      int64_t d = moved.starts[j] - at.starts[j];
      if (d != 0 && (d != 1 || slot[j] >= 0)) return false;
      if (d == 1) slot[j] = static_cast<int32_t>(k);
    }
  }
  return true;
}

// Adds access `a`'s byte offset as an affine function of the loop variables to `c`, if its
// starts provably stay inside the buffer.
bool placeAccess(const ExecutedCall& call, int64_t hbm_bytes, const AccessPlan& a,
                 const taidl::WalkResult& at, const std::vector<int32_t>& slot, CompiledSite& c) {
  const std::vector<int64_t>& lo = *call.loop_lo;
  const std::vector<int64_t>& hi = *call.loop_hi;
  if (a.start_offset + a.dims.size() > at.starts.size()) return false;
  int64_t base = 0;
  std::vector<int64_t> coeff(lo.size(), 0);
  for (size_t k = 0; k < a.dims.size(); ++k) {
    size_t j = a.start_offset + k;
    Affine start(at.starts[j]);
    if (slot[j] >= 0) {
      if (at.starts[j] != call.attrs[static_cast<size_t>(slot[j])]) return false;
      start = call.stmt->attrs[static_cast<size_t>(slot[j])];
    }
    int64_t mn = 0, mx = 0;
    int64_t dim = a.buffer == 0 ? hbm_bytes : a.dims[k];
    if (!affineRange(start, lo, hi, &mn, &mx) || mn < 0 || mx > dim - a.extent[k]) return false;
    int64_t scale = a.stride[k] * a.elem, p = 0;  // the buffer's size bounds both factors
    if (__builtin_mul_overflow(start.constant, scale, &p) || __builtin_add_overflow(base, p, &base))
      return false;
    for (const Affine::Term& t : start.terms) {
      if (t.depth >= coeff.size() || __builtin_mul_overflow(t.coeff, scale, &p) ||
          __builtin_add_overflow(coeff[t.depth], p, &coeff[t.depth]))
        return false;
    }
  }
  // Every partial sum of the evaluation stays in int64 over the loop ranges.
  Affine offset(base);
  for (size_t d = 0; d < coeff.size(); ++d) {
    if (coeff[d] != 0) offset.terms.push_back({static_cast<uint32_t>(d), coeff[d]});
  }
  int64_t mn = 0, mx = 0;
  if (!affineRange(offset, lo, hi, &mn, &mx)) return false;
  auto access = static_cast<uint32_t>(c.base.size());
  c.base.push_back(base);
  c.offsets.push_back(base);
  for (const Affine::Term& t : offset.terms)
    c.terms.push_back({t.coeff, base, access, t.depth, &t == &offset.terms.front()});
  return true;
}

__extension__ typedef __int128 Wide;  // __extension__: -Wpedantic knows no __int128

// An access of a compiled call as the disjointness proofs read it: its buffer, span and offset
// coefficient per loop depth (0..depth).
struct PlacedAccess {
  int32_t buffer = -1;
  int64_t span = 0;
  int64_t base = 0;
  std::vector<int64_t> coeff;
};

std::vector<PlacedAccess> placedAccesses(const CompiledSite& c, size_t depths) {
  std::vector<PlacedAccess> out;
  const Entry& e = *c.entry;
  for (size_t i = 0; i < e.touches.size(); ++i)
    out.push_back(
        {e.touches[i].buffer, e.touches[i].span_bytes, c.base[i], std::vector<int64_t>(depths, 0)});
  for (const CompiledSite::Term& t : c.terms)
    out[t.access].coeff[t.depth] += t.coeff;
  return out;
}

// Whether access `t` at loop value v never overlaps access `w` at v' for lo <= v' <= v <= hi
// (v' < v unless `same_iteration`), the enclosing loops' values being equal: the offsets' outer
// coefficients must be equal, and the offset difference base + a v - b v' must keep the ranges
// apart. With v = v' + k it is base + (a - b) v' + a k over a box containing every pair.
bool apart(const PlacedAccess& t, const PlacedAccess& w, int64_t lo, int64_t hi,
           bool same_iteration) {
  if (t.buffer != w.buffer || t.span == 0 || w.span == 0) return true;
  size_t d = t.coeff.size() - 1;
  for (size_t k = 0; k < d; ++k) {
    if (t.coeff[k] != w.coeff[k]) return false;
  }
  Wide a = t.coeff[d], b = w.coeff[d], base = Wide{t.base} - w.base;
  Wide k_lo = same_iteration ? 0 : 1, k_hi = same_iteration ? 0 : Wide{hi} - lo;
  Wide v_hi = same_iteration ? Wide{hi} : Wide{hi} - 1;
  if (k_lo > k_hi || v_hi < lo) return true;  // no such pair
  Wide p = (a - b) * lo, q = (a - b) * v_hi, r = a * k_lo, u = a * k_hi;
  Wide mn = base + std::min(p, q) + std::min(r, u), mx = base + std::max(p, q) + std::max(r, u);
  return mn >= w.span || mx <= -Wide{t.span};
}

}  // namespace

bool affineRange(const Affine& a, const std::vector<int64_t>& lo, const std::vector<int64_t>& hi,
                 int64_t* min, int64_t* max) {
  int64_t mn = a.constant, mx = a.constant;
  for (const Affine::Term& t : a.terms) {
    if (t.depth >= lo.size()) return false;
    int64_t p = 0, q = 0;
    if (__builtin_mul_overflow(t.coeff, lo[t.depth], &p) ||
        __builtin_mul_overflow(t.coeff, hi[t.depth], &q))
      return false;
    if (p > q) std::swap(p, q);
    if (__builtin_add_overflow(mn, p, &mn) || __builtin_add_overflow(mx, q, &mx)) return false;
  }
  *min = mn;
  *max = mx;
  return true;
}

// A call qualifies if its instruction is flat (flatInstruction), every require is proven over
// the loop ranges, the alpha attributes are constants (one key: no decisions exist without ifs
// and repeats) and every slice start stays inside its buffer over the loop ranges. Which
// attribute each start is, is read off the compiled walk: with every require proven it is a pure
// function of the attributes, and each start, being one attribute or a constant, moves by
// exactly 1 when that attribute does and not at all otherwise.
bool compileCall(const taidl::Isa& isa, const taidl::CompiledWalk& walk,
                 std::span<const int64_t> regs, int64_t hbm_bytes, const ExecutedCall& call,
                 CompiledSite& out) {
  const Stmt& st = *call.stmt;
  const taidl::Instruction& inst = isa.instructions[static_cast<size_t>(st.unit)];
  size_t nreq = inst.requires_.size();
  uint64_t all = nreq >= 64 ? ~uint64_t{0} : (uint64_t{1} << nreq) - 1;
  if (nreq > 64 || call.proven != all || !call.attrs_fit || call.entry == nullptr ||
      call.loop_lo->size() != call.loop_hi->size() || !flatInstruction(inst))
    return false;
  for (int32_t k = 0; k < inst.num_alpha; ++k) {
    if (!st.attrs[static_cast<size_t>(k)].terms.empty()) return false;
  }
  Entry& e = *call.entry;
  std::vector<int64_t> scratch_regs(regs.begin(), regs.end());
  taidl::WalkResult at;
  if (!walk.run(call.attrs, scratch_regs, at, all) || at.key.words != e.spec->key.words)
    return false;
  std::vector<int32_t> slot;
  if (!startSlots(walk, regs, all, call, inst.num_alpha, at, slot)) return false;
  out.cost = at.cost;
  for (const AccessPlan& a : e.accesses) {
    if (!placeAccess(call, hbm_bytes, a, at, slot, out)) return false;
  }
  out.entry = &e;
  return true;
}

bool directSafeAlways(const CompiledSite& c) {
  const Entry& e = *c.entry;
  size_t depths = c.loop_lo.size();
  if (!e.direct || depths == 0) return false;
  std::vector<PlacedAccess> acc = placedAccesses(c, depths);
  int64_t lo = c.loop_lo.back(), hi = c.loop_hi.back();
  for (const Entry::DirectPair& d : e.direct_pairs) {
    const PlacedAccess &w = acc[d.write], &r = acc[d.read];
    bool exact = w.base == r.base && w.coeff == r.coeff && d.write_bytes == d.read_bytes &&
                 e.direct->loads_before_stores;
    if (!exact && !apart(w, r, lo, hi, true)) return false;
  }
  return true;
}

std::vector<uint8_t> fastDisjoint(const std::vector<const CompiledSite*>& body, size_t depth) {
  std::vector<std::vector<PlacedAccess>> acc;
  for (const CompiledSite* c : body)
    acc.push_back(placedAccesses(*c, depth + 1));
  int64_t lo = body.front()->loop_lo[depth], hi = body.front()->loop_hi[depth];
  std::vector<uint8_t> out(body.size(), 1);
  for (size_t k = 0; k < body.size(); ++k) {
    for (size_t k2 = 0; k2 < body.size() && out[k] != 0; ++k2) {
      const Entry& e = *body[k2]->entry;
      if (e.batch_checked && !e.batch) continue;  // never queued
      for (size_t w = 0; w < e.touches.size() && out[k] != 0; ++w) {
        if (!e.touches[w].write) continue;
        for (const PlacedAccess& t : acc[k]) {
          bool ok = apart(t, acc[k2][w], lo, hi, false) &&
                    (k2 >= k || apart(t, acc[k2][w], lo, hi, true));
          if (!ok) {
            out[k] = 0;
            break;
          }
        }
      }
    }
  }
  return out;
}

}  // namespace tacit::oracle::detail
