"""`python3 -m pip install ./python` offline (what `make python` runs): the package installs with the
machine's own pip and setuptools, no network, and the installed copy works with the library it carries."""
import os
import shutil
import subprocess
import sys
import tempfile
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import pyhelp  # noqa: E402


class Install(unittest.TestCase):
    def test_pip_install_offline(self):
        tmp = tempfile.mkdtemp(prefix="htac-pip-")
        try:
            env = dict(os.environ, BUILD=pyhelp.BUILD, PIP_NO_INDEX="1", PIP_DISABLE_PIP_VERSION_CHECK="1")
            env.pop("HTAC_LIB", None)
            p = subprocess.run([sys.executable, "-m", "pip", "install", "--no-build-isolation", "--no-deps",
                                "--no-index", "--target", tmp, os.path.join(pyhelp.ROOT, "python")],
                               capture_output=True, text=True, env=env, cwd=tmp)
            if p.returncode and "No module named pip" in p.stderr:
                self.fail("pip is missing: .ci/run installs python3-pip")
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            self.assertTrue(os.path.exists(os.path.join(tmp, "htac", "libhta.so")))
            # the checkout keeps no copy of the library (it would shadow build/'s)
            self.assertFalse(os.path.exists(os.path.join(pyhelp.ROOT, "python", "htac", "libhta.so")))
            code = ("import htac, htac._lib as l\n"
                    "from htac.trace_analysis import TraceAnalysis\n"
                    "a = TraceAnalysis(trace_dir=%r)\n"
                    "print(l._find() == htac.__path__[0] + '/libhta.so', len(a.get_temporal_breakdown(visualize=False)))"
                    % os.path.join(pyhelp.TRACES, "trace_filter"))
            env = dict(os.environ, PYTHONPATH=tmp)
            env.pop("HTAC_LIB", None)
            p = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, cwd=tmp)
            self.assertEqual(p.returncode, 0, p.stderr[-2000:])
            self.assertEqual(p.stdout.split(), ["True", "2"])
        finally:
            shutil.rmtree(tmp, ignore_errors=True)
            shutil.rmtree(os.path.join(pyhelp.ROOT, "python", "build"), ignore_errors=True)


class MakeFindsPython(unittest.TestCase):
    """`make python` uses the first Python with pandas of python3 on PATH, /usr/bin/python3, python3.N (pyenv's
    python3 without pandas first on PATH must not make it fail), and says which package to install when none has
    it.  `make -n` only prints the recipe: nothing is built or installed."""

    def make(self, *args):
        return subprocess.run(["make", "-n", "-s", "python", "BUILD=" + pyhelp.BUILD, *args], capture_output=True,
                              text=True, cwd=pyhelp.ROOT)

    def test_skips_a_python_without_pandas(self):
        tmp = tempfile.mkdtemp(prefix="htac-py-")
        try:
            fake = os.path.join(tmp, "python3")  # a python3 first on PATH that cannot import pandas
            with open(fake, "w") as f:
                f.write("#!/bin/sh\nexit 1\n")
            os.chmod(fake, 0o755)
            good = next((x for x in (sys.executable, "/usr/bin/python3")
                         if subprocess.run([x, "-c", "import pandas"], capture_output=True).returncode == 0), None)
            if not good:
                self.skipTest("no Python with pandas here")
            p = self.make("PY_CANDIDATES=%s %s" % (fake, good))
            self.assertEqual(p.returncode, 0, p.stderr)
            self.assertIn("%s -m pip install" % good, p.stdout)
            self.assertNotIn(fake + " -m pip", p.stdout)
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def test_none_says_what_to_install(self):
        p = subprocess.run(["make", "-s", "python", "BUILD=" + pyhelp.BUILD, "PY_CANDIDATES=/nonexistent/python3"],
                           capture_output=True, text=True, cwd=pyhelp.ROOT)
        self.assertNotEqual(p.returncode, 0)
        self.assertIn("apt-get install python3-pandas", p.stderr)


if __name__ == "__main__":
    unittest.main()
