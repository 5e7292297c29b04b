"""`hta capture` against htad daemons with stand-in libkineto clients (htadtest.FakeKineto): every host is
asked at once with one start time, every trace and every host's metrics arrive in DIR under names with
host and pid, and they load in hta; a process that never writes its trace, a host that is down, are
named with the reason and the exit status is 1; --hosts-file, --slurm (SLURM_JOB_NODELIST ranges,
SLURM_JOB_ID), usage errors."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402


def capture(*args, env=None):
    e = dict(os.environ)
    e.update(env or {})
    return subprocess.run([ht.HTA, "capture", *args], capture_output=True, text=True, timeout=120, env=e)


class TwoHosts(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="capturetest-")
        self.ds = [ht.Daemon("--interval-ms", "200"), ht.Daemon("--interval-ms", "200")]
        self.cs = []

    def tearDown(self):
        for c in self.cs:
            c.stop()
        for d in self.ds:
            self.assertEqual(d.stop(), 0, d.logtext())
            shutil.rmtree(d.tmp, ignore_errors=True)
        shutil.rmtree(self.tmp, ignore_errors=True)

    def client(self, d, **kw):
        c = ht.FakeKineto(d.ipc, **kw).start()
        self.cs.append(c)
        return c

    def test_all_traces_and_metrics_arrive(self):
        a, b = self.ds
        pids = {d: [self.client(d).pid for _ in range(2)] for d in (a, b)}
        out = os.path.join(self.tmp, "out")
        p = capture(f"localhost:{a.port}", f"localhost:{b.port}", "-o", out, "--start-delay-ms", "0",
                    "--duration-ms", "100", "--timeout-ms", "20000")
        self.assertEqual(p.returncode, 0, p.stderr)
        want = sorted(f"localhost-{d.port}_{pid}.json" for d in (a, b) for pid in pids[d])
        self.assertEqual(sorted(f for f in os.listdir(out) if f.endswith(".json")), want)
        self.assertEqual(sorted(os.listdir(os.path.join(out, "metrics"))),
                         sorted([f"localhost-{a.port}.metrics.jsonl", f"localhost-{b.port}.metrics.jsonl"]))
        for f in want:
            with open(os.path.join(out, f)) as fh:
                self.assertEqual(fh.read(), ht.small_trace(int(f.split("_")[1][:-5])))
        self.assertIn("4 processes on 2 hosts triggered", p.stderr)
        self.assertEqual(p.stdout.count("fetched"), 4)
        # one start time for all: the same PROFILE_START_TIME in every config
        starts = {line for c in self.cs for cfg in c.configs for line in cfg.splitlines()
                  if line.startswith("PROFILE_START_TIME=")}
        self.assertEqual(len(starts), 1)
        info = subprocess.run([ht.HTA, "info", out, "--format", "json"], capture_output=True, text=True)
        self.assertEqual(info.returncode, 0, info.stderr)
        self.assertEqual(len(json.loads(info.stdout)["ranks"]["data"]), 4)
        # the daemons keep them too, with the metrics of the capture
        # (the capture's metrics file follows its last trace into the store, a tick later)
        for d in self.ds:
            self.assertTrue(ht.wait_for(lambda: "testhost.metrics.jsonl" in
                                        [n for _, _, fs in os.walk(d.store) for n in fs], 10))

    def test_missing_trace_and_host_down(self):
        a, b = self.ds
        good = self.client(a)
        bad = self.client(a, write=False)  # gets its config, never writes the trace
        dead = ht.free_port()
        out = os.path.join(self.tmp, "out")
        p = capture(f"localhost:{a.port}", f"localhost:{dead}", "-o", out, "--start-delay-ms", "0",
                    "--duration-ms", "100", "--timeout-ms", "1500")
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"no trace from localhost pid {bad.pid} (timed out)", p.stderr)
        self.assertIn(f"no trace from localhost: localhost:{dead}: Connection refused", p.stderr)
        self.assertIn("2 expected traces did not arrive", p.stderr)
        self.assertEqual(sorted(f for f in os.listdir(out) if f.endswith(".json")),
                         [f"localhost-{a.port}_{good.pid}.json"])

    def test_hosts_file_and_slurm(self):
        a, b = self.ds
        self.client(a, job_id=5)
        self.client(b, job_id=5)
        other = self.client(b, job_id=6)  # another job: not traced
        hf = os.path.join(self.tmp, "hosts")
        with open(hf, "w") as f:
            f.write(f"# the job's hosts\nlocalhost:{a.port}\n\n  localhost:{b.port}  # second\n")
        out = os.path.join(self.tmp, "out")
        p = capture("--hosts-file", hf, "--job-id", "5", "-o", out, "--start-delay-ms", "0",
                    "--duration-ms", "100")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(len([f for f in os.listdir(out) if f.endswith(".json")]), 2)
        out2 = os.path.join(self.tmp, "out2")
        p = capture("--slurm", "--port", str(b.port), "-o", out2, "--start-delay-ms", "0", "--duration-ms", "100",
                    env={"SLURM_JOB_NODELIST": "localhost", "SLURM_JOB_ID": "6"})
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual([f for f in os.listdir(out2) if f.endswith(".json")], [f"localhost-{b.port}_{other.pid}.json"])


class Usage(unittest.TestCase):
    def test_usage_errors(self):
        for args, msg in (((), "no hosts"), (("localhost",), "-o DIR is required"),
                          (("localhost", "-o", "x", "--duration-ms", "abc"), "not a valid number"),
                          (("host:99999", "-o", "x"), "bad host"), (("--slurm", "-o", "x"), "SLURM_JOB_NODELIST")):
            e = dict(os.environ)
            e.pop("SLURM_JOB_NODELIST", None)
            p = subprocess.run([ht.HTA, "capture", *args], capture_output=True, text=True, env=e)
            self.assertEqual(p.returncode, 2, (args, p.stderr))
            self.assertIn(msg, p.stderr)
        p = subprocess.run([ht.HTA, "capture", "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        self.assertLessEqual(max(len(x) for x in p.stdout.splitlines()), 100)

    def test_slurm_ranges(self):
        """gpu[08-10,12]: every name asked (here none answers: each is named with its reason)."""
        with tempfile.TemporaryDirectory() as tmp:
            p = capture("--slurm", "--port", str(ht.free_port()), "-o", tmp, "--timeout-ms", "100",
                        env={"SLURM_JOB_NODELIST": "127.0.0.[8-10,12]"})
            self.assertEqual(p.returncode, 1)
            for h in ("127.0.0.8", "127.0.0.9", "127.0.0.10", "127.0.0.12"):
                self.assertIn(f"no trace from {h}: ", p.stderr)
            self.assertIn("4 expected traces did not arrive", p.stderr)


if __name__ == "__main__":
    unittest.main()
