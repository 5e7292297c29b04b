"""End to end with the real, unmodified libkineto (../shared/third_party/kineto, built by its build.sh
into build-kineto/ by `make`): client processes (tests/daemon/kineto_client.cpp) record CPU operators;
htad is started, `hta capture localhost` triggers them, and valid traces arrive in DIR and load in hta;
several clients at once; a client that exits mid-trace is named as lost; the iteration form works.
The only skip of the daemon's tests: when ../shared/third_party/kineto is not beside the repository."""
import json
import os
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402



class Kineto(ht.KinetoCase):
    def test_capture_several_clients_one_exits(self):
        a, b, c = self.start("30"), self.start("30"), self.start("30", "exit-when-tracing")
        self.wait_registered(3)
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.run([ht.HTA, "capture", "localhost:%d" % self.d.port, "-o", out, "--start-delay-ms",
                                "2500", "--warmup-s", "0", "--duration-ms", "500", "--timeout-ms", "15000"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 1, p.stdout + p.stderr)
            self.assertEqual(c.wait(20), 3)
            self.assertIn(f"no trace from localhost pid {c.pid} (lost: process {c.pid} stopped polling", p.stderr)
            files = sorted(f for f in os.listdir(out) if f.endswith(".json"))
            self.assertEqual(files, sorted(f"localhost-{self.d.port}_{x.pid}.json" for x in (a, b)))
            for f in files:
                with open(os.path.join(out, f)) as fh:
                    trace = json.load(fh)
                names = [e.get("name", "") for e in trace["traceEvents"]]
                self.assertIn("aten::mm", names)
                self.assertTrue(any(n.startswith("ProfilerStep#") for n in names))
            info = subprocess.run([ht.HTA, "cpu-ops", out, "--format", "json"], capture_output=True, text=True)
            self.assertEqual(info.returncode, 0, info.stderr)
            ops = json.loads(info.stdout)
            self.assertIn("aten::mm", json.dumps(ops))
            with open(os.path.join(out, "metrics", f"localhost-{self.d.port}.metrics.jsonl")) as fh:
                lines = [json.loads(x) for x in fh]
            self.assertGreater(len(lines), 5)
            self.assertEqual(len(lines[0]["gpus"]), 2)

    def test_iterations(self):
        a = self.start("30")
        self.wait_registered(1)
        with tempfile.TemporaryDirectory() as out:
            p = subprocess.run([ht.HTA, "capture", "localhost:%d" % self.d.port, "-o", out, "--iterations", "5",
                                "--warmup-s", "0", "--timeout-ms", "20000", "--report"],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
            with open(os.path.join(out, f"localhost-{self.d.port}_{a.pid}.json")) as fh:
                trace = json.load(fh)
            steps = {e["name"] for e in trace["traceEvents"] if e.get("name", "").startswith("ProfilerStep#")}
            self.assertGreaterEqual(len(steps), 4)
            self.assertIn("findings", p.stdout)


if __name__ == "__main__":
    unittest.main()
