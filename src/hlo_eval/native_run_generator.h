// The code generator of native elementwise runs, private to evaluator_native.cc (the run's plan,
// its registers and the AVX-512 instructions) and evaluator_native_avx2.cc (the AVX2 ones).
#pragma once

#include <xbyak/xbyak.h>

#include <algorithm>
#include <optional>

#include "hlo_eval/evaluator_plan.h"
#include "support/simd.h"

namespace tacit::hlo::detail::native {

using P = PrimitiveType;
using O = HloOpcode;
using D = ComparisonDirection;

inline constexpr int64_t kLanes =
    8;  // elements per group: one zmm of 64-bit values, one ymm of 32-bit

// Bytes of an element in memory: 1 (pred, a mask register's bit in code), 4 (a ymm lane) or 8
// (a zmm lane); 0 for a type the generator does not handle.
inline int laneBytes(P t) {
  switch (t) {
    case P::kPred:
      return 1;
    case P::kS32:
    case P::kU32:
    case P::kF32:
      return 4;
    case P::kS64:
    case P::kU64:
    case P::kF64:
      return 8;
    default:
      return 0;
  }
}

inline bool isFloatType(P t) {
  return t == P::kF32 || t == P::kF64;
}
inline bool isUnsignedType(P t) {
  return t == P::kU32 || t == P::kU64;
}

// The element type of operand `o` of `op`.
inline P operandType(const ElementwiseOp& op, int o) {
  if (op.opcode == O::kSelect && o == 0) return P::kPred;
  return op.type;
}

// vcmp predicate for an IEEE compare: ordered except NE, which is true for NaN (as C++'s !=).
inline int floatPredicate(D d) {
  switch (d) {
    case D::kEq:
      return 0x00;  // EQ_OQ
    case D::kNe:
      return 0x04;  // NEQ_UQ
    case D::kLt:
      return 0x11;  // LT_OQ
    case D::kLe:
      return 0x12;  // LE_OQ
    case D::kGt:
      return 0x1E;  // GT_OQ
    case D::kGe:
      return 0x1D;  // GE_OQ
  }
  return -1;
}

// vpcmp predicate (signed or unsigned by the instruction chosen).
inline int intPredicate(D d) {
  switch (d) {
    case D::kEq:
      return 0;
    case D::kLt:
      return 1;
    case D::kLe:
      return 2;
    case D::kNe:
      return 4;
    case D::kGe:
      return 5;  // not less than
    case D::kGt:
      return 6;  // not less than or equal
  }
  return -1;
}

// A register holding eight elements. AVX-512: a vector register (zmm for 64-bit lanes, ymm for
// 32-bit) or an opmask register (pred). AVX2: a ymm for 32-bit lanes and for pred (a lane of all
// ones or all zeros per element), two (idx: elements 0-3, idx2: 4-7) for 64-bit lanes. An AVX2
// pred computed from 64-bit lanes stays in their form, two ymm of 64-bit lanes of all ones or
// zeros (`wide`), for the 64-bit selects and logic that read it (packed only where 32-bit lanes
// meet it). A value equal in every element hoisted before the loop takes one ymm for 64-bit lanes
// (idx2 == idx): both halves are the same.
struct Reg {
  bool mask = false;
  int idx = -1;
  int idx2 = -1;
  int bytes = 0;  // lane bytes
  bool wide = false;
};

// What an AVX2 run may spend its 13 value registers on (RunGenerator): hoisted uniform operands
// and preds kept in 64-bit form save instructions in the loop but hold registers; a run that
// runs out of registers is generated again with less (compileNativeRun).
struct RegisterBudget {
  size_t max_hoisted = 8;
  bool wide_preds = true;
};

class RunGenerator final : public Xbyak::CodeGenerator {
 public:
  // Unsupported is thrown for a run the generator cannot compile (the run stays interpreted);
  // OutOfRegisters when more values are live than registers (no spilling).
  struct Unsupported {};
  struct OutOfRegisters : Unsupported {};

  // Up to this many groups of eight elements are straight-line code, more a loop.
  static constexpr int64_t kMaxUnrolled = 4;

  // The code grows from one page as it is written (read-write), and is made read-execute when
  // complete (readyRE): never writable and executable at once.
  // avx2: AVX2 instructions only (evaluator_native_avx2.cc); else AVX-512 F/VL/DQ/BW.
  explicit RunGenerator(bool avx2, RegisterBudget budget = {})
      : CodeGenerator(4096, Xbyak::AutoGrow), avx2_(avx2), budget_(budget) {}
  size_t bytesHeld() const { return maxSize_; }  // the pages it holds

  // Emits the loop; code->args receives the slot behind each base pointer the code uses.
  void generate(const std::vector<FusedOp>& ops, NativeCode* code);

