"""Point-to-point send/recv across ranks (hta critical-path DIR --all-ranks): a pipeline-parallel job whose ranks
meet only at their sends and recvs, paired by peer rank (docs/critical-path.md "Across ranks").

pipeline() writes a small job with a known schedule: stage s computes each microbatch on its GPU (kernel
stage<s>_fwd, `compute[s]` us) after receiving it from stage s-1 and sends it to stage s+1; NCCL's send and recv
kernels end together, `TAU` us after the later of the two started (a rendezvous), as the barrier model says.
Times are exact integers of us, so a job generated again with other compute times is the ground truth of a
what-if."""
import json
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_sim import hta, rows, step_times, tables  # noqa: E402

TAU = 50          # us: a transfer once both sides are there
LAUNCH = 10       # us: a launch call
KDELAY = 5        # us: from a launch's end to its kernel's start, the GPU idle
SENDRECV = "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)"


def pipeline(out, compute, micro=3, steps=2, peer="dst", pg="1", skew=None):
    """Writes rank-<s>.json for each stage s.  peer: how a kernel names its peer: "dst" (Dst Rank on a send, Src
    Rank on a recv: PyTorch's saveNcclMeta), "group" (only Rank, the peer's rank in its group, and Process Group
    Ranks: older PyTorch), "ranks" (only Process Group Ranks), "none" (no peer at all).  skew: per rank, us added
    to its clock (each host its own)."""
    n = len(compute)
    os.makedirs(out, exist_ok=True)
    ev = [[] for _ in range(n)]
    corr = [1000 * (s + 1) for s in range(n)]
    cpu = [0] * n       # each rank's CPU clock (us, from its own zero; the ranks share one clock here)

    def x(s, name, cat, ts, dur, gpu=False, **args):
        e = {"ph": "X", "cat": cat, "name": name, "pid": 0 if gpu else 100 + s, "tid": 7 if gpu else 100 + s,
             "ts": 1_000_000 + ts, "dur": dur, "args": args}
        if gpu:
            e["args"].update(device=0, stream=7)
        ev[s].append(e)

    def launch(s, op, t):
        """an operator that launches one kernel at CPU time t: (its correlation, when the kernel may start)"""
        corr[s] += 1
        x(s, op, "cpu_op", t, LAUNCH + 4)
        x(s, "cudaLaunchKernel", "cuda_runtime", t + 2, LAUNCH, correlation=corr[s])
        return corr[s], t + 2 + LAUNCH + KDELAY

    def p2p_args(s, send, other):
        a = {"Collective name": "send" if send else "recv", "In msg nelems": 4096, "Out msg nelems": 4096,
             "dtype": "BFloat16", "Group size": n, "Process Group Name": pg, "Process Group Description": "pp"}
        if peer == "dst":
            a["Dst Rank" if send else "Src Rank"] = other
        elif peer == "group":
            a["Rank"] = other
            a["Process Group Ranks"] = "[%s]" % ", ".join(str(r) for r in range(n))
        elif peer == "ranks":
            a["Process Group Ranks"] = "[%s]" % ", ".join(str(r) for r in range(n))
        return a

    for step in range(steps):
        # each rank launches its whole step at once, then waits for its GPU: the GPU sets the pace
        ops = []   # per rank: [kind, name, corr, ready, other]
        for s in range(n):
            t0 = cpu[s]
            t = t0 + 20
            q = []
            for m in range(micro):
                if s > 0:
                    c, r = launch(s, "nccl:recv", t)
                    q.append(["recv", SENDRECV, c, r, s - 1])
                    t += 20
                c, r = launch(s, "stage%d_fwd" % s, t)
                q.append(["compute", "stage%d_fwd" % s, c, r, None])
                t += 20
                if s < n - 1:
                    c, r = launch(s, "nccl:send", t)
                    q.append(["send", SENDRECV, c, r, s + 1])
                    t += 20
            ops.append((t0, t, q))
        # the GPUs, in lock step: a send and its recv start when each stream is free and end together
        free = [0] * n
        pos = [0] * n
        done = [None] * n
        while any(pos[s] < len(ops[s][2]) for s in range(n)):
            moved = False
            for s in range(n):
                if pos[s] >= len(ops[s][2]):
                    continue
                kind, name, c, ready, other = ops[s][2][pos[s]]
                start = max(ready, free[s])
                if kind == "compute":
                    x(s, name, "kernel", start, compute[s], gpu=True, correlation=c)
                    free[s] = start + compute[s]
                    pos[s] += 1
                    moved = True
                    continue
                if kind == "send" and pos[other] < len(ops[other][2]) and ops[other][2][pos[other]][0] == "recv":
                    _, oname, oc, oready, _ = ops[other][2][pos[other]]
                    ostart = max(oready, free[other])
                    end = max(start, ostart) + TAU
                    x(s, name, "kernel", start, end - start, gpu=True, correlation=c, **p2p_args(s, True, other))
                    x(other, oname, "kernel", ostart, end - ostart, gpu=True, correlation=oc,
                      **p2p_args(other, False, s))
                    free[s] = free[other] = end
                    pos[s] += 1
                    pos[other] += 1
                    moved = True
            assert moved, "the pipeline deadlocked"
        for s in range(n):
            t0, t, _ = ops[s]
            # the step ends with a device sync that returns when the GPU is done
            corr[s] += 1
            end = max(t, free[s]) + 5
            x(s, "cudaDeviceSynchronize", "cuda_runtime", t, end - t, correlation=corr[s])
            x(s, "Context Sync", "cuda_sync", t + 1, end - t - 1, gpu=True, correlation=corr[s])
            ev[s][-1]["tid"] = -1
            ev[s][-1]["args"]["stream"] = -1
            x(s, "ProfilerStep#%d" % (10 + step), "user_annotation", t0, end + 5 - t0)
            cpu[s] = end + 30
    for s in range(n):
        for e in ev[s]:
            e["ts"] += (skew or [0] * n)[s]
        doc = {"schemaVersion": 1,
               "distributedInfo": {"backend": "nccl", "rank": s, "world_size": n,
                                   "pg_config": [{"pg_name": pg, "pg_desc": "pp", "ranks": list(range(n))}]},
               "traceEvents": sorted(ev[s], key=lambda e: (e["ts"], -e["dur"]))}
        with open(os.path.join(out, "rank-%d.json" % s), "w") as f:
            json.dump(doc, f)


