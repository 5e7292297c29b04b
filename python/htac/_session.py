"""One opened trace: the libhta session behind a TraceAnalysis (the ranks loaded once, their views kept),
the window of the next call, and analyses run by name."""
import ctypes as C
import os
import threading
import warnings

from ._lib import HtaError, Result, call, lib, opts_text

__all__ = ["Session"]


class Session:
    def __init__(self, path, ranks=None, hta_compat=False, include_last_step=False, threads=0):
        if not isinstance(path, (str, os.PathLike)):
            raise TypeError(f"trace path must be a str or path, not {type(path).__name__}")
        self.path = os.path.expanduser(os.fspath(path))
        self.ptr = None
        self.window = None
        # a run context is used by one thread at a time, and ctypes lets go of the GIL during a call
        self.lock = threading.RLock()
        p = C.c_void_p()
        rk = ",".join(str(int(r)) for r in ranks) if ranks is not None else None
        call(lib.hta_py_open, self.path.encode(), opts_text(ranks=rk, hta_compat=hta_compat,
                                                            include_last_step=include_last_step,
                                                            threads=threads or None), C.byref(p))
        self.ptr = p
        self.hta_compat = bool(hta_compat)
        self.warnings = [lib.hta_py_warning(p, i).decode("utf-8", "replace")
                         for i in range(lib.hta_py_nwarnings(p))]
        for w in self.warnings:
            warnings.warn(f"htac: {w}", stacklevel=3)

    def __del__(self):
        try:
            self.close()
        except Exception:  # noqa: BLE001 - at interpreter exit the module may be gone already
            pass

    def close(self):
        if getattr(self, "ptr", None):
            with self.lock:
                lib.hta_py_close(self.ptr)
                self.ptr = None

    def _check(self):
        if not self.ptr:
            raise HtaError("the trace was closed")

    def set_window(self, window):
        """The window of the next calls (hta/view.h syntax: '10ms:25ms', 'annot:ProfilerStep#3'); None: all."""
        with self.lock:
            self._check()
            w = "" if window is None else str(window)
            if w != (self.window or ""):
                call(lib.hta_py_set_window, self.ptr, w.encode())
                self.window = w or None

    def run(self, name, window=None, **opts):
        with self.lock:
            self._check()
            self.set_window(window)
            r = C.c_void_p()
            call(lib.hta_py_run, self.ptr, name.encode(), opts_text(**opts), C.byref(r))
            return Result(r)

    @property
    def ranks(self):
        self._check()
        return [lib.hta_py_rank(self.ptr, k) for k in range(lib.hta_py_nranks(self.ptr))]
