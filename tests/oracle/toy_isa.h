// A small ISA for the oracle's unit tests: a byte-addressed HBM, one s32 scratchpad, registers
// with a register-addressed write (push), a strided column access (negcol) and a macro.
#pragma once

#include "taidl/isa.h"

namespace tacit::oracle::testing {

inline constexpr const char* kToySpec = R"(isa toy;

buffer sp[8] of s32[4];
reg $ptr = 0;
reg $count = 0;

instruction load(n; addr, row) {
  require n >= 1 && n <= 8;
  require addr >= 0;
  require row >= 0 && row + n <= 8;
  cost n;
  reads d0[addr] size [n * 16];
  writes sp[row] size [n];
  %a = u8[n, 4, 4] reshape(%In1);
  %Out0 = s32[n, 4] bitcast-convert(%a);
}

instruction store(n; row, addr) {
  require n >= 1 && n <= 8;
  require addr >= 0;
  require row >= 0 && row + n <= 8;
  cost n;
  reads sp[row] size [n];
  writes d0[addr] size [n * 16];
  %a = u8[n, 4, 4] bitcast-convert(%In1);
  %Out0 = u8[n * 16] reshape(%a);
}

instruction addrows(; a, b, c) {
  require a >= 0 && a < 8 && b >= 0 && b < 8 && c >= 0 && c < 8;
  cost 1;
  reads sp[a] size [1];
  reads sp[b] size [1];
  writes sp[c] size [1];
  %Out0 = s32[1, 4] add(%In1, %In2);
}

instruction push(; addr) {
  require addr >= 0;
  cost 2;
  %v : u8[16] = read d0[addr];
  %r = u8[1, 4, 4] reshape(%v);
  %w = s32[1, 4] bitcast-convert(%r);
  write sp[$ptr, 0] = %w;
  set $ptr = $ptr + 1;
  set $count = $count + 1;
}

instruction negcol(k;) {
  require k >= 0 && k < 4;
  %c : s32[8, 1] = read sp[0, k];
  %n = s32[8, 1] negate(%c);
  write sp[0, k] = %n;
}

macro copy2(; addr, row, out) {
  load(1, addr, row);
  store(n = 1, row = row, addr = out);
}
)";

inline const taidl::Isa& toyIsa() {
  static const taidl::Isa isa = taidl::loadIsa(kToySpec, "toy.taidl");
  return isa;
}

}  // namespace tacit::oracle::testing
