"""hta launch / annotations / stragglers / ops: asserting tests (test-expectations F, J, M and HTA's
failing cases; the golden tables themselves: tests/golden/test_golden.py)."""
import collections
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
T = os.path.join(ROOT, "tests", "data", "hta")
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")


hta = testlib.hta


def rows(table, *args):
    """hta ARGS --format json: the table's rows as dicts."""
    t = json.loads(hta(*args, "--format", "json", "--quiet").stdout)[table]
    return [dict(zip(t["columns"], r)) for r in t["data"]]


class Launch(unittest.TestCase):
    def test_ns_resolution_counts(self):
        """HTA's outlier counts (test-expectations F), with --hta-compat (its whole-us rounding)."""
        s = rows("launch_summary", "launch", os.path.join(T, "ns_resolution_trace"), "--hta-compat")
        self.assertEqual(s, [dict(s[0], rank=0, launches=4876, short_kernels=2173, runtime_outliers=663,
                                  launch_delay_outliers=4713)])

    def test_ns_resolution_per_launch_flags(self):
        """The per-launch flags sum to the counts."""
        r = rows("cuda_kernel_launch_stats", "launch", os.path.join(T, "ns_resolution_trace"), "--hta-compat")
        self.assertEqual(len(r), 4876)
        self.assertEqual(sum(x["short_kernel"] for x in r), 2173)
        self.assertEqual(sum(x["launch_delay_outlier"] for x in r), 4713)
        self.assertEqual(round(sum(x["cpu_duration"] for x in r)), 192088)
        self.assertEqual(round(sum(x["launch_delay"] for x in r)), 322052817)

    def test_no_memory_and_cutoffs(self):
        (s,) = rows("launch_summary", "launch", os.path.join(T, "ns_resolution_trace"), "--hta-compat", "--no-memory",
                    "--runtime-cutoff", "10", "--launch-delay-cutoff", "1000")
        self.assertEqual((s["launches"], s["runtime_outliers"], s["short_kernels"], s["launch_delay_outliers"],
                          s["runtime_cutoff_us"]), (3480, 694, 985, 3472, 10))

    def test_alexnet_counts(self):
        s = rows("launch_summary", "launch", os.path.join(T, "critical_path", "alexnet"))[0]
        self.assertEqual((s["launches"], s["runtime_outliers"], s["launch_delay_outliers"], s["short_kernels"]),
                         (98, 11, 43, 23))

    def test_amd(self):
        """HIP launches: every kernel and copy of the ROCm trace has its launch row (hipLaunchKernel,
        hipExtModuleLaunchKernel, hipMemcpyWithStream); HTA's names know none of them (--hta-compat: empty)."""
        r = rows("cuda_kernel_launch_stats", "launch", os.path.join(T, "amd_trace"))
        self.assertEqual(len(r), 16)  # 14 kernels + 2 copies, each launched by a HIP call of the trace
        self.assertEqual(len({x["correlation"] for x in r}), 16)
        self.assertEqual(rows("cuda_kernel_launch_stats", "launch", os.path.join(T, "amd_trace"), "--hta-compat"), [])


class Annotations(unittest.TestCase):
    """test-expectations J."""

    def test_gpu(self):
        r = rows("gpu_user_annotation_breakdown", "annotations", os.path.join(T, "ns_resolution_trace"), "--hta-compat")
        self.assertEqual([(x["name"], x["sum (us)"], x["count"]) for x in r],
                         [("## backward ##", 81, 3), ("DistributedDataParallel.forward", 123880, 4),
                          ("Optimizer.step#SGD.step", 3334, 3)])
        self.assertAlmostEqual(r[1]["stddev"], 976.649033, delta=1e-5)

    def test_others_keep_true_statistics(self):
        """Names folded into "others" keep their true statistics (Quirk A1 fixed), in the file's exact times
        (HTA's whole-us figures: others 111575, max 969, min 17028)."""
        r = rows("gpu_user_annotation_breakdown", "annotations", os.path.join(T, "ns_resolution_trace"), "--cpu",
                 "--top", "5", "--allow", "Optimizer")
        by = {x["name"]: x for x in r}
        self.assertEqual(len(r), 8)
        self.assertEqual((r[-1]["name"], r[-1]["count"]), ("others", 34))
        self.assertAlmostEqual(r[-1]["sum (us)"], 111599.440, places=6)
        self.assertEqual(by["Optimizer.step#SGD.step"]["max (us)"], 969.032)
        self.assertEqual(by["## backward ##"]["min (us)"], 17028.837)

    def test_none_empty(self):
        self.assertEqual(rows("gpu_user_annotation_breakdown", "annotations", os.path.join(T, "cpu_only")), [])


