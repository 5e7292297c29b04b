"""Shared pieces of htad's tests: free ports, an htad started in a temporary folder (IPC in filesystem
mode there, so that tests running at once never share dynolog's abstract socket), dynolog's TCP
framing, and a fake libkineto client in Python that polls as libkineto does and, when it receives a
config, writes the trace file where libkineto would (tmp, then rename)."""
import json
import os
import shutil
import signal
import sys
import socket
import struct
import subprocess
import tempfile
import threading
import time
import unittest
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


def http_get(host, port, token=None, timeout=10):
    """GET /metrics (with the bearer token when given): (head, body) as text."""
    with socket.create_connection((host, port), timeout=timeout) as s:
        auth = f"Authorization: Bearer {token}\r\n" if token else ""
        s.sendall(f"GET /metrics HTTP/1.0\r\n{auth}\r\n".encode())
        data = b""
        while True:
            x = s.recv(65536)
            if not x:
                break
            data += x
    head, _, body = data.partition(b"\r\n\r\n")
    return head.decode(), body.decode()


def in_netns(test, script, tmp, timeout=120):
    """Runs python code (script % HERE, argv[1] = tmp) in a user and network namespace of the test's own
    (unshare -rn: addresses other than loopback, no network touched); its stdout's JSON lines."""
    if not shutil.which("unshare") or subprocess.run(["unshare", "-rn", "true"]).returncode:
        test.fail("unshare -rn (a user and network namespace) is needed for this test")
    p = subprocess.run(["unshare", "-rn", sys.executable, "-c", script % HERE, tmp], capture_output=True,
                       text=True, timeout=timeout)
    test.assertEqual(p.returncode, 0, p.stdout + p.stderr)
    return [json.loads(x) for x in p.stdout.splitlines()]


def netns_daemon(tmp, addrs):
    """Inside in_netns: loopback up with addrs added, and an htad on 0.0.0.0 with the token
    TOKEN (its file in tmp)."""
    subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
    for a in addrs:
        subprocess.run(["ip", "addr", "add", a + "/32", "dev", "lo"], check=True)
    tok = os.path.join(tmp, "token")
    with open(tok, "w") as f:
        f.write(TOKEN + "\n")
    os.chmod(tok, 0o600)
    return Daemon("--listen", "0.0.0.0", "--token-file", tok, tmp=tmp)


TOKEN = "s3cret-token-0123456789"
KINETO_SRC = os.path.join(os.path.dirname(ROOT), "shared", "third_party", "kineto")
KINETO_CLIENT = os.path.join(ROOT, "build-kineto", "kineto_client")


def kineto_env(d):
    """The environment of a real libkineto client of daemon d (tests/daemon/kineto_client.cpp): the daemon
    loader on, d's IPC folder and trace folder, a poll every second (libkineto's default is 5 s)."""
    conf = os.path.join(d.tmp, "kineto.conf")
    with open(conf, "w") as f:
        f.write("ON_DEMAND_CONFIG_UPDATE_INTERVAL_SECS=1\n")
    env = dict(os.environ, KINETO_USE_DAEMON="1", KINETO_IPC_SOCKET_DIR=d.ipc, KINETO_CONFIG=conf,
               KINETO_ONDEMAND_TRACE_DIR=d.traces)
    env.pop("LD_PRELOAD", None)
    return env


