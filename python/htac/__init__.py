"""htac: HTA's notebook API backed by hta's C library (libhta), in-process.

The whole migration from Holistic Trace Analysis is the import line:

    from htac.trace_analysis import TraceAnalysis      # was: from hta.trace_analysis import ...
    analyzer = TraceAnalysis(trace_dir="traces/")

The name is HTA's with a "c" (for the C library): a user may have both packages installed.  See
docs/python.md for the migration table and what differs.
"""
from ._lib import HtaError
from .trace import Trace
from .trace_analysis import TraceAnalysis
from .trace_diff import DeviceType, LabeledTrace, TraceDiff

__version__ = "0.1.0"
__all__ = ["HtaError", "Trace", "TraceAnalysis", "TraceDiff", "LabeledTrace", "DeviceType"]
