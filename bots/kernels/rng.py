"""A tiny seedable xorshift64* generator for the compiled kernels.

Numba's own ``np.random`` is one global stream per thread; search workers need
an explicit, per-search seed to be reproducible, and xorshift is cheaper.
The state is a one-element ``uint64`` array so kernels can advance it in place.
"""

from __future__ import annotations

import numba
import numpy as np

_MULT = np.uint64(0x2545F4914F6CDD1D)
_S12 = np.uint64(12)
_S25 = np.uint64(25)
_S27 = np.uint64(27)
_S33 = np.uint64(33)


def new_rng(seed: int) -> np.ndarray:
    """A generator state for ``seed`` (any int; zero is remapped, xorshift must not be 0)."""
    mixed = (seed * 0x9E3779B97F4A7C15 + 0x632BE59BD9B4E019) & 0xFFFFFFFFFFFFFFFF
    return np.array([mixed or 0x1234567], dtype=np.uint64)


@numba.njit(cache=True, nogil=True)
def next31(rng: np.ndarray) -> int:
    """Advance the generator and return 31 random bits as a non-negative int64."""
    x = rng[0]
    x ^= x >> _S12
    x ^= x << _S25
    x ^= x >> _S27
    rng[0] = x
    return int(np.int64((x * _MULT) >> _S33))


@numba.njit(cache=True, nogil=True)
def below(rng: np.ndarray, n: int) -> int:
    """A uniform integer in ``[0, n)`` (multiply-shift, no division)."""
    return (next31(rng) * n) >> 31
