#!/usr/bin/env python3
"""`hta patterns --overlay`: the overlaid trace is valid JSON that our loader reads, keeps every original event
(unmarked ones unchanged, marked ones only gain args.Patterns), and carries each pattern's count on exactly
count x (number of kernels in the pattern) device events."""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from checklib import hta_json, load_trace  # noqa: E402

hta, trace_dir, op, outdir = sys.argv[1:5]
extra = sys.argv[5:]


def run(*args):
    return hta_json(hta, *args)


def load(path):
    return load_trace(path)[0]


res = run("patterns", trace_dir, "--op", op, "--overlay", outdir, *extra)["frequent_cuda_kernel_sequences"]
pats = {r[0]: r[1] for r in res["data"]}
files = os.listdir(outdir)
assert len(files) == 1 and files[0].startswith("overlaid_"), files
src = trace_dir if os.path.isfile(trace_dir) else os.path.join(trace_dir, files[0][len("overlaid_"):])
orig, new = load(src), load(os.path.join(outdir, files[0]))
oe, ne = orig["traceEvents"], new["traceEvents"]
assert len(oe) == len(ne), (len(oe), len(ne))
assert {k: v for k, v in new.items() if k != "traceEvents"} == {k: v for k, v in orig.items() if k != "traceEvents"}
marked = {}
top_k = int(extra[extra.index("--top-k") + 1]) if "--top-k" in extra else 5
top = [r[0] for r in res["data"][:top_k]]
for a, b in zip(oe, ne):
    if a == b:
        continue
    p = b["args"].pop("Patterns")
    assert len(p) == 1, p
    (name, count), = p.items()
    assert name in top and pats[name] == count, (name, count)
    if not b["args"] and "args" not in a:
        del b["args"]
    assert a == b, (a, b)
    if "stream" in a.get("args", {}) and a.get("cat") in ("kernel", "gpu_memset", "gpu_memcpy", "cuda_sync"):
        marked[name] = marked.get(name, 0) + 1
for name in top:
    k = len(name.split("|")) - 1
    assert marked.get(name, 0) == pats[name] * k, (name[:60], marked.get(name), pats[name], k)
info = run("info", os.path.join(outdir, files[0]))["ranks"]
assert info["data"][0][info["columns"].index("events")] == len(oe)
print(f"overlay {os.path.basename(trace_dir)} {op}: {len(oe)} events kept, {len(top)} patterns marked: ok")
