"""The published TAIDL-TO kernels against their golden outputs, the artifact's way
(docs/python.md, "TAIDL-TO kernels").

    python3 -m tacit.conformance [--shared DIR] [--source DIR] [--only SUBSTRING]

For every golden case in DIR/conformance/{amx,gemmini}/ (DIR: ../shared beside the repository,
TACIT_SHARED_DIR, or --shared), runs the artifact's own kernel function — from
DIR/conformance/kernels/{amx/kernels.py, gemmini/tiled_matmul.py, gemmini/exo.py}, unchanged —
through tacit.taidl_to on tacit's oracle, with the golden inputs, and compares its outputs with
the golden ones. Integer outputs must be equal; the f32 outputs of sgemm_avx, which the golden
files print with 6 decimals from inputs printed the same way, must agree to 1e-5 (the bit-exact
check of that kernel against an independent fma model is tests/oracle/conformance_test.cc).
Prints one line per case and exits 1 if any differs. The golden formats are the artifact's
drivers' (`main.py`): AMX `NAME NDIMS d0 .. dn DTYPE` then one line of values; Gemmini
`NAME d0 d1` then rows, inputs int8 and the last block the int32 golden output.
"""
import argparse
import os
import re
import sys

import numpy as np

from . import _tacit
from . import taidl_to

_AMX_TYPES = {"i8": np.int8, "u8": np.uint8, "i32": np.int32, "f32": np.float32}

# The artifact's Exo kernels by the golden folder's N x M x K (its gemmini/main.py's table).
_EXO = {(12544, 64, 256): "matmul_6", (12544, 256, 64): "matmul_4",
        (784, 1024, 256): "matmul_27", (3136, 512, 128): "matmul_14",
        (3136, 128, 512): "matmul_16", (512, 512, 512): "matmul_512"}


def read_amx(path):
    """(name, array) per tensor of an AMX golden file."""
    out = []
    with open(path) as f:
        lines = [ln.strip() for ln in f]
    i = 0
    while i < len(lines):
        parts = lines[i].split()
        if len(parts) >= 3 and parts[-1] in _AMX_TYPES and i + 1 < len(lines):
            ndims = int(parts[1])
            shape = [int(x) for x in parts[2:2 + ndims]]
            dtype = _AMX_TYPES[parts[-1]]
            values = lines[i + 1].split()
            cast = float if dtype == np.float32 else int
            out.append((parts[0], np.array([cast(v) for v in values], dtype=dtype).reshape(shape)))
            i += 2
        else:
            i += 1
    return out


def read_gemmini(path):
    """(name, int64 array) per block of a Gemmini golden file."""
    out = []
    with open(path) as f:
        tokens = [ln.split() for ln in f]
    i = 0
    while i < len(tokens):
        parts = tokens[i]
        i += 1
        if len(parts) < 2 or not re.fullmatch(r"[A-Za-z_]\w*", parts[0]):
            continue
        shape = [int(d) for d in parts[1:]]
        n = int(np.prod(shape))
        values = []
        while i < len(tokens) and len(values) < n:
            values += tokens[i]
            i += 1
        out.append((parts[0], np.array([int(v) for v in values[:n]], dtype=np.int64).reshape(shape)))
    return out


def _same(got, gold):
    got = np.asarray(got)
    if np.issubdtype(gold.dtype, np.floating):
        return got.shape == gold.shape and bool(np.allclose(got, gold, rtol=1e-5, atol=1e-5))
    return got.shape == gold.shape and bool(np.array_equal(got.astype(np.int64),
                                                             gold.astype(np.int64)))


