"""htatrace: named scopes for training scripts, over libhtatrace (ctypes, stdlib only).

    import htatrace as tracers

    with tracers.scope("forward", layer=3):          # args keep their JSON types
        ...
    @tracers.scope("optimizer_step")                 # as a decorator (async def too)
    def step(): ...

    with tracers.scope("iteration", ctx={"micro_batch": 0}, slots=["loss"]):
        tracers.get("micro_batch")                   # -> 0, from any descendant
        tracers.set("loss", 2.5)                     # recorded as an arg of "iteration"
    with tracers.scope("step", tokens=None):         # every arg can be set by descendants
        tracers.set("tokens", 4096)                  # -> "tokens": 4096 (else null)
    with tracers.scope(None, ctx={"phase": "bwd"}):  # no name: context only, not timed
        ...
    tracers.tick("checkpoint", step=10)              # instant event
    tracers.flush()                                  # also done at exit

Open scopes, ctx and slots belong to the running thread or asyncio task
(contextvars): a task sees the scopes that were open where it was created,
and ending a scope in one task never ends another task's.

The shared library is found through $HTATRACE_LIB, next to this package, in
the repository's build/ folder, or on the loader path.  See docs/tracer.md.
"""
import atexit as _atexit
import contextvars as _cv
import ctypes as _C
import functools as _functools
import inspect as _inspect
import json as _json
import math as _math
import numbers as _numbers
import os as _os
import sys as _sys
import threading as _threading

__all__ = ["scope", "tick", "get", "set", "init", "flush", "discard", "shutdown",
           "thread_name", "output_path", "gpu_available", "depth", "TracerError"]

INT, DOUBLE, STR, BOOL, NULL, JSON = 1, 2, 3, 4, 5, 6
_MAX_TEXT = 4096    # longer string values are cut by the library; JSON text must fit
_MAX_NESTING = 60   # the library refuses JSON nested deeper than 64
_ERRORS = {-1: "EINVAL", -2: "ENOMEM", -3: "EIO", -4: "ENOENT", -5: "ESTATE", -6: "ENOCUDA",
           -7: "DISABLED"}
_ENOCUDA, _DISABLED = -6, -7


class TracerError(RuntimeError):
    """A failed call.  For a write: errno, strerror and filename as OSError has them."""

    def __init__(self, code, what, detail=None, errno=0, filename=None):
        name = _ERRORS.get(code, code)
        super().__init__("%s: %s (%s)" % (what, detail, name) if detail else "%s: %s" % (what, name))
        self.code = code
        self.errno = errno
        self.strerror = _os.strerror(errno) if errno else None
        self.filename = filename


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


class _Id(_C.c_int64):
    """A span id as ctypes returns it: a subclass, so that it stays a C value and
    is passed back to span_end / span_begin without a conversion."""


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
# The hot calls: no argtypes (byref(), arrays, None, small ints and _Id values
# pass as they are), so each costs about 200 ns instead of 300 to 800.
_lib.hta_tracer_span_begin.restype = _Id
_lib.hta_tracer_tick.argtypes = [_C.c_void_p, _C.POINTER(_Arg), _C.c_int]
_lib.hta_tracer_init.argtypes = [_C.POINTER(_Config)]
_lib.hta_tracer_flush_path.argtypes = [_C.c_char_p, _C.c_size_t]
_lib.hta_tracer_output_path.argtypes = [_C.c_char_p, _C.c_size_t]
_lib.hta_tracer_thread_name.argtypes = [_C.c_char_p]
_lib.hta_tracer_last_error.restype = _C.c_char_p
_span_begin, _span_end = _lib.hta_tracer_span_begin, _lib.hta_tracer_span_end
_byref = _C.byref
_NO_PARENT = _Id(0)

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


# ---- values: each keeps its JSON type in the file ----

class _TooDeep(Exception):
    pass


def _clean(v, depth):
    """v as plain JSON data: tuples as lists, non-finite floats as null (JSON has no NaN)."""
    if depth > _MAX_NESTING:
        raise _TooDeep()
    if isinstance(v, float):
        return v if _math.isfinite(v) else None
    if isinstance(v, (list, tuple)):
        return [_clean(x, depth + 1) for x in v]
    if isinstance(v, dict):
        return {k: _clean(x, depth + 1) for k, x in v.items()}
    return v


