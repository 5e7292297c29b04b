#!/usr/bin/env python3
"""hta comms (docs/comms.md): collectives' sizes, algorithm and bus bandwidth, wait for the last rank.

HandMade: a 2-rank trace written here (H100s), every figure worked by hand below, against NCCL's
  formulas (nccl-tests' doc/PERFORMANCE.md: busbw = algbw x 2(n-1)/n for all-reduce, (n-1)/n for
  all-gather, reduce-scatter, all-to-all, 1 for broadcast and point-to-point).
IndependentCount: the 8-rank DLRM job of tests/data/real-diag (PyTorch 2.0's record_param_comms: no
  `In msg nelems`, sizes from the recorded tensors) and a generated 4-rank FSDP job (In/Out msg nelems,
  Seq), counted here from the raw JSON: the calls, bytes and kernel ns of every class, and the wait from
  matching each call across the ranks.
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import unittest
from collections import defaultdict
from decimal import Decimal

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DLRM = os.path.join(ROOT, "tests", "data", "real-diag", "facebookresearch__param", "et_replay", "tests", "inputs",
                    "dlrm_kineto")


def run(*args):
    p = subprocess.run([HTA, *args], capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


def tables(*args):
    rc, out, err = run(*args, "--format", "json")
    if rc:
        raise AssertionError(f"hta {' '.join(args)}: exit {rc}: {err}")
    return {k: [dict(zip(t["columns"], r)) for r in t["data"]] for k, t in json.loads(out).items()}, err


# ---- the hand-made job ----

def ev(name, cat, ts, dur, tid, args):
    return {"ph": "X", "cat": cat, "name": name, "pid": 1 if cat != "kernel" else 0, "tid": tid, "ts": ts,
            "dur": dur, "args": args}


def coll(out, corr, cpu_ts, kts, kdur, kernel, rec_args):
    """record_param_comms [cpu_ts, cpu_ts+10) with a launch inside it and its kernel at kts."""
    out.append(ev("record_param_comms", "cpu_op", cpu_ts, 10, 1, rec_args))
    out.append(ev("cudaLaunchKernel", "cuda_runtime", cpu_ts + 2, 3, 1, {"correlation": corr}))
    out.append(ev(kernel, "kernel", kts, kdur, 7, {"correlation": corr, "stream": 7, "device": 0}))


def rec(name, dtype, i, o, seq, n=2, **extra):
    a = {"Collective name": name, "dtype": dtype, "In msg nelems": i, "Out msg nelems": o, "Group size": n,
         "Process Group Name": "0", "Process Group Description": "default_pg", "Process Group Ranks": "[0, 1]",
         "In split size": "[]", "Out split size": "[]", "Seq": seq}
    a.update(extra)
    return a


def handmade_rank(rank):
    e = []
    # all-reduce of 1,000,000 floats (4,000,000 B), Seq 1: rank 0's kernel [1000,1100), rank 1's [1040,1100)
    coll(e, 10, 900, 1000 if rank == 0 else 1040, 100 if rank == 0 else 60, "ncclDevKernel_AllReduce_Sum_f32_RING_LL",
         rec("allreduce", "Float", 1000000, 1000000, 1))
    # all-gather, 1000 bf16 in, 2000 out (4000 B), Seq 2: both [2000,2010)
    coll(e, 11, 1900, 2000, 10, "ncclDevKernel_AllGather_RING_LL", rec("_allgather_base", "BFloat16", 1000, 2000, 2))
    # all-to-allv of 4 rows x 2 floats: rank 0 sends rows [3, 1], rank 1 [2, 2]; Seq 3, both [3000,3020)
    split = "[3, 1]" if rank == 0 else "[2, 2]"
    out_n = 10 if rank == 0 else 6  # rank 0 gets 3 + 2 rows, rank 1 gets 1 + 2: x 2 floats
    coll(e, 12, 2900, 3000, 20, "ncclDevKernel_SendRecv(ncclDevComm*)",
         rec("all_to_allv", "Float", 8, out_n, 3, **{"In split size": split}))
    # a send (rank 0) and its recv (rank 1): point-to-point, no wait; 250,000 B each, [4000,4050)
    coll(e, 13, 3900, 4000, 50, "ncclDevKernel_SendRecv(ncclDevComm*)",
         rec("send" if rank == 0 else "recv", "Byte", 250000, 250000, 1, **{"Process Group Name": "p2p"}))
    # a broadcast kernel with no record: its time and a note
    e.append(ev("cudaLaunchKernel", "cuda_runtime", 4900, 3, 1, {"correlation": 14}))
    e.append(ev("ncclDevKernel_Broadcast_RING_LL(ncclDevComm*)", "kernel", 5000, 30, 7,
                {"correlation": 14, "stream": 7, "device": 0}))
    return {"schemaVersion": 1, "distributedInfo": {"rank": rank, "world_size": 2, "backend": "nccl"},
            "deviceProperties": [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "computeMajor": 9, "computeMinor": 0,
                                  "numSms": 132, "totalGlobalMem": 85000000000}],
            "traceEvents": e}


class HandMade(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.dir = tempfile.mkdtemp()
        for r in (0, 1):
            with open(os.path.join(cls.dir, f"rank{r}.json"), "w") as f:
                json.dump(handmade_rank(r), f)
        cls.t, cls.err = tables("comms", cls.dir)
        cls.rows = {(r["op"], r["msg_bytes"]): r for r in cls.t["collectives"]}

    @classmethod
    def tearDownClass(cls):
        shutil.rmtree(cls.dir)

    def test_allreduce(self):
        r = self.rows[("allreduce", 4000000)]
        # 2 calls, 100 + 60 us; algbw 4e6 B x 2 / 160,000 ns = 50 GB/s; busbw x 2(2-1)/2 = 50
        self.assertEqual((r["calls"], r["ranks"], r["group_size"], r["dtype"], r["process_group"]),
                         (2, 2, 2, "Float", "0 (default_pg)"))
        self.assertEqual(r["time_us"], 160)
        self.assertAlmostEqual(r["algbw_gbps"], 50, places=9)
        self.assertAlmostEqual(r["busbw_gbps"], 50, places=9)
        # rank 0 starts at 1000, the last (rank 1) at 1040: rank 0 waits 40 us, rank 1 none
        self.assertEqual(r["wait_us"], 40)
        # without the wait: 50 x 160 / 120
        self.assertAlmostEqual(r["busbw_xfer_gbps"], 50 * 160 / 120, places=9)
        # H100 SXM's NVLink 4: 450 GB/s per direction
        self.assertAlmostEqual(r["link_peak_pct"], 100 * 50 / 450, places=9)
        self.assertIsNone(r["note"])

    def test_allgather_counts_the_output(self):
        r = self.rows[("allgather", 4000)]  # 2000 bf16 out > 1000 in
        # 4000 B x 2 / 20,000 ns = 0.4 GB/s; busbw x (2-1)/2 = 0.2; both start at 2000: no wait
        self.assertAlmostEqual(r["algbw_gbps"], 0.4, places=12)
        self.assertAlmostEqual(r["busbw_gbps"], 0.2, places=12)
        self.assertEqual((r["calls"], r["wait_us"], r["dtype"]), (2, 0, "BFloat16"))

    def test_alltoallv(self):
        # rank 0: max(8, 10) floats = 40 B; rank 1: max(8, 6) = 32 B: two classes of one call each
        a, b = self.rows[("alltoall", 40)], self.rows[("alltoall", 32)]
        self.assertEqual((a["calls"], b["calls"], a["wait_us"], b["wait_us"]), (1, 1, 0, 0))
        self.assertAlmostEqual(a["algbw_gbps"], 40 / 20000, places=15)
        self.assertAlmostEqual(a["busbw_gbps"], 40 / 20000 / 2, places=15)
        # 8 floats over 4 rows: 8 B a row; rank 0 sends 3 rows to 0, 1 to 1; rank 1 2 and 2
        m = {(r["src_rank"], r["dst_index"]): (r["dst_rank"], r["calls"], r["bytes"]) for r in self.t["alltoallv_bytes"]}
        self.assertEqual(m, {(0, 0): (0, 1, 24), (0, 1): (1, 1, 8), (1, 0): (0, 1, 16), (1, 1): (1, 1, 16)})

    def test_point_to_point(self):
        s, r = self.rows[("send", 250000)], self.rows[("recv", 250000)]
        # factor 1: 250,000 B / 50,000 ns = 5 GB/s; not matched: no wait, a note
        self.assertAlmostEqual(s["busbw_gbps"], 5, places=12)
        self.assertAlmostEqual(r["algbw_gbps"], 5, places=12)
        self.assertIsNone(s["wait_us"])
        self.assertIn("point-to-point", s["note"])

    def test_no_record(self):
        r = self.rows[("broadcast", None)]
        self.assertEqual((r["calls"], r["time_us"], r["algbw_gbps"]), (2, 60, None))
        self.assertIn("no record_param_comms", r["note"])

    def test_link_table(self):
        (l,) = self.t["comm_link"]
        self.assertEqual((l["model"], l["peak_gbps"], l["ranks"], l["scale_up"]), ("H100 SXM5", 450, 2, 8))

    def test_options(self):
        t, _ = tables("comms", self.dir, "--peak-link-gbps", "100")
        r = [x for x in t["collectives"] if x["op"] == "allreduce"][0]
        self.assertAlmostEqual(r["link_peak_pct"], 50, places=9)
        t, _ = tables("comms", self.dir, "--scale-up", "1")
        r = [x for x in t["collectives"] if x["op"] == "allreduce"][0]
        self.assertIsNone(r["link_peak_pct"])
        self.assertIn("beyond one node", r["note"])
        self.assertEqual(run("comms", self.dir, "--peak-link-gbps", "-1")[0], 2)

    def test_one_rank_no_wait(self):
        t, _ = tables("comms", os.path.join(self.dir, "rank0.json"))
        r = [x for x in t["collectives"] if x["op"] == "allreduce"][0]
        self.assertEqual((r["calls"], r["time_us"], r["wait_us"]), (1, 100, None))
        self.assertIn("one rank: no wait", r["note"])

    def test_whole_load_equals_rank_by_rank(self):
        env = dict(os.environ, HTA_PER_RANK="0")
        p = subprocess.run([HTA, "comms", self.dir, "--format", "json"], capture_output=True, text=True, env=env)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(json.loads(p.stdout), json.loads(run("comms", self.dir, "--format", "json")[1]))


# ---- the independent count ----

DTYPE = {"float": 4, "double": 8, "c10::Half": 2, "c10::BFloat16": 2, "int": 4, "long int": 8, "signed char": 1,
         "unsigned char": 1, "bool": 1, "short int": 2}
SCALAR = {"Float": 4, "BFloat16": 2, "Half": 2, "Double": 8, "Int": 4, "Long": 8, "Byte": 1, "Char": 1, "Bool": 1}


def ns(v):
    return int(Decimal(str(v)) * 1000)


def load(path):
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        return json.load(f)


def largest(a):
    """numel x size of the largest plain tensor of an event's Input Dims / Input type, with its type."""
    best = None
    for d, t in zip(a.get("Input Dims") or [], a.get("Input type") or []):
        if t in DTYPE and isinstance(d, list) and all(isinstance(x, int) for x in d):
            n = 1
            for x in d:
                n *= x
            if best is None or n * DTYPE[t] > best[0]:
                best = (n * DTYPE[t], t)
    return best


