"""Loading and running NEFFs from Python, checked against numpy."""

import asyncio
import concurrent.futures
import json
import os
import select
import subprocess

import ml_dtypes
import numpy as np
import pytest

import nrt
from conftest import SAMPLE_NEFF, nrt_bin


def test_copy_round_trip_allocates_outputs(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    assert model.name == "copy"
    info = model.input_tensors_info["input"]
    assert (info.shape, info.size, info.dtype) == ([8, 128], 4096, "float32")
    assert list(model.output_tensors_info) == ["output"]
    x = np.random.default_rng(1).standard_normal((8, 128), dtype=np.float32)
    outs = model({"input": nrt.Tensor.from_numpy(x, name="input")})
    y = outs["output"]
    assert isinstance(y, nrt.Tensor) and y.shape == (8, 128) and y.dtype == np.float32
    np.testing.assert_array_equal(y.numpy(), x)


def test_cc_enabled_loads_through_the_collectives_load(copy_neff):
    # nrtpy's cc_enabled load is nrt_load_collectives: the rank joins the
    # in-NEFF collectives' world (set up here as one rank) and the model
    # runs as any other; a later participant joins that world.
    x = np.arange(1024, dtype=np.float32).reshape(8, 128)
    for core in (0, 1):
        m = nrt.Model.load_from_neff(copy_neff, core_id=core, cc_enabled=True, rank_id=0, world_size=1)
        assert (m.cc_enabled, m.rank_id, m.world_size, m.core_id) == (True, 0, 1, core)
        out = m({"input": nrt.Tensor.from_numpy(x, core_id=core)})["output"]
        np.testing.assert_array_equal(out.numpy(), x)
    with pytest.raises(ValueError):
        nrt.Model.load_from_neff(copy_neff, cc_enabled=True, rank_id=1, world_size=1)


def test_given_outputs_are_written_and_none_is_returned(copy_neff):
    model = nrt.Model.load_from_neff(str(copy_neff), name="c", core_id=1)
    assert (model.name, model.core_id) == ("c", 1)
    x = np.arange(1024, dtype=np.float32).reshape(8, 128)
    out = nrt.Tensor.from_numpy(np.zeros_like(x), name="output", core_id=1)
    assert model({"input": nrt.Tensor.from_numpy(x, core_id=1)}, {"output": out}) is None
    np.testing.assert_array_equal(out.numpy(), x)
    # A non-contiguous array is made contiguous before it is written.
    src = nrt.Tensor.from_numpy(np.asfortranarray(x + 1), core_id=1)
    model({"input": src}, {"output": out})
    np.testing.assert_array_equal(out.numpy(), x + 1)
    src.write_from_numpy(x[::-1].copy())
    model({"input": src}, {"output": out})
    np.testing.assert_array_equal(out.numpy(), x[::-1])


def test_mlp_matches_numpy(examples):
    model = nrt.Model.load_from_neff(examples / "mlp.neff")
    w = np.load(examples / "mlp" / "sg00" / "W.npy")
    b = np.load(examples / "mlp" / "sg00" / "b.npy")
    x = np.random.default_rng(2).uniform(-1, 1, (128, 512)).astype(np.float32)
    y = model({"x": nrt.Tensor.from_numpy(x)})["y"].numpy()
    ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b, 0)
    np.testing.assert_allclose(y, ref, rtol=1e-4, atol=1e-4)


def test_mlp_bf16_takes_ml_dtypes_bfloat16(examples):
    model = nrt.Model.load_from_neff(examples / "mlp-bf16.neff")
    assert model.input_tensors_info["x"].dtype == "bfloat16"
    w = np.load(examples / "mlp-bf16" / "sg00" / "W.npy")
    b = np.load(examples / "mlp-bf16" / "sg00" / "b.npy")
    if w.dtype != ml_dtypes.bfloat16:
        w = w.view(ml_dtypes.bfloat16)
    x = np.random.default_rng(3).uniform(-1, 1, (128, 512)).astype(ml_dtypes.bfloat16)
    t = nrt.Tensor.from_numpy(x)
    assert t.dtype == ml_dtypes.bfloat16 and "bfloat16" in repr(t)
    np.testing.assert_array_equal(t.numpy(), x)
    out = next(iter(model({"x": t}).values())).numpy().astype(np.float64)
    ref = np.maximum(x.astype(np.float64) @ w.astype(np.float64) + b.astype(np.float64), 0)
    np.testing.assert_allclose(out, ref, rtol=2e-2, atol=2e-2)


