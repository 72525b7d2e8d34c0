"""Figures of the Python layer (docs/performance.md, "Python").

1. Round trip of the copy example (4 KiB) from Python, ``model(inputs,
   outputs)`` and ``model(inputs)``, against the same execute without
   Python in this process (``model.benchmark(mode="host")`` times only the
   runtime's execute) and against ``nrt bench`` (its own process) in the
   same run: the Python layer's cost is the difference of medians.
2. numpy -> device tensor write bandwidth of a 64 MiB array
   (``write_from_numpy``) against numpy copying the same array
   (``np.copyto``), and the read back (``numpy()``).

Usage: python bench.py COPY_NEFF [--nrt PATH_TO_NRT] [--iterations N]
"""

import argparse
import json
import statistics
import subprocess
import time

import numpy as np

import nrt


def per_call_us(f, n):
    samples = []
    clock = time.perf_counter_ns
    for _ in range(n):
        t0 = clock()
        f()
        samples.append(clock() - t0)
    return statistics.median(samples) / 1e3


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("neff")
    ap.add_argument("--nrt", default=None, help="the nrt command, for nrt bench in the same run")
    ap.add_argument("--iterations", type=int, default=20000)
    args = ap.parse_args()

    model = nrt.Model.load_from_neff(args.neff)
    x = np.random.default_rng(0).standard_normal((8, 128), dtype=np.float32)
    inputs = {"input": nrt.Tensor.from_numpy(x)}
    outputs = {"output": nrt.Tensor.from_numpy(np.zeros_like(x))}
    n = args.iterations
    per_call_us(lambda: model(inputs, outputs), 2000)  # warm up
    rounds = []
    for _ in range(5):
        given = per_call_us(lambda: model(inputs, outputs), n // 5)
        alloc = per_call_us(lambda: model(inputs), n // 10)
        native = statistics.median(model.benchmark(inputs, outputs, warmup_iter=100, benchmark_iter=n // 5, mode="host").durations_ms) * 1e3
        rounds.append((given, alloc, native))
    given = statistics.median(r[0] for r in rounds)
    alloc = statistics.median(r[1] for r in rounds)
    native = statistics.median(r[2] for r in rounds)
    report = {
        "python_call_outputs_given_p50_us": given,
        "python_call_outputs_allocated_p50_us": alloc,
        "in_process_execute_p50_us": native,
        "python_layer_us": given - native,
        "python_layer_with_output_allocation_us": alloc - native,
    }
    if args.nrt:
        out = subprocess.run([args.nrt, "bench", args.neff, "--json", "--iterations", str(n)], capture_output=True, text=True, check=True).stdout
        b = json.loads(out[out.index("{"):])
        report["nrt_bench_p50_us"] = b["latency_us"]["p50"]
        report["python_minus_nrt_bench_us"] = given - b["latency_us"]["p50"]

    big = np.random.default_rng(1).standard_normal(64 * 1024 * 1024 // 4, dtype=np.float32)
    t = nrt.Tensor.from_numpy(big)
    dst = np.empty_like(big)
    writes, copies, reads = [], [], []
    for _ in range(7):
        t0 = time.perf_counter()
        t.write_from_numpy(big)
        t1 = time.perf_counter()
        np.copyto(dst, big)
        t2 = time.perf_counter()
        back = t.numpy()
        t3 = time.perf_counter()
        writes.append(t1 - t0)
        copies.append(t2 - t1)
        reads.append(t3 - t2)
    assert np.array_equal(back, big)
    mib = big.nbytes / (1 << 20)
    w, c, r = statistics.median(writes), statistics.median(copies), statistics.median(reads)
    report.update({
        "write_64mib_gib_s": mib / 1024 / w,
        "numpy_copy_64mib_gib_s": mib / 1024 / c,
        "read_64mib_gib_s": mib / 1024 / r,
        "write_vs_numpy_copy": c / w,
        "read_vs_numpy_copy": c / r,
    })
    print(json.dumps(report, indent=2))


if __name__ == "__main__":
    main()
