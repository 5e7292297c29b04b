"""htac never takes the interpreter down (issue 35): hypothesis (Debian's python3-hypothesis) drives random
sequences of calls over the whole API (TraceAnalysis, its Trace, a critical-path graph, TraceDiff) with
arguments of every wrong kind (None, negative, huge, NaN, infinities, wrong types, NUL and line breaks in
texts and paths), close() at any point, and calls from other threads while close() runs.  What must hold:
the process survives (a crash fails the class's process; under SAN=1 AddressSanitizer aborts it on a
use-after-free), every failure is an HtaError (a ValueError; a wrong type also a TypeError), never another
exception from deeper down, and after close() every method raises HtaError "the trace was closed".

The search is derandomized (the same examples on every run) and every assertion holds in every order the
threads may take, so the test cannot be flaky.  It runs in a folder of its own, over a copy of the trace
(derived traces are written beside the trace's files)."""
import math
import os
import shutil
import sys
import tempfile
import threading
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyhelp  # noqa: E402,F401
from pyhelp import TRACES  # noqa: E402

HtaError = TraceAnalysis = CPGraph = TraceDiff = LabeledTrace = None
given = settings = st = HealthCheck = None


def setUpModule():
    global HtaError, TraceAnalysis, CPGraph, TraceDiff, LabeledTrace, given, settings, st, HealthCheck
    from hypothesis import HealthCheck, given, settings, strategies as st
    from htac import HtaError, LabeledTrace, TraceDiff
    from htac.analyzers.critical_path_analysis import CPGraph
    from htac.trace_analysis import TraceAnalysis


# values a user may pass by mistake, for any argument
WILD = [None, -1, -3, 0, 1, 2, 10**12, -10**12, 2**64, float("nan"), float("inf"), -0.5, 0.5, 1e300, True,
        "", "x", "a\0b", "a\nb", "/", "occurrence_count", "ProfilerStep", "kernel:*=x0.5", b"bytes", [0], [0, 1],
        [-1], ["a\0b"], [None], ("ProfilerStep",), {}, {0: "x"}, object(), "tests\0/x"]

