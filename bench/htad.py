#!/usr/bin/env python3
"""htad's cost and latency (docs/capture.md, issue 14's target: under 1% of a core at 1 s sampling with 8
clients polling).  Starts build/htad (fake NVML and DCGM with 8 GPUs, so that every sample reads GPUs too),
8 clients that poll as libkineto does (tests/daemon/htadtest.FakeKineto; --poll-s 1, libkineto's default
is 5 s), measures htad's CPU time (utime + stime from /proc) over --seconds, then runs `hta capture` with no
start delay and prints the time from the request to all 8 traces in DIR; also the time htad takes to
answer a poll (500 polls from a ninth client).
    bench/htad.py [--seconds 30] [--poll-s 1] [--captures 3]"""
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "daemon"))
import htadtest as ht  # noqa: E402


def cpu_s(pid):
    with open(f"/proc/{pid}/stat") as f:
        v = f.read().rsplit(")", 1)[1].split()
    return (int(v[11]) + int(v[12])) / os.sysconf("SC_CLK_TCK")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--seconds", type=float, default=30)
    ap.add_argument("--poll-s", type=float, default=1.0)
    ap.add_argument("--captures", type=int, default=3)
    a = ap.parse_args()
    d = ht.Daemon("--interval-ms", "1000", "--quiet", env={"FAKE_NVML_GPUS": "8"})
    clients = [ht.FakeKineto(d.ipc, interval=a.poll_s).start() for k in range(8)]
    try:
        time.sleep(2)
        c0, t0 = cpu_s(d.proc.pid), time.time()
        time.sleep(a.seconds)
        c1, t1 = cpu_s(d.proc.pid), time.time()
        pct = 100 * (c1 - c0) / (t1 - t0)
        print(f"htad CPU: {pct:.3f}% of one core over {t1 - t0:.0f} s (1 s sampling, 8 GPUs, 8 clients polling "
              f"every {a.poll_s:g} s)")
        probe = ht.FakeKineto(d.ipc, job_id=999)  # another job: not captured below
        lat = probe.timed_polls(500)  # timed in the client's own process
        probe.stop()
        lat.sort()
        print(f"poll answered in {lat[len(lat) // 2]:.3f} ms median, {lat[int(len(lat) * 0.99)]:.3f} ms p99, "
              f"{lat[-1]:.3f} ms max (500 polls; libkineto waits ~90 ms)")
        for k in range(a.captures):
            out = os.path.join(d.tmp, f"out{k}")
            t = time.time()
            p = subprocess.run([ht.HTA, "capture", f"localhost:{d.port}", "-o", out, "--start-delay-ms", "0",
                                "--duration-ms", "100"], capture_output=True, text=True)
            dt = time.time() - t
            n = len([f for f in os.listdir(out) if f.endswith(".json")]) if os.path.isdir(out) else 0
            print(f"capture {k + 1}: {n} traces in DIR {dt:.2f} s after the request (exit {p.returncode}; "
                  f"clients poll every {a.poll_s:g} s and write 0.1 s after their config)")
    finally:
        for c in clients:
            c.stop()
        d.stop()
        shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
