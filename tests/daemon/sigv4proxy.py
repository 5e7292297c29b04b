"""AWS Signature Version 4, checked: s3rver (the tests' S3 server) does not verify SigV4 signatures, so the
S3 tests put this proxy in front of it.  It recomputes every request's signature from AWS's documented
algorithm (sign(), itself checked against AWS's published example in test_s3.SigV4.test_aws_example),
checks the payload's SHA-256, answers 403 SignatureDoesNotMatch as S3 does on a mismatch, and forwards
good requests to s3rver."""
import hashlib
import hmac
import http.client
import http.server
import re
import threading


def sign(method, path, query, headers, payload_hash, secret, region, amz_date):
    """The signature (hex) of a request whose signed headers are `headers` (name -> value)."""
    names = sorted(h.lower() for h in headers)
    hl = {k.lower(): " ".join(str(v).split()) for k, v in headers.items()}
    canon = "\n".join([method, path, query] + [f"{n}:{hl[n]}" for n in names] + ["", ";".join(names), payload_hash])
    scope = f"{amz_date[:8]}/{region}/s3/aws4_request"
    sts = "\n".join(["AWS4-HMAC-SHA256", amz_date, scope, hashlib.sha256(canon.encode()).hexdigest()])
    k = ("AWS4" + secret).encode()
    for part in (amz_date[:8], region, "s3", "aws4_request"):
        k = hmac.new(k, part.encode(), hashlib.sha256).digest()
    return hmac.new(k, sts.encode(), hashlib.sha256).hexdigest()


AUTH = re.compile(r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/s3/aws4_request, "
                  r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})$")


class Proxy:
    def __init__(self, upstream_port, keys):
        self.upstream, self.keys, self.checked, self.refused = upstream_port, keys, 0, 0
        proxy = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def log_message(self, *a):
                pass

            def handle_one(self, method):
                n = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(n) if n else b""
                why = proxy.check(method, self.path, self.headers, body)
                if why:
                    proxy.refused += 1
                    msg = (f"<?xml version=\"1.0\"?><Error><Code>SignatureDoesNotMatch</Code><Message>{why}"
                           "</Message></Error>").encode()
                    self.send_response(403)
                    self.send_header("Content-Length", str(len(msg)))
                    self.end_headers()
                    self.wfile.write(msg)
                    return
                proxy.checked += 1
                c = http.client.HTTPConnection("127.0.0.1", proxy.upstream, timeout=30)
                hdrs = {k: v for k, v in self.headers.items() if k.lower() not in ("host", "connection")}
                c.request(method, self.path, body=body, headers=hdrs)
                r = c.getresponse()
                data = r.read()
                self.send_response(r.status)
                for k, v in r.getheaders():
                    if k.lower() not in ("transfer-encoding", "connection", "content-length"):
                        self.send_header(k, v)
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)
                c.close()

            def do_PUT(self):
                self.handle_one("PUT")

            def do_GET(self):
                self.handle_one("GET")

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def check(self, method, path, headers, body):
        m = AUTH.match(headers.get("Authorization", ""))
        if not m:
            return "no SigV4 Authorization header"
        key, day, region, signed, sig = m.groups()
        if key not in self.keys:
            return "unknown access key"
        ph = headers.get("x-amz-content-sha256", "")
        if ph != hashlib.sha256(body).hexdigest():
            return "x-amz-content-sha256 is not the payload's hash"
        amz_date = headers.get("x-amz-date", "")
        if amz_date[:8] != day:
            return "the credential's day is not x-amz-date's"
        p, _, q = path.partition("?")
        want = sign(method, p, q, {h: headers.get(h, "") for h in signed.split(";")}, ph, self.keys[key], region,
                    amz_date)
        return None if hmac.compare_digest(want, sig) else "signature mismatch"

    def close(self):
        self.server.shutdown()
        self.server.server_close()
