#!/usr/bin/env python3
"""The Python module `tacit` (docs/python.md): loading, compiling, running bit for bit against the
HLO evaluator, timing, the element types NumPy lacks, and errors as tacit.Error with their
location. Run by CTest with the build tree's module on PYTHONPATH."""
import os
import threading
import unittest

import numpy as np

import tacit

ROOT = os.environ.get("TACIT_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))


def path(rel):
    return os.path.join(ROOT, rel)


GEMM = """HloModule gemm
ENTRY main {
  a = s8[32,64] parameter(0)
  b = s8[64,32] parameter(1)
  lo = s32[] constant(-128)
  hi = s32[] constant(127)
  wa = s32[32,64] convert(a)
  wb = s32[64,32] convert(b)
  p = s32[32,32] dot(wa, wb), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  c = s32[32,32] clamp(lo, p, hi)
  ROOT r = s8[32,32] convert(c)
}
"""


class Module(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.gemmini = tacit.load_isa(path("isa/gemmini.taidl"), DIM=16)
        cls.rng = np.random.default_rng(7)

    def random(self, shape, dtype):
        info = np.iinfo(dtype)
        return self.rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)

    def test_isa(self):
        self.assertEqual(self.gemmini.name, "gemmini")
        self.assertEqual(self.gemmini.params["DIM"], 16)
        self.assertEqual(tacit.load_isa(path("isa/gemmini.taidl"), DIM=32).params["DIM"], 32)

    def test_compile_run_equals_the_evaluator(self):
        prog = self.gemmini.compile(GEMM, verify=1)
        self.assertIn("kernel", prog.tasm)
        self.assertEqual(prog.inputs, {"a": "s8[32,64]", "b": "s8[64,32]"})
        self.assertEqual(list(prog.outputs), ["out"])
        a, b = self.random((32, 64), np.int8), self.random((64, 32), np.int8)
        out = prog.run({"a": a, "b": b})["out"]
        ref = tacit.evaluate(GEMM, [a, b])
        self.assertEqual(out.dtype, np.int8)
        self.assertTrue(np.array_equal(out, ref))
        self.assertTrue(np.array_equal(ref, tacit.evaluate(GEMM, {"a": a, "b": b})))
        # The reference itself: the saturated int32 product.
        want = np.clip(a.astype(np.int32) @ b.astype(np.int32), -128, 127).astype(np.int8)
        self.assertTrue(np.array_equal(ref, want))
        costs = prog.costs
        self.assertEqual(costs["model"], "spec")
        self.assertGreater(costs["instructions"], 0)
        self.assertIn("candidates", prog.stats)

    def test_a_deep_float_dot_compiles_only_when_reassociation_is_allowed(self):
        trainium = tacit.load_isa(path("isa/trainium.taidl"))
        kernel = path("examples/trainium/gemm_bias_relu_128x1024x512.hlo")
        with self.assertRaisesRegex(tacit.Error, "--reassociate"):
            trainium.compile(kernel)
        prog = trainium.compile(kernel, reassociate=True, verify=1)
        self.assertEqual(prog.schedule["contraction"], 128)

    def test_a_file_name_and_a_schedule(self):
        prog = self.gemmini.compile(path("examples/gemmini/matmul.hlo"))
        self.assertIsNone(prog.schedule)
        tiled = self.gemmini.compile(
            GEMM, schedule='{"tile": [16, 16], "order": [1, 0], "contraction": 16, '
            '"accumulator": "bias", "buffers": 2}', verify=1)
        self.assertEqual(tiled.schedule["buffers"], 2)

    def test_timing_and_cost_cycles(self):
        prog = self.gemmini.compile(GEMM, cost="cycles")
        self.assertEqual(prog.costs["model"], "cycles")
        report = prog.timing()
        self.assertEqual(report["cycles"], prog.costs["cycles"])
        self.assertEqual([e["name"] for e in report["engines"]], ["load", "store", "execute"])

    def test_the_html_report_of_a_compiled_program(self):
        prog = self.gemmini.compile(path("examples/gemmini/matmul.hlo"))
        html = prog.report()
        self.assertTrue(html.startswith("<!DOCTYPE html>"))
        for part in ('<section id="timeline">', '<svg class="timeline"', '<rect class="value"',
                     '<tr class="candidate">', "HloModule"):
            self.assertIn(part, html)
        with open(path("examples/gemmini/matmul.hlo")) as f:
            root = [ln.strip() for ln in f if ln.strip().startswith("ROOT")][0]
        self.assertIn(root, html)  # the kernel as written
        with self.assertRaisesRegex(ValueError, "compiled program"):
            self.gemmini.program(prog.tasm).report()

    def test_bf16_as_raw_bits(self):
        qkv = tacit.load_isa(path("isa/qkv.taidl"))
        hlo = path("examples/attention/attention.hlo")
        prog = qkv.compile(hlo)
        x = {n: (self.rng.standard_normal((64, 64), dtype=np.float32).view(np.uint32) >> 16)
             .astype(np.uint16) for n in ("q", "k", "v")}
        out = prog.run(x)["out"] if "out" in prog.outputs else prog.run(x)[list(prog.outputs)[0]]
        self.assertEqual(out.dtype, np.uint16)
        self.assertTrue(np.array_equal(out, tacit.evaluate(hlo, [x["q"], x["k"], x["v"]])))
        # The hand-written program of the same computation.
        hand = qkv.program(path("examples/qkv/attention.tasm"))
        self.assertTrue(np.array_equal(hand.run(x)["o"], out))

    def test_errors(self):
        with self.assertRaises(tacit.Error) as e:
            self.gemmini.compile("HloModule bad\nENTRY main {\n  a = s8[16] parameter(0\n}\n")
        self.assertEqual(e.exception.file, "<string>")
        self.assertEqual(e.exception.line, 4)  # where the `)` was expected: the `}`
        self.assertGreater(e.exception.col, 0)
        self.assertIn("expected", e.exception.message)
        with self.assertRaises(tacit.Error):
            tacit.load_isa(path("isa/gemmini.taidl"), NOPE=1)
        prog = self.gemmini.compile(GEMM)
        a, b = self.random((32, 64), np.int8), self.random((64, 32), np.int8)
        with self.assertRaises(KeyError):
            prog.run({"a": a})
        with self.assertRaises(KeyError):
            prog.run({"a": a, "b": b, "c": b})
        with self.assertRaises(TypeError):
            prog.run({"a": a.astype(np.int16), "b": b})
        with self.assertRaises(ValueError):
            prog.run({"a": a[:16], "b": b})
        with self.assertRaises(ValueError):
            self.gemmini.compile(GEMM, cost="fastest")

    def test_threads_compile_and_run_at_once(self):
        # The GIL is released while compiling and running: two threads, the same results.
        results = [None, None]
        a, b = self.random((32, 64), np.int8), self.random((64, 32), np.int8)

        def work(i):
            results[i] = self.gemmini.compile(GEMM).run({"a": a, "b": b})["out"]

        threads = [threading.Thread(target=work, args=(i,)) for i in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        self.assertTrue(np.array_equal(results[0], results[1]))
        self.assertTrue(np.array_equal(results[0], tacit.evaluate(GEMM, [a, b])))


if __name__ == "__main__":
    unittest.main()
