#!/usr/bin/env python3
"""The simulation is the trace (docs/report.md, "Invariants"): where a step does not replay to its duration in
the trace, the report says so.  A step whose operator outlasts it (an aten op that starts 100 us before
ProfilerStep#N ends and runs 300 us past it, as a trace cut mid-call or a clock hiccup leaves it) is nested by
cutting the step at the operator's start, so the graph's step is 100 us short of the trace's: a note names the
step and both durations.  Twelve steps with a kernel each, so that the report judges the trace."""
import json
import os
import subprocess
import tempfile
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
B, STEP = 1_000_000, 1000


def X(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": B + ts, "dur": dur, "args": args}


def trace(path, overrun):
    ev = []
    for n in range(12):
        t = n * (STEP + 500)
        ev += [X("ProfilerStep#%d" % (n + 1), "user_annotation", t, STEP),
               X("aten::mm", "cpu_op", t + 100, 200),
               X("cudaLaunchKernel", "cuda_runtime", t + 150, 20, correlation=n + 1),
               X("gemm", "kernel", t + 200, 300, pid=0, tid=7, device=0, stream=7, correlation=n + 1)]
        if overrun and n == 4:
            ev.append(X("aten::copy_", "cpu_op", t + STEP - 100, 400))
    with open(path, "w") as f:
        json.dump({"schemaVersion": 1, "distributedInfo": {"rank": 0}, "traceEvents": ev}, f)


class ReplayNote(unittest.TestCase):
    def notes(self, overrun):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "rank-0.json")
            trace(p, overrun)
            r = subprocess.run([HTA, "report", p, "--format", "json"], capture_output=True, text=True, check=True)
            return [ln for ln in r.stderr.splitlines() if "replays" in ln]

    def test_a_step_that_does_not_replay_is_said(self):
        (n,) = self.notes(True)
        self.assertIn("rank 0: the simulation replays ProfilerStep#5 in 900.0 us, the trace has 1000.0 us "
                      "(10.0% apart)", n)

    def test_steps_that_replay_say_nothing(self):
        self.assertEqual(self.notes(False), [])


if __name__ == "__main__":
    unittest.main()
