"""Where a trace goes and that it gets there: the rank in the default file name from each launcher's
environment (malformed values warned about, not turned into rank 0 quietly), no existing file ever
replaced, missing folders made, errors that name the path and the system's reason, HTA_TRACE=0 touching
nothing, FIFOs and descriptors written through, temporary files private and cleaned up."""
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import textwrap
import threading
import time
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tracecheck as tc_  # noqa: E402
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import testlib  # noqa: E402

BIN = tc_.TEST_TRACER


def default_name(rank, dp=0, pp=0, tp=0):
    return "benchmark-data-%d-pipeline-%d-tensor-%d-rank-%d.json" % (dp, pp, tp, rank)


def run_c(cwd, **env):
    """test-tracer atexit (records 3 scopes, the exit handler writes) in cwd: (stderr, files)."""
    e = tc_.clean_env(**env)
    e.pop("LD_PRELOAD", None)
    e.pop("ASAN_OPTIONS", None)
    p = subprocess.run([BIN, "atexit"], cwd=cwd, env=e, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise AssertionError("test-tracer atexit failed (%d): %s" % (p.returncode, p.stderr))
    return p.stderr, sorted(os.listdir(cwd))


def run_py(code, check=True, preexec=None, stdout=subprocess.PIPE, **env):
    e = tc_.clean_env(HTATRACE_LIB=tc_.LIB, PYTHONPATH=os.path.join(tc_.ROOT, "python"), **env)
    p = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=e, stdout=stdout,
                       stderr=subprocess.PIPE, text=True, timeout=120, preexec_fn=preexec)
    if check and p.returncode != 0:
        raise AssertionError("script failed (%d):\n%s%s" % (p.returncode, p.stdout, p.stderr))
    return p


def one_scope(pattern, then=""):
    """run_py of a program that traces one scope "s" into pattern, then runs then (script text)."""
    return run_py("import errno, htatrace as t\n"
                  "t.init(file_pattern=%r)\n"
                  "with t.scope(\"s\"):\n"
                  "    pass\n" % pattern + textwrap.dedent(then))


