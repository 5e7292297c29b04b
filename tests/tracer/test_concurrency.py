"""Scopes that do not nest on a thread, and processes that fork: fork() while another thread flushes (no
child may hang, each writes only its own events under its own pid), spans ended out of order or on
another thread (each on a track where it nests), and asyncio tasks whose scopes overlap (each task ends
its own scopes, with its own durations)."""
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck as tc_  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

STRIDE = 4194304  # track k of thread tid is written as tid + k * STRIDE


def run_c(mode, outdir):
    e = tc_.clean_env()
    e.pop("LD_PRELOAD", None)
    e.pop("ASAN_OPTIONS", None)
    p = subprocess.run([tc_.TEST_TRACER, mode, outdir], env=e, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise AssertionError("test-tracer %s failed (%d):\n%s%s" % (mode, p.returncode, p.stdout, p.stderr))
    return p.stdout


def run_py(code, **env):
    e = tc_.clean_env(HTATRACE_LIB=tc_.LIB, PYTHONPATH=os.path.join(tc_.ROOT, "python"), **env)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, capture_output=True, text=True,
                       timeout=120)
    if p.returncode != 0:
        raise AssertionError("script failed (%d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    return p


def ms(e):
    return tc_.ns(e["dur"]) / 1e6


class Fork(testlib.TempDirTest):
    def check_child(self, path, pid, i, name="child_scope"):
        d = tc_.load(path)
        tc_.check_format(self, d)
        self.assertEqual(d["htaTracer"]["pid"], pid)
        x = tc_.events(d, ph="X")
        self.assertEqual([(e["name"], e["pid"], e["args"]["i"]) for e in x], [(name, pid, i)])
        self.assertNotIn("unfinished", x[0]["args"])
        return d

    def test_c_fork_while_flushing(self):
        # test-tracer fork: a thread flushes without pause while the main thread forks 20 children that
        # record and exit(); it fails if any child is not gone within 30 s
        t0 = time.monotonic()
        out = run_c("fork", self.dir)
        self.assertLess(time.monotonic() - t0, 60)
        kids = {int(b): int(a) for a, b in (line.split() for line in out.splitlines())}
        self.assertEqual(sorted(kids.values()), list(range(20)))
        files = sorted(os.listdir(self.dir))
        self.assertEqual(len(files), 21, files)
        parent = [f for f in files if int(f[5:-5]) not in kids]
        self.assertEqual(len(parent), 1)
        for pid, i in kids.items():
            d = self.check_child(os.path.join(self.dir, "fork-%d.json" % pid), pid, i)
            self.assertEqual(d["traceEvents"][-1]["name"], "child_tick")
            self.assertEqual(tc_.events(d, ph="X")[0]["args"]["pid"], pid)
        d = tc_.load(os.path.join(self.dir, parent[0]))
        self.assertEqual([e["name"] for e in tc_.events(d, ph="X")], ["parent_pre"] * 3 + ["parent_open_at_fork"])
        self.assertEqual(tc_.events(d, name="parent_open_at_fork")[0]["args"], {})  # ended in the parent
        rows = tc_.hta_cpu_ops(self, os.path.join(self.dir, "fork-%d.json" % pid))
        self.assertEqual([(r["name"], r["count"]) for r in rows], [("child_scope", 1)])

    def test_python_fork_while_flushing(self):
        out = run_py("""
            import os, threading, time, htatrace as t
            t.init(file_pattern=%r + "/py-{pid}.json", flush_at_exit=0)
            with t.scope("parent_pre"):
                pass
            stop = False
            def flusher():
                while not stop:
                    t.flush()
            th = threading.Thread(target=flusher)
            th.start()
            kids = {}
            with t.scope("parent_around_fork", ctx={"who": "parent"}):
                for i in range(20):
                    pid = os.fork()
                    if pid == 0:
                        assert t.get("who") == "parent"   # the child is a copy: the context is there
                        with t.scope("child", i=i):
                            pass
                        t.flush()                         # would hang on a lock the flusher held
                        os._exit(0)
                    kids[pid] = i
            deadline = time.monotonic() + 30
            while kids and time.monotonic() < deadline:
                pid, st = os.waitpid(-1, os.WNOHANG)
                if pid:
                    assert st == 0, st
                    print(pid, kids.pop(pid))
                else:
                    time.sleep(0.01)
            stop = True
            th.join()
            assert not kids, "hung: %%r" %% kids
        """ % self.dir).stdout
        kids = {int(a): int(b) for a, b in (line.split() for line in out.splitlines())}
        self.assertEqual(sorted(kids.values()), list(range(20)))
        for pid, i in kids.items():
            self.check_child(os.path.join(self.dir, "py-%d.json" % pid), pid, i, "child")

    def test_child_never_replaces_the_parents_file(self):
        # no {pid} in the pattern: the children find the parent's file and write beside it
        out = run_py("""
            import os, htatrace as t
            t.init(file_pattern=%r + "/same.json")
            with t.scope("parent"):
                pass
            t.flush()
            pids = []
            for i in range(5):
                pid = os.fork()
                if pid == 0:
                    with t.scope("child", i=i):
                        pass
                    print(t.flush(), flush=True)
                    os._exit(0)
                os.waitpid(pid, 0)
                pids.append(pid)
            print(" ".join(map(str, pids)))
        """ % self.dir).stdout.split("\n")
        pids = list(map(int, out[5].split()))
        self.assertEqual(out[:5], [os.path.join(self.dir, "same.%d.json" % (i + 1)) for i in range(5)])
        d = tc_.load(os.path.join(self.dir, "same.json"))
        self.assertEqual([e["name"] for e in tc_.events(d, ph="X")], ["parent"])
        for i, pid in enumerate(pids):
            self.check_child(os.path.join(self.dir, "same.%d.json" % (i + 1)), pid, i, "child")


class Spans(unittest.TestCase):
    def test_c_spans(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_c("spans", tmp)
            path = os.path.join(tmp, "spans.json")
            d = tc_.load(path)
            tc_.check_format(self, d)
            tc_.check_nesting(self, d)  # every track nests
            ev = {e["name"]: e for e in tc_.events(d, ph="X")}
            loop = ev["loop_iteration"]
            tid = loop["tid"]
            a, b = ev["task_a"], ev["task_b"]
            # a: 1 ms alone + 1 ms with b; b: 1 ms with a, 2 ms after, 0.1 ms of inside_b (busy waits:
            # lower bounds); a began first and ended first
            self.assertGreaterEqual(ms(a), 2.0)
            self.assertGreaterEqual(ms(b), 3.1)
            end = lambda e: tc_.ns(e["ts"]) + tc_.ns(e["dur"])  # noqa: E731
            self.assertLess(tc_.ns(a["ts"]), tc_.ns(b["ts"]))
            self.assertLess(end(a), end(b))
            self.assertLess(end(a), tc_.ns(ev["inside_b"]["ts"]))
            self.assertEqual(a["tid"], tid)
            self.assertTrue(tc_.contains(loop, a))
            self.assertEqual(b["tid"], tid + STRIDE)  # overlaps a without nesting: a track of its own
            self.assertEqual(tc_.thread_names(d)[tid + STRIDE], "loop (track 1)")
            self.assertEqual(a["args"], {"task": 1, "result": 42})  # the end's value; the second end ignored
            self.assertEqual(b["args"], {"task": 2})
            # b_child names b as parent: it nests in b on b's track, though by time it is inside a too
            bc = ev["b_child"]
            self.assertEqual(bc["tid"], b["tid"])
            self.assertTrue(tc_.contains(b, bc))
            self.assertGreaterEqual(ms(bc), 0.5)
            self.assertEqual(ev["inside_b"]["tid"], tid)
            self.assertEqual(ev["cross_thread"]["tid"], tid)
            self.assertEqual(ev["cross_thread"]["args"], {"ended_by": "other thread"})
            self.assertGreaterEqual(ms(ev["cross_thread"]), 0.2)
            self.assertEqual(ev["open_span"]["args"], {"unfinished": 1})
            rows = tc_.hta_cpu_ops(self, path)
            self.assertEqual(sorted(r["name"] for r in rows), sorted(ev))


class Asyncio(unittest.TestCase):
    def test_tasks_end_their_own_scopes(self):
        with tempfile.TemporaryDirectory() as tmp:
            run_py("""
                import asyncio, htatrace as t
                t.init(file_pattern=%r + "/aio.json")
                t.thread_name("loop")

                async def task_a():
                    with t.scope("A", ctx={"who": "a"}, slots=["got"]):
                        await asyncio.sleep(0.05)            # B opens its scope meanwhile
                        assert t.get("who") == "a"
                        t.set("got", "a")
                    assert t.depth() == 1                    # main's scope, not B's

                async def task_b():
                    await asyncio.sleep(0.01)
                    with t.scope("B", ctx={"who": "b"}, slots=["got"]):
                        assert t.get("who") == "b"
                        assert t.get("outer") == 1          # the creator's scope, open at creation
                        await asyncio.sleep(0.3)
                        t.set("got", "b")

                @t.scope("decorated_coroutine", kind="async", n=3)
                async def decorated():
                    await asyncio.sleep(0.03)

                async def main():
                    with t.scope("main", ctx={"outer": 1}):
                        await asyncio.gather(task_a(), task_b(), decorated())
                    assert t.depth() == 0

                asyncio.run(main())
                t.flush()
            """ % tmp)
            path = os.path.join(tmp, "aio.json")
            d = tc_.load(path)
            tc_.check_format(self, d)
            tc_.check_nesting(self, d)
            ev = {e["name"]: e for e in tc_.events(d, ph="X")}
            a, b, m, dec = ev["A"], ev["B"], ev["main"], ev["decorated_coroutine"]
            # A lasts its 50 ms sleep, B its 300 ms (when B's end closed the innermost scope instead of
            # its own: A 310 ms, B 40 ms); upper bounds with 200 ms of slack for a loaded machine
            self.assertGreaterEqual(ms(a), 50)
            self.assertLess(ms(a), 250)
            self.assertGreaterEqual(ms(b), 300)
            self.assertGreaterEqual(ms(dec), 30)
            self.assertLess(ms(dec), 230)
            self.assertGreaterEqual(ms(m), 310)
            self.assertEqual(a["args"], {"got": "a"})
            self.assertEqual(b["args"], {"got": "b"})
            self.assertEqual(dec["args"], {"kind": "async", "n": 3})
            for e in (a, b, dec):
                self.assertTrue(m["ts"] <= e["ts"] and tc_.ns(e["ts"]) + tc_.ns(e["dur"]) <=
                                tc_.ns(m["ts"]) + tc_.ns(m["dur"]))
            # overlapping tasks of one thread: on tracks of that thread, each track nesting
            tid = m["tid"]
            self.assertEqual(a["tid"], tid)
            self.assertEqual({b["tid"], dec["tid"]}, {tid + STRIDE, tid + 2 * STRIDE})
            names = tc_.thread_names(d)
            self.assertEqual(names[tid], "loop")
            self.assertEqual(names[tid + STRIDE], "loop (track 1)")
            tc_.hta_cpu_ops(self, path)


if __name__ == "__main__":
    unittest.main()