def cases(shared, source):
    """(label, spec, params, kernel file, function, size arguments, inputs, golden outputs)."""
    conf = os.path.join(shared, "conformance")
    kernels = os.path.join(conf, "kernels")
    for case in sorted(os.listdir(os.path.join(conf, "amx"))):
        m = re.fullmatch(r"(\w+?)_(\d+)", case)
        if not m:
            continue
        for data in sorted(f for f in os.listdir(os.path.join(conf, "amx", case))
                           if f.endswith(".txt")):
            tensors = read_amx(os.path.join(conf, "amx", case, data))
            inputs = [a for n, a in tensors if not n.startswith("out")]
            golden = [a for n, a in tensors if n.startswith("out")]
            yield (f"amx/{case}/{data}", os.path.join(source, "isa", "amx.taidl"), {},
                   os.path.join(kernels, "amx", "kernels.py"), m.group(1), (int(m.group(2)),),
                   {}, inputs, golden)
    for case in sorted(os.listdir(os.path.join(conf, "gemmini"))):
        for data in sorted(f for f in os.listdir(os.path.join(conf, "gemmini", case))
                           if f.endswith(".txt")):
            blocks = read_gemmini(os.path.join(conf, "gemmini", case, data))
            inputs = [a.astype(np.int8) for _, a in blocks[:-1]]
            golden = [blocks[-1][1].astype(np.int32)]
            spec = os.path.join(source, "isa", "gemmini.taidl")
            m = re.fullmatch(r"matmul_(\d+)_(\d+)", case)
            if m:
                dim, iters = int(m.group(1)), int(m.group(2))
                # Both dataflows, each with Python loops and with api loops: the same C.
                for df in (0, 1):
                    for xla_while in (0, 1):
                        yield (f"gemmini/{case}/{data} df={df} api-loops={xla_while}", spec,
                               {"DIM": dim}, os.path.join(kernels, "gemmini", "tiled_matmul.py"),
                               "tiled_matmul", (), {"DIM": dim, "iterations": iters, "df": df,
                                                    "xla_while": xla_while}, inputs, golden)
                continue
            m = re.fullmatch(r"exo_(\d+)x(\d+)x(\d+)", case)
            if m and tuple(int(g) for g in m.groups()) in _EXO:
                yield (f"gemmini/{case}/{data}", spec, {"DIM": 16},
                       os.path.join(kernels, "gemmini", "exo.py"),
                       _EXO[tuple(int(g) for g in m.groups())], (), {}, inputs, golden)


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    parser = argparse.ArgumentParser(prog="python3 -m tacit.conformance",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("--shared", default=os.environ.get("TACIT_SHARED_DIR"),
                        help="the shared data folder (default ../shared beside --source)")
    parser.add_argument("--source", default=os.environ.get("TACIT_SOURCE_DIR"),
                        help="the tacit repository (its isa/ specs)")
    parser.add_argument("--only", default="", help="run the cases whose label contains this")
    args = parser.parse_args(argv)
    source = args.source or os.path.normpath(os.path.join(here, "..", "..", ".."))
    shared = args.shared or os.path.join(source, "..", "shared")
    if not os.path.isdir(os.path.join(shared, "conformance", "kernels")):
        print(f"tacit.conformance: no TAIDL-TO kernels under {shared}/conformance/kernels "
              "(--shared DIR)", file=sys.stderr)
        return 2
    isas, failed, total = {}, 0, 0
    for label, spec, params, path, fn, args_, kwargs, inputs, golden in cases(shared, source):
        if args.only not in label:
            continue
        key = (spec, tuple(sorted(params.items())))
        if key not in isas:
            isas[key] = _tacit.load_isa(spec, **params)
        total += 1
        try:
            outs = taidl_to.run_kernel(isas[key], path, fn, inputs, *args_, **kwargs)
            ok = len(outs) == len(golden) and all(_same(o, g) for o, g in zip(outs, golden))
            why = "" if ok else " (outputs differ from the golden ones)"
        except Exception as e:  # a kernel that does not run is a failed case, reported
            ok, why = False, f" ({type(e).__name__}: {e})"
        failed += 0 if ok else 1
        print(f"{'ok  ' if ok else 'FAIL'} {label}{why}", flush=True)
    print(f"tacit.conformance: {total - failed} of {total} golden cases reproduced")
    return 1 if failed or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