def test_real_compiler_neff(request):
    if not SAMPLE_NEFF.exists():
        pytest.skip(f"note: the sample NEFF {SAMPLE_NEFF} is absent (it lives beside the checkout, never in it)")
    model = nrt.Model.load_from_neff(SAMPLE_NEFF)
    # The header says the compiler's placeholder `file.neff`: the model is
    # called by the file's stem, here and in the tools.
    assert model.name == "matmul_small"
    assert {k: (v.shape, v.dtype) for k, v in model.input_tensors_info.items()} == {"x": ([128, 256], "float16"), "y": ([256, 128], "float16")}
    rng = np.random.default_rng(4)
    x = rng.uniform(-1, 1, (128, 256)).astype(np.float16)
    y = rng.uniform(-1, 1, (256, 128)).astype(np.float16)
    out = model({"x": nrt.Tensor.from_numpy(x), "y": nrt.Tensor.from_numpy(y)})["output0"].numpy()
    ref = (x.astype(np.float32) @ y.astype(np.float32)).astype(np.float16)
    np.testing.assert_allclose(out.astype(np.float32), ref.astype(np.float32), rtol=2e-3, atol=2e-3)


def test_host_benchmark_fields(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    x = nrt.Tensor.from_numpy(np.ones((8, 128), np.float32))
    r = model.benchmark({"input": x}, warmup_iter=2, benchmark_iter=7, mode="host")
    assert isinstance(r, nrt.BenchmarkResult)
    assert r.iterations == 7 and r.warmup_iterations == 2 and len(r.durations_ms) == 7
    assert r.min_ms <= r.mean_ms <= r.max_ms and r.min_ms > 0
    mean = sum(r.durations_ms) / 7
    assert r.mean_ms == pytest.approx(mean)
    assert r.std_dev_ms == pytest.approx((sum((d - mean) ** 2 for d in r.durations_ms) / 7) ** 0.5)
    assert "mean_ms" in repr(r)


def test_device_benchmark_measures_the_device_clock(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    x = nrt.Tensor.from_numpy(np.ones((8, 128), np.float32))
    r = model.benchmark({"input": x}, warmup_iter=2, benchmark_iter=6)
    # One device time per execution, whatever the number of physical cores
    # of the model's logical core (LNC 2 here: their pairs are merged).
    assert r.iterations == 6
    assert r.warmup_iterations == 2
    assert len(r.durations_ms) == 6
    assert all(d > 0 for d in r.durations_ms)
    assert r.min_ms <= r.mean_ms <= r.max_ms
    with pytest.raises(ValueError):
        model.benchmark({"input": x}, benchmark_iter=0)


def test_one_device_time_in_every_tool(examples, tmp_path):
    """docs/performance.md, "Device time": one execution's device time (the
    simulated clock from the first engine's START to the last END) is the
    same number in Python's benchmark, the profile, the monitor's
    device_latency and `nrt bench`. In deterministic mode the cost model
    gives every execution of a model the same time (after the core's
    switch to it; threaded, the engines' interleaving moves it by a few
    ns), so the executions each tool measures (the monitor sees the
    benchmark's and the profiled ones) all show one number."""
    if os.environ.get("NEURON_SIM_STATUS_DIR") == "off":
        pytest.skip("NEURON_SIM_STATUS_DIR=off: no status files for nrt monitor to read")
    nrt.simulator.configure(deterministic=True)
    neff = examples / "mlp.neff"
    model = nrt.Model.load_from_neff(neff)
    x = nrt.Tensor.from_numpy(np.random.default_rng(3).uniform(-1, 1, (128, 512)).astype(np.float32))
    # The core's first execution of a model also switches to it (a
    # longer one); the rest repeat it.
    model({"x": x})
    config = tmp_path / "monitor.json"
    config.write_text(json.dumps({"period": "1s", "neuron_runtimes": [{"metrics": [{"type": "execution_stats"}]}]}))
    monitor = subprocess.Popen([nrt_bin(), "monitor", "-c", str(config), "--count", "1"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # Every execution of the monitor's period is measured by a tool
        # too: the benchmark's on the system trace, the profiled one by
        # its trace rings.
        bench, profiles = [], []
        while monitor.poll() is None:
            bench.append(model.benchmark({"x": x}, warmup_iter=0, benchmark_iter=2))
            out = tmp_path / f"mlp{len(profiles)}.ntff"
            model({"x": x}, ntff_name=str(out))
            profiles.append(json.loads((tmp_path / f"{out.name}.summary.json").read_text()))
            assert len(bench) < 600, "nrt monitor never reported"
        report, err = monitor.communicate(timeout=60)
    finally:
        if monitor.poll() is None:
            monitor.kill()
    assert monitor.returncode == 0, err
    ps = {round(d * 1e9) for r in bench for d in r.durations_ms}
    assert len(ps) == 1, f"the benchmark's executions differ: {sorted(ps)}"
    (device_ps,) = ps
    assert device_ps > 0
    for p in profiles:
        (execution,) = p["executions"]
        assert execution["device_time_ps"] == device_ps, (execution, device_ps)
    trace = json.loads((tmp_path / "mlp0.ntff").read_text())
    assert round(trace["otherData"]["device_time_us"] * 1e6) == device_ps
    mine = [r for r in json.loads(report.splitlines()[-1])["neuron_runtime_data"] if r["pid"] == os.getpid()]
    assert len(mine) == 1, report
    latency = mine[0]["report"]["execution_stats"]["latency_stats"]["device_latency"]
    assert latency is not None, "no execution in the monitor's period"
    # The status file keeps nanoseconds.
    assert {round(v * 1e9) for v in latency.values()} == {device_ps // 1000}, (latency, device_ps)
    # nrt bench reserves the core this process holds: let it go first.
    with pytest.warns(UserWarning):
        nrt.reset()
    env = dict(os.environ, NEURON_SIM_DETERMINISTIC="1")
    o = subprocess.run([nrt_bin(), "bench", str(neff), "--iterations", "3", "--warmup", "1", "--json"], capture_output=True, text=True, env=env)
    assert o.returncode == 0, o.stderr
    d = json.loads(o.stdout)["device_us"]
    assert {round(d[k] * 1e6) for k in ["min", "max", "p50"]} == {device_ps}, (d, device_ps)


def test_save_trace_writes_a_device_profile(copy_neff, tmp_path):
    model = nrt.Model.load_from_neff(copy_neff)
    x = nrt.Tensor.from_numpy(np.arange(1024, dtype=np.float32).reshape(8, 128))
    out = tmp_path / "copy.ntff"
    outs = model({"input": x}, ntff_name=str(out))
    np.testing.assert_array_equal(outs["output"].numpy(), x.numpy())
    trace = json.loads(out.read_text())
    assert trace["traceEvents"], "the profile has instruction events"
    summary = json.loads((tmp_path / "copy.ntff.summary.json").read_text())
    assert summary["instructions"] > 0
    # save_trace without a name writes <NEFF stem>.ntff in the current
    # directory, not beside the NEFF (whose directory may be read-only).
    import pathlib
    beside = pathlib.Path(copy_neff).with_suffix(".ntff")
    beside.unlink(missing_ok=True)
    cwd = tmp_path / "cwd"
    cwd.mkdir()
    old = os.getcwd()
    os.chdir(cwd)
    try:
        model({"input": x}, save_trace=True)
    finally:
        os.chdir(old)
    assert (cwd / "copy.ntff").exists()
    assert not beside.exists()
    # A path that cannot be written (its parent is a file) is an NrtError.
    (tmp_path / "file").write_text("")
    with pytest.raises(nrt.NrtError, match="device profile"):
        model({"input": x}, ntff_name=str(tmp_path / "file" / "x.ntff"))


def test_system_trace_session_captures_executions(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    x = nrt.Tensor.from_numpy(np.ones((8, 128), np.float32))
    with nrt.SystemTraceSession(0) as trace:
        model({"input": x})
        doc = json.loads(trace.fetch_events_json())
        types = {e["event_type"] for e in doc["events"]}
        assert "nc_exec_running" in types and "nrt_execute" in types
        # Events are consumed once.
        assert json.loads(trace.fetch_events_json())["events"] == []
    with pytest.raises(nrt.NrtError):
        nrt.SystemTraceSession(999)


def test_async_from_asyncio(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    xs = [np.full((8, 128), i, np.float32) for i in range(6)]

    async def main():
        ins = [nrt.Tensor.from_numpy(x) for x in xs]
        return await asyncio.gather(*(model.run_async({"input": t}) for t in ins))

    results = asyncio.run(main())
    for x, outs in zip(xs, results):
        np.testing.assert_array_equal(outs["output"].numpy(), x)
    fut = model.submit({"input": nrt.Tensor.from_numpy(xs[3])})
    assert isinstance(fut, concurrent.futures.Future)
    np.testing.assert_array_equal(fut.result(timeout=60)["output"].numpy(), xs[3])


def test_deterministic_mode_and_fault_injection(copy_neff):
    nrt.simulator.configure(deterministic=True)
    assert nrt.simulator.settings()["deterministic"] is True
    model = nrt.Model.load_from_neff(copy_neff)
    x = np.ones((8, 128), np.float32)
    t = nrt.Tensor.from_numpy(x)
    np.testing.assert_array_equal(model({"input": t})["output"].numpy(), x)
    with pytest.raises(nrt.NrtpyError):
        nrt.simulator.configure(deterministic=False)  # the runtime is running
    with pytest.raises(ValueError):
        nrt.simulator.inject("no_such_fault")
    nrt.simulator.inject("dma_abort")
    with pytest.raises(nrt.NrtError) as e:
        model({"input": t})
    assert e.value.status == nrt.Status(1203) and e.value.status.name == "NRT_EXEC_HW_ERR_DMA_ABORT"
    assert str(e.value).startswith("NRT Error NRT_EXEC_HW_ERR_DMA_ABORT(1203): Failed to execute model")


def test_reprs_show_shape_dtype_and_placement(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    t = nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32), name="input")
    r = repr(t)
    assert "shape=[8, 128]" in r and "dtype=float32" in r and "placement=device NC" in r
    assert "input: float32[8, 128]" in repr(model) and "core_id=0" in repr(model)
    assert repr(model.input_tensors_info["input"]) == "TensorMetadata(shape=[8, 128], size=4096, dtype=\"float32\")"


def test_context_managers_free_and_unload(copy_neff):
    with nrt.Model.load_from_neff(copy_neff) as model:
        with nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32)) as t:
            model({"input": t})
        with pytest.raises(nrt.NrtpyError, match="freed"):
            t.numpy()
    assert not model.is_loaded
    with pytest.raises(nrt.NrtpyError, match="unloaded"):
        model({"input": nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32))})


def test_the_walkthrough_at_the_top_of_docs_python_runs(copy_neff, tmp_path, monkeypatch):
    import pathlib
    import shutil
    doc = (pathlib.Path(__file__).resolve().parents[3] / "docs" / "python.md").read_text()
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    assert len(code.splitlines()) <= 16, "the walkthrough stays short"
    shutil.copy(copy_neff, tmp_path / "copy.neff")
    monkeypatch.chdir(tmp_path)
    exec(compile(code, "docs/python.md", "exec"), {})
    assert (tmp_path / "copy.ntff").exists()


def test_device_prints_reach_a_debug_stream(examples):
    model = nrt.Model.load_from_neff(examples / "device-print.neff")
    x = np.arange(32, dtype=np.float32).reshape(4, 8) - 8
    model({"x": nrt.Tensor.from_numpy(x)})  # before the connection: not kept
    with nrt.DebugStream(0) as stream:
        with pytest.raises(nrt.NrtError, match="already has a client"):
            nrt.DebugStream(0)
        assert stream.read() is None
        assert not select.select([stream], [], [], 0)[0]
        y = model({"x": nrt.Tensor.from_numpy(x)})["y"].numpy()
        assert select.select([stream], [], [], 0)[0], "readable while events wait"
        events = stream.read_all()
        assert [e.prefix for e in events] == ["x", "y"]
        assert all((e.logical_nc_id, e.dtype, e.shape) == (0, "float32", (4, 8)) for e in events)
        np.testing.assert_array_equal(events[0].numpy(), x)
        np.testing.assert_array_equal(events[1].numpy(), y)
        np.testing.assert_array_equal(y, x * 2 + 1)
        assert stream.dropped == 0 and not select.select([stream], [], [], 0)[0]
    with pytest.raises(nrt.NrtError, match="NRT_INVALID"):
        nrt.DebugStream(4096)


def test_a_stream_ended_by_reset_never_touches_a_later_connection(examples):
    old = nrt.DebugStream(0)
    number = old.fileno()
    with pytest.warns(UserWarning):
        nrt.reset()
    # The reset ended the connection; the stream says so instead of
    # acting on a descriptor number it no longer owns.
    with pytest.raises(nrt.NrtpyError, match=r"nrt\.reset\(\)"):
        old.read()
    with pytest.raises(nrt.NrtpyError):
        old.fileno()
    assert "ended" in repr(old)
    model = nrt.Model.load_from_neff(examples / "device-print.neff")
    new = nrt.DebugStream(0)
    # The lowest free descriptor: usually the old number again.
    print(f"old stream_fd {number}, new {new.fileno()}")
    old.close()
    os.fstat(new.fileno())  # still open
    x = np.arange(32, dtype=np.float32).reshape(4, 8)
    model({"x": nrt.Tensor.from_numpy(x)})
    assert [e.prefix for e in new.read_all()] == ["x", "y"], "the new connection is still the core's client"
    new.close()
    with pytest.raises(nrt.NrtpyError, match="was closed"):
        new.read()


def test_tensor_cast_and_compute_run_on_the_device():
    n = 1000
    a = np.linspace(-4, 4, n, dtype=np.float32)
    b = (np.arange(n, dtype=np.float32) % 7) - 3
    c = np.full(n, 0.5, np.float32)
    ta, tb, tc = (nrt.Tensor.from_numpy(v) for v in (a, b, c))
    out = nrt.Tensor.from_numpy(np.zeros(n, np.float32))
    nrt.tensor_compute(nrt.NrtComputeOp.ADD, [ta, tb, tc], out, n)
    np.testing.assert_array_equal(out.numpy(), a + b + c)
    nrt.tensor_compute(nrt.NrtComputeOp.MAX, [ta, tb], out, n)
    np.testing.assert_array_equal(out.numpy(), np.maximum(a, b))
    nrt.tensor_compute("min", [ta, tb], out, 600)
    np.testing.assert_array_equal(out.numpy(), np.concatenate([np.minimum(a, b)[:600], np.maximum(a, b)[600:]]))
    bf = nrt.Tensor.from_numpy(np.zeros(n, ml_dtypes.bfloat16))
    nrt.tensor_cast(ta, bf, n)
    np.testing.assert_array_equal(bf.numpy(), a.astype(ml_dtypes.bfloat16))
    with pytest.raises(nrt.NrtError, match="NRT_INVALID"):
        nrt.tensor_cast(ta, bf, n + 1)
    with pytest.raises(nrt.NrtError, match="one logical core"):
        nrt.tensor_compute(nrt.NrtComputeOp.ADD, [ta, nrt.Tensor.from_numpy(b, core_id=1)], out, n)
    with pytest.raises(ValueError, match="not one of ADD, MIN, MAX"):
        nrt.tensor_compute("mul", [ta, tb], out, n)


def test_the_module_shows_its_api_and_nothing_else():
    public = sorted(n for n in dir(nrt) if not n.startswith("_"))
    assert public == sorted(nrt.__all__), "no helper modules or stray names in dir(nrt)"
    assert nrt.__version__ == nrt.version()["nrt_rs"]
    assert isinstance(nrt.get_nrtpy_singleton(), nrt.Runtime)
    for exc in (nrt.NrtError, nrt.NrtpyError):
        assert exc.__module__ == "nrt", f"{exc} is shown as nrt.{exc.__name__} in tracebacks"
    # A slot method's own __doc__ is Python's generic text; the call is
    # documented on the class, which help(nrt.Model) shows.
    assert "save_trace" in (nrt.Model.__doc__ or ""), "model(...) is documented where help() shows it"


@pytest.fixture(scope="session")
def tp_mlp(tmp_path_factory):
    """The 2-rank tensor-parallel mlp (`nrt gen tp-mlp`), one packed NEFF
    per rank."""
    out = tmp_path_factory.mktemp("tp-mlp")
    subprocess.run([nrt_bin(), "gen", "tp-mlp", "--ranks", "2", "-o", str(out / "src")], check=True, capture_output=True)
    neffs = []
    for r in range(2):
        neffs.append(out / f"rank{r}.neff")
        subprocess.run([nrt_bin(), "neff", "pack", str(out / "src" / f"rank{r}"), str(neffs[-1])], check=True, capture_output=True)
    return neffs


THREADS_SCRIPT = """
import sys, threading, numpy as np, nrt
x = np.random.default_rng(3).standard_normal((128, 256), dtype=np.float32)
outs, errors = [None, None], []

def rank(r):
    # Each rank loads and executes from its own thread; the GIL is
    # released while a rank waits for the other at the load's meeting and
    # at the collective.
    try:
        m = nrt.Model.load_from_neff(sys.argv[1 + r], core_id=r, cc_enabled=True, rank_id=r, world_size=2)
        assert (m.cc_enabled, m.rank_id, m.world_size) == (True, r, 2)
        outs[r] = m({"x": nrt.Tensor.from_numpy(x, core_id=r)})["output0"].numpy()
    except Exception as e:  # noqa: BLE001 - reported below
        errors.append(e)

threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=120)
assert not errors, errors
assert outs[0] is not None and outs[0].shape == (128, 256)
np.testing.assert_array_equal(outs[0], outs[1])
print("OK")
"""


def tp_env(**extra):
    # The tp-mlp trees are compiled for LNC 1 (a load checks it, as libnrt
    # 2.30 does); each world runs in a fresh interpreter so its global
    # communicator is its own, not the one this session's runtime holds.
    return dict(os.environ, NEURON_LOGICAL_NC_CONFIG="1", **extra)


def test_a_two_rank_world_runs_from_threads_of_one_process(tp_mlp):
    import sys

    p = subprocess.run([sys.executable, "-c", THREADS_SCRIPT, str(tp_mlp[0]), str(tp_mlp[1])], env=tp_env(), capture_output=True, text=True, timeout=300)
    assert p.returncode == 0 and p.stdout.strip().endswith("OK"), p.stdout + p.stderr


@pytest.fixture(scope="session")
def tp_decoder(tmp_path_factory):
    """The 2-rank tensor-parallel decoder (`nrt gen tp-decoder --data`, 2
    layers): its tree, each rank's packed prefill and decode NEFF, and
    the `nrt run --ranks 2` outputs of the same run (checked there against
    the f64 reference within the fp32 bound)."""
    out = tmp_path_factory.mktemp("tp-decoder")
    src = out / "src"
    subprocess.run([nrt_bin(), "gen", "tp-decoder", "--ranks", "2", "--layers", "2", "--data", "-o", str(src)], check=True, capture_output=True)
    for phase in ("prefill", "decode"):
        for r in range(2):
            subprocess.run([nrt_bin(), "neff", "pack", str(src / phase / f"rank{r}"), str(out / f"{phase}{r}.neff")], check=True, capture_output=True)
    subprocess.run([nrt_bin(), "run", "--ranks", "2", str(src), "--output-dir", str(out / "cli")], check=True, capture_output=True, env=tp_env())
    return out


DECODER_SCRIPT = """
import sys, threading, numpy as np, nrt
from pathlib import Path
d = Path(sys.argv[1])
data = d / "src" / "data"
x_prefill, x_decode = np.load(data / "x_prefill.npy"), np.load(data / "x_decode.npy")
outs, errors = [None, None], []

def rank(r):
    # As an inference server runs a rank: both NEFFs loaded on logical core
    # r, one device tensor per weight and KV cache bound to both (weights
    # from their shards, the caches from zeros), the prefill, then one
    # decode step per token of x_decode.npy.
    try:
        load = lambda phase: nrt.Model.load_from_neff(d / f"{phase}{r}.neff", core_id=r, cc_enabled=True, rank_id=r, world_size=2)
        prefill, decode = load("prefill"), load("decode")
        dev = lambda a, name: nrt.Tensor.from_numpy(a, name=name, core_id=r)
        shared = {}
        for name, meta in decode.input_tensors_info.items():
            if name not in ("x", "position"):
                shard = data / f"rank{r}" / f"{name}.npy"
                shared[name] = dev(np.load(shard) if shard.exists() else np.zeros(meta.shape, dtype=np.float32), name)
        hidden = [prefill({"x": dev(x_prefill, "x"), **shared})["hidden"].numpy()]
        for k, x in enumerate(x_decode):
            position = np.full(x.shape[0], x_prefill.shape[1] + k, dtype=np.int32)
            hidden.append(decode({"x": dev(x, "x"), "position": dev(position, "position"), **shared})["hidden"].numpy())
        decode.unload()
        prefill.unload()
        outs[r] = hidden
    except Exception as e:  # noqa: BLE001 - reported below
        errors.append(e)

threads = [threading.Thread(target=rank, args=(r,)) for r in range(2)]
for t in threads:
    t.start()
for t in threads:
    t.join(timeout=300)
assert not errors, errors
assert len(outs[0]) == 1 + len(x_decode)
for i, (a, b) in enumerate(zip(*outs)):
    np.testing.assert_array_equal(a, b, err_msg=f"execution {i}: the ranks differ")
    cli = np.load(d / "cli" / "rank0" / f"hidden_{i}.npy")
    np.testing.assert_array_equal(a, cli, err_msg=f"execution {i}: Python differs from nrt run --ranks")
print("OK")
"""


def test_the_tp_decoder_runs_two_ranks_from_threads_of_one_process(tp_decoder):
    # Two rank threads of one (fresh) interpreter, each loading its prefill
    # and decode NEFF and running 1 + 4 executions of 4 all-reduces each;
    # the ranks agree bit for bit, and with `nrt run --ranks` of the tree.
    import sys

    p = subprocess.run([sys.executable, "-c", DECODER_SCRIPT, str(tp_decoder)], env=tp_env(), capture_output=True, text=True, timeout=600)
    assert p.returncode == 0 and "OK" in p.stdout, p.stdout + p.stderr


RANK_SCRIPT = """
import sys, numpy as np, nrt
r = int(sys.argv[2])
m = nrt.Model.load_from_neff(sys.argv[1], core_id=0, cc_enabled=True, rank_id=r, world_size=2)
x = np.random.default_rng(3).standard_normal((128, 256), dtype=np.float32)
y = m({"x": nrt.Tensor.from_numpy(x)})["output0"].numpy()
np.save(sys.argv[3], y)
"""


def test_a_two_rank_world_runs_from_two_processes(tp_mlp, tmp_path):
    # One rank per process, each with one visible logical core, meeting at
    # NEURON_RT_ROOT_COMM_ID over libfabric (tcp on loopback).
    import ctypes.util
    import socket
    import sys

    if not ctypes.util.find_library("fabric"):
        pytest.skip("libfabric is not installed (apt-get install libfabric1): ranks in other processes need it")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    procs = []
    for r in range(2):
        env = tp_env(NEURON_RT_VISIBLE_CORES=str(r), NEURON_RT_ROOT_COMM_ID=f"127.0.0.1:{port}", FI_PROVIDER="tcp", FI_TCP_IFACE="lo", NEURON_RT_CC_NET_TIMEOUT="60")
        procs.append(subprocess.Popen([sys.executable, "-c", RANK_SCRIPT, str(tp_mlp[r]), str(r), str(tmp_path / f"y{r}.npy")], env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT))
    for p in procs:
        out, _ = p.communicate(timeout=300)
        assert p.returncode == 0, out.decode(errors="replace")
    y0, y1 = np.load(tmp_path / "y0.npy"), np.load(tmp_path / "y1.npy")
    assert y0.shape == (128, 256)
    np.testing.assert_array_equal(y0, y1)
