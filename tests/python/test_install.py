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


if __name__ == "__main__":
    unittest.main()
