"""Runs build/test-tracer (the C API tests) and checks the files it writes."""
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck as tc_  # noqa: E402

BUILD = os.environ.get("BUILD", "build")
BIN = os.path.join(BUILD, "test-tracer")
FAKE_CUDA = os.path.abspath(os.path.join(BUILD, "libfakecudart.so"))


def run(args, **env):
    e = tc_.clean_env()
    # the binary carries its own sanitizers: no preload, leak checks on
    e.pop("LD_PRELOAD", None)
    e.pop("ASAN_OPTIONS", None)
    e.update(env)
    p = subprocess.run([BIN] + args, env=e, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("%s failed (%d):\n%s%s" % (args, p.returncode, p.stdout, p.stderr))
    return p


class CApi(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        run(["main", cls.tmp.name], HTA_TRACE_CUDART="/nonexistent/libcudart.so")
        cls.doc = tc_.load(os.path.join(cls.tmp.name, "main-2-1-0-3-8.json"))

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_format_and_identity(self):
        d = self.doc
        tc_.check_format(self, d)
        self.assertEqual(d["distributedInfo"]["rank"], 2)
        self.assertEqual(d["distributedInfo"]["world_size"], 8)
        self.assertEqual((d["distributedInfo"]["dp_rank"], d["distributedInfo"]["pp_rank"],
                          d["distributedInfo"]["tp_rank"]), (1, 0, 3))
        self.assertEqual(d["htaTracer"]["dropped_events"], 0)
        pname = tc_.events(d, ph="M", name="process_name")
        self.assertEqual(pname[0]["args"]["name"], "rank 2")
        # no temporary file left behind
        self.assertFalse([f for f in os.listdir(self.tmp.name) if ".tmp." in f])

    def test_nesting_and_times(self):
        d = self.doc
        tc_.check_nesting(self, d)
        outer, = tc_.events(d, name="outer")
        dyn, = tc_.events(d, name="dyn_5")
        leaf, = tc_.events(d, name="leaf")
        self.assertTrue(tc_.contains(outer, dyn))
        self.assertTrue(tc_.contains(dyn, leaf))
        self.assertGreaterEqual(tc_.ns(leaf["dur"]), 3000)
        self.assertGreaterEqual(tc_.ns(outer["dur"]), 13000)
        idx = [d["traceEvents"].index(e) for e in (outer, dyn, leaf)]
        self.assertEqual(idx, sorted(idx))
        er = tc_.events(d, name="early_return")
        self.assertEqual([e["args"]["x"] for e in er], [1, 0])
        for e in er:
            self.assertTrue(tc_.contains(outer, e))
            self.assertGreaterEqual(tc_.ns(e["dur"]), 2000)
        # ts has exactly 3 decimals in the text
        with open(os.path.join(self.tmp.name, "main-2-1-0-3-8.json")) as f:
            text = f.read()
        self.assertRegex(text, r'"ts": \d+\.\d{3},')

    def test_args_and_context(self):
        outer, = tc_.events(self.doc, name="outer")
        a = outer["args"]
        self.assertEqual(a["iter"], 42)
        self.assertEqual(a["lr"], 0.5)
        self.assertEqual(a["tag"], 'a"b\\c\n\u00e9')
        self.assertEqual(a["big"], -9007199254740993)
        self.assertEqual(a["bad_utf8"], "x\ufffdy")
        self.assertIs(a["flag"], True)         # BOOL: true, not 1
        self.assertIsNone(a["none"])           # NULL: null
        self.assertEqual(a["shape"], [8, 1024, {"a": [True, None, -1500.0, "\u00e9"]}])  # JSON verbatim
        self.assertEqual(a["tokens"], 1024)   # slot set by a child, last set wins
        self.assertEqual(a["loss"], 2.5)      # forwarded by a context-only scope
        self.assertNotIn("micro_batch", a)    # ctx is passed down, not recorded
        # "tokens" was a begin arg (null) and a slot: the end's value replaces it, the key is written once
        with open(os.path.join(self.tmp.name, "main-2-1-0-3-8.json")) as f:
            line = next(x for x in f if '"name": "outer"' in x)
        self.assertEqual(line.count('"tokens"'), 1)
        self.assertIn('"flag": true, "none": null, "shape":  [8, 1024,', line)
        leaf, = tc_.events(self.doc, name="leaf")
        self.assertEqual(leaf["args"], {"kind": "matmul"})
        # the context-only scope is not an event
        names = {e["name"] for e in tc_.events(self.doc, ph="X")}
        self.assertEqual(names, {"outer", "dyn_5", "leaf", "early_return", "gpu_wanted",
                                 "work", "sub", "unfinished_scope"})

    def test_tick(self):
        t, = tc_.events(self.doc, ph="i")
        self.assertEqual(t["name"], "checkpoint")
        self.assertEqual(t["args"], {"step": 3, "what": "ckpt"})
        dyn, = tc_.events(self.doc, name="dyn_5")
        self.assertTrue(tc_.ns(dyn["ts"]) <= tc_.ns(t["ts"]) <= tc_.ns(dyn["ts"]) + tc_.ns(dyn["dur"]))

    def test_threads(self):
        d = self.doc
        names = tc_.thread_names(d)
        outer, = tc_.events(d, name="outer")
        self.assertEqual(names[outer["tid"]], "main-thread")
        work = tc_.events(d, name="work")
        tids = {e["tid"] for e in work}
        self.assertEqual(len(tids), 4)
        self.assertNotIn(outer["tid"], tids)
        for tid in tids:
            mine = [e for e in work if e["tid"] == tid]
            self.assertEqual(len(mine), 1000)
            k = mine[0]["args"]["worker"]
            self.assertEqual(names[tid], "worker-%d" % k)
            self.assertEqual([e["args"]["i"] for e in mine], list(range(1000)))
            subs = [e for e in tc_.events(d, name="sub") if e["tid"] == tid]
            self.assertEqual(len(subs), 1000)
            for w, s in zip(mine, subs):
                self.assertTrue(tc_.contains(w, s))

    def test_unfinished_and_gpu_fallback(self):
        u, = tc_.events(self.doc, name="unfinished_scope")
        self.assertEqual(u["args"], {"unfinished": 1})
        self.assertGreaterEqual(tc_.ns(u["dur"]), 1000)
        g, = tc_.events(self.doc, name="gpu_wanted")
        self.assertEqual(g["cat"], "user_annotation")
        self.assertFalse(tc_.events(self.doc, cat="gpu_user_annotation"))

    def test_discard_and_restart(self):
        d = tc_.load(os.path.join(self.tmp.name, "discard-r2.json"))
        tc_.check_format(self, d)
        names = [e["name"] for e in tc_.events(d, ph="X")]
        self.assertEqual(names, ["kept"])
        d = tc_.load(os.path.join(self.tmp.name, "restart.json"))
        self.assertEqual([e["name"] for e in tc_.events(d, ph="X")], ["after_restart"])
        self.assertEqual(d["distributedInfo"]["rank"], 2)

    def test_missing_folder_is_made(self):
        # the pattern named no/such/dir/x.json under a folder that did not exist: made, and written
        d = tc_.load(os.path.join(self.tmp.name, "no", "such", "dir", "x.json"))
        tc_.check_format(self, d)
        self.assertEqual([e["name"] for e in tc_.events(d, ph="X")], ["kept"])
        # the two refused targets (a path under a file, a folder) left nothing behind
        self.assertEqual(sorted(os.listdir(self.tmp.name)),
                         ["discard-r2.json", "main-2-1-0-3-8.json", "no", "restart.json"])
        self.assertEqual(os.listdir(os.path.join(self.tmp.name, "no")), ["such"])
        rows = tc_.hta_cpu_ops(self, os.path.join(self.tmp.name, "main-2-1-0-3-8.json"))
        self.assertEqual({r["name"]: r["count"] for r in rows}["work"], 4000)

    def test_atexit_env_naming(self):
        with tempfile.TemporaryDirectory() as tmp:
            run(["atexit"], RANK="5", WORLD_SIZE="16", HTA_TRACE_DP="2", HTA_TRACE_PP="1",
                HTA_TRACE_TP="0", HTA_TRACE_FILE=tmp + "/t-{rank}-{dp}-{pp}-{tp}.json")
            self.assertEqual(os.listdir(tmp), ["t-5-2-1-0.json"])
            d = tc_.load(tmp + "/t-5-2-1-0.json")
            tc_.check_format(self, d)
            self.assertEqual(d["distributedInfo"]["rank"], 5)
            self.assertEqual(d["distributedInfo"]["world_size"], 16)
            sc = tc_.events(d, name="atexit_scope")
            self.assertEqual([e["args"]["i"] for e in sc], [0, 1, 2])
            self.assertEqual(len(tc_.events(d, ph="i", name="atexit_tick")), 3)

    def test_default_pattern_and_disabled(self):
        with tempfile.TemporaryDirectory() as tmp:
            e = tc_.clean_env(HTA_TRACE_DP="3", HTA_TRACE_PP="4", HTA_TRACE_TP="5")
            subprocess.run([os.path.abspath(BIN), "atexit"], cwd=tmp, env=e, check=True, timeout=60)
            self.assertEqual(os.listdir(tmp), ["benchmark-data-3-pipeline-4-tensor-5-rank-0.json"])
        with tempfile.TemporaryDirectory() as tmp:
            run(["atexit"], HTA_TRACE="0", HTA_TRACE_FILE=tmp + "/x.json")
            self.assertEqual(os.listdir(tmp), [])
            run(["atexit"], HTA_TRACE_ATEXIT="0", HTA_TRACE_FILE=tmp + "/x.json")
            self.assertEqual(os.listdir(tmp), [])

    def test_cap(self):
        with tempfile.TemporaryDirectory() as tmp:
            run(["cap", tmp])
            d = tc_.load(tmp + "/cap.json")
            tc_.check_format(self, d)
            n = len(tc_.events(d, name="capped"))
            self.assertGreater(n, 0)
            self.assertEqual(n + d["htaTracer"]["dropped_events"], 5000)
            self.assertFalse([e for e in tc_.events(d, name="capped") if "unfinished" in e["args"]])

    def test_gpu_fake_runtime(self):
        with tempfile.TemporaryDirectory() as tmp:
            run(["gpu", tmp], HTA_TRACE_CUDART=FAKE_CUDA, FAKE_CUDA_LATENCY_NS="3000")
            d = tc_.load(tmp + "/gpu.json")
            tc_.check_format(self, d)
            tc_.check_nesting(self, d)
            cpu = tc_.events(d, cat="user_annotation")
            gpu = tc_.events(d, cat="gpu_user_annotation")
            self.assertEqual([e["name"] for e in gpu],
                             ["gpu_step", "gpu_inner"] * 3 + ["gpu_after_flush"])
            self.assertEqual([e["name"] for e in cpu], [e["name"] for e in gpu])
            dts, ddur = [], []
            for c, g in zip(cpu, gpu):
                self.assertEqual((g["pid"], g["tid"]), (0, 7))       # device 0, default stream id
                self.assertEqual(g["args"]["cpu_tid"], c["tid"])
                dts.append(abs(tc_.ns(g["ts"]) - tc_.ns(c["ts"])))
                ddur.append(abs(tc_.ns(g["dur"]) - tc_.ns(c["dur"])))
            # the fake GPU runs 3 us behind; calibration puts it within a few us.  The median of the scopes, with
            # 50 us of slack (sanitized builds are slow between the CPU stamp and the record), and every scope
            # within 5 ms: a busy machine may preempt the thread between the two stamps of one scope
            for d_ in (dts, ddur):
                self.assertLess(sorted(d_)[len(d_) // 2], 50000, (dts, ddur))
                self.assertLess(max(d_), 5000000, (dts, ddur))
            self.assertEqual([g["args"].get("i") for g in gpu if g["name"] == "gpu_step"], [0, 1, 2])
            meta = tc_.events(d, ph="M")
            self.assertIn({"ph": "M", "name": "thread_name", "pid": 0, "tid": 7,
                           "args": {"name": "stream 7"}}, meta)
            self.assertIn({"ph": "M", "name": "process_name", "pid": 0, "tid": 0,
                           "args": {"name": "GPU 0"}}, meta)


if __name__ == "__main__":
    unittest.main()
