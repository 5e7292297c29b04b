"""Critical path: HTA's reference values (critical-path.md §13.1), overlay, save/restore, what-if on a
small trace with a known path (the golden tables themselves: tests/golden/test_golden.py)."""
import gzip
import json
import os
import subprocess
import sys
import unittest
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
T = os.path.join(ROOT, "tests", "data", "hta")
CP = os.path.join(T, "critical_path")
P = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"


hta = testlib.hta


def tables(*args):
    return json.loads(hta("critical-path", *args, "--format", "json", "--quiet").stdout)


class HtaValues(testlib.TempDirTest):
    def stats(self, *args, **want):
        """The stats table ("%g" of each value) holds want (graph_edge_types.X as graph_edge_types__X), with
        --hta-compat: these are HTA's numbers (critical-path.md §13)."""
        got = {n: "%g" % v for n, v in tables(*args, "--hta-compat")["stats"]["data"]}
        want = {k.replace("__", "."): str(v) for k, v in want.items()}
        self.assertEqual({k: got.get(k) for k in want}, want)

    # critical-path.md §13.1, zero-weight launch edges on (HTA's test setting)
    def test_simple_add(self):
        self.stats(os.path.join(CP, "simple_add"), "--annotation", P, "--instance", "1", "--zero-weight-launch-edges",
                   graph_edges=440, graph_edge_types__critical_path_kernel_launch_delay=40, critical_path_nodes=315,
                   critical_path_total_weight=241724)

    def test_ns_resolution(self):
        self.stats(os.path.join(T, "ns_resolution_trace"), "--annotation", "ProfilerStep", "--instance", "1",
                   "--zero-weight-launch-edges", graph_edges=12444, critical_path_nodes=2983,
                   critical_path_total_weight=97176)

    def test_event_sync_multi_stream(self):
        self.stats(os.path.join(CP, "cuda_event_sync_multi_stream"), "--zero-weight-launch-edges",
                   graph_edges=85, graph_edge_types__critical_path_sync_dependency=6)

    def test_end_to_end_data_load(self):
        self.stats(os.path.join(CP, "end_to_end", "simple_add", "input"), "--data-load", "data_load",
                   graph_edges=1451, critical_path_total_weight="4.1435e+07")

    def test_no_crash_where_hta_fails(self):
        for f in ["cpu_only", "mtia_trace_single_rank", "trace_file_list"]:
            with self.subTest(trace=f):
                hta("critical-path", os.path.join(T, f), "--quiet")

    def test_unknown_annotation(self):
        p = hta("critical-path", os.path.join(CP, "simple_add"), "--annotation", "__nonexistent__", ok=False)
        self.assertEqual(p.returncode, 1)
        self.assertIn("no event name contains", p.stderr)

    def test_instance_out_of_range(self):
        # the instance asked for, as given (issue 35: "instance 5" was said "instance 50")
        for inst in ("5", "99", "3:7"):
            with self.subTest(instance=inst):
                p = hta("critical-path", os.path.join(CP, "simple_add"), "--annotation", P, "--instance", inst,
                        ok=False)
                self.assertEqual(p.returncode, 1)
                self.assertIn(f"; instance {inst} is out of range", p.stderr)


class Overlay(testlib.TempDirTest):
    def test_same_as_hta_end_to_end(self):
        """HTA's end-to-end expected overlay (only_show_critical_events=False), same in meaning."""
        e = os.path.join(CP, "end_to_end", "simple_add")
        hta("critical-path", os.path.join(e, "input"), "--data-load", "data_load", "--overlay", self.dir,
            "--all-events", "--hta-compat", "--quiet")
        p = subprocess.run([sys.executable, os.path.join(HERE, "overlay_compare.py"),
                            os.path.join(self.dir, "overlaid_critical_path_trace.json.gz"),
                            os.path.join(e, "output", "overlaid_critical_path_trace.json.gz")],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)

    def counts(self, *opts):
        """events, flows, critical X events, critical f flow ends of simple_add's overlay"""
        out = os.path.join(self.dir, "-".join(opts) or "default", "sub")  # the folder is created
        hta("critical-path", os.path.join(CP, "simple_add"), "--annotation", P, "--instance", "1",
            "--overlay", out, "--hta-compat", *opts, "--quiet")
        (f,) = os.listdir(out)
        ev = json.load(gzip.open(os.path.join(out, f)))["traceEvents"]
        fl = [e for e in ev if e.get("cat") == "critical_path"]
        return (len(ev), len(fl), sum(1 for e in ev if e.get("ph") == "X" and e.get("args", {}).get("critical") == 1),
                sum(1 for e in fl if e["ph"] == "f" and e["args"]["critical"]))

    def test_counts(self):
        """HTA's tests (critical-path.md §13.1): events, flows, critical X, critical f."""
        self.assertEqual(self.counts("--all-events", "--all-edges"), (2178, 830, 159, 314))
        self.assertEqual(self.counts("--all-events"), (1390, 42, 159, 21))
        self.assertEqual(self.counts(), (719, 42, 159, 21))


