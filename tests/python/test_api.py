"""htac beyond the goldens: bad input raises an exception naming the file (the interpreter never
crashes), each rank is loaded once (the files can go after TraceAnalysis()), window= on a call, the
default mode's numbers are the hta program's, the Trace's columns are the loader's rows, report(),
report_html() and what_if() give what `hta report` and `hta critical-path --what-if` give."""
import gzip
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyhelp  # noqa: E402
from pyhelp import TRACES, cli  # noqa: E402

# imported when the tests run (setUpModule), under the interpreter with numpy and pandas; listing the
# tests needs neither
HtaError = TraceAnalysis = None


def setUpModule():
    global HtaError, TraceAnalysis
    from htac import HtaError
    from htac.trace_analysis import TraceAnalysis

TF = os.path.join(TRACES, "trace_filter")
SIMPLE = os.path.join(TRACES, "critical_path", "simple_add")


class BadInput(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="htac-bad-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def raises(self, path, code=None, **kw):
        with self.assertRaises(HtaError) as cm:
            TraceAnalysis(trace_dir=path, **kw)
        self.assertIn(os.path.basename(path.rstrip("/")), str(cm.exception))
        if code:
            self.assertEqual(cm.exception.code, code)
        return str(cm.exception)

    def test_missing_path(self):
        self.raises(os.path.join(self.tmp, "nope.json"), "EIO")

    def test_truncated_json(self):
        with gzip.open(os.path.join(TF, "sampled_rank-0.json.gz"), "rb") as f:
            data = f.read()
        p = os.path.join(self.tmp, "cut.json")
        with open(p, "wb") as f:
            f.write(data[:40])  # cut inside the header: an error (a cut between events loads, with a warning)
        msg = self.raises(p, "EFORMAT")
        self.assertRegex(msg, r"byte|offset")

    def test_not_gzip(self):
        p = os.path.join(self.tmp, "bad.json.gz")
        with open(p, "wb") as f:
            f.write(b"\x1f\x8b\x08\x00garbage that is no deflate stream" * 4)
        self.raises(p)

    def test_empty_folder(self):
        os.mkdir(os.path.join(self.tmp, "empty"))
        self.raises(os.path.join(self.tmp, "empty"), "ENODATA")

    def test_bad_options_and_ranks(self):
        a = TraceAnalysis(trace_dir=TF)
        with self.assertRaises(HtaError) as cm:
            a.get_temporal_breakdown(window="12parsecs:")
        self.assertIn("12parsecs", str(cm.exception))
        with self.assertRaises(HtaError):
            a.get_gpu_kernel_breakdown(num_kernels=-1, visualize=False)
        with self.assertRaises(ValueError) as cm:
            a.get_idle_time_breakdown(ranks=[7], visualize=False)
        self.assertIn("7", str(cm.exception))
        with self.assertRaises(HtaError):
            a.what_if(["nonsense"])
        with self.assertRaises(ValueError):  # HtaError is a ValueError too
            a.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id="x")
        # the session is still usable after every error
        self.assertEqual(len(a.get_temporal_breakdown(visualize=False)), 2)
        a.close()
        with self.assertRaises(HtaError):
            a.get_temporal_breakdown(visualize=False)

    def test_interpreter_survives(self):
        """Every bad input above in a fresh interpreter, which must exit normally."""
        code = (
            "import sys; sys.path.insert(0, %r)\n"
            "from htac.trace_analysis import TraceAnalysis\nfrom htac import HtaError\n"
            "n = 0\n"
            "for p in %r:\n"
            "    try:\n        TraceAnalysis(trace_dir=p)\n    except HtaError:\n        n += 1\n"
            "print(n)\n" % (os.path.join(pyhelp.ROOT, "python"),
                            [os.path.join(self.tmp, "x.json"), "/dev/null", self.tmp]))
        p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=os.environ)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(p.stdout.strip(), "3")


class LoadedOnce(unittest.TestCase):
    def test_files_can_go(self):
        """Every analysis after the files are gone: the ranks were read once, by TraceAnalysis()."""
        tmp = tempfile.mkdtemp(prefix="htac-once-")
        try:
            d = os.path.join(tmp, "t")
            shutil.copytree(TF, d)
            a = TraceAnalysis(trace_dir=d, hta_compat=True)
            shutil.rmtree(d)
            a.get_temporal_breakdown(visualize=False)
            a.get_idle_time_breakdown(ranks=[0, 1], visualize=False, show_idle_interval_stats=True)
            a.get_gpu_kernel_breakdown(visualize=False)
            a.get_comm_comp_overlap(visualize=False)
            a.get_cuda_kernel_launch_stats(visualize=False)
            a.get_queue_length_summary()
            a.get_memory_bw_summary()
            a.get_aten_op_kernels_and_delay()
            a.get_potential_stragglers()
            g, ok = a.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
            self.assertGreater(len(g.get_critical_path_breakdown()), 0)
            self.assertGreater(len(a.events(1)), 0)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)


