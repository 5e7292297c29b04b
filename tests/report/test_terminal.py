#!/usr/bin/env python3
"""The report in a terminal (issue 39): the table format fills the terminal's width (100 columns when the output
is no terminal); prose that would get a column narrower than 30 characters moves to lines of its own, so a finding
takes a few lines, not 35 lines of 7 characters (the MI300 ResNet-18 trace); `--top` bounds every list."""
import fcntl
import json
import os
import pty
import struct
import subprocess
import termios
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
HTA = os.path.abspath(os.environ.get("HTA", os.path.join(ROOT, "build", "hta")))
DIAG = os.path.join(ROOT, "tests", "data", "real-diag")
RESNET = os.path.join(DIAG, "AMD-AGI__TraceLens", "tests", "traces", "mi300", "ddp_resnet18_no_pool",
                      "train_resnet18.json.gz")
DLRM = os.path.join(DIAG, "facebookresearch__param", "et_replay", "tests", "inputs", "dlrm_kineto")
SCREEN = 24


def text(*args):
    p = subprocess.run([HTA, "report", *args, "--quiet"], capture_output=True, text=True)
    if p.returncode:
        raise AssertionError(p.stderr)
    return p.stdout


def on_terminal(cols, *args):
    """The report's stdout as a terminal of cols columns would get it."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 50, cols, 0, 0))
    p = subprocess.Popen([HTA, "report", *args, "--quiet"], stdout=slave, stderr=subprocess.DEVNULL)
    os.close(slave)
    out = b""
    while True:
        try:
            b = os.read(master, 65536)
        except OSError:
            break
        if not b:
            break
        out += b
    p.wait()
    os.close(master)
    return out.decode().replace("\r\n", "\n")


def section(out, name):
    """The lines of table `name` (its title to the blank line before the next title)."""
    lines = out.split("\n")
    start = next(i for i, l in enumerate(lines) if l.startswith(name + " ("))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and "(" in lines[i]
                and lines[i].split(" (")[0].isidentifier() and lines[i].endswith(("row)", "rows)"))), len(lines))
    return lines[start:end]


class Terminal(unittest.TestCase):
    def test_prose_moves_to_lines_of_its_own(self):
        out = text(RESNET)
        self.assertTrue(all(len(l) <= 100 for l in out.split("\n")), max(out.split("\n"), key=len))
        f = section(out, "findings")
        # the row, then its evidence and advice as paragraphs: no column of a few characters
        self.assertTrue(f[1].startswith("cause") and "evidence" not in f[1], f[:3])
        self.assertTrue(f[2].startswith("host_blocking"), f[:3])
        self.assertTrue(f[3].startswith("    evidence: the host blocks in runtime calls"), f[:4])
        self.assertTrue(any(l.startswith("    what_to_do: ") for l in f))
        self.assertLessEqual(len([l for l in f if l.strip()]), SCREEN)

    def test_one_screen_per_finding(self):
        for path in (RESNET, DLRM, os.path.join(ROOT, "tests", "data", "hta", "trace_filter")):
            with self.subTest(trace=os.path.relpath(path, ROOT)):
                f = section(text(path), "findings")
                rows = "\n".join(f[2:]).split("\n\n")  # a blank line between stacked rows
                for r in rows:
                    self.assertLessEqual(len(r.strip().split("\n")), SCREEN, r)

    def test_terminal_width(self):
        wide = on_terminal(140, RESNET)
        lines = wide.split("\n")
        self.assertTrue(all(len(l) <= 140 for l in lines), max(lines, key=len))
        self.assertTrue(any(len(l) > 100 for l in lines))
        narrow = on_terminal(80, RESNET)
        self.assertTrue(all(len(l) <= 80 for l in narrow.split("\n")), max(narrow.split("\n"), key=len))

    def test_top_bounds_every_list(self):
        out = json.loads(text(DLRM, "--top", "3", "--format", "json"))
        for t in ("top_kernels", "op_roofline", "collectives"):
            with self.subTest(table=t):
                self.assertEqual(len(out[t]["data"]), 3)
        full = json.loads(text(DLRM, "--format", "json"))
        self.assertEqual(out["collectives"]["data"], full["collectives"]["data"][:3])
        self.assertEqual(len(full["op_roofline"]["data"]), 15)  # the default (the page's roofline chart draws them)
        self.assertEqual(len(full["collectives"]["data"]), min(10, len(full["collectives"]["data"])))


if __name__ == "__main__":
    unittest.main()
