"""Shared pieces of htad's tests: free ports, an htad started in a temporary folder (IPC in filesystem
mode there, so that tests running at once never share dynolog's abstract socket), dynolog's TCP
framing, and a fake libkineto client in Python that polls as libkineto does and, when it receives a
config, writes the trace file where libkineto would (tmp, then rename)."""
import json
import os
import signal
import sys
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


def ancestors(pid=None):
    """libkineto's pid list: the process, then up to 10 ancestors, stopping before pid 1."""
    pid = pid or os.getpid()
    out = [pid]
    while len(out) < 11:
        with open(f"/proc/{out[-1]}/stat") as f:
            ppid = int(f.read().rsplit(")", 1)[1].split()[1])
        if ppid <= 1:
            break
        out.append(ppid)
    return out


def _client_main(ipc_dir, job_id):
    """The stand-in libkineto process (FakeKineto runs it): commands as JSON lines on stdin, replies and
    events as JSON lines on stdout.  A process of its own, so that the kernel names it to htad."""
    import sys as _sys
    out_lock = threading.Lock()

    def say(obj):
        with out_lock:
            _sys.stdout.write(json.dumps(obj) + "\n")
            _sys.stdout.flush()

    name = os.path.join(ipc_dir, "dynoconfigclient" + str(uuid.uuid4()))
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    sock.bind(name)
    pids = ancestors()
    state = {"claim": pids}
    daemon = os.path.join(ipc_dir, "dynolog")

    def poll(typ, timeout):
        claim = state["claim"]
        body = struct.pack("<iiq", typ, len(claim), job_id) + struct.pack("<%di" % len(claim), *claim)
        sock.sendto(struct.pack("<Q32s", len(body), b"req") + body, daemon)
        sock.settimeout(timeout)
        data = sock.recv(1 << 20)
        size, typ_ = struct.unpack_from("<Q32s", data)
        assert typ_.rstrip(b"\0") == b"req" and size == len(data) - 40, (typ_, size)
        return data[40:].decode()

    def write_trace(cfg):
        path = None
        for line in cfg.splitlines():
            if line.strip().startswith("ACTIVITIES_LOG_FILE="):
                path = line.split("=", 1)[1].strip()
        if not path:
            return
        pid = pids[0]
        if ".pt.trace.json" in path:
            path = path.replace(".pt.trace.json", f"_{pid}.pt.trace.json", 1)
        elif ".json" in path:
            path = path.replace(".json", f"_{pid}.json", 1)
        with open(path + ".tmp", "w") as f:
            f.write(small_trace(pid))
        os.rename(path + ".tmp", path)
        say({"event": "written", "path": path})

    def run(interval, write, delay, busy):
        first = True
        while True:
            try:
                cfg = poll(0 if busy else 2, 1.0)
            except OSError:
                cfg = None
            if first and cfg is not None:
                say({"event": "registered"})
                first = False
            if cfg:
                say({"event": "config", "cfg": cfg})
                if write:
                    threading.Timer(delay, write_trace, [cfg]).start()
            time.sleep(interval)

    say({"pids": pids})
    for line in _sys.stdin:
        cmd = json.loads(line)
        op = cmd["op"]
        try:
            if op == "poll":
                say({"cfg": poll(cmd.get("type", 2), cmd.get("timeout", 1.0))})
            elif op == "timed_polls":  # n polls, each timed here (no pipe in the figure), in ms
                lat = []
                for _ in range(cmd["n"]):
                    t = time.perf_counter()
                    poll(2, 1.0)
                    lat.append((time.perf_counter() - t) * 1000)
                say({"lat": lat})
            elif op == "claim":
                state["claim"] = cmd["pids"]
                say({"ok": 1})
            elif op == "raw":
                sock.sendto(bytes.fromhex(cmd["hex"]), daemon)
                say({"ok": 1})
            elif op == "flood":  # n polls, each claiming invented pids
                import random
                rnd = random.Random(cmd.get("seed", 1))
                for _ in range(cmd["n"]):
                    fake = [rnd.randrange(2, 1 << 22) for _ in range(3)]
                    body = struct.pack("<iiq", 2, 3, job_id) + struct.pack("<3i", *fake)
                    try:
                        sock.sendto(struct.pack("<Q32s", len(body), b"req") + body, daemon)
                    except OSError:  # the daemon's queue is full: it drops, the flood goes on
                        time.sleep(0.001)
                say({"ok": 1})
            elif op == "recv":
                sock.settimeout(cmd.get("timeout", 1.0))
                say({"hex": sock.recv(1 << 20).hex()})
            elif op == "run":
                threading.Thread(target=run, args=(cmd["interval"], cmd["write"], cmd["delay"], cmd["busy"]),
                                 daemon=True).start()
        except OSError as e:
            say({"error": str(e)})
    sock.close()
    os.unlink(name)


