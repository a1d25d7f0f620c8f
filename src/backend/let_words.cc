#include "backend/let_words.h"

#include "alloc/call_info.h"
#include "hlo/dtype.h"
#include "isel/alpha_solver.h"
#include "support/diagnostic.h"
#include "taidl/expr.h"

namespace tacit::backend {
namespace {

using taidl::Expr;

int64_t evalOr(const Expr& e, const std::vector<int64_t>& attrs, int64_t fallback) {
  try {
    return taidl::evalExpr(e, taidl::EvalEnv{attrs});
  } catch (const taidl::ExprError&) {
    return fallback;
  }
}

bool constraintsHold(const taidl::SymCase& c, const std::vector<int64_t>& attrs) {
  for (const Expr& e : c.constraints) {
    if (evalOr(e, attrs, 0) == 0) return false;
  }
  return true;
}

// Sets one β of `start` not yet `fixed` so that the start equals `target`; false if none can.
bool solve(const alloc::AffineStart& start, int64_t target, std::vector<int64_t>& attrs,
           std::vector<bool>& fixed) {
  int64_t rest = target - start.constant;
  for (const auto& [slot, coeff] : start.terms) {
    if (fixed[static_cast<size_t>(slot)]) rest -= coeff * attrs[static_cast<size_t>(slot)];
  }
  for (const auto& [slot, coeff] : start.terms) {
    if (fixed[static_cast<size_t>(slot)] || rest % coeff != 0) continue;
    attrs[static_cast<size_t>(slot)] = rest / coeff;
    fixed[static_cast<size_t>(slot)] = true;
    return true;
  }
  return rest == 0;
}

}  // namespace

WordLoader::WordLoader(const taidl::Isa& isa, const isel::UnitSet& units, int64_t hbm_alignment)
    : isa_(isa), units_(units), alignment_(std::max<int64_t>(1, hbm_alignment)) {
  let_buffers_.assign(isa.buffers.size(), false);
  for (const isel::Unit& u : units.units) {
    if (!u.semantics) continue;
    for (const taidl::SymCase& c : u.semantics->cases) {
      for (const taidl::SymLet& l : c.lets)
        let_buffers_[static_cast<size_t>(l.buffer)] = true;
    }
  }
}

std::string WordLoader::call(oracle::Program& program, const isel::Unit& unit, int32_t case_index,
                             std::vector<oracle::Affine> attrs) {
  const taidl::Semantics& sem = *unit.semantics;
  const taidl::SymCase& c = sem.cases[static_cast<size_t>(case_index)];
  checkData(unit, c);
  if (!sem.let_fields.empty()) {
    // A word is made of on-chip addresses, which loops do not move (a tiled program shifts them
    // by constants per copy): one word per call.
    std::vector<int64_t> values;
    for (const oracle::Affine& a : attrs) {
      if (!a.isConstant()) return "a let's word moves with the loops";
      values.push_back(a.constant);
    }
    for (const taidl::SymLet& l : c.lets) {
      int64_t word = 0;
      for (int32_t f : l.fields) {
        const taidl::SymLetField& field = sem.let_fields[static_cast<size_t>(f)];
        word += values[static_cast<size_t>(field.slot)] * field.divisor;
      }
      load(program, l.buffer, taidl::evalExpr(l.starts[0], taidl::EvalEnv{values}), word);
    }
    attrs.resize(static_cast<size_t>(unit.num_attrs) - sem.let_fields.size());
  }
  program.callUnit(isa_, unit.is_macro, unit.index, std::move(attrs));
  return "";
}

void WordLoader::checkData(const isel::Unit& unit, const taidl::SymCase& c) const {
  for (const auto* slices : {&c.inputs, &c.outputs}) {
    for (const taidl::SymSlice& s : *slices) {
      if (!let_buffers_[static_cast<size_t>(s.buffer)]) continue;
      throw DiagnosticError(makeError(
          "", {},
          "instruction '" + unit.name + "' keeps data in buffer '" +
              isa_.buffers[static_cast<size_t>(s.buffer)].name.text +
              "', which lets read words from: the program's word loads would overwrite it",
          "docs/backend.md, \"Micro-op words\": a let's buffer holds only words"));
    }
  }
}

// A pure data movement from HBM into one element of `buffer`: a pattern of one HBM input and one
// output in the buffer, its α solved for a single element, the cheapest such.
const WordLoader::Mover& WordLoader::moverFor(int32_t buffer) {
  auto [it, fresh] = movers_.try_emplace(buffer);
  if (fresh) {
    const taidl::Buffer& b = isa_.buffers[static_cast<size_t>(buffer)];
    std::vector<int64_t> dims(b.access.size(), 1);
    dims.insert(dims.end(), b.unit.begin(), b.unit.end());
    const hlo::Shape element(b.dtype, dims);
    int64_t best_cost = 0;
    for (const isel::UnitPattern& p : units_.patterns) {
      const taidl::SymCase& c = *p.sym;
      if (!p.pure_movement || c.inputs.size() != 1 || c.outputs.size() != 1 ||
          c.outputs[0].buffer != buffer ||
          !isa_.buffers[static_cast<size_t>(c.inputs[0].buffer)].is_hbm || !c.lets.empty())
        continue;
      const isel::Unit& u = units_.units[static_cast<size_t>(p.unit)];
      isel::AlphaSolver a(u.num_attrs, u.num_alpha);
      if (!isel::unifyType(c.outputs[0].type, element, a) ||
          !isel::unifyType(c.inputs[0].type,
                           hlo::Shape(hlo::PrimitiveType::kU8, {element.byteSize()}), a) ||
          !a.settle() || !isel::bindUndetermined(p, u, a))
        continue;
      std::vector<isel::AlphaSolver> options;
      if (a.complete()) {
        options.push_back(a);
      } else {
        options = isel::completions(p, u, a, 8);
      }
      for (const isel::AlphaSolver& done : options) {
        std::vector<int64_t> attrs = done.values();
        attrs.resize(static_cast<size_t>(u.num_attrs), 0);
        int64_t cost = evalOr(c.cost, attrs, 1);
        if (it->second && cost >= best_cost) continue;
        it->second = Mover{&u, &c, attrs, element.byteSize()};
        best_cost = cost;
      }
    }
  }
  if (it->second) return *it->second;
  throw DiagnosticError(
      makeError("", {},
                "no instruction of ISA '" + isa_.name + "' loads one element of buffer '" +
                    isa_.buffers[static_cast<size_t>(buffer)].name.text +
                    "' from HBM: the words its lets read cannot be stored there",
                "a let's buffer needs a load from HBM (docs/backend.md, \"Micro-op words\")"));
}

// Appends `word` to the table and its load into element `element` of `buffer`.
void WordLoader::load(oracle::Program& program, int32_t buffer, int64_t element, int64_t word) {
  const Mover& m = moverFor(buffer);
  if (table_buffer_ < 0) {
    table_buffer_ = buffer;
    table_base_ = (program.hbm_bytes + alignment_ - 1) / alignment_ * alignment_;
  }
  if (isa_.buffers[static_cast<size_t>(buffer)].dtype !=
      isa_.buffers[static_cast<size_t>(table_buffer_)].dtype)
    throw DiagnosticError(makeError("", {}, "lets read words of two element types"));
  const int64_t address = table_base_ + static_cast<int64_t>(table_.size()) * m.element_bytes;
  table_.push_back(word);
  // β: the output element at the let's start, the input at the word's table entry.
  std::vector<int64_t> attrs = m.alpha;
  std::vector<bool> fixed(attrs.size(), false);
  for (int32_t k = 0; k < m.unit->num_alpha; ++k)
    fixed[static_cast<size_t>(k)] = true;
  if (!solve(alloc::sliceInfo(m.sym->outputs[0], attrs).starts[0], element, attrs, fixed) ||
      !solve(alloc::sliceInfo(m.sym->inputs[0], attrs).starts[0], address, attrs, fixed) ||
      !constraintsHold(*m.sym, attrs))
    throw DiagnosticError(makeError("", {},
                                    "instruction '" + m.unit->name +
                                        "' cannot load the word at element " +
                                        std::to_string(element) + " of buffer '" +
                                        isa_.buffers[static_cast<size_t>(buffer)].name.text +
                                        "' from HBM byte " + std::to_string(address)));
  program.callUnit(isa_, m.unit->is_macro, m.unit->index,
                   std::vector<oracle::Affine>(attrs.begin(), attrs.end()));
}

void WordLoader::finish(oracle::Program& program) {
  if (table_.empty()) return;
  const taidl::Buffer& b = isa_.buffers[static_cast<size_t>(table_buffer_)];
  hlo::Literal words(hlo::Shape(b.dtype, {static_cast<int64_t>(table_.size())}));
  for (size_t i = 0; i < table_.size(); ++i)
    words.setInt64(static_cast<int64_t>(i), table_[i]);
  int64_t bytes = static_cast<int64_t>(table_.size()) * hlo::byteSize(b.dtype);
  program.addConst("words", table_base_, std::move(words));
  program.hbm_bytes = std::max(program.hbm_bytes, table_base_ + bytes);
}

}  // namespace tacit::backend
