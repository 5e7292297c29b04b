"""htad speaks dynolog's protocols (shared/design/dynolog-ipc.md §8): a Python client polls as libkineto
does; `setKinetOnDemandRequest` over TCP matches processes as dynolog does (by any pid of the ancestor
set, by job id, limited, busy counted), the config is held back while the client is busy and given
once, with REQUEST_TRACE_ID; `ctxt` is answered; bad datagrams are dropped and the daemon goes on;
silent processes are garbage-collected; the abstract socket \\0dynolog\\0 works too.  Every client is
a process of its own: htad knows a poll's sender by what the kernel says of it."""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import textwrap
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402


def dyno_req(d, pids, job_id=0, limit=1000, log="x.json"):
    return d.rpc({"fn": "setKinetOnDemandRequest", "config": f"ACTIVITIES_LOG_FILE={d.traces}/{log}\n"
                  "ACTIVITIES_DURATION_MSECS=500", "job_id": job_id, "pids": pids, "process_limit": limit})


class Protocol(ht.FakeCase):
    DAEMON_ARGS = ("--gc-s", "2")

    def client(self, job_id=0):
        return self.fake(job_id)

    def test_register_match_deliver_once(self):
        c = self.client()
        self.assertEqual(c.pids[:2], [c.pid, os.getpid()])
        self.assertEqual(c.poll(2), "")  # registers; nothing to do
        r = dyno_req(self.d, [os.getpid()])  # an ancestor (a launcher) matches its children
        self.assertEqual(r, {"activityProfilersBusy": 0, "activityProfilersTriggered": [c.pid],
                             "eventProfilersBusy": 0, "eventProfilersTriggered": [], "processesMatched": [c.pid]})
        self.assertEqual(c.poll(0), "")  # busy: held back
        cfg = c.poll(2)
        self.assertIn(f"ACTIVITIES_LOG_FILE={self.d.traces}/x.json\n", cfg)
        self.assertIn("REQUEST_TRACE_ID=", cfg)
        self.assertTrue(cfg.endswith("\n"))
        self.assertEqual(c.poll(2), "")  # given once

    def test_job_limit_busy(self):
        a, b, other = self.client(7), self.client(7), self.client(8)
        for c in (a, b, other):
            c.poll(2)
        self.assertEqual(dyno_req(self.d, [0], job_id=9)["processesMatched"], [])  # unknown job
        r = dyno_req(self.d, [], job_id=7, limit=1)  # all of job 7, one at most: the lowest pid set
        first, second = sorted((a, b), key=lambda c: sorted(c.pids))
        self.assertEqual((r["processesMatched"], r["activityProfilersTriggered"]), ([first.pid, second.pid],
                                                                                   [first.pid]))
        r = dyno_req(self.d, [os.getpid()], job_id=7)  # the first still has its config: busy
        self.assertEqual((r["activityProfilersTriggered"], r["activityProfilersBusy"]), ([second.pid], 1))
        self.assertNotEqual(a.poll(2), "")
        self.assertNotEqual(b.poll(2), "")
        self.assertEqual(other.poll(2), "")

    def test_ctxt_and_bad_datagrams(self):
        c, c2 = self.client(), self.client()
        c.send_raw(struct.pack("<Q32s", 16, b"ctxt") + struct.pack("<iiq", 0, c.pid, 0))
        data = c.recv()
        self.assertEqual(struct.unpack_from("<Q32s", data)[0], 4)
        self.assertEqual(struct.unpack_from("<i", data, 40)[0], 1)
        c2.send_raw(struct.pack("<Q32s", 16, b"ctxt") + struct.pack("<iiq", 0, c2.pid, 0))  # a second pid, GPU 0
        self.assertEqual(struct.unpack_from("<i", c2.recv(), 40)[0], 2)
        c.send_raw(struct.pack("<Q32s", 16, b"ctxt") + struct.pack("<iiq", 0, c.pid, 0))  # again: the same set
        self.assertEqual(struct.unpack_from("<i", c.recv(), 40)[0], 2)
        # garbage: too short, a size that lies, n = 0, n too large, an unknown type; all dropped
        c.send_raw(b"\x01\x02")
        c.send_raw(struct.pack("<Q32s", 1000, b"req") + b"\0" * 16)
        c.send_raw(struct.pack("<Q32s", 16, b"req") + struct.pack("<iiq", 2, 0, 0))
        c.send_raw(struct.pack("<Q32s", 16, b"req") + struct.pack("<iiq", 2, 100000, 0))
        c.send_raw(struct.pack("<Q32s", 4, b"zzz") + b"abcd")
        self.assertEqual(c.poll(2), "")  # still answering, and to this very sender
        self.assertEqual(dyno_req(self.d, [c.pid])["processesMatched"], [c.pid])

    def test_gc(self):
        c = self.client()
        c.poll(2)
        self.assertEqual(self.d.counter("htad_processes"), 1)
        r = self.d.rpc({"fn": "htaCapture", "pids": [c.pid], "duration_ms": 100})
        self.assertEqual(r["activityProfilersTriggered"], [c.pid])
        # it never polls again: dropped after --gc-s 2, and its trace is lost
        self.assertTrue(ht.wait_for(lambda: self.d.counter("htad_processes") == 0, 10))
        st = self.d.rpc({"fn": "htaStatus", "capture": r["capture"]})
        self.assertEqual(st["traces"][0]["state"], "lost")
        self.assertIn("stopped polling", st["traces"][0]["error"])
        self.assertTrue(st["done"])

    def test_status_version(self):
        self.assertEqual(self.d.rpc({"fn": "getStatus"}), {"status": 1})
        self.assertIn("htad", self.d.rpc({"fn": "getVersion"})["version"])
        self.assertEqual(self.d.rpc({"fn": "dcgmProfPause", "duration_s": 5}), {"status": True})


