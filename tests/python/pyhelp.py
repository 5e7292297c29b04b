"""What the htac tests share: the package from python/ and the library from $BUILD, the hta program
(for the command-line answers the API must equal), and the test data."""
import json
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
BUILD = os.path.abspath(os.environ.get("BUILD", os.path.join(ROOT, "build")))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(BUILD, "hta")))
TRACES = os.path.join(ROOT, "tests", "data", "hta")
GOLDEN = os.path.join(ROOT, "tests", "golden", "hta")
os.environ.setdefault("HTAC_LIB", os.path.join(BUILD, "libhta.so"))
if os.path.join(ROOT, "python") not in sys.path:
    sys.path.insert(0, os.path.join(ROOT, "python"))


def cli(*args):
    """`hta ARGS --format json` -> its tables."""
    p = subprocess.run([HTA, *args, "--format", "json", "--quiet"], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(f"hta {' '.join(args)}: exit {p.returncode}: {p.stderr}")
    return json.loads(p.stdout)


def golden(folder, analysis):
    return json.load(open(os.path.join(GOLDEN, folder, analysis + ".json")))
