// A real, unmodified libkineto client for htad's tests (tests/daemon/test_kineto.py): it enables the
// daemon config loader as PyTorch does (KINETO_USE_DAEMON=1), then runs "training steps" of 20 ms
// and, while libkineto is tracing, hands it the CPU operators of each step (ProfilerStep#N with an
// aten::mm and an aten::add inside), as PyTorch's profiler does through transferCpuTrace.
//   kineto_client SECONDS [exit-when-tracing]
// With exit-when-tracing it exits (status 3) as soon as tracing starts: a process that dies
// mid-trace.
#include <libkineto.h>
#include <GenericTraceActivity.h>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <sys/syscall.h>

static int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

static void busy(int64_t ns) {
  volatile double x = 0;
  int64_t end = now_ns() + ns;
  while (now_ns() < end) x = x + 1.0;
}

int main(int argc, char** argv) {
  int secs = argc > 1 ? atoi(argv[1]) : 20;
  bool die = argc > 2 && !strcmp(argv[2], "exit-when-tracing");
  libkineto_init(true, true);
  libkineto::api().initProfilerIfRegistered();
  int32_t pid = getpid(), tid = (int32_t)syscall(SYS_gettid);
  int64_t stop = now_ns() + (int64_t)secs * 1000000000;
  int traced = 0;
  for (int step = 0; now_ns() < stop; step++) {
    libkineto::api().activityProfiler().step();
    int64_t t0 = now_ns();
    busy(8000000);
    int64_t t1 = now_ns();
    busy(4000000);
    int64_t t2 = now_ns();
    std::this_thread::sleep_for(std::chrono::milliseconds(8));
    int64_t t3 = now_ns();
    if (!libkineto::api().activityProfiler().isActive()) continue;
    if (die) {
      fprintf(stderr, "kineto_client: tracing started, exiting mid-trace\n");
      _exit(3);
    }
    auto buf = std::make_unique<libkineto::CpuTraceBuffer>();
    buf->span = libkineto::TraceSpan(t0, t3, "ProfilerStep#" + std::to_string(step));
    buf->gpuOpCount = 0;
    const char* names[3] = {"ProfilerStep#", "aten::mm", "aten::add"};
    int64_t se[3][2] = {{t0, t3}, {t0, t1}, {t1, t2}};
    for (int k = 0; k < 3; k++) {
      buf->emplace_activity(buf->span, libkineto::ActivityType::CPU_OP,
                            k ? std::string(names[k]) : names[0] + std::to_string(step));
      auto& a = *buf->activities.back();
      a.startTime = se[k][0];
      a.endTime = se[k][1];
      a.id = step * 3 + k + 1;
      a.device = pid;
      a.resource = tid;
      a.threadId = tid;
    }
    libkineto::api().activityProfiler().transferCpuTrace(std::move(buf));
    traced++;
  }
  printf("kineto_client: done, %d steps traced\n", traced);
  return 0;
}
