"""The loaded trace as columns: every rank's events (ts and dur in int64 ns, names and categories as
pandas categoricals, pid, tid, stream, correlation, the derived parent, partner, depth and iteration) for
one's own pandas work.  The arrays come from libhta's rank model without a loop over rows in Python."""
import ctypes as C

import numpy as np

from . import _args
from ._lib import call, lib, split_strs

__all__ = ["Trace"]

_CT = {"q": C.c_int64, "I": C.c_uint32, "H": C.c_uint16, "i": C.c_int32, "h": C.c_int16}


class Trace:
    """Events of the ranks a TraceAnalysis loaded (`analyzer.t`).

    `get_trace(rank)` / `events(rank)`: one DataFrame per rank, indexed by the event's position in
    traceEvents.  view=True (the default) gives HTA's table: the rows its filter (or the call's window)
    keeps, times relative to the run's origin (rounded to whole us with hta_compat); view=False gives every
    row as written, on the trace's own clock."""

    def __init__(self, session):
        self._s = session
        self._syms = None
        self._cache = {}

    # ---- what was loaded ----
    # Every method reaches libhta through the session's use(): under its lock, only while it is open (a
    # closed analyzer raises HtaError, never hands libhta a freed session); the arrays are copied before
    # the lock is let go.
    @property
    def ranks(self):
        return self._s.ranks

    def get_ranks(self):
        return self.ranks

    def _pos(self, rank):
        rs = self.ranks
        if rank is None:
            return 0
        return rs.index(_args.loaded_ranks("rank", [rank], rs)[0])

    def path(self, rank):
        with self._s.use() as p:
            return lib.hta_py_rank_path(p, self._pos(rank)).decode()

    def symbols(self):
        """Every name and category, by symbol id (numpy object array)."""
        with self._s.use() as p:
            if self._syms is None:
                n, ln = C.c_size_t(), C.c_size_t()
                b = lib.hta_py_symbols(p, C.byref(n), C.byref(ln))
                if not b:
                    raise MemoryError("htac: out of memory reading the symbols")
                self._syms = split_strs(C.string_at(b, ln.value), n.value)
            return self._syms

    # ---- raw columns (p: the session's pointer, its lock held by the caller) ----
    @staticmethod
    def _col(p, k, name):
        code = C.c_char()
        a = lib.hta_py_rank_col(p, k, name.encode(), C.byref(code))
        n = lib.hta_py_rank_nrows(p, k)
        if not n:
            return np.empty(0, dtype=np.dtype(_CT[code.value.decode()] if a else np.int64))
        return np.ctypeslib.as_array(C.cast(a, C.POINTER(_CT[code.value.decode()])), (n,)).copy()

    @staticmethod
    def _threads(p, k):
        n = lib.hta_py_rank_nthreads(p, k)
        pid = np.zeros(max(n, 1), np.int64)
        tid = np.zeros(max(n, 1), np.int64)
        lib.hta_py_rank_threads(p, k, pid.ctypes.data, tid.ctypes.data)
        pid, tid = pid[:n], tid[:n]
        texts = [None, None]
        for j, arr in ((0, pid), (1, tid)):
            names = [lib.hta_py_rank_thread_text(p, k, i, j) for i in range(n)]
            if any(x is not None for x in names):
                o = arr.astype(object)
                for i, x in enumerate(names):
                    if x is not None:
                        o[i] = x.decode("utf-8", "replace")
                texts[j] = o
        return pid, tid, texts[0], texts[1]

    @staticmethod
    def _streams(p, k):
        n = C.c_size_t()
        a = lib.hta_py_rank_streams(p, k, C.byref(n))
        if not n.value:
            return np.empty(0, np.int64)
        return np.ctypeslib.as_array(C.cast(a, C.POINTER(C.c_int64)), (n.value,)).copy()

    @staticmethod
    def _cats(p):
        n = C.c_size_t()
        a = lib.hta_py_cats(p, C.byref(n))
        if not n.value:
            return np.empty(0, np.uint32)
        return np.ctypeslib.as_array(C.cast(a, C.POINTER(C.c_uint32)), (n.value,)).copy()

    @staticmethod
    def _view(p, k):
        row, ts, dur, n = C.c_void_p(), C.c_void_p(), C.c_void_p(), C.c_size_t()
        call(lib.hta_py_view, p, k, C.byref(row), C.byref(ts), C.byref(dur), C.byref(n))
        m = n.value
        if not m:
            return np.empty(0, np.uint32), np.empty(0, np.int64), np.empty(0, np.int64)
        as_ = np.ctypeslib.as_array
        return (as_(C.cast(row, C.POINTER(C.c_uint32)), (m,)).copy(),
                as_(C.cast(ts, C.POINTER(C.c_int64)), (m,)).copy(),
                as_(C.cast(dur, C.POINTER(C.c_int64)), (m,)).copy())

    def columns(self, rank=None):
        """Rank's rows as written (file order): a dict of numpy arrays, copies."""
        with self._s.use() as p:
            k = self._pos(rank)
            return {name: self._col(p, k, name) for name in
                    ("index", "ts", "dur", "name", "cat", "thread", "stream", "correlation", "external_id",
                     "partner", "parent", "depth", "iteration")}

    def events(self, rank=None, view=True, window=None):
        """The events of `rank` (default: the first loaded) as a DataFrame; see the class."""
        import pandas as pd
        view = _args.flag("view", view)
        with self._s.use() as p:  # one window, one session from the first column to the last
            self._s.set_window(window)  # as every call: the window given, else the whole trace
            k = self._pos(rank)
            c = self.columns(self.ranks[k])
            syms = self.symbols()
            cats = self._cats(p)
            pid, tid, ptext, ttext = self._threads(p, k)
            streams = self._streams(p, k)
            rows = None
            ts, dur = c["ts"], c["dur"]
            if view:
                rows, ts, dur = self._view(p, k)
        sel = (lambda a: a[rows]) if rows is not None else (lambda a: a)
        index = c["index"].astype(np.int64)
        thread = sel(c["thread"])
        par, prt = c["parent"], c["partner"]
        parent = np.where(par >= 0, index[np.maximum(par, 0)], -1)
        partner = np.where(prt >= 0, index[np.maximum(prt, 0)], -1)
        name_codes = sel(c["name"]).astype(np.int64)
        cat_codes = cats[sel(c["cat"]).astype(np.int64)].astype(np.int64) if len(cats) else name_codes
        cat_u, cat_inv = np.unique(cat_codes, return_inverse=True)
        df = pd.DataFrame({
            "ts": ts if view else sel(ts),
            "dur": dur if view else sel(dur),
            "name": pd.Categorical.from_codes(name_codes, categories=pd.Index(syms, dtype=object))
            if len(syms) else pd.Categorical([]),
            "cat": pd.Categorical.from_codes(cat_inv.reshape(-1), categories=pd.Index(syms[cat_u], dtype=object)),
            "pid": (ptext if ptext is not None else pid)[thread],
            "tid": (ttext if ttext is not None else tid)[thread],
            "stream": streams[sel(c["stream"]).astype(np.int64)],
            "correlation": sel(c["correlation"]),
            "external_id": sel(c["external_id"]),
            "parent": sel(parent),
            "partner": sel(partner),
            "depth": sel(c["depth"]).astype(np.int64),
            "iteration": sel(c["iteration"]).astype(np.int64),
        }, index=pd.Index(sel(index), name="index"))
        return df

    get_trace = events

    def get_all_traces(self, view=True):
        with self._s.use():
            return {r: self.events(r, view=view) for r in self.ranks}
