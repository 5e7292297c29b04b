#!/usr/bin/env python3
"""hta's test runner: every test of the project, one line each.

  tests/run.py                  all tests
  tests/run.py NAME...          the named tests, or all under a prefix: loader.test_loader.BadInput,
                                unit.json_lex, tests/cpath/test_cpath.py
  tests/run.py -k TEXT          the tests whose name contains TEXT (-k may repeat)
  tests/run.py --list           the names of the tests, nothing run
  tests/run.py -j N             N jobs at once (default: the number of CPUs)

The tests: each method of the unittest classes in tests/*/test_*.py; each function of the C unit
programs tests/unit/NAME.c (built as $BUILD/unit_NAME; named unit.NAME.FUNCTION); each of the C
test programs in C_PROGRAMS.  Environment: HTA (default build/hta), BUILD (default build).
Prints `ok   NAME`, or `FAIL NAME` and the detail indented, or `skip NAME: why`; the last line
is `N passed, M failed` (`, K skipped` added when K > 0).  Exit status 1 when a test failed.
"""
import argparse
import concurrent.futures
import glob
import importlib
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
import unittest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TESTS = os.path.join(ROOT, "tests")
# C test programs that are one test each: name -> command, the program in $BUILD
C_PROGRAMS = {"loader.test_raw": ["test_raw", "tests/data/hta/critical_path/simple_add"],
              "loader.test_rawobj": ["test_rawobj"],
              "vocab.test_vocab": ["test_vocab"],
              "table.test_table": ["test_table"],
              "errors.test_errors": ["test_errors"]}
# Python tests whose processes load libhtatrace.so or libhta.so: under SAN=1 python3 needs libasan preloaded
LOADS_TRACER = ("merge.", "tracer.", "python.")
# Python tests of the htac package (tests/python) need numpy and pandas: they run under an interpreter that
# has them (this one, else Debian's /usr/bin/python3 with python3-pandas), see pandas_python()
NEEDS_PANDAS = ("python.",)
TIMEOUT_S = 600  # one job (a test class, a C program)


class Job:
    """One process: the tests it runs and how to read its results."""

    def __init__(self, kind, label, names, cmd, env, prefix=""):
        self.kind, self.label, self.names, self.cmd, self.env, self.prefix = kind, label, names, cmd, env, prefix


# ---- finding the tests ----

def python_jobs(env, preload):
    """A job per unittest class of tests/*/test_*.py; a module that fails to import is a failing test."""
    sys.path.insert(0, TESTS)
    jobs, broken = [], {}
    for f in sorted(glob.glob(os.path.join(TESTS, "*", "test_*.py"))):
        mod = os.path.relpath(f, TESTS)[:-3].replace(os.sep, ".")
        try:
            suite = unittest.defaultTestLoader.loadTestsFromModule(importlib.import_module(mod))
        except Exception as e:  # noqa: BLE001 - reported as the module's failure
            broken[mod] = f"cannot import {mod}: {e!r}"
            continue
        by_class = {}
        for t in flatten(suite):
            by_class.setdefault(t.id().rsplit(".", 1)[0], []).append(t.id())
        for cls, names in by_class.items():
            e = dict(env)
            if preload and mod.startswith(LOADS_TRACER):
                e["LD_PRELOAD"] = preload
                e["ASAN_OPTIONS"] = e.get("ASAN_OPTIONS", "") + ":detect_leaks=0"  # python leaks at exit
            py = pandas_python() if mod.startswith(NEEDS_PANDAS) else sys.executable
            jobs.append(Job("py", cls, names, [py, os.path.abspath(__file__), "--worker"], e))
    return jobs, broken


_PANDAS_PY = []


def pandas_python():
    """An interpreter that imports numpy and pandas: this one, else /usr/bin/python3 (python3-pandas).  Without
    one, this one: the tests then fail saying what is missing."""
    if not _PANDAS_PY:
        for py in (sys.executable, "/usr/bin/python3"):
            try:
                ok = subprocess.run([py, "-c", "import numpy, pandas"], capture_output=True).returncode == 0
            except OSError:
                ok = False
            if ok:
                _PANDAS_PY.append(py)
                break
        else:
            _PANDAS_PY.append(sys.executable)
    return _PANDAS_PY[0]


def flatten(suite):
    for t in suite:
        if isinstance(t, unittest.TestSuite):
            yield from flatten(t)
        else:
            yield t


