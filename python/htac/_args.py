"""The checks of every argument a user passes to htac, one per kind of argument (a path, a text, a list of
texts, an integer in a range, a finite number, a flag, a list of integers): every method checks its
arguments through these, so a NaN, a negative count, a NUL in a path or a wrong type is refused the same way
everywhere, with the argument's name, before anything reaches libhta (where a NUL would end a C string and
cut a path silently, and "nan" would parse as a number)."""
import math
import numbers
import operator
import os

from ._lib import HtaError

__all__ = ["ArgTypeError", "path", "text", "texts", "integer", "number", "flag", "ints"]


class ArgTypeError(HtaError, TypeError):
    """An argument of the wrong type: an HtaError (a ValueError) as every refused argument is, and a
    TypeError as Python's own functions raise for one."""


def _plain(name, s):
    if "\0" in s:
        raise HtaError(f"{name}: a NUL character in {s!r}")
    return s


def path(name, v):
    """A file or folder name: str or os.PathLike (not bytes), no NUL; '~' expanded."""
    if isinstance(v, os.PathLike):
        v = os.fspath(v)
    if not isinstance(v, str):
        raise ArgTypeError(f"{name} must be a str or path, not {type(v).__name__}")
    if not v:
        raise HtaError(f"{name}: an empty path")
    return os.path.expanduser(_plain(name, v))


def text(name, v, none=False):
    """A str without NUL or line break (libhta reads options as key=value lines); None when none=True."""
    if v is None and none:
        return None
    if not isinstance(v, str):
        raise ArgTypeError(f"{name} must be a str, not {type(v).__name__}")
    if "\n" in v or "\r" in v:
        raise HtaError(f"{name}: a line break in {v!r}")
    return _plain(name, v)


def texts(name, v):
    """None, one str (a list of one: "occurrence_count" is not eight letters), or an iterable of str."""
    if v is None:
        return None
    if isinstance(v, str):
        return [text(name, v)]
    try:
        items = list(v)
    except TypeError:
        raise ArgTypeError(f"{name} must be a str or a list of str, not {type(v).__name__}") from None
    return [text(name, x) for x in items]


def integer(name, v, lo, hi, none=False):
    """An integer (int, numpy integer; not bool, not float) with lo <= v <= hi."""
    if v is None and none:
        return None
    if isinstance(v, bool) or not isinstance(v, numbers.Integral):
        try:
            if isinstance(v, bool) or isinstance(v, (float, str, bytes)):
                raise TypeError
            v = operator.index(v)
        except TypeError:
            raise ArgTypeError(f"{name} must be an integer, not {type(v).__name__}") from None
    v = int(v)
    if not lo <= v <= hi:
        raise HtaError(f"{name}: {v} (an integer from {lo} to {hi})")
    return v


def number(name, v, lo=-math.inf, hi=math.inf):
    """A finite real number (int or float, not bool) with lo <= v <= hi."""
    if isinstance(v, bool) or not isinstance(v, numbers.Real):
        raise ArgTypeError(f"{name} must be a number, not {type(v).__name__}")
    v = float(v)
    if not math.isfinite(v) or not lo <= v <= hi:
        raise HtaError(f"{name}: {v} (a number from {lo} to {hi})")
    return v


def flag(name, v):
    """True or False (an int 0 or 1, a numpy bool too)."""
    if isinstance(v, bool):
        return v
    if isinstance(v, numbers.Integral) and int(v) in (0, 1):
        return bool(v)
    if type(v).__name__ == "bool_":  # numpy.bool_, not a numbers.Integral
        return bool(v)
    raise ArgTypeError(f"{name} must be True or False, not {v!r}")


def ints(name, v, lo, hi):
    """None, or an iterable of integers each from lo to hi (a list)."""
    if v is None:
        return None
    if isinstance(v, (str, bytes)):
        raise ArgTypeError(f"{name} must be a list of integers, not {type(v).__name__}")
    try:
        items = list(v)
    except TypeError:
        raise ArgTypeError(f"{name} must be a list of integers, not {type(v).__name__}") from None
    return [integer(name, x, lo, hi) for x in items]


def loaded_ranks(name, v, loaded, where=""):
    """An iterable of ranks, each one of the loaded ranks (a list)."""
    rs = ints(name, v, 0, 2**31 - 1)
    missing = [r for r in rs if r not in loaded]
    if missing:
        raise HtaError(f"rank(s) {missing} not loaded{where} (ranks: {loaded})")
    return rs
