#!/usr/bin/env python3
"""hta report --html laid out by Debian's headless Chromium, for every trace in tests/data that makes a page
(the real traces, HTA's test traces, the labelled real ones), a real 8-rank job (PARAM's DLRM workers) and
generated 8- and 24-rank jobs with a straggler, each at 1000 and 1400 px wide: no box runs past its container
or the viewport, no chart text is cut at the chart's edge, legend entries and bar labels do not overlap, no
bar label repeats, no chart is drawn empty (the page says why instead), no straggler heat map for one rank,
no number is written with an exponent and no step is named "#-1" (the checks: html_layout.js).

The pages sit in <iframe srcdoc> frames of a page of pages, a few Chromium processes for all of them; the
checks run on the load event and write JSON that --dump-dom prints, so nothing depends on timing."""
import glob
import html
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
DATA = os.path.join(ROOT, "tests", "data")
CHROMIUM = shutil.which("chromium")
WIDTHS = (1000, 1400)
BATCH = 12  # pages per Chromium process
DLRM = os.path.join(DATA, "real-diag", "facebookresearch__param", "et_replay", "tests", "inputs", "dlrm_kineto")
with open(os.path.join(os.path.dirname(__file__), "html_layout.js"), encoding="utf-8") as _f:
    SCRIPT = _f.read()


def traces():
    """Every trace file under tests/data (labels.json is no trace)."""
    found = glob.glob(os.path.join(DATA, "**", "*.json"), recursive=True)
    found += glob.glob(os.path.join(DATA, "**", "*.json.gz"), recursive=True)
    return sorted(f for f in found if os.path.basename(f) != "labels.json")


def name_of(path):
    return re.sub(r"[^A-Za-z0-9]+", "_", os.path.relpath(path, DATA)).strip("_")


def harness(pages):
    """A page of pages: each report at each width in a frame as tall as a window."""
    frames = []
    for name, path in pages:
        with open(path, encoding="utf-8") as f:
            doc = html.escape(f.read(), quote=True)
        for w in WIDTHS:
            frames.append('<iframe loading="eager" data-page="%s" data-width="%d" style="width:%dpx;height:900px;'
                          'border:0;display:block" srcdoc="%s"></iframe>' % (name, w, w, doc))
    return ('<!DOCTYPE html><html><head><meta charset="utf-8"></head><body style="margin:0">%s'
            '<pre id="result"></pre><script>%s</script></body></html>' % ("".join(frames), SCRIPT))


def chromium_dom(page, timeout=300):
    with tempfile.TemporaryDirectory() as prof:
        p = subprocess.run([CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                            "--user-data-dir=" + prof, "--window-size=1500,1000", "--virtual-time-budget=60000",
                            "--dump-dom", "file://" + page], capture_output=True, text=True, timeout=timeout)
    return p


