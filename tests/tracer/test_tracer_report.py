"""libhtatrace files are first-class in `hta report`: two ranks write a folder of tracer files through the
Python front, and the report's scope tables must hold what the files hold (names, counts, exact durations,
self times, numeric args), its findings name the scopes, and `hta merge` of the folder leaves the figures
as they are."""
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD", "build")
LIB = os.path.abspath(os.path.join(ROOT, BUILD, "libhtatrace.so")) if not os.path.isabs(BUILD) \
    else os.path.join(BUILD, "libhtatrace.so")
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))

# One rank's run: three steps of fwd (sleeps 2 ms) and bwd (4 ms per rank number + 1), a slot (loss) and a
# tick in each; rank 1 also runs a loader scope (1 ms) on a second thread first.
SCRIPT = """
import threading, time, htatrace as t
R = %d
t.init(rank=R, world_size=2, file_pattern=%r + "/trace-rank{rank}.json")
t.thread_name("trainer")

def loader():
    t.thread_name("loader")
    with t.scope("load", batch=32 * (R + 1)):
        time.sleep(0.001)

if R == 1:
    th = threading.Thread(target=loader)
    th.start()
    th.join()
for i in range(3):
    with t.scope("step", it=i, slots=["loss"]):
        with t.scope("fwd", tokens=1000 * (R + 1), kind="dense"):
            time.sleep(0.002)
        with t.scope("bwd"):
            time.sleep(0.004 * (R + 1))
        t.set("loss", 0.5 * i)
        t.tick("grad_ready", bucket=i)
t.flush()
"""

# sleeps give lower bounds; the upper bound only catches a gross error (the machine may be loaded, the
# run sanitized): the exact check is against the files' own durations
SLACK_US = 250_000


def hta(*args):
    return testlib.hta_json(*args)[0]


rows = testlib.rows


def ns(x):
    """A tracer time (us with exactly three decimals) as integer ns."""
    return round(float(x) * 1000)


