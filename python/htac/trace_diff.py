"""TraceDiff: HTA's comparison of two traces (analyses.md §15) over libhta: LabeledTrace,
TraceDiff.compare_traces, TraceDiff.ops_diff and the two plots."""
import contextlib
import ctypes as C
import enum
import random
import re

from . import _args, _plot
from ._lib import HtaError, Result, call, lib, opts_text
from ._session import Session
from .trace import Trace

__all__ = ["DeviceType", "LabeledTrace", "TraceDiff"]


class DeviceType(enum.Enum):
    CPU = "cpu"
    GPU = "gpu"
    ALL = "all"


class LabeledTrace:
    """A trace and its label: LabeledTrace(label="Control", trace_dir=...)."""

    def __init__(self, label=None, t=None, trace_dir=None, hta_compat=False):
        self.label = _args.text("label", label) if label is not None else f"t{random.randint(0, 10)}"
        if t is not None and trace_dir is None:
            trace_dir = getattr(t, "trace_dir", None) or getattr(getattr(t, "_s", None), "path", None)
        if trace_dir is None:
            raise ValueError("LabeledTrace needs trace_dir (or a TraceAnalysis as t)")
        self.trace_dir = trace_dir
        self._s = Session(trace_dir, hta_compat=hta_compat)
        self.t = Trace(self._s)

    def close(self):
        """Frees the loaded trace; every call after it raises HtaError ("the trace was closed")."""
        self._s.close()

    def ranks(self):
        return self._s.ranks

    def iterations(self):
        out = set()
        for s in self.t.symbols():
            m = re.match(r"ProfilerStep\s*#\s*(\d+)$", s)
            if m:
                out.add(int(m.group(1)))
        return sorted(out)


def _labeled(x, label):
    return x if isinstance(x, LabeledTrace) else LabeledTrace(label=label, trace_dir=x)


class TraceDiff:
    @classmethod
    def _diff(cls, control, test, control_rank, test_rank, control_iteration, test_iteration, device_type,
              use_short_name):
        control = _labeled(control, "Control")
        test = _labeled(test, "Test")
        dev = device_type.value if isinstance(device_type, DeviceType) else \
            _args.text("device_type", device_type).lower()
        tl = test.label if test.label != control.label else f"{test.label}_control_test"

        def it(name, v):
            if isinstance(v, (list, tuple)):
                if not v:
                    raise HtaError(f"{name}: an empty list")
                v = v[0]
            return _args.integer(name, v, 0, 2**62, none=True)
        text = opts_text(short_names=_args.flag("use_short_name", use_short_name), device=dev,
                         control_rank=_args.integer("control_rank", control_rank, 0, 2**31 - 1, none=True),
                         test_rank=_args.integer("test_rank", test_rank, 0, 2**31 - 1, none=True),
                         control_iteration=it("control_iteration", control_iteration),
                         test_iteration=it("test_iteration", test_iteration),
                         control_label=control.label, test_label=tl)
        r = C.c_void_p()
        # both sessions held (in one order: two diffs of the same pair the other way round cannot deadlock)
        with contextlib.ExitStack() as held:
            ptrs = {}
            for s in sorted({id(control._s): control._s, id(test._s): test._s}.items()):
                ptrs[s[0]] = held.enter_context(s[1].use())
            call(lib.hta_py_diff, ptrs[id(control._s)], ptrs[id(test._s)], text, C.byref(r))
        return Result(r)

    @classmethod
    def compare_traces(cls, control, test, control_rank=None, test_rank=None, control_iteration=None,
                       test_iteration=None, device_type=DeviceType.ALL, use_short_name=False):
        """Per operator/kernel name: counts and total durations in one iteration of one rank of each trace."""
        res = cls._diff(control, test, control_rank, test_rank, control_iteration, test_iteration, device_type,
                        use_short_name)
        df = res.frame("compare_traces")
        key = df.columns[0]
        return df.set_index(key)

    @classmethod
    def ops_diff(cls, control, test, control_rank=None, test_rank=None, control_iteration=None,
                 test_iteration=None, device_type=DeviceType.ALL):
        """-> {"added", "deleted", "increased", "decreased", "unchanged": [names]}."""
        res = cls._diff(control, test, control_rank, test_rank, control_iteration, test_iteration, device_type,
                        False)
        df = res.frame("ops_diff")
        out = {k: [] for k in ("added", "deleted", "increased", "decreased", "unchanged")}
        for c, n in zip(df["category"], df["name"]):
            out.setdefault(c, []).append(n)
        return out

    @classmethod
    def visualize_counts_diff(cls, df, show_image=True, export_image_path=None):
        d = df.reset_index()
        _plot.bar(d, d.columns[0], "diff_counts", "Operator count differences")

    @classmethod
    def visualize_duration_diff(cls, df, show_image=True, export_image_path=None):
        d = df.reset_index()
        _plot.bar(d, d.columns[0], "diff_duration", "Operator duration differences")
