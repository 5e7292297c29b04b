"""htac's frames against Python HTA's goldens: TraceAnalysis(hta_compat=True) called with each golden's
arguments on every folder of tests/data/hta gives HTA's frames (columns, index, dtypes, values), one test
per analysis (tests/python/golden_frames.py does the comparing)."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyhelp  # noqa: F401,E402 - sets the paths

ANALYSES = ["temporal_breakdown", "idle_time_breakdown", "gpu_kernel_breakdown", "comm_comp_overlap",
            "cuda_kernel_launch_stats", "gpu_user_annotation_breakdown", "queue_length_summary",
            "memory_bw_summary", "time_spent_blocked_on_full_queue", "frequent_cuda_kernel_sequences",
            "aten_op_kernels_and_delay", "cupti_counter_data_with_operators", "profiler_steps",
            "potential_stragglers", "critical_path"]


class GoldenFrames(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        import golden_frames as gf
        per = {}
        for rel in gf.folders():
            gf.check_folder(rel, ANALYSES, per)
        cls.total = {an: v[0] for an, v in per.items()}
        cls.bad = {an: v[1] for an, v in per.items()}
        m, n, bad = gf.check_diff()
        cls.total["trace_diff"], cls.bad["trace_diff"] = n, bad

    def check(self, an):
        self.assertGreater(self.total.get(an, 0), 0, f"no golden of {an} was compared")
        self.assertEqual(self.bad.get(an, []), [])


def _make(an):
    return lambda self: self.check(an)


for _an in ANALYSES + ["trace_diff"]:
    setattr(GoldenFrames, "test_" + _an, _make(_an))
