// The recording shim of `tacit import-python`: Python modules written into a temporary directory
// that is put first on sys.path, so that a spec's `import taidl`, `from act.taidl import ...`,
// `from accelerator import Accelerator`, `importlib.import_module("idl.accelerator")` ... reach
// recording classes instead of the real generators. See docs/import-python.md.
#include "import/importer.h"

namespace tacit::importer {
namespace {

constexpr std::string_view kTacitRun = R"shim(import sys
sys.path.insert(0, sys.argv[1])
import _tacit_recorder
sys.exit(_tacit_recorder.run(sys.argv[2], sys.argv[3]))
)shim";

constexpr std::string_view kTacitRecorder =
    R"shim("""tacit import-python: recording shim for the TAIDL Python APIs (v1 artifact API and v2 ACT API).

Every call a spec makes on Accelerator/Instruction objects is recorded with the spec's line number;
generate_* calls are recorded and ignored. Integer spec parameters (argparse int defaults and
module-level integer constants) are symbolic ints: they compute like ints, and when formatted into
text they leave a marker \\x1eEXPR\\x1dVALUE\\x1f from which the importer recovers the expression.
"""

import ast
import json
import os
import sys

SPEC = None            # absolute path of the spec being run
_SOURCE_CALLS = None   # ast.Call nodes of the spec, for argument line numbers
_ACCELERATORS = []
_PARAMS = []           # leaf symbols: dicts with id, name, value, kind
_IGNORED = []          # generate_* calls


class ShimError(Exception):
    """A misuse of the API that the shim detects (reported with the spec's line)."""


# ---------------------------------------------------------------------------------------------
# Symbolic integers
# ---------------------------------------------------------------------------------------------

def _is_plain_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _expr_of(x):
    if isinstance(x, Sym):
        return x.expr
    return str(int(x)) if x >= 0 else "(" + str(int(x)) + ")"


class Sym(int):
    """An int that remembers the expression over spec parameters it was computed from."""

    def __new__(cls, value, expr):
        obj = int.__new__(cls, value)
        obj.expr = expr
        return obj

    def _bin(self, other, op, fn, reverse=False):
        if not _is_plain_int(other):
            return NotImplemented
        a, b = (other, self) if reverse else (self, other)
        value = fn(int(a), int(b))
        return Sym(value, "(" + _expr_of(a) + " " + op + " " + _expr_of(b) + ")")

    def __add__(self, o): return self._bin(o, "+", lambda a, b: a + b)
    def __radd__(self, o): return self._bin(o, "+", lambda a, b: a + b, True)
    def __sub__(self, o): return self._bin(o, "-", lambda a, b: a - b)
    def __rsub__(self, o): return self._bin(o, "-", lambda a, b: a - b, True)
    def __mul__(self, o): return self._bin(o, "*", lambda a, b: a * b)
    def __rmul__(self, o): return self._bin(o, "*", lambda a, b: a * b, True)
    def __floordiv__(self, o): return self._bin(o, "//", lambda a, b: a // b)
    def __rfloordiv__(self, o): return self._bin(o, "//", lambda a, b: a // b, True)
    def __mod__(self, o): return self._bin(o, "%", lambda a, b: a % b)
    def __rmod__(self, o): return self._bin(o, "%", lambda a, b: a % b, True)
    def __neg__(self): return Sym(-int(self), "(-" + self.expr + ")")
    def __pos__(self): return self
    def __abs__(self): return int(self).__abs__()

    def __format__(self, spec):
        if spec == "":
            return str(self)
        return int(self).__format__(spec)

    def __str__(self):
        return "\x1e" + self.expr + "\x1d" + str(int(self)) + "\x1f"

    __repr__ = __str__

    def __hash__(self):
        return int.__hash__(self)

    def __reduce__(self):
        return (int, (int(self),))


def make_sym(name, value, kind):
    """A leaf symbol for a spec parameter; `name` is provisional until the run ends."""
    if not _is_plain_int(value):
        return value
    ident = "__p%d" % len(_PARAMS)
    sym = Sym(value, ident)
    _PARAMS.append({"id": ident, "name": name, "value": int(value), "kind": kind, "obj": sym})
    return sym


def module_constant(name, value):
    return make_sym(name, value, "const")


# ---------------------------------------------------------------------------------------------
# Line numbers and JSON encoding
# ---------------------------------------------------------------------------------------------

def _spec_line():
    frame = sys._getframe(1)
    while frame is not None:
        if os.path.abspath(frame.f_code.co_filename) == SPEC:
            return frame.f_lineno
        frame = frame.f_back
    return 0


def _call_node(line, method):
    best = None
    for node in _SOURCE_CALLS or []:
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name != method:
            continue
        end = getattr(node, "end_lineno", node.lineno) or node.lineno
        if node.lineno <= line <= end:
            span = end - node.lineno
            if best is None or span < best[0]:
                best = (span, node)
    return best[1] if best else None


def _arg_lines(line, method):
    node = _call_node(line, method)
    if node is None:
        return [], {}
    return ([a.lineno for a in node.args],
            {k.arg: k.value.lineno for k in node.keywords if k.arg is not None})


def encode(x):
    if isinstance(x, Sym):
        return {"sym": x.expr, "value": int(x)}
    if isinstance(x, bool) or x is None or isinstance(x, str):
        return x
    if isinstance(x, int):
        return int(x)
    if isinstance(x, float):
        return {"float": repr(x)}
    if isinstance(x, (list, tuple)):
        return [encode(v) for v in x]
    if isinstance(x, dict):
        return {"dict": [[encode(k), encode(v)] for k, v in x.items()]}
    return {"repr": repr(x)[:200], "type": type(x).__name__}


def _record(calls, method, args, kwargs, **extra):
    line = _spec_line()
    arg_lines, kwarg_lines = _arg_lines(line, method)
    entry = {"method": method, "line": line, "args": [encode(a) for a in args],
             "kwargs": {k: encode(v) for k, v in kwargs.items()},
             "arg_lines": arg_lines, "kwarg_lines": kwarg_lines}
    entry.update(extra)
    calls.append(entry)
    return entry


# ---------------------------------------------------------------------------------------------
# The recording API
# ---------------------------------------------------------------------------------------------

class Constant:
    def __init__(self, *args, **kwargs):
        self.args = args


class DataModel:
    def __init__(self, *args, **kwargs):
        self.args = args


class Instruction:
    def __init__(self, acc, index, name):
        self._acc = acc
        self._index = index
        self.instruction = str(name).replace(" ", "_") if isinstance(name, str) else name
        self.constraints = []
        self.update = []

    def _rec(self, method, args, kwargs):
        _record(self._acc._calls, method, args, kwargs, instruction=self._index)

    # v1
    def add_semantics(self, *args, **kwargs): self._rec("add_semantics", args, kwargs)
    def add_constraints(self, *args, **kwargs): self._rec("add_constraints", args, kwargs)
    def add_update(self, *args, **kwargs): self._rec("add_update", args, kwargs)
    # v2
    def set_inputs(self, *args, **kwargs): self._rec("set_inputs", args, kwargs)
    def set_outputs(self, *args, **kwargs): self._rec("set_outputs", args, kwargs)
    def set_inplace(self, *args, **kwargs): self._rec("set_inplace", args, kwargs)


class Accelerator:
    FLAVOR = None

    def __init__(self, *args, **kwargs):
        self._calls = []
        self._instructions = 0
        self.name = args[0] if args else kwargs.get("name")
        self.instructions = []
        self.data_model = []
        self.state = []
        self.constants = []
        entry = {"flavor": self.FLAVOR, "calls": self._calls}
        _ACCELERATORS.append(entry)
        _record(self._calls, "Accelerator", args, kwargs)

    def add_data_model(self, *args, **kwargs):
        _record(self._calls, "add_data_model", args, kwargs)

    def add_initial_state(self, *args, **kwargs):
        _record(self._calls, "add_initial_state", args, kwargs)

    def add_instruction(self, *args, **kwargs):
        index = self._instructions
        self._instructions += 1
        _record(self._calls, "add_instruction", args, kwargs, instruction=index)
        name = args[0] if args else kwargs.get("instruction", "")
        instr = Instruction(self, index, name)
        self.instructions.append(instr)
        return instr

    def __getattr__(self, name):
        if name.startswith("generate"):
            def ignored(*args, **kwargs):
                _IGNORED.append({"method": name, "line": _spec_line()})
            return ignored
        raise AttributeError("'Accelerator' object has no attribute '%s' (not part of the "
                             "TAIDL API that tacit import-python understands)" % name)


class AcceleratorV1(Accelerator):
    FLAVOR = "v1"


class AcceleratorV2(Accelerator):
    FLAVOR = "v2"


def generator_function(name):
    def ignored(*args, **kwargs):
        _IGNORED.append({"method": name, "line": _spec_line()})
    ignored.__name__ = name
    return ignored


# ---------------------------------------------------------------------------------------------
# Running a spec
# ---------------------------------------------------------------------------------------------

class _ConstantRewriter(ast.NodeTransformer):
    """Module-level `NAME = <int literal>` becomes `NAME = __tacit_const__("NAME", <literal>)`."""

    def visit_Module(self, node):
        for stmt in node.body:
            if (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1
                    and isinstance(stmt.targets[0], ast.Name) and _int_literal(stmt.value)):
                name = stmt.targets[0].id
                stmt.value = ast.copy_location(ast.Call(
                    func=ast.Name(id="__tacit_const__", ctx=ast.Load()),
                    args=[ast.Constant(value=name), stmt.value], keywords=[]), stmt.value)
        return node


def _int_literal(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.UAdd)):
        node = node.operand
    return (isinstance(node, ast.Constant) and isinstance(node.value, int)
            and not isinstance(node.value, bool))


def _patch_argparse():
    import argparse
    original = argparse.ArgumentParser.parse_args

    def parse_args(self, args=None, namespace=None):
        ns = original(self, args, namespace)
        for action in self._actions:
            dest = getattr(action, "dest", None)
            if dest and _is_plain_int(getattr(ns, dest, None)) and action.default == getattr(ns, dest):
                setattr(ns, dest, make_sym(dest.upper(), getattr(ns, dest), "param"))
        return ns

    argparse.ArgumentParser.parse_args = parse_args


def _error_line(tb):
    line = 0
    while tb is not None:
        if os.path.abspath(tb.tb_frame.f_code.co_filename) == SPEC:
            line = tb.tb_lineno
        tb = tb.tb_next
    return line


def _name_params(globals_):
    for p in _PARAMS:
        if p["kind"] != "param":
            continue
        names = [k for k, v in globals_.items() if v is p["obj"] and not k.startswith("__")]
        if names:
            names.sort(key=lambda k: (k != k.upper(), k))
            p["name"] = names[0]


def run(spec, out_path):
    global SPEC, _SOURCE_CALLS
    SPEC = os.path.abspath(spec)
    result = {"status": "ok"}
    try:
        with open(spec, encoding="utf-8") as f:
            source = f.read()
    except (OSError, UnicodeDecodeError) as e:
        result = {"status": "error", "line": 0, "message": "cannot read the spec: %s" % e}
        return _dump(result, out_path)
    try:
        tree = ast.parse(source, filename=spec)
    except SyntaxError as e:
        result = {"status": "error", "line": e.lineno or 0,
                  "message": "invalid Python syntax (%s)" % e.msg}
        return _dump(result, out_path)
    _SOURCE_CALLS = [n for n in ast.walk(tree) if isinstance(n, ast.Call)]
    tree = ast.fix_missing_locations(_ConstantRewriter().visit(tree))
    code = compile(tree, spec, "exec")
    globals_ = {"__name__": "__main__", "__file__": spec, "__builtins__": __builtins__,
                "__tacit_const__": module_constant}
    sys.argv = [spec]
    sys.path.insert(1, os.path.dirname(SPEC))
    _patch_argparse()
    try:
        exec(code, globals_)
    except SystemExit as e:
        if e.code not in (None, 0):
            result = {"status": "error", "line": _error_line(sys.exc_info()[2]),
                      "message": "the spec exited with status %s" % (e.code,)}
    except BaseException as e:  # noqa: B036 - every failure of the spec is reported
        result = {"status": "error", "line": _error_line(sys.exc_info()[2]),
                  "message": "the spec raised %s: %s" % (type(e).__name__, e)}
    _name_params(globals_)
    result["accelerators"] = _ACCELERATORS
    result["params"] = [{k: v for k, v in p.items() if k != "obj"} for p in _PARAMS]
    result["ignored"] = _IGNORED
    return _dump(result, out_path)


def _dump(result, out_path):
    with open(out_path, "w", encoding="utf-8") as f:
        json.dump(result, f)
    return 0
)shim";

// taidl/__init__.py and act/taidl/__init__.py: the TAIDL v2 API under both of its names.
constexpr std::string_view kTaidlApi =
    R"shim("""tacit recording shim: the TAIDL v2 API (`taidl`, `act.taidl`)."""
from _tacit_recorder import AcceleratorV2 as Accelerator, Instruction, DataModel, Constant, generator_function

generate_oracle = generator_function("generate_oracle")
generate_backend = generator_function("generate_backend")


def __getattr__(name):
    if name.startswith("generate"):
        return generator_function(name)
    raise AttributeError("module '%s' has no attribute '%s' in the tacit shim" % (__name__, name))
)shim";

constexpr std::string_view kActInit =
    R"shim("""tacit recording shim: the ACT package (`act.taidl`, `act.generator`, `act.generators`)."""
)shim";

// act/generator.py and act/generators/__init__.py: the two spellings ACT's scripts import.
constexpr std::string_view kActGenerators =
    R"shim("""tacit recording shim: ACT's generators; every generate_* call is recorded and ignored."""
from _tacit_recorder import generator_function

generate_oracle = generator_function("generate_oracle")
generate_backend = generator_function("generate_backend")


def __getattr__(name):
    if name.startswith("generate"):
        return generator_function(name)
    raise AttributeError("module '%s' has no attribute '%s' in the tacit shim" % (__name__, name))
)shim";

constexpr std::string_view kIdlInit =
    R"shim("""tacit recording shim: the TAIDL v1 package of the MICRO'25 artifact (`idl.accelerator`)."""
)shim";

