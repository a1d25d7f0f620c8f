// The Python module `tacit` (docs/python.md): load an ISA, compile HLO for it, run programs on the
// oracle with NumPy arrays, time them, evaluate HLO. Every heavy call releases the GIL; every
// tacit diagnostic is a tacit.Error carrying its file, line, column, message and hint.
//
//   import tacit, numpy as np
//   isa = tacit.load_isa("isa/gemmini.taidl", DIM=16)
//   prog = isa.compile("examples/gemmini/matmul.hlo", verify=1)
//   outs = prog.run({"a": a, "b": b})
#include <pybind11/eval.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstring>
#include <filesystem>
#include <map>
#include <memory>

#include "backend/compiler.h"
#include "backend/report.h"
#include "backend/verify.h"
#include "hlo/verifier.h"
#include "hlo_eval/evaluator.h"
#include "isel/target.h"
#include "oracle/machine.h"
#include "oracle/tasm.h"
#include "stablehlo/input.h"
#include "support/source.h"
#include "taidl/isa.h"
#include "timing/timing.h"

namespace py = pybind11;

namespace tacit::python {
namespace {

// ---- NumPy <-> Literal ---------------------------------------------------------------------

// The NumPy dtype of an element type. bf16 and the fp8 types have none in NumPy: their raw bits,
// as uint16 and uint8 (ml_dtypes' bfloat16 / float8 views read them as is).
py::dtype dtypeOf(hlo::PrimitiveType t) {
  using T = hlo::PrimitiveType;
  switch (t) {
    case T::kPred:
      return py::dtype::of<bool>();
    case T::kS8:
      return py::dtype::of<int8_t>();
    case T::kS16:
      return py::dtype::of<int16_t>();
    case T::kS32:
      return py::dtype::of<int32_t>();
    case T::kS64:
      return py::dtype::of<int64_t>();
    case T::kU8:
      return py::dtype::of<uint8_t>();
    case T::kU16:
      return py::dtype::of<uint16_t>();
    case T::kU32:
      return py::dtype::of<uint32_t>();
    case T::kU64:
      return py::dtype::of<uint64_t>();
    case T::kF16:
      return py::dtype("float16");
    case T::kF32:
      return py::dtype::of<float>();
    case T::kF64:
      return py::dtype::of<double>();
    case T::kBF16:
      return py::dtype::of<uint16_t>();
    default:
      if (hlo::byteSize(t) == 1) return py::dtype::of<uint8_t>();  // the fp8 types
      throw py::type_error("tacit: element type " + std::string(hlo::primitiveTypeName(t)) +
                           " has no NumPy form");
  }
}

// `a` as a Literal of `want`: the same dimensions and element type (bf16 and fp8 also as raw
// bits of their width, e.g. uint16 for bf16).
hlo::Literal toLiteral(const py::handle& value, const hlo::Shape& want, const std::string& what) {
  py::array a = py::array::ensure(value);
  if (!a) throw py::type_error("tacit: " + what + " is not an array");
  const std::vector<int64_t>& dims = want.dims();
  bool same = a.ndim() == static_cast<py::ssize_t>(dims.size());
  for (size_t i = 0; same && i < dims.size(); ++i)
    same = a.shape(static_cast<py::ssize_t>(i)) == dims[i];
  if (!same) {
    std::string got = "(";
    for (py::ssize_t i = 0; i < a.ndim(); ++i)
      got += (i ? ", " : "") + std::to_string(a.shape(i));
    throw py::value_error("tacit: " + what + " must have shape " + want.str() + ", got " + got +
                          ")");
  }
  const py::dtype expected = dtypeOf(want.elementType());
  if (!a.dtype().is(expected) && !a.dtype().equal(expected))
    throw py::type_error("tacit: " + what + " must be " +
                         py::cast<std::string>(py::str(py::object(expected))) + " (" + want.str() +
                         "), got " + py::cast<std::string>(py::str(py::object(a.dtype()))));
  py::array c = py::array::ensure(a, py::array::c_style);
  hlo::Literal lit(want);
  std::memcpy(lit.bytes(), c.data(), static_cast<size_t>(want.byteSize()));
  return lit;
}

py::object toPython(const hlo::Literal& l) {
  if (l.shape().isTuple()) {
    py::tuple t(l.elements().size());
    for (size_t i = 0; i < l.elements().size(); ++i)
      t[i] = toPython(l.elements()[i]);
    return t;
  }
  std::vector<py::ssize_t> dims(l.shape().dims().begin(), l.shape().dims().end());
  py::array a(dtypeOf(l.shape().elementType()), dims);
  std::memcpy(a.mutable_data(), l.bytes(), static_cast<size_t>(l.shape().byteSize()));
  return a;
}

// The HLO text of a kernel given as text or as a file name (a one-line string naming a file),
// and where it came from.
std::pair<std::string, std::string> hloText(const std::string& text_or_path) {
  if (text_or_path.find('\n') == std::string::npos &&
      std::filesystem::is_regular_file(text_or_path))
    return {readFile(text_or_path), text_or_path};
  return {text_or_path, "<string>"};
}

// The verified module of hloText's (text, where).
std::unique_ptr<hlo::HloModule> module(const std::pair<std::string, std::string>& source) {
  std::unique_ptr<hlo::HloModule> m = stablehlo::parseAnyModule(source.first, source.second);
  hlo::verifyModule(*m);
  return m;
}

py::object json(const std::string& text) {
  return py::module_::import("json").attr("loads")(text);
}

// ---- the classes -----------------------------------------------------------------------------

struct Isa {
  std::shared_ptr<const taidl::Isa> isa;
  std::shared_ptr<const isel::Target> target;  // built on the first compile
  const isel::Target& targetOf() {
    if (!target) target = std::make_shared<const isel::Target>(*isa);
    return *target;
  }
};

struct Program {
  std::shared_ptr<const taidl::Isa> isa;
  oracle::Program program;
  std::optional<backend::CompileResult> compiled;  // for a compiled program: costs, stats
  // For a compiled program: what its HTML report (backend/report.h) draws besides the result.
  std::shared_ptr<const isel::Target> target;
  std::shared_ptr<const hlo::HloModule> kernel;
  std::string kernel_text;

