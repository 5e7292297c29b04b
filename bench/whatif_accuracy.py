#!/usr/bin/env python3
"""What-if accuracy against re-runs (docs/critical-path.md, "How accurate").

For each scenario, job mode (DDP, FSDP) and seed: generate a job with tools/gen_kineto_trace.py, predict
each rank's step times under the scenario's what-if rules (`hta critical-path --what-if`), generate the
same job again with the scenario's knobs (the ground truth), and compare step by step.  Prints every
step's prediction and error, then the error distribution per scenario and over all.

    bench/whatif_accuracy.py                       # the published set: 8 scenarios x DDP/FSDP x 2 seeds
    bench/whatif_accuracy.py --seeds 7 8 9 --ranks 4 --layers 3    # other seeds and sizes
    bench/whatif_accuracy.py --scenario gpu_faster --quiet          # one scenario, summary only
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
GEN = os.path.join(ROOT, "tools", "gen_kineto_trace.py")

# name: (knobs of the base job, knobs of the re-run, what-if rules).  Every job starts from BASE (the
# generator's defaults, spelt out); a later knob wins.
BASE = ["--cpu-scale", "2", "--gpu-scale", "1"]
SCENARIOS = {
    "gpu_faster": ([], ["--gpu-scale", "0.5"], ["type:comp=x0.5"]),
    "gpu_slower": ([], ["--gpu-scale", "1.6"], ["type:comp=x1.6"]),
    "cpu_faster": ([], ["--cpu-scale", "1"], ["cpu=x0.5"]),
    "cpu_slower": ([], ["--cpu-scale", "4"], ["cpu=x2"]),
    "gpu_and_cpu_faster": ([], ["--gpu-scale", "0.5", "--cpu-scale", "1"], ["type:comp=x0.5", "cpu=x0.5"]),
    "data_loading_removed": (["--gap-prob", "1", "--gap-ms", "40"], ["--gap-prob", "0"],
                             ["op:enumerate(DataLoader)*=0"]),
    "slow_host_fixed": (["--cpu-scale", "12"], ["--cpu-scale", "2"], ["cpu=x0.1666667"]),
    "forloop_optimizer_replaced": (["--optimizer", "forloop"], ["--optimizer", "foreach"],
                                   ["op:Optimizer.step#*=x0.02"]),
    "straggler_fixed": (["--straggler", "3", "--straggler-slowdown", "1.3"], ["--straggler", "-1"],
                        ["rank:3=median"]),
}
# "as fast as the median rank" needs ranks to take a median of: this scenario runs on at least 8
MIN_RANKS = {"straggler_fixed": 8}


def gen(out, mode, seed, ranks, layers, steps, knobs):
    cmd = [sys.executable, GEN, "--out", out, "--ranks", str(ranks), "--layers", str(layers), "--steps",
           str(steps), "--mode", mode, "--seed", str(seed), "--quiet", "--jobs", "1"] + BASE + knobs
    subprocess.run(cmd, check=True)


def step_times(path):
    """{step: dur_us} of the ProfilerStep#N user annotations of one rank file."""
    with open(path) as f:
        ev = json.load(f)["traceEvents"]
    out = {}
    for e in ev:
        n = e.get("name", "")
        if e.get("ph") == "X" and e.get("cat") == "user_annotation" and n.startswith("ProfilerStep#"):
            out[int(n.split("#")[1])] = float(e["dur"])
    return out


def predict(hta, d, rules):
    """{(rank, step): simulated_us} of the job's graph (every rank, joined at the collectives)."""
    cmd = [hta, "critical-path", d, "--all-ranks", "--format", "json", "--quiet"]
    for r in rules:
        cmd += ["--what-if", r]
    res = subprocess.run(cmd, check=True, capture_output=True, text=True)
    t = json.loads(res.stdout)["what_if_steps"]
    cols = t["columns"]
    return {(int(row[cols.index("rank")]), int(row[cols.index("step")])): row[cols.index("simulated_us")]
            for row in t["data"]}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--hta", default=os.path.join(ROOT, "build", "hta"))
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2])
    ap.add_argument("--modes", nargs="+", default=["ddp", "fsdp"])
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--layers", type=int, default=2)
    ap.add_argument("--steps", type=int, default=4)
    ap.add_argument("--scenario", nargs="+", default=list(SCENARIOS))
    ap.add_argument("--quiet", action="store_true", help="summary only")
    a = ap.parse_args()
    allerr = []
    summary = []
    with tempfile.TemporaryDirectory() as tmp:
        if not a.quiet:
            print("%-27s %-4s %4s %4s %4s %12s %12s %7s" % ("scenario", "mode", "seed", "rank", "step", "actual_us",
                                                           "predicted_us", "error%"))
        for name in a.scenario:
            base_knobs, new_knobs, rules = SCENARIOS[name]
            ranks = max(a.ranks, MIN_RANKS.get(name, 0))
            errs = []
            for mode in a.modes:
                for seed in a.seeds:
                    bd = os.path.join(tmp, "%s-%s-%d-base" % (name, mode, seed))
                    nd = os.path.join(tmp, "%s-%s-%d-new" % (name, mode, seed))
                    gen(bd, mode, seed, ranks, a.layers, a.steps, base_knobs)
                    # the re-run: the base job's knobs, then the scenario's (a later knob wins)
                    gen(nd, mode, seed, ranks, a.layers, a.steps, base_knobs + new_knobs)
                    pred_all = predict(a.hta, bd, rules)
                    for rank in range(ranks):
                        pred = {s: v for (r, s), v in pred_all.items() if r == rank}
                        act = step_times(os.path.join(nd, "rank-%d.json" % rank))
                        for step in sorted(act):
                            if step not in pred:
                                continue
                            e = (pred[step] - act[step]) / act[step] * 100.0
                            errs.append(abs(e))
                            if not a.quiet:
                                print("%-27s %-4s %4d %4d %4d %12.1f %12.1f %+7.2f" % (name, mode, seed, rank, step,
                                                                                      act[step], pred[step], e))
            allerr += errs
            summary.append((name, len(errs), statistics.median(errs), max(errs)))
    print()
    print("%-27s %6s %10s %10s" % ("scenario", "steps", "median%", "worst%"))
    for name, n, med, worst in summary:
        print("%-27s %6d %10.2f %10.2f" % (name, n, med, worst))
    print("%-27s %6d %10.2f %10.2f" % ("all", len(allerr), statistics.median(allerr), max(allerr)))


if __name__ == "__main__":
    main()
