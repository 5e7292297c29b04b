"""Captures end and a process gets only its own config (issue 27, items 2 and 3).  With the real
libkineto client: a dyno config libkineto would reject (a value that is not a number, CRLF line ends,
an unknown activity type, a start time in the past, a line that is not KEY=VALUE) is refused at the
request with the line and the reason, and a valid one traces; a process that polls in another's name
gets nothing, and the victim's trace arrives under the victim's pid.  With stand-in clients (the real one
cannot be made to misbehave): a process that stays busy, or takes its config and writes nothing, has its
trace failed as timed out at the capture's deadline; 64 such captures open do not block the 65th for
longer than their deadlines; a config too large for one datagram is refused; 2000 datagrams with
invented pids register nothing and a real process still registers; a trace file owned by another user is
refused."""
import json
import os
import shutil
import subprocess
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402



def dyno(d, pids, config):
    return d.rpc({"fn": "setKinetOnDemandRequest", "pids": pids, "config": config})


class RealClient(ht.KinetoCase):
    DAEMON_ARGS = ("--gc-s", "5", "--interval-ms", "200")

    def start(self, secs="30"):
        p = super().start(secs)
        self.wait_registered(len(self.procs))
        return p

    def stored(self):
        return [n for _, _, fs in os.walk(self.d.store) for n in fs]

    def test_configs_libkineto_rejects_are_refused(self):
        p = self.start()
        log = f"ACTIVITIES_LOG_FILE={self.d.traces}/t.json\n"
        past = int(time.time() * 1000) - 60000
        for body, why in ((log + "ACTIVITIES_DURATION_MSECS=abc", "line 2: ACTIVITIES_DURATION_MSECS=abc: "
                                                                   "libkineto wants an integer"),
                          (log.replace("\n", "\r\n") + "ACTIVITIES_DURATION_MSECS=200\r\n", "line 1: a carriage"),
                          (log + "ACTIVITY_TYPES=cpu_op,bogus", "activity types"),
                          (log + f"PROFILE_START_TIME={past}", "at most 10 s in the past"),
                          (log + "ACTIVITIES_DURATION_MSECS=-5", "[0, 2147483647]"),
                          (log + "PROFILE_WITH_STACK=maybe", "a boolean"),
                          (log + "A=B=C", "line 2: 'A=B=C' is not KEY=VALUE")):
            r = dyno(self.d, [p.pid], body)
            self.assertEqual(r.get("status"), "failed", (body, r))
            self.assertIn(why, r["error"])
        self.assertEqual(self.d.counter("htad_captures_total"), 0)
        # a valid one (comments, spaces, a known unknown key, Y as a boolean) traces
        ok = (log + "# a comment\n  ACTIVITIES_DURATION_MSECS = 300  \nPROFILE_WITH_STACK=Y\n"
              "ACTIVITY_TYPES=cpu_op, user_annotation\nSOME_FUTURE_KEY=1\nACTIVITIES_WARMUP_PERIOD_SECS=0\n")
        r = dyno(self.d, [p.pid], ok)
        self.assertEqual(r["activityProfilersTriggered"], [p.pid], r)
        self.assertTrue(ht.wait_for(lambda: f"testhost_{p.pid}.json" in self.stored(), 30), self.d.logtext())

    def test_forged_poll_gets_nothing(self):
        victim = self.start()
        thief = ht.FakeKineto(self.d.ipc)
        self.fakes.append(thief)
        self.assertEqual(thief.poll(2), "")  # registered as itself
        thief.claim([victim.pid, os.getpid()])  # now it polls in the victim's name
        with self.assertRaises(OSError):  # a poll in another's name is not answered
            thief.poll(2, timeout=0.5)
        out = os.path.join(self.d.tmp, "out")
        r = subprocess.run([ht.HTA, "capture", f"localhost:{self.d.port}", "-o", out, "--pids", str(victim.pid),
                            "--start-delay-ms", "2500", "--warmup-s", "0", "--duration-ms", "300",
                            "--timeout-ms", "20000"], capture_output=True, text=True, timeout=60)
        for _ in range(3):  # the thief keeps asking in the victim's name: nothing
            with self.assertRaises(OSError):
                thief.poll(2, timeout=0.3)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr + self.d.logtext())
        self.assertEqual([f for f in os.listdir(out) if f.endswith(".json")],
                         [f"localhost-{self.d.port}_{victim.pid}.json"])
        self.assertIn(f"process {thief.pid} (uid {os.getuid()}) polls as pid {victim.pid}: dropped",
                      self.d.logtext())
        self.assertGreaterEqual(self.d.counter("htad_polls_dropped_total"), 4)


