"""Set-up as the README says (README "Quick start"): `make` builds every program and library the README
uses, the tracer library its Python example loads included; `make test` prepares htad's S3 test server
itself (npm ci in tests/daemon) where npm is there.  Checked on make's plan (--dry-run --always-make),
so nothing is built or installed here."""
import os
import shutil
import subprocess
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def plan(*targets):
    p = subprocess.run(["make", "--dry-run", "--always-make", "-C", ROOT, "BUILD=build-plan-check", *targets],
                       capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(p.stderr)
    return p.stdout


class Make(unittest.TestCase):
    def test_make_builds_what_the_readme_uses(self):
        out = plan("all")
        for made in ["-o build-plan-check/hta ", "-o build-plan-check/htad ", "-o build-plan-check/libhtatrace.so ",
                     "ar rcs build-plan-check/libhtatrace.a "]:
            self.assertIn(made, out)
        with open(os.path.join(ROOT, "README.md")) as f:
            readme = f.read()
        self.assertIn("HTATRACE_LIB=build/libhtatrace.so", readme)

    def test_make_test_prepares_the_s3_server(self):
        out = plan("test")
        if shutil.which("npm"):
            self.assertIn("npm ci", out)
        else:
            self.assertNotIn("npm ci", out)


if __name__ == "__main__":
    unittest.main()
