// checkProgram: the placement and well-formedness rules of docs/tasm.md, shared by the parser
// (which reports at the offending line) and by programs built in memory.
#include <algorithm>
#include <cctype>
#include <map>

#include "oracle/program.h"
#include "support/strings.h"

namespace tacit::oracle {
namespace {

class Checker {
 public:
  Checker(const taidl::Isa& isa, const Program& p) : isa_(isa), p_(p) {}

  void run() {
    if (p_.hbm_bytes <= 0 || p_.hbm_bytes > kMaxHbmBytes)
      fail(p_.file, {},
           "the HBM size must be between 1 and " + std::to_string(kMaxHbmBytes) + " bytes, not " +
               std::to_string(p_.hbm_bytes));
    if (p_.tensors.size() > kMaxTensors)
      fail(p_.file, {}, "more than " + std::to_string(kMaxTensors) + " tensors");
    std::map<std::string, const Tensor*> names;
    for (size_t i = 0; i < p_.tensors.size(); ++i) {
      const Tensor& t = p_.tensors[i];
      if (auto [it, fresh] = names.emplace(t.name, &t); !fresh)
        fail(p_.file, t.loc, "tensor '" + t.name + "' is declared twice",
             "the first declaration is at " + where(it->second->loc));
      tensor(t);
      for (size_t j = 0; j < i; ++j)
        overlap(p_.tensors[j], t);
    }
    block(p_.body, 0);
  }

 private:
  std::string where(SourceLoc loc) const {
    return loc.known() ? "line " + std::to_string(loc.line) : "an earlier declaration";
  }

  void tensor(const Tensor& t) {
    if (!t.shape.isArray() || !hlo::isEvaluable(t.shape.elementType()))
      fail(p_.file, t.loc, "tensor '" + t.name + "' needs an array type, not " + t.shape.str());
    int64_t end = 0;
    if (t.addr < 0 || __builtin_add_overflow(t.addr, t.byteSize(), &end) || end > p_.hbm_bytes)
      fail(p_.file, t.loc,
           "tensor '" + t.name + "' (" + std::to_string(t.byteSize()) + " bytes at " +
               std::to_string(t.addr) + ") does not fit in the HBM of " +
               std::to_string(p_.hbm_bytes) + " bytes",
           "HBM overflow: enlarge hbm= in the kernel header or move the tensor");
    if (t.kind == TensorKind::kConst && !(t.value.shape() == t.shape))
      fail(p_.file, t.loc,
           "const '" + t.name + "' is declared " + t.shape.shortStr() + " but its value is " +
               (t.value.isTuple() ? std::string("a tuple") : t.value.shape().shortStr()));
    if (t.kind != TensorKind::kConst && t.file.size())
      fail(p_.file, t.loc, "only a const takes a file");
  }

  // Inputs and constants are written before the run: they must not overlap each other (the
  // published oracle silently let one win). Outputs are read after the run, so they may overlap
  // anything but another output.
  void overlap(const Tensor& a, const Tensor& b) {
    bool a_out = a.kind == TensorKind::kOutput, b_out = b.kind == TensorKind::kOutput;
    if (a_out != b_out) return;
    if (a.byteSize() == 0 || b.byteSize() == 0) return;
    if (a.addr + a.byteSize() <= b.addr || b.addr + b.byteSize() <= a.addr) return;
    fail(p_.file, b.loc,
         std::string(tensorKindName(b.kind)) + " '" + b.name + "' [" + std::to_string(b.addr) +
             ", " + std::to_string(b.addr + b.byteSize()) + ") overlaps " +
             std::string(tensorKindName(a.kind)) + " '" + a.name + "' [" + std::to_string(a.addr) +
             ", " + std::to_string(a.addr + a.byteSize()) + ")",
         a_out ? "two outputs cannot share HBM bytes"
               : "inputs and constants are written before the run and must be disjoint");
  }

