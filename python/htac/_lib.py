"""The ctypes binding of libhta's Python C API (include/hta/pyapi.h): loading the library, calling it,
turning an error into a Python exception, and reading result tables column by column into numpy."""
import ctypes as C
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
        "hta_py_col_strs": (P, [P, S, S, C.POINTER(S)]),
        "hta_py_nnotes": (S, [P]),
        "hta_py_note": (CS, [P, S]),
        "hta_py_result_free": (None, [P]),
        "hta_py_cp_build": (I, [P, C.c_int32, CS, C.POINTER(P), E]),
        "hta_py_cp_load": (I, [CS, C.POINTER(P), E]),
        "hta_py_cp_save": (I, [P, CS, E]),
        "hta_py_cp_rank": (C.c_int32, [P]),
        "hta_py_cp_report": (I, [P, CS, C.POINTER(P), E]),
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


def opts_text(**kw):
    """Options as libhta reads them: key=value lines, a list as the key repeated; None leaves a key out."""
    lines = []
    for k, v in kw.items():
        if v is None:
            continue
        for x in (v if isinstance(v, (list, tuple)) else [v]):
            if isinstance(x, bool):
                x = int(x)
            s = str(x)
            if "\n" in s:
                raise HtaError(f"option {k}: a line break in {s!r}")
            lines.append(f"{k}={s}")
    return "\n".join(lines).encode()


def split_strs(buf, n):
    """One buffer of n NUL-terminated cells -> numpy object array (split in C by bytes.split)."""
    if n == 0:
        return np.empty(0, dtype=object)
    cells = buf[:-1].decode("utf-8", "replace").split("\0")
    return np.array(cells, dtype=object)


class Result:
    """The tables of one call, read into numpy columns; frees the C result once read."""

    def __init__(self, ptr):
        self.tables = {}  # name -> (column names, {name: (kind, values, nulls)}) in order
        self.notes = []
        try:
            self._read(ptr)
        finally:
            lib.hta_py_result_free(ptr)

    def _read(self, r):
        for i in range(lib.hta_py_nnotes(r)):
            self.notes.append(lib.hta_py_note(r, i).decode("utf-8", "replace"))
        for t in range(lib.hta_py_ntables(r)):
            name = lib.hta_py_table_name(r, t).decode()
            n = lib.hta_py_table_nrows(r, t)
            cols = {}
            order = []
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
                    ln = C.c_size_t()
                    p = lib.hta_py_col_strs(r, t, c, C.byref(ln))
                    if n and not p:
                        raise MemoryError("htac: out of memory reading a text column")
                    vals = split_strs(C.string_at(p, ln.value) if n else b"", n)
                np_ = lib.hta_py_col_nulls(r, t, c) if n else None
                if np_:
                    nulls = np.ctypeslib.as_array(C.cast(np_, C.POINTER(C.c_uint8)), (n,)).astype(bool)
                    if kind == 2:
                        vals[nulls] = None
                cols[cname] = (kind, vals, nulls)
                order.append(cname)
            self.tables[name] = (order, cols)

    def frame(self, name, columns=None):
        """Table `name` as a DataFrame with numpy dtypes (an INT column with nulls becomes float64 with NaN,
        pandas' own way); None when the result has no such table."""
        import pandas as pd
        if name not in self.tables:
            return None
        order, cols = self.tables[name]
        data = {}
        for c in (columns or order):
            kind, vals, nulls = cols[c]
            if kind == 0 and nulls is not None and nulls.any():
                v = vals.astype(np.float64)
                v[nulls] = np.nan
                vals = v
            data[c] = vals
        return pd.DataFrame(data, columns=list(columns or order))
