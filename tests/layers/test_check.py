"""The layering check fails on a call that goes up or sideways, and passes
when every call goes down: built from tiny C files in a scratch tree."""
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
CHECK = os.path.join(HERE, "check.py")
LAYERS = "core:\ntrace: core\nanalysis: core trace\ncpath: core trace\n"


def tree(d, files, objdir="obj"):
    os.makedirs(os.path.join(d, "src"), exist_ok=True)
    with open(os.path.join(d, "src", "layers.txt"), "w") as f:
        f.write(LAYERS)
    for path, code in files.items():
        src = os.path.join(d, "src", path)
        os.makedirs(os.path.dirname(src), exist_ok=True)
        with open(src, "w") as f:
            f.write(code)
        obj = os.path.join(d, "build", objdir, "src", path[:-2] + ".o")
        os.makedirs(os.path.dirname(obj), exist_ok=True)
        subprocess.run(["cc", "-c", src, "-o", obj], check=True)
    return subprocess.run([sys.executable, CHECK, os.path.join(d, "build"), d], capture_output=True, text=True)


class ThisBuild(unittest.TestCase):
    def test_every_call_between_folders_goes_down(self):
        build = os.environ.get("BUILD", "build")
        p = subprocess.run([sys.executable, CHECK, build], capture_output=True, text=True)
        self.assertEqual(p.returncode, 0, p.stdout + p.stderr)
        self.assertIn("all downward", p.stdout)


class LayerCheck(unittest.TestCase):
    def verdict(self, files, rc, said):
        """The checker on a tree of these files: exit status rc, and said in what it prints."""
        with tempfile.TemporaryDirectory() as d:
            p = tree(d, files)
            self.assertEqual(p.returncode, rc, p.stdout)
            self.assertIn(said, p.stdout)

    def test_downward_calls_pass(self):
        self.verdict({"core/a.c": "int core_f(void) { return 1; }\n",
                      "analysis/b.c": "int core_f(void); int an_f(void) { return core_f(); }\n"},
                     0, "all downward")

    def call_into_analysis_fails(self, folder, fn):
        """fn of folder calls an_f of analysis/, a folder its layer does not sit on: refused, named."""
        self.verdict({f"{folder}/a.c": f"int an_f(void); int {fn}(void) {{ return an_f(); }}\n",
                      "analysis/b.c": "int an_f(void) { return 2; }\n"},
                     1, f"src/{folder}/a.c calls an_f of src/analysis/")

    def test_upward_call_fails(self):
        self.call_into_analysis_fails("core", "core_f")

    def test_sideways_call_fails(self):
        self.call_into_analysis_fails("cpath", "cp_f")

    def test_files_calling_one_way_pass(self):
        self.verdict({"cpath/leaf.c": "int cp_leaf(void) { return 1; }\n",
                      "cpath/mid.c": "int cp_leaf(void); int cp_mid(void) { return cp_leaf(); }\n",
                      "cpath/top.c": "int cp_leaf(void); int cp_mid(void); int cp_top(void) { return cp_mid() + cp_leaf(); }\n"},
                     0, "3 file-to-file calls inside folders, all one way")

    def test_file_calling_back_into_its_caller_fails(self):
        self.verdict({"cpath/a.c": "int cp_b(void); int cp_a(void) { return cp_b(); }\n",
                      "cpath/b.c": "extern int cp_state; int cp_b(void) { return cp_state; }\n",
                      "cpath/c.c": "int cp_a(void); int cp_state = 1; int cp_c(void) { return cp_a(); }\n"},
                     1, "a circle of files that call each other: src/cpath/a.c -> b.c (cp_b); "
                        "src/cpath/b.c -> c.c (cp_state); src/cpath/c.c -> a.c (cp_a)")

    def test_circle_in_a_folder_built_position_independent_fails(self):
        # src/tracer is built only under obj-pic/ (libhtatrace): its files are checked there
        with tempfile.TemporaryDirectory() as d:
            p = tree(d, {"core/a.c": "int core_f(void) { return 1; }\n"})
            self.assertEqual(p.returncode, 0, p.stdout)
            p = tree(d, {"cpath/a.c": "int cp_b(void); int cp_a(void) { return cp_b(); }\n",
                         "cpath/b.c": "int cp_a(void); int cp_b(void) { return cp_a(); }\n"}, objdir="obj-pic")
            self.assertEqual(p.returncode, 1)
            self.assertIn("a circle of files that call each other: src/cpath/a.c -> b.c (cp_b); "
                          "src/cpath/b.c -> a.c (cp_a)", p.stdout)

    def test_folder_without_a_layer_fails(self):
        self.verdict({"core/a.c": "int core_f(void) { return 1; }\n",
                      "newthing/c.c": "int nt_f(void) { return 3; }\n"},
                     1, "src/newthing/ has no line")


if __name__ == "__main__":
    unittest.main()