  void affine(const Affine& a, size_t depth, const Stmt& s, const char* what) {
    bool sorted = std::is_sorted(a.terms.begin(), a.terms.end(),
                                 [](const auto& x, const auto& y) { return x.depth <= y.depth; });
    bool zero = std::any_of(a.terms.begin(), a.terms.end(), [](const auto& t) { return !t.coeff; });
    if (!sorted || zero) fail(p_.file, s.loc, std::string(what) + " is not in canonical form");
    if (a.depthNeeded() > depth)
      fail(p_.file, s.loc, std::string(what) + " uses a loop variable outside its loop");
  }

  void block(const std::vector<Stmt>& list, size_t depth) {
    for (const Stmt& s : list) {
      switch (s.kind) {
        case StmtKind::kCall:
          call(s, depth);
          break;
        case StmtKind::kLoop:
          loopVar(s);
          if (depth >= kMaxLoopDepth)
            fail(p_.file, s.loc, "loops nest more than " + std::to_string(kMaxLoopDepth) + " deep");
          affine(s.lo, depth, s, "the loop's lower bound");
          affine(s.hi, depth, s, "the loop's upper bound");
          vars_.push_back(s.var);
          block(s.body, depth + 1);
          vars_.pop_back();
          break;
        case StmtKind::kDebug:
          debug(s, depth);
          break;
      }
    }
  }

  // Loop variables are identifiers that do not shadow an enclosing one (printing names them).
  void loopVar(const Stmt& s) {
    bool ident =
        !s.var.empty() && (std::isalpha(static_cast<unsigned char>(s.var[0])) || s.var[0] == '_');
    for (char c : s.var)
      ident = ident && (std::isalnum(static_cast<unsigned char>(c)) || c == '_');
    if (!ident) fail(p_.file, s.loc, "loop variable " + quote(s.var) + " is not an identifier");
    if (std::find(vars_.begin(), vars_.end(), s.var) != vars_.end())
      fail(p_.file, s.loc, "loop variable '" + s.var + "' shadows an enclosing loop's variable");
  }

  void call(const Stmt& s, size_t depth) {
    size_t count = s.is_macro ? isa_.macros.size() : isa_.instructions.size();
    if (s.unit < 0 || static_cast<size_t>(s.unit) >= count)
      fail(p_.file, s.loc, "a call of an unknown unit number " + std::to_string(s.unit));
    size_t need = s.is_macro ? isa_.macros[static_cast<size_t>(s.unit)].attrs.size()
                             : isa_.instructions[static_cast<size_t>(s.unit)].attrs.size();
    if (s.attrs.size() != need)
      fail(p_.file, s.loc,
           "the call needs " + plural(static_cast<int64_t>(need), "attribute") + ", not " +
               std::to_string(s.attrs.size()));
    for (const Affine& a : s.attrs)
      affine(a, depth, s, "an attribute value");
  }

  void debug(const Stmt& s, size_t depth) {
    if (s.buffer < 0 || static_cast<size_t>(s.buffer) >= isa_.buffers.size())
      fail(p_.file, s.loc, "debug of an unknown buffer number " + std::to_string(s.buffer));
    const taidl::Buffer& b = isa_.buffers[static_cast<size_t>(s.buffer)];
    if (static_cast<int64_t>(s.ranges.size()) > b.rank())
      fail(p_.file, s.loc,
           "debug " + b.name.text + " takes at most " + plural(b.rank(), "range") + ", got " +
               std::to_string(s.ranges.size()));
    if (s.view != hlo::PrimitiveType::kInvalid &&
        (!b.is_hbm || !hlo::isEvaluable(s.view) || s.view == hlo::PrimitiveType::kPred))
      fail(p_.file, s.loc, "`as TYPE` reinterprets HBM bytes only (d0), as a numeric type");
    for (const DebugRange& r : s.ranges) {
      affine(r.start, depth, s, "a debug range");
      affine(r.end, depth, s, "a debug range");
    }
  }

  const taidl::Isa& isa_;
  const Program& p_;
  std::vector<std::string> vars_;
};

}  // namespace

void checkProgram(const taidl::Isa& isa, const Program& program) {
  Checker(isa, program).run();
}

}  // namespace tacit::oracle