class Deadlines(ht.FakeCase):
    DAEMON_ARGS = ("--capture-margin-s", "1")

    def capture(self, pid, **kw):
        req = {"fn": "htaCapture", "pids": [pid], "duration_ms": 100, "start_time_ms": int(time.time() * 1000)}
        req.update(kw)
        return self.d.rpc(req)

    def state(self, cid):
        st = self.d.rpc({"fn": "htaStatus", "capture": cid})
        return st["done"], st["traces"][0]["state"], st["traces"][0].get("error", "")

    def test_busy_and_silent_processes_time_out(self):
        busy = self.fake(busy=True).start()      # keeps polling, never idle: never takes its config
        silent = self.fake(write=False).start()  # takes it, writes nothing
        a, b = self.capture(busy.pid), self.capture(silent.pid)
        t0 = time.time()
        self.assertTrue(ht.wait_for(lambda: self.state(a["capture"])[0] and self.state(b["capture"])[0], 10))
        self.assertLess(time.time() - t0, 5)  # 100 ms window + 1 s margin, seen by a 200 ms tick
        self.assertEqual(self.state(a["capture"])[1:], ("failed", f"timed out: process {busy.pid} never took its "
                                                        "config (its profiler stayed busy, or it stopped asking)"))
        done, state, err = self.state(b["capture"])
        self.assertEqual(state, "failed")
        self.assertIn(f"process {silent.pid} took its config and wrote no trace", err)
        self.assertEqual(busy.configs, [])  # withdrawn: never delivered afterwards

    def test_open_captures_do_not_block_for_ever(self):
        f = self.fake(write=False)
        f.poll(2)
        for k in range(64):  # 64 captures, each delivered, none ever written
            r = self.capture(f.pid, duration_ms=1000)
            self.assertEqual(r["activityProfilersTriggered"], [f.pid], (k, r))
            self.assertIn("REQUEST_TRACE_ID", f.poll(2))
        r = self.capture(f.pid)
        self.assertEqual(r["status"], "failed")
        self.assertIn("64 captures are still running", r["error"])
        # their deadlines (1 s window + 1 s margin) pass, and captures work again
        self.assertTrue(ht.wait_for(lambda: "capture" in self.capture(f.pid), 10))

    def test_config_too_large_for_a_datagram(self):
        f = self.fake()
        f.poll(2)
        head = {"fn": "setKinetOnDemandRequest", "pids": [f.pid], "config": ""}
        config = f"ACTIVITIES_LOG_FILE={self.d.traces}/t.json\n#"
        config += "x" * (65536 - len(json.dumps(head, separators=(",", ":"))) - len(config) - 1)  # "\\n" in JSON: 2 bytes
        req = json.dumps(dict(head, config=config), separators=(",", ":"))
        self.assertEqual(len(req), 65536)
        r = json.loads(ht.rpc_raw(self.d.port, ht.frame(req)))
        self.assertEqual(r["status"], "failed")
        self.assertIn("one datagram holds at most 65496", r["error"])
        self.assertEqual(f.poll(2), "")  # nothing pending

    def test_flood_of_invented_pids(self):
        f = self.fake()
        f.flood(2000)
        time.sleep(0.5)
        self.assertEqual(self.d.counter("htad_processes"), 0)
        self.assertGreaterEqual(self.d.counter("htad_polls_dropped_total"), 1000)  # the rest overflowed the queue
        # the log says so once a second, not 2000 times
        self.assertLess(self.d.logtext().count("polls as pid"), 10)
        g = self.fake().start()
        self.assertTrue(ht.wait_for(lambda: self.d.counter("htad_processes") == 1, 5))
        self.assertEqual(self.capture(g.pid)["activityProfilersTriggered"], [g.pid])

    def test_trace_of_another_user_refused(self):
        """A file planted under the process's predicted name by another user (the trace folder is
        writable by all): refused, the trace failed with the reason.  Needs root to give a file away."""
        f = self.fake(write=False)
        f.poll(2)
        r = self.capture(f.pid, start_time_ms=0, duration_ms=100)
        cfg = f.poll(2)
        path = [x.split("=", 1)[1] for x in cfg.splitlines() if x.startswith("ACTIVITIES_LOG_FILE=")][0]
        path = path.replace(".json", f"_{f.pid}.json")
        with open(path, "w") as fh:
            fh.write(ht.small_trace(f.pid))
        if os.getuid() == 0:
            os.chown(path, 65534, 65534)
            self.assertTrue(ht.wait_for(lambda: self.state(r["capture"])[1] == "failed", 5))
            self.assertIn("owned by uid 65534, not by the process's user (uid 0)", self.state(r["capture"])[2])
        else:  # the file is the process's user's own: taken
            self.assertTrue(ht.wait_for(lambda: self.state(r["capture"])[1] == "stored", 5))


