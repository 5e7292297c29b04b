#!/usr/bin/env python3
"""hta report --html: one self-contained page that Debian's headless Chromium renders without a console
error, with every chart; the colours of each chart's series stay apart in grey; on 64 ranks it takes at most
twice the text report's time and stays a few MB."""
import json
import os
import re
import shutil
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")
CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
CHARTS = ["whatif", "busy", "breakdown", "idle", "overlap", "kernel-types", "top-kernels", "roofline", "launch-delay",
          "queue", "membw", "critical-path", "lateness"]


def chromium(*args, timeout=120):
    """Headless Chromium on a page: its stdout and stderr (console messages with --enable-logging)."""
    with tempfile.TemporaryDirectory() as prof:
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--user-data-dir=" + prof, "--enable-logging=stderr", "--v=0",
                            "--virtual-time-budget=3000", *args], capture_output=True, text=True, timeout=timeout)
    return p


def console_errors(stderr):
    """Chromium logs a page's console messages as CONSOLE(line) "text"; errors, and uncaught ones, too."""
    return [x for x in stderr.splitlines() if "CONSOLE" in x or "Uncaught" in x]


def luminance(hexcol):
    r, g, b = (int(hexcol[i:i + 2], 16) / 255 for i in (1, 3, 5))
    return 0.2126 * r + 0.7152 * g + 0.0722 * b


class Page(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.job = os.path.join(cls.tmp.name, "job")
        subprocess.run(["python3", GEN, "--out", cls.job, "--ranks", "4", "--layers", "2", "--steps", "4",
                        "--straggler", "2", "--quiet"], check=True)
        cls.out = os.path.join(cls.tmp.name, "report.html")
        cls.p = subprocess.run([HTA, "report", cls.job, "--html", cls.out], capture_output=True, text=True)
        with open(cls.out, encoding="utf-8") as f:
            cls.html = f.read()

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_written_with_the_text_report(self):
        self.assertEqual(self.p.returncode, 0, self.p.stderr)
        self.assertIn("wrote the HTML report to " + self.out, self.p.stderr)
        self.assertTrue(self.p.stdout.startswith("findings ("))

    def test_self_contained(self):
        """No script, no external resource: nothing to fetch, so it opens offline."""
        self.assertNotIn("<script", self.html)
        self.assertNotRegex(self.html, r"(?i)(src|href)\s*=")
        self.assertNotRegex(self.html, r"(?i)https?://")
        self.assertEqual({u for u in re.findall(r"url\(([^)]*)\)", self.html)}, {"#p-stripe", "#p-dots"})

    def test_renders_in_chromium_without_console_errors(self):
        shot = os.path.join(self.tmp.name, "shot.png")
        p = chromium("--window-size=1050,4000", "--screenshot=" + shot, "file://" + self.out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        with open(shot, "rb") as f:
            png = f.read()
        self.assertEqual(png[:8], b"\x89PNG\r\n\x1a\n")
        self.assertGreater(len(png), 50000)  # charts drawn, not a blank page
        self.assertEqual(console_errors(p.stderr), [])

    def test_console_errors_are_seen(self):
        """The check above would see an error: a page that logs one is caught."""
        bad = os.path.join(self.tmp.name, "bad.html")
        with open(bad, "w") as f:
            f.write("<html><body><script>console.error('planted error')</script></body></html>")
        p = chromium("--dump-dom", "file://" + bad)
        self.assertTrue(any("planted error" in x for x in console_errors(p.stderr)), p.stderr[-2000:])

    def test_every_chart_present(self):
        """In the DOM Chromium builds: every chart, each with marks and axis text, and the findings table."""
        p = chromium("--dump-dom", "file://" + self.out)
        self.assertEqual(p.returncode, 0, p.stderr[-2000:])
        dom = p.stdout
        ids = re.findall(r'<svg class="chart" id="chart-([a-z-]+)"', dom)
        self.assertEqual(ids, CHARTS)
        for c in CHARTS:
            body = dom.split('id="chart-%s"' % c, 1)[1].split("</svg>", 1)[0]
            self.assertRegex(body, r"<(rect|path)", c)
            self.assertRegex(body, r'class="(tk|lb)"', c)  # ticks or labels: an axis
        self.assertIn('id="findings-table"', dom)
        self.assertIn("step time", dom)
        rep = json.loads(subprocess.run([HTA, "report", self.job, "--format", "json", "--quiet"],
                                        capture_output=True, text=True, check=True).stdout)
        for f in rep["findings"]["data"]:
            self.assertIn(">%s<" % f[0], dom)

    def test_series_apart_in_grey(self):
        """Within each legend, solid fills differ by at least 0.15 in luminance (patterns are told apart by
        their pattern)."""
        for c in CHARTS:
            body = self.html.split('id="chart-%s"' % c, 1)[1].split("</svg>", 1)[0]
            fills = re.findall(r'<rect x="\d+" y="\d+" width="12" height="12" fill="(#[0-9a-f]{6})"', body)
            lum = sorted(luminance(x) for x in set(fills))
            for a, b in zip(lum, lum[1:]):
                self.assertGreaterEqual(b - a, 0.15, (c, fills))

    def test_output_is_checked_against_the_input(self):
        rank0 = os.path.join(self.job, "rank-0.json")
        p = subprocess.run([HTA, "report", self.job, "--html", rank0], capture_output=True, text=True)
        self.assertEqual(p.returncode, 1)
        self.assertIn("rank-0.json", p.stderr)


class ManyRanks(unittest.TestCase):
    def test_64_ranks_small(self):
        """64 ranks: every rank in every per-rank chart, the page under 4 MiB.  (Its time against the text
        report is a bench figure, bench/report_html.sh, not a timed test.)"""
        with tempfile.TemporaryDirectory() as d:
            job = os.path.join(d, "job")
            subprocess.run(["python3", GEN, "--out", job, "--ranks", "64", "--layers", "1", "--steps", "3",
                            "--straggler", "7", "--quiet"], check=True)
            subprocess.run([HTA, "report", job, "--quiet", "--html", os.path.join(d, "r.html")], check=True,
                           stdout=subprocess.DEVNULL)
            size = os.path.getsize(os.path.join(d, "r.html"))
            self.assertLess(size, 4 << 20)
            with open(os.path.join(d, "r.html")) as f:
                self.assertEqual(len(re.findall(r">rank \d+</text>", f.read())), 64 * 7)


if __name__ == "__main__":
    unittest.main()
