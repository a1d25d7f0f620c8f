// The AVX2 instructions of native elementwise runs (native_run_generator.h; the SIMD level avx2,
// docs/design.md "SIMD levels"). Each operation computes, element for element, what the AVX-512
// form in evaluator_native.cc computes: the same x86 arithmetic (the IEEE operations, the
// conversions' rounding and NaN quieting are those of the VEX instructions), with AVX2's means:
// pred values are vector masks (a 32-bit lane of all ones or zeros per element) instead of opmask
// registers; 64-bit values take two ymm registers; unsigned compares flip the sign bits before a
// signed compare; a 64-bit compare's masks stay in 64-bit lanes (Reg::wide) for the 64-bit selects
// and pred logic that read them, and are packed to 32-bit lanes where 32-bit lanes meet them.
// What AVX2 has no instruction for (64-bit multiply, minimum and maximum, s64 -> f64, total-order
// compares) stays interpreted (Unsupported), as every unlisted operation does.
//
// Register use: the allocator gives each result registers that the operation's operands may
// have just released (evaluator_native.cc, emitOp), so every sequence below reads an operand's
// register before writing it. A 64-bit result's first register is the lowest free one, never an
// operand's second register (an operand's first register is lower and free too), so writing it
// first cannot clobber an input of the second half; the same holds for wide preds, and a hoisted
// value whose halves share a register is never released. ymm13-15 are scratch.
#include "hlo_eval/native_run_generator.h"

