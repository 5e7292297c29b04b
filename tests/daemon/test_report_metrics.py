"""The report reads htad's metrics (DIR/metrics/HOST.metrics.jsonl, as `hta capture` fetches them) and says
what MAIProf's case study says: SM activity 9% with the tensor cores unused -> mixed precision; half the
GPU memory unused -> a larger batch; the GPU idle every few samples while the CPU is busy -> more
data-loader workers; CPU saturation.  Healthy metrics give no such finding; no metrics folder, no
gpu_metrics table (the report as before)."""
import json
import os
import subprocess
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

GEN = os.path.join(ht.ROOT, "tools", "gen_kineto_trace.py")


def metrics_lines(host, n, sm, tensor, mem_gb, idle_every=0, cpu_idle=0.4, cpu_busy=0.4):
    out = []
    for k in range(n):
        idle = idle_every and k % idle_every == idle_every - 1
        gpus = [{"gpu": g, "util": 0.0 if idle else 0.95, "mem_used_bytes": int(mem_gb * 1e9),
                 "mem_total_bytes": 80_000_000_000, "power_w": 300.0, "sm_clock_mhz": 1410,
                 "mem_clock_mhz": 1593, "sm_active": sm, "tensor_active": tensor} for g in (0, 1)]
        out.append(json.dumps({"t_ms": 1_700_000_000_000 + 1000 * k, "host": host,
                               "cpu_busy": cpu_idle if idle else cpu_busy, "cpu_iowait": 0.0,
                               "mem_used_bytes": 10 ** 10, "mem_total_bytes": 10 ** 11, "gpus": gpus}))
    return "\n".join(out) + "\n"


def report(d):
    p = subprocess.run([ht.HTA, "report", d, "--format", "json", "--no-critical-path"], capture_output=True,
                       text=True)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


rows = testlib.rows


class ReportMetrics(testlib.ClassTempDir):
    @classmethod
    def inputs(cls, tmp):
        cls.dir = os.path.join(tmp, "run")
        subprocess.run([sys.executable, GEN, "--out", cls.dir, "--ranks", "2", "--steps", "3", "--layers", "1",
                        "--seed", "3", "--quiet"], check=True)

    def write(self, text):
        os.makedirs(os.path.join(self.dir, "metrics"), exist_ok=True)
        with open(os.path.join(self.dir, "metrics", "node7.metrics.jsonl"), "w") as f:
            f.write(text)

    def test_maiprof_findings(self):
        # SM 9%, tensor cores 0, 24 of 80 GB used, idle every 5th sample while the CPU is 95% busy (40% else)
        self.write(metrics_lines("node7", 30, 0.09, 0.0, 24, idle_every=5, cpu_idle=0.95, cpu_busy=0.4))
        out = report(self.dir)
        found = [r for r in rows(out["observations"]) if r["area"] == "metrics"]
        text = "\n".join(r["finding"] + " | " + r["what_to_do"] for r in found)
        self.assertIn("host node7 GPU 0: SM activity 9.0%, tensor cores active 0.0% of the time (DCGM, 30 "
                      "samples)", text)
        self.assertIn("mixed precision", text)
        self.assertIn("host node7 GPU 1: at most 24.0 of 80.0 GB GPU memory used (30%)", text)
        self.assertIn("larger batch", text)
        self.assertIn("host node7 GPU 0 idle in 6 of 30 samples, every 5.0 s, while the host CPU is 95% busy "
                      "(40% otherwise)", text)
        self.assertIn("DataLoader workers", text)
        self.assertEqual(len(found), 6)  # three per GPU
        g = rows(out["gpu_metrics"])
        self.assertEqual([(r["host"], r["gpu"], r["samples"], r["idle_samples"]) for r in g],
                         [("node7", 0, 30, 6), ("node7", 1, 30, 6)])
        self.assertAlmostEqual(g[0]["sm_active_pctg"], 9.0)
        self.assertAlmostEqual(g[0]["gpu_util_pctg"], 95 * 24 / 30)
        self.assertAlmostEqual(g[0]["mem_used_max_gb"], 24.0)
        self.assertAlmostEqual(g[0]["cpu_busy_when_idle_pctg"], 95.0)

    def test_html_draws_the_metrics(self):
        self.write(metrics_lines("node7", 30, 0.09, 0.0, 24, idle_every=5, cpu_idle=0.95, cpu_busy=0.4))
        page = os.path.join(self.tmp, "page.html")
        p = subprocess.run([ht.HTA, "report", self.dir, "--html", page, "--quiet", "--no-critical-path"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stderr)
        html = open(page).read()
        self.assertIn('id="metrics"', html)
        for chart in ("metrics-sm", "metrics-mem", "metrics-cpu"):
            body = html.split('id="chart-%s"' % chart, 1)[1].split("</svg>", 1)[0]
            self.assertIn("node7 gpu 0", body)
            self.assertIn("node7 gpu 1", body)
        self.assertIn("SM activity per GPU", html)

    def test_cpu_saturated_and_healthy_gpu(self):
        self.write(metrics_lines("node7", 10, 0.8, 0.5, 70, cpu_busy=0.97))
        found = [r for r in rows(report(self.dir)["observations"]) if r["area"] == "metrics"]
        self.assertEqual([r["finding"] for r in found], ["host node7: CPU busy 97% on average over 10 samples"])

    def test_no_metrics(self):
        d = os.path.join(self.tmp, "plain")
        subprocess.run([sys.executable, GEN, "--out", d, "--ranks", "1", "--steps", "2", "--layers", "1",
                        "--seed", "4", "--quiet"], check=True)
        out = report(d)
        self.assertNotIn("gpu_metrics", out)
        self.assertFalse([r for r in rows(out["observations"]) if r["area"] == "metrics"])


if __name__ == "__main__":
    unittest.main()