def _json_default(o):
    if isinstance(o, _numbers.Integral):
        return int(o)
    if isinstance(o, _numbers.Real):
        f = float(o)
        return f if _math.isfinite(f) else None
    if isinstance(o, (set, frozenset)):
        return list(o)
    tolist = getattr(o, "tolist", None)  # numpy arrays and scalars
    if callable(tolist):
        return tolist()
    return str(o)


def _json_text(value):
    """value as JSON text the library accepts, or None (then it is written as str())."""
    try:
        text = _json.dumps(_clean(value, 0), allow_nan=False, default=_json_default, separators=(",", ":"))
    except (_TooDeep, ValueError, TypeError, RecursionError):
        return None  # circular, too deep, keys JSON cannot have
    return text if len(text) <= _MAX_TEXT else None


def _fill(v, value):
    if value is None:
        v.type = NULL
    elif isinstance(value, bool) or type(value).__name__ == "bool_":
        v.type, v.u.i = BOOL, 1 if value else 0
    elif isinstance(value, int) and -2**63 <= value < 2**63:
        v.type, v.u.i = INT, value
    elif isinstance(value, float):
        v.type, v.u.d = DOUBLE, value
    elif isinstance(value, str):
        v.type, v.u.s = STR, value.encode("utf-8", "replace")
    elif isinstance(value, (list, tuple, dict)):
        text = _json_text(value)
        if text is None:
            v.type, v.u.s = STR, str(value).encode("utf-8", "replace")
        else:
            v.type, v.u.s = JSON, text.encode("ascii")
    elif isinstance(value, _numbers.Integral) and not isinstance(value, int):
        _fill(v, int(value))  # numpy integers
    elif isinstance(value, _numbers.Real) and not isinstance(value, int):
        _fill(v, float(value))
    else:  # ints past int64 (exact as text; JSON readers would round them), objects
        v.type, v.u.s = STR, str(value).encode("utf-8", "replace")


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


# ---- the open scopes of this thread / asyncio task ----
# A node is (frame, node below, id of the innermost span open here).
# Immutable, so that a task created inside a scope keeps seeing the scopes
# open at its creation while its creator goes on.  A frame is a list (cheaper
# than an object): [owner scope, ctx dict or None, settable keys or None,
# values set (dict) or None, span id (_Id) or None].

_stack = _cv.ContextVar("htatrace_scopes", default=None)
_OWNER, _CTX, _DECL, _VALS, _SPAN = range(5)


def _set_from(node, key, value):
    while node is not None:
        f = node[0]
        if f[_DECL] is not None and key in f[_DECL]:
            if f[_VALS] is None:
                f[_VALS] = {}
            f[_VALS][key] = value
            return True
        node = node[1]
    return False


def _pop_inner(owner, node):
    """Removes owner's innermost frame from below the top of this context's
    stack (a scope ended out of order); it and the node below it, or (None, None)."""
    above = []
    n = node
    while n is not None and n[0][_OWNER] is not owner:
        above.append(n[0])
        n = n[1]
    if n is None:
        return None, None
    below = rebuilt = n[1]
    for f in reversed(above):
        inner = f[_SPAN] if f[_SPAN] is not None else rebuilt[2] if rebuilt is not None else _NO_PARENT
        rebuilt = (f, rebuilt, inner)
    _stack.set(rebuilt)
    return n[0], below


