#!/usr/bin/env python3
"""Names and text a person reads: the table format fits 100 columns and never cuts a word or a number of
a finding; long names are cut in the middle so that rows stay apart (csv and json keep them whole);
shortened names lose HTA's empty '::::' components except in HTA's own tables; our tables' time columns
say their unit.

Run: HTA=build/hta python3 -m unittest tests/names/test_names.py
"""
import json
import os
import re
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DATA = os.path.join(ROOT, "tests", "data")
TRACES = sorted(os.path.join(DATA, "real", d) for d in os.listdir(os.path.join(DATA, "real"))
                if os.path.isdir(os.path.join(DATA, "real", d)))
TRACES += [os.path.join(DATA, "hta", d) for d in ("amd_trace", "nccl_parser_config", "trace_filter", "cpu_only")]


def run(*args):
    p = subprocess.run([HTA, *map(str, args)], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError("hta %s: exit %d: %s" % (" ".join(map(str, args)), p.returncode, p.stderr))
    return p.stdout


def tables(*args):
    return json.loads(run(*args, "--format", "json", "--quiet"))


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def table_lines(text, name):
    """The lines of table `name` in table-format output (title line excluded)."""
    out, on = [], False
    for line in text.splitlines():
        if re.match(r"^\S+ \(\d+ rows?\)$", line):
            on = line.startswith(name + " (")
            continue
        if on:
            out.append(line)
    return out


# A kernel in an anonymous namespace and two kernels that differ only deep in their template arguments,
# launched from one operator: the shapes of name the tests below need.
ANON = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<float>(float*, int)"
LEAD = "void (anonymous namespace)::multimem_all_reduce_kernel<c10::BFloat16>(c10::BFloat16*)"
ADD = ("void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<float>, "
       "at::detail::Array<char*, 3> >(int, at::native::CUDAFunctor_add<float>, at::detail::Array<char*, 3>)")
MUL = ("void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<float, float, float, "
       "at::native::binary_internal::MulFunctor<float> >, at::detail::Array<char*, 3> >(int, "
       "at::native::BinaryFunctor<float, float, float, at::native::binary_internal::MulFunctor<float> >, "
       "at::detail::Array<char*, 3>)")


def small_trace(path):
    """One thread launching four kernels (the names above), 100 us apart, on stream 7; the last one, the
    anonymous-namespace kernel, long enough to end the critical path."""
    ev = [{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#1", "pid": 1, "tid": 1, "ts": 0, "dur": 1000}]
    for i, (k, dur) in enumerate(((MUL, 20), (ADD, 30), (LEAD, 40), (ANON, 500))):
        t = 10 + 100 * i
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::op%d" % i, "pid": 1, "tid": 1, "ts": t, "dur": 20,
                   "args": {"External id": i + 1}})
        ev.append({"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": 1, "tid": 1, "ts": t + 5,
                   "dur": 10, "args": {"correlation": 100 + i, "External id": i + 1}})
        ev.append({"ph": "X", "cat": "kernel", "name": k, "pid": 0, "tid": 7, "ts": t + 30, "dur": dur,
                   "args": {"correlation": 100 + i, "External id": i + 1, "stream": 7, "device": 0}})
    with open(path, "w") as f:
        json.dump({"traceEvents": ev, "distributedInfo": {"rank": 0, "world_size": 1}}, f)


class Layout(unittest.TestCase):
    def test_every_line_fits_100_columns(self):
        for t in TRACES:
            for cmd in (["report"], ["kernels"], ["info"], ["cpu-ops"], ["idle"], ["launch"], ["ops"]):
                with self.subTest(trace=os.path.basename(t), cmd=cmd[0]):
                    out = run(*cmd, t, "--quiet")
                    long = [line for line in out.splitlines() if len(line) > 100]
                    self.assertEqual(long, [])

    def test_findings_keep_every_word_and_number(self):
        """Each word of each finding (json: the text as written) is on one line of the table output."""
        for t in TRACES:
            with self.subTest(trace=os.path.basename(t)):
                text = run("report", t, "--quiet")
                lines = table_lines(text, "observations")
                f = rows(tables("report", t)["observations"])
                self.assertTrue(f)
                for r in f:
                    for col in ("finding", "what_to_do"):
                        for w in r[col].split():
                            self.assertTrue(any(w in line for line in lines), (col, w))
                # the figures are whole numbers in the text: e.g. "29.3%" never "29."
                for r in f:
                    for num in re.findall(r"\d+(?:\.\d+)?%?", r["finding"]):
                        self.assertTrue(any(num in line for line in lines), num)

    def test_b200_top_kernel_finding(self):
        """b200's top kernel is a 129-character name: the finding quotes its start and end.  Its 36 calls take
        3181.785 us of the 11665.760 us of kernel time in the file (27.27%)."""
        f = rows(tables("report", os.path.join(DATA, "real", "b200_eager"))["observations"])
        k = [r["finding"] for r in f if r["area"] == "kernels"]
        self.assertEqual(k, ["top kernel bmm_MxE4m3_MxE2m1MxE4m3_Fp32_..._dynBatch_sm100f (COMPUTATION) takes 27.3% "
                             "of all kernel time (3182 us in 36 calls)"])

    def test_wide_tables_go_out_in_blocks(self):
        """report's ranks table (14 columns) prints as blocks that each repeat the rank column."""
        text = run("report", os.path.join(DATA, "hta", "trace_filter"), "--quiet")
        lines = table_lines(text, "ranks")
        heads = [line for line in lines if line.startswith("rank ")]
        self.assertGreater(len(heads), 1)
        cols = [c for h in heads for c in h.split()[1:]]
        want = tables("report", os.path.join(DATA, "hta", "trace_filter"))["ranks"]["columns"]
        self.assertEqual(["rank"] + cols, want)


class MiddleCut(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.trace = os.path.join(cls.tmp.name, "names.json")
        small_trace(cls.trace)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_top_kernels_stay_apart(self):
        full = [r["name"] for r in rows(tables("report", self.trace)["top_kernels"])]
        self.assertEqual(full, [ANON, LEAD, ADD, MUL])  # json: full names, by time
        # (LEAD, a symmetric-memory all-reduce, is COMMUNICATION)
        shown = [re.split(r"  (?:COMPUTATION|COMMUNICATION)", line)[0].rstrip()
                 for line in table_lines(run("report", self.trace, "--quiet"), "top_kernels")
                 if "COMPUTATION" in line or "COMMUNICATION" in line]
        self.assertEqual(len(set(shown)), 4)
        self.assertTrue(all(len(s) <= 60 for s in shown), shown)
        # the two elementwise kernels show where they differ
        self.assertIn("CUDAFunctor_add", shown[2])
        self.assertIn("BinaryFunctor", shown[3])
        self.assertTrue(shown[2].startswith("void at::native::vect"), shown[2])

    def test_csv_keeps_full_names(self):
        out = run("kernels", self.trace, "--format", "csv", "--quiet")
        for k in (ANON, LEAD, ADD, MUL):
            self.assertIn('"%s"' % k if "," in k else k, out)

    def test_short_names_without_empty_components(self):
        """The report's short name drops '(anonymous namespace)' cleanly; HTA's tables keep HTA's string."""
        f = [r["finding"] for r in rows(tables("report", self.trace)["observations"]) if r["area"] == "kernels"]
        self.assertEqual(len(f), 1)
        self.assertTrue(f[0].startswith("top kernel at::native::multi_tensor_apply_kernel (COMPUTATION) takes"), f[0])
        self.assertNotIn("::::", json.dumps(tables("report", self.trace)))
        # critical-path's breakdown is HTA's table: HTA's shorten_name, quirk included
        bd = {r["s_name"] for r in rows(tables("critical-path", self.trace, "--hta-compat")["breakdown"])}
        self.assertIn("at::native::::multi_tensor_apply_kernel", bd)
        # a what-if glob matches either form (the step ends at 1000 us whatever the kernel takes: the thread
        # does not wait for it); a glob that matches nothing is an error
        for pat in ("at::native::multi_tensor_apply_kernel", "at::native::::multi_tensor_apply_kernel"):
            w = {r["name"]: r["value"] for r in
                 rows(tables("critical-path", self.trace, "--what-if", "kernel:%s=x0" % pat)["what_if"])}
            self.assertEqual((w["baseline_path_us"], w["simulated_path_us"], w["edges_changed"]), (1000, 1000, 1), pat)
        p = subprocess.run([HTA, "critical-path", self.trace, "--what-if", "kernel:nothing=x0"], capture_output=True,
                           text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("matches nothing", p.stderr)
        # diff --short-names is HTA's TraceDiff: HTA's strings
        d = [r["short_name"] for r in rows(tables("diff", self.trace, self.trace, "--short-names")["compare_traces"])]
        self.assertIn("at::native::::multi_tensor_apply_kernel", d)
        self.assertIn("::multimem_all_reduce_kernel", d)


class Units(unittest.TestCase):
    def test_report_columns_carry_units(self):
        rep = tables("report", os.path.join(DATA, "hta", "trace_filter"))
        self.assertEqual(rep["critical_path"]["columns"], ["rank", "bound_by", "duration_us", "percentage"])
        self.assertEqual(rep["top_kernels"]["columns"], ["name", "kernel_type", "count", "sum_us", "mean_us", "pctg"])


if __name__ == "__main__":
    unittest.main()