# each method with its arguments and the values that make sense for them (mixed with WILD)
GOOD_RANK = [0, 1]
METHODS = {
    "get_profiler_steps": {"window": [None, "annot:ProfilerStep#1"]},
    "get_temporal_breakdown": {"visualize": [False], "window": [None, "0ms:", "annot:ProfilerStep#1"]},
    "get_idle_time_breakdown": {"ranks": [None, [0], [0, 1]], "streams": [None, [7]], "visualize": [False],
                                "show_idle_interval_stats": [True, False], "consecutive_kernel_delay": [30, 0]},
    "get_gpu_kernel_breakdown": {"visualize": [False], "duration_ratio": [0.8, 1], "num_kernels": [10, 0],
                                 "include_memory_kernels": [True, False]},
    "get_gpu_kernels_with_user_annotations": {"rank": GOOD_RANK, "expand_names": [True, False],
                                              "shorten_names": [True, False]},
    "get_gpu_user_annotation_breakdown": {"use_gpu_annotation": [True, False], "visualize": [False],
                                          "duration_ratio": [0.8], "num_kernels": [5],
                                          "allowlist_patterns": [None, ["Profiler*"], "ProfilerStep*"]},
    "get_comm_comp_overlap": {"visualize": [False]},
    "get_cuda_kernel_launch_stats": {"ranks": [None, [1]], "runtime_cutoff": [50], "launch_delay_cutoff": [100],
                                     "visualize": [False]},
    "get_queue_length_summary": {"ranks": [None, [0]]},
    "get_queue_length_time_series": {"ranks": [None, [1]]},
    "get_time_spent_blocked_on_full_queue": {"queue_length_dict": [None, {0: None}], "max_queue_length": [1024, 2]},
    "get_memory_bw_summary": {"ranks": [None]},
    "get_memory_bw_time_series": {"ranks": [None]},
    "generate_trace_with_counters": {"ranks": [None, [0]], "output_suffix": ["_c", "_with_counters"]},
    "get_potential_stragglers": {"profiler_steps": [None, [15]], "num_candidates": [1, 2]},
    "get_frequent_cuda_kernel_sequences": {"operator_name": ["aten::linear", "ProfilerStep#15"],
                                           "output_dir": ["out"], "min_pattern_len": [3, 1], "rank": GOOD_RANK,
                                           "top_k": [5, 0]},
    "get_aten_op_kernels_and_delay": {"ranks": [None], "sort_by": [None, "occurrence_count",
                                                                   ["occurrence_count", "kernel_sequence"]]},
    "get_cupti_counter_data_with_operators": {"ranks": [None]},
    "critical_path_analysis": {"rank": GOOD_RANK, "annotation": ["ProfilerStep", ""], "instance_id": [0, 1, (0, 1)],
                               "data_load_events": [None, ["aten::linear"]]},
    "report": {"top": [3], "critical_path": [True, False]},
    "report_html": {"path": ["r.html"], "top": [3], "critical_path": [False]},
    "what_if": {"rules": ["kernel:*=x0.5", ["kernel:nccl*=x2", "cpu:*=x0.5"]], "ranks": [None, [1]],
                "all_ranks": [False, True], "trace_out": [None, "w.json"]},
    "events": {"rank": [None, 1], "view": [True, False], "window": [None, "1ms:"]},
}
TRACE_METHODS = {
    "ranks": None, "get_ranks": {}, "path": {"rank": GOOD_RANK}, "symbols": {}, "columns": {"rank": GOOD_RANK},
    "events": {"rank": GOOD_RANK, "view": [True]}, "get_all_traces": {"view": [True, False]},
}
GRAPH_METHODS = {"summary": {}, "get_critical_path_breakdown": {}, "stats": {}, "save": {"out_dir": ["g"]},
                 "overlay": {"output_dir": ["ov"], "only_show_critical_events": [True, False]}}
DIFF_METHODS = {"compare_traces": {"control_rank": [0], "test_rank": [1], "use_short_name": [True]},
                "ops_diff": {"control_rank": [0], "test_rank": [0]}}


def required(target, name):
    """The arguments a call cannot leave out (Python itself refuses the call without them)."""
    import inspect
    from htac.trace import Trace
    if name == "overlay":  # the analyzer's method, given the graph and its rank by the test
        return {"output_dir"}
    cls = {"analyzer": TraceAnalysis, "trace": Trace, "graph": CPGraph, "diff": TraceDiff}[target]
    fn = getattr(cls, name)
    if isinstance(fn, property):
        return set()
    ps = inspect.signature(fn).parameters.values()
    return {p.name for p in ps if p.default is inspect.Parameter.empty and p.name not in ("self", "cls")}


def call_strategy():
    """One step: (target, method, kwargs) with each argument left out, good, or wild."""
    steps = []
    for table, target in ((METHODS, "analyzer"), (TRACE_METHODS, "trace"), (GRAPH_METHODS, "graph"),
                          (DIFF_METHODS, "diff")):
        for name, params in table.items():
            if not params:
                steps.append(st.just((target, name, {})))
                continue
            arg = {k: st.one_of(st.sampled_from(v), st.sampled_from(WILD)) for k, v in params.items()}
            need = required(target, name)
            steps.append(st.fixed_dictionaries({k: v for k, v in arg.items() if k in need},
                                               optional={k: v for k, v in arg.items() if k not in need}).map(
                lambda kw, t=target, n=name: (t, n, kw)))
    steps.append(st.just(("close", None, {})))
    steps.append(st.tuples(st.just("race"), st.sampled_from(sorted(METHODS) + ["t.ranks", "t.events"]),
                           st.just({})))
    return st.one_of(*steps)


def good_kwargs(name):
    """A call of the method with its first good values (the race's calls, which must get into libhta)."""
    return {k: v[0] for k, v in METHODS.get(name, {}).items()}


