"""What a person and a script read (README "Output"): table cells never in exponent notation
(3393189.6, not 3.39319e+06); --table NAME on every command prints that one table, so that
pandas.read_csv (or any CSV reader) takes the output as it is; an unknown NAME is a usage error that
lists the command's tables."""
import csv
import io
import json
import os
import re
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
MTIA = os.path.join(ROOT, "tests", "data", "hta", "mtia_trace_single_rank")
FILTER = os.path.join(ROOT, "tests", "data", "hta", "trace_filter")


def run(*args):
    return subprocess.run([HTA, *args], capture_output=True, text=True)


def commands():
    """The commands with tables and their tables, from `hta tables` (docs/tables.md's text)."""
    out, cmd = {}, None
    for line in run("tables").stdout.splitlines():
        m = re.match(r"## `hta ([a-z-]+)`", line)
        if m:
            cmd = m.group(1)
        m = re.match(r"### `([a-z_0-9]+)`", line)
        if m and cmd:
            out.setdefault(cmd, []).append(m.group(1))
    return out


class NoExponent(unittest.TestCase):
    def test_large_and_small_numbers(self):
        out = run("kernels", MTIA, "--quiet").stdout
        self.assertIn("7309063.1", out)  # 7309063.136 us: one decimal from a million on
        out = run("counters", MTIA, "--max-queue-length", "1", "--hta-compat", "--quiet").stdout
        self.assertIn("0.0000795", out)  # 7.94764e-05: 3 significant digits in fixed notation
        for args in (["kernels", MTIA], ["report", FILTER], ["idle", MTIA], ["counters", MTIA], ["launch", FILTER],
                     ["critical-path", FILTER, "--ranks", "0"], ["cpu-ops", MTIA], ["temporal", MTIA]):
            with self.subTest(cmd=args[0]):
                out = run(*args, "--quiet").stdout
                self.assertTrue(out)
                self.assertIsNone(re.search(r"\d[eE][+-]\d", out), out[:2000])


    def test_html_tables(self):
        # the report's page shows its tables with the same numbers (13328071.7 us, not 1.33281e+07)
        import tempfile
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, "r.html")
            p = run("report", MTIA, "--quiet", "--html", page)
            self.assertEqual(p.returncode, 0, p.stderr)
            with open(page) as f:
                cells = re.findall(r'<td class="n">([^<]*)', f.read())
        self.assertIn("13328071.7", cells)
        self.assertEqual([c for c in cells if re.search(r"\d[eE][+-]\d", c)], [])


class OneTable(unittest.TestCase):
    def test_csv_of_one_table_is_plain_csv(self):
        p = run("kernels", MTIA, "--quiet", "--format", "csv", "--table", "all_kernels")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertFalse(p.stdout.startswith("#"))
        rows = list(csv.reader(io.StringIO(p.stdout)))
        self.assertEqual(rows[0][:2], ["name", "sum (us)"])
        self.assertEqual({len(r) for r in rows}, {len(rows[0])})
        self.assertGreater(len(rows), 5)
        # the same rows as the table inside the whole output
        whole = run("kernels", MTIA, "--quiet", "--format", "json").stdout
        self.assertEqual(len(json.loads(whole)["all_kernels"]["data"]), len(rows) - 1)
        j = json.loads(run("kernels", MTIA, "--quiet", "--format", "json", "--table", "kernel_type").stdout)
        self.assertEqual(list(j), ["kernel_type"])

    def test_every_command_takes_table(self):
        cmds = commands()
        self.assertIn("report", cmds)
        for cmd, names in cmds.items():
            with self.subTest(cmd=cmd):
                p = run(cmd, "--table", "no_such_table", FILTER)
                self.assertEqual(p.returncode, 2, p.stderr)
                self.assertIn("unknown table 'no_such_table' (tables: %s" % names[0], p.stderr)

    def test_report_table_per_rank_run(self):
        # a command that runs rank by rank prints the one table too
        p = run("overlap", FILTER, "--quiet", "--format", "csv", "--table", "comm_comp_overlap")
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertTrue(p.stdout.startswith("rank,"), p.stdout)


if __name__ == "__main__":
    unittest.main()