POLLERS = r"""
import os, socket, struct, sys, time
ipc, n = sys.argv[1], int(sys.argv[2])
for _ in range(n):
    pid = os.fork()
    if pid == 0:
        me = [os.getpid(), os.getppid()]  # libkineto's list: itself, then its ancestors
        while len(me) < 11:
            with open("/proc/%d/stat" % me[-1]) as f:
                up = int(f.read().rsplit(")", 1)[1].split()[1])
            if up <= 1:
                break
            me.append(up)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        s.bind(os.path.join(ipc, "poller%d" % os.getpid()))
        body = struct.pack("<iiq", 2, len(me), 0) + struct.pack("<%di" % len(me), *me)
        s.sendto(struct.pack("<Q32s", len(body), b"req") + body, os.path.join(ipc, "dynolog"))
        s.settimeout(5)
        s.recv(65536)
        time.sleep(120)
        os._exit(0)
    print(pid, flush=True)
time.sleep(120)
"""


def fork_pollers(ipc, n):
    """n processes, each polling once as itself and staying alive (registered) until end() (forked by a
    small interpreter of their own: quick); returns their pids and end."""
    import signal
    p = subprocess.Popen([sys.executable, "-S", "-c", POLLERS, ipc, str(n)], stdout=subprocess.PIPE, text=True,
                         start_new_session=True)
    pids = [int(p.stdout.readline()) for _ in range(n)]

    def end():
        os.killpg(p.pid, signal.SIGKILL)
        p.wait()
        p.stdout.close()
    return pids, end


NEWNS = ["unshare", "--user", "--map-root-user", "--pid", "--fork"]  # a user and pid namespace of its own


