"""Every documented error path raises the documented exception."""

import warnings

import numpy as np
import pytest

import nrt


def test_exception_classes():
    assert issubclass(nrt.NrtError, RuntimeError) and issubclass(nrt.NrtpyError, RuntimeError)
    assert nrt.NrtpyModel is nrt.Model and nrt.NrtpyTensor is nrt.Tensor
    assert nrt.Status(2).name == "NRT_INVALID" and int(nrt.Status(1006)) == 1006
    with pytest.raises(ValueError):
        nrt.Status(12345)


def test_bad_paths_and_bad_neffs(tmp_path):
    with pytest.raises(nrt.NrtpyError, match="cannot read NEFF file"):
        nrt.Model.load_from_neff(tmp_path / "missing.neff")
    junk = tmp_path / "junk.neff"
    junk.write_bytes(b"not a neff at all" * 64)
    with pytest.raises(nrt.NrtError) as e:
        nrt.Model.load_from_neff(junk)
    assert str(e.value).startswith(f"NRT Error {e.value.status.name}({e.value.status.code}): Failed to load model")
    assert e.value.status.code != 0


def test_bad_core_and_world(copy_neff):
    with pytest.raises(nrt.NrtError, match="Failed to load model"):
        nrt.Model.load_from_neff(copy_neff, core_id=99)
    # (The world-size rule of a collectives load - a NEFF whose world is
    # larger than the global communicator's is NRT_INVALID - is tested in
    # crates/nrt/tests/cc_neff.rs: setting up a world here would change
    # the one runtime every test of this session shares.)
    with pytest.raises(ValueError):
        nrt.Model.load_from_neff(copy_neff, rank_id=3, world_size=2)


def test_wrong_names_sizes_and_dtypes(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    good = nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32))
    with pytest.raises(ValueError, match=r"unknown input name\(s\) \"x\"; model \"copy\" expects inputs \"input\""):
        model({"x": good})
    with pytest.raises(ValueError):
        model({"input": good, "extra": good})
    with pytest.raises(ValueError, match="shape"):
        model({"input": nrt.Tensor.from_numpy(np.zeros((4, 256), np.float32))})
    with pytest.raises(ValueError, match="dtype int32"):
        model({"input": nrt.Tensor.from_numpy(np.zeros((8, 128), np.int32))})
    with pytest.raises(ValueError, match="core"):
        model({"input": nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32), core_id=1)})
    with pytest.raises(TypeError):
        model({"input": np.zeros((8, 128), np.float32)})
    with pytest.raises(ValueError, match="shape"):
        model({"input": good}, {"output": nrt.Tensor.from_numpy(np.zeros(1024, np.float32))})
    with pytest.raises(ValueError, match="bytes"):
        good.write_from_numpy(np.zeros(10, np.float32))
    with pytest.raises(ValueError, match="mode"):
        model.benchmark({"input": good}, mode="wall")
    with pytest.raises(ValueError, match="benchmark_iter"):
        model.benchmark({"input": good}, benchmark_iter=0, mode="host")


def test_freed_tensors_raise(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    t = nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32))
    nrt.get_nrtpy_singleton().free_tensor(t)
    for use in (t.numpy, lambda: t.write_from_numpy(np.zeros((8, 128), np.float32)), lambda: model({"input": t}), t.free):
        with pytest.raises(nrt.NrtpyError, match="freed"):
            use()
    assert "freed" in repr(t)


def test_use_after_reset_raises(copy_neff):
    model = nrt.Model.load_from_neff(copy_neff)
    t = nrt.Tensor.from_numpy(np.zeros((8, 128), np.float32))
    with pytest.warns(UserWarning, match="reset"):
        nrt.reset()
    with pytest.raises(nrt.NrtpyError, match="reset"):
        t.numpy()
    with pytest.raises(nrt.NrtpyError, match="reset"):
        model({"input": t})
    # The runtime starts again on next use.
    again = nrt.Model.load_from_neff(copy_neff)
    x = np.ones((8, 128), np.float32)
    np.testing.assert_array_equal(again({"input": nrt.Tensor.from_numpy(x)})["output"].numpy(), x)
    with pytest.warns(UserWarning):
        nrt.reset()  # it closes a running runtime
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        nrt.reset()  # a no-op now: no warning


def test_configure(copy_neff):
    with pytest.raises(TypeError):
        nrt.configure(3)
    with pytest.raises(TypeError):
        nrt.configure([0, "1"])
    with pytest.raises(ValueError):
        nrt.configure([-1])
    assert nrt.Runtime.get_visible_neuron_core_count() >= 1
    nrt.configure([1])
    assert nrt.Runtime.get_visible_neuron_core_count() == 1
    model = nrt.Model.load_from_neff(copy_neff)
    assert model.core_id == 0
    with pytest.raises(RuntimeError):
        nrt.configure([0])