ABSTRACT = textwrap.dedent("""
    import os, socket, struct, subprocess, sys, time, json
    sys.path.insert(0, %r)
    import htadtest as ht
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    tmp = sys.argv[1]
    env = dict(os.environ); env.pop("KINETO_IPC_SOCKET_DIR", None)
    p = subprocess.Popen([ht.HTAD, "--port", "1778", "--http-port", "0", "--store", tmp + "/store",
                          "--trace-dir", tmp + "/traces", "--host", "h"], env=env, stderr=subprocess.PIPE)
    time.sleep(0.5)
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind(b"\\0dynoconfigclientTEST\\0")
    me = ht.ancestors()
    body = struct.pack("<iiq", 2, len(me), 0) + struct.pack("<%%di" %% len(me), *me)
    def poll():
        s.sendto(struct.pack("<Q32s", len(body), b"req") + body, b"\\0dynolog\\0")
        s.settimeout(0.09)   # libkineto's window
        d = s.recv(65536)
        return d[40:].decode()
    print(repr(poll()))
    print(json.dumps(ht.rpc(1778, {"fn": "setKinetOnDemandRequest", "pids": [me[1]],
                                   "config": "ACTIVITIES_LOG_FILE=" + tmp + "/traces/t.json"})))
    print(repr(poll()))
    p.terminate(); p.wait(); print("exit", p.returncode); print(os.getpid())
""")


class AbstractSocket(unittest.TestCase):
    def test_abstract_name(self):
        """The default: \\0dynolog\\0 (the trailing NUL is part of the name), in a network namespace of
        the test's own, so that no other daemon on the machine is in the way."""
        if not shutil.which("unshare") or subprocess.run(["unshare", "-rn", "true"]).returncode:
            self.fail("unshare -rn (a user and network namespace) is needed for this test")
        import tempfile
        with tempfile.TemporaryDirectory() as tmp:
            p = subprocess.run(["unshare", "-rn", sys.executable, "-c", ABSTRACT % ht.HERE, tmp],
                               capture_output=True, text=True, timeout=60)
            self.assertEqual(p.returncode, 0, p.stderr)
            lines = p.stdout.splitlines()
            self.assertEqual(lines[0], "''")
            self.assertEqual(json.loads(lines[1])["activityProfilersTriggered"], [int(lines[4])])
            self.assertIn(f"ACTIVITIES_LOG_FILE={tmp}/traces/t.json", lines[2])
            self.assertEqual(lines[3], "exit 0")


if __name__ == "__main__":
    unittest.main()
