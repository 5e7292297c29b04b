#!/usr/bin/env python3
"""Compares two critical-path overlay traces in meaning: the same events (by
position) carry "critical", the same non-flow events are present, and the same
flow edges (pairs of s/f endpoints with their args) are drawn, whatever the flow
ids (HTA's ids follow Python set order).  usage: overlay_compare.py OURS EXPECTED"""
import gzip
import json
import sys
from collections import Counter


def load(p):
    with open(p, "rb") as f:
        head = f.read(2)
    op = gzip.open if head == b"\x1f\x8b" else open
    with op(p, "rt") as f:
        return json.load(f)


def summary(d):
    ev = d["traceEvents"]
    plain = [e for e in ev if e.get("cat") != "critical_path"]
    crit = sorted(json.dumps(e, sort_keys=True) for e in plain if "critical" in (e.get("args") or {}))
    keys = Counter(json.dumps(e, sort_keys=True) for e in plain)
    flows = {}
    for e in ev:
        if e.get("cat") == "critical_path":
            flows.setdefault(e["id"], {})[e["ph"]] = e
    pairs = Counter()
    for fid, se in flows.items():
        s, f = se.get("s"), se.get("f")
        strip = lambda x: None if x is None else json.dumps({k: v for k, v in x.items() if k != "id"}, sort_keys=True)
        pairs[(strip(s), strip(f))] += 1
    return crit, keys, pairs, {k: v for k, v in d.items() if k != "traceEvents"}


def main():
    a, b = load(sys.argv[1]), load(sys.argv[2])
    ca, ka, pa, ma = summary(a)
    cb, kb, pb, mb = summary(b)
    ok = True
    if ma != mb:
        print("top-level keys differ"); ok = False
    if ca != cb:
        print(f"critical events differ: {len(ca)} vs {len(cb)}"); ok = False
    if ka != kb:
        print(f"events differ: {sum((ka - kb).values())} only in ours, {sum((kb - ka).values())} only in expected")
        for x in list((ka - kb))[:3]: print("  ours:", x[:300])
        for x in list((kb - ka))[:3]: print("  expected:", x[:300])
        ok = False
    if pa != pb:
        print(f"flows differ: {sum(pa.values())} vs {sum(pb.values())}")
        for x in list((pa - pb))[:3]: print("  ours:", x)
        for x in list((pb - pa))[:3]: print("  expected:", x)
        ok = False
    n = len(ca) + 2 * sum(pa.values())
    print(("same" if ok else "DIFFERENT") + f": {len(ca)} critical events, {sum(pa.values())} flow edges, {n} events with a critical key")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
