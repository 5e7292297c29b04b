"""The loaded trace as columns: every rank's events (ts and dur in int64 ns, names and categories as
pandas categoricals, pid, tid, stream, correlation, the derived parent, partner, depth and iteration) for
one's own pandas work.  The arrays come from libhta's rank model without a loop over rows in Python."""
import ctypes as C

import numpy as np

from ._lib import call, lib

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
    @property
    def ranks(self):
        return [lib.hta_py_rank(self._s.ptr, k) for k in range(lib.hta_py_nranks(self._s.ptr))]

    def get_ranks(self):
        return self.ranks

    def _pos(self, rank):
        rs = self.ranks
        if rank is None:
            return 0
        if rank not in rs:
            raise ValueError(f"rank {rank} is not loaded (ranks: {rs})")
        return rs.index(rank)

    def path(self, rank):
        return lib.hta_py_rank_path(self._s.ptr, self._pos(rank)).decode()

    def symbols(self):
        """Every name and category, by symbol id (numpy object array)."""
        if self._syms is None:
            from ._lib import split_strs
            n, ln = C.c_size_t(), C.c_size_t()
            p = lib.hta_py_symbols(self._s.ptr, C.byref(n), C.byref(ln))
            if not p:
                raise MemoryError("htac: out of memory reading the symbols")
            self._syms = split_strs(C.string_at(p, ln.value), n.value)
        return self._syms

    # ---- raw columns ----
    def _col(self, k, name):
        code = C.c_char()
        p = lib.hta_py_rank_col(self._s.ptr, k, name.encode(), C.byref(code))
        n = lib.hta_py_rank_nrows(self._s.ptr, k)
        if not n:
            return np.empty(0, dtype=np.dtype(_CT[code.value.decode()] if p else np.int64))
        return np.ctypeslib.as_array(C.cast(p, C.POINTER(_CT[code.value.decode()])), (n,))

    def _threads(self, k):
        n = lib.hta_py_rank_nthreads(self._s.ptr, k)
        pid = np.zeros(max(n, 1), np.int64)
        tid = np.zeros(max(n, 1), np.int64)
        lib.hta_py_rank_threads(self._s.ptr, k, pid.ctypes.data, tid.ctypes.data)
        pid, tid = pid[:n], tid[:n]
        texts = [None, None]
        for j, arr in ((0, pid), (1, tid)):
            names = [lib.hta_py_rank_thread_text(self._s.ptr, k, i, j) for i in range(n)]
            if any(x is not None for x in names):
                o = arr.astype(object)
                for i, x in enumerate(names):
                    if x is not None:
                        o[i] = x.decode("utf-8", "replace")
                texts[j] = o
        return pid, tid, texts[0], texts[1]

    def _streams(self, k):
        n = C.c_size_t()
        p = lib.hta_py_rank_streams(self._s.ptr, k, C.byref(n))
        return np.ctypeslib.as_array(C.cast(p, C.POINTER(C.c_int64)), (n.value,)).copy()

    def _cats(self):
        n = C.c_size_t()
        p = lib.hta_py_cats(self._s.ptr, C.byref(n))
        if not n.value:
            return np.empty(0, np.uint32)
        return np.ctypeslib.as_array(C.cast(p, C.POINTER(C.c_uint32)), (n.value,)).copy()

    def _view(self, k):
        row, ts, dur, n = C.c_void_p(), C.c_void_p(), C.c_void_p(), C.c_size_t()
        with self._s.lock:
            call(lib.hta_py_view, self._s.ptr, k, C.byref(row), C.byref(ts), C.byref(dur), C.byref(n))
        m = n.value
        if not m:
            return np.empty(0, np.uint32), np.empty(0, np.int64), np.empty(0, np.int64)
        as_ = np.ctypeslib.as_array
        return (as_(C.cast(row, C.POINTER(C.c_uint32)), (m,)).copy(),
                as_(C.cast(ts, C.POINTER(C.c_int64)), (m,)).copy(),
                as_(C.cast(dur, C.POINTER(C.c_int64)), (m,)).copy())

    def columns(self, rank=None):
        """Rank's rows as written (file order): a dict of numpy arrays, copies."""
        k = self._pos(rank)
        d = {name: self._col(k, name).copy() for name in
             ("index", "ts", "dur", "name", "cat", "thread", "stream", "correlation", "external_id",
              "partner", "parent", "depth", "iteration")}
        return d

    def events(self, rank=None, view=True, window=None):
        """The events of `rank` (default: the first loaded) as a DataFrame; see the class."""
        import pandas as pd
        self._s.set_window(window)  # as every call: the window given, else the whole trace
        k = self._pos(rank)
        c = self.columns(self.ranks[k])
        syms = self.symbols()
        cats = self._cats()
        pid, tid, ptext, ttext = self._threads(k)
        streams = self._streams(k)
        rows = None
        ts, dur = c["ts"], c["dur"]
        if view:
            rows, ts, dur = self._view(k)
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
        return {r: self.events(r, view=view) for r in self.ranks}
