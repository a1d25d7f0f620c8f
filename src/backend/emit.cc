#include "backend/emit.h"

#include <cctype>
#include <functional>
#include <set>
#include <sstream>
#include <stdexcept>

#include "backend/let_words.h"
#include "hlo/printer.h"
#include "oracle/tasm.h"
#include "support/strings.h"
#include "taidl/expr.h"

namespace tacit::backend {
namespace {

void expand(const taidl::Isa& isa, bool is_macro, int32_t unit, const std::vector<int64_t>& attrs,
            std::vector<std::pair<int32_t, std::vector<int64_t>>>& out) {
  if (!is_macro) {
    out.emplace_back(unit, attrs);
    return;
  }
  const taidl::Macro& m = isa.macros[static_cast<size_t>(unit)];
  for (const taidl::Call& call : m.calls) {
    std::vector<int64_t> args;
    for (const taidl::Expr& e : call.bound)
      args.push_back(taidl::evalExpr(e, taidl::EvalEnv{attrs, {}, {}}));
    expand(isa, call.callee_is_macro, call.callee_index, args, out);
  }
}

std::string numpyType(hlo::PrimitiveType t) {
  switch (t) {
    case hlo::PrimitiveType::kPred:
      return "np.bool_";
    case hlo::PrimitiveType::kBF16:
      return "ml_dtypes.bfloat16";
    case hlo::PrimitiveType::kF16:
      return "np.float16";
    case hlo::PrimitiveType::kF32:
      return "np.float32";
    case hlo::PrimitiveType::kF64:
      return "np.float64";
    default: {
      std::string n(hlo::primitiveTypeName(t));  // s8 -> int8, u16 -> uint16
      return "np." + std::string(n[0] == 's' ? "int" : "uint") + n.substr(1);
    }
  }
}

std::string tuple(const std::vector<int64_t>& dims) {
  if (dims.size() == 1) return "(" + std::to_string(dims[0]) + ",)";
  return "(" + join(dims, ", ") + ")";
}

}  // namespace

std::vector<std::pair<int32_t, std::vector<int64_t>>> expandCall(
    const taidl::Isa& isa, bool is_macro, int32_t unit, const std::vector<int64_t>& attrs) {
  std::vector<std::pair<int32_t, std::vector<int64_t>>> out;
  expand(isa, is_macro, unit, attrs, out);
  return out;
}

std::string identifier(const std::string& name) {
  std::string out;
  for (char c : name)
    out += (std::isalnum(static_cast<unsigned char>(c)) || c == '_') ? c : '_';
  if (out.empty() || std::isdigit(static_cast<unsigned char>(out[0]))) out = "t_" + out;
  return out;
}

oracle::Program buildProgram(const taidl::Isa& isa, const isel::UnitSet& units,
                             const isel::PiiGraph& graph, const alloc::AllocResult& allocation,
                             const isel::ImportedKernel& kernel, const std::string& name,
                             int64_t hbm_alignment) {
  oracle::Program p(identifier(name), allocation.placement.hbm_bytes);
  std::set<std::string> used;
  auto unique = [&](std::string n) {
    std::string base = n;
    for (int i = 1; !used.insert(n).second; ++i)
      n = base + "_" + std::to_string(i);
    return n;
  };
  for (const isel::KernelParameter& param : kernel.parameters) {
    if (param.resident) continue;  // on chip: no HBM tensor (a tiled compile's accumulator)
    p.addInput(unique(identifier(param.name)), param.hbm_offset, isel::physicalShape(param.shape));
  }
  for (size_t i = 0; i < kernel.results.size(); ++i) {
    if (kernel.results[i].resident) continue;
    std::string n = kernel.results.size() == 1 ? "out" : "out" + std::to_string(i);
    p.addOutput(unique(n), kernel.results[i].hbm_offset,
                isel::physicalShape(kernel.results[i].shape));
  }
  int constants = 0;
  for (const isel::PiiNode& node : graph.nodes) {
    if (node.kind != isel::PiiKind::kConstant) continue;
    int64_t addr = allocation.placement.start[static_cast<size_t>(node.outputs[0])][0];
    p.addConst(unique("c" + std::to_string(constants++)), addr, *node.literal);
  }
  WordLoader words(isa, units, hbm_alignment);
  for (int32_t n : allocation.order) {
    const isel::PiiNode& node = graph.nodes[static_cast<size_t>(n)];
    const isel::Unit& u = units.units[static_cast<size_t>(node.unit)];
    const std::vector<int64_t>& attrs = allocation.placement.attrs[static_cast<size_t>(n)];
    // Constant attributes: a straight-line program's words never move.
    std::string why =
        words.call(p, u, node.case_index, std::vector<oracle::Affine>(attrs.begin(), attrs.end()));
    if (!why.empty()) throw std::logic_error(why);
  }
  words.finish(p);
  return p;
}

std::string emitPython(const taidl::Isa& isa, const oracle::Program& program) {
  std::ostringstream out;
  auto tensors = [&](oracle::TensorKind kind) {
    std::string list;
    for (const oracle::Tensor& t : program.tensors) {
      if (t.kind != kind) continue;
      if (!list.empty()) list += ",\n                ";
      list += "{'addr': " + std::to_string(t.addr) + ", 'shape': " + tuple(t.shape.dims()) +
              ", 'dtype': " + numpyType(t.shape.elementType());
      if (kind == oracle::TensorKind::kConst) {
        std::string values;
        for (int64_t i = 0; i < t.value.elementCount(); ++i) {
          if (i) values += ", ";
          values += hlo::isFloat(t.shape.elementType()) ? formatDouble(t.value.getDouble(i))
                                                        : std::to_string(t.value.getInt64(i));
        }
        list += ", 'value': np.array([" + values + "], dtype=" + numpyType(t.shape.elementType()) +
                ").reshape(" + tuple(t.shape.dims()) + ")";
      }
      list += "}";
    }
    return "[" + list + "]";
  };
  out << "# Generated by tacit from ISA '" << isa.name << "': a TAIDL-TO kernel.\n"
      << "import numpy as np\n";
  for (const oracle::Tensor& t : program.tensors) {
    if (t.shape.elementType() == hlo::PrimitiveType::kBF16) {
      out << "import ml_dtypes\n";
      break;
    }
  }
  out << "\n\ndef " << program.name << "(kernel, api):\n"
      << "    @kernel(hbm=" << program.hbm_bytes << ",\n"
      << "            input=" << tensors(oracle::TensorKind::kInput) << ",\n"
      << "            constant=" << tensors(oracle::TensorKind::kConst) << ",\n"
      << "            output=" << tensors(oracle::TensorKind::kOutput) << ")\n"
      << "    def " << program.name << "_():\n";
  bool any = false;
  // Loops are unrolled: a Python kernel of the published style is a flat list of api calls (and a
  // macro's expansion is evaluated at each iteration's attribute values).
  std::vector<int64_t> loops;
  std::function<void(const std::vector<oracle::Stmt>&)> emit = [&](const auto& body) {
    for (const oracle::Stmt& s : body) {
      if (s.kind == oracle::StmtKind::kLoop) {
        int64_t lo = 0, hi = 0;
        s.lo.eval(loops, &lo);
        s.hi.eval(loops, &hi);
        for (int64_t v = lo; v < hi; ++v) {
          loops.push_back(v);
          emit(s.body);
          loops.pop_back();
        }
        continue;
      }
      if (s.kind != oracle::StmtKind::kCall) continue;
      std::vector<int64_t> attrs(s.attrs.size());
      for (size_t k = 0; k < s.attrs.size(); ++k)
        s.attrs[k].eval(loops, &attrs[k]);
      for (const auto& [inst, values] : expandCall(isa, s.is_macro, s.unit, attrs)) {
        const taidl::Instruction& i = isa.instructions[static_cast<size_t>(inst)];
        std::string args;
        for (size_t k = 0; k < i.attrs.size(); ++k) {
          if (k) args += ", ";
          args += i.attrs[k].name.text + "=" + std::to_string(values[k]);
        }
        out << "        api." << i.name.text << "(" << args << ")\n";
        any = true;
      }
    }
  };
  emit(program.body);
  if (!any) out << "        pass\n";
  out << "\n    return " << program.name << "_\n";
  return out.str();
}

std::string emitJson(const taidl::Isa& isa, const oracle::Program& program,
                     const JsonExtras& extras) {
  std::ostringstream out;
  out << "{\n  \"isa\": " << quote(isa.name, Escapes::kJson)
      << ",\n  \"kernel\": " << quote(program.name, Escapes::kJson)
      << ",\n  \"hbm_bytes\": " << program.hbm_bytes << ",\n  \"tensors\": [";
  for (size_t i = 0; i < program.tensors.size(); ++i) {
    const oracle::Tensor& t = program.tensors[i];
    out << (i ? "," : "")
        << "\n    {\"kind\": " << quote(oracle::tensorKindName(t.kind), Escapes::kJson)
        << ", \"name\": " << quote(t.name, Escapes::kJson) << ", \"addr\": " << t.addr
        << ", \"bytes\": " << t.byteSize()
        << ", \"type\": " << quote(t.shape.str(), Escapes::kJson);
    if (t.kind == oracle::TensorKind::kConst)
      out << ", \"value\": " << quote(hlo::literalText(t.value), Escapes::kJson);
    out << "}";
  }
  out << "\n  ],\n  \"instructions\": [";
  // A loop is {"loop": VAR, "from": LO, "to": HI, "body": [...]}; an attribute (or bound) that
  // depends on loop variables is its affine expression as a string ("4096*t0 + 112").
  std::vector<std::string> vars;
  auto value = [&](const oracle::Affine& a) {
    return a.isConstant() ? std::to_string(a.constant)
                          : quote(oracle::affineText(a, vars), Escapes::kJson);
  };
  std::function<void(const std::vector<oracle::Stmt>&, const std::string&)> emit =
      [&](const auto& body, const std::string& indent) {
        bool first = true;
        for (const oracle::Stmt& s : body) {
          if (s.kind == oracle::StmtKind::kLoop) {
            out << (first ? "" : ",") << "\n"
                << indent << "{\"loop\": " << quote(s.var, Escapes::kJson)
                << ", \"from\": " << value(s.lo) << ", \"to\": " << value(s.hi) << ", \"body\": [";
            vars.push_back(s.var);
            emit(s.body, indent + "  ");
            vars.pop_back();
            out << "\n" << indent << "]}";
            first = false;
            continue;
          }
          if (s.kind != oracle::StmtKind::kCall) continue;
          const std::vector<taidl::Attribute>& names =
              s.is_macro ? isa.macros[static_cast<size_t>(s.unit)].attrs
                         : isa.instructions[static_cast<size_t>(s.unit)].attrs;
          const std::string& unit = s.is_macro
                                        ? isa.macros[static_cast<size_t>(s.unit)].name.text
                                        : isa.instructions[static_cast<size_t>(s.unit)].name.text;
          out << (first ? "" : ",") << "\n"
              << indent << "{\"name\": " << quote(unit, Escapes::kJson)
              << ", \"macro\": " << (s.is_macro ? "true" : "false") << ", \"attributes\": {";
          for (size_t k = 0; k < s.attrs.size(); ++k) {
            out << (k ? ", " : "") << quote(names[k].name.text, Escapes::kJson) << ": "
                << value(s.attrs[k]);
          }
          out << "}}";
          first = false;
        }
      };
  emit(program.body, "    ");
  out << "\n  ],\n  \"cost\": {\"model\": " << quote(extras.cost_model, Escapes::kJson)
      << ", \"instructions\": " << extras.costs.instructions << ", \"spec\": " << extras.costs.spec
      << ", \"bytes\": " << extras.costs.bytes << ", \"hbm_bytes\": " << extras.costs.hbm_bytes
      << "}";
  if (!extras.statistics_json.empty()) out << ",\n  \"statistics\": " << extras.statistics_json;
  out << "\n}\n";
  return out.str();
}

}  // namespace tacit::backend
