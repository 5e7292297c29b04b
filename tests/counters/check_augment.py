#!/usr/bin/env python3
"""`hta counters --augment`: the written trace is valid JSON that our own loader reads, keeps every original
event (same raw text, same order), and its counter events carry the series values (TF§15, analyses §11.3)."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import hta_json, load_trace  # noqa: E402

hta, trace_dir, outdir = sys.argv[1:4]


def run(*args):
    return hta_json(hta, *args)


aug = run("counters", trace_dir, "--augment", outdir)["augmented"]
ser = run("counters", trace_dir, "--series")
for r in aug["data"]:
    rank, path, nev, nq, nm = r
    src = [os.path.join(trace_dir, f) for f in os.listdir(trace_dir)] if os.path.isdir(trace_dir) else [trace_dir]
    src = [s for s in src if os.path.basename(s).replace(".json", "_with_counters.json") == os.path.basename(path)]
    assert len(src) == 1, (path, src)
    orig, ogz = load_trace(src[0])
    new, ngz = load_trace(path)
    assert ogz == ngz, "gzip when the input was gzip"
    assert path.endswith("_with_counters.json.gz" if ogz else "_with_counters.json"), path
    oev, nevs = orig["traceEvents"], new["traceEvents"]
    assert len(oev) == nev and nevs[:nev] == oev, "every original event kept, in order"
    assert {k: v for k, v in new.items() if k != "traceEvents"} == \
        {k: v for k, v in orig.items() if k != "traceEvents"}, "top-level keys kept"
    added = nevs[nev:]
    assert len(added) == nq + nm and all(e["ph"] == "C" for e in added)
    # values: the series of this rank, with ts = relative + min_ts
    qs = [x for x in ser["queue_length_series"]["data"] if x[0] == rank]
    ms = [x for x in ser["memory_bw_series"]["data"] if x[0] == rank]
    ql = [e for e in added if e["name"] == "Queue Length"]
    assert [(e["args"]["Queue Length"], e["id"]) for e in ql] == [(x[6], x[5]) for x in qs]
    mb = [e for e in added if e["name"] != "Queue Length"]
    assert [(e["name"], e["args"]["Memcpy BW"]) for e in mb] == [(x[4], x[5]) for x in ms]
    off = {round(e["ts"] - x[2], 3) for e, x in zip(ql, qs)} | {round(e["ts"] - x[2], 3) for e, x in zip(mb, ms)}
    assert len(off) <= 1, off  # one origin for every counter
    # our own loader reads it: same events plus the counters
    info = run("info", path)["ranks"]
    ev = info["data"][0][info["columns"].index("events")]
    assert ev == nev + nq + nm, (ev, nev, nq, nm)
    print(f"augment rank {rank}: {nev} events kept, {nq} queue + {nm} bandwidth counters: ok")
