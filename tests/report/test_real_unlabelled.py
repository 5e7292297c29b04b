#!/usr/bin/env python3
"""hta report on real traces nobody labelled for it (tests/data/real: TraceLens's test traces), each showing one
shape the engine must read from what the trace records (docs/report.md, "Causes and savings"):

- H100 and MI300 Qwen inference: the GPU 91-92% busy with a launch queue of 44-60 kernels, no cuda_sync records,
  a first torch.cuda.synchronize() waiting 14 ms for work queued before the trace: gpu_compute first, and the
  critical path through the GPU (no unclassified segment);
- an MI300 cold start: the first hipLaunchKernel calls load code for 0.1-0.33 s each, 92% of the trace:
  host_blocking first, saving the time they block;
- TimeSformer on H100: the pipeline's preprocess runs 217 ms before any kernel, no DataLoader range: data
  loading (input preparation), saving that time;
- vLLM's piecewise CUDA-graph capture: capture_trace alone, no saving."""
import json
import os
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
REAL = os.path.join(ROOT, "tests", "data", "real")


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def run(*args):
    p = subprocess.run([HTA, *args, "--format", "json", "--quiet"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


class Unlabelled(unittest.TestCase):
    def test_gpu_bound_inference_is_gpu_compute(self):
        for d in ("h100_qwen", "mi300_qwen"):
            f = rows(run("report", os.path.join(REAL, d))["findings"])
            self.assertEqual(f[0]["cause"], "gpu_compute", d)
            self.assertGreater(f[0]["saving_pct"], 10, d)
            s = {r["bound_by"]: r["percentage"] for r in rows(run("critical-path", os.path.join(REAL, d))["summary"])}
            self.assertNotIn("", s, d)
            self.assertGreater(s["gpu_compute_bound"], 80, d)

    def test_cold_start_is_host_blocking_with_its_time(self):
        f = rows(run("report", os.path.join(REAL, "mi300_cold_start"))["findings"])
        self.assertEqual(f[0]["cause"], "host_blocking")
        self.assertIn("hipLaunchKernel x9", f[0]["evidence"])
        self.assertIn("code loading on a kernel's first launch", f[0]["what_to_do"])
        self.assertGreater(f[0]["saving_pct"], 85)  # the launches block 1.09 s of 1.18 s

    def test_input_preparation_is_data_loading(self):
        f = rows(run("report", os.path.join(REAL, "h100_timesformer"))["findings"])
        self.assertEqual(f[0]["cause"], "data_loading")
        self.assertIn("input preparation: transformers/pipelines/video_", f[0]["evidence"])
        self.assertAlmostEqual(f[0]["saving_pct"], 56.8, delta=2)  # 217.5 ms of 383.0 ms

    def test_piecewise_capture_is_a_capture(self):
        f = rows(run("report", os.path.join(REAL, "vllm_piecewise_capture"))["findings"])
        self.assertEqual([(x["cause"], x["saving_pct"]) for x in f], [("capture_trace", None)])
        self.assertIn("361 of them recorded into a graph", f[0]["evidence"])


if __name__ == "__main__":
    unittest.main()