class TracerReport(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.dir = os.path.join(tmp, "traces")
        os.mkdir(cls.dir)
        env = dict(os.environ, HTATRACE_LIB=LIB, PYTHONPATH=os.path.join(ROOT, "python"))
        for r in (0, 1):
            subprocess.run([sys.executable, "-c", textwrap.dedent(SCRIPT % (r, cls.dir))], env=env, check=True,
                           timeout=120)
        cls.files = {}
        for r in (0, 1):
            with open(os.path.join(cls.dir, "trace-rank%d.json" % r)) as f:
                cls.files[r] = [e for e in json.load(f)["traceEvents"] if e["ph"] == "X"]
        cls.rep = hta("report", cls.dir)

    def expected(self, r):
        """name -> (count, total ns, self ns, max ns) computed from rank r's file: a scope's parent is the
        shortest scope of its thread that holds its start, and its self time its duration less its
        children's."""
        ev = self.files[r]
        end = lambda e: ns(e["ts"]) + ns(e["dur"])  # noqa: E731

        def parent(c):
            holders = [o for o in ev if o is not c and o["tid"] == c["tid"] and ns(o["ts"]) <= ns(c["ts"]) < end(o)
                       and ns(o["dur"]) > ns(c["dur"])]
            return min(holders, key=lambda o: ns(o["dur"])) if holders else None
        child = {}
        for c in ev:
            p = parent(c)
            if p is not None:
                child[id(p)] = child.get(id(p), 0) + ns(c["dur"])
        out = {}
        for e in ev:
            n, tot, sf, mx = out.get(e["name"], (0, 0, 0, 0))
            out[e["name"]] = (n + 1, tot + ns(e["dur"]), sf + ns(e["dur"]) - child.get(id(e), 0),
                              max(mx, ns(e["dur"])))
        return out

    def by_self_time(self, rank):
        """rank's scope names, most self time first (ties by name), from its file."""
        want = self.expected(rank)
        return sorted(want, key=lambda n: (-want[n][2], n))

    def test_scope_table_is_the_files(self):
        got = {}
        for r in rows(self.rep["cpu_op_time"]):
            got.setdefault(r["rank"], {})[r["name"]] = r
        self.assertEqual(sorted(got), [0, 1])
        for rank in (0, 1):
            want = self.expected(rank)
            self.assertEqual(sorted(got[rank]), sorted(want), rank)
            for name, (n, tot, sf, mx) in want.items():
                g = got[rank][name]
                self.assertEqual(g["cat"], "user_annotation")
                self.assertEqual(g["count"], n)
                self.assertAlmostEqual(g["total_time (us)"], tot / 1000, places=3)
                self.assertAlmostEqual(g["self_time (us)"], sf / 1000, places=3)
                self.assertAlmostEqual(g["max_time (us)"], mx / 1000, places=3)
                self.assertAlmostEqual(g["mean_time (us)"], tot / 1000 / n, places=3)
        # the names, counts and sleeps the script controls; ticks are not scopes
        self.assertEqual({n: g["count"] for n, g in got[0].items()}, {"step": 3, "fwd": 3, "bwd": 3})
        self.assertEqual({n: g["count"] for n, g in got[1].items()}, {"step": 3, "fwd": 3, "bwd": 3, "load": 1})
        for rank in (0, 1):
            fwd, bwd, step = got[rank]["fwd"], got[rank]["bwd"], got[rank]["step"]
            self.assertGreaterEqual(fwd["mean_time (us)"], 2000)
            self.assertLess(fwd["mean_time (us)"], 2000 + SLACK_US)
            self.assertGreaterEqual(bwd["mean_time (us)"], 4000 * (rank + 1))
            self.assertLess(bwd["mean_time (us)"], 4000 * (rank + 1) + SLACK_US)
            # leaves have no children; a step's time is its own plus its two children's
            self.assertEqual(fwd["self_time (us)"], fwd["total_time (us)"])
            self.assertAlmostEqual(step["total_time (us)"],
                                   step["self_time (us)"] + fwd["total_time (us)"] + bwd["total_time (us)"], places=3)
            # most self time first, as the files give it (the script asks 3 x bwd at least 12 ms, 3 x fwd 6 ms,
            # but a loaded machine's sleeps overshoot by any amount: the order is the files', not the script's)
            order = [r["name"] for r in rows(self.rep["cpu_op_time"]) if r["rank"] == rank]
            self.assertEqual(order, self.by_self_time(rank))
        self.assertGreaterEqual(got[1]["load"]["total_time (us)"], 1000)

    def test_scope_args(self):
        a = {(r["rank"], r["name"], r["arg"]): (r["count"], r["sum"], r["mean"], r["min"], r["max"])
             for r in rows(self.rep["scope_args"])}
        for rank in (0, 1):
            self.assertEqual(a[(rank, "step", "it")], (3, 3, 1, 0, 2))
            self.assertEqual(a[(rank, "step", "loss")], (3, 1.5, 0.5, 0, 1))  # a slot, set at the end
            k = 1000 * (rank + 1)
            self.assertEqual(a[(rank, "fwd", "tokens")], (3, 3 * k, k, k, k))
            self.assertNotIn((rank, "fwd", "kind"), a)  # text: no statistics
        self.assertEqual(a[(1, "load", "batch")], (1, 64, 64, 64, 64))
        self.assertEqual(len(a), 7)

    def test_ranks_and_findings(self):
        ranks = {r["rank"]: r for r in rows(self.rep["cpu_ranks"])}
        self.assertEqual({k: (r["threads"], r["calls"], r["steps"], r["tracer"]) for k, r in ranks.items()},
                         {0: (1, 9, 0, 1), 1: (2, 10, 0, 1)})
        f = rows(self.rep["observations"])
        # no "no GPU kernels" for tracer files: one cpu and one critical-path finding per rank
        self.assertEqual([(x["rank"], x["area"]) for x in f],
                         [(0, "cpu"), (0, "critical path"), (1, "cpu"), (1, "critical path")])
        self.assertTrue(f[0]["finding"].startswith("libhtatrace scopes by self time, of the "))
        self.assertIn("on 1 thread: %s " % self.by_self_time(0)[0], f[0]["finding"])
        self.assertIn("on 2 threads: %s " % self.by_self_time(1)[0], f[2]["finding"])
        self.assertIn("(3 calls, mean ", f[2]["finding"])
        self.assertRegex(f[1]["finding"], r"^critical path [\d.]+ ms, CPU-bound \(9\d\.\d% operator time\) on thread "
                                          r"\d+ \(pid \d+\): " + self.by_self_time(0)[0] + " ")
        self.assertNotIn("kernel_types", self.rep)
        cp = {r["rank"]: (r["bound_by"], r["percentage"]) for r in rows(self.rep["critical_path"])}
        # all CPU work (the simulation graph's path: a thread's hand-over to another weighs a little as a wait)
        self.assertEqual({k: v[0] for k, v in cp.items()}, {0: "cpu_bound", 1: "cpu_bound"})
        self.assertGreater(cp[0][1], 99, cp)
        # rank 1's path waits once, from the loader's end until the trainer's first scope (a thread's start and
        # join: a few hundred us, far more when the machine is loaded or the run sanitized), where that first
        # scope starts within 5 ms of the loader's end (docs/critical-path.md, "Threads that wait for each
        # other"); the wait is bound by what it waited for, the loader's CPU work (docs/critical-path.md, "What a
        # wait is bound by"), so every segment of the path is cpu_bound
        self.assertEqual(cp[1][1], 100.0, cp)

    def test_merge_then_report(self):
        out = os.path.join(self.tmp, "merged.json")
        p = subprocess.run([HTA, "merge", self.dir, "-o", out, "--quiet"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        # the folder's report is the same after the merge
        self.assertEqual(hta("report", self.dir), self.rep)
        # the merged file holds every scope with its duration: totals by name over all ranks agree however
        # the merged file's ranks are read back
        def totals(rep, table, key, cols):
            t = {}
            for r in rows(rep[table]):
                acc = t.setdefault(r[key] if isinstance(key, str) else tuple(r[k] for k in key), [0] * len(cols))
                for i, c in enumerate(cols):
                    acc[i] += r[c]
            return {k: [round(v, 3) for v in x] for k, x in t.items()}
        cols = ["count", "total_time (us)", "self_time (us)"]
        m = hta("cpu-ops", out, "--args")
        self.assertEqual(totals(m, "cpu_op_time", "name", cols), totals(self.rep, "cpu_op_time", "name", cols))
        self.assertEqual(totals(m, "scope_args", ("name", "arg"), ["count", "sum"]),
                         totals(self.rep, "scope_args", ("name", "arg"), ["count", "sum"]))
        # merged with --align none (each rank shifted by its clock anchor, one constant), the file loads
        # back as its ranks: the same report as the folder.  exact times (the default), because a shift by a fraction
        # of a microsecond moves HTA's whole-us rounding of a few durations.
        flat = os.path.join(self.tmp, "merged-none.json")
        p = subprocess.run([HTA, "merge", self.dir, "-o", flat, "--align", "none", "--quiet"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        mr, fr = hta("report", flat), hta("report", self.dir)
        self.assertEqual(sorted(r["rank"] for r in rows(mr["cpu_ranks"])), [0, 1])
        for t in ("findings", "observations", "cpu_op_time", "scope_args"):
            self.assertEqual(mr[t], fr[t], t)


class TracerGpuScopes(unittest.TestCase):
    def test_gpu_scopes_keep_the_cpu_path(self):
        """GPU scopes (timed with CUDA events, here the fake runtime's) are rows on a stream: the rank still
        has no GPU work HTA's graph knows, so its critical path is the CPU scopes' and the report says so."""
        with tempfile.TemporaryDirectory() as d:
            env = dict(os.environ, HTATRACE_LIB=LIB, PYTHONPATH=os.path.join(ROOT, "python"),
                       HTA_TRACE_CUDART=os.path.join(os.path.dirname(LIB), "libfakecudart.so"))
            subprocess.run([sys.executable, "-c", textwrap.dedent("""
                import time, htatrace as t
                t.init(file_pattern=%r + "/gpu.json")
                assert t.gpu_available()
                for i in range(2):
                    with t.scope("outer", i=i):
                        with t.scope("gpu_scope", gpu=True):
                            time.sleep(0.002)
                t.flush()
            """ % d)], env=env, check=True, timeout=120)
            rep = hta("report", d)
        f = rows(rep["observations"])
        self.assertEqual([x["area"] for x in f], ["cpu", "critical path"])
        self.assertIn("libhtatrace scopes by self time", f[0]["finding"])
        self.assertIn(": gpu_scope ", f[1]["finding"])
        # the CPU side of the GPU scopes nests in outer: outer's self time is what is left
        ops = {r["name"]: r for r in rows(rep["cpu_op_time"])}
        self.assertEqual((ops["gpu_scope"]["cat"], ops["gpu_scope"]["count"]), ("user_annotation", 2))
        self.assertAlmostEqual(ops["outer"]["self_time (us)"],
                               ops["outer"]["total_time (us)"] - ops["gpu_scope"]["total_time (us)"], places=3)
        self.assertEqual([(r["bound_by"], r["percentage"]) for r in rows(rep["critical_path"])], [("cpu_bound", 100)])


if __name__ == "__main__":
    unittest.main()
