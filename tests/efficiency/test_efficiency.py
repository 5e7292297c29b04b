#!/usr/bin/env python3
"""hta efficiency (docs/efficiency.md): FLOPs and bytes per operator from the recorded shapes.

IndependentCount: the GEMMs and attention of the real traces of tests/data/real, counted here from their
`Input Dims` and `Concrete Inputs` (gzip + json, kernels given to the outermost GEMM/attention operator
enclosing their launch), against op_roofline's gflops, to the last digit.
Formulas: one hand-made trace per formula, each figure computed by hand.
Devices: the peak table, an unknown GPU (no percentages, a note), --peak-tflops/--peak-tbps.
"""
import glob
import gzip
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import unittest
from collections import defaultdict
from decimal import Decimal

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
REAL = os.path.join(ROOT, "tests", "data", "real")


def run(*args, env=None):
    p = subprocess.run([HTA, *args], capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def tables(*args, env=None):
    rc, out, err = run(*args, "--format", "json", env=env)
    if rc:
        raise AssertionError(f"hta {' '.join(args)}: exit {rc}: {err}")
    return {k: [dict(zip(t["columns"], r)) for r in t["data"]] for k, t in json.loads(out).items()}, err


# ---- the independent count ----

GEMM = {"aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear", "aten::_scaled_mm"}
# name -> (layout, q position, causal position, backward)
ATTN = {
    "aten::scaled_dot_product_attention": ("bhsd", 0, 5, False),
    "aten::_scaled_dot_product_flash_attention": ("bhsd", 0, 4, False),
    "aten::_scaled_dot_product_efficient_attention": ("bhsd", 0, 6, False),
    "aten::_scaled_dot_product_cudnn_attention": ("bhsd", 0, 6, False),
    "aten::_flash_attention_forward": ("bshd", 0, 8, False),
    "aten::_scaled_dot_product_flash_attention_backward": ("bhsd", 1, 11, True),
    "aten::_scaled_dot_product_efficient_attention_backward": ("bhsd", 1, 11, True),
    "aten::_flash_attention_backward": ("bshd", 1, 11, True),
}


def prod(xs):
    p = 1
    for x in xs:
        p *= x
    return p


def gemm_flops(name, dims, types):
    if name in ("aten::mm", "aten::_scaled_mm"):
        (m, k), (_, n) = dims[0], dims[1]
        bias = name == "aten::_scaled_mm" and len(dims) > 4 and len(dims[4]) > 0
        return 2 * m * n * k + (m * n if bias else 0)
    if name == "aten::addmm":
        (m, k), (_, n) = dims[1], dims[2]
        return 2 * m * n * k + m * n
    if name == "aten::bmm":
        (b, m, k), (_, _, n) = dims[0], dims[1]
        return 2 * b * m * n * k
    if name == "aten::baddbmm":
        (b, m, k), (_, _, n) = dims[1], dims[2]
        return 2 * b * m * n * k + b * m * n
    if name == "aten::linear":
        x, w = dims[0], dims[1]
        m, n, k = prod(x[:-1]), w[0], x[-1]
        has_bias = len(dims) > 2 and len(dims[2]) > 0 and types[2] not in ("", "Scalar")
        return 2 * m * n * k + (m * n if has_bias else 0)
    if name == "aten::matmul":
        a, b = dims[0], dims[1]
        a2 = a if len(a) >= 2 else [1] + a
        b2 = b if len(b) >= 2 else b + [1]
        ba, bb = a2[:-2], b2[:-2]
        nb = max(len(ba), len(bb))
        ba, bb = [1] * (nb - len(ba)) + ba, [1] * (nb - len(bb)) + bb
        return 2 * prod(max(x, y) for x, y in zip(ba, bb)) * a2[-2] * b2[-1] * a2[-1]
    raise KeyError(name)


def attn_flops(name, dims, conc):
    layout, qi, ci, bwd = ATTN[name]
    q, k, v = dims[qi], dims[qi + 1], dims[qi + 2]
    if layout == "bshd":
        bh, sq, sk = q[0] * q[2], q[1], k[1]
    else:
        bh, sq, sk = prod(q[:-2]), q[-2], k[-2]
    d, dv = q[-1], v[-1]
    f = 2 * bh * sq * sk * ((3 * d + 2 * dv) if bwd else (d + dv))
    return f // 2 if conc[ci] == "True" else f


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def ns(v):
    return int(Decimal(str(v)) * 1000)


def independent(path):
    """{(op, flops of one call): calls} for the GEMM/attention operators that launched GPU work."""
    ev = load(path)
    launches, gpu, ops = {}, [], defaultdict(list)
    for e in ev:
        cat, a = e.get("cat"), e.get("args") or {}
        if e.get("ph") != "X":
            continue
        if cat in ("cuda_runtime", "cuda_driver") and "correlation" in a:
            launches[a["correlation"]] = e
        elif cat in ("kernel", "gpu_memcpy", "gpu_memset") and "correlation" in a:
            gpu.append(e)
        elif cat == "cpu_op" and (e["name"] in GEMM or e["name"] in ATTN):
            ops[(e["pid"], e["tid"])].append(e)
    counted = set()
    for k in gpu:
        la = launches.get(k["args"]["correlation"])
        if not la:
            continue
        t0, t1 = ns(la["ts"]), ns(la["ts"]) + ns(la["dur"])
        enc = [o for o in ops[(la["pid"], la["tid"])] if ns(o["ts"]) <= t0 and t1 <= ns(o["ts"]) + ns(o["dur"])]
        if enc:
            # the outermost: the longest among those that enclose the launch
            counted.add(id(max(enc, key=lambda o: (ns(o["dur"]), -ns(o["ts"])))))
    calls = defaultdict(int)
    for lst in ops.values():
        for o in lst:
            if id(o) not in counted or "Input Dims" not in o["args"]:
                continue
            a = o["args"]
            n = o["name"]
            f = gemm_flops(n, a["Input Dims"], a["Input type"]) if n in GEMM else \
                attn_flops(n, a["Input Dims"], a["Concrete Inputs"])
            calls[(n, f)] += 1
    return dict(calls)


class IndependentCount(unittest.TestCase):
    def check(self, path):
        want = independent(path)
        self.assertTrue(want, "the trace has GEMMs or attention with shapes")
        got, _ = tables("efficiency", path, "--window", ":", "--quiet")
        have = defaultdict(int)
        for r in got["op_roofline"]:
            if r["op"] not in GEMM and r["op"] not in ATTN:
                continue
            self.assertIsNotNone(r["gflops"], r)
            f = round(r["gflops"] * 1e9 / r["calls"])
            # to the last digit: the same double as one call's exact count times the calls, over 1e9
            self.assertEqual(r["gflops"], f * r["calls"] / 1e9, r)
            have[(r["op"], f)] += r["calls"]
        self.assertEqual(dict(have), want)
        return got

    def test_h100_bert(self):
        got = self.check(os.path.join(REAL, "h100_bert", "gaunernst_bert-small-uncased__1016001.json.gz"))
        dev = got["device"]
        self.assertEqual({r["model"] for r in dev}, {"H100 SXM5"})
        self.assertEqual([r["peak_tflops"] for r in dev if r["dtype"] == "bf16"], [989.5])

    def test_mi300_falconsai(self):
        got = self.check(os.path.join(REAL, "mi300_falconsai", "Falconsai_nsfw_image_detection__1016002.json.gz"))
        self.assertEqual({r["model"] for r in got["device"]}, {"MI300X"})
        sdpa = [r for r in got["op_roofline"] if r["op"] == "aten::scaled_dot_product_attention"]
        # 4 x 12 heads, 197 x 197 scores, d = 64, not causal: 2 * B*H * S * S * (64 + 64) per call
        self.assertEqual(sdpa[0]["gflops"], 2 * 48 * 197 * 197 * 128 * sdpa[0]["calls"] / 1e9)

    def test_b200_eager(self):
        got = self.check(os.path.join(REAL, "b200_eager", "eager_trace.json.gz"))
        self.assertEqual({r["model"] for r in got["device"]}, {"B200"})

    def test_vllm_graph(self):
        # the ROCm device has an empty name: found by gfx942 (9.4), 304 CUs, 192 GB
        got = self.check(os.path.join(REAL, "vllm_decode_graph", "graph_execution.json.gz"))
        self.assertEqual({r["model"] for r in got["device"]}, {"MI300X"})
        # graph replays launch outside any operator
        self.assertIn("(no operator)", [r["op"] for r in got["op_roofline"]])


# ---- hand-made traces ----

BF, F32, F8 = "c10::BFloat16", "float", "c10::Float8_e4m3fn"
H100 = {"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0, "numSms": 132,
        "totalGlobalMem": 85018279936}


def op(name, dims=None, types=None, conc=None, strides=None, kernel_us=10, children=(), kernel=None):
    return {"name": name, "dims": dims, "types": types, "conc": conc, "strides": strides, "k": kernel_us,
            "children": list(children), "kernel": kernel}


def write_trace(path, ops, device=H100, rank=0, outside_kernel_us=0):
    ev, corr = [], [0]
    t = [1000]

    def emit(o, ts, span):
        args = {}
        if o["dims"] is not None:
            args["Input Dims"] = o["dims"]
            args["Input type"] = o["types"]
            if o["strides"] is not None:
                args["Input Strides"] = o["strides"]
            if o["conc"] is not None:
                args["Concrete Inputs"] = o["conc"]
        ev.append({"ph": "X", "cat": "cpu_op", "name": o["name"], "pid": 1, "tid": 1, "ts": ts, "dur": span,
                   "args": args})
        if o["children"]:
            step = span // (len(o["children"]) + 1)
            for i, c in enumerate(o["children"]):
                emit(c, ts + 1 + i * step, step - 2)
        else:
            corr[0] += 1
            ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                       "ts": ts + 1, "dur": 2, "args": {"correlation": corr[0]}})
            ev.append({"ph": "X", "cat": "kernel", "name": o.get("kernel") or "k_" + o["name"].split("::")[-1], "pid": 0, "tid": 7,
                       "ts": t[0] + 5000, "dur": o["k"], "args": {"correlation": corr[0], "device": 0,
                                                                "stream": 7}})
            t[0] += o["k"] + 5

    for o in ops:
        emit(o, t[0], 100)
        t[0] += 200
    if outside_kernel_us:
        corr[0] += 1
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": t[0], "dur": 2, "args": {"correlation": corr[0]}})
        ev.append({"ph": "X", "cat": "kernel", "name": "loose", "pid": 0, "tid": 7, "ts": t[0] + 5000,
                   "dur": outside_kernel_us, "args": {"correlation": corr[0], "device": 0, "stream": 7}})
    doc = {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 1}, "traceEvents": ev}
    if device is not None:
        doc["deviceProperties"] = [device]
    with open(path, "w") as f:
        json.dump(doc, f)