class LauncherRank(testlib.TempDirTest):
    def one(self, rank, world, source, local=None, **env):
        """The single file a process with env writes by default, checked."""
        err, files = run_c(self.dir, **env)
        self.assertEqual(files, [default_name(rank)])
        d = tc_.load(os.path.join(self.dir, files[0]))
        tc_.check_format(self, d)
        self.assertEqual((d["distributedInfo"]["rank"], d["distributedInfo"]["world_size"]), (rank, world))
        self.assertEqual(d["htaTracer"]["rank_source"], source)
        self.assertEqual(d["htaTracer"].get("local_rank"), local)
        self.assertEqual(tc_.events(d, ph="M", name="process_name")[0]["args"]["name"], "rank %d" % rank)
        os.unlink(os.path.join(self.dir, files[0]))
        return err

    def test_torchrun_ranks_get_their_own_files(self):
        # torchrun sets only RANK, WORLD_SIZE and LOCAL_RANK: four workers, four files, none lost
        for r in range(4):
            run_c(self.dir, RANK=str(r), WORLD_SIZE="4", LOCAL_RANK=str(r % 2))
        files = sorted(os.listdir(self.dir))
        self.assertEqual(files, [default_name(r) for r in range(4)])
        for r in range(4):
            d = tc_.load(os.path.join(self.dir, default_name(r)))
            self.assertEqual(d["distributedInfo"]["rank"], r)
            self.assertEqual(d["distributedInfo"]["world_size"], 4)
            self.assertEqual(d["htaTracer"]["rank_source"], "RANK")
            self.assertEqual(d["htaTracer"]["local_rank"], r % 2)
            self.assertEqual([e["args"]["i"] for e in tc_.events(d, name="atexit_scope")], [0, 1, 2])
        # hta reads the folder as four ranks
        rows = tc_.hta_cpu_ops(self, self.dir)
        self.assertEqual(sorted({r["rank"] for r in rows}), [0, 1, 2, 3])

    def test_each_launcher(self):
        self.assertEqual(self.one(5, 8, "SLURM_PROCID", 1, SLURM_PROCID="5", SLURM_NTASKS="8",
                                  SLURM_LOCALID="1"), "")
        self.assertEqual(self.one(6, 16, "OMPI_COMM_WORLD_RANK", 2, OMPI_COMM_WORLD_RANK="6",
                                  OMPI_COMM_WORLD_SIZE="16", OMPI_COMM_WORLD_LOCAL_RANK="2"), "")
        self.assertEqual(self.one(7, 9, "PMI_RANK", 3, PMI_RANK="7", PMI_SIZE="9", MPI_LOCALRANKID="3"), "")
        self.assertEqual(self.one(0, 1, "default"), "")

    def test_innermost_launcher_wins(self):
        # torchrun under srun: SLURM_PROCID numbers the node, RANK the worker
        self.one(9, 16, "RANK", 1, RANK="9", WORLD_SIZE="16", LOCAL_RANK="1", SLURM_PROCID="1",
                 SLURM_NTASKS="2", SLURM_LOCALID="0")
        # mpirun inside an sbatch script: the batch step's SLURM_PROCID=0 is inherited by every rank
        self.one(3, 4, "OMPI_COMM_WORLD_RANK", None, OMPI_COMM_WORLD_RANK="3", OMPI_COMM_WORLD_SIZE="4",
                 SLURM_PROCID="0", SLURM_NTASKS="1")

    def test_malformed_rank_is_warned_and_skipped(self):
        for bad in ("abc", "1.5", "-1", "+3", " 2", "2147483648", "99999999999999999999"):
            with self.subTest(bad=bad):
                # no other launcher: rank 0, and stderr says so, naming the variable and its value
                err = self.one(0, 1, "default", RANK=bad, WORLD_SIZE="4")
                lines = err.splitlines()
                self.assertEqual(len(lines), 1, err)
                self.assertRegex(lines[0], r"^htatrace\[\d+\]: ignoring RANK=\"%s\": not a rank \(an integer "
                                 r"0\.\.2147483647\); no other launcher variable: rank 0$" % bad.replace(".", r"\.")
                                 .replace("+", r"\+"))
                # another launcher's variable: that one is used, and named
                err = self.one(3, 8, "SLURM_PROCID", None, RANK=bad, SLURM_PROCID="3", SLURM_NTASKS="8")
                self.assertIn('ignoring RANK="%s": not a rank' % bad, err)
                self.assertTrue(err.rstrip().endswith("rank 3 from SLURM_PROCID"), err)

    def test_malformed_sizes_and_parallel_ranks(self):
        err = self.one(2, 1, "RANK", RANK="2", WORLD_SIZE="four")
        self.assertIn('ignoring WORLD_SIZE="four": not an integer 0..2147483647; using 1', err)
        err, files = run_c(self.dir, RANK="1", HTA_TRACE_DP="x", HTA_TRACE_TP="2")
        self.assertEqual(files, [default_name(1, tp=2)])
        self.assertIn('ignoring HTA_TRACE_DP="x"', err)

    def test_warned_once(self):
        # init() twice, flush twice: one line
        p = run_py("""
            import htatrace as t
            t.init(file_pattern=%r + "/w.json")
            with t.scope("s"):
                pass
            t.init(file_pattern=%r + "/w.json")
            t.flush(); t.flush()
        """ % (self.dir, self.dir), RANK="r1", PMI_RANK="4", PMI_SIZE="5")
        self.assertEqual(len(p.stderr.splitlines()), 1, p.stderr)
        self.assertIn('ignoring RANK="r1": not a rank', p.stderr)
        d = tc_.load(os.path.join(self.dir, "w.json"))
        self.assertEqual((d["distributedInfo"]["rank"], d["distributedInfo"]["world_size"]), (4, 5))


