"""Bounds everywhere (issue 27, item 4): SIGTERM ends htad within its documented 10 s while an S3 PUT
waits on an endpoint that never answers; an S3 object larger than --max-trace-mb is not fetched whole
(an endpoint that sends without end is cut off); the store never follows a link out of itself (a folder
or a file); a newline or a terminal escape from a client never reaches the log as such; the folder
store keeps --keep-captures captures and --keep-mb MiB, the oldest removed first."""
import os
import shutil
import socket
import sys
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402

AWS = {"AWS_ACCESS_KEY_ID": "K", "AWS_SECRET_ACCESS_KEY": "S"}


class BadS3(ht.LoopbackServer):
    """An HTTP endpoint on loopback that reads each request's head and then either never answers
    (hang) or answers 200 with a body that never ends (endless)."""

    def __init__(self, mode):
        self.mode, self.requests = mode, 0
        super().__init__()

    def serve(self, c):
        data = b""
        c.settimeout(0.5)
        while b"\r\n\r\n" not in data and not self.stop_ev.is_set():
            try:
                x = c.recv(65536)
            except OSError:
                continue
            if not x:
                return
            data += x
        self.requests += 1
        if self.mode == "endless":
            try:
                c.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 1000000000000\r\n\r\n")
                while not self.stop_ev.is_set():
                    c.sendall(b"\0" * 65536)
            except OSError:
                return
        while not self.stop_ev.is_set():  # hang: read whatever comes, answer nothing
            try:
                if not c.recv(65536):
                    return
            except socket.timeout:
                continue
            except OSError:
                return


class S3Bounds(unittest.TestCase):
    def test_sigterm_ends_a_hanging_put_in_10_s(self):
        s3 = BadS3("hang")
        d = ht.Daemon("--s3-endpoint", f"http://127.0.0.1:{s3.port}", store="s3://b/p", env=AWS)
        c = ht.FakeKineto(d.ipc).start()
        try:
            r = d.rpc({"fn": "htaCapture", "pids": [c.pid], "duration_ms": 100, "start_time_ms": 1})
            self.assertEqual(r["activityProfilersTriggered"], [c.pid], r)
            self.assertTrue(ht.wait_for(lambda: s3.requests >= 1, 10))  # the PUT is waiting for its answer
            time.sleep(0.5)
            t0 = time.time()
            code = d.stop()
            took = time.time() - t0
        finally:
            c.stop()
            s3.close()
        self.assertEqual(code, 0, d.logtext())
        self.assertLess(took, 12, d.logtext())
        self.assertIn("stopped: htad is shutting down", d.logtext())
        shutil.rmtree(d.tmp, ignore_errors=True)

    def test_fetch_from_s3_is_bounded(self):
        s3 = BadS3("endless")
        d = ht.Daemon("--s3-endpoint", f"http://127.0.0.1:{s3.port}", "--max-trace-mb", "1", store="s3://b/p",
                      env=AWS)
        try:
            t0 = time.time()
            head, _ = ht.rpc_fetch(d.port, {"fn": "htaFetch", "capture": "c1", "name": "x.json"})
            self.assertEqual(head["status"], "failed", head)
            self.assertIn("more than 1048576 bytes", head["error"])
            self.assertLess(time.time() - t0, 10)
        finally:
            s3.close()
            self.assertEqual(d.stop(), 0, d.logtext())
        shutil.rmtree(d.tmp, ignore_errors=True)


class FolderStore(unittest.TestCase):
    def test_links_not_followed(self):
        d = ht.Daemon()
        try:
            outside = os.path.join(d.tmp, "outside")
            os.makedirs(outside)
            with open(os.path.join(outside, "secret.json"), "w") as f:
                f.write("secret")
            os.symlink(outside, os.path.join(d.store, "evil"))
            os.makedirs(os.path.join(d.store, "cap1"))
            os.symlink(os.path.join(outside, "secret.json"), os.path.join(d.store, "cap1", "link.json"))
            head, _ = ht.rpc_fetch(d.port, {"fn": "htaFetch", "capture": "evil", "name": "secret.json"})
            self.assertEqual(head["status"], "failed")
            self.assertIn("evil: not a folder of the store (a link is not followed)", head["error"])
            head, _ = ht.rpc_fetch(d.port, {"fn": "htaFetch", "capture": "cap1", "name": "link.json"})
            self.assertEqual(head["status"], "failed")
            self.assertIn("symbolic links", head["error"])
        finally:
            self.assertEqual(d.stop(), 0)
        shutil.rmtree(d.tmp, ignore_errors=True)

    def test_log_is_escaped(self):
        d = ht.Daemon()
        try:
            r = d.rpc({"fn": "x\n2026-01-01 00:00:00 htad: forged line \u001b[31mred\u009b"})
            self.assertIn("unknown fn", r["error"])
        finally:
            self.assertEqual(d.stop(), 0)
        log = d.logtext()
        self.assertFalse(any(x.startswith("2026-01-01 00:00:00 htad: forged") for x in log.splitlines()), log)
        self.assertIn("x\\x0a2026-01-01 00:00:00 htad: forged line \\x1b[31mred\\x9b", log)
        self.assertNotIn("\x1b", log)
        shutil.rmtree(d.tmp, ignore_errors=True)

    def test_retention(self):
        d = ht.Daemon("--keep-captures", "2", "--keep-mb", "1")
        c = ht.FakeKineto(d.ipc).start()
        try:
            old = os.path.join(d.store, "1000-1")  # an old capture of 2 MiB: over --keep-mb
            os.makedirs(old)
            with open(os.path.join(old, "h_1.json"), "wb") as f:
                f.write(b" " * (2 << 20))
            ids = []
            for k in range(3):
                r = d.rpc({"fn": "htaCapture", "pids": [c.pid], "duration_ms": 50, "start_time_ms": 1})
                ids.append(r["capture"])
                self.assertTrue(ht.wait_for(lambda: d.rpc({"fn": "htaStatus", "capture": ids[-1]})["done"], 10))
                self.assertTrue(ht.wait_for(lambda: os.path.exists(
                    os.path.join(d.store, ids[-1], "testhost.metrics.jsonl")), 10))
            time.sleep(0.3)
            self.assertEqual(sorted(os.listdir(d.store)), sorted(ids[1:]), d.logtext())
            self.assertIn("retention: capture 1000-1 removed (2097152 bytes)", d.logtext())
        finally:
            c.stop()
            self.assertEqual(d.stop(), 0)
        shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
