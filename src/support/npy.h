// NumPy .npy files (format versions 1.0, 2.0 and 3.0).
//
// Reading normalises every array to C order and little-endian bytes, so callers see one layout.
// Element types are NumPy type strings ("<f4", "|i1", "|b1", "|V2", ...): support knows nothing of
// HLO types; hlo/npy_literal.h maps them (bf16 is "|V2", see docs/formats.md).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace tacit {

struct NpyArray {
  // Kind and size, byte order normalised to '<' for multi-byte numbers and '|' otherwise:
  // "|b1", "|i1", "<i2", "<i4", "<i8", "|u1", "<u2", "<u4", "<u8", "<f2", "<f4", "<f8", "|V2", ...
  std::string descr;
  std::vector<int64_t> shape;
  std::vector<uint8_t> data;  // C order, little-endian elements

  size_t itemSize() const;
  int64_t elementCount() const;
};

// Parses .npy bytes. `name` is used in diagnostics. Malformed input throws DiagnosticError.
NpyArray parseNpy(std::string_view bytes, const std::string& name);
NpyArray readNpy(const std::string& path);
// Serialises as format 1.0 (2.0 if the header does not fit), C order.
std::string serializeNpy(const NpyArray& array);

}  // namespace tacit
