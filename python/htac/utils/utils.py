"""Helpers HTA's notebooks import from hta.utils.utils: shorten_name (analyses.md §0.4) and
flatten_column_names."""
import re

__all__ = ["shorten_name", "flatten_column_names"]

_MEMORY = re.compile(r"^(hip)?Memcpy|^(hip)?Memset|^dma")


def shorten_name(name):
    """'void ns::kernel<T>(args)' -> 'ns::kernel'; memory kernels and names without < or ( unchanged."""
    if not isinstance(name, str) or _MEMORY.match(name) or ("<" not in name and "(" not in name):
        return name
    stack = []
    for ch in name.replace("->", ""):
        if ch == ">":
            while stack and stack.pop() != "<":
                pass
        elif ch == ")":
            while stack and stack.pop() != "(":
                pass
        else:
            stack.append(ch)
    return "".join(stack).split(" ")[-1]


def flatten_column_names(df):
    """Two-level column names joined by '_' (('memory_bw_gbps', 'mean') -> 'memory_bw_gbps_mean'), in place."""
    if hasattr(df.columns, "levels"):
        df.columns = ["_".join(str(x) for x in c if str(x)) for c in df.columns]
    return df
