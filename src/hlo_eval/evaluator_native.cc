// Native elementwise runs: a fused run of elementwise steps (evaluator_elementwise.cc) compiled
// to machine code with Xbyak (at the avx512 SIMD level AVX-512 code, at avx2 the AVX2 forms of
// evaluator_native_avx2.cc), eight elements per group, every value the run computes held in a
// register from the instruction that computes it to its last reader. This file: the run's plan,
// registers and loop, and the AVX-512 instructions. The interpreted run writes each step's chunk to
// L1 and reads it back; here only the run's inputs are loaded and only the values read after the
// run are stored. Each operation is the x86 instruction whose result is, element for element, the
// scalar semantics of kernels/scalar.h (docs/numerics.md, "Native elementwise runs"); a run with
// any other operation or type stays interpreted.
#include "hlo_eval/native_run_generator.h"

namespace tacit::hlo::detail {
namespace native {

bool uniformOperand(const FusedOp& op, int o) {
  const FusedRef& r = op.in[o];
  return r.uniform || (r.mode == FusedRef::Mode::kFixed && op.desc.stride[o] == 0);
}

void RunGenerator::generate(const std::vector<FusedOp>& ops, NativeCode* code) {
  code_ = code;
  code_->loads_before_stores = true;
  plan(ops);
  prologue();
  // A few groups of eight (an instruction's 16 lanes) are straight-line code, more a loop.
  int64_t groups = code_->n / kLanes;
  bool looped = groups > kMaxUnrolled;
  Xbyak::Label loop;
  if (looped) L(loop);
  for (int64_t g = 0; g < (looped ? 1 : groups); ++g) {
    if (g > 0) add(rax, kLanes);
    if (periodic_) {
      mov(rdx, rax);
      and_(rdx, kFusedChunk - 1);
    }
    stored_any_ = false;  // the groups' elements are disjoint
    for (size_t k = 0; k < ops.size(); ++k)
      emitOp(ops[k], k);
  }
  if (looped) {
    add(rax, kLanes);
    cmp(rax, rsi);
    jb(loop);
  }
  vzeroupper();
  ret();
  for (Hoisted& h : hoisted_) {
    if (h.value == nullptr) continue;
    align(8);
    L(h.label);
    for (int b = 0; b < h.bytes; ++b)
      db(h.value[b]);
  }
}

RunGenerator::Hoisted* RunGenerator::hoistedOf(int slot, int bytes) {
  for (Hoisted& h : hoisted_) {
    if (h.slot == slot && h.bytes == bytes) return &h;
  }
  return nullptr;
}

// Before any code: the last reader of each slot, the base pointers in order of first use, and
// the operands to broadcast before the loop.
void RunGenerator::plan(const std::vector<FusedOp>& ops) {
  int slots = 0;
  for (const FusedOp& op : ops) {
    slots = std::max(slots, op.out.slot + 1);
    for (int o = 0; o < op.desc.operands; ++o)
      slots = std::max(slots, op.in[o].slot + 1);
  }
  last_read_.assign(static_cast<size_t>(slots), -1);
  held_.assign(static_cast<size_t>(slots), std::nullopt);
  slot_bytes_.assign(static_cast<size_t>(slots), 0);
  for (size_t k = 0; k < ops.size(); ++k) {
    for (int o = 0; o < ops[k].desc.operands; ++o)
      last_read_[static_cast<size_t>(ops[k].in[o].slot)] = static_cast<int64_t>(k);
  }
  std::fill(std::begin(free_vec_), std::end(free_vec_), true);
  std::fill(std::begin(free_mask_), std::end(free_mask_), !avx2_);
  free_mask_[0] = false;  // k0 means "no mask" in EVEX encodings
  if (avx2_) std::fill(std::begin(free_vec_) + kAvx2Registers, std::end(free_vec_), false);
  std::vector<bool> computed(static_cast<size_t>(slots), false);
  const size_t max_hoisted = avx2_ ? budget_.max_hoisted : kMaxHoisted;
  hoisted_.reserve(max_hoisted);  // `h` below points into it
  auto use = [&](int slot, bool store) {
    std::vector<int>& args = code_->args;
    auto it = std::find(args.begin(), args.end(), slot);
    if (it == args.end()) {
      args.push_back(slot);
      code_->stored.push_back(false);
      it = args.end() - 1;
    }
    if (store) code_->stored[static_cast<size_t>(it - args.begin())] = true;
  };
  for (const FusedOp& op : ops) {
    for (int o = 0; o < op.desc.operands; ++o) {
      const FusedRef& ref = op.in[o];
      if (computed[static_cast<size_t>(ref.slot)]) continue;
      int bytes = laneBytes(operandType(op.desc, o));
      bool uniform = uniformOperand(op, o);
      Hoisted* h = hoistedOf(ref.slot, bytes);
      if (h == nullptr && uniform && bytes > 1 && hoisted_.size() < max_hoisted) {
        hoisted_.emplace_back();
        h = &hoisted_.back();
        h->slot = ref.slot;
        h->bytes = bytes;
        h->value = ref.uniform;
      }
      if (!uniform && ref.mode == FusedRef::Mode::kFixed) periodic_ = true;
      if (h == nullptr || h->value == nullptr) use(ref.slot, false);
    }
    computed[static_cast<size_t>(op.out.slot)] = true;
    if (op.out.mode == FusedRef::Mode::kSlot) use(op.out.slot, true);
  }
}

// Loads the first base pointers and broadcasts the hoisted operands (kept for the whole loop).
void RunGenerator::prologue() {
  for (size_t a = 0; a < std::min(kBaseRegisters, code_->args.size()); ++a)
    mov(baseRegister(a), ptr[rdi + static_cast<int>(a) * 8]);
  for (Hoisted& h : hoisted_) {
    // Never released: no result can be given it and clobber one half before the other is read.
    Reg r = allocateUniform(h.bytes);
    Xbyak::Address from = h.value != nullptr ? ptr[rip + h.label] : ptr[loadBase(h.slot, false)];
    if (avx2_) {
      broadcastAvx2(r, from);
    } else if (h.bytes == 8) {
      vbroadcastsd(Xbyak::Zmm(r.idx), from);
    } else {
      vbroadcastss(vec(r), from);
    }
    held_[static_cast<size_t>(h.slot)] = r;
    last_read_[static_cast<size_t>(h.slot)] = INT64_MAX;  // never released
  }
  xor_(eax, eax);
}

void RunGenerator::emitOp(const FusedOp& op, size_t k) {
  const ElementwiseOp& d = op.desc;
  int out_bytes = laneBytes(d.result_type);
  if (out_bytes == 0 || op.out.mode == FusedRef::Mode::kFixed) throw Unsupported{};
  Reg in[3];
  for (int o = 0; o < d.operands; ++o)
    in[o] = operand(op, o);
  // Operands read for the last time free their registers before the result is allocated: every
  // instruction reads its sources before it writes its destination. Not a loaded AVX2 64-bit
  // scalar whose halves share a register: the result's first half could take it and overwrite
  // what the second half reads; it is freed after the operation.
  std::vector<Reg> shared_halves;
  for (const Reg& t : temps_)
    (t.idx2 >= 0 && t.idx2 == t.idx ? shared_halves.push_back(t) : release(t));
  temps_.clear();
  for (int o = 0; o < d.operands; ++o) {
    auto slot = static_cast<size_t>(op.in[o].slot);
    if (held_[slot] && last_read_[slot] <= static_cast<int64_t>(k)) {
      release(*held_[slot]);
      held_[slot].reset();
    }
  }
  auto out = static_cast<size_t>(op.out.slot);
  if (held_[out]) {  // a slot written twice in one run: keep the interpreter's order
    throw Unsupported{};
  }
  if (slot_bytes_[out] != 0 && slot_bytes_[out] != out_bytes) throw Unsupported{};
  slot_bytes_[out] = out_bytes;
  Reg y = allocate(out_bytes, avx2_ && wideResult(op, in));
  switch (d.kind) {
    case ElementwiseOp::Kind::kUnary:
      avx2_ ? emitUnaryAvx2(d, in[0], y) : emitUnary(d, in[0], y);
      break;
    case ElementwiseOp::Kind::kBinary:
      avx2_ ? emitBinaryAvx2(d, in[0], in[1], y) : emitBinary(d, in[0], in[1], y);
      break;
    case ElementwiseOp::Kind::kSelect:
      if (y.mask || y.bytes == 1) throw Unsupported{};
      if (avx2_) {
        emitSelectAvx2(in[0], in[1], in[2], y);
      } else if (y.bytes == 8) {
        vblendmpd(vec(y) | mask(in[0]), vec(in[2]), vec(in[1]));
      } else {
        vblendmps(vec(y) | mask(in[0]), vec(in[2]), vec(in[1]));
      }
      break;
    case ElementwiseOp::Kind::kClamp:
      throw Unsupported{};
  }
  for (const Reg& t : shared_halves)
    release(t);
  if (op.out.mode == FusedRef::Mode::kSlot) store(op.out, y);
  if (last_read_[out] > static_cast<int64_t>(k)) {
    held_[out] = y;
  } else {
    release(y);
  }
}

// Whether the pred that `op` computes stays in AVX2's 64-bit lane form (Reg::wide): computed from
// 64-bit lanes, or from preds all in that form.
bool RunGenerator::wideResult(const FusedOp& op, const Reg* in) const {
  const ElementwiseOp& d = op.desc;
  if (!budget_.wide_preds || d.result_type != P::kPred || d.kind == ElementwiseOp::Kind::kSelect)
    return false;
  if (d.type != P::kPred) return laneBytes(d.type) == 8;  // a compare or is-finite
  for (int o = 0; o < d.operands; ++o) {
    if (!in[o].wide) return false;
  }
  return true;
}

// The register holding operand o: the value computed earlier in this iteration, or a load.
Reg RunGenerator::operand(const FusedOp& op, int o) {
  const FusedRef& ref = op.in[o];
  auto slot = static_cast<size_t>(ref.slot);
  int bytes = laneBytes(operandType(op.desc, o));
  if (bytes == 0) throw Unsupported{};
  if (slot_bytes_[slot] != 0 && slot_bytes_[slot] != bytes) throw Unsupported{};
  slot_bytes_[slot] = bytes;
  bool hoisted = hoistedOf(ref.slot, bytes) != nullptr;
  if (held_[slot]) {
    // A fixed operand is a constant or a broadcast scalar: computed in the run is not expected.
    if (ref.mode == FusedRef::Mode::kFixed && !hoisted) throw Unsupported{};
    return *held_[slot];
  }
  if (ref.mode == FusedRef::Mode::kScratch) throw Unsupported{};
  // A uniform operand is read at its first element; any other fixed operand is a constant of
  // period kFusedChunk.
  bool scalar = uniformOperand(op, o);
  bool periodic = ref.mode == FusedRef::Mode::kFixed && !scalar;
  Reg r = scalar ? allocateUniform(bytes) : allocate(bytes);  // emitOp frees shared halves last
  temps_.push_back(r);
  const Xbyak::Reg64& base = loadBase(ref.slot, false);
  if (avx2_) {
    loadAvx2(r, base, scalar, periodic);
  } else if (bytes == 1) {
    Xbyak::Xmm staging(kStaging);
    if (scalar) {
      vpbroadcastb(staging, ptr[base]);
    } else {
      vmovq(staging, element(base, 1, periodic));
    }
    vptestmb(mask(r), staging, staging);
  } else if (scalar) {
    if (bytes == 8) {
      vbroadcastsd(Xbyak::Zmm(r.idx), ptr[base]);
    } else {
      vbroadcastss(vec(r), ptr[base]);
    }
  } else {
    vmovups(vec(r), element(base, bytes, periodic));
  }
  return r;
}

Reg RunGenerator::allocate(int bytes, bool wide) {
  Reg r;
  r.bytes = bytes;
  r.wide = wide;
  r.mask = bytes == 1 && !avx2_;
  bool* free = r.mask ? free_mask_ : free_vec_;
  int count = r.mask ? 8 : 31;
  // AVX2's 64-bit values take two registers, the lower one first (elements 0-3).
  for (int* slot : {&r.idx, &r.idx2}) {
    if (slot == &r.idx2 && !(avx2_ && (bytes == 8 || wide))) break;
    int i = 0;
    while (i < count && !free[i])
      ++i;
    if (i == count) throw OutOfRegisters{};
    free[i] = false;
    *slot = i;
  }
  return r;
}

// A value equal in every element: with AVX2 a 64-bit one takes a single register for both
// halves (idx2 == idx), which its broadcast fills once.
Reg RunGenerator::allocateUniform(int bytes) {
  if (!avx2_ || bytes != 8) return allocate(bytes);
  Reg r = allocate(4);
  r.bytes = 8;
  r.idx2 = r.idx;
  return r;
}

void RunGenerator::release(const Reg& r) {
  (r.mask ? free_mask_ : free_vec_)[r.idx] = true;
  if (r.idx2 >= 0) free_vec_[r.idx2] = true;
}

// The register holding slot's base pointer (the first four are loaded by the prologue).
const Xbyak::Reg64& RunGenerator::loadBase(int slot, bool store) {
  const std::vector<int>& args = code_->args;
  auto arg = static_cast<size_t>(std::find(args.begin(), args.end(), slot) - args.begin());
  if (arg == args.size()) throw Unsupported{};  // not planned: a generator bug, stay interpreted
  if (store) {
    stored_any_ = true;
  } else if (stored_any_) {
    code_->loads_before_stores = false;
  }
  if (arg < kBaseRegisters) return baseRegister(arg);
  mov(rcx, ptr[rdi + static_cast<int>(arg) * 8]);
  return rcx;
}

Xbyak::Address RunGenerator::element(const Xbyak::Reg64& base, int bytes, bool periodic) {
  return elementAt(base, periodic ? rdx : rax, bytes);
}

void RunGenerator::store(const FusedRef& ref, const Reg& r) {
  const Xbyak::Reg64& base = loadBase(ref.slot, true);
  if (avx2_) {
    storeAvx2(base, r);
  } else if (r.mask) {
    Xbyak::Xmm staging(kStaging);
    vpmovm2b(staging, mask(r));  // 0xff per true element
    vpabsb(staging, staging);    // 0x01
    vmovq(element(base, 1, false), staging);
  } else {
    vmovups(element(base, r.bytes, false), vec(r));
  }
}

void RunGenerator::emitUnary(const ElementwiseOp& d, const Reg& x, const Reg& y) {
  P from = d.type, to = d.result_type;
  switch (d.opcode) {
    case O::kIsFinite:
      if (!isFloatType(from)) throw Unsupported{};
      // Not (quiet NaN | +inf | -inf | signalling NaN).
      if (from == P::kF64) {
        vfpclasspd(mask(y), vec(x), 0x99);
      } else {
        vfpclassps(mask(y), vec(x), 0x99);
      }
      knotb(mask(y), mask(y));
      return;
    case O::kNot:
      if (from != P::kPred) throw Unsupported{};
      knotb(mask(y), mask(x));
      return;
    case O::kConvert:
      break;
    default:
      throw Unsupported{};
  }
  if (from == P::kF32 && to == P::kF64) {
    vcvtps2pd(vec(y), vec(x));  // exact (a NaN is quieted, as static_cast<double> does)
  } else if (from == P::kF64 && to == P::kF32) {
    vcvtpd2ps(vec(y), vec(x));  // nearest even under the default MXCSR, as static_cast<float>
  } else if (from == P::kS32 && to == P::kF64) {
    vcvtdq2pd(vec(y), vec(x));  // exact
  } else if (from == P::kS32 && to == P::kF32) {
    vcvtdq2ps(vec(y), vec(x));  // nearest even
  } else if (from == P::kS64 && to == P::kF64) {
    vcvtqq2pd(vec(y), vec(x));  // nearest even
  } else if (from == P::kS32 && (to == P::kS64 || to == P::kU64)) {
    vpmovsxdq(vec(y), vec(x));
  } else if (from == P::kU32 && (to == P::kS64 || to == P::kU64)) {
    vpmovzxdq(vec(y), vec(x));
  } else if ((from == P::kS64 || from == P::kU64) && (to == P::kS32 || to == P::kU32)) {
    vpmovqd(vec(y), vec(x));  // the low 32 bits
  } else if (!isFloatType(from) && !isFloatType(to) && laneBytes(from) == laneBytes(to) &&
             from != P::kPred && to != P::kPred) {
    vmovdqa64(vec(y), vec(x));  // same bits
  } else {
    throw Unsupported{};
  }
}

void RunGenerator::emitBinary(const ElementwiseOp& d, const Reg& a, const Reg& b, const Reg& y) {
  P t = d.type;
  bool wide = laneBytes(t) == 8;
  if (d.opcode == O::kCompare) {
    if (t == P::kPred) {  // 0 or 1 each: equality of bits
      if (d.direction == D::kEq) {
        kxnorb(mask(y), mask(a), mask(b));
      } else if (d.direction == D::kNe) {
        kxorb(mask(y), mask(a), mask(b));
      } else {
        throw Unsupported{};
      }
    } else if (isFloatType(t)) {
      if (d.total_order) throw Unsupported{};
      int predicate = floatPredicate(d.direction);
      if (wide) {
        vcmppd(mask(y), vec(a), vec(b), predicate);
      } else {
        vcmpps(mask(y), vec(a), vec(b), predicate);
      }
    } else {
      int predicate = intPredicate(d.direction);
      if (isUnsignedType(t)) {
        if (wide) {
          vpcmpuq(mask(y), vec(a), vec(b), predicate);
        } else {
          vpcmpud(mask(y), vec(a), vec(b), predicate);
        }
      } else if (wide) {
        vpcmpq(mask(y), vec(a), vec(b), predicate);
      } else {
        vpcmpd(mask(y), vec(a), vec(b), predicate);
      }
    }
    return;
  }
  if (t == P::kPred) {  // XLA's pred arithmetic: add and maximum are or, multiply and minimum and
    switch (d.opcode) {
      case O::kAnd:
      case O::kMultiply:
      case O::kMinimum:
        kandb(mask(y), mask(a), mask(b));
        return;
      case O::kOr:
      case O::kAdd:
      case O::kMaximum:
        korb(mask(y), mask(a), mask(b));
        return;
      case O::kXor:
        kxorb(mask(y), mask(a), mask(b));
        return;
      default:
        throw Unsupported{};
    }
  }
  Xbyak::Xmm ya = vec(y), va = vec(a), vb = vec(b);
  if (isFloatType(t)) {
    // The first source is a, as in the HLO: x86 returns a's NaN when a is NaN, else b's, which is
    // the scalar semantics' operand order (kernels/scalar.h, firstIfNan).
    switch (d.opcode) {
      case O::kAdd:
        wide ? vaddpd(ya, va, vb) : vaddps(ya, va, vb);
        return;
      case O::kSubtract:
        wide ? vsubpd(ya, va, vb) : vsubps(ya, va, vb);
        return;
      case O::kMultiply:
        wide ? vmulpd(ya, va, vb) : vmulps(ya, va, vb);
        return;
      case O::kDivide:
        wide ? vdivpd(ya, va, vb) : vdivps(ya, va, vb);
        return;
      default:
        throw Unsupported{};
    }
  }
  bool is_unsigned = isUnsignedType(t);
  switch (d.opcode) {  // integers wrap
    case O::kAdd:
      wide ? vpaddq(ya, va, vb) : vpaddd(ya, va, vb);
      return;
    case O::kSubtract:
      wide ? vpsubq(ya, va, vb) : vpsubd(ya, va, vb);
      return;
    case O::kMultiply:
      wide ? vpmullq(ya, va, vb) : vpmulld(ya, va, vb);
      return;
    case O::kAnd:
      wide ? vpandq(ya, va, vb) : vpandd(ya, va, vb);
      return;
    case O::kOr:
      wide ? vporq(ya, va, vb) : vpord(ya, va, vb);
      return;
    case O::kXor:
      wide ? vpxorq(ya, va, vb) : vpxord(ya, va, vb);
      return;
    case O::kMaximum:
      if (is_unsigned) {
        wide ? vpmaxuq(ya, va, vb) : vpmaxud(ya, va, vb);
      } else {
        wide ? vpmaxsq(ya, va, vb) : vpmaxsd(ya, va, vb);
      }
      return;
    case O::kMinimum:
      if (is_unsigned) {
        wide ? vpminuq(ya, va, vb) : vpminud(ya, va, vb);
      } else {
        wide ? vpminsq(ya, va, vb) : vpminsd(ya, va, vb);
      }
      return;
    default:
      throw Unsupported{};
  }
}

// The compiled run: each execution points the code at the run's slots and calls it once.
class NativeRunStep final : public Step {
 public:
  NativeRunStep(std::unique_ptr<RunGenerator> generator, NativeCode code)
      : generator_(std::move(generator)), code_(std::move(code)), bases_(code_.args.size()) {
    code_.fn = generator_->getCode<DirectKernel::Fn>();
  }
  void run(uint8_t* const* slots) override {
    for (size_t a = 0; a < code_.args.size(); ++a)
      bases_[a] = slots[code_.args[a]];
    code_.fn(bases_.data(), code_.n);
  }
  // The code's pages.
  size_t workspaceBytes() const override { return generator_->bytesHeld(); }
  const NativeCode* native() const override { return &code_; }

