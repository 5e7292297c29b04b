"""The ctypes binding of libhta's Python C API (include/hta/pyapi.h): loading the library, calling it,
turning an error into a Python exception, and reading result tables column by column into numpy."""
import ctypes as C
import math
import os

import numpy as np

__all__ = ["HtaError", "lib", "call", "Result", "opts_text"]

ABI = 1


class HtaError(ValueError):
    """A failure of libhta: bad input (the message names the file and byte offset), a bad option, no data.
    `code` is the library's status name (EIO, EFORMAT, EINVAL, ENODATA, ENOMEM, ENOTTRACE)."""

    def __init__(self, message, code="EINVAL"):
        super().__init__(message)
        self.code = code


_CODES = {1: "EIO", 2: "EFORMAT", 3: "ENOMEM", 4: "EINVAL", 5: "ENODATA", 6: "ENOTTRACE", 7: "ESTOPPED"}


class _Err(C.Structure):
    _fields_ = [("code", C.c_int), ("msg", C.c_char * 1024)]


def _find():
    """HTAC_LIB, then the package's own copy (pip install), then the repository's build folder."""
    env = os.environ.get("HTAC_LIB")
    if env:
        return env
    here = os.path.dirname(os.path.abspath(__file__))
    cands = [os.path.join(here, "libhta.so")]
    root = os.path.dirname(os.path.dirname(here))
    cands += [os.path.join(root, b, "libhta.so") for b in (os.environ.get("BUILD", "build"), "build")]
    for c in cands:
        if os.path.exists(c):
            return c
    return "libhta.so"  # the dynamic loader's search path


def _load():
    path = _find()
    try:
        so = C.CDLL(path)
    except OSError as e:
        raise ImportError(f"htac: cannot load libhta ({path}): {e}; build it with `make` or set HTAC_LIB") from e
    P, S, I, Q = C.c_void_p, C.c_size_t, C.c_int, C.c_int64
    E = C.POINTER(_Err)
    CS = C.c_char_p
    sig = {
        "hta_py_abi": (I, []),
        "hta_py_open": (I, [CS, CS, C.POINTER(P), E]),
        "hta_py_close": (None, [P]),
        "hta_py_nwarnings": (S, [P]),
        "hta_py_warning": (CS, [P, S]),
        "hta_py_set_window": (I, [P, CS, E]),
        "hta_py_run": (I, [P, CS, CS, C.POINTER(P), E]),
        "hta_py_diff": (I, [P, P, CS, C.POINTER(P), E]),
        "hta_py_ntables": (S, [P]),
        "hta_py_table_name": (CS, [P, S]),
        "hta_py_table_nrows": (S, [P, S]),
        "hta_py_table_ncols": (S, [P, S]),
        "hta_py_col_name": (CS, [P, S, S]),
        "hta_py_col_type": (I, [P, S, S]),
        "hta_py_col_ints": (P, [P, S, S]),
        "hta_py_col_floats": (P, [P, S, S]),
        "hta_py_col_nulls": (P, [P, S, S]),
        "hta_py_col_strs": (I, [P, S, S, C.POINTER(P), C.POINTER(P), C.POINTER(S), C.POINTER(S), E]),
        "hta_py_nnotes": (S, [P]),
        "hta_py_note": (CS, [P, S]),
        "hta_py_result_free": (None, [P]),
        "hta_py_cp_build": (I, [P, C.c_int32, CS, C.POINTER(P), E]),
        "hta_py_cp_load": (I, [CS, C.POINTER(P), E]),
        "hta_py_cp_save": (I, [P, P, CS, E]),
        "hta_py_cp_rank": (C.c_int32, [P]),
        "hta_py_cp_report": (I, [P, P, CS, C.POINTER(P), E]),
        "hta_py_cp_overlay": (I, [P, P, CS, CS, C.POINTER(P), E]),
        "hta_py_cp_free": (None, [P]),
        "hta_py_nranks": (S, [P]),
        "hta_py_rank": (C.c_int32, [P, S]),
        "hta_py_rank_path": (CS, [P, S]),
        "hta_py_rank_nrows": (S, [P, S]),
        "hta_py_rank_col": (P, [P, S, CS, C.c_char_p]),
        "hta_py_rank_flags": (I, [P, S]),
        "hta_py_rank_nthreads": (S, [P, S]),
        "hta_py_rank_threads": (None, [P, S, P, P]),
        "hta_py_rank_thread_text": (CS, [P, S, S, I]),
        "hta_py_rank_streams": (P, [P, S, C.POINTER(S)]),
        "hta_py_cats": (P, [P, C.POINTER(S)]),
        "hta_py_symbols": (P, [P, C.POINTER(S), C.POINTER(S)]),
        "hta_py_view": (I, [P, S, C.POINTER(P), C.POINTER(P), C.POINTER(P), C.POINTER(S), E]),
    }
    for name, (res, args) in sig.items():
        f = getattr(so, name)
        f.restype, f.argtypes = res, args
    if so.hta_py_abi() != ABI:
        raise ImportError(f"htac: {path} has C API version {so.hta_py_abi()}, this package wants {ABI}")
    return so


lib = _load()


