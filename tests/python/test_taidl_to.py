#!/usr/bin/env python3
"""TAIDL-TO kernels run unchanged (tacit.taidl_to, `tacit run-python`, tacit.conformance;
docs/python.md): kernels written the artifact's way run on the oracle and compute what NumPy
computes; tacit's own `--emit py` kernels run to the compiled program's outputs bit for bit; the
published kernels reproduce every golden output of ../shared/conformance; mistakes are errors
that say what went wrong. Run by CTest with the build tree's package on PYTHONPATH."""
import contextlib
import io
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

import numpy as np

import tacit
from tacit import conformance, taidl_to

ROOT = os.environ.get("TACIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
SHARED = os.environ.get("TACIT_SHARED_DIR") or os.environ.get(
    "TACIT_SHARED_DIR_DEFAULT", os.path.join(ROOT, "..", "shared"))
CLI = os.environ.get("TACIT_CLI")
MISSING = "[tacit: missing shared data]"


def path(rel):
    return os.path.join(ROOT, rel)


# A TAIDL-TO kernel module in the artifact's style: an AMX u8 x s8 tile GEMM over K blocks with an
# api loop (affine addresses in %k), and a Gemmini matmul with a Python loop over row tiles.
KERNELS = textwrap.dedent('''
    import numpy as np


    def tile_gemm(kernel, api, BLOCKS=2):
        a, b = 0, 1024 * BLOCKS
        out = 2048 * BLOCKS

        @kernel(hbm=out + 1024,
                input=[{"addr": a, "shape": (BLOCKS, 16, 64), "dtype": np.uint8},
                       {"addr": b, "shape": (BLOCKS, 16, 64), "dtype": np.int8}],
                output=[{"addr": out, "shape": (16, 16), "dtype": np.int32}])
        def _kernel():
            api.tilezero(0)
            api.start_loop("k", 0, BLOCKS)
            api.tileloadd(dst=1, addr=f"{1024} * %k + {a}", stride=64)
            api.tileloadd(dst=2, addr=f"{1024} * %k + {b}", stride=64)
            api.tdpbusd(0, 1, 2)
            api.end_loop()
            api.tilestored(src=0, addr=out, stride=64)

        return _kernel, out + 1024


    def gemmini_rows(kernel, api, DIM=16, I=3):
        @kernel(hbm=DIM * DIM * (2 * I + 1),
                input=[{"addr": 0, "shape": (I * DIM, DIM), "dtype": np.int8},
                       {"addr": I * DIM * DIM, "shape": (DIM, DIM), "dtype": np.int8}],
                output=[{"addr": (I + 1) * DIM * DIM, "shape": (I * DIM, DIM),
                         "dtype": np.int8}])
        def rows():
            for i in range(I + 1):
                api.mvin_spad(tiles=1, stride=DIM, hbm_addr=DIM * DIM * i, sp_addr=DIM * i)
            api.dataflow_config(dataflow=0)
            for i in range(I):
                api.matmul_preload_zeros(rs2=DIM * (I + 1 + i))
                api.matmul8_compute_preloaded(rs1=DIM * i, rs2=DIM * I)
                api.mvout_spad(rows=DIM, stride=DIM, hbm_addr=(I + 1 + i) * DIM * DIM,
                               sp_addr=DIM * (I + 1 + i))

        return rows, DIM * DIM * (2 * I + 1)


    def no_end(kernel, api):
        @kernel(hbm=64, input=[], output=[])
        def body():
            api.start_loop("i", 0, 2)
            api.tilezero(0)
        return body, 64


    def bad_register(kernel, api):
        @kernel(hbm=64, input=[], output=[])
        def body():
            api.tilezero(dst=9)
        return body, 64
''')


def tdpbusd_reference(a, b):
    """The sum over K blocks of tdpbusd: A (u8) times B in the VNNI layout, in int32."""
    acc = np.zeros((16, 16), dtype=np.int64)
    for blk in range(a.shape[0]):
        av = a[blk].astype(np.int64)                       # [16 rows, 64 k]
        bv = b[blk].reshape(16, 16, 4).astype(np.int64)    # [k/4, n, 4]
        bk = bv.transpose(0, 2, 1).reshape(64, 16)         # [k, n]
        acc += av @ bk
    return ((acc + 2**31) % 2**32 - 2**31).astype(np.int32)


class TaidlToKernels(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.kernels = os.path.join(cls.tmp.name, "my_kernels.py")
        with open(cls.kernels, "w") as f:
            f.write(KERNELS)
        cls.amx = tacit.load_isa(path("isa/amx.taidl"))
        cls.gemmini = tacit.load_isa(path("isa/gemmini.taidl"), DIM=16)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_an_api_loop_is_a_tasm_loop_and_computes_the_tile_gemm(self):
        rng = np.random.default_rng(1)
        a = rng.integers(0, 255, size=(3, 16, 64), dtype=np.uint8, endpoint=True)
        b = rng.integers(-128, 127, size=(3, 16, 64), dtype=np.int8, endpoint=True)
        k = taidl_to.build_kernel(self.amx, self.kernels, "tile_gemm", 3)
        (out,) = k.run(a, b)
        np.testing.assert_array_equal(out, tdpbusd_reference(a, b))
        self.assertIn("loop k in [0, 3) {", k.tasm)
        self.assertIn("tileloadd(dst=1, addr=1024 * k + 0, stride=64);", k.tasm)
        # The artifact's calling convention: compile, then run with positional inputs.
        inputs, compile_ms = k("fsim-compile")()
        self.assertEqual([s for s, _ in inputs], [(3, 16, 64), (3, 16, 64)])
        self.assertGreaterEqual(compile_ms, 0)
        outs, run_ms = k("fsim")(a, b)
        np.testing.assert_array_equal(outs[0], out)

    def test_python_loops_repeat_calls_and_keyword_sizes_reach_the_function(self):
        rng = np.random.default_rng(2)
        a = rng.integers(-128, 127, size=(64, 16), dtype=np.int8, endpoint=True)
        b = rng.integers(-128, 127, size=(16, 16), dtype=np.int8, endpoint=True)
        (c,) = tacit.run_kernel(self.gemmini, self.kernels, "gemmini_rows", [a, b], I=4)
        ref = np.clip(a.astype(np.int32) @ b.astype(np.int32), -128, 127).astype(np.int8)
        np.testing.assert_array_equal(c, ref)

    def test_emitted_python_kernels_run_to_the_compiled_programs_outputs(self):
        if not CLI:
            self.skipTest("TACIT_CLI is not set (CTest sets it)")
        hlo = path("examples/amx/k5_int8_gemm_requantize.hlo")
        py = os.path.join(self.tmp.name, "k5.py")
        subprocess.run([CLI, "compile", "--isa", path("isa/amx.taidl"), hlo, "--emit", "py",
                        "-o", py], check=True, capture_output=True)
        program = self.amx.compile(hlo)
        rng = np.random.default_rng(3)
        a = rng.integers(0, 255, size=(32, 64), dtype=np.uint8, endpoint=True)
        b = rng.integers(-128, 127, size=(2, 16, 16, 4), dtype=np.int8, endpoint=True)
        bias = rng.uniform(-50, 50, size=(32,)).astype(np.float32)
        outs = tacit.run_kernel(self.amx, py, "amx_k5", [a, b, bias])
        ref = program.run(dict(zip(list(program.inputs), [a, b, bias])))
        names = list(program.outputs)
        self.assertEqual(len(outs), len(names))
        for got, name in zip(outs, names):
            np.testing.assert_array_equal(got.reshape(-1).view(np.uint8),
                                          ref[name].reshape(-1).view(np.uint8))

    def test_mistakes_are_errors_that_say_what_went_wrong(self):
        with self.assertRaisesRegex(AttributeError, "no instruction or macro 'tilezer0'"):
            taidl_to.kernel_api(self.amx)[1].tilezer0
        with self.assertRaisesRegex(RuntimeError, "outside a kernel's body"):
            taidl_to.kernel_api(self.amx)[1].tilezero(0)
        with self.assertRaisesRegex(RuntimeError, "loop 'i' has no api.end_loop"):
            taidl_to.build_kernel(self.amx, self.kernels, "no_end").build()
        with self.assertRaisesRegex(AttributeError, "no kernel function 'absent'"):
            taidl_to.build_kernel(self.amx, self.kernels, "absent")
        # The oracle's check of the call, located in the recorded program.
        with self.assertRaises(tacit.Error) as e:
            taidl_to.build_kernel(self.amx, self.kernels, "bad_register").run()
        self.assertIn("tilezero", e.exception.message)
        k = taidl_to.build_kernel(self.amx, self.kernels, "tile_gemm", 2)
        with self.assertRaisesRegex(TypeError, "2 inputs expected, 1 given"):
            k.run(np.zeros((2, 16, 64), np.uint8))

    def test_the_command_writes_outputs_and_the_recorded_program(self):
        if not CLI:
            self.skipTest("TACIT_CLI is not set (CTest sets it)")
        out_dir = os.path.join(self.tmp.name, "cli_out")
        tasm = os.path.join(self.tmp.name, "tile_gemm.tasm")
        a = np.full((2, 16, 64), 3, np.uint8)
        b = np.full((2, 16, 64), -2, np.int8)
        np.save(os.path.join(self.tmp.name, "a.npy"), a)
        np.save(os.path.join(self.tmp.name, "b.npy"), b)
        r = subprocess.run([CLI, "run-python", path("isa/amx.taidl"), self.kernels, "--kernel",
                            "tile_gemm", "--size", "2", "--input",
                            os.path.join(self.tmp.name, "a.npy"), "--input",
                            os.path.join(self.tmp.name, "b.npy"), "--output-dir", out_dir,
                            "--emit-tasm", tasm], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stderr)
        np.testing.assert_array_equal(np.load(os.path.join(out_dir, "out0.npy")),
                                      tdpbusd_reference(a, b))
        again = self.amx.program(tasm).run({"in0": a, "in1": b})["out0"]
        np.testing.assert_array_equal(again, tdpbusd_reference(a, b))
        bad = subprocess.run([CLI, "run-python", path("isa/amx.taidl"), self.kernels, "--kernel",
                              "tile_gemm", "--random", "1", "--input", "x.npy"],
                             capture_output=True, text=True)
        self.assertEqual(bad.returncode, 1)
        self.assertIn("not both", bad.stderr)


class PublishedKernels(unittest.TestCase):
    def test_every_golden_output_is_reproduced_by_the_unchanged_kernels(self):
        if not os.path.isdir(os.path.join(SHARED, "conformance", "kernels")):
            print(f"{MISSING} {os.path.normpath(SHARED)}/conformance does not exist; set "
                  "TACIT_SHARED_DIR to a copy of the shared data (README.md, \"Test data\")")
            self.skipTest("no shared conformance data")
        log = io.StringIO()
        with contextlib.redirect_stdout(log):
            rc = conformance.main(["--shared", SHARED, "--source", ROOT])
        sys.stdout.write(log.getvalue().splitlines()[-1] + "\n")
        self.assertEqual(rc, 0, log.getvalue())
        lines = log.getvalue().splitlines()
        for prefix in ("ok   amx/cnn_inference_amx_", "ok   amx/rnn_inference_amx_",
                       "ok   amx/sgemm_avx_", "ok   gemmini/matmul_", "ok   gemmini/exo_"):
            self.assertTrue(any(ln.startswith(prefix) for ln in lines), prefix)


if __name__ == "__main__":
    unittest.main()
