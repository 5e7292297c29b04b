"""htad is safe as a service: every bad request (malformed JSON, a huge length, missing or wrong members,
unknown pids, trace paths outside the trace folder, file names that climb out of the store) gets an
error that says what is wrong, and changes nothing (no capture, no pending config); another address
than loopback needs a token file (mode 0600); SIGTERM ends it cleanly (exit 0, socket file gone)."""
import json
import os
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402


class BadRequests(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.d = ht.Daemon()
        cls.c = ht.FakeKineto(cls.d.ipc)
        cls.c.poll(2)
        cls.pid = cls.c.pid

    @classmethod
    def tearDownClass(cls):
        cls.c.stop()
        assert cls.d.stop() == 0, cls.d.logtext()
        shutil.rmtree(cls.d.tmp, ignore_errors=True)

    def refused(self, reply, text):
        self.assertEqual(reply["status"], "failed", reply)
        self.assertIn(text, reply["error"])

    def unchanged(self):
        """No capture was made and the client has nothing pending."""
        self.assertEqual(self.d.counter("htad_captures_total"), 0)
        self.assertEqual(self.c.poll(2), "")

    def test_malformed_json(self):
        for text, where in (('{"fn": "getStatus"', "byte 18"), ("{'fn': 1}", "byte 1"), ("[1,2", "byte 4"),
                            ('{"fn":"x"} trailing', "text after the value"), ("\"\\ud800\"", "surrogate"),
                            ('{"fn": 1e999}', "number out of range"), ('{"a":' * 40, "nested too deep")):
            r = json.loads(ht.rpc_raw(self.d.port, ht.frame(text)))
            self.refused(r, "malformed request")
            self.assertIn(where, r["error"])
        self.refused(ht.rpc(self.d.port, [1, 2]), "not an object with a string 'fn'")
        self.refused(ht.rpc(self.d.port, {"fn": "rm -rf /"}), "unknown fn 'rm -rf /'")
        self.unchanged()

    def test_huge_and_negative_sizes(self):
        for n in (1 << 30, 64 * 1024 + 1, -5):
            with socket.create_connection(("127.0.0.1", self.d.port), timeout=10) as s:
                s.sendall(struct.pack("=i", n))  # nothing follows: refused on the length alone
                (m,) = struct.unpack("=i", ht.recv_n(s, 4))
                r = json.loads(ht.recv_n(s, m))
            self.refused(r, "the limit is 65536")
        self.refused(ht.rpc(self.d.port, {"fn": "htaCapture", "pids": list(range(1, 300))}), "at most 256")
        self.unchanged()

    def test_wrong_members(self):
        d = self.d
        self.refused(d.rpc({"fn": "setKinetOnDemandRequest", "config": "x"}), "'pids' is required")
        self.refused(d.rpc({"fn": "setKinetOnDemandRequest", "pids": [self.pid]}), "'config' is required")
        self.refused(d.rpc({"fn": "htaCapture", "pids": "8000"}), "'pids' must be an array")
        self.refused(d.rpc({"fn": "htaCapture", "pids": [-1]}), "'pids'[0] is not a process id")
        self.refused(d.rpc({"fn": "htaCapture", "pids": [self.pid], "duration_ms": 0}), "'duration_ms' must be")
        self.refused(d.rpc({"fn": "htaCapture", "pids": [self.pid], "job_id": "7"}), "'job_id' must be")
        self.refused(d.rpc({"fn": "htaStatus", "capture": "nope"}), "no capture 'nope'")
        self.unchanged()

    def test_unknown_pids(self):
        self.refused(self.d.rpc({"fn": "htaCapture", "pids": [999999]}), "has pid 999999")
        self.refused(self.d.rpc({"fn": "htaCapture", "job_id": 77}), "no process of job 77 is registered")
        self.unchanged()

    def test_paths_outside_the_folder(self):
        t = self.d.traces
        for path, why in ((f"{t}/../etc/x.json", "'..'"), ("/etc/x.json", "directly in"),
                          (f"{t}/sub/x.json", "directly in"), ("x.json", "not an absolute path")):
            r = self.d.rpc({"fn": "setKinetOnDemandRequest", "pids": [self.pid],
                            "config": f"ACTIVITIES_LOG_FILE={path}\nACTIVITIES_DURATION_MSECS=100"})
            self.refused(r, why)
        self.refused(self.d.rpc({"fn": "setKinetOnDemandRequest", "pids": [self.pid], "config": "A=1"}),
                     "no ACTIVITIES_LOG_FILE")
        for cap, name in (("..", "x"), ("a", "../../etc/passwd"), ("a/b", "c"), ("a", ".hidden")):
            head, data = ht.rpc_fetch(self.d.port, {"fn": "htaFetch", "capture": cap, "name": name})
            self.refused(head, "plain names")
        head, _ = ht.rpc_fetch(self.d.port, {"fn": "htaFetch", "capture": "nothere", "name": "x.json"})
        self.refused(head, "No such file")
        self.unchanged()


TOKEN = """
import json, os, socket, struct, subprocess, sys
sys.path.insert(0, %r)
import htadtest as ht
d = ht.netns_daemon(sys.argv[1], ["10.77.0.1"])
def call(ip, obj):
    with socket.create_connection((ip, d.port), timeout=10) as s:
        s.sendall(ht.frame(json.dumps(obj)))
        (n,) = struct.unpack("=i", ht.recv_n(s, 4))
        return json.loads(ht.recv_n(s, n))
print(json.dumps(call("10.77.0.1", {"fn": "getStatus"})))
print(json.dumps(call("10.77.0.1", {"fn": "getStatus", "token": "wrong"})))
print(json.dumps(call("10.77.0.1", {"token": "s3cret-token-0123456789", "fn": "getStatus"})))
print(json.dumps(call("127.0.0.1", {"fn": "getStatus"})))
print(d.stop())
"""


class Service(unittest.TestCase):
    def test_other_address_needs_a_token(self):
        with tempfile.TemporaryDirectory() as tmp:
            base = [ht.HTAD, "--port", str(ht.free_port()), "--http-port", "0", "--store", tmp + "/s",
                    "--trace-dir", tmp + "/t", "--ipc-dir", tmp, "--listen", "0.0.0.0"]
            p = subprocess.run(base, capture_output=True, text=True, timeout=20)
            self.assertEqual(p.returncode, 2)
            self.assertIn("needs --token-file", p.stderr)
            tok = os.path.join(tmp, "token")
            with open(tok, "w") as f:
                f.write("0123456789abcdef0123\n")
            os.chmod(tok, 0o644)
            p = subprocess.run(base + ["--token-file", tok], capture_output=True, text=True, timeout=20)
            self.assertEqual(p.returncode, 2)
            self.assertIn("readable by its owner only", p.stderr)

    def test_token_checked_for_other_hosts(self):
        """A request from an address other than loopback is refused without the token and served with it.
        The other address: 10.77.0.1 on the loopback device of a network namespace of the test's own
        (unshare -rn), so that the test needs no network and touches none."""
        with tempfile.TemporaryDirectory() as tmp:
            lines = ht.in_netns(self, TOKEN, tmp)
            self.assertEqual(lines[0]["status"], "failed")
            self.assertIn("needs the daemon's token", lines[0]["error"])
            self.assertEqual(lines[1]["status"], "failed")
            self.assertEqual(lines[2], {"status": 1})
            self.assertEqual(lines[3], {"status": 1})  # loopback needs no token
            self.assertEqual(lines[4], 0)

    def test_sigterm_is_clean(self):
        d = ht.Daemon()
        self.addCleanup(d.stop)  # stopped even when an assertion fails first (stop() again is harmless)
        c = ht.FakeKineto(d.ipc).start()
        try:
            r = d.rpc({"fn": "htaCapture", "pids": [c.pid], "duration_ms": 100})
            self.assertEqual(r["activityProfilersTriggered"], [c.pid])
            ht.wait_for(lambda: c.written, 10)
        finally:
            c.stop()
        self.assertEqual(d.stop(), 0, d.logtext())
        self.assertIn("stopped", d.logtext())
        self.assertFalse(os.path.exists(os.path.join(d.ipc, "dynolog")))
        # the store holds complete files only: no temporary file left behind (and the capture folder's
        # marker of the htad that made it, for retention)
        names = [n for _, _, fs in os.walk(d.store) for n in fs]
        self.assertEqual(sorted(names), [".htad-capture", "testhost.metrics.jsonl", f"testhost_{c.pid}.json"])
        shutil.rmtree(d.tmp, ignore_errors=True)

    def test_help(self):
        p = subprocess.run([ht.HTAD, "--help"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0)
        for opt in ("--port N", "--http-port N", "--store DIR|s3://", "--interval-ms N", "--token-file"):
            self.assertIn(opt, p.stdout)
        self.assertLessEqual(max(len(x) for x in p.stdout.splitlines()), 100)
        p = subprocess.run([ht.HTAD, "--bogus"], capture_output=True, text=True)
        self.assertEqual(p.returncode, 2)
        self.assertIn("unknown option --bogus", p.stderr)


if __name__ == "__main__":
    unittest.main()