def op_name(s):
    s = s.split("::")[-1].split(":")[-1].lstrip("_").replace("_", "").lower()
    for p, o in (("allreduce", "allreduce"), ("allgather", "allgather"), ("reducescatter", "reduce_scatter"),
                 ("alltoall", "alltoall"), ("broadcast", "broadcast")):
        if s.startswith(p):
            return o
    return s


def calls_of(path):
    """[(op, pg, n, dtype, msg, seq, start_ns, ns)] of the NCCL kernels' records of one rank file."""
    d = load(path)
    evs = [e for e in d["traceEvents"] if e.get("ph") == "X"]
    world = d.get("distributedInfo", {}).get("world_size", -1)
    launch = {e["args"]["correlation"]: e for e in evs if e.get("cat") == "cuda_runtime" and "correlation" in e.get("args", {})}
    cpu = defaultdict(list)
    for e in evs:
        if e.get("cat") in ("cpu_op", "user_annotation"):
            cpu[e["tid"]].append(e)
    calls = {}
    for k in evs:
        if k.get("cat") != "kernel" or not k["name"].startswith("nccl"):
            continue
        la = launch.get(k["args"].get("correlation"))
        lo, hi = ns(la["ts"]), ns(la["ts"]) + ns(la["dur"])
        stack = sorted((e for e in cpu[la["tid"]] if ns(e["ts"]) <= lo and ns(e["ts"]) + ns(e["dur"]) >= hi),
                       key=lambda e: (ns(e["ts"]), -ns(e["dur"])))  # outermost first
        recs = [e for e in stack if e["name"] == "record_param_comms"]
        r = recs[-1]
        key = id(r)
        if key in calls:
            c = calls[key]
            c[6] = min(c[6], ns(k["ts"]))
            c[7] += ns(k["dur"])
            continue
        a = r["args"]
        if "In msg nelems" in a:
            op = op_name(a["Collective name"])
            msg = max(a["In msg nelems"], a["Out msg nelems"]) * SCALAR[a["dtype"]]
            dt, n, pg, seq = a["dtype"], a["Group size"], a["Process Group Name"], a["Seq"]
        else:  # PyTorch 2.0: the record, the nccl:* range under it, the c10d operator above it
            i = stack.index(r)
            rng = [e for e in stack[i:] if e["name"].startswith("nccl:")]
            c10d = [e for e in stack[:i] if e["name"].startswith("c10d::")]
            op = op_name(rng[0]["name"])
            cands = [x for x in [largest(a)] + [largest(e["args"]) for e in rng] + [largest(c10d[-1]["args"])] if x]
            msg, dt = max(cands)
            n, pg, seq = world, None, -1
        calls[key] = [op, pg, n, dt, msg, seq, ns(k["ts"]), ns(k["dur"])]
    return list(calls.values())


