"""htad's metrics: sampled every --interval-ms from /proc and, through the fake NVML and DCGM libraries
(tests/daemon/fake_nvml.c, fake_dcgm.c, as the tracer's tests fake the CUDA runtime), per GPU; GET
/metrics is valid Prometheus text (`promtool check metrics`, Prometheus' own checker) with the fake's
figures; htaMetrics gives the window as JSON lines; without NVML there are host figures only."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402


def values(text):
    out = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, v = line.rsplit(" ", 1)
            out[name] = float(v)
    return out


class Metrics(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = ht.Daemon("--interval-ms", "100", env={"FAKE_NVML_GPUS": "2", "FAKE_NVML_UTIL": "42",
                                                       "FAKE_NVML_MEM_USED_MB": "20480",
                                                       "FAKE_DCGM_SM_ACTIVE": "0.09"})
        time.sleep(0.5)

    @classmethod
    def tearDownClass(cls):
        assert cls.d.stop() == 0
        shutil.rmtree(cls.d.tmp, ignore_errors=True)

    def test_promtool(self):
        head, body = self.d.metrics_text()
        self.assertIn("200 OK", head)
        self.assertIn("text/plain; version=0.0.4", head)
        promtool = shutil.which("promtool")
        self.assertIsNotNone(promtool, "promtool (Debian package prometheus) is needed")
        p = subprocess.run([promtool, "check", "metrics"], input=body, capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        v = values(body)
        for g in ("0", "1"):
            self.assertEqual(v[f'hta_gpu_utilization_ratio{{gpu="{g}"}}'], 0.42)
            self.assertEqual(v[f'hta_gpu_memory_used_bytes{{gpu="{g}"}}'], 20480 << 20)
            self.assertEqual(v[f'hta_gpu_memory_total_bytes{{gpu="{g}"}}'], 81920 << 20)
            self.assertEqual(v[f'hta_gpu_power_watts{{gpu="{g}"}}'], 250)
            self.assertEqual(v[f'hta_gpu_sm_clock_hertz{{gpu="{g}"}}'], 1410e6)
            self.assertEqual(v[f'hta_gpu_sm_active_ratio{{gpu="{g}"}}'], 0.09)
            self.assertEqual(v[f'hta_gpu_tensor_active_ratio{{gpu="{g}"}}'], 0)
        self.assertTrue(0 <= v["hta_host_cpu_busy_ratio"] <= 1)
        self.assertGreater(v["hta_host_memory_total_bytes"], v["hta_host_memory_used_bytes"])

    def test_window_as_json_lines(self):
        t0 = int(time.time() * 1000)
        time.sleep(0.35)
        head, data = ht.rpc_fetch(self.d.port, {"fn": "htaMetrics", "since_ms": t0})
        self.assertEqual(head["status"], "ok")
        lines = [json.loads(x) for x in data.decode().splitlines()]
        self.assertGreaterEqual(len(lines), 2)
        for x in lines:
            self.assertGreaterEqual(x["t_ms"], t0)
            self.assertEqual(x["host"], "testhost")
            self.assertEqual([g["gpu"] for g in x["gpus"]], [0, 1])
            self.assertEqual(x["gpus"][1]["util"], 0.42)
            self.assertEqual(x["gpus"][1]["tensor_active"], 0)
        self.assertEqual(sorted(lines, key=lambda x: x["t_ms"]), lines)

    def test_http_errors(self):
        import socket
        for req, status in ((b"GET /other HTTP/1.0\r\n\r\n", b"404"), (b"POST /metrics HTTP/1.0\r\n\r\n", b"405"),
                            (b"GET /metrics HTTP/1.0\r\n" + b"X: " + b"a" * 9000 + b"\r\n\r\n", b"431")):
            with socket.create_connection(("127.0.0.1", self.d.http), timeout=10) as s:
                s.sendall(req)
                self.assertIn(status, s.recv(100))


class NoGpu(unittest.TestCase):
    def test_host_only(self):
        d = ht.Daemon("--nvml-lib", "/nonexistent/libnvidia-ml.so.1", "--dcgm-lib", "/nonexistent/libdcgm.so",
                      "--interval-ms", "100", nvml=False)
        try:
            time.sleep(0.3)
            body = d.metrics_text()[1]
            self.assertIn("hta_host_cpu_busy_ratio", body)
            self.assertNotIn("hta_gpu_", body)
            self.assertIn("NVML: /nonexistent/libnvidia-ml.so.1", d.logtext())
        finally:
            self.assertEqual(d.stop(), 0)
            shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