class Namespaces(ht.FakeCase):
    """Issue 35: a process is named by what the kernel says in htad's namespace.  Two processes of one pid
    number in two pid namespaces (two containers) got one trace name and one trace file (one stored, the
    other failed), and a request for pid N also reached a process that has N only in a namespace of its
    own (an unprivileged user+pid namespace can take any pid number there)."""

    def fake(self, **kw):
        return super().fake(**kw).start()

    def traces(self, cid):
        st = self.d.rpc({"fn": "htaStatus", "capture": cid})
        return st["done"], sorted((t["pid"], t["state"], t["name"]) for t in st["traces"])

    def test_one_pid_in_two_namespaces_is_two_traces(self):
        a, b = self.fake(prefix=NEWNS), self.fake(prefix=NEWNS)
        self.assertEqual((a.pids, b.pids), ([1], [1]))  # each is pid 1 in its own namespace
        self.assertNotEqual(a.kpid, b.kpid)
        r = self.d.rpc({"fn": "htaCapture", "pids": [0], "duration_ms": 50, "start_time_ms": 1})  # every process
        self.assertEqual(r["activityProfilersTriggered"], sorted([a.kpid, b.kpid]), r)
        self.assertTrue(ht.wait_for(lambda: self.traces(r["capture"])[0], 20), self.d.logtext())
        want = sorted((k, "stored", f"testhost_{k}.json") for k in (a.kpid, b.kpid))
        self.assertEqual(self.traces(r["capture"])[1], want, self.d.logtext())
        self.assertEqual(sorted(os.listdir(os.path.join(self.d.store, r["capture"]))),
                         sorted([".htad-capture", "testhost.metrics.jsonl"] + [n for _, _, n in want]))
        # each wrote its own file (libkineto names it by its pid in its namespace: 1 for both)
        self.assertEqual(len(set(a.written + b.written)), 2, (a.written, b.written))

    def test_a_pid_number_in_another_namespace_gets_no_config(self):
        victim = self.fake()
        v = victim.pid
        # the thief makes a pid namespace of its own and takes the victim's pid number in it
        thief = self.fake(prefix=NEWNS + ["sh", "-c",
                                                f'echo {v - 1} > /proc/sys/kernel/ns_last_pid && "$0" "$@"'])
        self.assertEqual(thief.pids[0], v)
        self.assertNotEqual(thief.kpid, v)
        r = self.d.rpc({"fn": "htaCapture", "pids": [v], "duration_ms": 50, "start_time_ms": 1})
        self.assertEqual(r["activityProfilersTriggered"], [v], r)
        self.assertEqual(r["processesMatched"], [v], r)
        self.assertTrue(ht.wait_for(lambda: victim.configs, 10))
        self.assertTrue(ht.wait_for(lambda: self.traces(r["capture"])[0], 20), self.d.logtext())
        self.assertEqual(self.traces(r["capture"])[1], [(v, "stored", f"testhost_{v}.json")])
        self.assertEqual(thief.configs, [])
        # the thief is reached by its pid in htad's namespace only
        r = self.d.rpc({"fn": "htaCapture", "pids": [thief.kpid], "duration_ms": 50, "start_time_ms": 1})
        self.assertEqual(r["activityProfilersTriggered"], [thief.kpid], r)


class Tables(unittest.TestCase):
    def test_a_user_cannot_fill_the_table(self):
        """256 processes of one user register; the 257th and later are answered, not registered, and a
        capture that asks for one says why; a registered process keeps its place and gets its config.

        Which processes are refused is decided by the daemon, not by the order of forks: the first 256 are
        forked and the test waits until the daemon reports 256 registered; only then are 4 more forked.
        The registered set is then read back from the daemon (a capture of every process with
        process_limit 0 lists them as processesMatched and triggers none), never assumed."""
        d = ht.Daemon()
        ends = []
        try:
            first, end = fork_pollers(d.ipc, 256)
            ends.append(end)
            self.assertTrue(ht.wait_for(lambda: d.counter("htad_processes") == 256, 60), d.logtext())
            extra, end = fork_pollers(d.ipc, 4)
            ends.append(end)
            self.assertTrue(ht.wait_for(lambda: d.counter("htad_processes_refused_total") == 4, 60), d.logtext())
            self.assertEqual(d.counter("htad_processes"), 256)
            # one line for the 4 refusals, which came within 10 s of each other
            self.assertEqual(d.logtext().count("its user has 256 processes registered"), 1)
            r = d.rpc({"fn": "htaCapture", "pids": [0], "process_limit": 0})
            self.assertEqual(sorted(r["processesMatched"]), sorted(first), r)
            self.assertEqual(r["activityProfilersTriggered"], [], r)
            for pid in extra:
                r = d.rpc({"fn": "htaCapture", "pids": [pid]})
                self.assertEqual(r.get("status"), "failed", r)
                self.assertIn("processes were refused registration lately: the process table, or their user's "
                              "share of 256, is full", r["error"])
            r = d.rpc({"fn": "htaCapture", "pids": [first[0]]})
            self.assertEqual(r["activityProfilersTriggered"], [first[0]], r)
        finally:
            for end in ends:
                end()
            self.assertEqual(d.stop(), 0)
        shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