def expected(paths):
    per_rank = {r: calls_of(p) for r, p in enumerate(paths)}
    # the wait: an instance is (pg, seq, op) with a Seq, else (op, pg, n, k-th of the rank's calls of that kind)
    inst = defaultdict(list)
    for r, cs in per_rank.items():
        k = defaultdict(int)
        for c in sorted(cs, key=lambda c: c[6]):
            op, pg, n, seq = c[0], c[1], c[2], c[5]
            key = (pg, seq, op) if seq >= 0 else (op, pg, n, k[(op, pg, n)])
            k[(op, pg, n)] += 1
            inst[key].append((r, c))
    wait = {}
    for key, members in inst.items():
        if len({r for r, _ in members}) < 2:
            continue
        last = max(c[6] for _, c in members)
        for _, c in members:
            wait[id(c)] = min(last - c[6], c[7])
    out = defaultdict(lambda: [0, 0, 0])
    for cs in per_rank.values():
        for c in cs:
            s = out[(c[0], c[3], c[4])]
            s[0] += 1
            s[1] += c[7]
            s[2] += wait.get(id(c), 0)
    return dict(out)


def got(path, *args):
    t, _ = tables("comms", path, *args)
    g = defaultdict(lambda: [0, 0, 0])
    for r in t["collectives"]:
        s = g[(r["op"], r["dtype"], r["msg_bytes"])]
        s[0] += r["calls"]
        s[1] += round(r["time_us"] * 1000)
        s[2] += round((r["wait_us"] or 0) * 1000)
    return dict(g), t


