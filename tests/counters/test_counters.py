"""hta counters / patterns / diff / cupti: asserting tests (test-expectations G, H, K, L, O) and the
helper checks beside this file (the golden tables themselves: tests/golden/test_golden.py)."""
import glob
import gzip
import json
import os
import subprocess
import sys
import unittest
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
T = os.path.join(ROOT, "tests", "data", "hta")
G = os.path.join(ROOT, "tests", "golden", "hta")


hta = testlib.hta


def table(name, *args):
    return json.loads(hta(*args, "--format", "json", "--quiet").stdout)[name]["data"]


class Case(testlib.TempDirTest):
    def script(self, name, *args, env=None):
        """Runs a check script beside this file; it fails by exit status, with its output."""
        p = subprocess.run([sys.executable, os.path.join(HERE, name), *args], capture_output=True, text=True,
                           env=env)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        return p.stdout


class Counters(Case):
    def test_values(self):
        self.script("check_counters.py", HTA, T)

    def test_augment(self):
        for d in ["negative_queue_length_values_check", "call_stack/backward_thread.json", "trace_filter",
                  "critical_path/cuda_event_sync"]:
            with self.subTest(trace=d):
                out = os.path.join(self.dir, d.replace("/", "_"))
                os.mkdir(out)
                self.script("check_augment.py", HTA, os.path.join(T, d), out)
                self.assertEqual([f for f in os.listdir(out) if "_with_counters" not in f], [])

    def test_augment_cuda_event_sync(self):
        """test-expectations O: 12 counter events on cuda_event_sync."""
        hta("counters", os.path.join(T, "critical_path", "cuda_event_sync"), "--augment", self.dir, "--quiet")
        files = glob.glob(os.path.join(self.dir, "*_with_counters.json.gz"))
        self.assertEqual(len(files), 1)
        ev = json.load(gzip.open(files[0]))["traceEvents"]
        self.assertEqual(sum(e.get("ph") == "C" for e in ev), 12)

    def test_augment_output_folder(self):
        """A missing output folder is created; a file in its way is an error."""
        trace = os.path.join(T, "critical_path", "cuda_event_sync")
        hta("counters", trace, "--augment", os.path.join(self.dir, "new", "sub"), "--quiet")
        self.assertTrue(glob.glob(os.path.join(self.dir, "new", "sub", "*_with_counters.json.gz")))
        afile = os.path.join(self.dir, "afile")
        open(afile, "w").close()
        self.assertNotEqual(hta("counters", trace, "--augment", afile, "--quiet", ok=False).returncode, 0)


class Diff(Case):
    def test_trace_diff_goldens(self):
        self.script("check_diff.py", HTA, T, G)

    def test_one_trace_is_an_error(self):
        self.assertNotEqual(hta("diff", os.path.join(T, "trace_diff", "control"), "--quiet", ok=False).returncode, 0)


class Patterns(Case):
    def test_alexnet_conv2d(self):
        """test-expectations K: 5 patterns; two contain 10 Stream Wait Event records (A2)."""
        rows = table("frequent_cuda_kernel_sequences", "patterns", os.path.join(T, "critical_path", "alexnet"), "--op", "aten::conv2d")
        got = [(r[1], r[2], r[3], r[0].count("Stream Wait Event")) for r in rows]
        self.assertEqual(got, [(6, 2403, 5034, 0), (1, 1230, 10841225, 0), (1, 750, 14972, 10),
                               (1, 735, 1049310, 10), (1, 1225, 8825, 0)])

    def test_overlay(self):
        for trace, op, *extra in [("df_index_resolver", "aten::addmm"),
                                  ("critical_path/alexnet", "aten::conv2d", "--top-k", "3"),
                                  ("trace_diff/control", "aten::linear")]:
            with self.subTest(trace=trace):
                out = os.path.join(self.dir, trace.replace("/", "_"))
                os.mkdir(out)
                self.script("check_overlay.py", HTA, os.path.join(T, trace), op, out, *extra)

    def test_no_pattern_no_overlay(self):
        hta("patterns", os.path.join(T, "df_index_resolver"), "--op", "aten::clone", "--overlay", self.dir, "--quiet")
        self.assertEqual(os.listdir(self.dir), [])

    def test_coincident_zero_durations(self):
        """HTA crashes on coincident zero/negative durations (A19); hta gives the patterns."""
        out = hta("patterns", os.path.join(T, "ns_resolution_trace"), "--op", "aten::conv2d", "--format", "csv",
                  "--quiet").stdout
        self.assertEqual(sum(1 for ln in out.splitlines() if ln.lstrip('"').startswith("aten::conv2d|")), 5)

    def test_op_is_required(self):
        self.assertEqual(hta("patterns", os.path.join(T, "df_index_resolver"), "--quiet", ok=False).returncode, 2)


class Cupti(Case):
    def test_columns_equal_the_golden(self):
        self.script("check_cupti.py", HTA, T, G)

    def test_no_ranges_no_rows(self):
        self.assertEqual(table("cupti_counter_data_with_operators", "cupti", os.path.join(T, "critical_path", "simple_add")), [])


if __name__ == "__main__":
    unittest.main()
