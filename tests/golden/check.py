#!/usr/bin/env python3
"""Golden comparison with explained differences.

usage: check.py [--default] HTA_BIN ANALYSIS [ANALYSIS ...]   (tests/golden/test_golden.py: a test per analysis)

Runs tests/golden/golden_check.py (on tests/data/hta against tests/golden/hta) for the analyses.
With --hta-compat (the default here) every table must equal HTA's: no difference is allowed.
With --default, hta's default mode is compared, and every mismatch must be listed in
tests/golden/expected/default.txt, a line `<folder> <analysis>[/<table>]: <regex on the mismatch text>  # why`
(the cause, explained in docs/differences-from-hta.md).  Every listed difference must still occur, so the
list cannot go stale.
"""
import glob
import os
import re
import subprocess
import sys

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
TRACES = os.path.join(root, "tests", "data", "hta")
GOLDEN = os.path.join(here, "hta")


def load_expected(analyses, default):
    exp = []
    if not default:
        return exp
    for f in sorted(glob.glob(os.path.join(here, "expected", "default.txt"))):
        for ln, line in enumerate(open(f), 1):
            line = line.split("  #")[0].strip()
            if not line or line.startswith("#"):
                continue
            m = re.match(r"(\S+) (\S+?): (.*)$", line)
            if not m:
                sys.exit(f"{f}:{ln}: bad line")
            folder, what, rx = m.groups()
            if what.split("/")[0] in analyses:
                exp.append((folder, what, re.compile(rx), f"{os.path.basename(f)}:{ln}"))
    return exp


def check(hta, analyses, default=False):
    """-> (summary lines, problems): problems are the unexplained and the stale differences."""
    cmd = [sys.executable, os.path.join(here, "golden_check.py"), hta, TRACES, GOLDEN] + analyses + ["--verbose"]
    env = dict(os.environ, GOLDEN_EXTRA_ARGS="" if default else "--hta-compat")
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = p.stdout.strip().splitlines()
    summary = lines[-1] if lines else p.stderr
    exp = load_expected(analyses, default)
    used = set()
    bad = []
    for line in lines[:-1]:
        m = re.match(r"(\S+) (\S+): (.*)$", line)
        if not m:
            bad.append(line)
            continue
        folder, what, text = m.groups()
        hit = [e for e in exp if e[0] == folder and (e[1] == what or e[1] == what.split("/")[0])
               and e[2].search(text)]
        if hit:
            used.update(h[3] for h in hit)
        else:
            bad.append(line)
    problems = ["UNEXPLAINED: " + b for b in bad]
    problems += ["STALE expected difference (no longer occurs): " + e[3] for e in exp if e[3] not in used]
    if p.returncode not in (0, 1):
        problems.append(f"golden_check.py exit {p.returncode}: {p.stderr[-2000:]}")
    return [summary, f"explained differences: {len(used)}"], problems


def main():
    args = sys.argv[1:]
    default = args[:1] == ["--default"]
    if default:
        args = args[1:]
    summary, problems = check(args[0], args[1:], default)
    print("\n".join(summary + problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