class IndependentCount(unittest.TestCase):
    def test_dlrm_8_ranks(self):
        paths = sorted(os.path.join(DLRM, f) for f in os.listdir(DLRM))
        paths.sort(key=lambda p: int(os.path.basename(p).split("_")[0][len("worker"):]))
        want = expected(paths)
        have, t = got(DLRM)
        self.assertEqual(have, want)
        # 9 classes; 3 all-reduces and 5 all-to-alls per rank (kjt values' sizes differ by rank)
        self.assertEqual(sum(v[0] for k, v in want.items() if k[0] == "allreduce"), 24)
        self.assertEqual(sum(v[0] for k, v in want.items() if k[0] == "alltoall"), 40)
        # an all-reduce of 394,241 floats, hand-checked: 1,576,964 B; busbw = algbw x 2 x 7 / 8
        r = [x for x in t["collectives"] if x["msg_bytes"] == 1576964][0]
        self.assertEqual((r["op"], r["calls"], r["group_size"]), ("allreduce", 8, 8))
        self.assertAlmostEqual(r["busbw_gbps"], r["algbw_gbps"] * 14 / 8, places=9)
        self.assertAlmostEqual(r["algbw_gbps"], 1576964 * 8 / (r["time_us"] * 1000), places=9)
        self.assertEqual(t["comm_link"][0]["model"], "V100 SXM2")

    def test_generated_fsdp_4_ranks(self):
        d = tempfile.mkdtemp()
        try:
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_kineto_trace.py"), "--out", d,
                            "--ranks", "4", "--steps", "2", "--layers", "2", "--straggler", "2", "--quiet"],
                           check=True)
            paths = sorted((os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json")),
                           key=lambda p: int("".join(ch for ch in os.path.basename(p) if ch.isdigit()) or 0))
            want = expected(paths)
            have, t = got(d, "--include-last-step")  # both steps, as counted here
            self.assertEqual(have, want)
            self.assertTrue(any(v[2] > 0 for v in want.values()))  # the straggler makes the others wait
            for r in t["collectives"]:
                f = {"allreduce": 2 * 3 / 4, "allgather": 3 / 4, "reduce_scatter": 3 / 4}[r["op"]]
                self.assertAlmostEqual(r["busbw_gbps"], r["algbw_gbps"] * f, places=9)
        finally:
            shutil.rmtree(d)

    def test_generated_tensor_parallel_4_ranks(self):
        # Megatron-style TP over 4 ranks: per block two bf16 all-reduces of [tokens, hidden] in forward and
        # two in backward, nothing else; a straggler makes the other three wait at every one
        d = tempfile.mkdtemp()
        try:
            subprocess.run([sys.executable, os.path.join(ROOT, "tools", "gen_kineto_trace.py"), "--out", d,
                            "--ranks", "4", "--steps", "2", "--layers", "2", "--mode", "tp", "--moe-every", "0",
                            "--hidden", "1024", "--seq", "512", "--batch", "2", "--straggler", "1", "--quiet"],
                           check=True)
            paths = sorted((os.path.join(d, f) for f in os.listdir(d) if f.endswith(".json")),
                           key=lambda p: int("".join(ch for ch in os.path.basename(p) if ch.isdigit()) or 0))
            want = expected(paths)
            have, t = got(d, "--include-last-step")
            self.assertEqual(have, want)
            # one class: 2 steps x 2 layers x 4 all-reduces per rank, 4 ranks; 1024 tokens x 1024 x 2 bytes
            self.assertEqual(list(want), [("allreduce", "BFloat16", 1024 * 1024 * 2)])
            self.assertEqual(want[("allreduce", "BFloat16", 1024 * 1024 * 2)][0], 2 * 2 * 4 * 4)
            self.assertGreater(want[("allreduce", "BFloat16", 1024 * 1024 * 2)][2], 0)
            r = t["collectives"][0]
            self.assertEqual((r["op"], r["group_size"], r["calls"]), ("allreduce", 4, 64))
            self.assertAlmostEqual(r["busbw_gbps"], r["algbw_gbps"] * 2 * 3 / 4, places=9)
            self.assertAlmostEqual(r["algbw_gbps"], 1024 * 1024 * 2 * 64 / (r["time_us"] * 1000), places=9)
        finally:
            shutil.rmtree(d)


if __name__ == "__main__":
    unittest.main()