class TraceFiles(unittest.TestCase):
    def test_trace_files(self):
        """HTA's trace_files={rank: file in trace_dir}: only those files are read."""
        a = TraceAnalysis(trace_dir=TF, trace_files={1: "sampled_rank-1.json.gz"})
        self.assertEqual(a.t.ranks, [1])
        t = cli("temporal", TF, "--ranks", "1")["temporal_breakdown"]
        self.assertEqual(a.get_temporal_breakdown(visualize=False).values.tolist(), t["data"])
        with self.assertRaises(HtaError) as cm:
            TraceAnalysis(trace_dir=TF, trace_files={0: "nope.json"})
        self.assertIn("nope.json", str(cm.exception))


class DefaultMode(unittest.TestCase):
    """Without hta_compat the frames carry hta's exact numbers: the program's, in HTA's shape."""

    @classmethod
    def setUpClass(cls):
        cls.a = TraceAnalysis(trace_dir=TF)

    def test_temporal(self):
        df = self.a.get_temporal_breakdown(visualize=False)
        t = cli("temporal", TF)["temporal_breakdown"]
        self.assertEqual(list(df.columns), t["columns"])
        self.assertEqual(df.values.tolist(), t["data"])

    def test_idle(self):
        df, st = self.a.get_idle_time_breakdown(ranks=[0, 1], visualize=False, show_idle_interval_stats=True)
        t = cli("idle", TF, "--stats")["idle_time"]
        nan_none = lambda v: None if isinstance(v, float) and v != v else v  # noqa: E731 - JSON's null
        self.assertEqual([[nan_none(x) for x in r] for r in df.values.tolist()], [r[:5] for r in t["data"]])

    def test_kernels(self):
        kt, kd = self.a.get_gpu_kernel_breakdown(visualize=False)
        t = cli("kernels", TF)
        self.assertEqual(kt.values.tolist(), t["kernel_type"]["data"])
        self.assertEqual(len(kd), len(t["all_kernels"]["data"]))

    def test_window(self):
        w = "annot:ProfilerStep#551"
        df = self.a.get_temporal_breakdown(visualize=False, window=w)
        self.assertEqual(df.values.tolist(), cli("temporal", TF, "--window", w)["temporal_breakdown"]["data"])
        q = self.a.get_queue_length_summary(window="1ms:3ms")
        t = cli("counters", TF, "--window", "1ms:3ms")["queue_length_summary"]
        self.assertEqual(len(q), len([r for r in t["data"] if r[0] == 0]))
        # the next call without a window sees the whole trace again
        self.assertEqual(self.a.get_temporal_breakdown(visualize=False).values.tolist(),
                         cli("temporal", TF)["temporal_breakdown"]["data"])


class TraceColumns(unittest.TestCase):
    def test_rows_are_the_loaders(self):
        a = TraceAnalysis(trace_dir=TF)
        for view, extra in ((False, ()), (True, ("--hta-table",))):
            ev = a.events(1, view=view)
            t = cli("events", TF, "--ranks", "1", *extra)["events"]
            c = {n: i for i, n in enumerate(t["columns"])}
            rows = t["data"]
            self.assertEqual(len(ev), len(rows))
            self.assertEqual(str(ev["ts"].dtype), "int64")
            col = lambda n, none=None: [none if r[c[n]] is None else r[c[n]] for r in rows]  # noqa: E731
            self.assertEqual(list(ev.index), col("index"))
            self.assertEqual(list(ev["ts"]), col("ts_ns"))
            self.assertEqual(list(ev["dur"]), col("dur_ns"))
            self.assertEqual(list(ev["name"].astype(object)), col("name"))
            self.assertEqual(list(ev["cat"].astype(object)), col("cat"))
            self.assertEqual(list(ev["pid"]), col("pid"))
            self.assertEqual(list(ev["tid"]), col("tid"))
            self.assertEqual(list(ev["stream"]), col("stream"))
            self.assertEqual(list(ev["correlation"]), col("correlation"))
            self.assertEqual(list(ev["parent"]), col("parent", -1))
            self.assertEqual(list(ev["partner"]), col("partner", -1))
            self.assertEqual(list(ev["iteration"]), col("iteration", -1))
        w = "annot:ProfilerStep#551"
        t = cli("events", TF, "--ranks", "1", "--hta-table", "--window", w)["events"]
        self.assertEqual(list(a.events(1, window=w).index), [r[1] for r in t["data"]])
        self.assertEqual(len(a.events(1)), len(cli("events", TF, "--ranks", "1", "--hta-table")["events"]["data"]))