def call(fn, *args):
    """Calls a libhta function whose last argument is an hta_error; a failure raises HtaError."""
    err = _Err()
    st = fn(*args, C.byref(err))
    if st:
        raise HtaError(err.msg.decode("utf-8", "replace"), _CODES.get(st, str(st)))


class Owned:
    """An object of the library's, held in the attribute named by _held and freed once, by the lib function
    named by _free, when the Python object goes; at interpreter exit lib may already be gone, and then
    nothing is done."""

    _held = _free = ""

    def __del__(self):
        if getattr(self, self._held, None) and lib is not None:
            getattr(lib, self._free)(getattr(self, self._held))
            setattr(self, self._held, None)


def opts_text(**kw):
    """Options as libhta reads them: key=value lines, a list as the key repeated; None leaves a key out."""
    lines = []
    for k, v in kw.items():
        if v is None:
            continue
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(x, bool):
                x = int(x)
            if isinstance(x, float) and not math.isfinite(x):
                raise HtaError(f"option {k}: {x} is not a number libhta takes")
            s = str(x)
            if "\n" in s or "\0" in s:
                raise HtaError(f"option {k}: a line break or NUL in {s!r}")
            lines.append(f"{k}={s}")
    return "\n".join(lines).encode()


def split_strs(buf, n):
    """One buffer of n NUL-terminated cells -> numpy object array (split in C by bytes.split)."""
    if n == 0:
        return np.empty(0, dtype=object)
    cells = buf[:-1].decode("utf-8", "replace").split("\0")
    return np.array(cells, dtype=object)


class Result(Owned):
    """The tables and notes of one call.  A table is read into numpy columns when first asked for (a
    critical path's summary does not pay for its breakdown); the C result is freed with this object."""

    _held, _free = "_r", "hta_py_result_free"

    def __init__(self, ptr):
        self._r = ptr
        self.notes = [lib.hta_py_note(ptr, i).decode("utf-8", "replace") for i in range(lib.hta_py_nnotes(ptr))]
        self._pos = {lib.hta_py_table_name(ptr, t).decode(): t for t in range(lib.hta_py_ntables(ptr))}
        self._cache = {}

    @property
    def tables(self):
        """name -> (column names, {name: (kind, values, nulls)}), in the result's order."""
        return {name: self._table(name) for name in self._pos}

    def __contains__(self, name):
        return name in self._pos

    def names(self):
        return list(self._pos)

    def _table(self, name):
        if name not in self._cache:
            self._cache[name] = self._read(self._r, self._pos[name])
        return self._cache[name]

    @classmethod
    def _read(cls, r, t):
        n = lib.hta_py_table_nrows(r, t)
        cols, order = {}, []
        for c in range(lib.hta_py_table_ncols(r, t)):
            cname = lib.hta_py_col_name(r, t, c).decode("utf-8", "replace")
            kind = lib.hta_py_col_type(r, t, c)
            nulls = None
            if kind == 0:
                p = lib.hta_py_col_ints(r, t, c)
                vals = np.ctypeslib.as_array(C.cast(p, C.POINTER(C.c_int64)), (n,)).copy() if n else \
                    np.empty(0, np.int64)
            elif kind == 1:
                p = lib.hta_py_col_floats(r, t, c)
                vals = np.ctypeslib.as_array(C.cast(p, C.POINTER(C.c_double)), (n,)).copy() if n else \
                    np.empty(0, np.float64)
            else:
                vals, nulls = cls._texts(r, t, c, n)
            np_ = lib.hta_py_col_nulls(r, t, c) if n and kind == 0 else None
            if np_:
                nulls = np.ctypeslib.as_array(C.cast(np_, C.POINTER(C.c_uint8)), (n,)).astype(bool)
            cols[cname] = (kind, vals, nulls)
            order.append(cname)
        return order, cols

    @staticmethod
    def _texts(r, t, c, n):
        """A text column from its codes and distinct texts: numpy indexes the few strings (no per-row
        string objects, no Python loop); a null is None."""
        codes, texts, nt, ln = C.c_void_p(), C.c_void_p(), C.c_size_t(), C.c_size_t()
        call(lib.hta_py_col_strs, r, t, c, C.byref(codes), C.byref(texts), C.byref(nt), C.byref(ln))
        if not n:
            return np.empty(0, dtype=object), None
        distinct = split_strs(C.string_at(texts, ln.value), nt.value)
        distinct = np.append(distinct, None)  # code -1 (null) takes the last entry
        cd = np.ctypeslib.as_array(C.cast(codes, C.POINTER(C.c_int32)), (n,))
        nulls = cd < 0
        return distinct[cd], (nulls if nulls.any() else None)

    def frame(self, name, columns=None):
        """Table `name` as a DataFrame with numpy dtypes (an INT column with nulls becomes float64 with NaN,
        pandas' own way); None when the result has no such table."""
        import pandas as pd
        if name not in self._pos:
            return None
        order, cols = self._table(name)
        data = {}
        for c in (columns or order):
            kind, vals, nulls = cols[c]
            if kind == 0 and nulls is not None and nulls.any():
                v = vals.astype(np.float64)
                v[nulls] = np.nan
                vals = v
            data[c] = vals
        return pd.DataFrame(data, columns=list(columns or order))