class Stragglers(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        """4 generated ranks, rank 2 straggling, 3 steps (2 complete)."""
        cls.tmp = tempfile.mkdtemp(prefix="hta-launch-test-")
        cls.gen = os.path.join(cls.tmp, "gen")
        subprocess.run([sys.executable, GEN, "--out", cls.gen, "--ranks", "4", "--layers", "2", "--steps", "3",
                        "--straggler", "2", "--quiet"], check=True)

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def test_trace_filter_one_candidate(self):
        """test-expectations M."""
        r = rows("potential_stragglers", "stragglers", os.path.join(T, "trace_filter"), "--candidates", "1")
        self.assertEqual([x["rank"] for x in r], [1])

    def test_flagged_in_every_step(self):
        r = rows("potential_stragglers", "stragglers", self.gen)
        self.assertEqual(len(r), 2)
        self.assertEqual((r[0]["rank"], r[0]["flagged_steps"], r[0]["steps"]), (2, 2, 2))
        self.assertLess(r[1]["flagged_steps"], 2)

    def test_metric(self):
        """The metric shows rank 2 starting last; ncclDevKernel is recognised."""
        r = rows("straggler_metric", "stragglers", self.gen)
        self.assertEqual(len(r), 8)
        self.assertTrue(all(x["kernel"].startswith("ncclDevKernel_") for x in r))
        for s in (10, 11):
            self.assertEqual(max((x for x in r if x["step"] == s), key=lambda x: x["start_us"])["rank"], 2)

    def test_one_candidate(self):
        r = rows("potential_stragglers", "stragglers", self.gen, "--candidates", "1")
        self.assertEqual([x["rank"] for x in r], [2])

    def test_hta_compat_finds_no_modern_nccl(self):
        """--hta-compat finds no ncclKernel* on modern NCCL (HTA issue 360)."""
        self.assertEqual(rows("potential_stragglers", "stragglers", self.gen, "--hta-compat"), [])

    def test_steps(self):
        r = rows("straggler_metric", "stragglers", self.gen, "--steps", "11")
        self.assertEqual(len(r), 4)
        self.assertEqual({x["step"] for x in r}, {11})


class Ops(unittest.TestCase):
    def test_mtia(self):
        """test-expectations: aten::mul on MTIA."""
        r = rows("aten_op_kernels_and_delay", "ops", os.path.join(T, "mtia_trace_single_rank"), "--sort-by",
                 "occurrence_count,avg_aten_op_launch_delay")[0]
        self.assertEqual((r["aten_op_name"], r["kernel_sequence"], r["occurrence_count"]),
                         ("aten::mul", "customized_fba_mul_const-dtype_Float", 822))
        self.assertAlmostEqual(r["avg_aten_op_launch_delay"], 1092.545, delta=2)
        self.assertAlmostEqual(r["avg_runtime_delay"], 293.113, delta=2)

    def test_trace_filter_golden_rank1_is_ranks_0_and_1(self):
        """Quirk A5: HTA's rank-1 table = rank 0's and rank 1's op instances merged."""
        ours = collections.defaultdict(dict)
        for d in rows("aten_op_kernels_and_delay", "ops", os.path.join(T, "trace_filter")):
            ours[d["rank"]][(d["aten_op_name"], d["kernel_sequence"])] = d["occurrence_count"]
        with open(os.path.join(ROOT, "tests", "golden", "hta", "trace_filter", "aten_op_kernels_and_delay.json")) as f:
            g = json.load(f)["parts"]["rank_1"]
        for r in g["data"]:
            d = dict(zip(g["columns"], r))
            k = (d["aten_op_name"], d["kernel_sequence"])
            self.assertEqual(ours[0].get(k, 0) + ours[1].get(k, 0), d["occurrence_count"], k)
        self.assertEqual((len(ours[1]), len(g["data"])), (175, 187))

    def test_empty_where_hta_raises(self):
        for d in ["amd_trace", "triton_example", "cupti_profiler", "cpu_only", "trace_file_list"]:
            with self.subTest(trace=d):
                self.assertEqual(rows("aten_op_kernels_and_delay", "ops", os.path.join(T, d), "--hta-compat"), [])

    def test_hip_launches_inside_ops(self):
        """ROCm: the aten ops' HIP launches give their kernel sequences (HTA's pattern misses them)."""
        r = rows("aten_op_kernels_and_delay", "ops", os.path.join(T, "amd_trace"))
        self.assertEqual(len(r), 11)
        self.assertEqual(sum(x["occurrence_count"] for x in r), 13)

    def test_bad_sort_key(self):
        self.assertNotEqual(hta("ops", os.path.join(T, "call_stack"), "--sort-by", "bogus", "--quiet",
                                ok=False).returncode, 0)


if __name__ == "__main__":
    unittest.main()