  std::map<std::string, hlo::Literal> inputs(const py::dict& given) const {
    std::map<std::string, hlo::Literal> out;
    for (const oracle::Tensor& t : program.tensors) {
      if (t.kind != oracle::TensorKind::kInput) continue;
      if (!given.contains(t.name))
        throw py::key_error("tacit: missing input '" + t.name + "' " + t.shape.str());
      out.emplace(t.name, toLiteral(given[py::str(t.name)], t.shape, "input '" + t.name + "'"));
    }
    for (const auto& [k, v] : given) {
      if (!out.count(py::cast<std::string>(k)))
        throw py::key_error("tacit: the program has no input '" + py::cast<std::string>(k) + "'");
    }
    return out;
  }
};

Program compile(Isa& self, const std::string& hlo_text, int verify, std::optional<std::string> cost,
                std::optional<std::string> schedule, bool tiling, bool reassociate,
                double time_limit) {
  auto source = hloText(hlo_text);
  std::shared_ptr<const hlo::HloModule> kernel = module(source);
  backend::CompileOptions o;
  if (cost) {
    o.cost = backend::parseCostModel(*cost);
    if (!o.cost) throw py::value_error("tacit: cost is count, spec, bytes or cycles, not " + *cost);
  }
  if (schedule) o.schedule = backend::TileSchedule::parse(*schedule, "<schedule>");
  o.tiling = tiling;
  o.reassociate = reassociate;
  o.time_limit = std::chrono::duration_cast<std::chrono::milliseconds>(
      std::chrono::duration<double>(time_limit));
  const isel::Target& target = self.targetOf();
  Program p{self.isa, {}, std::nullopt, self.target, kernel, std::move(source.first)};
  {
    py::gil_scoped_release free;
    backend::CompileResult r = backend::compile(target, *kernel, o);
    if (verify > 0) {
      // A program that re-associates a float sum computes the blocked kernel (docs/numerics.md).
      backend::VerifyReport v = backend::verify(*self.isa, r.computes ? *r.computes : *kernel,
                                                r.program, {.sets = verify});
      if (!v.ok) fail("the compiled program does not compute the kernel: " + v.mismatch);
    }
    p.program = r.program;
    p.compiled = std::move(r);
  }
  return p;
}

py::dict run(const Program& self, const py::dict& given) {
  std::map<std::string, hlo::Literal> inputs = self.inputs(given), outputs;
  {
    py::gil_scoped_release free;
    outputs = oracle::run(*self.isa, self.program, inputs);
  }
  py::dict out;
  for (const auto& [name, lit] : outputs)
    out[py::str(name)] = toPython(lit);
  return out;
}

py::object timingOf(const Program& self, std::optional<py::dict> given) {
  std::map<std::string, hlo::Literal> inputs =
      given ? self.inputs(*given) : timing::zeroInputs(self.program);
  timing::Report r;
  {
    py::gil_scoped_release free;
    r = timing::simulate(*self.isa, self.program, inputs);
  }
  return json(r.json());
}

py::object evaluate(const std::string& hlo_text, const py::object& args) {
  auto m = module(hloText(hlo_text));
  const auto& params = m->entry()->parameters();
  std::vector<hlo::Literal> literals;
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string name = params[i]->name();
    py::object v;
    if (py::isinstance<py::dict>(args)) {
      py::dict d = args;
      if (!d.contains(name)) throw py::key_error("tacit: missing argument '" + name + "'");
      v = d[py::str(name)];
    } else {
      py::sequence s = args;
      if (s.size() != params.size())
        throw py::value_error("tacit: the module takes " + std::to_string(params.size()) +
                              " arguments, got " + std::to_string(s.size()));
      v = s[i];
    }
    literals.push_back(toLiteral(v, params[i]->shape(), "argument '" + name + "'"));
  }
  hlo::Literal result;
  {
    py::gil_scoped_release free;
    result = hlo::evaluate(*m, literals);
  }
  return toPython(result);
}

}  // namespace
}  // namespace tacit::python

