#!/usr/bin/python3
# Prints the expected permutations hard-coded in tests/unit/util.c, from the real numpy (Debian's
# python3-numpy 1.24, the version HTA's goldens were made with): numpy's argsort(kind="quicksort") and
# pandas 1.5's nargsort(ascending=False) on keys with many ties.  Only needed to regenerate them.
import textwrap

import numpy as np


def keys(n, k, seed):
    """n digits in [0, k): a small LCG, so the C test can hold the input as a digit string."""
    x, out = seed, []
    for _ in range(n):
        x = (x * 1103515245 + 12345) % 2**31
        out.append((x >> 16) % k)
    return "".join(map(str, out))


def desc(v):
    """pandas 1.5 nargsort(items, kind="quicksort", ascending=False) without NaN."""
    idx = np.arange(len(v))[::-1]
    return idx[v[::-1].argsort(kind="quicksort")][::-1]


def show(name, digits, perm):
    body = textwrap.fill(", ".join(map(str, perm)), 108, initial_indent=" " * 9, subsequent_indent=" " * 9)
    text = '"\n     "'.join(digits[i:i + 100] for i in range(0, len(digits), 100))
    print(f'    /* {name} */\n    {{"{text}",\n     (const uint32_t[]){{\n{body}}}}},')


print("static const perm_case ASC[] = {")
for n, k, seed in [(10, 3, 1), (16, 2, 2), (17, 2, 3), (18, 3, 4), (40, 4, 5), (40, 1, 6), (100, 10, 7), (257, 5, 8)]:
    d = keys(n, k, seed)
    show(f"asc n={n} k={k}", d, np.array([int(c) for c in d], dtype=np.float64).argsort(kind="quicksort"))
print("};\nstatic const perm_case DESC[] = {")
for n, k, seed in [(17, 2, 9), (40, 5, 10), (100, 10, 11)]:
    d = keys(n, k, seed)
    show(f"desc n={n} k={k}", d, desc(np.array([int(c) for c in d], dtype=np.float64)))
print("};\nstatic const perm_case I64[] = {")
for n, k, seed in [(60, 6, 12), (130, 4, 13)]:
    d = keys(n, k, seed)
    v = np.array([1_700_000_000_000_000 + 1000 * int(c) for c in d], dtype=np.int64)
    show(f"i64 n={n} k={k} (1.7e15 + 1000 * digit)", d, v.argsort(kind="quicksort"))
print("};")
