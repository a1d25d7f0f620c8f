"""TAIDL-TO test kernels run unchanged on tacit's oracle (docs/python.md, "TAIDL-TO kernels").

A TAIDL-TO kernel module (the published artifact's `kernels.py`, `tiled_matmul.py`, `exo.py`, or
what `tacit compile --emit py` writes) defines functions `f(kernel, api, *sizes)`. Each builds a
kernel with the `@kernel(hbm=..., input=[...], output=[...], constant=[...])` decorator around a
body of `api` calls and returns `(kernel, hbm_size)`. The body calls the ISA's instructions and
macros (`api.tileloadd(dst=4, addr=0, stride=64)`, positional arguments in declaration order),
`api.start_loop("i", 0, n)` ... `api.end_loop()` with attribute values that are integers or
affine strings over the loop variables (`"64 * %i + 1024"`), and `api.debug(prefix=..., data=...)`.

Here the api records the body as a .tasm program (docs/tasm.md): a Python `for` loop becomes
repeated calls, an `api` loop a `.tasm` loop, which the oracle runs natively. The decorated
kernel behaves as TAIDL-TO's: `k('fsim-compile')()` builds the program and returns the inputs'
descriptions and the time it took (ms); `k('fsim')(*arrays)` runs it and returns the outputs and
the run time (ms). The program is checked by tacit's parser and run bit-faithfully by its oracle.
"""
import importlib.util
import os
import re
import sys
import time

import numpy as np

from . import _tacit

# NumPy element types as .taidl/.tasm type names (bf16 and fp8, which NumPy lacks, by the names
# ml_dtypes gives them).
_TYPES = {
    "bool": "pred", "int8": "s8", "uint8": "u8", "int16": "s16", "uint16": "u16",
    "int32": "s32", "uint32": "u32", "int64": "s64", "uint64": "u64", "float16": "f16",
    "float32": "f32", "float64": "f64", "bfloat16": "bf16", "float8_e4m3fn": "f8e4m3fn",
    "float8_e5m2": "f8e5m2",
}

_LOOP_VARIABLE = re.compile(r"%([A-Za-z_][A-Za-z0-9_]*)")


def _type_name(dtype):
    name = getattr(dtype, "__name__", None)
    if name not in _TYPES:
        name = np.dtype(dtype).name
    if name not in _TYPES:
        raise TypeError(f"TAIDL-TO kernel: element type {dtype!r} has no .tasm name")
    return _TYPES[name]


def _value(v):
    """An attribute value or loop bound as .tasm text: an integer, or an affine expression whose
    loop variables TAIDL-TO writes with a `%`."""
    if isinstance(v, (bool, np.bool_)):
        return str(int(v))
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, str):
        return _LOOP_VARIABLE.sub(r"\1", v)
    raise TypeError(f"TAIDL-TO kernel: attribute value {v!r} is neither an integer nor a string")


def _shape(t):
    return tuple(int(d) for d in t["shape"])


class _Recording:
    """The .tasm statements of one kernel body, indented by loop depth."""

    def __init__(self):
        self.lines = []
        self.loops = []

    def emit(self, text):
        self.lines.append("  " * (len(self.loops) + 1) + text)


class Api:
    """The `api` object of a TAIDL-TO kernel: every instruction and macro of the ISA, start_loop,
    end_loop and debug. Calls are recorded only while a kernel's body runs (Kernel.build)."""

    def __init__(self, isa):
        self._isa = isa
        self._units = set(isa.units)
        self._recording = None

    def _record(self, what):
        if self._recording is None:
            raise RuntimeError(f"TAIDL-TO kernel: api.{what} called outside a kernel's body")
        return self._recording

    def __getattr__(self, name):
        if name.startswith("_") or name not in self._units:
            raise AttributeError(
                f"ISA '{self._isa.name}' has no instruction or macro '{name}'")

        def call(*args, **kwargs):
            parts = [_value(a) for a in args] + [f"{k}={_value(v)}" for k, v in kwargs.items()]
            self._record(name).emit(f"{name}({', '.join(parts)});")

        call.__name__ = name
        return call

    def start_loop(self, var, lo, hi):
        if not isinstance(var, str) or not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", var):
            raise ValueError(f"TAIDL-TO kernel: loop variable {var!r} is not a name")
        r = self._record("start_loop")
        r.emit(f"loop {var} in [{_value(lo)}, {_value(hi)}) {{")
        r.loops.append(var)

    def end_loop(self):
        r = self._record("end_loop")
        if not r.loops:
            raise RuntimeError("TAIDL-TO kernel: api.end_loop() without a start_loop")
        r.loops.pop()
        r.emit("}")

    def debug(self, prefix=None, data=None):
        if not isinstance(data, str):
            raise TypeError("TAIDL-TO kernel: api.debug needs data='buffer[...]'")
        label = "" if prefix is None else '"' + str(prefix).replace("\\", "\\\\").replace(
            '"', '\\"') + '" '
        self._record("debug").emit(f"debug {label}{_value(data)};")


