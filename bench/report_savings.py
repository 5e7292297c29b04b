#!/usr/bin/env python3
"""hta report's diagnosis against re-runs: for each planted problem (a data-loading stall every step, a slow host,
a slow rank among 8, two ranks among 8 slow on the host), generate the job with and without it, and print the first finding's cause and estimated
saving against the saving measured on the two jobs' step times (the headline's step_us: the median over steps
of the slowest rank's ProfilerStep).  docs/report.md, "Causes and savings".

    bench/report_savings.py                      # layers 4, steps 6, seeds 0 1 2 3
    bench/report_savings.py --layers 2 --steps 8 --seeds 4 5 6
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")
CASES = [("data_loading", 2, ["--gap-prob", "1", "--gap-ms", "40"]),
         ("cpu_overhead", 2, ["--cpu-scale", "6"]),
         ("straggler", 8, ["--straggler", "3", "--straggler-slowdown", "1.3"]),
         # two ranks of eight slow on the host (their CPU 4x slower, their GPU as the others'): the six others
         # wait for them in every collective
         ("straggler", 8, ["--host-slow", "2,5", "--host-slowdown", "4"])]


def report(hta, path):
    p = subprocess.run([hta, "report", path, "--format", "json", "--quiet"], capture_output=True, text=True, check=True)
    return json.loads(p.stdout)


def rows(t):
    return [dict(zip(t["columns"], r)) for r in t["data"]]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hta", default=os.path.join(ROOT, "build", "hta"))
    ap.add_argument("--layers", type=int, default=4)
    ap.add_argument("--steps", type=int, default=6)
    ap.add_argument("--seeds", type=int, nargs="+", default=[0, 1, 2, 3])
    a = ap.parse_args()
    print("%-5s %-13s %-13s %12s %12s %7s" % ("seed", "planted", "first", "estimated%", "measured%", "ratio"))
    for seed in a.seeds:
        for cause, ranks, plant in CASES:
            with tempfile.TemporaryDirectory() as d:
                for name, knobs in (("bad", plant), ("clean", [])):
                    subprocess.run([sys.executable, GEN, "--out", os.path.join(d, name), "--ranks", str(ranks),
                                    "--layers", str(a.layers), "--steps", str(a.steps), "--seed", str(seed),
                                    "--quiet", *knobs], check=True)
                bad, clean = report(a.hta, os.path.join(d, "bad")), report(a.hta, os.path.join(d, "clean"))
                s1, s0 = rows(bad["headline"])[0]["step_us"], rows(clean["headline"])[0]["step_us"]
                measured = 100 * (s1 - s0) / s1
                f = rows(bad["findings"])[0]
                print("%-5d %-13s %-13s %12.1f %12.1f %7.2f" % (seed, cause, f["cause"], f["saving_pct"], measured,
                                                               f["saving_pct"] / measured if measured else 0))


if __name__ == "__main__":
    main()
