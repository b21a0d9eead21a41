"""The 256-by-128-bit long division of segment/kernels/numeric_divide.py (Knuth's
algorithm D on 32-bit limbs) against Python ints: quotients, whether they pass 128 bits,
and the half-away rounding decision, over random operands and Hacker's Delight's cases
that need the add-back step."""

from __future__ import annotations

import random

import numpy as np

from segment.kernels.numeric_divide import _divide_wide

_M = (1 << 64) - 1


def _check(n: int, d: int) -> None:
    words = np.array([(n >> 192) & _M, (n >> 128) & _M, (n >> 64) & _M, n & _M], np.uint64)
    scratch = (np.zeros(8, np.uint64), np.zeros(4, np.uint64), np.zeros(9, np.uint64),
               np.zeros(4, np.uint64), np.zeros(8, np.uint64))
    q1, q0, wide, up = _divide_wide(words, np.uint64(d >> 64), np.uint64(d & _M), *scratch)
    q, r = divmod(n, d)
    assert wide == (q >= 1 << 128), (n, d)
    if not wide:
        assert (int(q1) << 64 | int(q0)) == q, (n, d)
    assert up == (r >= d - r), (n, d)


def _limbs(xs: list) -> int:
    return sum(x << (32 * i) for i, x in enumerate(xs))


def test_add_back_cases():
    for u, v in [([3, 0, 0x80000000], [1, 0, 0x20000000]),
                 ([0, 0, 0x80000000, 0x7fffffff], [1, 0, 0x80000000]),
                 ([0, 0xfffffffe, 0, 0x80000000], [0xffff, 0, 0x80000000]),
                 ([0, 0, 0x80000000, 0x7fffffff, 0, 0, 0x80000000, 0x7fffffff],
                  [1, 0, 0x80000000, 0])]:
        _check(_limbs(u), _limbs(v))
    for n, d in [(0, 1 << 64), (5, 1 << 64), ((1 << 256) - 1, (1 << 64) + 1),
                 ((1 << 256) - 1, (1 << 128) - 1), ((3 << 64) + 7, (3 << 64) + 7)]:
        _check(n, d)


def test_random_operands():
    rng = random.Random(5)
    for _ in range(20000):
        bits = rng.randint(65, 128)
        d = rng.getrandbits(bits) | (1 << (bits - 1))
        n = rng.getrandbits(rng.randint(1, 256))
        if rng.random() < 0.3:  # remainders at 0, 1, half and just below the divisor
            n = (d * rng.getrandbits(rng.randint(1, 120)) + rng.choice(
                [0, 1, d // 2, d // 2 + 1, d - 1])) & ((1 << 256) - 1)
        _check(n, d)
