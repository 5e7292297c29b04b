"""Bounds everywhere (issue 27, item 4): SIGTERM ends htad within its documented 10 s while an S3 PUT
waits on an endpoint that never answers; an S3 object larger than --max-trace-mb is not fetched whole
(an endpoint that sends without end is cut off); the store never follows a link out of itself (a folder
or a file); a newline or a terminal escape from a client never reaches the log as such; the folder
store keeps --keep-captures fetched captures and --keep-mb MiB of them, the oldest removed first, and
removes only what this htad wrote (issue 35)."""
import os
import shutil
import socket
import sys
import tempfile
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

    def capture(self, d, c):
        """One capture of the fake process c, waited for until done, its metrics stored and the store
        thread's retention pass after them counted: its id."""
        n = d.counter("htad_retention_passes_total")
        r = d.rpc({"fn": "htaCapture", "pids": [c.pid], "duration_ms": 50, "start_time_ms": 1})
        cid = r["capture"]
        self.assertTrue(ht.wait_for(lambda: d.counter("htad_retention_passes_total") == n + 1, 10), d.logtext())
        self.assertTrue(d.rpc({"fn": "htaStatus", "capture": cid})["done"])
        self.assertTrue(os.path.exists(os.path.join(d.store, cid, "testhost.metrics.jsonl")), d.logtext())
        return cid

    def fetch(self, d, cid):
        head, data = ht.rpc_fetch(d.port, {"fn": "htaFetch", "capture": cid, "name": "testhost.metrics.jsonl"})
        self.assertEqual(head["status"], "ok", head)

    def states(self, d, cid):
        return [(t["state"], t.get("error", "")) for t in d.rpc({"fn": "htaStatus", "capture": cid})["traces"]]

    def test_retention(self):
        """Issue 35: --keep-captures 1 removed a store's own files (important/thesis.tex, 1700000000000-notes/)
        and a capture nobody had fetched, htaStatus still said "stored", and one htad's retention removed
        another's captures in a shared store.  Now only this htad's capture folders (its marker) are
        considered, only fetched and finished ones count and go, only the files it wrote are removed, and
        htaStatus says "removed"."""
        store = tempfile.mkdtemp(prefix="htadstore-")
        self.addCleanup(shutil.rmtree, store, True)
        mine = {"important/thesis.tex": b"chapter 1", "1700000000000-notes/n.txt": b"notes",
                "1000-1/h_1.json": b" " * (2 << 20)}  # an old-looking capture of 2 MiB, not htad's
        for rel, data in mine.items():
            os.makedirs(os.path.join(store, os.path.dirname(rel)), exist_ok=True)
            with open(os.path.join(store, rel), "wb") as f:
                f.write(data)
        d = ht.Daemon("--keep-captures", "1", "--keep-mb", "1", store=store)
        other = ht.Daemon("--keep-captures", "1", store=store)  # a second htad sharing the store
        c = ht.FakeKineto(d.ipc).start()
        oc = ht.FakeKineto(other.ipc).start()
        try:
            a, b = self.capture(d, c), self.capture(d, c)
            # nothing was fetched: both kept, whatever the limits
            self.assertTrue(os.path.isdir(os.path.join(store, a)) and os.path.isdir(os.path.join(store, b)))
            self.assertEqual(self.states(d, a), [("stored", "")])
            theirs = self.capture(other, oc)
            self.fetch(other, theirs)
            self.assertNotEqual(theirs.split("-")[2], a.split("-")[2])  # two htads never make one id
            self.fetch(d, a)
            self.fetch(d, b)
            cc = self.capture(d, c)  # the third: a and b fetched, one of them kept
            self.assertFalse(os.path.exists(os.path.join(store, a)), d.logtext())
            self.assertEqual(self.states(d, a), [("removed", "removed by retention after it was fetched "
                                                             "(--keep-captures 1, --keep-mb 1)")])
            self.assertIn(f"retention: capture {a} removed", d.logtext())
            for cid in (b, cc, theirs):
                self.assertTrue(os.path.isdir(os.path.join(store, cid)), cid)
            self.assertEqual(self.states(d, b), [("stored", "")])
            # the other htad's retention leaves d's captures alone, as d leaves its
            self.capture(other, oc)
            for cid in (b, cc):
                self.assertTrue(os.path.isdir(os.path.join(store, cid)), (cid, other.logtext()))
            # the store's own files, untouched
            for rel, data in mine.items():
                with open(os.path.join(store, rel), "rb") as f:
                    self.assertEqual(f.read(), data, rel)
            # a file someone put into a capture folder of d's stays (the folder with it)
            with open(os.path.join(store, b, "mine.txt"), "w") as f:
                f.write("keep")
            self.fetch(d, cc)
            self.capture(d, c)
            self.assertEqual(sorted(os.listdir(os.path.join(store, b))), ["mine.txt"], d.logtext())
        finally:
            c.stop()
            oc.stop()
            self.assertEqual(d.stop(), 0)
            self.assertEqual(other.stop(), 0)
        shutil.rmtree(d.tmp, ignore_errors=True)
        shutil.rmtree(other.tmp, ignore_errors=True)

    def test_a_folder_htad_did_not_make_is_not_written_into(self):
        """A capture id whose folder exists without this htad's marker (another htad's, or a person's) is
        not written into: the trace fails with the reason."""
        d = ht.Daemon()
        c = ht.FakeKineto(d.ipc).start()
        try:
            r = d.rpc({"fn": "htaCapture", "pids": [c.pid], "duration_ms": 50, "start_time_ms": 1})
            os.makedirs(os.path.join(d.store, r["capture"]))  # there before htad stores the trace
            self.assertTrue(ht.wait_for(lambda: self.states(d, r["capture"])[0][0] == "failed", 10))
            self.assertIn("a folder this htad (testhost:%d) did not make" % d.port, self.states(d, r["capture"])[0][1])
            self.assertEqual(os.listdir(os.path.join(d.store, r["capture"])), [])
        finally:
            c.stop()
            self.assertEqual(d.stop(), 0)
        shutil.rmtree(d.tmp, ignore_errors=True)


if __name__ == "__main__":
    unittest.main()