class scope:
    """A timed scope: context manager or decorator.

    scope(name, *, ctx=None, slots=None, gpu=False, stream=None, args=None, **kwargs)
    kwargs (and the args dict) become the event's args; a descendant's
    set(key, value) replaces one (scope("e", k=None) then set("k", 42) writes
    "k": 42).  ctx: values descendants read with get().  slots: keys
    descendants fill with set(), written only when set; get(key) of a slot
    key gives True unless ctx says otherwise (Megatron's shorthand for
    ctx={key: True}, key=None).  name=None makes a context-only scope.
    gpu=True also times the scope on the GPU (CUDA events on `stream`,
    default: PyTorch's current stream, else the default stream).
    """

    __slots__ = ("name", "_ctx", "_decl", "_desc", "_bdesc", "_keep", "_gpu", "_stream")

    def __init__(self, name=None, *, ctx=None, slots=None, gpu=False, stream=None, args=None, **kwargs):
        self.name = name
        allargs = dict(args or {}, **kwargs)
        slots = list(slots or ())
        c = dict(ctx) if ctx else {}
        for k in slots:
            c.setdefault(k, True)
        self._ctx = c or None
        self._gpu, self._stream = bool(gpu), stream
        self._desc = self._bdesc = None
        if name is not None:
            decl = frozenset(allargs) | frozenset(slots)
            a, na = _args(allargs)
            self._desc = _Desc(_intern(name), a, na, None, 0, None, 0, 1 if gpu else 0,
                               _stream_ptr(stream) if gpu else None)
            self._bdesc = _byref(self._desc)
            self._keep = a
        else:
            decl = frozenset(slots)
        self._decl = decl or None

    def __enter__(self):
        node = _stack.get()
        par = node[2] if node is not None else _NO_PARENT
        desc = self._bdesc
        if desc is None:  # context only
            _stack.set(([self, self._ctx, self._decl, None, None], node, par))
            return self
        if self._gpu and self._stream is None:
            self._desc.stream = _stream_ptr(None)
        sid = _span_begin(desc, par)
        if sid.value > 0:
            _stack.set(([self, self._ctx, self._decl, None, sid], node, sid))
        elif sid.value == 0:  # nothing recorded: HTA_TRACE=0, or over the memory cap
            _stack.set(([self, self._ctx, self._decl, None, None], node, par))
        else:
            raise TracerError(sid.value, "begin %r" % (self.name,))
        return self

    def __exit__(self, et, ev, tb):
        node = _stack.get()
        if node is not None and node[0][_OWNER] is self:  # the usual case: the innermost
            f, below = node[0], node[1]
            _stack.set(below)
        else:
            f, below = _pop_inner(self, node)
            if f is None:
                return False
        vals = f[_VALS]
        if f[_SPAN] is not None:
            if vals:
                a, n = _args(vals)
                _span_end(f[_SPAN], a, n)
            else:
                _span_end(f[_SPAN], None, 0)
        elif vals:
            # context only: what was set into it goes up to whoever declares it
            for k, v in vals.items():
                _set_from(below, k, v)
        return False

    def __call__(self, fn):
        if _inspect.iscoroutinefunction(fn):
            @_functools.wraps(fn)
            async def awrapper(*a, **k):
                with self:
                    return await fn(*a, **k)
            return awrapper

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
    """The ctx value `key` of the innermost open scope that has it (the object itself)."""
    node = _stack.get()
    while node is not None:
        c = node[0][_CTX]
        if c is not None and key in c:
            return c[key]
        node = node[1]
    if default is not _MISSING:
        return default
    raise KeyError(key)


def set(key, value):  # noqa: A001 - the tracer API name
    """Fills `key` in the innermost open scope declaring it (an arg or a slot)."""
    if not _set_from(_stack.get(), key, value):
        raise KeyError(key)


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


def _write_error(rc, what):
    detail = (_lib.hta_tracer_last_error() or b"").decode("utf-8", "replace") or None
    try:
        path = output_path()
    except TracerError:
        path = None
    return TracerError(rc, what, detail, _lib.hta_tracer_last_errno(), path)


def flush():
    """Writes the rank's trace file now; returns its path (None when HTA_TRACE=0).
    Raises TracerError naming the path and the system's reason when it cannot."""
    buf = _C.create_string_buffer(4096)
    rc = _lib.hta_tracer_flush_path(buf, len(buf))
    if rc == _DISABLED:
        return None
    if rc != 0:
        raise _write_error(rc, "flush")
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
    """Scopes open in this thread / task (and C scopes open on this thread)."""
    n, node = 0, _stack.get()
    while node is not None:
        n, node = n + 1, node[1]
    return n + _lib.hta_tracer_depth()


def _at_exit():
    # What Python printed goes out before a trace written to /dev/stdout.
    for s in (_sys.stdout, _sys.stderr):
        try:
            s.flush()
        except Exception:
            pass
    # Flush before the interpreter (and CUDA through PyTorch) shuts down; the
    # C exit handler then finds nothing new and writes nothing.
    _lib.hta_tracer_exit_flush()


_atexit.register(_at_exit)
