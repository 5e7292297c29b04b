"""Shared pieces of htad's tests: free ports, an htad started in a temporary folder (IPC in filesystem
mode there, so that tests running at once never share dynolog's abstract socket), dynolog's TCP
framing, and a fake libkineto client in Python that polls as libkineto does and, when it receives a
config, writes the trace file where libkineto would (tmp, then rename)."""
import json
import os
import signal
import socket
import struct
import subprocess
import tempfile
import threading
import time
import uuid

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
BUILD = os.environ.get("BUILD", "build")
BUILD = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
HTAD = os.path.join(BUILD, "htad")
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
FAKE_NVML = os.path.join(BUILD, "libfakenvml.so")
FAKE_DCGM = os.path.join(BUILD, "libfakedcgm.so")


def free_port():
    """A TCP port free now on 127.0.0.1 (chosen by the kernel, never a fixed number)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def rpc_raw(port, payload, timeout=10):
    """Sends one framed message (bytes) and returns the reply's bytes (None when the daemon closed)."""
    with socket.create_connection(("127.0.0.1", port), timeout=timeout) as s:
        s.sendall(payload)
        head = recv_n(s, 4)
        if head is None:
            return None
        (n,) = struct.unpack("=i", head)
        return recv_n(s, n)


def recv_n(s, n):
    b = b""
    while len(b) < n:
        x = s.recv(n - len(b))
        if not x:
            return None if not b else b
        b += x
    return b


def frame(text):
    data = text.encode() if isinstance(text, str) else text
    return struct.pack("=i", len(data)) + data


def rpc(port, obj):
    """One JSON request; the parsed reply."""
    r = rpc_raw(port, frame(json.dumps(obj)))
    return json.loads(r) if r is not None else None


