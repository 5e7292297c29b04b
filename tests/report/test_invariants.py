#!/usr/bin/env python3
"""Invariants of the diagnosis and its engine on every trace the project has (docs/report.md, "Invariants"): each
trace file of tests/data alone (HTA's test traces, the real ones, the labelled real-diag ones), the multi-rank
folders, and generated jobs.  They are what must hold on any trace, labelled or not: no label is read here.

- no path segment of the simulation graph is unclassified (an empty bound_by);
- the simulation is the trace: replaying the unmodified graph gives every ProfilerStep's duration (or the
  trace's span without steps) within 1%;
- no saving beyond physics: a host cause saves at most the GPU's idle share of its window, a GPU cause at most
  the GPU's busy share;
- a GPU-bound rank (computation busy >= 85% of the window, a launch queue median >= 8) gets gpu_compute first,
  and type:comp=x0.5 saves at least 25% of the window, unless the host bounds the simulated run (over half its
  simulated path is CPU time: the GPU then outruns the host, which no faster kernel can beat);
- where the GPU idles over 20% of the window, the findings explain at least 80% of that idle time (by the idle
  split the report prints), or the rest is a finding of its own (unexplained_idle);
- a capture trace gets no saving; a trace without GPU activity no GPU finding; a trace too short to judge says so.

Each test prints its table (one row per trace) and asserts every row."""
import glob
import gzip
import json
import os
import re
import subprocess
import sys
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DATA = os.path.join(ROOT, "tests", "data")
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")
# files under tests/data that are no Kineto trace of a run
NOT_TRACES = ("benchmark_simple_add_et.json.gz",)
MULTI = ["hta/trace_filter", "real-diag/facebookresearch__param/et_replay/tests/inputs/dlrm_kineto", "comm"]
HOST = ("data_loading", "host_blocking", "cpu_overhead")
GPU = ("gpu_compute", "memory_copy", "exposed_communication")
IDLE_RE = re.compile(r"GPU idle ([\d.]+)% of the .* window.*: the host blocked in runtime calls ([\d.]+)%, GPU work "
                     r"queued but waiting ([\d.]+)%, data loading ([\d.]+)%, the host otherwise \(launch, Python\) "
                     r"([\d.]+)%")


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def run(*args):
    p = subprocess.run([HTA, *args, "--format", "json"], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError("hta %s: %s" % (" ".join(args), p.stderr.strip()[-400:]))
    return json.loads(p.stdout), p.stderr


def load_events(path):
    op = gzip.open if path.endswith(".gz") else open
    with op(path, "rt") as f:
        d = json.load(f)
    return d["traceEvents"] if isinstance(d, dict) else d


def step_durations(path):
    """ProfilerStep#N -> duration (us) from the trace itself, as the profiler wrote them."""
    out = {}
    for e in load_events(path):
        n = str(e.get("name", ""))
        if e.get("ph") == "X" and n.startswith("ProfilerStep#") and e.get("cat") in ("user_annotation", "cpu_op",
                                                                                     "Operator", None):
            try:
                out[int(n.split("#")[1])] = float(e["dur"])
            except ValueError:
                pass
    return out


def trace_files():
    files = []
    for p in sorted(glob.glob(os.path.join(DATA, "**", "*.json*"), recursive=True)):
        if not re.search(r"\.json(\.gz)?$", p) or p.endswith("labels.json") or os.path.basename(p) in NOT_TRACES:
            continue
        files.append(p)
    return files


def short(o):
    """the report says the trace is too short to judge"""
    return any(ob["area"] == "trace" and "too short to judge" in ob["finding"] for ob in rows(o["observations"]))


def name(p):
    return os.path.relpath(p, DATA)


def gpu_busy(o):
    """the report's headline has the GPU busy some of the time"""
    h = rows(o["headline"])
    return bool(h) and (h[0]["gpu_busy_pctg"] or 0) > 0


class Invariants(unittest.TestCase):
    """One report and one critical path per trace, shared by every test of the class."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.traces = trace_files()
        # generated jobs: a DDP job with a slow host (the CPU operators 6x slower), and one with a data-loading
        # stall every step (the generator is a model, not the judge: it adds shapes the real traces lack)
        gen = [("gen_slow_cpu", ["--cpu-scale", "6"]), ("gen_data_stall", ["--gap-prob", "1", "--gap-ms", "40"])]
        cls.jobs = [os.path.join(DATA, m) for m in MULTI if os.path.isdir(os.path.join(DATA, m))]
        for tag, extra in gen:
            out = os.path.join(cls.tmp.name, tag)
            subprocess.run([sys.executable, GEN, "--out", out, "--ranks", "2", "--layers", "2", "--steps", "4",
                            "--seed", "1", "--quiet", *extra], check=True, capture_output=True)
            cls.jobs.append(out)
            cls.traces += sorted(glob.glob(os.path.join(out, "*.json*")))
        cls.rep, cls.cp = {}, {}

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def report(self, p):
        if p not in self.rep:
            o, err = run("report", p, "--quiet")
            self.rep[p] = (o, err)
        return self.rep[p]

    def cpath(self, p):
        """critical-path with type:comp=x0.5 (the what-if tables, and the unmodified path's tables)"""
        if p not in self.cp:
            try:
                self.cp[p] = run("critical-path", p, "--what-if", "type:comp=x0.5")[0]
            except AssertionError as e:  # no computation kernel to change: the path alone
                if "matches nothing" not in str(e):
                    raise
                self.cp[p] = run("critical-path", p)[0]
        return self.cp[p]

    def table(self, title, head, lines, bad):
        print("\n%s\n%s" % (title, head))
        for ln in lines:
            print(ln)
        self.assertFalse(bad, "\n".join(bad))

    def gpu_traces(self):
        out = []
        for p in self.traces:
            if gpu_busy(self.report(p)[0]):
                out.append(p)
        return out

    def test_no_path_segment_is_unclassified(self):
        lines, bad = [], []
        for p in self.traces:
            if not rows(self.report(p)[0]["headline"]):
                continue
            s = rows(self.cpath(p)["summary"])
            empty = sum(r["duration"] for r in s if not r["bound_by"])
            total = sum(r["duration"] for r in s)
            lines.append("%-90s %12.1f %12.1f" % (name(p)[-90:], total, empty))
            if empty > 0:
                bad.append("%s: %.1f us of the path has no bound_by" % (name(p), empty))
        self.table("path segments without bound_by", "%-90s %12s %12s" % ("trace", "path_us", "empty_us"), lines, bad)

    def test_replay_is_the_trace(self):
        """the unmodified graph replayed: each step's duration as the trace has it (steps table, wall_us), or the
        run's span without steps (the what-if's baseline against the trace's span of the events the graph holds)"""
        lines, bad = [], []
        for p in self.traces:
            if not rows(self.report(p)[0]["headline"]):
                continue
            cp = self.cpath(p)
            steps = {r["step"]: r["wall_us"] for r in rows(cp.get("steps", {"columns": [], "data": []}))}
            measured = step_durations(p)
            for n, wall in sorted(steps.items()):
                if n not in measured or measured[n] <= 0:
                    continue
                err = abs(wall - measured[n]) / measured[n] * 100
                lines.append("%-80s %6d %14.1f %14.1f %7.3f" % (name(p)[-80:], n, measured[n], wall, err))
                if err > 1:
                    bad.append("%s step %d: replayed %.1f us, the trace %.1f us (%.2f%%)" % (name(p), n, wall,
                                                                                            measured[n], err))
        self.table("replay of the unmodified graph against the trace",
                   "%-80s %6s %14s %14s %7s" % ("trace", "step", "trace_us", "replayed_us", "err_%"), lines, bad)
        self.assertGreater(len(lines), 10)

    def test_no_saving_beyond_physics(self):
        lines, bad = [], []
        for p in self.traces + self.jobs:
            o, _ = self.report(p)
            h = rows(o["headline"])
            if not h or h[0]["gpu_busy_pctg"] is None:
                continue
            busy = h[0]["gpu_busy_pctg"]
            for f in rows(o["findings"]):
                s = f["saving_pct"]
                if s is None:
                    continue
                bound = 100 - busy if f["cause"] in HOST else busy if f["cause"] in GPU else 100
                lines.append("%-70s %-22s %8.1f %8.1f" % (name(p)[-70:], f["cause"], s, bound))
                if s > bound + 0.2:
                    bad.append("%s: %s saves %.1f%%, beyond the %.1f%% %s" % (
                        name(p), f["cause"], s, bound, "GPU idle" if f["cause"] in HOST else "GPU busy"))
        self.table("savings against what physics allows", "%-70s %-22s %8s %8s" % ("trace", "cause", "saving%",
                                                                                 "bound%"), lines, bad)

    def test_gpu_bound_rank_is_gpu_compute(self):
        lines, bad = [], []
        for p in self.gpu_traces():
            o, _ = self.report(p)
            rk = rows(o["ranks"])
            if len(rk) != 1 or any(f["cause"] == "capture_trace" for f in rows(o["findings"])):
                continue
            # computation's share of the window: the window's busy share times computation's share of kernel time
            kt = {r["kernel_type"]: r["percentage"] for r in rows(o["kernel_types"])}
            comp = rows(o["headline"])[0]["gpu_busy_pctg"] * kt.get("COMPUTATION", 0) / 100
            q = rows(run("counters", p, "--table", "queue_length_summary")[0]["queue_length_summary"])
            qmed = max((r["50%"] for r in q if r.get("50%") is not None), default=0)
            if comp < 85 or qmed < 8:
                continue
            f = rows(o["findings"])
            first = f[0]["cause"] if f else "none"
            cp = self.cpath(p)
            wi = dict(cp["what_if"]["data"])
            saving = wi["saving_percent"]
            host = sum(r["percentage"] for r in rows(cp["what_if_summary"]) if r["bound_by"] == "cpu_bound")
            lines.append("%-70s %6.1f %5.0f %-14s %7.1f %9.1f" % (name(p)[-70:], comp, qmed, first, saving, host))
            if first != "gpu_compute":
                bad.append("%s: first finding %s" % (name(p), first))
            if saving < 25 and host < 50:
                bad.append("%s: type:comp=x0.5 saves %.1f%% and the host bounds only %.0f%% of the simulated path"
                           % (name(p), saving, host))
        self.table("GPU-bound ranks", "%-70s %6s %5s %-14s %7s %9s" % ("trace", "comp%", "queue", "first", "saving%",
                                                                       "host_sim%"), lines, bad)
        self.assertTrue(lines, "no GPU-bound rank among the traces")

    def test_idle_is_explained(self):
        lines, bad = [], []
        # the idle split's parts each cause explains (cpu_overhead: the host's part and the queued work waiting out
        # the launches' latency, and data loading where that is no finding of its own: its rule, cpu=x0.2, then
        # speeds data loading too)
        parts = {"host_blocking": 1, "data_loading": 3, "cpu_overhead": 4, "gpu_compute": 2,
                 "exposed_communication": 2, "straggler": 2}
        for p in self.gpu_traces():
            o, _ = self.report(p)
            f = rows(o["findings"])
            causes = [x["cause"] for x in f]
            if "capture_trace" in causes or len(rows(o["ranks"])) != 1 or short(o):
                continue
            m = [IDLE_RE.search(ob["finding"]) for ob in rows(o["observations"]) if ob["area"] == "idle"]
            m = [x for x in m if x]
            if not m:
                continue
            v = [float(x) for x in m[0].groups()]
            idle = v[0]
            if idle <= 20:
                continue
            got = {parts[c] for c in causes if c in parts} | ({2} if "cpu_overhead" in causes else set())
            if "cpu_overhead" in causes and "data_loading" not in causes:
                got |= {3}
            explained = sum(v[k] for k in sorted(got))
            un = "unexplained_idle" in causes
            lines.append("%-70s %6.1f %9.1f %s" % (name(p)[-70:], idle, explained, "yes" if un else "no"))
            if explained < 0.8 * idle - 0.3 and not un:
                bad.append("%s: GPU idle %.1f%%, the findings explain %.1f%%, and no unexplained_idle" % (
                    name(p), idle, explained))
        self.table("GPU idle time and what explains it", "%-70s %6s %9s %s" % ("trace", "idle%", "explained%",
                                                                                "unexplained_idle"), lines, bad)

    def test_capture_trace_gets_no_saving(self):
        caps = 0
        for p in self.traces:
            f = rows(self.report(p)[0]["findings"])
            if any(x["cause"] == "capture_trace" for x in f):
                caps += 1
                self.assertEqual([x["cause"] for x in f], ["capture_trace"], name(p))
                self.assertIsNone(f[0]["saving_pct"], name(p))
        self.assertGreaterEqual(caps, 2)

    def test_no_gpu_no_gpu_finding(self):
        seen = 0
        for p in self.traces:
            o, _ = self.report(p)
            if gpu_busy(o):
                continue
            seen += 1
            f = [x["cause"] for x in rows(o["findings"])]
            self.assertFalse([c for c in f if c in GPU + ("unexplained_idle",)], name(p))
        self.assertGreater(seen, 0)

    def test_too_short_says_so(self):
        seen = 0
        for p in self.traces:
            o, err = self.report(p)
            if not gpu_busy(o) or not rows(o["ranks"]):
                continue
            h = rows(o["headline"])
            kernels = sum(r["kernels"] for r in rows(run("info", p, "--table", "streams")[0]["streams"]))
            is_short = h[0]["step_us"] < 1000 or kernels < 10
            if not is_short:
                continue
            seen += 1
            self.assertEqual([x["cause"] for x in rows(o["findings"])], [], name(p))
            self.assertTrue(short(o), name(p))


if __name__ == "__main__":
    unittest.main()
