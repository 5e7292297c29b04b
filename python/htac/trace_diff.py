"""TraceDiff: HTA's comparison of two traces (analyses.md §15) over libhta: LabeledTrace,
TraceDiff.compare_traces, TraceDiff.ops_diff and the two plots."""
import ctypes as C
import enum
import random
import re

from . import _plot
from ._lib import Result, call, lib, opts_text
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
        self.label = label if label is not None else f"t{random.randint(0, 10)}"
        if t is not None and trace_dir is None:
            trace_dir = getattr(t, "trace_dir", None) or getattr(getattr(t, "_s", None), "path", None)
        if trace_dir is None:
            raise ValueError("LabeledTrace needs trace_dir (or a TraceAnalysis as t)")
        self.trace_dir = trace_dir
        self._s = Session(trace_dir, hta_compat=hta_compat)
        self.t = Trace(self._s)

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
        dev = device_type.value if isinstance(device_type, DeviceType) else str(device_type).lower()
        tl = test.label if test.label != control.label else f"{test.label}_control_test"
        it = (lambda v: None if v is None else int(v[0] if isinstance(v, (list, tuple)) else v))
        r = C.c_void_p()
        call(lib.hta_py_diff, control._s.ptr, test._s.ptr,
             opts_text(short_names=use_short_name, device=dev, control_rank=control_rank, test_rank=test_rank,
                       control_iteration=it(control_iteration), test_iteration=it(test_iteration),
                       control_label=control.label, test_label=tl), C.byref(r))
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
