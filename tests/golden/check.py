#!/usr/bin/env python3
"""Golden comparison with explained differences.

usage: check.py [--default] [--real-diag] HTA_BIN ANALYSIS [ANALYSIS ...]   (tests/golden/test_golden.py: a test
per analysis)

Runs tests/golden/golden_check.py (on tests/data/hta against tests/golden/hta) for the analyses; with
--real-diag on the 12 real traces of tests/data/real-diag against HTA's results there (tests/golden/real-diag,
the large parts gzipped; INDEX.tsv names each golden's trace), --hta-compat only: every difference must be
listed with its reason in tests/golden/expected/real-diag-compat.txt.
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
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
root = os.path.abspath(os.path.join(here, "..", ".."))
TRACES = os.path.join(root, "tests", "data", "hta")
GOLDEN = os.path.join(here, "hta")


def load_expected(analyses, default, real_diag=False):
    exp = []
    if not default and not real_diag:
        return exp
    name = "real-diag-compat.txt" if real_diag else "default.txt"
    for f in sorted(glob.glob(os.path.join(here, "expected", name))):
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


def real_diag_traces(tmp):
    """A folder per golden of tests/golden/real-diag, linking its trace in tests/data/real-diag (INDEX.tsv)."""
    with open(os.path.join(here, "real-diag", "INDEX.tsv")) as f:
        for line in f.read().splitlines()[1:]:
            name, trace = line.split("\t")
            src = os.path.join(root, "tests", "data", "real-diag", trace)
            if os.path.isdir(src):
                os.symlink(src, os.path.join(tmp, name))
            else:
                os.mkdir(os.path.join(tmp, name))
                os.symlink(src, os.path.join(tmp, name, os.path.basename(trace)))
    return tmp


def check(hta, analyses, default=False, real_diag=False):
    """-> (summary lines, problems): problems are the unexplained and the stale differences."""
    with tempfile.TemporaryDirectory() as tmp:
        traces, golden = (real_diag_traces(tmp), os.path.join(here, "real-diag")) if real_diag else (TRACES, GOLDEN)
        cmd = [sys.executable, os.path.join(here, "golden_check.py"), hta, traces, golden] + analyses + ["--verbose"]
        env = dict(os.environ, GOLDEN_EXTRA_ARGS="" if default else "--hta-compat")
        p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    lines = p.stdout.strip().splitlines()
    summary = lines[-1] if lines else p.stderr
    exp = load_expected(analyses, default, real_diag)
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
    default = "--default" in args
    real_diag = "--real-diag" in args
    args = [a for a in args if a not in ("--default", "--real-diag")]
    summary, problems = check(args[0], args[1:], default, real_diag)
    print("\n".join(summary + problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