constexpr std::string_view kIdlAccelerator =
    R"shim("""tacit recording shim: the TAIDL v1 API (`from accelerator import Accelerator`)."""
from _tacit_recorder import AcceleratorV1 as Accelerator, Instruction, DataModel, Constant
)shim";

constexpr std::string_view kAccelerator =
    R"shim("""tacit recording shim: the TAIDL v1 API (`from accelerator import Accelerator`)."""
from _tacit_recorder import AcceleratorV1 as Accelerator, Instruction, DataModel, Constant
)shim";

}  // namespace

const std::vector<std::pair<std::string, std::string_view>>& shimFiles() {
  static const std::vector<std::pair<std::string, std::string_view>> kFiles = {
      {"_tacit_run.py", kTacitRun},
      {"_tacit_recorder.py", kTacitRecorder},
      {"taidl/__init__.py", kTaidlApi},
      {"act/__init__.py", kActInit},
      {"act/taidl/__init__.py", kTaidlApi},
      {"act/generator.py", kActGenerators},
      {"act/generators/__init__.py", kActGenerators},
      {"idl/__init__.py", kIdlInit},
      {"idl/accelerator.py", kIdlAccelerator},
      {"accelerator.py", kAccelerator},
  };
  return kFiles;
}

}  // namespace tacit::importer