class Kernel:
    """A decorated TAIDL-TO kernel body: `k('fsim-compile')()` and `k('fsim')(*inputs)`."""

    def __init__(self, api, body, hbm, inputs, outputs, constants):
        self.api, self.body, self.hbm = api, body, int(hbm)
        self.inputs, self.outputs, self.constants = list(inputs), list(outputs), list(constants)
        self.program = None
        self.tasm = None

    def build(self):
        """Records the body and parses it as a .tasm program (once)."""
        if self.program is not None:
            return self.program
        name = re.sub(r"[^A-Za-z0-9_]", "_", getattr(self.body, "__name__", "kernel")) or "kernel"
        lines = [f"kernel {name} hbm={self.hbm} {{"]
        for i, t in enumerate(self.inputs):
            dims = ",".join(str(d) for d in _shape(t))
            lines.append(f"  input in{i} @{int(t['addr'])} : {_type_name(t['dtype'])}[{dims}];")
        for i, t in enumerate(self.constants):
            dims = ",".join(str(d) for d in _shape(t))
            value = np.asarray(t["value"], dtype=t["dtype"]).reshape(_shape(t))
            lines.append(f"  const c{i} @{int(t['addr'])} : {_type_name(t['dtype'])}[{dims}] = "
                         f"{_literal(value)};")
        for i, t in enumerate(self.outputs):
            dims = ",".join(str(d) for d in _shape(t))
            lines.append(f"  output out{i} @{int(t['addr'])} : {_type_name(t['dtype'])}[{dims}];")
        recording = _Recording()
        if self.api._recording is not None:
            raise RuntimeError("TAIDL-TO kernel: a kernel's body built inside another's")
        self.api._recording = recording
        try:
            self.body()
        finally:
            self.api._recording = None
        if recording.loops:
            raise RuntimeError(
                f"TAIDL-TO kernel: loop '{recording.loops[-1]}' has no api.end_loop()")
        self.tasm = "\n".join(lines + recording.lines + ["}"]) + "\n"
        self.program = self.api._isa.program(self.tasm)
        return self.program

    def run(self, *arrays):
        """The outputs (NumPy arrays, in the decorator's order) for inputs in its order."""
        program = self.build()
        if len(arrays) != len(self.inputs):
            raise TypeError(f"TAIDL-TO kernel: {len(self.inputs)} inputs expected, "
                            f"{len(arrays)} given")
        given = {}
        for i, (a, t) in enumerate(zip(arrays, self.inputs)):
            given[f"in{i}"] = np.ascontiguousarray(a, dtype=t["dtype"]).reshape(_shape(t))
        result = program.run(given)
        return [result[f"out{i}"] for i in range(len(self.outputs))]

    def __call__(self, mode):
        if mode == "fsim-compile":
            def compile_():
                start = time.perf_counter()
                self.build()
                return ([(_shape(t), t["dtype"]) for t in self.inputs],
                        (time.perf_counter() - start) * 1e3)
            return compile_
        if mode == "fsim":
            def run_(*arrays):
                start = time.perf_counter()
                outs = self.run(*arrays)
                return outs, (time.perf_counter() - start) * 1e3
            return run_
        raise ValueError(f"TAIDL-TO kernel: unknown mode {mode!r} ('fsim' or 'fsim-compile')")


def _literal(a):
    """A NumPy array as an HLO literal (nested braces), for a .tasm const."""
    if a.ndim == 0:
        return _scalar(a.item())
    return "{" + ", ".join(_literal(x) for x in a) + "}"


def _scalar(x):
    if isinstance(x, float):
        return repr(x) if np.isfinite(x) else ("nan" if np.isnan(x) else
                                               ("inf" if x > 0 else "-inf"))
    return str(int(x))


def kernel_api(isa):
    """The (kernel decorator, api) pair a TAIDL-TO kernel function takes, for `isa` (an Isa of
    tacit.load_isa)."""
    api = Api(isa)

    def kernel(hbm, input=(), output=(), constant=(), **_ignored):
        def decorate(body):
            return Kernel(api, body, hbm, input, output, constant)
        return decorate

    return kernel, api


def load_module(path):
    """A kernel module by file name, imported as the artifact's drivers import it (its folder on
    sys.path, so that `from kernels import ...` style imports between its files resolve)."""
    path = os.path.abspath(path)
    name = "taidl_to_" + re.sub(r"[^A-Za-z0-9_]", "_", os.path.splitext(os.path.basename(path))[0])
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build_kernel(isa, module, name, *args, **kwargs):
    """The Kernel that function `name` of `module` (a module or a file name) builds for `isa`,
    given its size arguments."""
    if isinstance(module, (str, os.PathLike)):
        module = load_module(module)
    fn = getattr(module, name, None)
    if fn is None or not callable(fn):
        raise AttributeError(f"TAIDL-TO kernels: no kernel function '{name}'")
    decorator, api = kernel_api(isa)
    built = fn(decorator, api, *args, **kwargs)
    k = built[0] if isinstance(built, tuple) else built
    if not isinstance(k, Kernel):
        raise TypeError(f"TAIDL-TO kernels: '{name}' did not return a @kernel-decorated body")
    return k


def run_kernel(isa, module, name, inputs, *args, **kwargs):
    """Runs kernel function `name` of `module` (a module or a file name) on `isa` with `inputs`
    (NumPy arrays in the decorator's input order); `args`/`kwargs` are its size arguments.
    Returns the outputs in the decorator's order."""
    return build_kernel(isa, module, name, *args, **kwargs).run(*inputs)
