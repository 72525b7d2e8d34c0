"""No crash from the boundary: every view of a tensor's bytes takes only
the runtime's plain-old-data dtypes and stays inside its allocation, and
every size a caller gives is checked before anything is allocated.

Each case runs in a child interpreter: before these checks existed, the
calls wrote device bytes over object pointers (a segfault) or asked the
allocator for more than the host has (an abort), which would take the
test process down with them."""

import os
import subprocess
import sys
import textwrap

import numpy as np
import pytest

import nrt

# The child prints the exception it got (or OK) on its last line.
CHILD = """
import sys
import numpy as np
import nrt
try:
{body}
    print("OK")
except BaseException as e:
    print(f"{{type(e).__name__}}: {{e}}")
"""


def child(body: str, *args) -> str:
    """Runs `body` in a fresh interpreter (argv[1:] = args); returns the
    outcome line, failing on a crash or a non-zero exit."""
    code = CHILD.format(body=textwrap.indent(textwrap.dedent(body), "    "))
    env = dict(os.environ, NEURON_RT_LOG_LEVEL="ERROR")
    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], capture_output=True, text=True, timeout=300, env=env)
    assert r.returncode == 0, f"child died ({r.returncode}):\n{r.stdout}\n{r.stderr}"
    return r.stdout.strip().splitlines()[-1]


@pytest.mark.parametrize(
    "dtype",
    ["object", "U4", "S4", "V4", "complex64", ">f4", ">i2", "(2,)f4", "[('a', 'O'), ('b', 'f4')]", "[('x', 'f4')]", "M8[s]"],
)
def test_a_tensor_takes_only_the_runtimes_dtypes(dtype):
    out = child(f"""
        rt = nrt.Runtime()
        r = rt.allocate_tensor(64)
        rt.tensor_write(r, bytes(range(1, 65)))
        d = np.dtype({dtype!r} if not {dtype!r}.startswith('[') else eval({dtype!r}))
        t = nrt.Tensor(r, 64 // d.itemsize, d)
        repr(t.numpy())  # device bytes as object pointers: a segfault
    """)
    assert out.startswith("ValueError: dtype") and "cannot hold a tensor's bytes" in out, out


def test_every_runtime_dtype_is_accepted_and_reads_back():
    import ml_dtypes

    r = nrt.Runtime().allocate_tensor(32)
    for d in ["bool", "uint8", "int8", "float16", "uint16", "int16", "float32", "uint32", "int32", "float64", "uint64", "int64",
              ml_dtypes.bfloat16, ml_dtypes.float8_e4m3fn, ml_dtypes.float8_e4m3, ml_dtypes.float8_e5m2, ml_dtypes.float8_e3m4]:
        d = np.dtype(d)
        t = nrt.Tensor(r, 32 // d.itemsize, d)
        assert t.numpy().dtype == d and t.numpy().nbytes == 32


def test_object_arrays_never_reach_a_tensor():
    for call in ("nrt.Tensor.from_numpy(a)", "nrt.Tensor.from_numpy(np.zeros(2, np.float64)).write_from_numpy(a)"):
        out = child(f"""
            a = np.array([object(), object()])
            {call}
        """)
        assert out.startswith("ValueError: dtype object"), out


@pytest.mark.parametrize(
    "shape, message",
    [
        ((5,), "needs 20 bytes; tensor"),
        ((2**62, 2**62), "more bytes than a u64 holds"),
        ((2**31, 2**31, 4), "needs"),
        ((-1,), "dimension -1 is negative"),
        (-4, "dimension -4 is negative"),
        ((2**70,), "dimension 1180591620717411303424 is too large"),
        ((2**200,), "shape must be"),
        ((1,) * 65, "more than 64 dimensions"),
        ("ab", "shape must be"),
    ],
)
def test_a_view_larger_than_its_allocation_or_a_bad_shape_is_a_value_error(shape, message):
    r = nrt.Runtime().allocate_tensor(16)
    with pytest.raises(ValueError, match=message):
        nrt.Tensor(r, shape, np.float32)


def test_a_sequence_whose_length_lies_sizes_nothing():
    lying = """
        class Lying:
            def __len__(self):
                return 2**40
            def __getitem__(self, i):
                if i < 2:
                    return 1
                raise IndexError
    """
    out = child(lying + """
        r = nrt.Runtime().allocate_tensor(16)
        t = nrt.Tensor(r, Lying(), np.float32)
        assert t.shape == (1, 1), t.shape
    """)
    assert out == "OK", out
    out = child(lying + """
        rt = nrt.Runtime()
        rt.tensor_write(rt.allocate_tensor(16), Lying())
    """)
    assert out.startswith("TypeError: data must be a C-contiguous bytes-like object"), out


def test_runtime_reads_and_writes_check_sizes_before_allocating():
    out = child("""
        rt = nrt.Runtime()
        rt.tensor_read(rt.allocate_tensor(16), size=2**62)
    """)
    assert out.startswith("NrtError: NRT Error NRT_INVALID(2): Failed to read tensor") and "4611686018427387904 bytes" in out, out
    out = child("""
        rt = nrt.Runtime()
        rt.tensor_read(rt.allocate_tensor(16), offset=2**64 - 1, size=2)
    """)
    assert out.startswith("NrtError: NRT Error NRT_INVALID(2)"), out
    rt = nrt.Runtime()
    t = rt.allocate_tensor(16)
    rt.tensor_write(t, bytearray(range(8)), offset=4)
    rt.tensor_write(t, memoryview(np.arange(2, dtype=np.uint16)), offset=12)
    assert rt.tensor_read(t, offset=4, size=12) == bytes(range(8)) + b"\x00\x00\x01\x00"
    assert rt.tensor_read(t) == b"\0" * 4 + bytes(range(8)) + b"\x00\x00\x01\x00"
    with pytest.raises(nrt.NrtError, match="NRT_INVALID"):
        rt.tensor_write(t, b"x" * 17)
    with pytest.raises(TypeError, match="bytes-like"):
        rt.tensor_write(t, np.zeros((4, 4), np.uint8)[:, ::2])


def test_a_benchmark_too_long_to_record_is_a_memory_error(copy_neff):
    out = child("""
        m = nrt.Model.load_from_neff(sys.argv[1])
        x = nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32))
        m.benchmark({"input": x}, warmup_iter=0, benchmark_iter=2**32 - 1, mode="host")
    """, copy_neff)
    assert out.startswith("MemoryError: durations of 4294967295 benchmark iterations: 34359738360 bytes"), out