@unittest.skipUnless(CHROMIUM, "chromium is not installed (.ci/run installs it)")
class Layout(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        d = cls.tmp.name
        cls.made, cls.refused, pages = [], [], []
        # generated jobs: 8 ranks (tall rows, step marks), 24 (the compact rows of many ranks and steps)
        jobs = {}
        for ranks, layers in ((8, 2), (24, 1)):
            job = os.path.join(d, "job%d" % ranks)
            subprocess.run(["python3", GEN, "--out", job, "--ranks", str(ranks), "--layers", str(layers), "--steps",
                            "3", "--straggler", "5", "--quiet"], check=True)
            jobs[job] = "generated_%d_ranks" % ranks
        for src in traces() + [DLRM] + sorted(jobs):
            name = jobs.get(src) or name_of(src)
            out = os.path.join(d, name + ".html")
            p = subprocess.run([HTA, "report", src, "--quiet", "--html", out], capture_output=True, text=True)
            if p.returncode == 0:
                pages.append((name, out))
            else:
                cls.refused.append((name, p.returncode, p.stderr))
        cls.pages = [n for n, _ in pages]
        cls.files = dict(pages)
        cls.results, cls.failures = {}, []
        for i in range(0, len(pages), BATCH):
            h = os.path.join(d, "pages%d.html" % i)
            with open(h, "w", encoding="utf-8") as f:
                f.write(harness(pages[i:i + BATCH]))
            p = chromium_dom(h)
            m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
            if p.returncode or not m or not m.group(1):
                cls.failures.append("pages %d..: rc %d, no result: %s" % (i, p.returncode, p.stderr[-1500:]))
                continue
            for r in json.loads(html.unescape(m.group(1))):
                cls.results[(r["page"], r["width"])] = r["problems"]

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_chromium_checked_every_page(self):
        self.assertEqual(self.failures, [])
        self.assertEqual(sorted(self.results), sorted((n, w) for n in self.pages for w in WIDTHS))

    def test_the_pages(self):
        """Every trace makes a page but an execution trace (no traceEvents), refused with a one-line error;
        the two jobs among them."""
        self.assertEqual([(n, rc) for n, rc, _ in self.refused],
                         [("hta_execution_trace_benchmark_simple_add_et_json_gz", 1)])
        self.assertIn('no "traceEvents" array', self.refused[0][2])
        self.assertGreaterEqual(len(self.pages), 60)
        self.assertIn("generated_8_ranks", self.pages)
        self.assertIn("generated_24_ranks", self.pages)
        self.assertIn(name_of(DLRM), self.pages)

    def test_a_roof_or_why_not(self):
        """The roofline has the device's roof, or a sentence saying its peaks are unknown, never neither:
        HTA's sampled trace names no GPU; the H100 trace gets the H100's roof."""
        without = []
        for name, path in sorted(self.files.items()):
            with open(path, encoding="utf-8") as f:
                page = f.read()
            if 'id="chart-roofline"' not in page:
                continue
            roof = 'stroke="#b22"' in page.split('id="chart-roofline"', 1)[1].split("</svg>", 1)[0]
            said = 'id="roofline-no-roof"' in page
            self.assertNotEqual(roof, said, name)
            if said:
                without.append(name)
                self.assertIn("No roof is drawn: ", page)
        self.assertIn("hta_timeline_analysis_sampled_rank_0_json_gz", without)
        self.assertNotIn("real_h100_qwen_Qwen_Qwen1_5_0_5B_Chat_1016005_json_gz", without)
        self.assertIn("real_h100_qwen_Qwen_Qwen1_5_0_5B_Chat_1016005_json_gz", self.pages)

    def test_laid_out_whole(self):
        for (page, width), problems in sorted(self.results.items()):
            with self.subTest(page=page, width=width):
                if problems:
                    self.fail("%d problems:\n%s" % (len(problems), "\n".join(problems[:12])))


class Checks(unittest.TestCase):
    """The checks see what they are for: a page with each defect fails them."""

    @unittest.skipUnless(CHROMIUM, "chromium is not installed (.ci/run installs it)")
    def test_defects_are_seen(self):
        bad = ('<html><body style="margin:8px"><h1 style="white-space:nowrap">%s</h1>'
               '<svg class="chart" id="chart-whatif" width="300" height="100" viewBox="0 0 300 100">'
               '<g class="legend"><rect x="10" y="5" width="12" height="12"/><text x="26" y="15" class="lg">'
               'gpu_kernel_kernel_overhead</text><text x="60" y="15" class="lg">next</text></g>'
               '<text x="280" y="50" class="lb">cut at the edge</text><text x="5" y="80" class="lb">a</text>'
               '<text x="5" y="88" class="lb">a</text><text x="100" y="60" class="tk">1.52e+03</text></svg>'
               '<p>step #-1</p><div style="width:2000px">wide</div></body></html>' % ("x" * 300))
        with tempfile.TemporaryDirectory() as d:
            page = os.path.join(d, "bad.html")
            with open(page, "w") as f:
                f.write(bad)
            h = os.path.join(d, "h.html")
            with open(h, "w") as f:
                f.write(harness([("bad", page)]))
            p = chromium_dom(h)
        m = re.search(r'<pre id="result">(.*?)</pre>', p.stdout, re.S)
        self.assertTrue(m, p.stderr[-1500:])
        found = "\n".join(x for r in json.loads(html.unescape(m.group(1))) for x in r["problems"])
        for what in ("content wider than its box", "beyond the viewport", "text cut at the chart's edge",
                     "legend entries overlap", "two bars labelled 'a'", "labels overlap: text.lb 'a'",
                     "drawn without a mark",
                     "with an exponent: ", "a step named #-1", "chart busy neither drawn nor said why"):
            self.assertIn(what, found)


if __name__ == "__main__":
    unittest.main()