class Writer(testlib.TempDirTest):
    def test_existing_file_is_kept(self):
        old = os.path.join(self.dir, "trace.json")
        with open(old, "w") as f:
            f.write("an older run's trace")
        code = """
            import htatrace as t
            t.init(file_pattern=%r)
            for i in range(3):
                with t.scope("s", i=i):
                    pass
                print(t.flush())
            print(t.output_path())
        """ % old
        p = run_py(code)
        new = os.path.join(self.dir, "trace.1.json")
        self.assertEqual(p.stdout.split(), [new] * 4)
        with open(old) as f:
            self.assertEqual(f.read(), "an older run's trace")
        # one warning, naming both files, however many flushes
        self.assertEqual(p.stderr.count("\n"), 1, p.stderr)
        self.assertRegex(p.stderr, r"^htatrace\[\d+\]: %s exists and was not written by this process: kept; "
                         r"this trace is in %s\n$" % (old, new))
        d = tc_.load(new)
        self.assertEqual([e["args"]["i"] for e in tc_.events(d, name="s")], [0, 1, 2])
        # the next run finds both taken: .2
        p = run_py(code)
        self.assertEqual(p.stdout.split()[0], os.path.join(self.dir, "trace.2.json"))
        self.assertEqual(sorted(os.listdir(self.dir)), ["trace.1.json", "trace.2.json", "trace.json"])

    def test_own_file_is_replaced_and_no_temporary_is_left(self):
        out = os.path.join(self.dir, "own.json")
        p = run_py("""
            import json, os, htatrace as t
            t.init(file_pattern=%r)
            # a link at the old, predictable temporary name must not be followed
            os.symlink(%r, %r + ".tmp.%%d" %% os.getpid())
            seen = []
            for i in range(5):
                with t.scope("s", i=i):
                    pass
                t.flush()
                if i == 0:
                    first = open(%r)
            # replaced by rename: a reader of the old file still has all of it
            print(len(json.load(first)["traceEvents"]))
        """ % (out, os.path.join(self.dir, "victim"), out, out))
        self.assertEqual(p.stdout.strip(), "4")  # process name, sort index, thread name, s
        self.assertEqual(p.stderr, "")
        self.assertFalse(os.path.exists(os.path.join(self.dir, "victim")))
        names = sorted(os.listdir(self.dir))
        self.assertEqual([n for n in names if ".tmp." not in n], ["own.json"])
        self.assertEqual(len(names), 2)  # own.json and the planted link, untouched
        d = tc_.load(out)
        self.assertEqual([e["args"]["i"] for e in tc_.events(d, name="s")], list(range(5)))

    def test_mode_follows_umask_and_folders_are_made(self):
        for mask, want in ((0o027, 0o640), (0o002, 0o664)):
            out = os.path.join(self.dir, "m%o" % mask, "deeper", "t-{rank}.json")
            run_py("""
                import htatrace as t
                t.init(rank=3, file_pattern=%r)
                with t.scope("s"):
                    pass
            """ % out, preexec=lambda m=mask: os.umask(m))
            path = out.replace("{rank}", "3")
            self.assertEqual(stat.S_IMODE(os.stat(path).st_mode), want)
            self.assertEqual(stat.S_IMODE(os.stat(os.path.dirname(path)).st_mode), 0o777 & ~mask)
            tc_.check_format(self, tc_.load(path))

    def test_errors_name_the_path_and_the_reason(self):
        blocker = os.path.join(self.dir, "file")
        with open(blocker, "w") as f:
            f.write("x")
        target = os.path.join(blocker, "sub", "t.json")
        p = one_scope(target, """
            try:
                t.flush()
                raise SystemExit("flush did not raise")
            except t.TracerError as e:
                assert e.errno == errno.ENOTDIR, e.errno
                assert e.strerror == "Not a directory", e.strerror
                assert e.filename == %r, e.filename
                print(e)
        """ % target)
        self.assertEqual(p.stdout.strip(), "flush: cannot write %s: Not a directory (EIO)" % target)
        # at exit the trace is lost: stderr says where and why (the exit status is the program's)
        self.assertRegex(p.stderr, r"^htatrace\[\d+\]: the trace of rank 0 was not written at exit: "
                         r"cannot write %s: Not a directory\n$" % target)
        # a folder where the file should be
        p = one_scope(self.dir)
        self.assertIn("was not written at exit: cannot write %s: Is a directory" % self.dir, p.stderr)
        # a link to nothing
        link = os.path.join(self.dir, "dangling.json")
        os.symlink(os.path.join(self.dir, "nowhere", "x.json"), link)
        p = one_scope(link)
        self.assertIn("cannot write %s: a symbolic link to a missing file" % link, p.stderr)
        self.assertFalse(os.path.exists(os.path.join(self.dir, "nowhere")))

    def test_write_error_keeps_the_old_trace(self):
        # RLIMIT_FSIZE makes write() fail with EFBIG past 64 KiB: the flush fails like a full disk
        out = os.path.join(self.dir, "big.json")

        def limit():
            signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
            resource.setrlimit(resource.RLIMIT_FSIZE, (65536, 65536))
        p = run_py("""
            import errno, htatrace as t
            t.init(file_pattern=%r)
            with t.scope("first"):
                pass
            t.flush()
            for i in range(5000):
                with t.scope("many", i=i):
                    pass
            try:
                t.flush()
                raise SystemExit("flush did not raise")
            except t.TracerError as e:
                assert e.errno == errno.EFBIG, e.errno
                print(e)
        """ % out, preexec=limit)
        self.assertEqual(p.stdout.strip(), "flush: cannot write %s: File too large (EIO)" % out)
        self.assertIn("was not written at exit: cannot write %s: File too large" % out, p.stderr)
        self.assertEqual(os.listdir(self.dir), ["big.json"])  # the temporary file was removed
        d = tc_.load(out)
        self.assertEqual([e["name"] for e in tc_.events(d, ph="X")], ["first"])

    def test_disabled_touches_nothing(self):
        old = os.path.join(self.dir, "trace.json")
        with open(old, "w") as f:
            f.write("kept")
        os.utime(old, (1_000_000_000, 1_000_000_000))
        for pattern in (old, os.path.join(self.dir, "new", "t.json")):
            p = run_py("""
                import htatrace as t
                t.init(file_pattern=%r)
                with t.scope("s", ctx={"k": 1}, slots=["v"]):
                    assert t.get("k") == 1          # the program behaves the same without tracing
                    t.set("v", 2)
                print(t.flush())
            """ % pattern, HTA_TRACE="0")
            self.assertEqual(p.stdout.strip(), "None")
            self.assertEqual(p.stderr, "")
        self.assertEqual(os.listdir(self.dir), ["trace.json"])
        st = os.stat(old)
        self.assertEqual(st.st_mtime, 1_000_000_000)
        with open(old) as f:
            self.assertEqual(f.read(), "kept")