@unittest.skipUnless(os.path.isdir(KINETO_SRC), "libkineto's source (../shared/third_party/kineto) is absent")
class KinetoCase(unittest.TestCase):
    """Tests with real libkineto clients (build-kineto/kineto_client) of an htad started for each test;
    DAEMON_ARGS are its options.  start() runs a client, stopped (and the daemon) after the test."""
    DAEMON_ARGS = ("--gc-s", "2", "--interval-ms", "200")

    def setUp(self):
        self.assertTrue(os.path.exists(KINETO_CLIENT), "build-kineto/kineto_client: run make first")
        self.d = Daemon(*self.DAEMON_ARGS)
        self.env = kineto_env(self.d)
        self.procs, self.fakes = [], []

    def tearDown(self):
        for f in self.fakes:
            f.stop()
        for p in self.procs:
            if p.poll() is None:
                p.kill()
            p.wait()
            p.stdout.close()
        self.assertEqual(self.d.stop(), 0, self.d.logtext())
        shutil.rmtree(self.d.tmp, ignore_errors=True)

    def start(self, *args):
        p = subprocess.Popen([KINETO_CLIENT, *args], env=self.env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True)
        self.procs.append(p)
        return p

    def wait_registered(self, n):
        self.assertTrue(wait_for(lambda: self.d.counter("htad_processes") == n, 20), self.d.logtext())


class FakeCase(unittest.TestCase):
    """Tests with fake clients (FakeKineto) of an htad started for each test; DAEMON_ARGS are its options.
    fake() makes a client, stopped (and the daemon) after the test."""
    DAEMON_ARGS = ()

    def setUp(self):
        self.d = Daemon(*self.DAEMON_ARGS)
        self.fakes = []

    def tearDown(self):
        for f in self.fakes:
            f.stop()
        self.assertEqual(self.d.stop(), 0, self.d.logtext())
        shutil.rmtree(self.d.tmp, ignore_errors=True)

    def fake(self, *args, **kw):
        f = FakeKineto(self.d.ipc, *args, **kw)
        self.fakes.append(f)
        return f


class LoopbackServer:
    """A TCP server on 127.0.0.1 (a free port) that hands each connection to serve(conn) on a thread of
    its own; close() ends it and every connection."""

    def __init__(self):
        self.stop_ev, self.conns = threading.Event(), []
        self.srv = socket.socket()
        self.srv.bind(("127.0.0.1", 0))
        self.srv.listen(64)
        self.srv.settimeout(0.2)
        self.port = self.srv.getsockname()[1]
        threading.Thread(target=self._run, daemon=True).start()

    def _run(self):
        while not self.stop_ev.is_set():
            try:
                c, _ = self.srv.accept()
            except OSError:
                continue
            self.conns.append(c)
            threading.Thread(target=self.serve, args=(c,), daemon=True).start()

    def serve(self, conn):
        raise NotImplementedError

    def close(self):
        self.stop_ev.set()
        self.srv.close()
        for c in self.conns:
            c.close()


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
        return http_get(self.addr, self.http)

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

    kpid = os.getpid()  # its pid where /proc was mounted (the test's namespace): NSpid's first
    try:
        with open("/proc/self/status") as f:
            kpid = int([x for x in f if x.startswith("NSpid:")][0].split()[1])
    except (OSError, IndexError, ValueError):
        pass
    say({"pids": pids, "kpid": kpid})
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
    a config writes the trace (unless write=False) after `delay` s.  `pid` is its pid, `pids` its list.
    prefix: a command it runs under (`unshare --user --map-root-user --pid --fork`: a pid namespace of its
    own); `kpid` is then its pid in the test's (and htad's) namespace, `pids` the ones it has in its own."""

    def __init__(self, ipc_dir, job_id=0, interval=0.1, write=True, delay=0.1, busy=False, prefix=()):
        import queue
        self.ipc_dir, self.job_id = ipc_dir, job_id
        self.interval, self.write, self.delay, self.busy = interval, write, delay, busy
        self.configs, self.written = [], []
        self.registered = threading.Event()
        self.replies = queue.Queue()
        self.proc = subprocess.Popen([*prefix, sys.executable, os.path.abspath(__file__), "client", ipc_dir,
                                      str(job_id)], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, bufsize=1)
        self.pid = self.proc.pid
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()
        first = self._reply()
        self.pids, self.kpid = first["pids"], first["kpid"]
        if not prefix:
            self.kpid = self.pid

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
