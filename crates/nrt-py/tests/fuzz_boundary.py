"""Fuzz harness of the nrt module's boundary: random sequences of the
constructors and size-taking calls (allocate_tensor, Tensor(...),
numpy(), tensor_read/tensor_write, from_numpy, write_from_numpy,
free_tensor) with sizes, offsets, shapes and dtypes drawn from the
extremes: negative, overflowing, beyond any host, objects whose len()
lies, object and structured dtypes, strided arrays.

Each call may raise one of the documented exceptions and nothing else;
a crash (segfault, abort) ends the process, which the caller sees.

    python fuzz_boundary.py [libFuzzer flags]   # with atheris
    python fuzz_boundary.py --random SEED N     # N seeded random inputs

test_fuzz_boundary.py runs it as a child process for a few seconds.
"""

import atexit
import sys
from collections import Counter

import numpy as np

import nrt

try:
    import ml_dtypes
except ImportError:  # the runtime dtypes from ml_dtypes are then skipped
    ml_dtypes = None

# What a call may raise: misuse of the API and sizes the host cannot give.
EXPECTED = (ValueError, TypeError, OverflowError, MemoryError, nrt.NrtError, nrt.NrtpyError)

SIZES = [0, 1, 2, 3, 4, 7, 8, 16, 64, 4096, -1, -(2**63), 2**50, 2**62, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**100]


class Lying:
    """A sequence whose len() claims far more items than it has."""

    def __init__(self, n, items):
        self.n, self.items = n, items

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i < len(self.items):
            return self.items[i]
        raise IndexError(i)


def dtypes():
    out = ["float32", "int8", "uint16", "bool", "float64", "int64", "object", "U3", "S2", "V8", ">f4", "<f4", "complex64",
           "M8[s]", "(2,)f4", np.dtype([("a", "O"), ("b", "f4")]), np.dtype([("x", "f4")]), "nope", None, 3.5, object]
    if ml_dtypes is not None:
        out += [ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e5m2]
    return out


DTYPES = dtypes()


class Draw:
    """Values drawn from the input bytes (zeros once they run out)."""

    def __init__(self, data: bytes):
        self.data, self.i = data, 0

    def byte(self) -> int:
        b = self.data[self.i] if self.i < len(self.data) else 0
        self.i += 1
        return b

    def more(self) -> bool:
        return self.i < len(self.data)

    def pick(self, seq):
        return seq[self.byte() % len(seq)]

    def size(self):
        return self.pick(SIZES)

    def small(self):
        return self.byte() % 40

    def shape(self):
        kind = self.byte() % 8
        if kind == 0:
            return self.size()
        if kind == 1:
            return tuple(self.size() for _ in range(self.byte() % 4))
        if kind == 2:
            return Lying(self.pick([2**40, 2**62, 2**63 - 1]), [self.small() for _ in range(self.byte() % 3)])
        if kind == 3:
            return (d for d in (self.small(), self.small()))
        if kind == 4:
            return [self.small(), 1.5] if self.byte() % 2 else "ab"
        if kind == 5:
            return (1,) * self.pick([0, 3, 64, 65, 1000])
        return tuple(self.small() for _ in range(self.byte() % 3))

    def data_arg(self):
        kind = self.byte() % 6
        n = self.small()
        if kind == 0:
            return bytes(n)
        if kind == 1:
            return bytearray(range(n))
        if kind == 2:
            return memoryview(np.arange(n, dtype=np.float32))
        if kind == 3:
            return np.zeros((n, 4), np.uint8)[:, ::2]
        if kind == 4:
            return Lying(2**40, [1, 2])
        return list(range(n))

    def array(self):
        n = self.small()
        kind = self.byte() % 5
        if kind == 0:
            return np.array([object()] * n, dtype=object)
        if kind == 1:
            return np.zeros((n, 3), np.float32)[:, ::2]
        if kind == 2:
            return np.zeros(n, self.pick(["float32", "int16", ">f4", "U2", "complex64", "bool"]))
        if kind == 3:
            return np.zeros(n, np.dtype([("a", "O"), ("b", "f4")]))
        return np.arange(n, dtype=np.int32)


CALLS = Counter()


def call(name, f, *args, **kwargs):
    """Calls f; counts how it ended. An unexpected exception escapes."""
    try:
        r = f(*args, **kwargs)
    except EXPECTED as e:
        CALLS[f"{name}:{type(e).__name__}"] += 1
        return None
    CALLS[f"{name}:ok"] += 1
    return r


def one_input(data: bytes):
    d = Draw(data)
    rt = nrt.get_nrtpy_singleton()
    refs, views = [], []
    try:
        while d.more() and len(refs) + len(views) < 24:
            op = d.byte() % 9
            if op == 0 or not refs:
                r = call("allocate_tensor", rt.allocate_tensor, d.pick([1, 4, 16, 64, 4096, 0, -1, 2**50, 2**62, 2**64]), core_id=d.pick([0, 0, 0, 1, 99, -1]))
                if r is not None:
                    refs.append(r)
            elif op == 1:
                t = call("Tensor", nrt.Tensor, d.pick(refs), d.shape(), d.pick(DTYPES))
                if t is not None:
                    views.append(t)
            elif op == 2 and views:
                t = d.pick(views)
                a = call("numpy", t.numpy)
                if a is not None:
                    assert not a.dtype.hasobject and a.nbytes <= t.size, (a.dtype, a.nbytes, t.size)
            elif op == 3:
                b = call("tensor_read", rt.tensor_read, d.pick(refs), offset=d.size(), size=d.size())
                if b is not None:
                    assert len(b) <= 4096
            elif op == 4:
                call("tensor_write", rt.tensor_write, d.pick(refs), d.data_arg(), offset=d.size())
            elif op == 5:
                t = call("from_numpy", nrt.Tensor.from_numpy, d.array())
                if t is not None:
                    views.append(t)
            elif op == 6 and views:
                call("write_from_numpy", d.pick(views).write_from_numpy, d.array())
            elif op == 7:
                call("free_tensor", rt.free_tensor, d.pick(refs))
            elif op == 8 and views:
                call("free", d.pick(views).free)
    finally:
        for r in refs:
            try:
                rt.free_tensor(r)
            except EXPECTED:
                pass
        for t in views:
            try:
                t.free()
            except EXPECTED:
                pass


def report():
    ok = sum(n for k, n in CALLS.items() if k.endswith(":ok"))
    refused = sum(n for k, n in CALLS.items() if not k.endswith(":ok"))
    print(f"fuzz_boundary: {ok} calls succeeded, {refused} refused: " + ", ".join(f"{k}={n}" for k, n in sorted(CALLS.items())), flush=True)


def main(argv):
    atexit.register(report)
    if len(argv) == 4 and argv[1] == "--random":
        import random

        rng = random.Random(int(argv[2]))
        for _ in range(int(argv[3])):
            one_input(rng.randbytes(rng.randrange(1, 96)))
        return
    import atheris

    # Coverage of this harness's branches (which call ran, how it ended)
    # guides the mutations; the native module has no Python coverage.
    module = sys.modules[__name__]
    for f in [v for v in vars(module).values() if getattr(v, "__module__", None) == __name__]:
        for g in [f, *vars(f).values()] if isinstance(f, type) else [f]:
            if callable(g) and hasattr(g, "__code__"):
                atheris.instrument_func(g)
    atheris.Setup(argv, one_input)
    atheris.Fuzz()


if __name__ == "__main__":
    main(sys.argv)
