#!/usr/bin/env python3
"""--window (docs/windows.md): a window over one step gives the numbers of a trace holding only that
step, the rows it keeps follow the documented rule exactly, every command takes it on inference traces
(no ProfilerStep), and a window that matches nothing is an error naming it.

Run: HTA=build/hta python3 -m unittest tests/window/test_window.py
"""
import gzip
import json
import os
import subprocess
import sys
import tempfile
import unittest
from collections import Counter
from decimal import Decimal

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")
REAL = os.path.join(ROOT, "tests", "data", "real")
VLLM = os.path.join(REAL, "vllm_decode_graph")
B200 = os.path.join(REAL, "b200_eager")
MI300 = os.path.join(REAL, "mi300_falconsai")
TORCH113 = os.path.join(REAL, "torch113_cpu_legacy")

# categories of work on a GPU stream (Kineto's, and the legacy names)
GPU_CATS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation", "Kernel", "Memcpy", "Memset"}


run = testlib.hta
tables = testlib.tables
rows = testlib.rows


def trace_file(folder):
    return os.path.join(folder, sorted(f for f in os.listdir(folder) if ".json" in f)[0])


def load(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        return json.load(f, parse_float=Decimal)


def encode(x):
    """JSON text with every Decimal written as the exact number it holds (json.dumps has no way to)."""
    if isinstance(x, Decimal):
        return format(x, "f")
    if isinstance(x, dict):
        return "{" + ",".join(json.dumps(k) + ":" + encode(v) for k, v in x.items()) + "}"
    if isinstance(x, list):
        return "[" + ",".join(encode(v) for v in x) + "]"
    return json.dumps(x)


def write_step_only(src, dst, step):
    """Writes dst: the trace src holding only ProfilerStep#step, cut by the rule docs/windows.md states,
    on exact times: a CPU event when it starts inside the step, a GPU event when its launch (the CPU
    event of the same correlation) does, or by its own start without one.  Events that are not complete
    events (metadata, flows) are all kept."""
    d = load(src)
    evs = d["traceEvents"] if isinstance(d, dict) else d
    st = [e for e in evs if e.get("ph") == "X" and e.get("name") == "ProfilerStep#%d" % step
          and e.get("cat") not in GPU_CATS]
    assert len(st) == 1, (src, step)
    a = Decimal(st[0]["ts"])
    e = a + Decimal(st[0].get("dur", 0))
    launch = {}
    for ev in evs:
        corr = (ev.get("args") or {}).get("correlation")
        if ev.get("ph") == "X" and ev.get("cat") not in GPU_CATS and corr is not None:
            launch[corr] = Decimal(ev["ts"])

    def keep(ev):
        if ev.get("ph") != "X":
            return True
        t = Decimal(ev["ts"])
        corr = (ev.get("args") or {}).get("correlation")
        if ev.get("cat") in GPU_CATS and corr in launch:
            t = launch[corr]
        return a <= t < e

    kept = [ev for ev in evs if keep(ev)]
    if isinstance(d, dict):
        d["traceEvents"] = kept
    else:
        d = kept
    with open(dst, "w") as f:
        f.write(encode(d))


# The analyses whose numbers depend only on the rows: a window and a cut trace must agree on all of them.
ANALYSES = [("temporal",), ("idle",), ("kernels",), ("overlap",), ("cpu-ops",), ("annotations", "--cpu"),
            ("ops",), ("launch",)]


class StepWindow(testlib.ClassTempDir):
    """A window over one step = a trace holding only that step (generated and real traces)."""

    @classmethod
    def inputs(cls, tmp):
        cls.gen = os.path.join(tmp, "gen")
        subprocess.run([sys.executable, GEN, "--out", cls.gen, "--ranks", "1", "--steps", "4", "--layers", "2",
                        "--quiet"], check=True)

    def same_as_cut(self, folder, step, cmds=ANALYSES):
        cut = os.path.join(self.tmp, "cut-%s-%d.json" % (os.path.basename(folder), step))
        write_step_only(trace_file(folder), cut, step)
        for cmd in cmds:
            with self.subTest(trace=folder, step=step, cmd=cmd):
                win = tables(*cmd, folder, "--window", "annot:ProfilerStep#%d" % step)
                whole = tables(*cmd, cut)
                # every table, every cell: the window is the cut trace
                self.assertEqual(win, whole)

    def test_generated_middle_step(self):
        self.same_as_cut(self.gen, 11)

    def test_generated_last_step_is_a_window_too(self):
        # the default filter drops the last step (13); a window naming it keeps it
        self.same_as_cut(self.gen, 13, [("temporal",), ("cpu-ops",)])
        t = rows(tables("temporal", self.gen, "--window", "annot:ProfilerStep#13")["temporal_breakdown"])
        self.assertEqual(len(t), 1)
        self.assertGreater(t[0]["kernel_time(us)"], 0)

    def test_real_mi300_step(self):
        # one step in the file: the window drops what runs before and after it
        self.same_as_cut(MI300, 6)
        whole = events(MI300)
        win = events(MI300, "--window", "annot:ProfilerStep#6")
        self.assertEqual((len(whole), len(win)), (4096, 3982))

    def test_real_torch113_steps(self):
        for step in (0, 1, 2):
            self.same_as_cut(TORCH113, step, [("cpu-ops",), ("annotations", "--cpu")])

    def test_cpu_steps_figures(self):
        """cpu-ops' per-step row of the whole trace is the row of the window over that step."""
        for folder, steps in ((self.gen, (10, 11, 12)), (TORCH113, (0, 1))):
            full = {r["step"]: r for r in rows(tables("cpu-ops", folder)["cpu_steps"])}
            for s in steps:
                w = rows(tables("cpu-ops", folder, "--window", "annot:ProfilerStep#%d" % s)["cpu_steps"])
                self.assertEqual(w, [full[s]], (folder, s))

    def test_two_steps_by_glob_and_instance(self):
        """annot:ProfilerStep#1[01] holds steps 10 and 11; annot:ProfilerStep#*#1 the second step (11)."""
        both = rows(tables("cpu-ops", self.gen, "--window", "annot:ProfilerStep#1[01]")["cpu_steps"])
        self.assertEqual([r["step"] for r in both], [10, 11])
        second = tables("cpu-ops", self.gen, "--window", "annot:ProfilerStep#*#1")
        self.assertEqual(second, tables("cpu-ops", self.gen, "--window", "annot:ProfilerStep#11"))


def events(*args):
    return rows(tables("events", *args)["events"])


class Rule(unittest.TestCase):
    """The rows a window keeps, recomputed from `hta events` (every row, exact ns, launch partners)."""

    def check_time_window(self, folder, a_ns, b_ns, spec):
        ev = events(folder)
        idx = {r["index"]: r for r in ev}
        t0 = min(r["ts_ns"] for r in ev)

        def anchor(r):
            if r["stream"] != -1 and r["partner"] is not None:
                return idx[r["partner"]]["ts_ns"]
            return r["ts_ns"]

        want = [r["index"] for r in ev if a_ns <= anchor(r) - t0 < b_ns]
        got = [r["index"] for r in events(folder, "--window", spec)]
        self.assertEqual(got, want)
        return got

    def test_b200_time_window(self):
        got = self.check_time_window(B200, 10_000_000, 25_000_000, "10ms:25ms")
        self.assertEqual(len(got), len(set(got)))
        self.assertGreater(len(got), 100)

    def test_units_and_open_ends(self):
        a = events(B200, "--window", "10000:25000")
        b = events(B200, "--window", "0.01s:25000000ns")
        self.assertEqual(a, b)
        self.check_time_window(B200, 80_000_000, 1 << 62, "80ms:")
        self.check_time_window(VLLM, 0, 500_000, ":0.5ms")

    def test_graph_kernels_belong_to_their_launch(self):
        """vLLM's CUDA graph: the kernels run 8-19 ms after the first event but are launched by one
        hipGraphLaunch at 1.4 ms, so they are in a window around the launch and in none after it."""
        got = self.check_time_window(VLLM, 1_000_000, 2_000_000, "1ms:2ms")
        ev = {r["index"]: r for r in events(VLLM)}
        graph = [i for i, r in ev.items() if r["cat"] == "kernel" and ev[r["partner"]]["name"] == "hipGraphLaunch"]
        self.assertEqual(len(graph), 421)
        self.assertTrue(set(graph) <= set(got))
        self.assertEqual(sum(ev[i]["cat"] == "kernel" for i in got), 422)
        p = run("temporal", VLLM, "--window", "5ms:", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("window '5ms:' holds no event", p.stderr)
        self.assertIn("2.401 ms", p.stderr)

    def test_annotation_instances(self):
        ev = events(VLLM, "--window", "annot:aten::*#0")
        self.assertEqual([(r["name"], r["ts_ns"], r["dur_ns"]) for r in ev],
                         [("aten::slice", 6520618853994640, 10730), ("aten::as_strided", 6520618853999530, 2280)])


class Inference(unittest.TestCase):
    """Every command on traces without ProfilerStep, with and without a window."""

    def test_every_command_takes_a_window(self):
        for folder, win in ((VLLM, "0:3ms"), (B200, "annot:execute_context_1*"), (B200, "20ms:60ms")):
            for cmd in (["info"], ["events"], ["temporal"], ["idle"], ["kernels"], ["overlap"], ["launch"],
                        ["annotations"], ["stragglers"], ["ops"], ["cpu-ops"], ["counters"], ["cupti"],
                        ["critical-path"], ["report"], ["patterns", "--op", "aten::*"], ["diff", folder]):
                with self.subTest(folder=folder, cmd=cmd[0]):
                    p = run(cmd[0], folder, *cmd[1:], "--window", win, "--format", "json", "--quiet")
                    json.loads(p.stdout)

    def test_diff_compares_whole_inference_traces(self):
        # every row, names as written (by default the 20 largest changes, addresses folded)
        out = tables("diff", VLLM, B200, "--device", "cpu", "--top", "0", "--exact-names")
        got = {r["name"]: (int(r["Control_counts"]), int(r["Test_counts"])) for r in rows(out["compare_traces"])}
        # every CPU row (no stream) of each file, every iteration: the whole trace
        want = {}
        for i, f in enumerate((VLLM, B200)):
            for n, k in Counter(r["name"] for r in events(f) if r["stream"] == -1).items():
                want.setdefault(n, [0, 0])[i] = k
        self.assertEqual(want["aten::slice"], [31, 646])  # as many as each file holds
        self.assertEqual(got, {n: tuple(v) for n, v in want.items()})

    def test_diff_in_a_window(self):
        out = tables("diff", VLLM, VLLM, "--window", "annot:aten::*#0")
        self.assertEqual([(r["name"], r["Control_counts"], r["diff_counts"]) for r in rows(out["compare_traces"])],
                         [("aten::as_strided", 1, 0), ("aten::slice", 1, 0)])
        p = run("diff", VLLM, B200)
        self.assertIn("the whole trace (no ProfilerStep)", p.stderr)

    def test_empty_and_bad_windows(self):
        for win, code, msg in (("annot:nope", 1, "window 'annot:nope': no CPU event is named 'nope'"),
                               ("annot:execute*#1", 1, "no rank has that instance"),
                               ("1s:", 1, "window '1s:' holds no event"),
                               ("5:3", 2, "window '5:3': the end must come after the start"),
                               ("10", 2, "expected START:END"),
                               ("3min:", 2, "bad start '3min'")):
            with self.subTest(win=win):
                p = run("kernels", VLLM, "--window", win, ok=False)
                self.assertEqual(p.returncode, code, p.stderr)
                self.assertIn(msg, p.stderr)
                self.assertEqual(p.stdout, "")

    def test_merge_refuses_a_window(self):
        with tempfile.TemporaryDirectory() as d:
            p = run("merge", VLLM, "-o", os.path.join(d, "m.json"), "--window", "0:1ms", ok=False)
            self.assertEqual(p.returncode, 2)
            self.assertIn("--window does not apply", p.stderr)
            self.assertFalse(os.path.exists(os.path.join(d, "m.json")))

    def test_help_documents_the_window(self):
        self.assertIn("--window", run("--help").stdout)
        for cmd in ("temporal", "diff", "report"):
            h = run(cmd, "--help").stdout
            self.assertIn("--window WINDOW", h)
            self.assertIn("annot:NAME#K", h)
            self.assertTrue(all(len(line) <= 100 for line in h.splitlines()))


if __name__ == "__main__":
    unittest.main()
