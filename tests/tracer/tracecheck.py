"""Shared checks of htatrace output files, and how the tests run things (stdlib only)."""
import json
import os
import subprocess

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("BUILD", "build")
BUILD_DIR = BUILD if os.path.isabs(BUILD) else os.path.join(ROOT, BUILD)
LIB = os.path.join(BUILD_DIR, "libhtatrace.so")
TEST_TRACER = os.path.join(BUILD_DIR, "test-tracer")
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))


def load(path):
    with open(path, encoding="utf-8") as f:
        return json.load(f)


def events(doc, ph=None, name=None, cat=None):
    out = []
    for e in doc["traceEvents"]:
        if ph is not None and e.get("ph") != ph:
            continue
        if name is not None and e.get("name") != name:
            continue
        if cat is not None and e.get("cat") != cat:
            continue
        out.append(e)
    return out


def ns(us):
    """Exact ns from a microsecond value written with 3 decimals."""
    return round(us * 1000)


def check_format(tc, doc):
    """Structure every file must have."""
    tc.assertIn("traceEvents", doc)
    tc.assertIn("distributedInfo", doc)
    di = doc["distributedInfo"]
    tc.assertIsInstance(di["rank"], int)
    tc.assertIsInstance(di["world_size"], int)
    anchor = doc["htaClockAnchor"]
    tc.assertGreater(anchor["unix_ns"], 1_500_000_000 * 10**9)
    tc.assertGreater(anchor["monotonic_ns"], 0)
    for e in doc["traceEvents"]:
        tc.assertIn(e["ph"], ("X", "i", "M"))
        tc.assertIsInstance(e["pid"], int)
        tc.assertIsInstance(e["tid"], int)
        if e["ph"] == "X":
            tc.assertIn(e["cat"], ("user_annotation", "gpu_user_annotation"))
            tc.assertGreaterEqual(e["dur"], 0)
            tc.assertIsInstance(e["args"], dict)
        if e["ph"] == "i":
            tc.assertEqual(e["s"], "t")


def check_nesting(tc, doc):
    """On each CPU thread, complete events nest properly (no partial overlap)
    and appear in begin order (a parent before its children)."""
    by_tid = {}
    for e in events(doc, ph="X", cat="user_annotation"):
        by_tid.setdefault(e["tid"], []).append(e)
    for tid, evs in by_tid.items():
        starts = [ns(e["ts"]) for e in evs]
        tc.assertEqual(starts, sorted(starts), "events not in begin order on tid %d" % tid)
        stack = []
        for e in evs:
            b, end = ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])
            while stack and stack[-1] <= b:
                stack.pop()
            if stack:
                tc.assertLessEqual(end, stack[-1], "partial overlap on tid %d: %r" % (tid, e))
            stack.append(end)


def thread_names(doc):
    return {e["tid"]: e["args"]["name"] for e in events(doc, ph="M", name="thread_name")
            if e["pid"] == doc["htaTracer"]["pid"]}


def contains(outer, inner):
    return ns(outer["ts"]) <= ns(inner["ts"]) and \
        ns(inner["ts"]) + ns(inner["dur"]) <= ns(outer["ts"]) + ns(outer["dur"])


# ---- running things ----

# Variables a launcher (or a CI job under Slurm) may have set: every test starts without them.
LAUNCH_VARS = ("RANK", "WORLD_SIZE", "LOCAL_RANK", "OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE",
               "OMPI_COMM_WORLD_LOCAL_RANK", "PMI_RANK", "PMI_SIZE", "MPI_LOCALRANKID", "SLURM_PROCID",
               "SLURM_NTASKS", "SLURM_LOCALID")


def clean_env(**env):
    """os.environ without launcher and HTA_TRACE* variables, plus env."""
    e = {k: v for k, v in os.environ.items() if k not in LAUNCH_VARS and not k.startswith("HTA_TRACE")}
    e.update(env)
    return e


def hta_cpu_ops(tc, path):
    """`hta cpu-ops PATH` must load the file(s): its cpu_op_time rows."""
    p = subprocess.run([HTA, "cpu-ops", path, "--format", "json"], capture_output=True, text=True, timeout=120)
    tc.assertEqual(p.returncode, 0, "hta cpu-ops %s: %s" % (path, p.stderr))
    t = json.loads(p.stdout)["cpu_op_time"]
    return [dict(zip(t["columns"], r)) for r in t["data"]]
