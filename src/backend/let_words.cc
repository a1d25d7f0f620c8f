#include "backend/let_words.h"

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

// The start of `slice`'s first access dimension as constant + Σ coefficient · β, evaluated for
// the α in `attrs` (β read as 0, then one at a time as 1).
struct LinearStart {
  int64_t constant = 0;
  std::vector<int64_t> coefficients;  // per attribute slot (0 for α)
};

LinearStart linearStart(const taidl::SymSlice& slice, std::vector<int64_t> attrs, int32_t alpha) {
  LinearStart out;
  for (size_t k = static_cast<size_t>(alpha); k < attrs.size(); ++k)
    attrs[k] = 0;
  out.constant = evalOr(slice.starts[0], attrs, 0);
  out.coefficients.assign(attrs.size(), 0);
  for (size_t k = static_cast<size_t>(alpha); k < attrs.size(); ++k) {
    attrs[k] = 1;
    out.coefficients[k] = evalOr(slice.starts[0], attrs, 0) - out.constant;
    attrs[k] = 0;
  }
  return out;
}

// Sets one β of `start` so that it equals `target`; false if none can.
bool solve(const LinearStart& start, int64_t target, std::vector<int64_t>& attrs,
           std::vector<bool>& fixed) {
  int64_t rest = target - start.constant;
  for (size_t k = 0; k < attrs.size(); ++k) {
    if (fixed[k]) rest -= start.coefficients[k] * attrs[k];
  }
  for (size_t k = 0; k < attrs.size(); ++k) {
    int64_t c = start.coefficients[k];
    if (fixed[k] || c == 0 || rest % c != 0) continue;
    attrs[k] = rest / c;
    fixed[k] = true;
    return true;
  }
  return rest == 0;
}

}  // namespace

struct WordLoader::Mover {
  const isel::Unit* unit = nullptr;
  int32_t case_index = 0;
  const taidl::SymCase* sym = nullptr;
  std::vector<int64_t> alpha;  // all attribute slots; α solved, β 0
  int64_t element_bytes = 0;
};

LetCall letCall(const isel::Unit& unit, int32_t case_index, const std::vector<int64_t>& attrs) {
  const taidl::Semantics& sem = *unit.semantics;
  const taidl::SymCase& c = sem.cases[static_cast<size_t>(case_index)];
  const size_t own = static_cast<size_t>(unit.num_attrs) - sem.let_fields.size();
  LetCall out;
  out.attrs.assign(attrs.begin(), attrs.begin() + static_cast<std::ptrdiff_t>(own));
  for (const taidl::SymLet& l : c.lets) {
    LetCall::Word w;
    w.buffer = l.buffer;
    for (const Expr& s : l.starts)
      w.starts.push_back(taidl::evalExpr(s, taidl::EvalEnv{attrs}));
    for (int32_t f : l.fields) {
      const taidl::SymLetField& field = sem.let_fields[static_cast<size_t>(f)];
      w.value += attrs[static_cast<size_t>(field.slot)] * field.divisor;
    }
    out.words.push_back(std::move(w));
  }
  return out;
}

WordLoader::WordLoader(const taidl::Isa& isa, const isel::UnitSet& units, int64_t hbm_alignment)
    : isa_(isa), units_(units), alignment_(std::max<int64_t>(1, hbm_alignment)) {
  movers_.assign(isa.buffers.size(), std::nullopt);
  let_buffers_.assign(isa.buffers.size(), false);
  for (const isel::Unit& u : units.units) {
    if (!u.semantics) continue;
    for (const taidl::SymCase& c : u.semantics->cases) {
      for (const taidl::SymLet& l : c.lets)
        let_buffers_[static_cast<size_t>(l.buffer)] = true;
    }
  }
}

void WordLoader::checkData(const isel::Unit& unit, int32_t case_index) const {
  const taidl::SymCase& c = unit.semantics->cases[static_cast<size_t>(case_index)];
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

WordLoader::~WordLoader() = default;

// A pure data movement from HBM into one element of `buffer`: a pattern of one HBM input and one
// output in the buffer, its α solved for a single element, the cheapest such.
const WordLoader::Mover& WordLoader::moverFor(int32_t buffer) {
  auto& found = movers_[static_cast<size_t>(buffer)];
  if (found) {
    if (*found) return **found;
  } else {
    const taidl::Buffer& b = isa_.buffers[static_cast<size_t>(buffer)];
    std::vector<int64_t> dims(b.access.size(), 1);
    dims.insert(dims.end(), b.unit.begin(), b.unit.end());
    const hlo::Shape element(b.dtype, dims);
    std::unique_ptr<Mover> best;
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
        if (best && cost >= best_cost) continue;
        best = std::make_unique<Mover>(Mover{&u, p.case_index, &c, attrs, element.byteSize()});
        best_cost = cost;
      }
    }
    found = best.get();
    if (best) owned_.push_back(std::move(best));
    if (*found) return **found;
  }
  throw DiagnosticError(
      makeError("", {},
                "no instruction of ISA '" + isa_.name + "' loads one element of buffer '" +
                    isa_.buffers[static_cast<size_t>(buffer)].name.text +
                    "' from HBM: the words its lets read cannot be stored there",
                "a let's buffer needs a load from HBM (docs/backend.md, \"Micro-op words\")"));
}

void WordLoader::addCall(oracle::Program& program, const isel::Unit& unit,
                         std::vector<oracle::Affine> attrs,
                         const std::vector<LetCall::Word>& words) {
  for (const LetCall::Word& w : words) {
    const Mover& m = moverFor(w.buffer);
    if (table_buffer_ < 0) {
      table_buffer_ = w.buffer;
      table_base_ = (program.hbm_bytes + alignment_ - 1) / alignment_ * alignment_;
    }
    if (isa_.buffers[static_cast<size_t>(w.buffer)].dtype !=
        isa_.buffers[static_cast<size_t>(table_buffer_)].dtype)
      throw DiagnosticError(makeError("", {}, "lets read words of two element types"));
    int64_t address = table_base_ + static_cast<int64_t>(table_.size()) * m.element_bytes;
    table_.push_back(w.value);
    // β: the output element at the let's start, the input at the word's table entry.
    std::vector<int64_t> load = m.alpha;
    std::vector<bool> fixed(load.size(), false);
    for (int32_t k = 0; k < m.unit->num_alpha; ++k)
      fixed[static_cast<size_t>(k)] = true;
    LinearStart out = linearStart(m.sym->outputs[0], load, m.unit->num_alpha);
    LinearStart in = linearStart(m.sym->inputs[0], load, m.unit->num_alpha);
    if (!solve(out, w.starts[0], load, fixed) || !solve(in, address, load, fixed) ||
        !constraintsHold(*m.sym, load))
      throw DiagnosticError(makeError("", {},
                                      "instruction '" + m.unit->name +
                                          "' cannot load the word at element " +
                                          std::to_string(w.starts[0]) + " of buffer '" +
                                          isa_.buffers[static_cast<size_t>(w.buffer)].name.text +
                                          "' from HBM byte " + std::to_string(address)));
    program.callUnit(isa_, m.unit->is_macro, m.unit->index,
                     std::vector<oracle::Affine>(load.begin(), load.end()));
  }
  program.callUnit(isa_, unit.is_macro, unit.index, std::move(attrs));
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