def run(d, *args):
    p = hta("critical-path", d, "--all-ranks", "--format", "json", *args)
    return json.loads(p.stdout), p.stderr


class Pipeline(unittest.TestCase):
    """2 stages: rank 0 computes each microbatch in 1 ms and sends it to rank 1, which takes 3 ms for it."""

    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.job = os.path.join(cls.tmp.name, "pp")
        pipeline(cls.job, [1000, 3000])

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def test_pairs_joined(self):
        t, err = run(self.job)
        # 3 microbatches x 2 steps: one send/recv pair each
        self.assertIn("6 collective instances joined across 2 ranks (6 of them point-to-point send/recv pairs)", err)
        coll = rows(t["collectives"])
        self.assertEqual(len(coll), 6)
        for c in coll:
            self.assertEqual(c["ranks"], 2)
            self.assertAlmostEqual(c["transfer_us"], TAU, delta=0.001)
        # the first pair of the job waits for rank 0's first microbatch; every later one for rank 1
        self.assertEqual([c["last_rank"] for c in coll][:3], [0, 1, 1])

    def test_path_crosses_at_the_send(self):
        t, _ = run(self.job)
        hops = rows(t["hops"])
        # the path ends on rank 1 (the slow stage) and goes back through its recvs to the first one, where rank
        # 0's send came last: there it crosses to rank 0's first microbatch
        self.assertEqual(len(hops), 1, hops)
        h = hops[0]
        self.assertEqual((h["from_rank"], h["to_rank"]), (0, 1))
        self.assertEqual(h["kernel"], "ncclDevKernel_SendRecv")  # the table's short name
        self.assertEqual(h["process_group"], "1")
        self.assertEqual(h["seq"], 0)   # the pair's order: rank 0's first send to rank 1
        self.assertEqual(h["step"], 10)

    def test_sender_what_if_moves_the_receiver(self):
        """The sender's compute 2x slower (still faster than the receiver): the receiver's first step starts its
        work that much later, and nothing else moves; 4x (slower than the receiver): the sender sets the pace.
        Each prediction is checked against the job generated with those compute times."""
        base = {(r["rank"], r["step"]): r for r in rows(run(self.job, "--what-if", "kernel:stage0_fwd=x1")[0]["what_if_steps"])}
        for factor in (0.5, 2, 4):
            with self.subTest(factor=factor):
                t, _ = run(self.job, "--what-if", "kernel:stage0_fwd=x%g" % factor)
                pred = {(r["rank"], r["step"]): r for r in rows(t["what_if_steps"])}
                with tempfile.TemporaryDirectory() as d:
                    pipeline(d, [int(1000 * factor), 3000])
                    for rank in (0, 1):
                        for step, act in step_times(os.path.join(d, "rank-%d.json" % rank)).items():
                            self.assertAlmostEqual(pred[(rank, step)]["simulated_us"], act, delta=0.01 * act,
                                                   msg=(rank, step))
                # the receiver's first step moves by the sender's first microbatch when the receiver still
                # sets the pace
                if factor < 3:
                    moved = pred[(1, 10)]["simulated_us"] - base[(1, 10)]["simulated_us"]
                    self.assertAlmostEqual(moved, 1000 * (factor - 1), delta=5)

    def test_peer_from_group_ranks(self):
        """Older traces: only Rank (the peer's rank in its group) and Process Group Ranks, or a group of two
        ranks alone (the peer is the other one): the same pairs, the same answer."""
        ref, _ = run(self.job)
        for peer in ("group", "ranks"):
            with self.subTest(peer=peer), tempfile.TemporaryDirectory() as d:
                pipeline(d, [1000, 3000], peer=peer)
                t, err = run(d)
                self.assertIn("(6 of them point-to-point send/recv pairs)", err)
                for name in ("hops", "collectives", "steps", "summary"):
                    self.assertEqual(t[name], ref[name], name)