class KernelsWithAnnotations(unittest.TestCase):
    def test_innermost_annotation(self):
        """Every GPU kernel gets the shortest gpu_user_annotation of its (pid, tid) that overlaps it: checked
        against every (kernel, annotation) pair."""
        a = TraceAnalysis(trace_dir=os.path.join(TRACES, "nccl_parser_config"))
        df = a.get_gpu_kernels_with_user_annotations(rank=0)
        ev = a.events(0)
        ann = ev[ev["cat"].astype(object) == "gpu_user_annotation"]
        self.assertGreater(len(ann), 0)
        self.assertGreater(df["user_annotation"].notna().sum(), 0)
        for k in df.itertuples():
            best = None
            for x in ann.itertuples():
                if x.pid == k.pid and x.tid == k.tid and k.ts < x.ts + x.dur and x.ts < k.ts + k.dur:
                    if best is None or x.dur < best.dur:
                        best = x
            self.assertEqual(k.user_annotation, None if best is None else best.name, k)
        self.assertEqual(set(df["s_user_annotation"]) - {""}, set(df["user_annotation"].dropna().map(
            __import__("htac.utils.utils", fromlist=["shorten_name"]).shorten_name)))
        self.assertIsNone(TraceAnalysis(trace_dir=TF).get_gpu_kernels_with_user_annotations(rank=0))


class BeyondHTA(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.a = TraceAnalysis(trace_dir=TF)

    def test_report(self):
        r = self.a.report()
        want = cli("report", TF)
        for name in ("findings", "headline", "observations"):
            self.assertIn(name, r)
            self.assertEqual(list(r[name].columns), want[name]["columns"])
            self.assertEqual(len(r[name]), len(want[name]["data"]))
        self.assertEqual(list(r["findings"]["cause"]), [x[0] for x in want["findings"]["data"]])

    def test_report_html(self):
        with tempfile.TemporaryDirectory() as d:
            p = self.a.report_html(os.path.join(d, "r.html"))
            with open(p) as f:
                self.assertIn("<html", f.read(2000).lower())

    def test_what_if(self):
        rule = "kernel:nccl*=x0.5"
        r = self.a.what_if([rule], ranks=[1])
        want = cli("critical-path", TF, "--ranks", "1", "--what-if", rule)
        self.assertEqual(r["what_if"].values.tolist(), want["what_if"]["data"])
        self.assertEqual(len(r["what_if_steps"]), len(want["what_if_steps"]["data"]))
        j = self.a.what_if(rule, all_ranks=True)
        want = cli("critical-path", TF, "--all-ranks", "--what-if", rule)
        self.assertEqual(j["what_if"].values.tolist(), want["what_if"]["data"])


DLRM = os.path.join(pyhelp.ROOT, "tests", "data", "real-diag", "facebookresearch__param", "et_replay", "tests",
                    "inputs", "dlrm_kineto")
BERT = os.path.join(pyhelp.ROOT, "tests", "data", "real", "h100_bert")


class CommsEfficiency(unittest.TestCase):
    """get_collectives() and get_operator_efficiency() give `hta comms` and `hta efficiency`'s tables."""

    def same(self, got, want):
        for name, t in want.items():
            self.assertEqual(list(got[name].columns), t["columns"], name)
            rows = [[None if isinstance(v, float) and v != v else v for v in r] for r in got[name].values.tolist()]
            self.assertEqual(rows, t["data"], name)

    def test_collectives_of_the_dlrm_job(self):
        a = TraceAnalysis(trace_dir=DLRM)
        got = a.get_collectives()
        self.assertEqual(sorted(got), ["alltoallv_bytes", "collectives", "comm_link"])
        self.assertEqual(int(got["collectives"]["calls"].sum()), 64)  # 24 all-reduces, 40 all-to-alls
        self.same(got, cli("comms", DLRM))
        self.same(a.get_collectives(peak_link_gbps=100), cli("comms", DLRM, "--peak-link-gbps", "100"))
        with self.assertRaises(HtaError):
            a.get_collectives(peak_link_gbps=-1)

    def test_operator_efficiency(self):
        with self.assertWarns(UserWarning):  # a single file without its rank: rank 0
            a = TraceAnalysis(trace_dir=BERT)
        got = a.get_operator_efficiency()
        self.assertEqual(sorted(got), ["device", "op_roofline"])
        self.assertGreater(len(got["op_roofline"]), 10)
        self.same(got, cli("efficiency", BERT))
        self.same(a.get_operator_efficiency(peak_tflops=100, peak_tbps=2),
                  cli("efficiency", BERT, "--peak-tflops", "100", "--peak-tbps", "2"))


if __name__ == "__main__":
    unittest.main()
