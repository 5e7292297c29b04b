"""One opened trace: the libhta session behind a TraceAnalysis (the ranks loaded once, their views kept),
the window of the next call, and analyses run by name.

The session's pointer is reached only through use(): under the session's lock, and only while it is open.
close() takes the same lock, so it waits for a call another thread is in, and every call after it raises
HtaError ("the trace was closed") instead of handing libhta a freed or NULL session."""
import contextlib
import ctypes as C
import threading
import warnings

from . import _args
from ._lib import HtaError, Result, call, lib, opts_text

__all__ = ["Session"]


class Session:
    def __init__(self, path, ranks=None, hta_compat=False, include_last_step=False, threads=0):
        self.ptr = None  # first: __del__ runs on a half-made object too
        self.path = _args.path("trace path", path)
        rk = _args.ints("ranks", ranks, 0, 2**31 - 1)
        threads = _args.integer("threads", threads, 0, 64)
        hta_compat = _args.flag("hta_compat", hta_compat)
        include_last_step = _args.flag("include_last_profiler_step", include_last_step)
        self.window = None
        # a run context is used by one thread at a time, and ctypes lets go of the GIL during a call
        self.lock = threading.RLock()
        p = C.c_void_p()
        rk = ",".join(map(str, rk)) if rk is not None else None
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
        """Frees the session; waits for a call another thread is in.  Closing twice is nothing."""
        lock = getattr(self, "lock", None)
        if lock is None:
            return
        with lock:
            if self.ptr:
                lib.hta_py_close(self.ptr)
                self.ptr = None

    @contextlib.contextmanager
    def use(self):
        """The open session's pointer, the lock held while the caller uses it (and what it points into)."""
        with self.lock:
            if not self.ptr:
                raise HtaError("the trace was closed", "ECLOSED")
            yield self.ptr

    @property
    def closed(self):
        return not self.ptr

    def set_window(self, window):
        """The window of the next calls (hta/view.h syntax: '10ms:25ms', 'annot:ProfilerStep#3'); None: all."""
        w = _args.text("window", window, none=True) or ""
        with self.use() as p:
            if w != (self.window or ""):
                call(lib.hta_py_set_window, p, w.encode())
                self.window = w or None

    def run(self, name, window=None, **opts):
        text = opts_text(**opts)
        with self.use() as p:
            self.set_window(window)
            r = C.c_void_p()
            call(lib.hta_py_run, p, name.encode(), text, C.byref(r))
            return Result(r)

    @property
    def ranks(self):
        with self.use() as p:
            return [lib.hta_py_rank(p, k) for k in range(lib.hta_py_nranks(p))]
