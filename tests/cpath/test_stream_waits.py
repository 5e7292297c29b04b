"""Cross-stream waits that no CUPTI record describes (docs/critical-path.md, "GPU work"): ROCm's traces (and
CUDA's without cuda_sync records) show `hipStreamWaitEvent` calls and nothing of which stream waited for
which.  The shape is ProcessGroupNCCL's, as in TraceLens' MI300 DDP trace (tests/report/test_real_diag.py):
the NCCL stream waits for the compute that filled the bucket, then the compute stream waits for the
all-reduce.  Removing the all-reduce's time must move the compute after it; without the wait the engine
would keep the compute where the trace had it and find no saving."""
import os
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from test_sim import tables  # noqa: E402
import testlib  # noqa: E402
from testlib import fig  # noqa: E402

B = 1_000_000  # the trace's events from B - 100 us
GEMM, NCCL = 1000, 2000  # us


def X(name, cat, ts, dur, pid=1, tid=1, **args):
    return {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": B + ts, "dur": dur, "args": args}


def K(name, ts, dur, stream, corr):
    return X(name, "kernel", ts, dur, pid=0, tid=stream, device=0, stream=stream, correlation=corr)


def trace(path, waits=True, lag=5):
    # three small kernels that start 7 us after their launch returned: the rank's usual launch latency
    ev = []
    for i in range(3):
        ev += [X("hipLaunchKernel", "cuda_runtime", -100 + 10 * i, 5, correlation=20 + i),
               K("Cijk_warm", -100 + 10 * i + 12, 5, 0, 20 + i)]
    ev += [X("aten::mm", "cpu_op", 0, 50),
          X("hipLaunchKernel", "cuda_runtime", 10, 10, correlation=1),
          K("Cijk_gemm", 30, GEMM, 0, 1),
          X("hipExtLaunchKernel", "cuda_runtime", 70, 10, correlation=2),
          K("ncclDevKernel_Generic(ncclDevKernelArgsStorage<4096ul>)", 30 + GEMM + 5, NCCL, 4, 2),
          X("hipLaunchKernel", "cuda_runtime", 100, 10, correlation=3),
          K("Cijk_gemm_2", 30 + GEMM + 5 + NCCL + lag, GEMM, 0, 3)]
    # three small kernels queued behind it, 3 us apart: the stream's usual gap
    end = 30 + 2 * GEMM + NCCL + 5 + lag
    for i in range(3):
        ev += [X("hipLaunchKernel", "cuda_runtime", 130 + 10 * i, 5, correlation=10 + i),
               K("Cijk_small", end + 3, 10, 0, 10 + i)]
        end += 13
    ev.append(X("hipDeviceSynchronize", "cuda_runtime", 200, end + 5 - 200, correlation=4))
    if waits:  # the NCCL stream waits for the gemm, the compute stream for the all-reduce
        ev += [X("hipStreamWaitEvent", "cuda_runtime", 60, 5, correlation=5),
               X("hipStreamWaitEvent", "cuda_runtime", 90, 5, correlation=6)]
    testlib.write_trace(path, ev)


class UnsaidStreamWaits(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.tmp = tempfile.TemporaryDirectory()
        cls.paths = {}
        for w, lag in ((True, 5), (False, 5), ("late", 600)):
            d = os.path.join(cls.tmp.name, str(w))
            os.makedirs(d)
            cls.paths[w] = os.path.join(d, "rank-0.json")
            trace(cls.paths[w], waits=w is True, lag=lag)

    @classmethod
    def tearDownClass(cls):
        cls.tmp.cleanup()

    def saving(self, path, rule):
        return fig(tables("critical-path", path, "--what-if", rule)["what_if"])["saving_us"]

    def test_collective_removed_moves_the_compute_after_it(self):
        """type:comm=x0: the second gemm follows the first (5 us gap) instead of the all-reduce: 2000 us saved"""
        self.assertAlmostEqual(self.saving(self.paths[True], "type:comm=x0"), NCCL, delta=15)

    def test_compute_faster_moves_the_collective(self):
        """the first gemm 2x faster: the all-reduce, which waited for it, starts 500 us earlier, and so does
        the second gemm: 1000 us saved in all"""
        self.assertAlmostEqual(self.saving(self.paths[True], "kernel:Cijk_gemm=x0.5"), GEMM / 2, delta=15)
        self.assertAlmostEqual(self.saving(self.paths[True], "type:comp=x0.5"), GEMM, delta=15)

    def test_without_the_calls_the_wait_is_read_from_the_timing(self):
        """the same kernels without the stream-wait calls: the second gemm, queued since before its stream went
        idle, waited 2 ms on that idle stream and started 5 us after the all-reduce on the other stream ended.
        A queued kernel on a free stream starts when what it waits for is done: the engine reads the wait from
        that (docs/critical-path.md, "Waits no call records"), and removing the all-reduce saves its 2000 us"""
        self.assertAlmostEqual(self.saving(self.paths[False], "type:comm=x0"), NCCL, delta=15)

    def test_without_the_calls_no_wait_is_invented(self):
        """the same, the second gemm starting 600 us after the all-reduce ended: nothing in the trace says it
        waited for it, so the engine keeps it where it ran, and removing the all-reduce saves only its own end"""
        self.assertLess(self.saving(self.paths["late"], "type:comm=x0"), 20)


if __name__ == "__main__":
    unittest.main()
