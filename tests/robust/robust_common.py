"""What the robustness tests share: the hta binary, traces made with tools/gen_kineto_trace.py, and
running hta as another user (for permission errors when the tests run as root)."""
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
HTA = os.path.abspath(os.environ.get('HTA', os.path.join(ROOT, 'build', 'hta')))
GEN = os.path.join(ROOT, 'tools', 'gen_kineto_trace.py')
NOBODY = 65534


def hta(*args, timeout=120, **kw):
    """Runs hta; returns the CompletedProcess (text), whatever its status."""
    return subprocess.run([HTA] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout, **kw)


def gen(out, ranks=2, layers=2, steps=3, target_mb=None):
    """A deterministic Kineto trace folder (rank-0.json ...)."""
    args = [sys.executable, GEN, '--out', out, '--ranks', str(ranks), '--steps', str(steps), '--quiet']
    args += ['--target-mb', str(target_mb)] if target_mb else ['--layers', str(layers)]
    subprocess.run(args, check=True)


def tmpdir(test, prefix):
    d = tempfile.mkdtemp(prefix=prefix)
    test.addCleanup(shutil.rmtree, d, True)
    return d


def nobody_setup(tmp):
    """When running as root, a permission error cannot happen: hta runs as nobody instead.  Returns
    (hta binary nobody can run, preexec_fn or None).  The binary is copied into tmp, which is made
    reachable, because the checkout's folders may not be."""
    if os.geteuid() != 0:
        return HTA, None
    os.chmod(tmp, 0o755)
    exe = os.path.join(tmp, 'hta-copy')
    shutil.copy(HTA, exe)
    os.chmod(exe, 0o755)

    def drop():
        os.setgroups([])
        os.setgid(NOBODY)
        os.setuid(NOBODY)
    return exe, drop