 private:
  // Calling convention (System V): rdi = the base pointers, rsi = n. rax is the element index,
  // rdx the index within a kFusedChunk period (periodic constants); r8-r11 hold the first four
  // base pointers, rcx any other. zmm31 / xmm31 is the staging register of pred loads and stores.
  // AVX2: ymm13-15 are scratch registers, ymm0-12 hold values.
  static constexpr int kStaging = 31;
  static constexpr int kAvx2Registers = 13;
  static constexpr size_t kBaseRegisters = 4;
  // Vector operands equal in every element (broadcast scalars, uniform constants) are broadcast
  // into registers of their own once, before the loop: at most this many (AVX2: the budget's).
  static constexpr size_t kMaxHoisted = 8;

  void plan(const std::vector<FusedOp>& ops);
  void prologue();
  struct Hoisted;
  Hoisted* hoistedOf(int slot, int bytes);
  // r8..r11 (members of the generator: not shareable between generators).
  const Xbyak::Reg64& baseRegister(size_t a) const {
    return a == 0 ? r8 : a == 1 ? r9 : a == 2 ? r10 : r11;
  }

  void emitOp(const FusedOp& op, size_t k);
  Reg operand(const FusedOp& op, int o);
  Reg allocate(int bytes, bool wide = false);
  Reg allocateUniform(int bytes);
  bool wideResult(const FusedOp& op, const Reg* in) const;
  void release(const Reg& r);
  const Xbyak::Reg64& loadBase(int slot, bool store);
  Xbyak::Address element(const Xbyak::Reg64& base, int bytes, bool periodic);
  void store(const FusedRef& ref, const Reg& r);
  void emitUnary(const ElementwiseOp& d, const Reg& x, const Reg& y);
  void emitBinary(const ElementwiseOp& d, const Reg& a, const Reg& b, const Reg& y);
  static Xbyak::Xmm vec(const Reg& r) {
    return r.bytes == 8 ? Xbyak::Xmm(Xbyak::Zmm(r.idx)) : Xbyak::Xmm(Xbyak::Ymm(r.idx));
  }
  static Xbyak::Opmask mask(const Reg& r) { return Xbyak::Opmask(r.idx); }

  // The AVX2 forms (evaluator_native_avx2.cc).
  void broadcastAvx2(const Reg& r, const Xbyak::Address& from);
  void loadAvx2(const Reg& r, const Xbyak::Reg64& base, bool scalar, bool periodic);
  void storeAvx2(const Xbyak::Reg64& base, const Reg& r);
  void emitUnaryAvx2(const ElementwiseOp& d, const Reg& x, const Reg& y);
  void emitBinaryAvx2(const ElementwiseOp& d, const Reg& a, const Reg& b, const Reg& y);
  void emitSelectAvx2(const Reg& pred, const Reg& on_true, const Reg& on_false, const Reg& y);
  void compareAvx2(const ElementwiseOp& d, const Reg& a, const Reg& b, const Reg& y);
  void compareIntsAvx2(const ElementwiseOp& d, const Xbyak::Ymm& a, const Xbyak::Ymm& b,
                       const Xbyak::Ymm& out);
  // dst = the low 32 bits of each 64-bit lane of lo (elements 0-3) then hi (4-7).
  void packLowHalvesAvx2(const Xbyak::Ymm& dst, const Xbyak::Ymm& lo, const Xbyak::Ymm& hi);
  // A pred's 32-bit lane form: its register, or a wide one packed into `scratch`.
  Xbyak::Ymm narrowPredAvx2(const Reg& r, const Xbyak::Ymm& scratch);
  void emitPredLogicAvx2(const ElementwiseOp& d, const Reg& a, const Reg& b, const Reg& y);
  static Xbyak::Ymm lo(const Reg& r) { return Xbyak::Ymm(r.idx); }
  static Xbyak::Ymm hi(const Reg& r) { return Xbyak::Ymm(r.idx2); }

  bool avx2_ = false;
  RegisterBudget budget_;
  NativeCode* code_ = nullptr;
  bool stored_any_ = false;
  std::vector<int64_t> last_read_;        // per slot: the last op of the run reading it
  std::vector<std::optional<Reg>> held_;  // per slot: the register holding its value
  std::vector<int> slot_bytes_;           // per slot: its lane bytes (one view per run)
  std::vector<Reg> temps_;                // loaded operands of the current op
  // Operands broadcast before the loop: a constant's value is embedded in the code (after its
  // last instruction), a runtime scalar is read through its base pointer.
  struct Hoisted {
    int slot = -1;
    int bytes = 0;
    const uint8_t* value = nullptr;  // the constant's first element
    Xbyak::Label label;
  };
  std::vector<Hoisted> hoisted_;
  bool periodic_ = false;  // an operand repeats with period kFusedChunk: rdx is needed
  bool free_vec_[31] = {};
  bool free_mask_[8] = {};
};

// Whether operand o has one value in every element: a broadcast scalar or a uniform constant.
bool uniformOperand(const FusedOp& op, int o);

// The element address of `base` for index register `index` (rax, or rdx for periodic operands),
// plus `offset` bytes.
inline Xbyak::Address elementAt(const Xbyak::Reg64& base, const Xbyak::Reg64& index, int bytes,
                                int offset = 0) {
  return Xbyak::util::ptr[base + index * bytes + offset];
}

}  // namespace tacit::hlo::detail::native
