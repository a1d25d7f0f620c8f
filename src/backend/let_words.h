// Words that instructions read with `let` (micro-ops), made by the program (docs/backend.md,
// "Micro-op words").
//
// The selector sees a let's word as bit fields, each an addressing attribute the allocator places
// like any address (taidl/semantics.h, SymLet). After allocation each such call's word is known:
// the sum of its fields. The program keeps the words in a constant table in HBM and, before each
// call, loads the call's word into the element the let reads, with the ISA's own instruction
// that moves one element from HBM into that buffer (found from the units' semantics: no name).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "isel/units.h"
#include "oracle/program.h"

namespace tacit::backend {

// A call of a unit whose attribute values include let fields: its declared attributes, and per
// let the element it reads (buffer, starts) and the word it must find there.
struct LetCall {
  std::vector<int64_t> attrs;  // the unit's own attributes (fields dropped)
  struct Word {
    int32_t buffer = -1;
    std::vector<int64_t> starts;
    int64_t value = 0;
  };
  std::vector<Word> words;
};

// Splits a call's attribute values (α, β, then let fields) into the unit's attributes and words.
LetCall letCall(const isel::Unit& unit, int32_t case_index, const std::vector<int64_t>& attrs);

// Emits calls that store words into their buffers. Words live in one constant table placed in
// HBM past `program.hbm_bytes` (grown to hold it); `loads` are appended before each call by
// `addCall`. Throws DiagnosticError if the ISA has no instruction that loads one element of a
// let's buffer from HBM.
class WordLoader {
 public:
  WordLoader(const taidl::Isa& isa, const isel::UnitSet& units, int64_t hbm_alignment);
  ~WordLoader();
  // Appends the loads of `words`, then the call of `unit` with `attrs` (its own attributes).
  void addCall(oracle::Program& program, const isel::Unit& unit, std::vector<oracle::Affine> attrs,
               const std::vector<LetCall::Word>& words);
  // Adds the table of every word loaded to the program (call once, after the last addCall).
  void finish(oracle::Program& program);
  // Throws DiagnosticError if a call of `unit` (case `case_index`) keeps data in a buffer that
  // lets read words from: the allocator does not know of the word loads, which would overwrite it.
  void checkData(const isel::Unit& unit, int32_t case_index) const;

 private:
  struct Mover;
  const Mover& moverFor(int32_t buffer);

  const taidl::Isa& isa_;
  const isel::UnitSet& units_;
  int64_t alignment_;
  std::vector<std::optional<Mover*>> movers_;  // per buffer, once found
  std::vector<std::unique_ptr<Mover>> owned_;
  std::vector<bool> let_buffers_;  // per buffer: some unit's let reads it
  std::vector<int64_t> table_;     // the words, in the order loaded
  int32_t table_buffer_ = -1;      // the words' element type is this buffer's
  int64_t table_base_ = -1;        // HBM byte address of the table
};

}  // namespace tacit::backend