 private:
  std::unique_ptr<RunGenerator> generator_;
  NativeCode code_;
  std::vector<uint8_t*> bases_;
};

}  // namespace native

std::unique_ptr<Step> compileNativeRun(const std::vector<FusedOp>& ops, int64_t n) {
  const simd::Level level = simd::level();
  if (n <= 0 || n % native::kLanes != 0 || ops.empty() || level < simd::Level::kAvx2)
    return nullptr;
  const bool avx2 = level < simd::Level::kAvx512;
  // AVX2 has 13 value registers: what saves the most instructions first, then less of it until
  // the run's live values fit (mm512_fmadd's run holds up to six 64-bit values and preds).
  static constexpr native::RegisterBudget kAvx2Budgets[] = {{8, true}, {4, true},  {2, true},
                                                            {1, true}, {1, false}, {0, false}};
  for (const native::RegisterBudget& budget : kAvx2Budgets) {
    try {
      auto generator = std::make_unique<native::RunGenerator>(avx2, budget);
      NativeCode code;
      code.n = n;
      generator->generate(ops, &code);
      generator->readyRE();
      return std::make_unique<native::NativeRunStep>(std::move(generator), std::move(code));
    } catch (const native::RunGenerator::OutOfRegisters&) {
      if (!avx2) return nullptr;
    } catch (const native::RunGenerator::Unsupported&) {
      return nullptr;
    } catch (const Xbyak::Error&) {  // memory, or its protection, refused
      return nullptr;
    }
  }
  return nullptr;
}

}  // namespace tacit::hlo::detail
