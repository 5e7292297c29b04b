"""CPGraph: the critical path of one rank as `hta critical-path` answers it (by default the simulation
graph's path through the selected span; with hta_compat, or restored from a file, HTA's graph):
summary(), get_critical_path_breakdown(), stats(), save() and restore_cpgraph()."""
import contextlib
import ctypes as C
import os

import numpy as np
import pandas as pd

from .. import _args
from .._lib import HtaError, Result, call, lib, opts_text, Owned

__all__ = ["CPGraph", "restore_cpgraph"]


class CPGraph(Owned):
    """The graph and its path.  Not a networkx graph: its figures are in stats().  A graph built by an
    analyzer is read through its session (its lock held, and only while it is open: after the analyzer's
    close() every method raises HtaError); a restored graph needs none."""

    _held, _free = "_p", "hta_py_cp_free"

    def __init__(self, ptr, data_load=(), analyzer=None):
        self._p = ptr
        self._dl = list(data_load)
        self._a = analyzer
        self.rank = lib.hta_py_cp_rank(ptr)
        self._res = {}

    @classmethod
    def _build(cls, analyzer, rank, annotation, instance, data_load):
        p = C.c_void_p()
        with analyzer._s.use() as s:
            call(lib.hta_py_cp_build, s, int(rank),
                 opts_text(annotation=annotation or None, instance=instance, data_load=data_load or None),
                 C.byref(p))
        return cls(p, data_load, analyzer)

    @contextlib.contextmanager
    def _session(self):
        """The pointer of the open session the graph was built in, its lock held (None for a graph restored
        from a file); HtaError when that session was closed."""
        if self._a is None:
            yield None
        else:
            with self._a._s.use() as p:
                yield p

    def _report(self, whole=False):
        """The report tables; the breakdown of every path edge only when asked for (whole=True): the
        summary and the figures need one row of it."""
        top = 0 if whole else 1
        with self._session() as s:
            if top not in self._res:
                r = C.c_void_p()
                call(lib.hta_py_cp_report, s, self._p, opts_text(top=top), C.byref(r))
                self._res[top] = Result(r)
            return self._res[top]

    def summary(self):
        """The path's time per bound_by class, in % of its length (HTA's Series 'duration')."""
        df = self._report().frame("summary")
        s = pd.Series(df["percentage"].to_numpy(), index=pd.Index(df["bound_by"].to_numpy(), name="bound_by"),
                      name="duration")
        print("Critical Path broken down by boundedness = (in % of duration)")
        return s

    def get_critical_path_breakdown(self):
        """The path's edges, in path order: event_idx, duration, type, s_name, cat, pid, tid, stream, index,
        bound_by (dtypes as HTA's: a merge that leaves edges without an event makes floats)."""
        df = self._report(whole=True).frame("breakdown")
        holes = df["s_name"].isna() | (df["event_idx"].isna() if df["event_idx"].dtype.kind == "f" else False)
        rt = self._a._rank_types(self.rank) if self._a is not None else None
        if rt is not None and rt.dur_int and len(df) and np.all(df["duration"] == np.round(df["duration"])):
            df["duration"] = df["duration"].astype(np.int64)
        if holes.any():
            for c in ("pid", "tid"):
                if rt is not None and rt.__dict__[c] == "object":
                    df[c] = df[c].astype(object)
            df["event_idx"] = df["event_idx"].astype(np.float64)
            for c in ("stream", "index"):
                df[c] = df[c].astype(np.float64)
        elif rt is not None:
            for c, t in (("pid", rt.pid), ("tid", rt.tid), ("stream", rt.stream), ("index", rt.index)):
                if t == "object":
                    df[c] = df[c].astype(object)
                elif df[c].dtype.kind == "i":
                    df[c] = df[c].astype(t)
        return df

    def stats(self):
        """Sizes of the graph and path (graph_nodes, graph_edges, graph_edge_types.*, ...) as a dict."""
        df = self._report().frame("stats")
        return dict(zip(df["name"], df["value"]))

    def save(self, out_dir):
        """Stores the graph in out_dir (created); returns the file's path (restore_cpgraph reads it)."""
        out_dir = _args.path("out_dir", out_dir)
        with self._session() as s:
            os.makedirs(out_dir, exist_ok=True)
            path = os.path.join(out_dir, f"critical_path_graph_rank{self.rank}.htacp")
            call(lib.hta_py_cp_save, s, self._p, path.encode())
        return path

    def _overlay(self, analyzer, output_dir, all_events, all_edges):
        r = C.c_void_p()
        if self._a is not None and self._a is not analyzer:
            raise HtaError("overlay_critical_path_analysis: the graph was built by another TraceAnalysis")
        with analyzer._s.use() as s:
            call(lib.hta_py_cp_overlay, s, self._p, output_dir.encode(),
                 opts_text(all_events=all_events, all_edges=all_edges), C.byref(r))
        return Result(r).notes[0]


def restore_cpgraph(zip_filename, t_full=None, rank=None):
    """A graph saved with CPGraph.save (no trace needed: the file holds what the reports read)."""
    p = C.c_void_p()
    zip_filename = _args.path("zip_filename", zip_filename)
    rank = _args.integer("rank", rank, 0, 2**31 - 1, none=True)
    call(lib.hta_py_cp_load, zip_filename.encode(), C.byref(p))
    g = CPGraph(p)
    if rank is not None and g.rank != rank:
        raise HtaError(f"{zip_filename}: the graph is rank {g.rank}'s, not rank {rank}'s")
    a = getattr(t_full, "_analyzer", None) if t_full is not None else None
    g._a = a
    return g
