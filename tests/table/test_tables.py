"""Table declarations as users see them: docs/tables.md is exactly `hta tables`,
and every command's --help lists its declared tables within 100 columns."""
import os
import re
import subprocess
import unittest

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
HTA = os.environ.get("HTA", os.path.join(ROOT, "build", "hta"))


def out(*args):
    p = subprocess.run([HTA, *args], capture_output=True, text=True)
    assert p.returncode == 0, (args, p.stderr)
    return p.stdout


class Tables(unittest.TestCase):
    def test_docs_tables_md_is_hta_tables(self):
        with open(os.path.join(ROOT, "docs", "tables.md")) as f:
            self.assertEqual(f.read(), out("tables"), "regenerate: build/hta tables > docs/tables.md")

    def test_every_help_lists_its_tables_within_100_columns(self):
        md = out("tables")
        cmds = re.findall(r"^  ([a-z][a-z-]*)", out("--help").split("commands:", 1)[1], re.M)
        self.assertGreater(len(cmds), 15)
        for c in cmds:
            help_ = out(c, "--help")
            long = [ln for ln in help_.splitlines() if len(ln) > 100]
            self.assertEqual(long, [], f"hta {c} --help")
            sec = re.search(r"^## `hta " + re.escape(c) + r"`\n(.*?)(?=^## |\Z)", md, re.M | re.S)
            for t in re.findall(r"^### `?([\w-]+)`?", sec.group(1), re.M) if sec else []:
                self.assertRegex(help_, r"(?m)^  " + re.escape(t) + ": ", f"hta {c} --help lists {t}")


if __name__ == "__main__":
    unittest.main()
