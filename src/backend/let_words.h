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
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "isel/units.h"
#include "oracle/program.h"

namespace tacit::backend {

// Appends a program's calls, each call that reads words after the loads of its words. Words live
// in one constant table placed in HBM past `program.hbm_bytes` (grown to hold it by finish()).
class WordLoader {
 public:
  WordLoader(const taidl::Isa& isa, const isel::UnitSet& units, int64_t hbm_alignment);
  // Appends the call of `unit` (case `case_index`) with `attrs`: its attributes, then its let
  // fields' values (taidl::Semantics::let_fields), which make the words loaded before it. Returns
  // why not ("" when appended): a word must be the same in every iteration of the loops around
  // the call. Throws DiagnosticError if the call keeps data in a buffer lets read words from (the
  // allocator does not know of the word loads, which would overwrite it) or if no instruction of
  // the ISA loads one element of a let's buffer from HBM.
  std::string call(oracle::Program& program, const isel::Unit& unit, int32_t case_index,
                   std::vector<oracle::Affine> attrs);
  // Adds the table of every word loaded to the program (once, after the last call).
  void finish(oracle::Program& program);

 private:
  // The cheapest pure movement from HBM into one element of a buffer: its case and α.
  struct Mover {
    const isel::Unit* unit = nullptr;
    const taidl::SymCase* sym = nullptr;
    std::vector<int64_t> alpha;  // all attribute slots; α solved, β 0
    int64_t element_bytes = 0;
  };
  const Mover& moverFor(int32_t buffer);
  void checkData(const isel::Unit& unit, const taidl::SymCase& c) const;
  void load(oracle::Program& program, int32_t buffer, int64_t element, int64_t word);

  const taidl::Isa& isa_;
  const isel::UnitSet& units_;
  int64_t alignment_;
  std::map<int32_t, std::optional<Mover>> movers_;  // per buffer searched: none, or the mover
  std::vector<bool> let_buffers_;                   // per buffer: some unit's let reads it
  std::vector<int64_t> table_;                      // the words, in the order loaded
  int32_t table_buffer_ = -1;                       // the words' element type is this buffer's
  int64_t table_base_ = -1;                         // HBM byte address of the table
};

}  // namespace tacit::backend
