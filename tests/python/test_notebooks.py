"""HTA's example notebooks (trace_analysis_demo, critical_path_analysis, trace_diff_demo,
kernel_breakdown_demo, identify_stragglers) run against htac with only the import changed: each cell's
code is written as in HTA's notebook (`from hta...`), the import rewritten to htac, run, and its results
checked against HTA's goldens or the hta program.  The traces are HTA's test traces, copied to a
temporary folder (generate_trace_with_counters writes beside them)."""
import contextlib
import io
import os
import shutil
import sys
import tempfile
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyhelp  # noqa: E402
from pyhelp import TRACES, cli, golden  # noqa: E402


def migrate(code):
    """The whole migration: the import lines."""
    return code.replace("from hta.", "from htac.").replace("import hta\n", "import htac as hta\n")


def run_cells(cells, env):
    """Runs the cells (HTA's code) after migrate(); stdout and stderr collected in env['_out']."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        for c in cells:
            exec(compile(migrate(textwrap.dedent(c)), "<cell>", "exec"), env)
    env["_out"], env["_err"] = out.getvalue(), err.getvalue()
    return env


class Notebooks(unittest.TestCase):
    def setUp(self):
        self.tmp = tempfile.mkdtemp(prefix="htac-nb-")

    def tearDown(self):
        shutil.rmtree(self.tmp, ignore_errors=True)

    def copy(self, rel):
        dst = os.path.join(self.tmp, rel.replace("/", "_"))
        shutil.copytree(os.path.join(TRACES, rel), dst)
        return dst

    def test_trace_analysis_demo(self):
        env = run_cells([
            """
            from hta.trace_analysis import TraceAnalysis
            analyzer = TraceAnalysis(trace_dir=trace_dir)
            """,
            "time_spent_df = analyzer.get_temporal_breakdown(visualize=False)",
            """
            kernel_type_metrics_df, kernel_metrics_df = analyzer.get_gpu_kernel_breakdown(visualize=False,
                                                                                          duration_ratio=0.8,
                                                                                          num_kernels=5,
                                                                                          include_memory_kernels=True)
            """,
            """
            idle_time_df, interval_stats_df = analyzer.get_idle_time_breakdown(ranks=[0, 1], visualize=False,
                                                                               show_idle_interval_stats=True)
            """,
            "kernel_info_df = analyzer.get_cuda_kernel_launch_stats(ranks=[0, 1], visualize=False)",
            "comm_comp_overlap_df = analyzer.get_comm_comp_overlap(visualize=False)",
            """
            memory_bw_series = analyzer.get_memory_bw_time_series()
            memory_bw_summary = analyzer.get_memory_bw_summary()
            ql_series = analyzer.get_queue_length_time_series()
            ql_summary = analyzer.get_queue_length_summary()
            blocked = analyzer.get_time_spent_blocked_on_full_queue(ql_series)
            """,
            "analyzer.generate_trace_with_counters(ranks=[0])",
            """
            cuda_sequences_df = analyzer.get_frequent_cuda_kernel_sequences(operator_name="aten::linear",
                                                                            output_dir=out_dir)
            """,
        ], {"trace_dir": self.copy("trace_filter"), "out_dir": os.path.join(self.tmp, "out")})
        t = cli("temporal", os.path.join(TRACES, "trace_filter"))["temporal_breakdown"]
        self.assertEqual(list(env["time_spent_df"]["rank"]), [r[0] for r in t["data"]])
        self.assertEqual(list(env["time_spent_df"]["idle_time_pctg"]), [r[5] for r in t["data"]])
        self.assertEqual(sorted(env["kernel_info_df"]), [0, 1])
        self.assertEqual(sorted(env["idle_time_df"]["rank"].unique()), [0, 1])
        self.assertEqual(list(env["memory_bw_series"]), [0])
        self.assertEqual(list(env["ql_summary"].index.names), ["rank", "stream"])
        self.assertTrue(os.path.exists(os.path.join(env["trace_dir"], "sampled_rank-0_with_counters.json.gz")))
        self.assertFalse(os.path.exists(os.path.join(env["trace_dir"], "sampled_rank-1_with_counters.json.gz")))
        # no aten::linear in this trace (the golden's first attempt found 0 rows): HTA's empty frame
        self.assertEqual(env["cuda_sequences_df"].shape, (0, 0))
        g = golden("trace_filter", "frequent_cuda_kernel_sequences")
        df = env["analyzer"].get_frequent_cuda_kernel_sequences(g["args"]["operator_name"], env["out_dir"])
        self.assertEqual(df.shape, tuple(g["parts"]["result"]["shape"]))
        self.assertTrue(os.path.exists(os.path.join(env["out_dir"], "overlaid_sampled_rank-0.json.gz")))
        self.assertFalse(os.path.exists(os.path.join(env["out_dir"], "overlaid_sampled_rank-1.json.gz")))

    def test_critical_path_analysis(self):
        env = run_cells([
            """
            from hta.trace_analysis import TraceAnalysis
            analyzer = TraceAnalysis(trace_dir=trace_dir)
            """,
            """
            annotation = "[param|pytorch.model.alex_net|0|0|0|measure|forward]"
            instance_id = 1  # note this is zero based
            """,
            """
            cp_graph, success = analyzer.critical_path_analysis(
                rank = 0, annotation=annotation, instance_id=instance_id)
            success
            """,
            "summary = cp_graph.summary()",
            "breakdown = cp_graph.get_critical_path_breakdown()",
            "overlaid = analyzer.overlay_critical_path_analysis(0, cp_graph, output_dir=out_dir)",
            "from hta.analyzers.critical_path_analysis import CPGraph",
            """
            from hta.analyzers.critical_path_analysis import restore_cpgraph
            zip_filename = cp_graph.save(out_dir=out_dir)
            restored = restore_cpgraph(zip_filename, t_full=analyzer.t, rank=0)
            """,
        ], {"trace_dir": self.copy("critical_path/simple_add"), "out_dir": os.path.join(self.tmp, "overlaid")})
        self.assertTrue(env["success"])
        self.assertIn("Critical Path broken down by boundedness", env["_out"])
        # the default mode's path is hta's; its length and bound_by shares are the command's
        want = cli("critical-path", env["trace_dir"], "--annotation",
                   "[param|pytorch.model.alex_net|0|0|0|measure|forward]", "--instance", "1")
        s = {r[0]: r[2] for r in want["summary"]["data"]}
        self.assertEqual({k: v for k, v in env["summary"].items()}, s)
        self.assertEqual(len(env["breakdown"]), len(cli("critical-path", env["trace_dir"], "--annotation",
                         "[param|pytorch.model.alex_net|0|0|0|measure|forward]", "--instance", "1",
                         "--all")["breakdown"]["data"]))
        self.assertTrue(os.path.basename(env["overlaid"]).startswith("overlaid_critical_path_benchmark_result"))
        self.assertTrue(os.path.exists(env["overlaid"]))
        # the file holds HTA's graph of the selection (as `hta critical-path --save`): restored without the
        # trace, it answers as `hta critical-path --graph FILE`
        g = {r[0]: r[2] for r in cli("critical-path", "--graph", env["zip_filename"])["summary"]["data"]}
        self.assertEqual(dict(env["restored"].summary().items()), g)

    def test_trace_diff_demo(self):
        base = self.tmp
        shutil.copytree(os.path.join(TRACES, "trace_diff"), os.path.join(base, "tests", "data", "trace_diff"))
        env = run_cells([
            """
            import json
            import os
            import pandas as pd
            from pathlib import Path
            from hta.trace_diff import LabeledTrace, DeviceType, TraceDiff
            from hta.utils.utils import shorten_name, flatten_column_names
            """,
            """
            control_t = LabeledTrace(label="Control", trace_dir=f"{base_dir}/tests/data/trace_diff/control")
            test_t = LabeledTrace(label="Test", trace_dir=f"{base_dir}/tests/data/trace_diff/test")
            """,
            """
            print(f"available ranks for control_t: {control_t.ranks()}")
            print(f"available ranks for test_t: {test_t.ranks()}")
            print(f"available ranks for iterations: {control_t.iterations()}")
            print(f"available ranks for iterations: {test_t.iterations()}")
            """,
            """
            df = TraceDiff.compare_traces(control_t, test_t, 3, 1, 1010, 1010, DeviceType.CPU)
            ops_diff = TraceDiff.ops_diff(control_t, test_t, 3, 1, 1010, 1010, DeviceType.CPU)
            df_gpu = TraceDiff.compare_traces(control_t, test_t, device_type=DeviceType.GPU)
            TraceDiff.visualize_counts_diff(df)
            TraceDiff.visualize_duration_diff(df)
            """,
            """
            df["short_name"] = df.index.map(shorten_name)
            flat = flatten_column_names(df.copy())
            """,
        ], {"base_dir": base})
        self.assertIn("available ranks for control_t: [3]", env["_out"])
        self.assertIn("available ranks for test_t: [1]", env["_out"])
        self.assertIn("[1009, 1010, 1011, 1012, 1013, 1014]", env["_out"])
        g = golden("_trace_diff__control_vs_test", "compare_traces_notebook_cpu")["parts"]["result"]
        # the same rows; the default mode lists the largest changes first (docs/differences-from-hta.md)
        self.assertEqual(set(g["index"]) - set(env["df"].index), set())
        self.assertEqual(env["df"].shape[0], g["shape"][0])
        og = golden("_trace_diff__control_vs_test", "ops_diff_notebook_cpu")["parts"]["result"]
        self.assertEqual(sorted(env["ops_diff"]["added"]), sorted(og["added"]))
        self.assertEqual(sorted(env["ops_diff"]["deleted"]), sorted(og["deleted"]))

    def test_kernel_breakdown_demo(self):
        env = run_cells([
            "from hta.trace_analysis import TraceAnalysis",
            """
            trace_dir = path
            analyzer = TraceAnalysis(trace_dir=trace_dir)
            """,
            """
            kernel_type_metrics_df, kernel_metrics_df = analyzer.get_gpu_kernel_breakdown(num_kernels=5,
                                                                                          image_renderer="png")
            """,
            """
            kernel_type_metrics_df, kernel_metrics_df = analyzer.get_gpu_kernel_breakdown(
                num_kernels=5, include_memory_kernels=False, visualize=True)
            """,
        ], {"path": self.copy("trace_filter")})
        want = cli("kernels", os.path.join(TRACES, "trace_filter"), "--top", "5", "--no-memory")
        self.assertEqual(list(env["kernel_type_metrics_df"]["kernel_type"]),
                         [r[0] for r in want["kernel_type"]["data"]])
        self.assertEqual(len(env["kernel_metrics_df"]), len(want["all_kernels"]["data"]))
        try:
            import plotly  # noqa: F401
        except ImportError:
            # visualize=True without plotly: said once for the process, not once per chart
            self.assertLessEqual(env["_err"].count("plotly is not installed"), 1)

    def test_identify_stragglers(self):
        env = run_cells([
            """
            import hta
            from hta.trace import Trace
            from hta.trace_analysis import TraceAnalysis
            from pathlib import Path
            """,
            """
            from hta.trace_analysis import TraceAnalysis

            analyzer = TraceAnalysis(trace_dir = trace_path)
            """,
            "steps = analyzer.get_profiler_steps()",
            "one = analyzer.get_potential_stragglers(profiler_steps=[steps[-1]], num_candidates=1)",
            "two = analyzer.get_potential_stragglers(num_candidates=2)",
        ], {"trace_path": self.copy("trace_filter")})
        self.assertEqual(env["steps"], golden("trace_filter", "profiler_steps")["parts"]["result"])
        self.assertEqual(sorted(env["two"]), golden("trace_filter", "potential_stragglers")["parts"]["result"])
        self.assertEqual(len(env["one"]), 1)


if __name__ == "__main__":
    unittest.main()
