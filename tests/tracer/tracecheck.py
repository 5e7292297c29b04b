"""Shared checks of htatrace output files (stdlib only)."""
import json


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
