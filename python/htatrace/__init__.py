"""htatrace: named scopes for training scripts, over libhtatrace (ctypes, stdlib only).

    import htatrace as tracers

    with tracers.scope("forward", layer=3):          # args: int, float, str (others: str())
        ...
    @tracers.scope("optimizer_step")                 # as a decorator
    def step(): ...

    with tracers.scope("iteration", ctx={"micro_batch": 0}, slots=["loss"]):
        tracers.get("micro_batch")                   # -> 0, from any descendant
        tracers.set("loss", 2.5)                     # recorded as an arg of "iteration"
    with tracers.scope(None, ctx={"phase": "bwd"}):  # no name: context only, not timed
        ...
    tracers.tick("checkpoint", step=10)              # instant event
    tracers.flush()                                  # also done at exit

The shared library is found through $HTATRACE_LIB, next to this package, in
the repository's build/ folder, or on the loader path.  See docs/tracer.md.
"""
import atexit as _atexit
import ctypes as _C
import functools as _functools
import os as _os
import sys as _sys
import threading as _threading

__all__ = ["scope", "tick", "get", "set", "init", "flush", "discard", "shutdown",
           "thread_name", "output_path", "gpu_available", "depth", "TracerError"]

INT, DOUBLE, STR = 1, 2, 3
_ERRORS = {-1: "EINVAL", -2: "ENOMEM", -3: "EIO", -4: "ENOENT", -5: "ESTATE", -6: "ENOCUDA",
           -7: "DISABLED"}
_ENOENT, _ENOCUDA, _DISABLED = -4, -6, -7


class TracerError(RuntimeError):
    def __init__(self, code, what):
        super().__init__("%s: %s" % (what, _ERRORS.get(code, code)))
        self.code = code


class _U(_C.Union):
    _fields_ = [("i", _C.c_int64), ("d", _C.c_double), ("s", _C.c_char_p)]


class _Value(_C.Structure):
    _fields_ = [("type", _C.c_int), ("u", _U)]


class _Arg(_C.Structure):
    _fields_ = [("key", _C.c_void_p), ("value", _Value)]


class _Desc(_C.Structure):
    _fields_ = [("name", _C.c_void_p), ("args", _C.POINTER(_Arg)), ("nargs", _C.c_int),
                ("ctx", _C.POINTER(_Arg)), ("nctx", _C.c_int),
                ("slots", _C.POINTER(_C.c_void_p)), ("nslots", _C.c_int),
                ("gpu", _C.c_int), ("stream", _C.c_void_p)]


class _Config(_C.Structure):
    _fields_ = [("rank", _C.c_int), ("world_size", _C.c_int), ("dp", _C.c_int), ("pp", _C.c_int),
                ("tp", _C.c_int), ("file_pattern", _C.c_char_p), ("flush_at_exit", _C.c_int),
                ("gpu", _C.c_int), ("chunk_bytes", _C.c_size_t), ("max_bytes_per_thread", _C.c_size_t)]


def _find_lib():
    env = _os.environ.get("HTATRACE_LIB")
    if env:
        return env
    here = _os.path.dirname(_os.path.abspath(__file__))
    cands = [_os.path.join(here, "libhtatrace.so")]
    root = _os.path.dirname(_os.path.dirname(here))
    cands += [_os.path.join(root, b, "libhtatrace.so") for b in (_os.environ.get("BUILD", "build"), "build")]
    for c in cands:
        if _os.path.exists(c):
            return c
    return "libhtatrace.so"  # the dynamic loader's search path


_lib = _C.CDLL(_find_lib())
_lib.hta_tracer_intern.restype = _C.c_void_p
_lib.hta_tracer_intern.argtypes = [_C.c_char_p]
_lib.hta_tracer_begin.argtypes = [_C.c_void_p]
_lib.hta_tracer_begin_desc.argtypes = [_C.POINTER(_Desc)]
_lib.hta_tracer_tick.argtypes = [_C.c_void_p, _C.POINTER(_Arg), _C.c_int]
_lib.hta_tracer_get.argtypes = [_C.c_void_p, _C.POINTER(_Value)]
_lib.hta_tracer_set.argtypes = [_C.c_void_p, _C.POINTER(_Value)]
_lib.hta_tracer_init.argtypes = [_C.POINTER(_Config)]
_lib.hta_tracer_flush_path.argtypes = [_C.c_char_p, _C.c_size_t]
_lib.hta_tracer_output_path.argtypes = [_C.c_char_p, _C.c_size_t]
_lib.hta_tracer_thread_name.argtypes = [_C.c_char_p]
_begin, _end, _begin_desc = _lib.hta_tracer_begin, _lib.hta_tracer_end, _lib.hta_tracer_begin_desc

_names = {}
_names_lock = _threading.Lock()


def _intern(s):
    """Library-owned pointer for a name or key (the C side keeps pointers)."""
    p = _names.get(s)
    if p is None:
        with _names_lock:
            p = _lib.hta_tracer_intern(str(s).encode("utf-8", "replace"))
            if not p:
                raise MemoryError("hta_tracer_intern")
            _names[s] = p
    return p


def _fill(v, value):
    if isinstance(value, bool) or (isinstance(value, int) and -2**63 <= value < 2**63):
        v.type, v.u.i = INT, int(value)
    elif isinstance(value, float):
        v.type, v.u.d = DOUBLE, value
    else:
        v.type, v.u.s = STR, (value if isinstance(value, str) else str(value)).encode("utf-8", "replace")


