"""Breakdown analyses (temporal, idle, kernels, overlap): hand-computed answers on
tests/data/breakdown/small.json, HTA's failing cases, and the kernel goldens' differences
being quirk A1 alone (the golden tables themselves: tests/golden/test_golden.py)."""
import os
import subprocess
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
D = os.path.join(ROOT, "tests", "data", "breakdown")
SMALL, TWO_DEVICES = os.path.join(D, "small.json"), os.path.join(D, "two_devices.json")
CPU_ONLY = os.path.join(ROOT, "tests", "data", "hta", "cpu_only")


def hta(*args):
    p = subprocess.run([HTA, *args], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return p


class Small(unittest.TestCase):
    """small.json: stream 7 = gemm [20,50) [55,65), relu [120,125) [125,130), add [160,166),
    Memcpy [200,220), Stream Sync [230,300); stream 8 = ncclDevKernel [40,80), hipMemcpyDtoD [140,150)."""
    maxDiff = None

    def expect(self, args, want):
        got = hta(*args, "--format", "csv", "--quiet").stdout
        self.assertEqual(got.strip("\n"), want.strip("\n"), f"hta {' '.join(args)}")

    def test_temporal(self):
        self.expect(["temporal", SMALL], """
rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg
0,94,56,50,200,47,28,25
""")

    def test_temporal_hta_compat(self):
        # HTA's selection (quirk A2, --hta-compat): the Stream Sync record counts as non-compute GPU time
        self.expect(["temporal", SMALL, "--hta-compat"], """
rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg
0,104,56,120,280,37.14,20,42.86
""")

    def test_overlap(self):
        # ncclDevKernel_* is communication; hipMemcpyDtoD is memory (HTA: communication -> 40%)
        self.expect(["overlap", SMALL], """
rank,comp_comm_overlap_pctg,comm_time(us),comp_time(us),overlap_time(us)
0,50,40,56,20
""")

    def test_kernels(self):
        self.expect(["kernels", SMALL], """
# kernel_type
kernel_type,sum,percentage
COMPUTATION,36,34
MEMORY,30,28.3
COMMUNICATION,20,18.9
COMPUTATION overlapping COMMUNICATION,20,18.9

# all_kernels
name,sum (us),max (us),min (us),stddev,mean (us),kernel_type,category,rank,count
"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",40,40,40,0,40,COMMUNICATION,communication,0,1
add_kernel,6,6,6,0,6,COMPUTATION,other,0,1
gemm_kernel,40,30,10,14.142135623730951,20,COMPUTATION,gemm,0,2
relu_kernel,10,5,5,0,5,COMPUTATION,elementwise,0,2
Memcpy HtoD (Pageable -> Device),20,20,20,0,20,MEMORY,memory,0,1
hipMemcpyDtoD,10,10,10,0,10,MEMORY,memory,0,1
""")

    def test_kernels_top1(self):
        # --top 1: gemm keeps its real statistics (HTA, quirk A1: 40/40/40/0); "others" = relu x2 + add
        self.expect(["kernels", SMALL, "--top", "1", "--no-memory"], """
# kernel_type
kernel_type,sum,percentage
COMPUTATION,36,47.4
COMMUNICATION,20,26.3
COMPUTATION overlapping COMMUNICATION,20,26.3

# all_kernels
name,sum (us),max (us),min (us),stddev,mean (us),kernel_type,category,rank,count
"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",40,40,40,0,40,COMMUNICATION,communication,0,1
gemm_kernel,40,30,10,14.142135623730951,20,COMPUTATION,gemm,0,2
others,16,6,5,0.5773502691896257,5.333333333333333,COMPUTATION,,0,3
""")

    def test_idle(self):
        self.expect(["idle", SMALL, "--stats"], """
# idle_time
rank,stream,idle_category,idle_time,idle_time_ratio,pid
0,7,host_wait,85,0.69,0
0,7,kernel_wait,5,0.04,0
0,7,other,34,0.27,0
0,8,host_wait,60,1,0
0,8,other,0,0,0

# interval_stats
idle_category,rank,stream,count,mean,std,min,25%,50%,75%,max,pid
host_wait,0,7,2,42.5,17.68,30,36.25,42.5,48.75,55,0
kernel_wait,0,7,2,2.5,3.54,0,1.25,2.5,3.75,5,0
other,0,7,1,34,,34,34,34,34,34,0
host_wait,0,8,1,60,,60,60,60,60,60,0
other,0,8,0,,,,,,,,0
""")

    def test_idle_kernel_delay(self):
        # a 1 us threshold: the 5 us gap is no longer kernel_wait, the 0 us one still is
        self.expect(["idle", SMALL, "--consecutive-kernel-delay", "1000", "--streams", "7"], """
rank,stream,idle_category,idle_time,idle_time_ratio,pid
0,7,host_wait,85,0.69,0
0,7,kernel_wait,0,0,0
0,7,other,39,0.31,0
""")

    def test_idle_two_devices(self):
        # devices 0 and 1 both have a stream 7 (quirk A4: HTA mixes them and finds host_wait 10 + 70);
        # the kernel at 120 has no launch in the trace (quirk A3: HTA takes event 0's ts 500 as its
        # launch and calls the gap host_wait) -> kernel_wait 10 here.
        self.expect(["idle", TWO_DEVICES], """
rank,stream,idle_category,idle_time,idle_time_ratio,pid
0,7,host_wait,90,0.9,0
0,7,kernel_wait,10,0.1,0
0,7,other,0,0,0
0,7,other,0,,1
""")


class CpuOnly(unittest.TestCase):
    """A CPU-only trace (HTA crashes): exit 0, zero/empty results and a note on stderr."""

    def test_note_on_stderr(self):
        for c in ("temporal", "idle", "kernels", "overlap"):
            with self.subTest(command=c):
                self.assertIn("rank 34 has no", hta(c, CPU_ONLY, "--format", "json").stderr)

    def test_temporal_zero(self):
        self.assertEqual(hta("temporal", CPU_ONLY, "--format", "csv", "--quiet").stdout.strip(), """\
rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg
34,0,0,0,0,,,""")


class KernelGoldens(unittest.TestCase):
    def test_differences_are_quirk_a1_alone(self):
        """On the traces in whole microseconds, the default all_kernels differs from HTA's golden by quirk A1
        alone (the traces with fractions differ by exact times too: amd, mtia, nccl_parser_config,
        ns_resolution, triton; those with GPU work whose launch is not in the trace keep it, X8:
        negative_queue_length_values_check, trace_compare, trace_diff/test)."""
        p = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "breakdown", "a1_check.py"), HTA,
                            "triton_example", "mtia_inference_trace", "mtia_trace_single_rank", "amd_trace",
                            "nccl_parser_config", "ns_resolution_trace", "negative_queue_length_values_check",
                            "trace_compare/base", "trace_compare/test", "trace_diff/test"],
                           capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)


if __name__ == "__main__":
    unittest.main()