class Props(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.mkdtemp(prefix="htac-props-")
        cls.trace = os.path.join(cls.tmp, "trace")
        shutil.copytree(os.path.join(TRACES, "trace_filter"), cls.trace)
        cls.cwd = os.getcwd()
        os.chdir(cls.tmp)  # relative output names ("out", "r.html") land here
        cls.unexpected = []

    @classmethod
    def tearDownClass(cls):
        os.chdir(cls.cwd)
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def outcome(self, what, fn):
        """Runs fn; a failure must be an HtaError (returns it), anything else is recorded."""
        try:
            fn()
        except HtaError as e:
            return e
        except Exception as e:  # noqa: BLE001 - what the test looks for
            self.unexpected.append(f"{what}: {type(e).__name__}: {e}")
            return e
        return None

    def run_step(self, s, step):
        target, name, kw = step
        a = s["a"]
        if target == "close":
            a.close()
            s["closed"] = True
            return
        if target == "race":
            self.race(a, name)
            s["closed"] = True
            return
        if target == "analyzer":
            fn = (lambda: getattr(a, name)(**kw))
        elif target == "trace":
            fn = (lambda: a.t.ranks) if name == "ranks" else (lambda: getattr(a.t, name)(**kw))
        elif target == "graph":
            g = s.get("g")
            if g is None:
                return
            if name == "overlay":
                fn = (lambda: a.overlay_critical_path_analysis(g.rank, g, **kw))
            else:
                fn = (lambda: getattr(g, name)(**kw))
        else:
            other = s["other"]
            fn = (lambda: getattr(TraceDiff, name)(other, s["labeled"], **kw))
        before_closed = s["closed"]
        e = self.outcome(f"{target}.{name}({kw!r})", fn)
        if target == "analyzer" and name == "critical_path_analysis" and e is None:
            s["g"] = a.critical_path_analysis(**kw)[0]
        if before_closed and target in ("analyzer", "trace", "graph") and e is None:
            self.unexpected.append(f"{target}.{name}({kw!r}) after close() returned instead of raising")
        if before_closed and isinstance(e, HtaError) and "closed" not in str(e) and target != "diff":
            # the arguments may be refused first; a call that got past them says the trace is closed
            if not any(w in str(e) for w in ("must be", "NUL", "line break", "(an integer", "(a number",
                                             "empty path", "a '/'", "instance_id", "another TraceAnalysis",
                                             "empty list")):
                self.unexpected.append(f"{target}.{name}({kw!r}) after close(): {e}")

    def race(self, a, name):
        """close() while another thread is inside a call (or about to enter it, or done): the call
        returns, or raises HtaError; close() returns; nothing else, in any order the threads take."""
        got = []
        started = threading.Event()

        def worker():
            started.set()
            try:
                if name == "t.ranks":
                    a.t.ranks
                elif name == "t.events":
                    a.t.events(0)
                else:
                    getattr(a, name)(**good_kwargs(name))
                got.append(None)
            except HtaError as e:
                got.append(e)
            except Exception as e:  # noqa: BLE001
                got.append(e)
                self.unexpected.append(f"race {name}: {type(e).__name__}: {e}")

        t = threading.Thread(target=worker)
        t.start()
        started.wait()
        a.close()
        t.join()
        self.assertEqual(len(got), 1)

    def test_no_sequence_of_calls_crashes(self):
        @settings(max_examples=int(os.environ.get("HTAC_PROPS_EXAMPLES", "120")), derandomize=True,
                  database=None, deadline=None, suppress_health_check=list(HealthCheck), print_blob=False)
        @given(st.lists(call_strategy(), min_size=1, max_size=8))
        def prop(steps):
            self.unexpected.clear()
            # a fresh copy: derived traces written beside the files would be loaded as more ranks
            trace = os.path.join(self.tmp, "example")
            shutil.rmtree(trace, ignore_errors=True)
            shutil.copytree(self.trace, trace)
            s = {"a": TraceAnalysis(trace_dir=trace), "closed": False}
            s["labeled"] = LabeledTrace(label="t", trace_dir=trace)
            s["other"] = LabeledTrace(label="c", trace_dir=trace)
            try:
                for step in steps:
                    self.run_step(s, step)
                    if step[0] == "diff" and step[2].get("control_rank") == 0 and not s["closed"]:
                        s["labeled"].close()  # a diff against a closed trace next time
            finally:
                s["a"].close()
                s["other"].close()
            self.assertEqual(self.unexpected, [])

        prop()

    def test_every_method_after_close_says_closed(self):
        a = TraceAnalysis(trace_dir=self.trace)
        g, _ = a.critical_path_analysis(rank=0, annotation="ProfilerStep", instance_id=0)
        a.close()
        calls = {f"a.{m}": (lambda m=m: getattr(a, m)(**good_kwargs(m))) for m in METHODS}
        calls.update({"a.t.ranks": lambda: a.t.ranks, "a.t.get_ranks": a.t.get_ranks,
                      "a.t.path": lambda: a.t.path(0), "a.t.symbols": a.t.symbols,
                      "a.t.columns": lambda: a.t.columns(0), "a.t.get_all_traces": a.t.get_all_traces,
                      "a.t.events": lambda: a.t.events(0), "g.summary": g.summary, "g.stats": g.stats,
                      "g.get_critical_path_breakdown": g.get_critical_path_breakdown,
                      "g.save": lambda: g.save("g"),
                      "a.overlay": lambda: a.overlay_critical_path_analysis(0, g, "ov")})
        for what, fn in calls.items():
            with self.subTest(call=what):
                with self.assertRaises(HtaError) as cm:
                    fn()
                self.assertEqual(str(cm.exception), "the trace was closed")
        a.close()  # twice is nothing

    def test_arguments_refused_by_kind(self):
        """One check per kind of argument: the same refusal, with the argument's name, in every method."""
        a = TraceAnalysis(trace_dir=self.trace)
        try:
            cases = [
                (lambda: a.get_potential_stragglers(num_candidates=-3), "num_candidates: -3 (an integer from 1"),
                (lambda: a.get_potential_stragglers(num_candidates=10**12),
                 "num_candidates: 1000000000000 (an integer from 1 to 1000000)"),
                (lambda: a.get_gpu_kernel_breakdown(visualize=False, duration_ratio=math.nan),
                 "duration_ratio: nan (a number from 0 to 1)"),
                (lambda: a.get_gpu_user_annotation_breakdown(visualize=False, duration_ratio=math.inf),
                 "duration_ratio: inf (a number from 0 to 1)"),
                (lambda: a.report_html("r\0.html"), "path: a NUL character"),
                (lambda: TraceAnalysis(trace_dir=self.trace + "\0/x"), "trace_dir: a NUL character"),
                (lambda: a.what_if("kernel:*=x0.5", trace_out="w\0.json"), "trace_out: a NUL character"),
                (lambda: a.get_temporal_breakdown(visualize=False, window="1ms:\0"), "window: a NUL character"),
                (lambda: a.critical_path_analysis(0, "Profiler\0Step", 0), "annotation: a NUL character"),
                (lambda: a.get_idle_time_breakdown(ranks=["0"], visualize=False), "ranks must be an integer"),
                (lambda: a.get_idle_time_breakdown(ranks=[0], visualize=False, consecutive_kernel_delay=-1),
                 "consecutive_kernel_delay: -1.0 (a number from 0"),
            ]
            for fn, msg in cases:
                with self.subTest(msg=msg):
                    with self.assertRaises(HtaError) as cm:
                        fn()
                    self.assertIn(msg, str(cm.exception))
            # a plain string is one sort column, as a list of one
            one = a.get_aten_op_kernels_and_delay(sort_by="occurrence_count")
            listed = a.get_aten_op_kernels_and_delay(sort_by=["occurrence_count"])
            self.assertEqual(sorted(one), [0])
            self.assertTrue(one[0].equals(listed[0]))
            self.assertGreater(len(one[0]), 0)
        finally:
            a.close()


if __name__ == "__main__":
    unittest.main()