def _args(d):
    if not d:
        return None, 0
    arr = (_Arg * len(d))()
    for a, (k, val) in zip(arr, d.items()):
        a.key = _intern(k)
        _fill(a.value, val)
    return arr, len(d)


def _stream_ptr(stream):
    if stream is None:
        torch = _sys.modules.get("torch")  # current stream, when PyTorch is in use
        try:
            if torch is not None and torch.cuda.is_available() and torch.cuda.is_initialized():
                return torch.cuda.current_stream().cuda_stream
        except Exception:
            pass
        return None
    if isinstance(stream, int):
        return stream
    return getattr(stream, "cuda_stream", None)


class scope:
    """A timed scope: context manager or decorator.

    scope(name, *, ctx=None, slots=None, gpu=False, stream=None, args=None, **kwargs)
    kwargs (and the args dict) become the event's args.  name=None makes a
    context-only scope.  gpu=True also times the scope on the GPU (CUDA events
    on `stream`, default: PyTorch's current stream, else the default stream).
    """

    __slots__ = ("name", "_plain", "_desc", "_keep", "_kw")

    def __init__(self, name=None, *, ctx=None, slots=None, gpu=False, stream=None, args=None, **kwargs):
        self.name = name
        self._kw = dict(ctx=ctx, slots=slots, gpu=gpu, stream=stream, args=args, **kwargs)
        allargs = dict(args or {}, **kwargs)
        namep = _intern(name) if name is not None else None
        self._plain = namep if (name is not None and not allargs and not ctx and not slots and not gpu) else None
        self._desc = None
        if self._plain is None:
            a, na = _args(allargs)
            c, nc = _args(ctx)
            sl = None
            if slots:
                sl = (_C.c_void_p * len(slots))(*[_intern(s) for s in slots])
            self._desc = _Desc(namep, a, na, c, nc, sl, len(slots or ()), 1 if gpu else 0,
                               _stream_ptr(stream) if gpu else None)
            self._keep = (a, c, sl)

    def __enter__(self):
        if self._plain is not None:
            rc = _begin(self._plain)
        else:
            if self._desc.gpu and self._kw["stream"] is None:
                self._desc.stream = _stream_ptr(None)
            rc = _begin_desc(_C.byref(self._desc))
        if rc not in (0, _ENOCUDA, _DISABLED):
            raise TracerError(rc, "begin %r" % (self.name,))
        return self

    def __exit__(self, *exc):
        _end()
        return False

    def __call__(self, fn):
        @_functools.wraps(fn)
        def wrapper(*a, **k):
            with self:
                return fn(*a, **k)
        return wrapper


def tick(name, **args):
    """An instant event on this thread."""
    a, n = _args(args)
    rc = _lib.hta_tracer_tick(_intern(name), a, n)
    if rc not in (0, _DISABLED):
        raise TracerError(rc, "tick %r" % (name,))


_MISSING = object()


def get(key, default=_MISSING):
    """The ctx value `key` of the innermost open scope that has it."""
    v = _Value()
    rc = _lib.hta_tracer_get(_intern(key), _C.byref(v))
    if rc != 0:
        if default is not _MISSING:
            return default
        raise KeyError(key)
    if v.type == INT:
        return v.u.i
    if v.type == DOUBLE:
        return v.u.d
    return v.u.s.decode("utf-8", "replace")


def set(key, value):  # noqa: A001 - the tracer API name
    """Fills the slot `key` of the innermost open scope declaring it."""
    v = _Value()
    _fill(v, value)
    rc = _lib.hta_tracer_set(_intern(key), _C.byref(v))
    if rc == _ENOENT:
        raise KeyError(key)
    if rc not in (0, _DISABLED):
        raise TracerError(rc, "set %r" % (key,))


def init(rank=None, world_size=None, dp=None, pp=None, tp=None, file_pattern=None,
         flush_at_exit=None, gpu=None, chunk_bytes=0, max_bytes_per_thread=0):
    """Configures the tracer; None means environment, then defaults (see docs)."""
    def n(x):
        return -1 if x is None else int(x)
    cfg = _Config(n(rank), n(world_size), n(dp), n(pp), n(tp),
                  file_pattern.encode() if file_pattern else None, n(flush_at_exit), n(gpu),
                  chunk_bytes, max_bytes_per_thread)
    rc = _lib.hta_tracer_init(_C.byref(cfg))
    if rc != 0:
        raise TracerError(rc, "init")


def flush():
    """Writes the rank's trace file now; returns its path."""
    buf = _C.create_string_buffer(4096)
    rc = _lib.hta_tracer_flush_path(buf, len(buf))
    if rc != 0:
        raise TracerError(rc, "flush")
    return buf.value.decode()


def output_path():
    buf = _C.create_string_buffer(4096)
    rc = _lib.hta_tracer_output_path(buf, len(buf))
    if rc != 0:
        raise TracerError(rc, "output_path")
    return buf.value.decode()


def discard():
    _lib.hta_tracer_discard()


def shutdown():
    """Frees everything (no flush).  Only when no other thread records."""
    with _names_lock:
        _lib.hta_tracer_shutdown()
        _names.clear()


def thread_name(name):
    _lib.hta_tracer_thread_name(str(name).encode("utf-8", "replace"))


def gpu_available():
    return bool(_lib.hta_tracer_gpu_available())


def depth():
    return _lib.hta_tracer_depth()


# Flush before the interpreter (and CUDA through PyTorch) shuts down; the C
# exit handler rewrites the same file later with nothing new.
_atexit.register(_lib.hta_tracer_exit_flush)
