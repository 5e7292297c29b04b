#!/usr/bin/env python3
"""One figure, one value (issue 39): the report of every trace of tests/data (each file alone, and the multi-rank
folders), rendered as JSON and as text, says each figure the same wherever it appears twice:

- the step in every finding's "(P% of STEP)" is the headline's step;
- a rank's critical path is over the report's window, and the finding says the window's length beside the path's:
  the path never exceeds it, and the critical_path table adds up to the path (the README's sample printed a
  1.23 s path of both steps beside a 607.9 ms step); the window is the one the rank's idle observation names;
- no saving exceeds the time its evidence names (the first "(P% of STEP)": the DLRM job's cpu_overhead saved
  44.7% beside an idle time of 35%);
- the text page prints the headline's figures and the findings' savings the JSON page holds.

Each test prints its table and asserts every row."""
import glob
import json
import os
import re
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DATA = os.path.join(ROOT, "tests", "data")
NOT_TRACES = ("benchmark_simple_add_et.json.gz",)
MULTI = ["hta/trace_filter", "real-diag/facebookresearch__param/et_replay/tests/inputs/dlrm_kineto", "comm"]
DUR = r"(-?[\d.]+) (us|ms|s)"
UNIT = {"us": 1, "ms": 1e3, "s": 1e6}
PCT_OF = re.compile(r"\((\d+)% of " + DUR + r"\)|busy (\d+)% of " + DUR)
PATH = re.compile(r"critical path of the window \((?:(\d+) steps?(?: on the GPU timeline)?|the whole trace span), "
                  + DUR + r"\): " + DUR + r", ([\d.]+)% (\w+)")
IDLE_WIN = re.compile(r"GPU idle [\d.]+% of the " + DUR + r" window")


def us(v, unit):
    return float(v) * UNIT[unit]


def half_unit(text_value, unit):
    """Half the last printed digit of a duration as rp_dur prints it ("607.3 ms": 0.05 ms)."""
    dec = len(text_value.split(".")[1]) if "." in text_value else 0
    return 0.5 * 10 ** -dec * UNIT[unit]


def fmt_dur(u):
    """rp_dur: a duration as the report writes it."""
    ns = u * 1e3
    if abs(ns) < 10e6:
        return "%.0f us" % (ns / 1e3)
    if abs(ns) < 1e9:
        return "%.1f ms" % (ns / 1e6)
    return "%.2f s" % (ns / 1e9)


def traces():
    out = []
    for p in sorted(glob.glob(os.path.join(DATA, "**", "*.json*"), recursive=True)):
        if re.search(r"\.json(\.gz)?$", p) and not p.endswith("labels.json") and os.path.basename(p) not in NOT_TRACES:
            out.append(p)
    return out + [os.path.join(DATA, m) for m in MULTI]


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


_cache = {}


def report(path, fmt="json"):
    if (path, fmt) not in _cache:
        p = subprocess.run([HTA, "report", path, "--format", fmt, "--quiet"], capture_output=True, text=True)
        if p.returncode:
            raise AssertionError("hta report %s: %s" % (path, p.stderr[-400:]))
        _cache[(path, fmt)] = json.loads(p.stdout) if fmt == "json" else p.stdout
    return _cache[(path, fmt)]


def name(p):
    return os.path.relpath(p, DATA)[-60:]