namespace tacit::hlo::detail::native {
namespace {

using Xbyak::Xmm;
using Xbyak::Ymm;

const Ymm kS1(15), kS2(14), kS3(13);  // scratch

}  // namespace

void RunGenerator::broadcastAvx2(const Reg& r, const Xbyak::Address& from) {
  if (r.bytes == 8) {
    vbroadcastsd(lo(r), from);
    if (r.idx2 != r.idx) vmovapd(hi(r), lo(r));
  } else {
    vbroadcastss(lo(r), from);
  }
}

void RunGenerator::loadAvx2(const Reg& r, const Xbyak::Reg64& base, bool scalar, bool periodic) {
  const Xbyak::Reg64& index = periodic ? rdx : rax;
  if (r.bytes == 1) {  // 0 / 1 bytes -> 32-bit lanes of 0 / -1
    if (scalar) {
      vpbroadcastb(Xmm(kS1.getIdx()), ptr[base]);
      vpmovzxbd(lo(r), Xmm(kS1.getIdx()));
    } else {
      vpmovzxbd(lo(r), elementAt(base, index, 1));
    }
    vpxor(kS1, kS1, kS1);
    vpsubd(lo(r), kS1, lo(r));
  } else if (scalar) {
    broadcastAvx2(r, ptr[base]);
  } else if (r.bytes == 8) {
    vmovupd(lo(r), elementAt(base, index, 8));
    vmovupd(hi(r), elementAt(base, index, 8, 32));
  } else {
    vmovups(lo(r), elementAt(base, index, 4));
  }
}

void RunGenerator::storeAvx2(const Xbyak::Reg64& base, const Reg& r) {
  if (r.bytes == 1) {  // 32-bit lanes of 0 / -1 -> 0 / 1 bytes
    vpsrld(kS1, narrowPredAvx2(r, kS3), 31);
    vextracti128(Xmm(kS2.getIdx()), kS1, 1);
    vpackusdw(Xmm(kS1.getIdx()), Xmm(kS1.getIdx()), Xmm(kS2.getIdx()));
    vpackuswb(Xmm(kS1.getIdx()), Xmm(kS1.getIdx()), Xmm(kS1.getIdx()));
    vmovq(elementAt(base, rax, 1), Xmm(kS1.getIdx()));
  } else if (r.bytes == 8) {
    vmovupd(elementAt(base, rax, 8), lo(r));
    vmovupd(elementAt(base, rax, 8, 32), hi(r));
  } else {
    vmovups(elementAt(base, rax, 4), lo(r));
  }
}

void RunGenerator::packLowHalvesAvx2(const Ymm& dst, const Ymm& a, const Ymm& b) {
  // Per 128-bit half: a's dwords 0 and 2, then b's; then the 64-bit quarters in order 0, 2, 1, 3.
  vshufps(dst, a, b, 0x88);
  vpermpd(dst, dst, 0xD8);
}

Ymm RunGenerator::narrowPredAvx2(const Reg& r, const Ymm& scratch) {
  if (!r.wide) return lo(r);
  packLowHalvesAvx2(scratch, lo(r), hi(r));
  return scratch;
}

// and, or, xor (and XLA's pred arithmetic that is one of them) and compares of preds: per half
// when the result is wide (its operands are), else on the 32-bit lane forms.
void RunGenerator::emitPredLogicAvx2(const ElementwiseOp& d, const Reg& a, const Reg& b,
                                     const Reg& y) {
  bool negate = false;
  auto op = [&](const Ymm& out, const Ymm& p, const Ymm& q) {
    switch (d.opcode) {
      case O::kAnd:
      case O::kMultiply:
      case O::kMinimum:
        return vpand(out, p, q);
      case O::kOr:
      case O::kAdd:
      case O::kMaximum:
        return vpor(out, p, q);
      case O::kXor:
        return vpxor(out, p, q);
      case O::kCompare:  // 0 or -1 each: equality of bits
        if (d.direction != D::kEq && d.direction != D::kNe) throw Unsupported{};
        negate = d.direction == D::kNe;
        return vpcmpeqd(out, p, q);
      default:
        throw Unsupported{};
    }
  };
  if (y.wide) {
    op(lo(y), lo(a), lo(b));
    op(hi(y), hi(a), hi(b));
  } else {
    op(lo(y), narrowPredAvx2(a, kS2), narrowPredAvx2(b, kS3));
  }
  if (!negate) return;
  vpcmpeqd(kS1, kS1, kS1);
  vpxor(lo(y), lo(y), kS1);
  if (y.wide) vpxor(hi(y), hi(y), kS1);
}

void RunGenerator::emitUnaryAvx2(const ElementwiseOp& d, const Reg& x, const Reg& y) {
  P from = d.type, to = d.result_type;
  switch (d.opcode) {
    case O::kIsFinite:
      // x - x is +0 for every finite x (subnormals included) and NaN for an infinity or a NaN:
      // finite is that difference compared ordered with itself.
      if (from == P::kF32) {
        vsubps(kS1, lo(x), lo(x));
        vcmpps(lo(y), kS1, kS1, 0x07);  // ORD_Q
      } else if (from == P::kF64) {
        vsubpd(kS1, lo(x), lo(x));
        vsubpd(kS2, hi(x), hi(x));
        if (y.wide) {
          vcmppd(lo(y), kS1, kS1, 0x07);
          vcmppd(hi(y), kS2, kS2, 0x07);
        } else {
          vcmppd(kS1, kS1, kS1, 0x07);
          vcmppd(kS2, kS2, kS2, 0x07);
          packLowHalvesAvx2(lo(y), kS1, kS2);
        }
      } else {
        throw Unsupported{};
      }
      return;
    case O::kNot:
      if (from != P::kPred) throw Unsupported{};
      vpcmpeqd(kS1, kS1, kS1);
      if (y.wide) {
        vpxor(lo(y), lo(x), kS1);
        vpxor(hi(y), hi(x), kS1);
      } else {
        vpxor(lo(y), narrowPredAvx2(x, kS2), kS1);
      }
      return;
    case O::kConvert:
      break;
    default:
      throw Unsupported{};
  }
  const Xmm high(kS1.getIdx());
  if (from == P::kF32 && to == P::kF64) {
    vextractf128(high, lo(x), 1);
    vcvtps2pd(lo(y), Xmm(x.idx));  // exact (a NaN is quieted, as static_cast<double> does)
    vcvtps2pd(hi(y), high);
  } else if (from == P::kF64 && to == P::kF32) {
    vcvtpd2ps(high, hi(x));  // nearest even under the default MXCSR, as static_cast<float>
    vcvtpd2ps(Xmm(y.idx), lo(x));
    vinsertf128(lo(y), lo(y), high, 1);
  } else if (from == P::kS32 && to == P::kF64) {
    vextracti128(high, lo(x), 1);
    vcvtdq2pd(lo(y), Xmm(x.idx));  // exact
    vcvtdq2pd(hi(y), high);
  } else if (from == P::kS32 && to == P::kF32) {
    vcvtdq2ps(lo(y), lo(x));  // nearest even
  } else if ((from == P::kS32 || from == P::kU32) && (to == P::kS64 || to == P::kU64)) {
    vextracti128(high, lo(x), 1);
    if (from == P::kS32) {
      vpmovsxdq(lo(y), Xmm(x.idx));
      vpmovsxdq(hi(y), high);
    } else {
      vpmovzxdq(lo(y), Xmm(x.idx));
      vpmovzxdq(hi(y), high);
    }
  } else if ((from == P::kS64 || from == P::kU64) && (to == P::kS32 || to == P::kU32)) {
    packLowHalvesAvx2(lo(y), lo(x), hi(x));  // the low 32 bits
  } else if (!isFloatType(from) && !isFloatType(to) && laneBytes(from) == laneBytes(to) &&
             from != P::kPred && to != P::kPred) {
    vmovdqa(lo(y), lo(x));  // same bits
    if (y.bytes == 8) vmovdqa(hi(y), hi(x));
  } else {
    throw Unsupported{};
  }
}

// out = the 32-bit lanes' compare of a and b (signed; NE, GE and LE negate EQ, LT and GT).
void RunGenerator::compareIntsAvx2(const ElementwiseOp& d, const Ymm& a, const Ymm& b,
                                   const Ymm& out) {
  const bool wide = laneBytes(d.type) == 8;
  auto eq = [&](const Ymm& y, const Ymm& p, const Ymm& q) {
    wide ? vpcmpeqq(y, p, q) : vpcmpeqd(y, p, q);
  };
  auto gt = [&](const Ymm& y, const Ymm& p, const Ymm& q) {
    wide ? vpcmpgtq(y, p, q) : vpcmpgtd(y, p, q);
  };
  bool negate = false;
  switch (d.direction) {
    case D::kEq:
      eq(out, a, b);
      break;
    case D::kNe:
      eq(out, a, b);
      negate = true;
      break;
    case D::kGt:
      gt(out, a, b);
      break;
    case D::kLe:
      gt(out, a, b);
      negate = true;
      break;
    case D::kLt:
      gt(out, b, a);
      break;
    case D::kGe:
      gt(out, b, a);
      negate = true;
      break;
  }
  if (negate) {
    vpcmpeqd(kS1, kS1, kS1);
    vpxor(out, out, kS1);
  }
}

void RunGenerator::compareAvx2(const ElementwiseOp& d, const Reg& a, const Reg& b, const Reg& y) {
  P t = d.type;
  if (t == P::kPred) return emitPredLogicAvx2(d, a, b, y);
  if (isFloatType(t)) {
    if (d.total_order) throw Unsupported{};
    const int predicate = floatPredicate(d.direction);
    if (t == P::kF32) {
      vcmpps(lo(y), lo(a), lo(b), predicate);
    } else if (y.wide) {
      vcmppd(lo(y), lo(a), lo(b), predicate);
      vcmppd(hi(y), hi(a), hi(b), predicate);
    } else {
      vcmppd(kS2, lo(a), lo(b), predicate);
      vcmppd(kS3, hi(a), hi(b), predicate);
      packLowHalvesAvx2(lo(y), kS2, kS3);
    }
    return;
  }
  // Integers: unsigned ones compare as signed after flipping their sign bits.
  const bool wide = laneBytes(t) == 8, flip = isUnsignedType(t);
  auto half = [&](const Ymm& p, const Ymm& q, const Ymm& out) {
    if (!flip) return compareIntsAvx2(d, p, q, out);
    vpcmpeqd(kS1, kS1, kS1);
    wide ? vpsllq(kS1, kS1, 63) : vpslld(kS1, kS1, 31);
    vpxor(kS2, p, kS1);
    vpxor(kS3, q, kS1);
    compareIntsAvx2(d, kS2, kS3, out);
  };
  if (!wide) return half(lo(a), lo(b), lo(y));
  // y's register is a's or b's first one or a lower one (see the file comment): the first
  // half's mask waits in it while the second half reads a's and b's second registers.
  half(lo(a), lo(b), lo(y));
  if (y.wide) return half(hi(a), hi(b), hi(y));
  half(hi(a), hi(b), kS2);
  packLowHalvesAvx2(lo(y), lo(y), kS2);
}

void RunGenerator::emitSelectAvx2(const Reg& pred, const Reg& on_true, const Reg& on_false,
                                  const Reg& y) {
  if (y.bytes == 4) {
    vblendvps(lo(y), lo(on_false), lo(on_true), narrowPredAvx2(pred, kS1));
    return;
  }
  if (pred.wide) {
    vblendvpd(lo(y), lo(on_false), lo(on_true), lo(pred));
    vblendvpd(hi(y), hi(on_false), hi(on_true), hi(pred));
    return;
  }
  // The 32-bit lane masks widened to 64-bit lanes, one register per half.
  vextracti128(Xmm(kS2.getIdx()), lo(pred), 1);
  vpmovsxdq(kS1, Xmm(pred.idx));
  vpmovsxdq(kS2, Xmm(kS2.getIdx()));
  vblendvpd(lo(y), lo(on_false), lo(on_true), kS1);
  vblendvpd(hi(y), hi(on_false), hi(on_true), kS2);
}

void RunGenerator::emitBinaryAvx2(const ElementwiseOp& d, const Reg& a, const Reg& b,
                                  const Reg& y) {
  if (d.opcode == O::kCompare) return compareAvx2(d, a, b, y);
  P t = d.type;
  const bool wide = laneBytes(t) == 8;
  // Applies `op` to each register of the operands (one, or two for 64-bit lanes).
  auto each = [&](auto op) {
    op(lo(y), lo(a), lo(b));
    if (wide) op(hi(y), hi(a), hi(b));
  };
  // XLA's pred arithmetic: add and maximum are or, multiply and minimum and.
  if (t == P::kPred) return emitPredLogicAvx2(d, a, b, y);
  using R = const Ymm&;
  if (isFloatType(t)) {
    // The first source is a, as in the HLO: x86 returns a's NaN when a is NaN, else b's.
    switch (d.opcode) {
      case O::kAdd:
        return each([&](R o, R p, R q) { wide ? vaddpd(o, p, q) : vaddps(o, p, q); });
      case O::kSubtract:
        return each([&](R o, R p, R q) { wide ? vsubpd(o, p, q) : vsubps(o, p, q); });
      case O::kMultiply:
        return each([&](R o, R p, R q) { wide ? vmulpd(o, p, q) : vmulps(o, p, q); });
      case O::kDivide:
        return each([&](R o, R p, R q) { wide ? vdivpd(o, p, q) : vdivps(o, p, q); });
      default:
        throw Unsupported{};
    }
  }
  const bool is_unsigned = isUnsignedType(t);
  switch (d.opcode) {  // integers wrap
    case O::kAdd:
      return each([&](R o, R p, R q) { wide ? vpaddq(o, p, q) : vpaddd(o, p, q); });
    case O::kSubtract:
      return each([&](R o, R p, R q) { wide ? vpsubq(o, p, q) : vpsubd(o, p, q); });
    case O::kAnd:
      return each([&](R o, R p, R q) { vpand(o, p, q); });
    case O::kOr:
      return each([&](R o, R p, R q) { vpor(o, p, q); });
    case O::kXor:
      return each([&](R o, R p, R q) { vpxor(o, p, q); });
    default:
      break;
  }
  if (wide) throw Unsupported{};  // no 64-bit multiply, minimum or maximum in AVX2
  switch (d.opcode) {
    case O::kMultiply:
      return vpmulld(lo(y), lo(a), lo(b));
    case O::kMaximum:
      return is_unsigned ? vpmaxud(lo(y), lo(a), lo(b)) : vpmaxsd(lo(y), lo(a), lo(b));
    case O::kMinimum:
      return is_unsigned ? vpminud(lo(y), lo(a), lo(b)) : vpminsd(lo(y), lo(a), lo(b));
    default:
      throw Unsupported{};
  }
}

}  // namespace tacit::hlo::detail::native