class FakeKineto:
    """A Python stand-in for libkineto, in a process of its own (htad believes only what the kernel says
    of a datagram's sender): polls the daemon every `interval` s with its real pid and ancestors', and on
    a config writes the trace (unless write=False) after `delay` s.  `pid` is its pid, `pids` its list."""

    def __init__(self, ipc_dir, job_id=0, interval=0.1, write=True, delay=0.1, busy=False):
        import queue
        self.ipc_dir, self.job_id = ipc_dir, job_id
        self.interval, self.write, self.delay, self.busy = interval, write, delay, busy
        self.configs, self.written = [], []
        self.registered = threading.Event()
        self.replies = queue.Queue()
        self.proc = subprocess.Popen([sys.executable, os.path.abspath(__file__), "client", ipc_dir, str(job_id)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pid = self.proc.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        self.pids = self._reply()["pids"]

    def _read(self):
        for line in self.proc.stdout:
            msg = json.loads(line)
            ev = msg.get("event")
            if ev == "config":
                self.configs.append(msg["cfg"])
            elif ev == "written":
                self.written.append(msg["path"])
            elif ev == "registered":
                self.registered.set()
            else:
                self.replies.put(msg)

    def _reply(self, timeout=10):
        return self.replies.get(timeout=timeout)

    def _cmd(self, **cmd):
        self.proc.stdin.write(json.dumps(cmd) + "\n")
        self.proc.stdin.flush()
        return self._reply()

    def poll(self, typ=2, timeout=1.0):
        r = self._cmd(op="poll", type=typ, timeout=timeout)
        if "error" in r:
            raise OSError(r["error"])
        return r["cfg"]

    def timed_polls(self, n):
        """n polls timed inside the client process: the daemon's answer time, in ms each."""
        return self._cmd(op="timed_polls", n=n)["lat"]

    def claim(self, pids):
        """From now on, polls claim these pids (a forgery: htad must not believe it)."""
        self._cmd(op="claim", pids=list(pids))

    def send_raw(self, data):
        self._cmd(op="raw", hex=data.hex())

    def flood(self, n):
        """n datagrams, each a poll claiming invented pids."""
        self._cmd(op="flood", n=n)

    def recv(self, timeout=1.0):
        r = self._cmd(op="recv", timeout=timeout)
        if "error" in r:
            raise OSError(r["error"])
        return bytes.fromhex(r["hex"])

    def start(self):
        """Polls from now on, every interval; returns once the daemon has answered the first poll."""
        self.proc.stdin.write(json.dumps({"op": "run", "interval": self.interval, "write": self.write,
                                          "delay": self.delay, "busy": self.busy}) + "\n")
        self.proc.stdin.flush()
        assert self.registered.wait(10), "the stand-in client got no answer from htad"
        return self

    def stop(self):
        """Ends the process (its socket file goes with it)."""
        try:
            self.proc.stdin.close()
            self.proc.wait(5)
        except (OSError, subprocess.TimeoutExpired):
            self.proc.kill()
            self.proc.wait()
        self.reader.join(5)
        self.proc.stdout.close()


def wait_for(cond, timeout=15, step=0.05):
    deadline = time.time() + timeout
    while time.time() < deadline:
        v = cond()
        if v:
            return v
        time.sleep(step)
    return cond()


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "client":
    _client_main(sys.argv[2], int(sys.argv[3]))