class SpecialFiles(testlib.TempDirTest):
    def test_fifo_is_written_through(self):
        fifo = os.path.join(self.dir, "pipe.json")
        os.mkfifo(fifo)
        got = []

        def reader():
            with open(fifo) as f:
                got.append(f.read())
        th = threading.Thread(target=reader)
        th.start()
        run_py("""
            import htatrace as t
            t.init(file_pattern=%r)
            with t.scope("through", n=1):
                pass
            print(t.flush())
        """ % fifo)  # then the exit flush: nothing new, nothing written
        th.join(60)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))
        self.assertEqual(os.listdir(self.dir), ["pipe.json"])
        d = json.loads(got[0])  # exactly one document
        self.assertEqual([e["name"] for e in tc_.events(d, ph="X")], ["through"])

    def test_fifo_without_reader_fails_at_once(self):
        fifo = os.path.join(self.dir, "pipe.json")
        os.mkfifo(fifo)
        t0 = time.monotonic()
        p = one_scope(fifo, """
            try:
                t.flush()
            except t.TracerError as e:
                print(e)
        """)
        self.assertLess(time.monotonic() - t0, 30)
        self.assertEqual(p.stdout.strip(), "flush: cannot write %s: a FIFO with no reader (No such device or "
                         "address) (EIO)" % fifo)
        self.assertIn("was not written at exit: cannot write %s: a FIFO with no reader" % fifo, p.stderr)
        self.assertTrue(stat.S_ISFIFO(os.lstat(fifo).st_mode))

    def test_own_stdout(self):
        code = """
            import htatrace as t
            print("before")
            with t.scope("on_stdout"):
                pass
        """
        # a pipe: what was printed, then the trace
        p = run_py(code, HTA_TRACE_FILE="/proc/self/fd/1")
        first, rest = p.stdout.split("\n", 1)
        self.assertEqual(first, "before")
        self.assertEqual([e["name"] for e in tc_.events(json.loads(rest), ph="X")], ["on_stdout"])
        # a regular file: written at the descriptor's offset, as a shell's > would, nothing replaced
        out = os.path.join(self.dir, "out.txt")
        with open(out, "w") as f:
            run_py(code, stdout=f, HTA_TRACE_FILE="/dev/stdout")
        with open(out) as f:
            first, rest = f.read().split("\n", 1)
        self.assertEqual(first, "before")
        self.assertEqual([e["name"] for e in tc_.events(json.loads(rest), ph="X")], ["on_stdout"])
        self.assertEqual(os.listdir(self.dir), ["out.txt"])


if __name__ == "__main__":
    unittest.main()
