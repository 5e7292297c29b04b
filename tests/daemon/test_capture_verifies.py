"""`hta capture` does not trust its daemons (issue 27, item 5), tried against a fake daemon on loopback
that lies: a fetch reply without an integer size, with a size over --max-bytes (1e15), or cut short is a
failed trace with the reason, no file and exit 1; --timeout-ms bounds the command with 3 silent hosts
(asked at once, not one after the other); 200,000 pids from one daemon are handled in linear time;
daemon text with terminal escapes is printed escaped; a capture id that is not a plain name is refused,
and what goes back into a request is JSON-quoted."""
import json
import os
import shutil
import struct
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402


class FakeDaemon(ht.LoopbackServer):
    """Answers dynolog's framing with handler(request) -> (reply object or bytes, payload bytes or None).
    silent=True: accepts and never answers."""

    def __init__(self, handler=None, silent=False):
        self.handler, self.silent, self.requests = handler, silent, []
        super().__init__()

    def serve(self, c):
        if self.silent:
            return
        try:
            c.settimeout(10)
            (n,) = struct.unpack("=i", ht.recv_n(c, 4))
            raw = ht.recv_n(c, n)
            req = json.loads(raw)
            self.requests.append(raw)
            reply, payload = self.handler(req)
            data = reply if isinstance(reply, bytes) else json.dumps(reply).encode()
            c.sendall(struct.pack("=i", len(data)) + data)
            if payload:
                c.sendall(payload)
        except (OSError, TypeError, ValueError):
            pass
        finally:
            c.close()


def capture_reply(pids, cid="c1"):
    return {"activityProfilersBusy": 0, "activityProfilersTriggered": pids, "capture": cid,
            "eventProfilersBusy": 0, "eventProfilersTriggered": [], "host": "h", "processesMatched": pids}


def handler_with(fetch, pids=(11,), status_extra=None, cid="c1"):
    def h(req):
        fn = req["fn"]
        if fn == "htaCapture":
            return capture_reply(list(pids), cid), None
        if fn == "htaStatus":
            tr = [dict({"pid": p, "state": "stored", "name": f"h_{p}.json", "size": 10}, **(status_extra or {}))
                  for p in pids]
            return {"status": "ok", "capture": cid, "done": True, "traces": tr}, None
        if fn == "htaFetch":
            return fetch(req)
        if fn == "htaMetrics":
            return {"status": "ok", "size": 0}, None
        return {"status": "failed", "error": "?"}, None
    return h


def run_capture(ports, *extra, timeout=60, test=None):
    out = tempfile.mkdtemp(prefix="capverify-")
    if test:  # gone after the test, whatever its outcome
        test.addCleanup(shutil.rmtree, out, True)
    t0 = time.time()
    p = subprocess.run([ht.HTA, "capture", *[f"127.0.0.1:{x}" for x in ports], "-o", out, "--start-delay-ms", "0",
                        "--duration-ms", "100", *extra], capture_output=True, text=True, timeout=timeout)
    return p, out, time.time() - t0


def traces(out):
    return sorted(f for f in os.listdir(out) if f.endswith(".json"))


