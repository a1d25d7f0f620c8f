// The canonical .tasm printer (docs/tasm.md section 5).
#include "hlo/printer.h"
#include "oracle/tasm.h"
#include "support/strings.h"

namespace tacit::oracle {

namespace {

// INT64_MIN has no literal (the lexer's integers stop at 2^63 - 1): it prints as an expression.
constexpr const char* kMinText = "(-9223372036854775807 - 1)";

// Appends `sign magnitude` for a term or the constant (`first`: no leading " + ").
void appendSigned(std::string& out, int64_t v, const std::string& suffix, bool first) {
  if (v == INT64_MIN) {
    out += (first ? "" : " + ") + std::string(kMinText) + (suffix.empty() ? "" : "*" + suffix);
    return;
  }
  std::string mag = std::to_string(v < 0 ? -v : v);
  out += first ? (v < 0 ? "-" : "") : (v < 0 ? " - " : " + ");
  out += suffix.empty() ? mag : (mag == "1" ? "" : mag + "*") + suffix;
}

}  // namespace

std::string affineText(const Affine& a, const std::vector<std::string>& vars) {
  std::string out;
  for (const Affine::Term& t : a.terms) {
    std::string var = t.depth < vars.size() ? vars[t.depth] : "?" + std::to_string(t.depth);
    appendSigned(out, t.coeff, var, out.empty());
  }
  if (out.empty() || a.constant != 0) appendSigned(out, a.constant, "", out.empty());
  return out;
}

namespace {

class Printer {
 public:
  Printer(const taidl::Isa& isa, const Program& p) : isa_(isa), p_(p) {}

  std::string run() {
    out_ = "kernel " + p_.name + " hbm=" + std::to_string(p_.hbm_bytes) + " {\n";
    for (const Tensor& t : p_.tensors)
      tensor(t);
    block(p_.body, 1);
    out_ += "}\n";
    return std::move(out_);
  }

 private:
  void tensor(const Tensor& t) {
    out_ += "  " + std::string(tensorKindName(t.kind)) + " " + t.name + " @" +
            std::to_string(t.addr) + " : " + t.shape.shortStr();
    if (t.kind == TensorKind::kConst)
      out_ += " = " + (t.file.empty() ? hlo::literalText(t.value)
                                      : "file " + quote(t.file, Escapes::kTaidl));
    out_ += ";\n";
  }

  void block(const std::vector<Stmt>& list, size_t indent) {
    for (const Stmt& s : list) {
      out_ += std::string(2 * indent, ' ');
      switch (s.kind) {
        case StmtKind::kCall:
          call(s);
          break;
        case StmtKind::kLoop:
          out_ += "loop " + s.var + " in [" + affineText(s.lo, vars_) + ", " +
                  affineText(s.hi, vars_) + ") {\n";
          vars_.push_back(s.var);
          block(s.body, indent + 1);
          vars_.pop_back();
          out_ += std::string(2 * indent, ' ') + "}\n";
          break;
        case StmtKind::kDebug:
          debug(s);
          break;
      }
    }
  }

  void call(const Stmt& s) {
    const auto& u = s.is_macro ? isa_.macros[static_cast<size_t>(s.unit)].name
                               : isa_.instructions[static_cast<size_t>(s.unit)].name;
    const auto& attrs = s.is_macro ? isa_.macros[static_cast<size_t>(s.unit)].attrs
                                   : isa_.instructions[static_cast<size_t>(s.unit)].attrs;
    out_ += u.text + "(";
    for (size_t k = 0; k < s.attrs.size(); ++k) {
      if (k) out_ += ", ";
      out_ += (k < attrs.size() ? attrs[k].name.text : "?") + "=" + affineText(s.attrs[k], vars_);
    }
    out_ += ");\n";
  }

  void debug(const Stmt& s) {
    out_ += "debug ";
    if (!s.label.empty()) out_ += quote(s.label, Escapes::kTaidl) + " ";
    out_ += isa_.buffers[static_cast<size_t>(s.buffer)].name.text;
    if (!s.ranges.empty()) {
      out_ += "[";
      for (size_t k = 0; k < s.ranges.size(); ++k) {
        if (k) out_ += ", ";
        out_ += affineText(s.ranges[k].start, vars_) + ":" + affineText(s.ranges[k].end, vars_);
      }
      out_ += "]";
    }
    if (s.view != hlo::PrimitiveType::kInvalid)
      out_ += " as " + std::string(hlo::primitiveTypeName(s.view));
    out_ += ";\n";
  }

  const taidl::Isa& isa_;
  const Program& p_;
  std::string out_;
  std::vector<std::string> vars_;
};

}  // namespace

std::string printProgram(const taidl::Isa& isa, const Program& program) {
  checkProgram(isa, program);
  return Printer(isa, program).run();
}

}  // namespace tacit::oracle
