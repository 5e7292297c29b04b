#!/usr/bin/env python3
"""Layering check: no call goes up or sideways between library folders.

Reads the allowed calls from src/layers.txt, lists with `nm` what each built
object of src/<folder>/ defines and what it needs, and fails on any symbol
that one folder takes from another folder it may not call.  Also fails when a
folder of src/ is missing from src/layers.txt (a new folder must take a place).

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
    folders = sorted(d for d in os.listdir(os.path.join(ROOT, "src")) if os.path.isdir(os.path.join(ROOT, "src", d)))
    bad = [d for d in folders if d not in allowed]
    for d in bad:
        print(f"FAIL layers: src/{d}/ has no line in src/layers.txt")
    defined, needs = {}, collections.defaultdict(set)
    nobj = 0
    for folder in folders:
        d = os.path.join(objdir, folder)
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
    edges = sorted({(f, defined[s]) for (f, _), ss in needs.items() for s in ss if s in defined and defined[s] != f})
    if not wrong and not bad:
        print(f"ok   layers: {nobj} objects in {len(folders)} folders, {len(edges)} folder-to-folder edges, all downward")
    return 1 if wrong or bad else 0


if __name__ == "__main__":
    sys.exit(main())
