"""Communication beyond NCCL/RCCL (docs/differences-from-hta.md, "Communication kernels"): DeepEP, NVSHMEM,
custom all-reduce, what c10d's operators launch and --comm-kernel globs count as communication in kernels,
overlap, temporal and the report; --hta-compat keeps HTA's rule.  Hand-computed answers on
tests/data/comm/comm.json (times in us; the view drops the last of its three steps, HTA's filter):
  stream 20: elementwise [40,50) launched under c10d::allreduce_ > record_param_comms, ncclDevKernel [50,80)
  stream 21: dpsk::ep dispatch [100,160), dpsk::ep combine [380,500) (past the end of step 2, [200,400))
  stream 7:  gemm [45,95), cdpsk::ep CUB scan [160,170) (not DeepEP), deep_ep get_dispatch_layout [170,175),
             gemm_small [176,180) launched under a user annotation inside a long c10d::alltoall_base_ range
             (stays computation), vllm cross_device_reduce [220,240), my_custom_a2a_kernel [240,260),
             gemm [260,390)
Communication: [40,80) [100,160) [220,240) [380,500) = 240; computation [45,95) [160,175) [176,180)
[240,390) = 219; both: [45,80) [380,390) = 45."""
import csv
import io
import os
import sys
import unittest
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
COMM = os.path.join(ROOT, "tests", "data", "comm", "comm.json")


hta = testlib.hta


def table(cmd, name, *args):
    out = hta(cmd, COMM, "--quiet", "--format", "csv", "--table", name, *args).stdout
    return list(csv.DictReader(io.StringIO(out)))


class Comm(unittest.TestCase):
    def test_overlap(self):
        self.assertEqual(table("overlap", "comm_comp_overlap")[0],
                         {"rank": "0", "comp_comm_overlap_pctg": "18.75", "comm_time(us)": "240",
                          "comp_time(us)": "219", "overlap_time(us)": "45"})

    def test_temporal(self):
        r = table("temporal", "temporal_breakdown")[0]
        # span [40,500) = 460, busy 240 + 219 - 45 = 414
        self.assertEqual((r["kernel_time(us)"], r["compute_time(us)"], r["non_compute_time(us)"], r["idle_time(us)"]),
                         ("460", "219", "195", "46"))

    def test_kernels_types(self):
        types = {r["name"]: r["kernel_type"] for r in table("kernels", "all_kernels")}
        comm = {n for n, t in types.items() if t == "COMMUNICATION"}
        self.assertEqual(comm, {"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*)",
                                "void at::native::vectorized_elementwise_kernel<4>(int)",
                                "void dpsk::ep::internode::combine<false, 8>(int*)",
                                "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int*)",
                                "void vllm::cross_device_reduce_1stage<float, 8>(float*)"})
        for n in ["void cdpsk::ep::CUB_DeviceScanKernel(int)", "void deep_ep::layout::get_dispatch_layout(int*)",
                  "sm90_gemm_small", "my_custom_a2a_kernel"]:
            self.assertEqual(types[n], "COMPUTATION", n)
        kt = {r["kernel_type"]: r["sum"] for r in table("kernels", "kernel_type")}
        self.assertEqual(kt, {"COMMUNICATION": "195", "COMPUTATION": "174",
                              "COMPUTATION overlapping COMMUNICATION": "45"})

    def test_comm_kernel_glob(self):
        # my_custom_a2a_kernel [240,260) moves to communication: 260 and 199, still 45 together
        r = table("overlap", "comm_comp_overlap", "--comm-kernel", "my_*_a2a*", "--comm-kernel", "nothing*")[0]
        self.assertEqual((r["comm_time(us)"], r["comp_time(us)"], r["overlap_time(us)"]), ("260", "199", "45"))
        types = {r["name"]: r["kernel_type"] for r in table("kernels", "all_kernels", "--comm-kernel=my_*")}
        self.assertEqual(types["my_custom_a2a_kernel"], "COMMUNICATION")

    def test_hta_compat_keeps_htas_rule(self):
        # HTA: only the NCCL kernel [50,80) is communication, all inside the gemm [45,95)
        r = table("overlap", "comm_comp_overlap", "--hta-compat")[0]
        self.assertEqual((r["comp_comm_overlap_pctg"], r["comm_time(us)"], r["overlap_time(us)"]), ("100", "30", "30"))

    def test_report_gpu_busy_at_most_100(self):
        # step 1 [0,200): union [40,95) [100,175) [176,180) = 134; step 2 [200,400): [220,400) = 180 of the
        # union [220,500) (the combine runs 100 us past the step): (134 + 180) / 400 = 78.5%, not 103.5%
        h = table("report", "headline")[0]
        self.assertEqual((h["steps"], h["gpu_busy_pctg"]), ("2", "78.5"))

    def test_report_counts_deepep(self):
        # the report reads the breakdowns' communication: DeepEP's kernels are in it, --comm-kernel too
        self.assertEqual(table("report", "ranks")[0]["comm_time_us"], "240")
        types = {r["name"]: r["kernel_type"] for r in table("report", "top_kernels")}
        self.assertEqual(types["void dpsk::ep::internode::combine<false, 8>(int*)"], "COMMUNICATION")
        self.assertEqual(table("report", "ranks", "--comm-kernel", "my_custom_*")[0]["comm_time_us"], "260")

if __name__ == "__main__":
    unittest.main()