def c_jobs(build, env):
    jobs, broken = [], {}
    for src in sorted(glob.glob(os.path.join(TESTS, "unit", "*.c"))):
        name = os.path.basename(src)[:-2]
        exe = os.path.join(build, "unit_" + name)
        try:
            fns = subprocess.run([exe, "--list"], capture_output=True, text=True, check=True).stdout.split()
        except (OSError, subprocess.CalledProcessError) as e:
            broken["unit." + name] = f"{exe} --list: {e} (make test builds it)"
            continue
        jobs.append(Job("unit", "unit." + name, [f"unit.{name}.{f}" for f in fns], [exe], env, f"unit.{name}."))
    for name, (exe, *args) in C_PROGRAMS.items():
        jobs.append(Job("prog", name, [name], [os.path.join(build, exe), *args], env))
    return jobs, broken


def asan_preload(build):
    """libasan's path when libhtatrace.so was built with sanitizers, else None."""
    try:
        dyn = subprocess.run(["readelf", "-d", os.path.join(build, "libhtatrace.so")],
                             capture_output=True, text=True).stdout
    except OSError:
        return None
    if "libasan" not in dyn:
        return None
    cc = os.environ.get("CC", "cc")
    return subprocess.run([cc, "-print-file-name=libasan.so"], capture_output=True, text=True).stdout.strip()


# ---- running a job: [(name, status, detail)] ----

def run_job(job):
    t0 = time.monotonic()
    results = _run_job(job)
    job.seconds = time.monotonic() - t0
    return results


def _run_job(job):
    with tempfile.NamedTemporaryFile("r", prefix="hta-test-", suffix=".jsonl") as res:
        args = {"py": [res.name] + job.names, "unit": [n[len(job.prefix):] for n in job.names], "prog": []}
        try:
            p = subprocess.run(job.cmd + args[job.kind], cwd=ROOT, env=job.env, capture_output=True, text=True,
                               timeout=TIMEOUT_S)
            rc, out, err = p.returncode, p.stdout, p.stderr
        except subprocess.TimeoutExpired as e:
            out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else e.stdout or ""
            rc, err = "timeout", f"timed out after {TIMEOUT_S} s"
        except OSError as e:
            rc, out, err = "not run", "", str(e)
        tail = "\n".join(s for s in (out[-3000:], err[-3000:]) if s.strip())
        if job.kind == "prog":
            return [(job.names[0], "ok", "") if rc == 0 else (job.names[0], "FAIL", f"exit status {rc}\n{tail}")]
        got, extra = {}, []
        if job.kind == "py":
            for line in res:
                r = json.loads(line)
                if r["status"] == "error":  # setUpClass failed: its tests do not run
                    extra.append(r["detail"])
                else:
                    got[r["name"]] = (r["name"], r["status"], r["detail"])
        else:
            last = None
            for line in out.splitlines():
                if line.startswith(("ok   ", "FAIL ")):
                    last = job.prefix + line[5:].strip()
                    got[last] = (last, line[:4].strip(), "")
                elif line.startswith("    ") and last and got[last][1] == "FAIL":
                    got[last] = (last, "FAIL", (got[last][2] + "\n" + line[4:]).strip("\n"))
    results = [got.get(n) or (n, "FAIL", "\n".join(["not run"] + extra + [tail])) for n in job.names]
    if rc != 0 and all(r[1] != "FAIL" for r in results):  # e.g. a sanitizer's report at exit
        results.append((job.label, "FAIL", f"exit status {rc} after its tests\n{tail}"))
    return results


# ---- the worker: runs unittest tests in its own process, one JSON line per test ----

class Record(unittest.TestResult):
    def __init__(self, f):
        super().__init__()
        self.f = f
        self.buffer = True  # a test's own output goes with its failure only

    def startTest(self, test):
        super().startTest(test)
        self.errors_, self.skip_ = [], None

    def addError(self, test, err):
        text = self._exc_info_to_string(err, test)
        if isinstance(test, unittest.TestCase):
            self.errors_.append(text)
        else:  # setUpClass / setUpModule
            self.emit(str(test), "error", f"{test}: {text}")

    addFailure = addError

    def addSubTest(self, test, subtest, err):
        if err is not None:
            self.errors_.append(f"{subtest._subDescription()}: {self._exc_info_to_string(err, test)}")

    def addSkip(self, test, reason):
        self.skip_ = reason

    def addUnexpectedSuccess(self, test):
        self.errors_.append("unexpected success")

    def stopTest(self, test):
        if self.errors_:
            self.emit(test.id(), "FAIL", "\n".join(self.errors_))
        elif self.skip_ is not None:
            self.emit(test.id(), "skip", self.skip_)
        else:
            self.emit(test.id(), "ok", "")
        super().stopTest(test)

    def emit(self, name, status, detail):
        self.f.write(json.dumps({"name": name, "status": status, "detail": detail.rstrip()}) + "\n")
        self.f.flush()