class WhatIf(testlib.TempDirTest):
    """tests/cpath/small_trace.py on the simulation graph: the run is 620 us (0 to aten::b's end), every us of
    it accounted for; the sync returns 30 us after K1 (as observed) and takes 2 us of its own (the default:
    no sync of this trace returned without waiting)."""

    def setUp(self):
        super().setUp()
        self.small = os.path.join(self.dir, "small.json")
        subprocess.run([sys.executable, os.path.join(HERE, "small_trace.py"), self.small], check=True)

    def whatif(self, *rules):
        args = [a for r in rules for a in ("--what-if", r)]
        d = dict(tables(self.small, *args)["what_if"]["data"])
        return "%g %g %g" % (d["baseline_path_us"], d["simulated_path_us"], d["saving_us"])

    def test_rules(self):
        for want, rules in [
            ("620 370 250", ["kernel:K*=x0.5"]),  # the kernel stays critical: saving = half its 500 us
            ("620 370 250", ["type:comp=x0.5"]),
            ("620 370 250", ["stream:7=x0.5"]),
            ("620 610 10", ["edge:launch=0"]),  # K1 started 10 us after its launch returned
            ("620 540 80", ["cpu=x0"]),  # CPU time before K1 (20), the untraced 10 us before aten::b, aten::b (50)
            ("620 670 -50", ["op:aten::b=x2"]),
            ("620 172 448", ["kernel:*=x0"]),  # the sync returns after its own 2 us: 110 + 2 + 10 + 50
            ("620 295 325", ["gpu=x0.5", "gpu=x0.7"]),  # rules compose: the kernel becomes 500 * 0.35
            ("620 620 0", ["kernel:*=500"]),  # set to its own value
        ]:
            with self.subTest(rules=rules):
                self.assertEqual(self.whatif(*rules), want)

    def test_rule_matching_nothing_is_an_error(self):
        p = hta("critical-path", self.small, "--what-if", "stream:8=x0", ok=False)  # no kernel on stream 8
        self.assertEqual(p.returncode, 1)
        self.assertIn("what-if rule 'stream:8=x0' matches nothing", p.stderr)

    def test_unknown_selector(self):
        p = hta("critical-path", self.small, "--what-if", "bogus=1", ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("unknown selector", p.stderr)

    def test_simulated_trace(self):
        """K1 halved: the sync returns 250 us earlier, aten::b starts at 320 us."""
        # not beside small.json, which names its rank: the folder would hold two files of rank 0 (issue 27)
        os.makedirs(os.path.join(self.dir, "out"), exist_ok=True)
        sim = os.path.join(self.dir, "out", "sim.json")
        hta("critical-path", self.small, "--what-if", "kernel:K1=x0.5", "--what-if-trace", sim, "--quiet")
        e = {x["name"]: (x["ts"] - 1000000, x["dur"]) for x in json.load(open(sim))["traceEvents"]}
        self.assertEqual(e["K1"], (30, 250))
        self.assertEqual(e["cudaStreamSynchronize"], (110, 200))
        self.assertEqual(e["aten::b"], (320, 50))
        self.assertEqual(e["aten::a"], (0, 100))

    def test_unchanged_graph_reproduces_the_trace(self):
        os.makedirs(os.path.join(self.dir, "out"), exist_ok=True)
        sim = os.path.join(self.dir, "out", "sim0.json")
        hta("critical-path", self.small, "--what-if", "kernel:*=x1", "--what-if-trace", sim, "--quiet")
        self.assertEqual(json.load(open(sim)), json.load(open(self.small)))


class SaveRestore(testlib.TempDirTest):
    """--save then --graph: HTA's graph stored, the same tables without the trace (those of HTA's graph, which a
    run prints with --hta-compat; by default the tables are the simulation graph's and --save stores HTA's)."""

    def roundtrip(self, *args):
        g = os.path.join(self.dir, "g.cpg")
        a = json.loads(hta("critical-path", *args, "--hta-compat", "--save", g, "--format", "json", "--quiet").stdout)
        self.assertEqual(json.loads(hta("critical-path", "--graph", g, "--format", "json", "--quiet").stdout), a)
        g2 = os.path.join(self.dir, "g2.cpg")
        p = hta("critical-path", *args, "--save", g2)
        self.assertIn("HTA's graph saved to", p.stderr)
        self.assertIn("steps", p.stdout)  # the default answer is the simulation graph's
        return g

    def test_small(self):
        small = os.path.join(self.dir, "small.json")
        subprocess.run([sys.executable, os.path.join(HERE, "small_trace.py"), small], check=True)
        self.roundtrip(small)

    def test_alexnet(self):
        g = self.roundtrip(os.path.join(CP, "alexnet"), "--annotation", P, "--instance", "1")
        d = dict(tables("--graph", g, "--what-if", "type:comp=x1")["what_if"]["data"])
        self.assertEqual(d["saving_us"], 0)

    def test_corrupt_graph(self):
        small = os.path.join(self.dir, "small.json")
        subprocess.run([sys.executable, os.path.join(HERE, "small_trace.py"), small], check=True)
        g = self.roundtrip(small)
        bad = os.path.join(self.dir, "bad.cpg")
        with open(g, "rb") as f, open(bad, "wb") as o:
            o.write(f.read(100))
        p = hta("critical-path", "--graph", bad, ok=False)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("corrupt", p.stderr)


if __name__ == "__main__":
    unittest.main()