def rpc_fetch(port, obj):
    """A request whose reply header is followed by a payload: (header, bytes)."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
        s.sendall(frame(json.dumps(obj)))
        (n,) = struct.unpack("=i", recv_n(s, 4))
        head = json.loads(recv_n(s, n))
        if head.get("status") != "ok":
            return head, None
        return head, recv_n(s, head["size"]) if head["size"] else b""


class Daemon:
    """htad in a temporary folder: store, trace folder and IPC folder inside it; stop() sends SIGTERM
    and returns the exit status."""

    def __init__(self, *extra, env=None, store=None, nvml=True, tmp=None):
        self.tmp = tmp or tempfile.mkdtemp(prefix="htadtest-")
        self.ipc = os.path.join(self.tmp, "ipc")
        os.makedirs(self.ipc, exist_ok=True)
        self.traces = os.path.join(self.tmp, "traces")
        self.store = store or os.path.join(self.tmp, "store")
        self.port, self.http = free_port(), free_port()
        self.addr = extra[extra.index("--listen") + 1] if "--listen" in extra else "127.0.0.1"
        args = [HTAD, "--port", str(self.port), "--http-port", str(self.http), "--store", self.store,
                "--trace-dir", self.traces, "--ipc-dir", self.ipc, "--host", "testhost"]
        if nvml:
            args += ["--nvml-lib", FAKE_NVML, "--dcgm-lib", FAKE_DCGM]
        self.log = open(os.path.join(self.tmp, "htad.log"), "w+")
        e = dict(os.environ)
        e.update(env or {})
        self.proc = subprocess.Popen(args + list(extra), stdout=self.log, stderr=subprocess.STDOUT, env=e)
        deadline = time.time() + 20
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise AssertionError("htad exited %d: %s" % (self.proc.returncode, self.logtext()))
            try:
                socket.create_connection((self.addr, self.port), timeout=1).close()
                if os.path.exists(os.path.join(self.ipc, "dynolog")):
                    return
            except OSError:
                pass
            time.sleep(0.05)
        raise AssertionError("htad did not start: " + self.logtext())

    def logtext(self):
        if self.log.closed:
            return self.final_log
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def rpc(self, obj):
        return rpc(self.port, obj)

    def metrics_text(self):
        with socket.create_connection((self.addr, self.http), timeout=10) as s:
            s.sendall(b"GET /metrics HTTP/1.0\r\n\r\n")
            data = b""
            while True:
                x = s.recv(65536)
                if not x:
                    break
                data += x
        head, _, body = data.partition(b"\r\n\r\n")
        return head.decode(), body.decode()

    def counter(self, name):
        for line in self.metrics_text()[1].splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return None

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        if not self.log.closed:
            self.final_log = self.logtext()
            self.log.close()
        return self.proc.returncode


def small_trace(pid, steps=3):
    """A small valid Kineto-like trace: steps of 10 ms with an operator inside each."""
    ev = []
    for i in range(steps):
        t0 = 1_000_000 + i * 10_000
        ev.append({"ph": "X", "cat": "cpu_op", "name": f"ProfilerStep#{i}", "pid": pid, "tid": pid, "ts": t0,
                   "dur": 9000})
        ev.append({"ph": "X", "cat": "cpu_op", "name": "aten::mm", "pid": pid, "tid": pid, "ts": t0 + 100,
                   "dur": 6000})
    return json.dumps({"schemaVersion": 1, "traceEvents": ev})


class FakeKineto:
    """A Python stand-in for libkineto: polls the daemon every `interval` s with `pids` (its own first),
    and on a config writes the trace (unless write=False) after `delay` s."""

    def __init__(self, ipc_dir, pids, job_id=0, interval=0.1, write=True, delay=0.1, busy=False):
        self.ipc_dir, self.pids, self.job_id = ipc_dir, list(pids), job_id
        self.interval, self.write, self.delay, self.busy = interval, write, delay, busy
        self.name = os.path.join(ipc_dir, "dynoconfigclient" + str(uuid.uuid4()))
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.name)
        self.configs, self.written = [], []
        self._stop = threading.Event()
        self.thread = None

    def poll(self, typ=2, timeout=1.0):
        body = struct.pack("<iiq", typ, len(self.pids), self.job_id) + struct.pack("<%di" % len(self.pids),
                                                                                     *self.pids)
        msg = struct.pack("<Q32s", len(body), b"req") + body
        self.sock.sendto(msg, os.path.join(self.ipc_dir, "dynolog"))
        self.sock.settimeout(timeout)
        data = self.sock.recv(65536)
        size, typ_ = struct.unpack_from("<Q32s", data)
        assert typ_.rstrip(b"\0") == b"req", typ_
        assert size == len(data) - 40
        return data[40:].decode()

    def send_raw(self, data):
        self.sock.sendto(data, os.path.join(self.ipc_dir, "dynolog"))

    def _run(self):
        while not self._stop.is_set():
            try:
                cfg = self.poll(0 if self.busy else 2)
            except OSError:
                cfg = ""
            if cfg:
                self.configs.append(cfg)
                if self.write:
                    threading.Timer(self.delay, self._write, [cfg]).start()
            self._stop.wait(self.interval)

    def _write(self, cfg):
        path = None
        for line in cfg.splitlines():
            if line.strip().startswith("ACTIVITIES_LOG_FILE="):
                path = line.split("=", 1)[1].strip()
        if not path:
            return
        pid = self.pids[0]
        if ".pt.trace.json" in path:
            path = path.replace(".pt.trace.json", f"_{pid}.pt.trace.json", 1)
        elif ".json" in path:
            path = path.replace(".json", f"_{pid}.json", 1)
        with open(path + ".tmp", "w") as f:
            f.write(small_trace(pid))
        os.rename(path + ".tmp", path)
        self.written.append(path)

    def start(self):
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        return self

    def stop(self):
        self._stop.set()
        if self.thread:
            self.thread.join(5)
        self.sock.close()
        try:
            os.unlink(self.name)
        except OSError:
            pass


def wait_for(cond, timeout=15, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()