class Figures(unittest.TestCase):
    def table(self, title, head, lines, bad):
        print("\n" + title + "\n" + head + "\n" + "\n".join(lines))
        self.assertFalse(bad, "\n".join(bad))

    def test_step_is_the_headlines_everywhere(self):
        lines, bad = [], []
        for p in traces():
            o = report(p)
            step = rows(o["headline"])[0]["step_us"]
            if step is None:
                continue
            want = fmt_dur(step)
            seen = 0
            for f in rows(o["findings"]) + [x for x in rows(o["observations"]) if x["rank"] is None]:
                text = f.get("evidence") or f.get("finding") or ""
                for m in PCT_OF.finditer(text):
                    got = "%s %s" % (m.group(2), m.group(3)) if m.group(1) else "%s %s" % (m.group(5), m.group(6))
                    seen += 1
                    if got != want:
                        bad.append("%s: %r says a step of %s, the headline %s" % (name(p), text[:80], got, want))
            lines.append("%-60s %12s %5d" % (name(p), want, seen))
        self.table("the step each finding quotes", "%-60s %12s %5s" % ("trace", "step", "seen"), lines, bad)

    def test_path_never_exceeds_its_window(self):
        lines, bad = [], []
        for p in traces():
            o = report(p)
            cpt = rows(o.get("critical_path", {"columns": [], "data": []}))
            idle_win = {x["rank"]: IDLE_WIN.search(x["finding"]) for x in rows(o["observations"]) if x["area"] == "idle"}
            for x in rows(o["observations"]):
                if x["area"] != "critical path" or x["rank"] is None:
                    continue
                m = PATH.search(x["finding"])
                if not m:
                    continue  # CPU-only ranks and HTA's graph say it their way
                win, path = us(m.group(2), m.group(3)), us(m.group(4), m.group(5))
                tol = half_unit(m.group(2), m.group(3)) + half_unit(m.group(4), m.group(5))
                total = sum(r["duration_us"] for r in cpt if r["rank"] == x["rank"])
                iw = idle_win.get(x["rank"])
                lines.append("%-60s %4d %12.1f %12.1f %12.1f" % (name(p), x["rank"], win, path, total))
                if path > win + tol:
                    bad.append("%s rank %d: path %s longer than its window %s" % (name(p), x["rank"], path, win))
                if abs(total - path) > half_unit(m.group(4), m.group(5)) + 1:
                    bad.append("%s rank %d: the critical_path table adds up to %.1f us, the finding says %.1f" % (
                        name(p), x["rank"], total, path))
                if iw and "%s %s" % (iw.group(1), iw.group(2)) != "%s %s" % (m.group(2), m.group(3)):
                    bad.append("%s rank %d: idle over a %s %s window, the path over %s %s" % (
                        name(p), x["rank"], iw.group(1), iw.group(2), m.group(2), m.group(3)))
        self.table("critical path and its window (us)", "%-60s %4s %12s %12s %12s" % (
            "trace", "rank", "window", "path", "table"), lines, bad)

    def test_saving_never_exceeds_its_evidence(self):
        lines, bad = [], []
        for p in traces():
            for f in rows(report(p)["findings"]):
                if f["saving_pct"] is None:
                    continue
                # the times the evidence names, as shares of the step: "(P% of STEP)", "(P%)", "busy P% of"
                named = [float(x) for x in re.findall(r"\((\d+)%(?: of [^)]*)?\)|busy (\d+)% of", f["evidence"])
                         for x in x if x]
                if not named:
                    bad.append("%s: %s names no time: %s" % (name(p), f["cause"], f["evidence"][:100]))
                    continue
                named = max(named)
                lines.append("%-60s %-22s %7.1f %7.0f" % (name(p), f["cause"], f["saving_pct"], named))
                if f["saving_pct"] > named + 0.5:
                    bad.append("%s: %s saves %.1f%%, its evidence names %.0f%%" % (name(p), f["cause"],
                                                                                     f["saving_pct"], named))
        self.table("savings against the time their evidence names", "%-60s %-22s %7s %7s" % (
            "trace", "cause", "saving%", "named%"), lines, bad)

    def test_text_page_prints_the_json_figures(self):
        lines, bad = [], []
        for p in traces():
            o, text = report(p), report(p, "table")
            nums = []
            for w in text.split():
                try:
                    nums.append(float(w.rstrip("%,;")))
                except ValueError:
                    pass
            h = rows(o["headline"])[0]
            want = [h[k] for k in ("step_us", "gpu_busy_pctg", "cpu_busy_pctg") if h[k] is not None]
            want += [f["saving_pct"] for f in rows(o["findings"]) if f["saving_pct"] is not None]
            # the table format rounds (large figures to whole numbers): the same figure within its rounding
            missing = [w for w in want if not any(abs(x - w) <= max(0.5, 1e-6 * abs(w)) for x in nums)]
            lines.append("%-60s %3d %s" % (name(p), len(want), " ".join(missing)))
            if missing:
                bad.append("%s: the text page lacks %s" % (name(p), missing))
        self.table("figures of the JSON page on the text page", "%-60s %3s %s" % ("trace", "n", "missing"), lines, bad)


if __name__ == "__main__":
    unittest.main()