PYBIND11_MODULE(_tacit, m) {
  using namespace tacit;
  using namespace tacit::python;
  m.doc() =
      "tacit: one ISA description -> a bit-faithful oracle, a compiler backend, a timing "
      "model (docs/python.md)";
  m.attr("__version__") = TACIT_VERSION;

  // tacit.Error: a diagnostic, with its parts as attributes.
  py::dict scope;
  py::exec(R"(
class Error(Exception):
    """A tacit diagnostic: file, line, col, message, hint (str(error) is the whole text)."""
    def __init__(self, text, file, line, col, message, hint):
        super().__init__(text)
        self.file, self.line, self.col = file, line, col
        self.message, self.hint = message, hint
)",
           py::globals(), scope);
  py::object error = scope["Error"];
  error.attr("__module__") = "tacit";
  m.attr("Error") = error;
  static py::object error_class = error;
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const DiagnosticError& e) {
      const Diagnostic& d = e.diagnostic();
      py::object instance = error_class(d.str(), d.file, d.loc.line, d.loc.col, d.message, d.hint);
      PyErr_SetObject(error_class.ptr(), instance.ptr());
    }
  });

  py::class_<python::Isa>(m, "Isa", "An ISA description, loaded and checked (load_isa).")
      .def_property_readonly("name", [](const python::Isa& i) { return i.isa->name; })
      .def_property_readonly(
          "units",
          [](const python::Isa& i) {
            py::list names;
            for (const taidl::Instruction& inst : i.isa->instructions)
              names.append(inst.name.text);
            for (const taidl::Macro& macro : i.isa->macros)
              names.append(macro.name.text);
            return names;
          },
          "The names of the ISA's instructions, then its macros (what a program calls).")
      .def_property_readonly("params",
                             [](const python::Isa& i) {
                               py::dict d;
                               for (const taidl::Param& p : i.isa->params)
                                 d[py::str(p.name.text)] = p.value;
                               return d;
                             })
      .def("compile", &python::compile, py::arg("hlo"), py::arg("verify") = 0,
           py::arg("cost") = py::none(), py::arg("schedule") = py::none(), py::arg("tiling") = true,
           py::arg("reassociate") = false, py::arg("time_limit") = 10.0,
           "Compiles an HLO kernel (text, or a file name) for this ISA (docs/backend.md). "
           "verify=N checks the program on N random input sets against the HLO evaluator; cost is "
           "count, spec, bytes or cycles; schedule is a tiling schedule's JSON; reassociate lets "
           "a float dot's contraction be split into blocks (docs/numerics.md).")
      .def(
          "program",
          [](const python::Isa& self, const std::string& tasm) {
            const bool file =
                tasm.find('\n') == std::string::npos && std::filesystem::is_regular_file(tasm);
            return python::Program{self.isa,
                                   file ? oracle::parseProgramFile(*self.isa, tasm)
                                        : oracle::parseProgram(*self.isa, tasm, "<string>"),
                                   std::nullopt,
                                   nullptr,
                                   nullptr,
                                   ""};
          },
          py::arg("tasm"), "A .tasm program (text, or a file name) for this ISA (docs/tasm.md).");

  py::class_<python::Program>(m, "Program", "A program of an ISA: compiled, or parsed from .tasm.")
      .def_property_readonly(
          "tasm", [](const python::Program& p) { return oracle::printProgram(*p.isa, p.program); })
      .def_property_readonly("inputs",
                             [](const python::Program& p) {
                               py::dict d;
                               for (const oracle::Tensor& t : p.program.tensors)
                                 if (t.kind == oracle::TensorKind::kInput)
                                   d[py::str(t.name)] = t.shape.str();
                               return d;
                             })
      .def_property_readonly("outputs",
                             [](const python::Program& p) {
                               py::dict d;
                               for (const oracle::Tensor& t : p.program.tensors)
                                 if (t.kind == oracle::TensorKind::kOutput)
                                   d[py::str(t.name)] = t.shape.str();
                               return d;
                             })
      .def_property_readonly("stats",
                             [](const python::Program& p) -> py::object {
                               if (!p.compiled) return py::none();
                               return json(p.compiled->stats.json());
                             })
      .def_property_readonly("costs",
                             [](const python::Program& p) -> py::object {
                               if (!p.compiled) return py::none();
                               const backend::ProgramCosts& c = p.compiled->costs;
                               py::dict d;
                               d["instructions"] = c.instructions;
                               d["spec"] = c.spec;
                               d["bytes"] = c.bytes;
                               d["hbm_bytes"] = c.hbm_bytes;
                               d["cycles"] = c.cycles;
                               d["model"] = std::string(backend::costModelName(p.compiled->model));
                               return d;
                             })
      .def_property_readonly("schedule",
                             [](const python::Program& p) -> py::object {
                               if (!p.compiled || !p.compiled->schedule) return py::none();
                               return json(p.compiled->schedule->json());
                             })
      .def("run", &python::run, py::arg("inputs"),
           "Runs the program on the oracle: {name: array} in, {name: array} out, bit for bit.")
      .def("timing", &python::timingOf, py::arg("inputs") = py::none(),
           "The timing model's report (docs/timing.md) as a dict; inputs default to zeros.")
      .def(
          "report",
          [](const python::Program& self) {
            if (!self.compiled || !self.target || !self.kernel)
              throw py::value_error("tacit: a report is of a compiled program (Isa.compile)");
            py::gil_scoped_release free;
            return backend::htmlReport(*self.target, *self.kernel, self.kernel_text,
                                       *self.compiled);
          },
          "The compile's HTML report (tacit compile --report, docs/backend.md): a self-contained "
          "page with the costs, the candidates, the memory timeline and the instruction graph.");

  m.def(
      "load_isa",
      [](const std::string& path, const py::kwargs& params) {
        taidl::ParamOverrides overrides;
        for (const auto& [k, v] : params)
          overrides.emplace_back(py::cast<std::string>(k), py::cast<int64_t>(v));
        return python::Isa{std::make_shared<const taidl::Isa>(taidl::loadIsaFile(path, overrides)),
                           nullptr};
      },
      py::arg("path"), "Loads and checks a .taidl ISA description; keyword arguments set params.");
  m.def("evaluate", &python::evaluate, py::arg("hlo"), py::arg("args"),
        "Evaluates an HLO module (text, or a file name) on arrays (a list in parameter order, or "
        "a dict by parameter name) with tacit's reference evaluator.");
}