def worker(result_path, ids):
    sys.path.insert(0, TESTS)
    suite = unittest.TestSuite(unittest.defaultTestLoader.loadTestsFromName(i) for i in ids)
    with open(result_path, "w") as f:
        suite.run(Record(f))


# ---- main ----

def main():
    if len(sys.argv) > 2 and sys.argv[1] == "--worker":
        return worker(sys.argv[2], sys.argv[3:])
    ap = argparse.ArgumentParser(description="Runs hta's tests.", epilog="Environment: HTA, BUILD.")
    ap.add_argument("names", nargs="*", help="test names or prefixes")
    ap.add_argument("-k", action="append", default=[], metavar="TEXT", help="names containing TEXT")
    ap.add_argument("-j", type=int, default=os.cpu_count() or 2, metavar="N", help="jobs at once")
    ap.add_argument("--list", action="store_true", help="print the test names only")
    a = ap.parse_args()
    wanted = [n.removeprefix("tests/").removesuffix(".py").replace("/", ".") for n in a.names]

    def chosen(name):
        return ((not wanted or any(name == w or name.startswith(w + ".") for w in wanted))
                and (not a.k or any(k in name for k in a.k)))

    build = os.path.abspath(os.environ.get("BUILD", "build"))
    env = dict(os.environ, HTA=os.path.abspath(os.environ.get("HTA", os.path.join(build, "hta"))), BUILD=build)
    os.environ.update(env)  # for the test modules imported here to list their tests
    os.chdir(ROOT)
    pj, broken = python_jobs(env, asan_preload(build))
    cj, broken_c = c_jobs(build, env)
    broken.update(broken_c)
    jobs = []
    for j in cj + pj:
        j.names = [n for n in j.names if chosen(n)]
        if j.names:
            jobs.append(j)
    broken = {n: d for n, d in broken.items() if chosen(n)}
    if a.list:
        for n in sorted([n for j in jobs for n in j.names] + list(broken)):
            print(n)
        return 0
    if not jobs and not broken:
        print("no test matches", " ".join(a.names + [f"-k {k}" for k in a.k]))
        return 2

    count = {"ok": 0, "FAIL": 0, "skip": 0}
    lock = threading.Lock()

    def report(results):
        with lock:
            for name, status, detail in results:
                count[status] += 1
                if status == "skip":
                    print(f"skip {name}: {detail}")
                else:
                    print(f"{status:4} {name}")
                    if detail:
                        print("\n".join("    " + ln for ln in detail.splitlines()))
            sys.stdout.flush()

    # the longest jobs first (their times of the last run), so that the two cores finish together
    times_file = os.path.join(build, "test-times.json")
    try:
        with open(times_file) as f:
            times = json.load(f)
    except (OSError, ValueError):
        times = {}
    jobs.sort(key=lambda j: -times.get(j.label, 0))
    t0 = time.monotonic()
    report([(n, "FAIL", d) for n, d in broken.items()])
    with concurrent.futures.ThreadPoolExecutor(max(1, a.j)) as ex:
        for f in concurrent.futures.as_completed([ex.submit(run_job, j) for j in jobs]):
            report(f.result())
    print(f"({time.monotonic() - t0:.0f} s, {a.j} jobs at once)")
    times.update({j.label: round(j.seconds, 2) for j in jobs})
    try:
        with open(times_file, "w") as f:
            json.dump(times, f, indent=0, sort_keys=True)
    except OSError:
        pass
    skipped = f", {count['skip']} skipped" if count["skip"] else ""
    print(f"{count['ok']} passed, {count['FAIL']} failed{skipped}")
    return 1 if count["FAIL"] else 0


if __name__ == "__main__":
    sys.exit(main())
