#!/usr/bin/env bash
# Breakdown analyses (temporal, idle, kernels, overlap): goldens with explained
# differences, plus hand-computed answers on tests/data/breakdown/small.json.
set -euo pipefail
HTA=${HTA:-build/hta}
D=tests/data/breakdown
fail=0

# expect NAME "hta args..." <<< expected csv
expect() {
  local name=$1; shift
  local want got
  want=$(cat)
  if ! got=$("$HTA" "$@" --format csv --quiet); then
    echo "FAIL $name: exit status $?"; fail=1; return
  fi
  if [ "$got" != "$want" ]; then
    echo "FAIL $name: hta $*"; diff <(echo "$want") <(echo "$got") || true; fail=1
  else
    echo "ok   $name"
  fi
}

# small.json: stream 7 = gemm [20,50) [55,65), relu [120,125) [125,130), add [160,166),
# Memcpy [200,220), Stream Sync [230,300); stream 8 = ncclDevKernel [40,80), hipMemcpyDtoD [140,150).
expect temporal temporal $D/small.json <<'X'
rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg
0,94,56,50,200,47,28,25
X
# HTA's selection (quirk A2): the Stream Sync record counts as non-compute GPU time
expect temporal-all-stream-rows temporal $D/small.json --all-stream-rows <<'X'
rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg
0,104,56,120,280,37.14,20,42.86
X
# ncclDevKernel_* is communication; hipMemcpyDtoD is memory (HTA: communication -> 40%)
expect overlap overlap $D/small.json <<'X'
rank,comp_comm_overlap_pctg,comm_time(us),comp_time(us),overlap_time(us)
0,50,40,56,20
X
expect kernels kernels $D/small.json <<'X'
# kernel_type
kernel_type,sum,percentage
COMPUTATION,36,34
MEMORY,30,28.3
COMMUNICATION,20,18.9
COMPUTATION overlapping COMMUNICATION,20,18.9

# all_kernels
name,sum (us),max (us),min (us),stddev,mean (us),kernel_type,rank,count
"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",40,40,40,0,40,COMMUNICATION,0,1
add_kernel,6,6,6,0,6,COMPUTATION,0,1
gemm_kernel,40,30,10,14.142135623730951,20,COMPUTATION,0,2
relu_kernel,10,5,5,0,5,COMPUTATION,0,2
Memcpy HtoD (Pageable -> Device),20,20,20,0,20,MEMORY,0,1
hipMemcpyDtoD,10,10,10,0,10,MEMORY,0,1
X
# --top 1: gemm keeps its real statistics (HTA, quirk A1: 40/40/40/0); "others" = relu x2 + add
expect kernels-top1 kernels $D/small.json --top 1 --no-memory <<'X'
# kernel_type
kernel_type,sum,percentage
COMPUTATION,36,47.4
COMMUNICATION,20,26.3
COMPUTATION overlapping COMMUNICATION,20,26.3

# all_kernels
name,sum (us),max (us),min (us),stddev,mean (us),kernel_type,rank,count
"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevComm*, unsigned long, ncclWork*)",40,40,40,0,40,COMMUNICATION,0,1
gemm_kernel,40,30,10,14.142135623730951,20,COMPUTATION,0,2
others,16,6,5,0.5773502691896257,5.333333333333333,COMPUTATION,0,3
X
expect idle idle $D/small.json --stats <<'X'
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
X
# a 1 us threshold: the 5 us gap is no longer kernel_wait, the 0 us one still is
expect idle-delay idle $D/small.json --consecutive-kernel-delay 1000 --streams 7 <<'X'
rank,stream,idle_category,idle_time,idle_time_ratio,pid
0,7,host_wait,85,0.69,0
0,7,kernel_wait,0,0,0
0,7,other,39,0.31,0
X

# two_devices.json: devices 0 and 1 both have a stream 7 (quirk A4: HTA mixes them and finds
# host_wait 10 + 70); the kernel at 120 has no launch in the trace (quirk A3: HTA takes event 0's
# ts 500 as its launch and calls the gap host_wait) -> kernel_wait 10 here.
expect idle-devices idle $D/two_devices.json <<'X'
rank,stream,idle_category,idle_time,idle_time_ratio,pid
0,7,host_wait,90,0.9,0
0,7,kernel_wait,10,0.1,0
0,7,other,0,0,0
0,7,other,0,,1
X

# CPU-only trace (HTA crashes): exit 0, zero/empty results and a note on stderr
CPU=tests/data/hta/cpu_only
if [ -d "$CPU" ]; then
  for c in temporal idle kernels overlap; do
    note=$("$HTA" $c "$CPU" --format json 2>&1 >/dev/null) || { echo "FAIL $c on cpu_only: exit $?"; fail=1; }
    case $note in *"rank 34 has no"*) echo "ok   $c cpu_only note";; *) echo "FAIL $c cpu_only note: $note"; fail=1;; esac
  done
  expect temporal-cpu-only temporal "$CPU" <<'X'
rank,idle_time(us),compute_time(us),non_compute_time(us),kernel_time(us),idle_time_pctg,compute_time_pctg,non_compute_time_pctg
34,0,0,0,0,,,
X
fi

# goldens: every difference is listed in tests/golden/expected/breakdown.txt
python3 tests/golden/check.py "$HTA" temporal_breakdown idle_time_breakdown gpu_kernel_breakdown comm_comp_overlap || fail=1
# and the all_kernels differences are quirk A1 alone (triton: A2, mtia_inference: Q6)
python3 tests/breakdown/a1_check.py "$HTA" triton_example mtia_inference_trace || fail=1
exit $fail
