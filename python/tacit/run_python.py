"""`tacit run-python`: a TAIDL-TO kernel function of a Python module, run on tacit's oracle.

    tacit run-python SPEC KERNELS.py --kernel NAME [--size N]... [--arg K=V]... [--param K=V]...
                     [--input FILE.npy]... [--random SEED] [--output-dir DIR] [--emit-tasm FILE]

(also `python3 -m tacit.run_python ...`). The kernel function is called as the artifact's drivers
call it, `NAME(kernel, api, *sizes, **args)` (integer values), with tacit's decorator and api
(tacit.taidl_to). Inputs are .npy files in the decorator's input order (each of the declared
shape and element type), or random ones (--random SEED). The outputs are written as
DIR/out0.npy, ... with --output-dir, else summarised on stdout; --emit-tasm writes the recorded
program (docs/tasm.md). Exit status 1 with one message on stderr when anything fails.
"""
import argparse
import os
import sys

import numpy as np

from . import _tacit
from . import taidl_to


def _pair(text):
    key, sep, value = text.partition("=")
    if not sep or not key:
        raise argparse.ArgumentTypeError(f"expected K=V, found '{text}'")
    try:
        return key, int(value, 0)
    except ValueError:
        raise argparse.ArgumentTypeError(f"'{text}': the value is not an integer") from None


def _random(shape, dtype, rng):
    dtype = np.dtype(dtype)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if dtype.kind == "f":
        return rng.uniform(-1, 1, size=shape).astype(dtype)
    if dtype.kind == "b":
        return rng.integers(0, 1, size=shape, endpoint=True).astype(dtype)
    raise TypeError(f"no random values for element type {dtype}")


def main(argv=None):
    parser = argparse.ArgumentParser(prog="tacit run-python",
                                     description=__doc__.split("\n\n")[0])
    parser.add_argument("spec", help="the ISA (.taidl)")
    parser.add_argument("module", help="the Python file of TAIDL-TO kernel functions")
    parser.add_argument("--kernel", required=True, help="the kernel function's name")
    parser.add_argument("--size", type=lambda s: int(s, 0), action="append", default=[],
                        help="a positional size argument of the function (repeatable)")
    parser.add_argument("--arg", type=_pair, action="append", default=[],
                        help="a keyword argument of the function, K=V (repeatable)")
    parser.add_argument("--param", type=_pair, action="append", default=[],
                        help="an ISA parameter, K=V (repeatable)")
    parser.add_argument("--input", action="append", default=[], help="an input .npy (in order)")
    parser.add_argument("--random", type=int, help="random inputs from this seed")
    parser.add_argument("--output-dir", help="write the outputs as out0.npy, ...")
    parser.add_argument("--emit-tasm", help="write the recorded .tasm program")
    args = parser.parse_args(argv)
    try:
        isa = _tacit.load_isa(args.spec, **dict(args.param))
        k = taidl_to.build_kernel(isa, args.module, args.kernel, *args.size, **dict(args.arg))
        k.build()
        if args.emit_tasm:
            with open(args.emit_tasm, "w") as f:
                f.write(k.tasm)
        if args.input and args.random is not None:
            raise ValueError("give --input files or --random, not both")
        if args.random is not None:
            rng = np.random.default_rng(args.random)
            inputs = [_random(tuple(t["shape"]), t["dtype"], rng) for t in k.inputs]
        else:
            if len(args.input) != len(k.inputs):
                raise ValueError(f"the kernel has {len(k.inputs)} inputs; {len(args.input)} "
                                 "--input files given (or use --random SEED)")
            inputs = []
            for path, t in zip(args.input, k.inputs):
                a = np.load(path, allow_pickle=False)
                if a.dtype != np.dtype(t["dtype"]) or a.shape != tuple(t["shape"]):
                    raise ValueError(f"{path}: {a.dtype}{list(a.shape)}, the kernel declares "
                                     f"{np.dtype(t['dtype'])}{list(t['shape'])}")
                inputs.append(a)
        outs = k.run(*inputs)
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            for i, o in enumerate(outs):
                np.save(os.path.join(args.output_dir, f"out{i}.npy"), o)
        for i, o in enumerate(outs):
            flat = o.reshape(-1)
            head = " ".join(str(x) for x in flat[:8]) + (" ..." if flat.size > 8 else "")
            print(f"out{i}: {o.dtype}{list(o.shape)} {head}")
    except _tacit.Error as e:
        print(str(e), file=sys.stderr)
        return 1
    except (OSError, ValueError, TypeError, AttributeError, RuntimeError, KeyError,
            SyntaxError) as e:
        print(f"tacit run-python: error: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
