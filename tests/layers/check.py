#!/usr/bin/env python3
"""Layering check: no call goes up or sideways between library folders, and
no file calls back into a file that calls it.

Reads the allowed calls from src/layers.txt, lists with `nm` what each built
object of src/<folder>/ defines and what it needs, and fails on any symbol
that one folder takes from another folder it may not call.  Also fails when a
folder of src/ is missing from src/layers.txt (a new folder must take a place).
Inside a folder, the files' calls (a function or a variable one object takes
from another) must go one way: any circle of files that call each other fails,
named with the symbols that tie it.  A folder built only position-independent
(src/tracer: libhtatrace, under obj-pic/) is read there.

    tests/layers/check.py BUILD_DIR [SOURCE_ROOT]
"""
import collections
import os
import subprocess
import sys

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
if len(sys.argv) > 2:
    ROOT = os.path.abspath(sys.argv[2])  # another tree (the check's own test)


def layers():
    allowed = {}
    with open(os.path.join(ROOT, "src", "layers.txt")) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if not line or line.startswith("headers "):
                continue
            name, _, deps = line.partition(":")
            allowed[name.strip()] = set(deps.split()) | {name.strip()}
    return allowed


def main():
    build = sys.argv[1] if len(sys.argv) > 1 else "build"
    allowed = layers()
    objdir = os.path.join(build, "obj", "src")
    picdir = os.path.join(build, "obj-pic", "src")
    folders = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
    bad = [d for d in folders if d not in allowed]
    for d in bad:
        print(f"FAIL layers: src/{d}/ has no line in src/layers.txt")
    defined, needs, file_of = {}, collections.defaultdict(set), {}
    nobj = 0
    for folder in folders:
        d = os.path.join(objdir, folder)
        if not os.path.isdir(d):
            d = os.path.join(picdir, folder)  # a library built only position-independent
        if not os.path.isdir(d):
            continue
        for name in sorted(os.listdir(d)):
            if not name.endswith(".o") or not os.path.exists(os.path.join(ROOT, "src", folder, name[:-2] + ".c")):
                continue  # not an object, or left from a source since moved
            nobj += 1
            out = subprocess.run(["nm", os.path.join(d, name)], capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                p = line.split()
                if len(p) == 3 and p[1] in "TDBRC":
                    defined[p[2]] = folder
                    file_of[p[2]] = (folder, name)
                elif len(p) == 2 and p[0] == "U":
                    needs[(folder, name)].add(p[1])
    if nobj == 0:
        print(f"FAIL layers: no objects under {objdir} (build first)")
        return 1
    wrong = []
    for (folder, obj), syms in sorted(needs.items()):
        for s in sorted(syms):
            owner = defined.get(s)
            if owner and owner not in allowed.get(folder, {folder}):
                wrong.append(f"src/{folder}/{obj[:-2]}.c calls {s} of src/{owner}/")
    for w in wrong:
        print("FAIL layers:", w)
    circles, nfile = file_circles(needs, file_of)
    for c in circles:
        print("FAIL layers: a circle of files that call each other:", c)
    edges = sorted({(f, defined[s]) for (f, _), ss in needs.items() for s in ss if s in defined and defined[s] != f})
    if not wrong and not bad and not circles:
        print(f"ok   layers: {nobj} objects in {len(folders)} folders, {len(edges)} folder-to-folder edges, all downward; "
              f"{nfile} file-to-file calls inside folders, all one way")
    return 1 if wrong or bad or circles else 0


def file_circles(needs, file_of):
    """The circles of files inside a folder (strongly connected parts of the graph of which object takes a
    symbol from which, more than one file each), each as 'a.c -> b.c (sym, ...) -> ...', and the number of
    file-to-file edges."""
    calls = collections.defaultdict(lambda: collections.defaultdict(set))
    for (folder, obj), syms in needs.items():
        for s in syms:
            owner = file_of.get(s)
            if owner and owner[0] == folder and owner[1] != obj:
                calls[(folder, obj)][owner].add(s)
    index, low, stack, on, parts = {}, {}, [], set(), []

    def visit(v):  # Tarjan's strongly connected components, iteratively (no recursion limit)
        work = [(v, iter(sorted(calls[v])))]
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        while work:
            u, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(calls[w]))))
                elif w in on:
                    low[u] = min(low[u], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[u])
            if low[u] == index[u]:
                part = []
                while True:
                    x = stack.pop()
                    on.discard(x)
                    part.append(x)
                    if x == u:
                        break
                if len(part) > 1:
                    parts.append(sorted(part))

    for v in sorted(set(calls) | {o for d in calls.values() for o in d}):
        if v not in index:
            visit(v)
    out = []
    for part in sorted(parts):
        inside = set(part)
        ties = [f"src/{a[0]}/{a[1][:-2]}.c -> {b[1][:-2]}.c ({', '.join(sorted(calls[a][b]))})"
                for a in part for b in sorted(calls[a]) if b in inside]
        out.append("; ".join(ties))
    return out, sum(len(d) for d in calls.values())


if __name__ == "__main__":
    sys.exit(main())