class Hand(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def rows(self, ops, *args, **kw):
        p = os.path.join(self.dir, "t.json")
        write_trace(p, ops, **kw)
        got, err = tables("efficiency", p, *args)
        self.err = err
        self.device = got["device"]
        return got["op_roofline"]

    def one(self, o, *args, **kw):
        rows = self.rows([o], *args, **kw)
        self.assertEqual(len(rows), 1, rows)
        return rows[0]

    def assertFigures(self, r, flops, nbytes, us=10):
        self.assertEqual(r["gflops"], None if flops is None else flops / 1e9)
        self.assertEqual(r["gbytes"], nbytes / 1e9)
        self.assertEqual(r["gpu_us"], us)
        if flops is not None:
            self.assertAlmostEqual(r["tflops"], flops / (us * 1e-6) / 1e12, places=9)
            self.assertAlmostEqual(r["intensity"], flops / nbytes, places=9)
        self.assertAlmostEqual(r["tbps"], nbytes / (us * 1e-6) / 1e12, places=9)


class Formulas(Hand):
    def test_addmm_transposed_weight_and_bias(self):
        # bias [N], a [M,K], b [K,N] stored transposed (strides [1, K]): logical dims decide
        M, K, N = 512, 1024, 256
        r = self.one(op("aten::addmm", [[N], [M, K], [K, N], [], []], [BF, BF, BF, "Scalar", "Scalar"],
                        ["", "", "", "1", "1"], [[1], [K, 1], [1, K], [], []]))
        self.assertFigures(r, 2 * M * N * K + M * N, 2 * (N + M * K + K * N + M * N))
        self.assertEqual(r["shape"], "256, 512x1024, 1024x256")
        self.assertEqual(r["dtype"], "bf16")

    def test_mm_bmm_baddbmm(self):
        r = self.one(op("aten::mm", [[64, 32], [32, 16]], [F32, F32]))
        self.assertFigures(r, 2 * 64 * 16 * 32, 4 * (64 * 32 + 32 * 16 + 64 * 16))
        r = self.one(op("aten::bmm", [[8, 64, 32], [8, 32, 16]], [BF, BF]))
        self.assertFigures(r, 2 * 8 * 64 * 16 * 32, 2 * 8 * (64 * 32 + 32 * 16 + 64 * 16))
        r = self.one(op("aten::baddbmm", [[8, 64, 16], [8, 64, 32], [8, 32, 16], [], []],
                        [BF, BF, BF, "Scalar", "Scalar"]))
        self.assertFigures(r, 2 * 8 * 64 * 16 * 32 + 8 * 64 * 16, 2 * 8 * (64 * 16 + 64 * 32 + 32 * 16 + 64 * 16))

    def test_matmul_broadcast_batch(self):
        # [2, 1, 64, 32] @ [3, 32, 16]: batch 2 x 3
        r = self.one(op("aten::matmul", [[2, 1, 64, 32], [3, 32, 16]], [BF, BF]))
        self.assertFigures(r, 2 * 6 * 64 * 16 * 32, 2 * (2 * 64 * 32 + 3 * 32 * 16 + 6 * 64 * 16))

    def test_broadcast_operand_counted_once(self):
        # an expanded operand (stride 0 on the batch) is read once
        r = self.one(op("aten::bmm", [[4, 64, 32], [4, 32, 16]], [BF, BF], None,
                        [[2048, 32, 1], [0, 16, 1]]))
        self.assertEqual(r["gbytes"], 2 * (4 * 64 * 32 + 32 * 16 + 4 * 64 * 16) / 1e9)

    def test_linear_3d_with_and_without_bias(self):
        r = self.one(op("aten::linear", [[2, 100, 64], [128, 64], [128]], [BF, BF, BF]))
        self.assertFigures(r, 2 * 200 * 128 * 64 + 200 * 128, 2 * (200 * 64 + 128 * 64 + 128 + 200 * 128))
        r = self.one(op("aten::linear", [[2, 100, 64], [128, 64], []], [BF, BF, ""]))
        self.assertFigures(r, 2 * 200 * 128 * 64, 2 * (200 * 64 + 128 * 64 + 200 * 128))

    def test_nested_linear_owns_its_addmm(self):
        inner = op("aten::addmm", [[128], [200, 64], [64, 128], [], []], [BF, BF, BF, "Scalar", "Scalar"])
        rows = self.rows([op("aten::linear", [[2, 100, 64], [128, 64], [128]], [BF, BF, BF], children=[inner])])
        self.assertEqual([r["op"] for r in rows], ["aten::linear"])
        self.assertEqual(rows[0]["calls"], 1)

    def test_scaled_mm_fp8(self):
        M, K, N = 256, 512, 128
        r = self.one(op("aten::_scaled_mm", [[M, K], [K, N], [], [], [], [], [], []],
                        [F8, F8, F32, F32, "", "", "Scalar", "Scalar"], ["", "", "", "", "", "", "15", "False"]))
        # a 0-dim scale is one float each; out_dtype 15 is bf16
        self.assertFigures(r, 2 * M * N * K, M * K + K * N + 4 + 4 + 2 * M * N)
        self.assertEqual(r["bound"], "compute" if 2 * M * N * K / (M * K + K * N + 8 + 2 * M * N) >= 1979 / 3.35
                         else "memory")
        self.assertIn("out bf16", r["shape"])

    def test_conv2d_stride_padding_groups(self):
        # N=2, Cin=8, 32x32, Cout=16, groups 2 (weight [16, 4, 3, 3]), stride 2, padding 1 -> 16x16 out
        r = self.one(op("aten::conv2d", [[2, 8, 32, 32], [16, 4, 3, 3], [16], [], [], [], []],
                        [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", "Scalar"],
                        ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "2"]))
        out = 2 * 16 * 16 * 16
        self.assertFigures(r, 2 * out * 4 * 9 + out, 2 * (2 * 8 * 32 * 32 + 16 * 4 * 9 + 16 + out))
        self.assertEqual(r["shape"], "2x8x32x32, 16x4x3x3, 16; stride 2 pad 1 groups 2")

    def test_conv_transposed(self):
        # aten::convolution, transposed: weight [Cin=8, Cout=4, 4, 4], stride 2, pad 1 -> out (16-1)*2-2+3+1 = 32
        r = self.one(op("aten::convolution", [[1, 8, 16, 16], [8, 4, 4, 4], [], [], [], [], [], [], []],
                        [BF, BF, "", "ScalarList", "ScalarList", "ScalarList", "Scalar", "ScalarList", "Scalar"],
                        ["", "", "", "[2, 2]", "[1, 1]", "[1, 1]", "True", "[0, 0]", "1"]))
        macs = 1 * 8 * 16 * 16 * 4 * 16
        self.assertFigures(r, 2 * macs, 2 * (8 * 16 * 16 + 8 * 4 * 16 + 4 * 32 * 32))

    def test_conv_backward_is_twice_forward(self):
        # grad_output [2, 16, 16, 16] gives the output dims; input and weight grads: 2 x forward
        r = self.one(op("aten::convolution_backward",
                        [[2, 16, 16, 16], [2, 8, 32, 32], [16, 8, 3, 3], [], [], [], [], [], [], [], []],
                        [BF, BF, BF, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar",
                         "ScalarList", "Scalar", "ScalarList"],
                        ["", "", "", "[16]", "[2, 2]", "[1, 1]", "[1, 1]", "False", "[0, 0]", "1",
                         "[True, True, False]"]))
        fwd = 2 * (2 * 16 * 16 * 16) * 8 * 9
        reads = 2 * (2 * 16 * 16 * 16 + 2 * 8 * 32 * 32 + 16 * 8 * 9)
        self.assertFigures(r, 2 * fwd, reads + 2 * (2 * 8 * 32 * 32) + 2 * (16 * 8 * 9))

    def test_sdpa_causal_halves(self):
        q = [2, 8, 128, 64]
        args = lambda causal: op("aten::scaled_dot_product_attention", [q, q, q, [], [], [], [], []],
                                 [BF, BF, BF, "", "Scalar", "Scalar", "", "Scalar"],
                                 ["", "", "", "", "0.", causal, "", "False"])
        full = 2 * 16 * 128 * 128 * (64 + 64)
        r = self.one(args("False"))
        self.assertFigures(r, full, 2 * 4 * prod(q))
        r = self.one(args("True"))
        self.assertFigures(r, full // 2, 2 * 4 * prod(q))
        self.assertIn("causal", r["shape"])

    def test_flash_forward_bshd_and_backward(self):
        q = [2, 128, 8, 64]  # [B, S, H, D]
        r = self.one(op("aten::_flash_attention_forward", [q, q, q] + [[]] * 8,
                        [BF] * 3 + [""] * 2 + ["Scalar"] * 6, ["", "", "", "", "", "128", "128", "0.", "True",
                                                               "False", "0.125"]))
        self.assertEqual(r["gflops"], 2 * 16 * 128 * 128 * 128 // 2 / 1e9)
        qb = [2, 8, 128, 64]  # backward, [B, H, S, D]: grad_out, q, k, v, out, logsumexp
        r = self.one(op("aten::_scaled_dot_product_flash_attention_backward",
                        [qb, qb, qb, qb, qb, [2, 8, 128]] + [[]] * 9, [BF] * 5 + [F32] + ["Scalar"] * 9,
                        [""] * 6 + ["", "", "128", "128", "0.", "False", "", "", "0.125"]))
        # 2.5 x the forward: 5 GEMMs of 2 * BH * S * S * D
        self.assertEqual(r["gflops"], 5 * 2 * 16 * 128 * 128 * 64 / 1e9)
        self.assertEqual(r["gbytes"], (5 * 2 * prod(qb) + 4 * 2 * 8 * 128 + 3 * 2 * prod(qb)) / 1e9)

    def test_norms_softmax(self):
        x = [4, 100, 256]
        n = prod(x)
        r = self.one(op("aten::layer_norm", [x, [], [256], [256], [], []],
                        [BF, "ScalarList", BF, BF, "Scalar", "Scalar"], ["", "[256]", "", "", "1e-05", "True"]))
        self.assertFigures(r, 5 * n, 2 * (n + 256 + 256 + n))
        r = self.one(op("aten::rms_norm", [x, [], [], []], [BF, "ScalarList", "", ""], ["", "[256]", "", ""]))
        self.assertFigures(r, 3 * n, 2 * (n + n))
        r = self.one(op("aten::_softmax", [x, [], []], [BF, "Scalar", "Scalar"], ["", "-1", "True"]))
        self.assertFigures(r, 5 * n, 2 * n + 4 * n)  # half_to_float: a float output

    def test_bytes_only(self):
        r = self.one(op("aten::add", [[64, 32], [32], []], [BF, BF, "Scalar"], ["", "", "1"]))
        self.assertFigures(r, None, 2 * (64 * 32 + 32 + 64 * 32))
        self.assertEqual(r["bound"], "memory")
        self.assertAlmostEqual(r["peak_pct"], 100 * r["tbps"] / 3.35, places=9)
        r = self.one(op("aten::mul_", [[64, 32], []], [BF, "double"], ["", ""]))  # wrapped number: no promotion
        self.assertFigures(r, None, 2 * 64 * 32 + 8 + 2 * 64 * 32)
        r = self.one(op("aten::copy_", [[64, 32], [64, 32], []], [BF, F32, "Scalar"], ["", "", "False"]))
        self.assertFigures(r, None, 2 * 64 * 32 + 4 * 64 * 32)
        r = self.one(op("aten::sum", [[64, 32], [], [], []], [F32, "ScalarList", "Scalar", ""],
                        ["", "[1]", "False", ""]))
        self.assertFigures(r, None, 4 * 64 * 32 + 4 * 64)

    def test_two_roofs(self):
        # layer norm, bf16 [4, 100, 256] on H100 SXM: the vector units' roof, bf16 133.8 TFLOP/s (non-tensor)
        x = [4, 100, 256]
        n = prod(x)
        ln = op("aten::layer_norm", [x, [], [256], [256], [], []], [BF, "ScalarList", BF, BF, "Scalar", "Scalar"],
                ["", "[256]", "", "", "1e-05", "True"])
        r = self.one(ln)
        fl, by = 5 * n, 2 * (n + 256 + 256 + n)
        self.assertEqual((r["roof"], r["bound"]), ("vector bf16", "memory"))
        # intensity 512000 / 410624 is below the ridge 133.8 / 3.35: the memory roof, intensity x 3.35 TB/s
        self.assertAlmostEqual(r["peak_pct"], 100 * r["tflops"] / (fl / by * 3.35), places=9)
        vec = {d["dtype"]: d["peak_vector_tflops"] for d in self.device}
        self.assertEqual((vec["bf16"], vec["fp32"], vec["fp64"], vec["tf32"]), (133.8, 66.9, 33.5, 66.9))
        # a vector roof of 0.01 TFLOP/s makes it compute-bound on that roof: 10 us for 512,000 FLOPs is
        # 0.0512 TFLOP/s, 512% of 0.01
        r = self.one(ln, "--peak-vector-tflops", "0.01")
        self.assertEqual((r["roof"], r["bound"]), ("vector bf16", "compute"))
        self.assertAlmostEqual(r["peak_pct"], 100 * fl / 10e-6 / 1e12 / 0.01, places=9)
        # a GEMM stays on the tensor roof: bf16 989.5
        r = self.one(op("aten::mm", [[1024, 1024], [1024, 1024]], [BF, BF]))
        self.assertEqual((r["roof"], r["bound"]), ("tensor bf16", "compute"))
        self.assertAlmostEqual(r["peak_pct"], 100 * r["tflops"] / 989.5, places=9)
        # bytes-only operators: the memory roof
        self.assertEqual(self.one(op("aten::add_", [[64, 32], [64, 32], []], [BF, BF, "Scalar"]))["roof"], "memory")

    def test_per_call_statistics(self):
        # three calls of one mm (a[64,32] b[32,16]: 65,536 FLOPs) whose kernels take 10, 20 and 40 us
        mm = lambda us: op("aten::mm", [[64, 32], [32, 16]], [BF, BF], kernel_us=us,  # noqa: E731
                           kernel="sm90_xmma_gemm_bf16bf16_bf16f32")
        (r,) = self.rows([mm(10), mm(20), mm(40)])
        self.assertEqual((r["calls"], r["gpu_us"], r["category"]), (3, 70, "gemm"))
        self.assertEqual((r["time_us_median"], r["time_us_min"], r["time_us_max"]), (20, 10, 40))
        self.assertAlmostEqual(r["time_us_std"], statistics.stdev([10, 20, 40]), places=9)
        tf = [65536 / (us * 1e-6) / 1e12 for us in (10, 20, 40)]  # 0.0065536, 0.0032768, 0.0016384
        self.assertAlmostEqual(r["tflops_median"], tf[1], places=15)
        self.assertAlmostEqual(r["tflops_min"], tf[2], places=15)
        self.assertAlmostEqual(r["tflops_max"], tf[0], places=15)
        self.assertAlmostEqual(r["tflops_std"], statistics.stdev(tf), places=15)
        # one call: no standard deviation; bytes-only operators: no TFLOP/s statistics
        r = self.one(op("aten::add_", [[64, 32], [64, 32], []], [BF, BF, "Scalar"], kernel_us=7))
        self.assertEqual((r["time_us_median"], r["time_us_std"], r["tflops_median"]), (7, None, None))
        self.assertEqual(r["category"], "other")

    def test_grouped_mm(self):
        # MoE experts: a[256, 64] rows split by offs among b[4, 64, 128]: 2 x 256 x 128 x 64 FLOPs; bytes a, b,
        # offs (4 int32), the [256, 128] bf16 output
        r = self.one(op("aten::_grouped_mm", [[256, 64], [4, 64, 128], [4], [], []], [BF, BF, "int", "", ""]))
        self.assertFigures(r, 2 * 256 * 128 * 64, 256 * 64 * 2 + 4 * 64 * 128 * 2 + 16 + 256 * 128 * 2)
        self.assertEqual(r["roof"], "tensor bf16")

    def test_flash_attn_package(self):
        # flash_attn::_flash_attn_forward(q, k, v, dropout_p, softmax_scale, causal) [B=2, S=128, H=8, D=64]
        q = [2, 128, 8, 64]
        r = self.one(op("flash_attn::_flash_attn_forward", [q, q, q, [], [], []], [BF, BF, BF, "Scalar", "Scalar", "Scalar"],
                        ["", "", "", "0.0", "0.125", "True"]))
        # 2 x B x H x Sq x Sk x (D + Dv), halved for causal; q, k, v read, [B, H, Sq, Dv] written
        self.assertFigures(r, 2 * 2 * 8 * 128 * 128 * 128 // 2, 3 * 2 * 128 * 8 * 64 * 2 + 2 * 8 * 128 * 64 * 2)
        self.assertIn("causal", r["shape"])

    def test_flash_attention_3_and_aiter(self):
        # FlashAttention-3's flash_attn_3::fwd: q, k, v [B=2, S=128, H=8, D=64] first, is_causal the 25th
        # argument; AITER's mha_fwd (causal 6th) and wrapper_fmha_v3_fwd (q, k, v after a first argument,
        # causal 7th); every one 2 x B x H x Sq x Sk x (D + Dv), halved when causal, q, k, v read and the
        # [B, H, Sq, Dv] output written
        q = [2, 128, 8, 64]
        fwd = 2 * 2 * 8 * 128 * 128 * 128
        io = 3 * 2 * 128 * 8 * 64 * 2 + 2 * 8 * 128 * 64 * 2
        conc = [""] * 24 + ["True"]
        r = self.one(op("flash_attn_3::fwd", [q, q, q] + [[]] * 22, [BF] * 3 + [""] * 22, conc))
        self.assertFigures(r, fwd // 2, io)
        r = self.one(op("aiter::mha_fwd", [q, q, q, [], [], []], [BF] * 3 + ["Scalar"] * 3,
                        ["", "", "", "0.0", "0.125", "False"]))
        self.assertFigures(r, fwd, io)
        r = self.one(op("aiter::wrapper_fmha_v3_fwd", [[], q, q, q, [], [], []], [""] + [BF] * 3 + ["Scalar"] * 3,
                        ["", "", "", "", "0.0", "0.125", "True"]))
        self.assertFigures(r, fwd // 2, io)
        # AITER's _flash_attn_backward: q, k, v first, causal the 13th: 2.5 x the forward's FLOPs
        r = self.one(op("aiter::_flash_attn_backward", [q, q, q] + [[]] * 10, [BF] * 3 + [""] * 10,
                        [""] * 12 + ["False"]))
        self.assertEqual(r["gflops"], 5 * 2 * 16 * 128 * 128 * 64 / 1e9)
        # mha_bwd(dout, q, k, v, out, softmax_lse, dropout_p, softmax_scale, is_causal)
        r = self.one(op("aiter::mha_bwd", [q, q, q, q, q, [2, 8, 128], [], [], []], [BF] * 5 + [F32] + ["Scalar"] * 3,
                        [""] * 8 + ["True"]))
        self.assertEqual(r["gflops"], 5 * 2 * 16 * 128 * 128 * 64 // 2 / 1e9)

    def test_attention_whose_lengths_are_not_recorded_says_which(self):
        # a variable-length batch: q [total_tokens, H, D]; the sequences' lengths are cu_seqlens' values
        t = [300, 8, 64]
        r = self.one(op("flash_attn::_flash_attn_varlen_forward", [t, t, t, [3], [3]] + [[]] * 5,
                        [BF] * 3 + ["int", "int"] + ["Scalar"] * 5, [""] * 9 + ["True"]))
        self.assertIsNone(r["gflops"])
        self.assertIn("sequence lengths not recorded", r["note"])
        # vLLM's paged attention: the KV cache's lengths live in the attention metadata
        r = self.one(op("vllm::unified_attention_with_output", [[888, 8, 64], [888, 1, 64], [888, 1, 64],
                                                                 [888, 8, 64], [], [], []],
                        [BF] * 4 + ["", "", ""], [""] * 7))
        self.assertIsNone(r["gflops"])
        self.assertIn("KV cache", r["note"])

    def test_moe_dispatch_combine(self):
        # MoE dispatch / combine: tokens [T=512, hidden=1024] bf16 sent; no FLOPs, the payload's bytes
        for name in ("MoEDispatch", "MoECombine"):
            r = self.one(op(name, [[512, 1024], [512, 2]], [BF, "long int"]))
            self.assertFigures(r, None, 512 * 1024 * 2)
        r = self.one(op("MoEDispatch", [[512], [512, 2]], [BF, "long int"]))
        self.assertIn("2-D", r["note"])

    def test_scatter_and_index_add(self):
        # scatter_(self [1000, 64] fp32, dim 0, index [200, 64] int64, src [200, 64] fp32): index and src read,
        # one element of self written per index element
        ix = [200, 64]
        r = self.one(op("aten::scatter_", [[1000, 64], [], ix, ix], [F32, "Scalar", "long int", F32], ["", "0", "", ""]))
        self.assertFigures(r, None, 200 * 64 * 8 + 200 * 64 * 4 + 200 * 64 * 4)
        # scatter_add (out of place): self copied (read and written), the reached elements read and written
        r = self.one(op("aten::scatter_add", [[1000, 64], [], ix, ix], [F32, "Scalar", "long int", F32], ["", "0", "", ""]))
        self.assertFigures(r, None, 200 * 64 * 8 + 200 * 64 * 4 + 2 * 200 * 64 * 4 + 2 * 1000 * 64 * 4)
        # index_add_(self [1000, 64] bf16, dim 0, index [300] int64, source [300, 64]): one row per index
        r = self.one(op("aten::index_add_", [[1000, 64], [], [300], [300, 64]], [BF, "Scalar", "long int", BF],
                        ["", "0", "", ""]))
        self.assertFigures(r, None, 300 * 8 + 300 * 64 * 2 + 2 * 300 * 64 * 2)
        # advanced indexing: the indices are a tensor list
        r = self.one(op("aten::index", [[1000, 64], [[300]]], [BF, "TensorList"]))
        self.assertIn("tensor lists", r["note"])

    def test_pool_backward_and_losses(self):
        # max_pool2d_with_indices_backward(grad_output [8,64,28,28], self [8,64,56,56], kernel, stride,
        # padding, dilation, ceil_mode, indices [8,64,28,28] int64): grad_output and indices read, grad_input
        # written like self (counted as self's bytes)
        go, x = [8, 64, 28, 28], [8, 64, 56, 56]
        r = self.one(op("aten::max_pool2d_with_indices_backward", [go, x, [], [], [], [], [], go],
                        [BF, BF, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar", "long int"],
                        ["", "", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False", ""]))
        self.assertFigures(r, None, prod(go) * 2 + prod(x) * 2 + prod(go) * 8)
        # mse_loss(self [32, 10] fp32, target, reduction 1 = mean): both read, one element written
        r = self.one(op("aten::mse_loss", [[32, 10], [32, 10], []], [F32, F32, "Scalar"], ["", "", "1"]))
        self.assertFigures(r, None, 2 * 320 * 4 + 4)
        r = self.one(op("aten::mse_loss", [[32, 10], [32, 10], []], [F32, F32, "Scalar"], ["", "", "0"]))
        self.assertFigures(r, None, 3 * 320 * 4)
        # mse_loss_backward(grad_output [] , self, target, reduction): grad_input written like self
        r = self.one(op("aten::mse_loss_backward", [[], [32, 10], [32, 10], []], [F32, F32, F32, "Scalar"],
                        ["", "", "", "1"]))
        self.assertFigures(r, None, 4 + 2 * 320 * 4)

    def test_norm_backward(self):
        # native_layer_norm_backward(grad_out, input [4,100,256] bf16, normalized_shape, mean, rstd [4,100,1]
        # fp32, weight, bias [256] bf16, output_mask): all read; grad_input, grad_weight, grad_bias written
        x, st = [4, 100, 256], [4, 100, 1]
        r = self.one(op("aten::native_layer_norm_backward", [x, x, [], st, st, [256], [256], []],
                        [BF, BF, "ScalarList", F32, F32, BF, BF, "ScalarList"]))
        read = 2 * 102400 * 2 + 4 * 400 * 2 + 2 * 256 * 2
        self.assertFigures(r, None, read + 2 * 102400 + 2 * 2 * 256)
        self.assertEqual(r["roof"], "memory")

    def test_pooling(self):
        x = [8, 64, 56, 56]
        # max_pool2d k3 s2 p1: out (56 + 2 - 2 - 1) // 2 + 1 = 28; one compare per window element
        r = self.one(op("aten::max_pool2d", [x, [], [], [], [], []], [F32, "ScalarList", "ScalarList", "ScalarList",
                                                                      "ScalarList", "Scalar"],
                        ["", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"]))
        self.assertFigures(r, 8 * 64 * 28 * 28 * 9, 4 * 8 * 64 * 56 * 56 + 4 * 8 * 64 * 28 * 28)
        self.assertEqual(r["roof"], "vector fp32")
        # with indices: an int64 index per output element
        r = self.one(op("aten::max_pool2d_with_indices", [x, [], [], [], [], []],
                        [F32, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
                        ["", "[3, 3]", "[2, 2]", "[1, 1]", "[1, 1]", "False"]))
        self.assertFigures(r, 8 * 64 * 28 * 28 * 9, 4 * 8 * 64 * 56 * 56 + 12 * 8 * 64 * 28 * 28)
        # avg_pool2d k2 (stride [] is the kernel): 28 x 28, 4 adds each
        r = self.one(op("aten::avg_pool2d", [x, [], [], [], [], [], []],
                        [F32, "ScalarList", "ScalarList", "ScalarList", "Scalar", "Scalar", "Scalar"],
                        ["", "[2, 2]", "[]", "[0, 0]", "False", "True", ""]))
        self.assertFigures(r, 8 * 64 * 28 * 28 * 4, 4 * 8 * 64 * 56 * 56 + 4 * 8 * 64 * 28 * 28)
        # adaptive_avg_pool2d [8, 512, 7, 7] -> [1, 1]: every input element added once
        r = self.one(op("aten::adaptive_avg_pool2d", [[8, 512, 7, 7], []], [F32, "ScalarList"], ["", "[1, 1]"]))
        self.assertFigures(r, 8 * 512 * 49, 4 * 8 * 512 * 49 + 4 * 8 * 512)
        # ceil_mode: (6 - 3 + 1) / 2 rounded up + 1 = 3, not 2
        r = self.one(op("aten::max_pool2d", [[1, 1, 6, 6], [], [], [], [], []],
                        [F32, "ScalarList", "ScalarList", "ScalarList", "ScalarList", "Scalar"],
                        ["", "[3, 3]", "[2, 2]", "[0, 0]", "[1, 1]", "True"]))
        self.assertFigures(r, 3 * 3 * 9, 4 * 36 + 4 * 9)

    def test_upsample_gather_index_select(self):
        r = self.one(op("aten::upsample_nearest2d", [[1, 3, 32, 32], [], []], [F32, "ScalarList", "ScalarList"],
                        ["", "[64, 64]", ""]))
        self.assertFigures(r, None, 4 * 3 * 32 * 32 + 4 * 3 * 64 * 64)
        # gather(self [1000, 16] fp32, dim 1, index [1000, 4] int64): the index read, 4000 elements read and
        # written
        r = self.one(op("aten::gather", [[1000, 16], [], [1000, 4], []], [F32, "Scalar", "long int", "Scalar"],
                        ["", "1", "", "False"]))
        self.assertFigures(r, None, 8 * 4000 + 2 * 4 * 4000)
        # index_select(self [1000, 16], dim 0, index [100]): a [100, 16] output
        r = self.one(op("aten::index_select", [[1000, 16], [], [100]], [F32, "Scalar", "long int"], ["", "0", ""]))
        self.assertFigures(r, None, 8 * 100 + 2 * 4 * 1600)

    def test_tensor_lists_say_why(self):
        for name in ("aten::cat", "aten::_foreach_add_"):
            r = self.one(op(name, [[[4, 4], [4, 4]], []], ["TensorList", "Scalar"], ["", "0"]))
            self.assertEqual(r["gflops"], None)
            self.assertIn("tensor lists", r["note"])

    def test_out_argument_counted_once(self):
        # aten::mul(a, b, out=c), fp32 [64, 32] each: a and b read, c written once: 3 x 8192 B, not 4
        r = self.one(op("aten::mul", [[64, 32], [64, 32], [64, 32]], [F32, F32, F32]))
        self.assertFigures(r, None, 3 * 4 * 64 * 32)
        self.assertIn("out=", r["shape"])
        # aten::add(a, b, alpha=1, out=c), bf16: the same with alpha
        r = self.one(op("aten::add", [[64, 32], [64, 32], [], [64, 32]], [BF, BF, "Scalar", BF], ["", "", "1", ""]))
        self.assertFigures(r, None, 3 * 2 * 64 * 32)
        # a plain mul(a, b) with a broadcast b: a and b read, the broadcast output written
        r = self.one(op("aten::mul", [[64, 32], [32]], [F32, F32]))
        self.assertFigures(r, None, 4 * (64 * 32 + 32 + 64 * 32))
        # where(cond, a, b): three tensors of its own, no out=
        r = self.one(op("aten::where", [[64, 32], [64, 32], [64, 32]], ["bool", F32, F32]))
        self.assertFigures(r, None, 64 * 32 + 2 * 4 * 64 * 32 + 4 * 64 * 32)

    def test_compute_bound_percentage(self):
        M = N = K = 4096
        r = self.one(op("aten::mm", [[M, K], [K, N]], [BF, BF], kernel_us=1000))
        flops, nbytes = 2 * M * N * K, 2 * 3 * M * N
        self.assertEqual(r["bound"], "compute")
        self.assertAlmostEqual(r["peak_pct"], 100 * flops / 1e-3 / 1e12 / 989.5, places=9)
        self.assertLess(989.5 / 3.35, flops / nbytes)

    def test_no_shapes_unknown_op_outside(self):
        rows = self.rows([op("aten::mm"), op("aten::nonzero", [[10]], [BF])], outside_kernel_us=7)
        by = {r["op"]: r for r in rows}
        self.assertEqual(by["aten::mm"]["note"], "no shapes recorded (record_shapes)")
        self.assertEqual(by["aten::nonzero"]["note"], "no FLOP formula for this operator")
        self.assertEqual(by["(no operator)"]["note"], "kernels launched outside any operator")
        self.assertEqual(by["(no operator)"]["gpu_us"], 7)
        for r in rows:
            self.assertIsNone(r["gflops"])
            self.assertIsNone(r["peak_pct"])

    def test_missing_concrete_inputs(self):
        r = self.one(op("aten::conv2d", [[2, 8, 32, 32], [16, 8, 3, 3], [], [], [], [], []],
                        [BF, BF, "", "ScalarList", "ScalarList", "ScalarList", "Scalar"]))
        self.assertEqual(r["note"], "convolution arguments not recorded (Concrete Inputs)")
        self.assertIsNone(r["gflops"])


class Devices(Hand):
    MM = op("aten::mm", [[1024, 1024], [1024, 1024]], [BF, BF], kernel_us=100)

    def test_unknown_device_no_percentages(self):
        dev = {"id": 0, "name": "Imaginary GPU 9000", "computeMajor": 42, "computeMinor": 0, "numSms": 7}
        r = self.one(self.MM, device=dev)
        self.assertIsNone(r["peak_pct"])
        self.assertIsNone(r["bound"])
        self.assertIsNotNone(r["tflops"])
        self.assertIn("Imaginary GPU 9000: GPU not in the peak table: no percentages", self.err)
        self.assertEqual({d["model"] for d in self.device}, {"unknown"})

    def test_no_device_properties(self):
        r = self.one(self.MM, device=None)
        self.assertIsNone(r["peak_pct"])
        self.assertIn("no percentages", self.err)

    def test_override(self):
        dev = {"id": 0, "name": "Imaginary GPU 9000"}
        r = self.one(self.MM, "--peak-tflops", "100", "--peak-tbps", "2", device=dev)
        flops, nbytes = 2 * 1024 ** 3, 2 * 3 * 1024 * 1024
        self.assertEqual(r["bound"], "compute")  # intensity 341 > ridge 50
        self.assertAlmostEqual(r["peak_pct"], 100 * flops / 1e-4 / 1e12 / 100, places=9)
        self.assertEqual({d["model"] for d in self.device}, {"user"})
        # on a known GPU, one override replaces only its own figure
        r = self.one(self.MM, "--peak-tbps", "1")
        self.assertEqual({d["peak_tbps"] for d in self.device}, {1})
        self.assertIn(989.5, [d["peak_tflops"] for d in self.device])
        self.assertEqual(run("efficiency", "x", "--peak-tflops", "-1")[0], 2)

    def test_peak_table_names(self):
        cases = {"NVIDIA A100-SXM4-80GB": ("A100 SXM4 80GB", 312), "NVIDIA A100-PCIE-40GB": ("A100 PCIe 40GB", 312),
                 "Tesla V100-SXM2-32GB": ("V100 SXM2", 125), "NVIDIA H100 PCIe": ("H100 PCIe", 756.5),
                 "NVIDIA H200": ("H200 SXM", 989.5), "NVIDIA H800": ("H800 SXM5", 989.5),
                 "NVIDIA B200": ("B200", 2250), "AMD Instinct MI300X VF": ("MI300X", 1307.4),
                 "AMD Instinct MI325X": ("MI325X", 1307.4), "AMD Instinct MI250X / MI250": ("MI250X (one GCD)", 191.5),
                 "AMD Instinct MI210": ("MI210", 181), "NVIDIA GeForce RTX 4090": ("RTX 4090", 165.2),
                 "NVIDIA GeForce RTX 2080 Ti": ("RTX 2080 Ti", 53.8)}
        for name, (model, fp16) in cases.items():
            self.one(self.MM, device={"id": 0, "name": name, "totalGlobalMem": 85899345920})
            self.assertEqual({d["model"] for d in self.device}, {model}, name)
            self.assertEqual([d["peak_tflops"] for d in self.device if d["dtype"] == "fp16"], [fp16], name)


class Ranks(Hand):
    def test_rank_by_rank_equals_whole(self):
        for k in range(3):
            write_trace(os.path.join(self.dir, f"r{k}.json"),
                        [op("aten::mm", [[64 * (k + 1), 32], [32, 16]], [BF, BF]),
                         op("aten::mm", [[64, 32], [32, 16]], [BF, BF], kernel_us=3 + k)], rank=k)
        a = run("efficiency", self.dir, "--format", "csv")
        b = run("efficiency", self.dir, "--format", "csv", env={**os.environ, "HTA_PER_RANK": "0"})
        self.assertEqual(a, b)
        got, _ = tables("efficiency", self.dir)
        mm = [r for r in got["op_roofline"] if r["shape"] == "64x32, 32x16"]
        self.assertEqual(mm[0]["calls"], 2 + 1 + 1)  # rank 0 has the shape twice
        self.assertEqual(got["device"][0]["ranks"], 3)


# the same work named by CUDA's and by ROCm's libraries
KERNELS = {
    "gemm": ("sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_execute_kernel",
             "Cijk_Alik_Bljk_BBS_BH_Bias_HA_S_SAV_UserArgs_MT128x192x64_MI16x16x1"),
    "attention": ("void pytorch_flash::flash_fwd_kernel<Flash_fwd_kernel_traits<64, 128, 128, 4>>(Flash_fwd_params)",
                  "attn_fwd"),
    "convolution": ("void implicit_convolve_sgemm<float, float, 1024, 6, 7, 3, 3, 5, 1, false, true, true>(int)",
                    "igemm_fwd_gtcx3_nhwc_bf16_bx0_ex1_bt128x64x32"),
    "normalization": ("void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>()",
                      "_ZN5aiter24add_rmsnorm_quant_kernelIDF16bDF16bLi256EEEvPT0_"),
    "elementwise": ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>>(int)",
                    "SubTensorOpWithScalar1d"),
    "reduction": ("void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float>>(at::native::ReduceOp<float>)",
                  "void rocprim::detail::reduce_kernel<float>(float*)"),
    "communication": ("ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)",
                      "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16, 16>()"),
}


def kernel_trace(path, names):
    ev = []
    for i, n in enumerate(names):
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1,
                   "ts": 100 + 20 * i, "dur": 2, "args": {"correlation": i + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": n, "pid": 0, "tid": 7, "ts": 1000 + 20 * i, "dur": 10,
                   "args": {"correlation": i + 1, "device": 0, "stream": 7}})
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "traceEvents": ev}, f)


class Categories(unittest.TestCase):
    def setUp(self):
        self.dir = tempfile.mkdtemp()

    def tearDown(self):
        shutil.rmtree(self.dir)

    def test_kernels_column_both_vendors(self):
        p = os.path.join(self.dir, "t.json")
        kernel_trace(p, [n for pair in KERNELS.values() for n in pair])
        got, _ = tables("kernels", p, "--top", "100", "--quiet")
        cat = {r["name"]: r["category"] for r in got["all_kernels"]}
        for want, pair in KERNELS.items():
            for n in pair:
                self.assertEqual(cat[n], want, n)
        # HTA's table, as HTA gives it, under --hta-compat
        got, _ = tables("kernels", p, "--hta-compat", "--quiet")
        self.assertNotIn("category", got["all_kernels"][0])

    def test_diff_by_category(self):
        a, b = os.path.join(self.dir, "cuda.json"), os.path.join(self.dir, "rocm.json")
        kernel_trace(a, [pair[0] for pair in KERNELS.values()])
        kernel_trace(b, [pair[1] for pair in KERNELS.values()] + [KERNELS["gemm"][1]])
        got, _ = tables("diff", a, b, "--by", "category", "--quiet")
        rows = {r["category"]: r for r in got["compare_traces"]}
        self.assertEqual(set(rows), set(KERNELS))
        self.assertEqual(rows["gemm"]["diff_counts"], 1)
        self.assertEqual([r["category"] for r in got["ops_diff"] if r["name"] == "gemm"], ["increased"])
        self.assertEqual({r["category"] for r in got["ops_diff"] if r["name"] != "gemm"}, {"unchanged"})
        self.assertEqual(run("diff", a, b, "--by", "kernel")[0], 2)


class Report(Hand):
    def test_slow_operators_named_with_saving(self):
        # a GEMM at a small share of the H100's bf16 roof, an add near its memory roof
        p = os.path.join(self.dir, "t.json")
        write_trace(p, [op("aten::mm", [[1024, 1024], [1024, 1024]], [BF, BF], kernel_us=400),
                        op("aten::add", [[1 << 20], [1 << 20]], [BF, BF], kernel_us=2)])
        eff, _ = tables("efficiency", p)
        mm = [r for r in eff["op_roofline"] if r["op"] == "aten::mm"][0]
        self.assertLess(mm["peak_pct"], 50)
        html = os.path.join(self.dir, "r.html")
        rep, _ = tables("report", p, "--html", html, "--quiet")
        # the report's op_roofline is efficiency's, row for row
        self.assertEqual(rep["op_roofline"], eff["op_roofline"])
        self.assertEqual(rep["device"], eff["device"])
        obs = [r["finding"] for r in rep["observations"] if r["area"] == "efficiency"]
        self.assertEqual(len(obs), 1)
        save = mm["gpu_us"] * (1 - mm["peak_pct"] / 70)
        self.assertIn("aten::mm [1024x1024, 1024x1024] at %.0f%% of its compute roof (%.1f TFLOP/s, 400 us)"
                      % (mm["peak_pct"], mm["tflops"]), obs[0])
        self.assertIn("would save %.0f us" % save, obs[0])
        self.assertNotIn("aten::add", obs[0])
        for f in rep["findings"]:
            if f["cause"] == "gpu_compute":
                self.assertIn(obs[0], f["evidence"])
        with open(html) as f:
            page = f.read()
        chart = page.split('id="chart-roofline"', 1)[1].split("</svg>", 1)[0]
        self.assertEqual(chart.count("<circle"), 1)  # the add has no FLOPs: not a point
        self.assertIn("989.5 TFLOP/s, 3.35 TB/s", chart)

    def test_no_shapes_no_efficiency_tables(self):
        p = os.path.join(self.dir, "t.json")
        write_trace(p, [op("aten::mm", kernel_us=400)])
        rep, _ = tables("report", p, "--quiet")
        self.assertNotIn("op_roofline", rep)
        self.assertEqual([r for r in rep["observations"] if r["area"] == "efficiency"], [])


class Robust(Hand):
    NAMES = ["aten::mm", "aten::addmm", "aten::bmm", "aten::baddbmm", "aten::matmul", "aten::linear",
             "aten::_scaled_mm", "aten::conv2d", "aten::convolution", "aten::convolution_backward",
             "aten::scaled_dot_product_attention", "aten::_flash_attention_forward",
             "aten::_flash_attention_backward", "aten::layer_norm", "aten::rms_norm", "aten::group_norm",
             "aten::native_group_norm", "aten::batch_norm", "aten::_softmax", "aten::add", "aten::add_",
             "aten::copy_", "aten::fill_", "aten::sum", "aten::linalg_vector_norm", "aten::_grouped_mm",
             "flash_attn::_flash_attn_forward", "flash_attn::_flash_attn_backward",
             "aten::native_layer_norm_backward", "aten::native_batch_norm_backward", "aten::max_pool2d",
             "aten::max_pool2d_with_indices", "aten::avg_pool2d", "aten::adaptive_avg_pool2d",
             "aten::upsample_bilinear2d", "aten::gather", "aten::index_select", "aten::cat", "aten::_foreach_mul_",
             "flash_attn_3::fwd", "aiter::wrapper_fmha_v3_fwd", "aiter::_flash_attn_backward", "aiter::mha_bwd",
             "flash_attn::_flash_attn_varlen_forward", "vllm::unified_attention_with_output", "MoEDispatch",
             "FlashAttnFunc", "aten::max_pool2d_with_indices_backward", "aten::mse_loss", "aten::mse_loss_backward",
             "aten::scatter_", "aten::scatter_add", "aten::index_add_", "aten::index"]
    ARGS = [([], [], []), ([[-3, 5], [5, 2]], [BF, BF], ["", ""]),
            ([[2 ** 62, 2 ** 62], [2 ** 62, 2 ** 62], [2 ** 62]] * 4, [BF] * 12, [""] * 12),
            ([[[1, 2], [3]], [[4]]], ["TensorList", "TensorList"], ["", ""]),
            ([[1, 2, 3, 4, 5, 6, 7, 8, 9, 10], [1]], [F32, F32], ["[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]", "x"]),
            ([[4, 4, 4, 4]] * 40, [BF] * 40, ["True"] * 40),
            ([[2, 8, 0, 0], [0, 8, 3, 3], [], [], [], [], [], [], [], [], []], [BF] * 11,
             ["", "", "", "[0]", "[0, 0]", "[-5]", "[0]", "[1]", "[9]", "0", "[True]"])]

    def test_odd_shapes_never_crash(self):
        ops = [op(n, d, t, c) for n in self.NAMES for (d, t, c) in self.ARGS]
        rows = self.rows(ops)
        # every kernel is somewhere, and a figure is either there or explained
        self.assertEqual(sum(r["gpu_us"] for r in rows), 10 * len(ops))
        for r in rows:
            self.assertTrue(r["gbytes"] is not None or r["note"], r)


class KernelRoof(Hand):
    """The roof a kernel runs under (issue 39): the dtype its name says its math runs in, not the tensors' (an fp32
    convolution on TF32 tensor cores was held to H100's plain fp32 peak, at 116-369% of it); over 100% of a roof
    is explained in the note."""

    def roof(self, kernel, types=F32):
        return self.one(op("aten::mm", [[4096, 4096], [4096, 4096]], [types, types], kernel=kernel, kernel_us=1000))

    def test_name_picks_the_roof(self):
        for kernel, roof in (("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn_n_tilesize128x128x16_cublas", "tensor tf32"),
                             ("void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nt_align1>", "tensor tf32"),
                             ("sm90_xmma_fprop_implicit_gemm_tf32f32_tf32f32_f32_nhwckrsc_nchw", "tensor tf32"),
                             ("cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x6_tn_align8", "tensor bf16"),
                             ("volta_h884gemm_64x64_ldg8_nn", "tensor fp16"),
                             ("sm90_xmma_gemm_f16f16_f16f32_f32_tn_n", "tensor fp16"),
                             ("ampere_sgemm_128x64_nn", "tensor fp32"),
                             ("nvjet_tst_64x64_64x16_2x1_2cta_v_bz_TNT", "tensor fp32")):
            with self.subTest(kernel=kernel):
                r = self.roof(kernel)
                self.assertEqual(r["roof"], roof)
                self.assertEqual(r["dtype"], "fp32")  # the tensors' dtype stays what was recorded
        # 2 * 4096^3 FLOPs in 1 ms: 137.4 TFLOP/s, 27.8% of H100's TF32 peak (494.5), 205% of its fp32 one (67)
        r = self.roof("sm80_xmma_gemm_tf32f32_tf32f32_f32_nn")
        self.assertAlmostEqual(r["peak_pct"], 100 * 2 * 4096 ** 3 / 1e-3 / 1e12 / 494.5, places=6)
        self.assertIsNone(r["note"])

    def test_over_the_roof_is_explained(self):
        r = self.roof("some_gemm_kernel")  # 205% of the fp32 roof: the name does not say TF32
        self.assertGreater(r["peak_pct"], 100)
        self.assertIn("above the tensor fp32 roof", r["note"])

    def test_every_trace_under_its_roofs_or_explained(self):
        files = sorted(f for f in glob.glob(os.path.join(ROOT, "tests", "data", "**", "*.json*"), recursive=True)
                       if re.search(r"\.json(\.gz)?$", f) and "labels" not in f and "_et." not in f)
        over = 0
        for f in files:
            p = subprocess.run([HTA, "efficiency", f, "--format", "json"], capture_output=True, text=True)
            if p.returncode:
                continue
            for r in (dict(zip(t["columns"], x)) for t in [json.loads(p.stdout)["op_roofline"]] for x in t["data"]):
                if r["peak_pct"] is not None and r["peak_pct"] > 100:
                    over += 1
                    with self.subTest(trace=os.path.relpath(f, ROOT), op=r["op"], shape=r["shape"]):
                        self.assertTrue(r["note"] and r["note"].startswith("above the "), r)
                        self.assertEqual(r["bound"], "memory", r)  # no compute roof passed on a real trace
        print("rows over 100%% of their roof, each explained: %d" % over)


if __name__ == "__main__":
    unittest.main()