class Verifies(unittest.TestCase):
    def tearDown(self):
        for d in getattr(self, "daemons", []):
            d.close()

    def fake(self, *a, **kw):
        d = FakeDaemon(*a, **kw)
        self.daemons = getattr(self, "daemons", []) + [d]
        return d

    def test_sizes_are_checked(self):
        for reply, payload, why in (({"status": "ok"}, b"0123456789", "the reply's size (none)"),
                                    ({"status": "ok", "size": "10"}, b"0123456789", "the reply's size (none)"),
                                    ({"status": "ok", "size": 10.5}, b"0123456789", "the reply's size (10.5)"),
                                    ({"status": "ok", "size": -10}, b"", "the reply's size (-10)"),
                                    ({"status": "ok", "size": 10 ** 15}, b"x" * 65536,
                                     "the reply's size (1000000000000000) is not a non-negative integer within "
                                     "--max-bytes 4294967296"),
                                    ({"status": "ok", "size": 12}, b"0123456789", "announces 12 bytes, the status "
                                                                                   "said 10"),
                                    ({"status": "ok", "size": 10}, b"01234", "connection closed after 5 of 10")):
            d = self.fake(handler_with(lambda req, r=reply, pl=payload: (r, pl)))
            p, out, _ = run_capture([d.port], test=self)
            self.assertEqual(p.returncode, 1, (reply, p.stdout, p.stderr))
            self.assertIn(f"no trace from 127.0.0.1 pid 11 (failed: fetch: 127.0.0.1:{d.port}: " if
                          "closed" not in why else "no trace from 127.0.0.1 pid 11 (failed: fetch: ", p.stderr)
            self.assertIn(why, p.stderr)
            self.assertEqual(traces(out), [], (reply, p.stderr))  # nothing cut or empty is left as a trace
            self.assertIn("failed", p.stdout)
            shutil.rmtree(out, True)
        # and the honest reply is taken
        d = self.fake(handler_with(lambda req: ({"status": "ok", "size": 10}, b"0123456789")))
        p, out, _ = run_capture([d.port], test=self)
        self.assertEqual(p.returncode, 0, p.stderr)
        self.assertEqual(traces(out), [f"127.0.0.1-{d.port}_11.json"])
        shutil.rmtree(out, True)

    def test_max_bytes(self):
        d = self.fake(handler_with(lambda req: ({"status": "ok", "size": 10}, b"0123456789")))
        p, out, _ = run_capture([d.port], "--max-bytes", "9", test=self)
        self.assertEqual(p.returncode, 1)
        self.assertIn("--max-bytes 9", p.stderr)
        shutil.rmtree(out, True)

    def test_silent_hosts_in_parallel(self):
        silent = [self.fake(silent=True) for _ in range(3)]
        good = self.fake(handler_with(lambda req: ({"status": "ok", "size": 10}, b"0123456789")))
        p, out, took = run_capture([s.port for s in silent] + [good.port], "--timeout-ms", "2000", test=self)
        self.assertEqual(p.returncode, 1)
        self.assertLess(took, 7, p.stderr)  # 2 s to wait, 2 s more to fetch at most; not 10 s per host
        for s in silent:
            self.assertIn(f"no trace from 127.0.0.1: 127.0.0.1:{s.port}: ", p.stderr)
        self.assertEqual(traces(out), [f"127.0.0.1-{good.port}_11.json"])
        shutil.rmtree(out, True)

    def test_one_pid_listed_twice_is_one_file_never_overwritten(self):
        """Issue 35: a daemon listing one pid for two traces (two processes of one pid in two pid
        namespaces, named by that pid) had both fetched into one HOST_PID.json, the second replacing the
        first, one row "fetched" and exit 0.  Now the first trace is the file, the second is said and
        counted missing (exit 1), and nothing is written over."""
        def h(req):
            fn = req["fn"]
            if fn == "htaCapture":
                return capture_reply([11, 11]), None
            if fn == "htaStatus":
                tr = [{"pid": 11, "state": "stored", "name": n, "size": 5} for n in ("h_11.json", "h_11b.json")]
                return {"status": "ok", "capture": "c1", "done": True, "traces": tr}, None
            if fn == "htaFetch":
                return {"status": "ok", "size": 5}, (b"first" if req["name"] == "h_11.json" else b"secnd")
            if fn == "htaMetrics":
                return {"status": "ok", "size": 0}, None
            return {"status": "failed", "error": "?"}, None
        d = self.fake(h)
        p, out, _ = run_capture([d.port], test=self)
        self.assertEqual(p.returncode, 1, p.stderr)
        self.assertEqual(traces(out), [f"127.0.0.1-{d.port}_11.json"])
        with open(os.path.join(out, f"127.0.0.1-{d.port}_11.json"), "rb") as f:
            self.assertEqual(f.read(), b"first")
        self.assertIn("no trace from 127.0.0.1 pid 11 (failed: the daemon listed pid 11 for a second trace, "
                      "h_11b.json: one file per pid, not fetched)", p.stderr)
        rows = [ln.split() for ln in p.stdout.splitlines()[1:]]
        self.assertEqual([r[2] for r in rows], ["fetched", "failed"], p.stdout)
        self.assertIn("1 expected traces did not arrive", p.stderr)
        fetched = [json.loads(r) for r in d.requests if b"htaFetch" in r]
        self.assertEqual([f["name"] for f in fetched], ["h_11.json"])

    def test_many_pids_linear(self):
        pids = list(range(2, 200002))

        def h(req):
            if req["fn"] == "htaCapture":
                return capture_reply(pids), None
            if req["fn"] == "htaStatus":
                body = ('{"status":"ok","capture":"c1","done":true,"traces":[' +
                        ",".join('{"pid":%d,"state":"lost","name":"h_%d.json","error":"gone"}' % (x, x)
                                 for x in reversed(pids)) + "]}")
                return body.encode(), None
            return {"status": "ok", "size": 0}, None
        d = self.fake(h)
        p, out, took = run_capture([d.port], "--timeout-ms", "30000", timeout=120, test=self)
        self.assertEqual(p.returncode, 1)
        self.assertIn("200000 processes on 1 hosts triggered", p.stderr)
        self.assertEqual(p.stderr.count("(lost: gone)"), 200000)
        self.assertLess(took, 20)
        shutil.rmtree(out, True)

    def test_daemon_text_escaped_and_quoted(self):
        evil = "gone\x1b[2J\x1b]0;pwned\x07\nhta capture: all traces fetched"
        d = self.fake(handler_with(None, status_extra={"state": "lost", "error": evil}))
        p, out, _ = run_capture([d.port], test=self)
        self.assertEqual(p.returncode, 1)
        both = p.stdout + p.stderr
        self.assertNotIn("\x1b", both)
        self.assertNotIn("\x07", both)
        self.assertIn("(lost: gone\\x1b[2J\\x1b]0;pwned\\x07\\x0ahta capture: all traces fetched)", p.stderr)
        self.assertFalse(any(x.startswith("hta capture: all traces fetched") for x in p.stderr.splitlines()))
        shutil.rmtree(out, True)
        # a capture id that is not a plain name never goes into a request
        d = self.fake(handler_with(None, cid='c1","fn":"htaFetch","name":"../../x'))
        p, out, _ = run_capture([d.port], test=self)
        self.assertEqual(p.returncode, 1)
        self.assertIn("not an htad reply", p.stderr)
        self.assertEqual(len(d.requests), 1)
        shutil.rmtree(out, True)
        # a plain but unusual one is quoted as JSON
        d = self.fake(handler_with(lambda req: ({"status": "ok", "size": 10}, b"0123456789"), cid="a-b.c_1"))
        p, out, _ = run_capture([d.port], test=self)
        self.assertEqual(p.returncode, 0, p.stderr)
        fetches = [json.loads(r) for r in d.requests if b"htaFetch" in r]
        self.assertEqual(fetches, [{"fn": "htaFetch", "capture": "a-b.c_1", "name": "h_11.json"}])
        shutil.rmtree(out, True)


if __name__ == "__main__":
    unittest.main()
