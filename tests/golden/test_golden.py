"""HTA's golden results (tests/golden/hta), a test per analysis: with --hta-compat, hta's tables on every
golden trace folder equal HTA's (all 320); in the default mode they differ only as
tests/golden/expected/default.txt lists and explains.  GoldenRealDiag: --hta-compat on the real traces of
tests/data/real-diag (tests/golden/real-diag), differences only as expected/real-diag-compat.txt lists."""
import os
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import check  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
ANALYSES = ["temporal_breakdown", "idle_time_breakdown", "gpu_kernel_breakdown", "comm_comp_overlap",
            "cuda_kernel_launch_stats", "gpu_user_annotation_breakdown", "potential_stragglers",
            "aten_op_kernels_and_delay", "queue_length_summary", "memory_bw_summary",
            "time_spent_blocked_on_full_queue", "frequent_cuda_kernel_sequences",
            "cupti_counter_data_with_operators", "critical_path"]


class Golden(unittest.TestCase):
    """--hta-compat: every golden table equal."""
    default = False

    def golden(self, analysis):
        summary, problems = check.check(HTA, [analysis], self.default)
        self.assertEqual(problems, [], "\n".join(summary))
        if not self.default:
            self.assertRegex(summary[0], r"matched (\d+)/\1 golden tables")


class GoldenDefault(Golden):
    """The default mode: every difference listed with its cause."""
    default = True


class GoldenRealDiag(unittest.TestCase):
    """--hta-compat on the 12 real traces of tests/data/real-diag against HTA's results there
    (tests/golden/real-diag): every table equal but those listed in expected/real-diag-compat.txt."""

    def golden(self, analysis):
        summary, problems = check.check(HTA, [analysis], False, real_diag=True)
        self.assertEqual(problems, [], "\n".join(summary))


def _test(analysis):
    return lambda self: self.golden(analysis)


for _a in ANALYSES:
    setattr(Golden, "test_" + _a, _test(_a))
    setattr(GoldenDefault, "test_" + _a, _test(_a))
    setattr(GoldenRealDiag, "test_" + _a, _test(_a))

if __name__ == "__main__":
    unittest.main()
