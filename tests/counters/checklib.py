"""What the check scripts beside it share: hta's tables as JSON, and a trace file read whole."""
import gzip
import json
import subprocess


def hta_json(hta, *args):
    """The tables of `hta ARGS --format json --quiet`, which must succeed."""
    p = subprocess.run([hta, *args, "--format", "json", "--quiet"], capture_output=True, text=True)
    assert p.returncode == 0, (args, p.stderr)
    return json.loads(p.stdout)


def load_trace(path):
    """(the trace's JSON, whether the file is gzip)."""
    with open(path, "rb") as f:
        gz = f.read(2) == b"\x1f\x8b"
    with (gzip.open if gz else open)(path, "rt") as f:
        return json.load(f), gz
