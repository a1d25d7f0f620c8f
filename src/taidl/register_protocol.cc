// Macros that follow a register protocol (docs/taidl.md section 5, "Register protocols").
//
// TPUv1's weight path is read_weight (push a tile into the FIFO slot $fifo_push) then
// update_weight (pop the slot $fifo_pop into the weights). Composed with unknown registers the
// macro is not selectable: the read cannot be proven to see the write. But a program the backend
// emits starts from the registers' initial values and changes them only through selectable units.
// If the only units that set registers are such macros, the machine's register states are the
// ones reachable from the initial values through them, a finite set here (the pointers run modulo
// the FIFO depth). A macro whose composition, entered in each reachable state, is the same
// register-free semantics is exact in every program the backend can emit, so it is selectable
// with that semantics. Its writes into the protocol's internal buffers (the FIFO slots, which no
// selectable unit reads or writes) are not outputs: only the protocol observes them, and a read
// of one that the macro did not itself write makes the macro not selectable.
#include <map>
#include <set>

#include "taidl/symbolic.h"

namespace tacit::taidl {
namespace {

using RegisterState = std::vector<int64_t>;

// Beyond this many reachable register states the protocol is not analysed (no macro is made
// selectable this way).
constexpr size_t kMaxProtocolStates = 256;

bool setsRegisters(const std::vector<Stmt>& body) {
  for (const Stmt& s : body) {
    if (s.kind == StmtKind::kSet || setsRegisters(s.body) || setsRegisters(s.else_body))
      return true;
  }
  return false;
}

bool macroSetsRegisters(const Isa& isa, const Macro& m) {
  for (const Call& c : m.calls) {
    bool sets = c.callee_is_macro
                    ? macroSetsRegisters(isa, isa.macros[static_cast<size_t>(c.callee_index)])
                    : setsRegisters(isa.instructions[static_cast<size_t>(c.callee_index)].body);
    if (sets) return true;
  }
  return false;
}

// Whether a unit the backend can already select changes registers: then the reachable states are
// not those of the protocol macros alone, and the analysis is not attempted.
bool selectableUnitSetsRegisters(const Isa& isa) {
  for (size_t i = 0; i < isa.instructions.size(); ++i) {
    if (isa.instruction_semantics[i].selectable && setsRegisters(isa.instructions[i].body))
      return true;
  }
  for (size_t i = 0; i < isa.macros.size(); ++i) {
    if (isa.macro_semantics[i].selectable && macroSetsRegisters(isa, isa.macros[i])) return true;
  }
  return false;
}

// The protocol's internal buffers: HBM excepted, those no selectable unit reads or writes (a
// FIFO's slots, accessed only by the push and pop instructions). Writes into them are not
// observable by any program the backend emits except through the protocol itself.
std::vector<bool> internalBuffers(const Isa& isa) {
  std::vector<bool> internal(isa.buffers.size(), true);
  internal[0] = false;
  auto mark = [&](const std::vector<Semantics>& list) {
    for (const Semantics& sem : list) {
      for (const SymCase& c : sem.cases) {
        for (const SymSlice& in : c.inputs)
          internal[static_cast<size_t>(in.buffer)] = false;
        for (const SymSlice& out : c.outputs)
          internal[static_cast<size_t>(out.buffer)] = false;
      }
    }
  };
  mark(isa.instruction_semantics);
  mark(isa.macro_semantics);
  return internal;
}

bool readsAny(const Semantics& sem, const std::vector<bool>& buffers) {
  for (const SymCase& c : sem.cases) {
    for (const SymSlice& in : c.inputs) {
      if (buffers[static_cast<size_t>(in.buffer)]) return true;
    }
  }
  return false;
}

// One round: the states reachable from `initial` through `macros`, and each macro's semantics,
// which must be the same in every state. Returns the macro that fails (not selectable in some
// state, or different semantics in two states), -1 if all hold; `overflow` if the states exceed
// the bound.
int32_t explore(const Isa& isa, const std::vector<int32_t>& macros, const RegisterState& initial,
                const std::vector<bool>& internal, std::map<int32_t, Semantics>& semantics,
                bool& overflow) {
  std::map<int32_t, std::string> text;
  std::set<RegisterState> seen{initial};
  std::vector<RegisterState> todo{initial};
  while (!todo.empty()) {
    RegisterState state = std::move(todo.back());
    todo.pop_back();
    for (int32_t m : macros) {
      std::vector<RegisterState> exits;
      Semantics sem = macroSemanticsAt(isa, m, state, &exits, &internal);
      if (!sem.selectable || readsAny(sem, internal)) return m;
      std::string t = semanticsText(isa, sem);
      auto [it, fresh] = text.emplace(m, t);
      if (!fresh && it->second != t) return m;
      if (fresh) semantics.emplace(m, std::move(sem));
      for (RegisterState& e : exits) {
        if (!seen.insert(e).second) continue;
        if (seen.size() > kMaxProtocolStates) {
          overflow = true;
          return -1;
        }
        todo.push_back(std::move(e));
      }
    }
  }
  return -1;
}

}  // namespace

void selectRegisterProtocolMacros(Isa& isa) {
  std::vector<int32_t> candidates;
  for (size_t i = 0; i < isa.macros.size(); ++i) {
    if (!isa.macro_semantics[i].selectable) candidates.push_back(static_cast<int32_t>(i));
  }
  if (candidates.empty() || isa.registers.empty() || selectableUnitSetsRegisters(isa)) return;
  RegisterState initial;
  for (const Register& r : isa.registers)
    initial.push_back(r.value);
  std::vector<bool> internal = internalBuffers(isa);
  // A failing macro leaves the set and the states are recomputed without it (the states it
  // reached may have been what made another macro fail).
  while (!candidates.empty()) {
    std::map<int32_t, Semantics> semantics;
    bool overflow = false;
    int32_t failed = explore(isa, candidates, initial, internal, semantics, overflow);
    if (overflow) return;
    if (failed < 0) {
      for (auto& [m, sem] : semantics)
        isa.macro_semantics[static_cast<size_t>(m)] = std::move(sem);
      return;
    }
    std::erase(candidates, failed);
  }
}

}  // namespace tacit::taidl
