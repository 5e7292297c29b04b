"""HTA's dtypes for the frames (hta_compat or not, the frames have HTA's shape): pandas downcasts each
integer column of a rank's table to the smallest integer type holding its values (trace-format.md §11),
keeps `dur` integer only when every duration of the file is whole, and merges that leave holes turn
integers into float64.  What each rank's table would have had is computed here from its columns."""
import numpy as np

__all__ = ["downcast", "RankTypes"]


def downcast(lo, hi):
    """pandas.to_numeric(downcast='integer'): the smallest signed type holding [lo, hi]."""
    for t in (np.int8, np.int16, np.int32):
        i = np.iinfo(t)
        if lo >= i.min and hi <= i.max:
            return np.dtype(t).name
    return "int64"


class RankTypes:
    """The dtypes of one rank's HTA table: stream, correlation, index, pid, tid, dur."""

    def __init__(self, trace, rank):
        with trace._s.use() as p:  # the session's columns, read while it is open and not being closed
            self._read(trace, p, trace._pos(rank))

    def _read(self, trace, p, k):
        from ._lib import lib
        streams = trace._streams(p, k)
        st = trace._col(p, k, "stream")
        used = streams[np.unique(st)] if len(st) else np.array([-1])
        self.stream = downcast(min(used.min(), -1), used.max())
        corr = trace._col(p, k, "correlation")
        self.correlation = downcast(min(corr.min(), -1), corr.max()) if len(corr) else "int8"
        ext = trace._col(p, k, "external_id")
        self.external_id = downcast(min(ext.min(), -1), ext.max()) if len(ext) else "int8"
        idx = trace._col(p, k, "index")
        self.index = downcast(0, int(idx.max())) if len(idx) else "int8"
        flags = lib.hta_py_rank_flags(p, k)
        dur = trace._col(p, k, "dur")
        self.dur_int = bool(len(dur)) and not flags & 1
        self.dur = downcast(int(dur.min()) // 1000, int(dur.max()) // 1000) if self.dur_int else "float64"
        pid, tid, ptext, ttext = trace._threads(p, k)
        self.pid = "object" if flags & 2 or ptext is not None else \
            (downcast(pid.min(), pid.max()) if len(pid) else "int64")
        self.tid = "object" if flags & 4 or ttext is not None else \
            (downcast(tid.min(), tid.max()) if len(tid) else "int64")


def common(names):
    """The dtype pandas' concat gives integer frames of these dtypes."""
    names = [n for n in names if n]
    if not names:
        return "int64"
    if "object" in names:
        return "object"
    if "float64" in names:
        return "float64"
    return max(names, key=lambda n: np.dtype(n).itemsize)