class ThreeStages(unittest.TestCase):
    """3 stages, the middle one slow: rank 1 receives and sends (its pairs with each peer are counted apart)."""

    def test_middle_stage(self):
        with tempfile.TemporaryDirectory() as d:
            pipeline(d, [1000, 3000, 500], micro=4)
            t, err = run(d)
            # 4 microbatches x 2 steps x 2 links
            self.assertIn("16 collective instances joined across 3 ranks (16 of them point-to-point send/recv "
                          "pairs)", err)
            coll = rows(t["collectives"])
            self.assertTrue(all(c["ranks"] == 2 for c in coll))
            # rank 2 waits for rank 1 at every recv: rank 1 is the last arriver on the 1->2 link
            hops = rows(t["hops"])
            self.assertEqual([(h["from_rank"], h["to_rank"]) for h in hops][-1:], [(1, 2)])
            self.assertEqual([(h["from_rank"], h["to_rank"]) for h in hops][0], (0, 1))
            # the last stage 2x faster: it waits for rank 1 anyway, so only its last microbatch of each step
            # gains (250 us), and the job (the span of the steps) only the last one's
            w = tables("critical-path", d, "--all-ranks", "--what-if", "kernel:stage2_fwd=x0.5")
            self.assertAlmostEqual(dict(w["what_if"]["data"])["saving_us"], 250, delta=1)
            pred = {(r["rank"], r["step"]): r["simulated_us"] for r in rows(w["what_if_steps"])}
            with tempfile.TemporaryDirectory() as d2:
                pipeline(d2, [1000, 3000, 250], micro=4)
                for rank in range(3):
                    for step, act in step_times(os.path.join(d2, "rank-%d.json" % rank)).items():
                        self.assertAlmostEqual(pred[(rank, step)], act, delta=0.01 * act, msg=(rank, step))
            # each stage on a clock of its own: rank 2 never pairs with rank 0, its offset comes through rank 1
            with tempfile.TemporaryDirectory() as d3:
                pipeline(d3, [1000, 3000, 500], micro=4, skew=[0, -3000, 7000])
                sk, _ = run(d3)
                for name in ("summary", "hops", "collectives", "steps"):
                    self.assertEqual(sk[name], t[name], name)


class NoPeer(unittest.TestCase):
    def test_without_peer_args(self):
        """A send or recv that names no peer stays its rank's alone (joined by order with its group's other
        ranks, a 3-stage pipeline's would make 3-party rendezvous NCCL never makes): nothing joined, no hop,
        each rank's kernels keep the waits they had, and nothing fails."""
        for stages in ([1000, 3000], [1000, 3000, 500]):
            with self.subTest(stages=len(stages)), tempfile.TemporaryDirectory() as d:
                pipeline(d, stages, peer="none")
                t, err = run(d)
                self.assertIn("0 collective instances joined across %d ranks" % len(stages), err)
                self.assertNotIn("point-to-point", err)
                self.assertEqual(rows(t["hops"]), [])
                self.assertEqual(rows(t["collectives"]), [])
                self.assertEqual(len(rows(t["steps"])), 2 * len(stages))
                # a wait that no barrier explains is the rank's own: on the path as rank_wait
                self.assertIn("rank_wait", [r["bound_by"] for r in rows(t["summary"])])


if __name__ == "__main__":
    unittest.main()
