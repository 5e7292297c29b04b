"""htad's S3 store against a local S3-compatible server (npm's s3rver, installed into tests/daemon/
node_modules by `npm ci` there; `make test` does it where npm is there), behind a proxy that checks every request's AWS SigV4
signature (sigv4proxy.py; s3rver does not):
traces and the capture's metrics are PUT as objects under s3://BUCKET/PREFIX/ID/, `hta capture` fetches
them back through htad byte for byte; with a wrong secret the store refuses, and the trace is reported
failed with S3's reason."""
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import htadtest as ht  # noqa: E402
import sigv4proxy  # noqa: E402

S3RVER = os.path.join(ht.HERE, "node_modules", "s3rver", "bin", "s3rver.js")


class S3(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        if not os.path.exists(S3RVER) or not shutil.which("node"):
            raise AssertionError("s3rver is not installed: `make test` runs `npm ci` in tests/daemon where npm is "
                                 "there (node and npm needed)")
        cls.tmp = tempfile.mkdtemp(prefix="s3test-")
        cls.port = ht.free_port()
        cls.log = open(os.path.join(cls.tmp, "s3rver.log"), "w")
        cls.s3 = subprocess.Popen(["node", S3RVER, "-d", os.path.join(cls.tmp, "data"), "-a", "127.0.0.1", "-p",
                                   str(cls.port), "--configure-bucket", "traces"], stdout=cls.log,
                                  stderr=subprocess.STDOUT)
        ok = ht.wait_for(lambda: cls._up(), 30)
        if not ok:
            raise AssertionError("s3rver did not start")
        cls.proxy = sigv4proxy.Proxy(cls.port, {"S3RVER": "S3RVER"})

    @classmethod
    def _up(cls):
        try:
            socket.create_connection(("127.0.0.1", cls.port), timeout=1).close()
            return True
        except OSError:
            return False

    @classmethod
    def tearDownClass(cls):
        cls.proxy.close()
        cls.s3.terminate()
        cls.s3.wait(10)
        cls.log.close()
        shutil.rmtree(cls.tmp, ignore_errors=True)

    def run_capture(self, secret):
        env = {"AWS_ACCESS_KEY_ID": "S3RVER", "AWS_SECRET_ACCESS_KEY": secret}
        d = ht.Daemon("--s3-endpoint", f"http://127.0.0.1:{self.proxy.port}", store="s3://traces/prod/htad", env=env)
        c = ht.FakeKineto(d.ipc).start()
        self.pid = c.pid
        try:
            out = os.path.join(d.tmp, "out")
            p = subprocess.run([ht.HTA, "capture", f"localhost:{d.port}", "-o", out, "--start-delay-ms", "0",
                                "--duration-ms", "100", "--timeout-ms", "15000"], capture_output=True, text=True,
                               timeout=60)
            time.sleep(0.3)
        finally:
            c.stop()
            self.assertEqual(d.stop(), 0, d.logtext())
        return p, out, d

    def test_put_and_fetch(self):
        checked = self.proxy.checked
        p, out, d = self.run_capture("S3RVER")
        self.assertEqual(p.returncode, 0, p.stderr + d.logtext())
        self.assertEqual(self.proxy.checked - checked, 3)  # PUT trace, PUT metrics, GET trace: all signed right
        with open(os.path.join(out, f"localhost-{d.port}_{self.pid}.json")) as f:
            self.assertEqual(f.read(), ht.small_trace(self.pid))
        # the objects, as s3rver keeps them on disk: BUCKET/PREFIX/ID/NAME
        objs = sorted(os.path.relpath(os.path.join(r, n), os.path.join(self.tmp, "data"))
                      for r, _, fs in os.walk(os.path.join(self.tmp, "data")) for n in fs
                      if n.endswith("._S3rver_object"))
        ids = {o.split("/")[3] for o in objs}
        self.assertEqual(len(ids), 1)
        cid = ids.pop()
        self.assertIn(f"traces/prod/htad/{cid}/testhost_{self.pid}.json._S3rver_object", objs)
        self.assertIn(f"traces/prod/htad/{cid}/testhost.metrics.jsonl._S3rver_object", objs)
        shutil.rmtree(d.tmp, ignore_errors=True)

    def test_wrong_secret(self):
        p, out, d = self.run_capture("not-the-secret")
        self.assertEqual(p.returncode, 1)
        self.assertIn(f"no trace from localhost pid {self.pid} (failed: S3 PUT", p.stderr)
        self.assertIn("HTTP 403", p.stderr)
        self.assertIn("SignatureDoesNotMatch", p.stderr)
        shutil.rmtree(d.tmp, ignore_errors=True)


class SigV4(unittest.TestCase):
    def test_aws_example(self):
        """The checker's algorithm gives AWS's published signature for its GET Object example
        (docs.aws.amazon.com, "Signature Calculations for the Authorization Header: Transferring Payload in
        a Single Chunk")."""
        empty = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"
        sig = sigv4proxy.sign("GET", "/test.txt", "", {"host": "examplebucket.s3.amazonaws.com",
                              "range": "bytes=0-9", "x-amz-content-sha256": empty,
                              "x-amz-date": "20130524T000000Z"}, empty,
                              "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "us-east-1", "20130524T000000Z")
        self.assertEqual(sig, "f0e8bdb87c964420e857bd35b5d6ed310bd44f0170aba48dd91039c6036bdb41")


if __name__ == "__main__":
    unittest.main()
