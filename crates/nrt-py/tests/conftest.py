"""Fixtures of the nrt Python tests: NEFFs packed from the examples with
the `nrt` command (NRT_BIN, else `nrt` on PATH), the real compiler NEFF
beside the checkout, and a runtime reset after every test."""

import os
import shutil
import subprocess
import warnings
from pathlib import Path

import tempfile

import pytest

# Simulated cores are reserved through lock files; a directory of this
# run's own keeps other processes' runtimes (parallel test runs) from
# holding the cores these tests need.
os.environ["XDG_RUNTIME_DIR"] = tempfile.mkdtemp(prefix="nrt-py-tests-")

import nrt  # noqa: E402

REPO = Path(__file__).resolve().parents[3]
SAMPLE_NEFF = REPO.parent / "shared" / "data" / "neff" / "matmul_small.neff"


def nrt_bin() -> str:
    found = os.environ.get("NRT_BIN") or shutil.which("nrt")
    if not found:
        pytest.fail("the nrt command is needed to pack the examples: set NRT_BIN (scripts/test-all does)")
    return found


@pytest.fixture(scope="session")
def examples(tmp_path_factory) -> Path:
    """Every example packed into `<name>.neff`, with the mlp constants
    (W.npy, b.npy) generated beside them."""
    out = tmp_path_factory.mktemp("examples")
    for name in ["copy", "mlp", "mlp-bf16", "all-engines", "device-print"]:
        shutil.copytree(REPO / "examples" / name, out / name)
    subprocess.run([nrt_bin(), "example-data", str(out)], check=True, capture_output=True)
    for name in ["copy", "mlp", "mlp-bf16", "all-engines", "device-print"]:
        subprocess.run([nrt_bin(), "neff", "pack", str(out / name), str(out / f"{name}.neff")], check=True, capture_output=True)
    return out


@pytest.fixture
def copy_neff(examples) -> Path:
    return examples / "copy.neff"


@pytest.fixture(autouse=True)
def fresh_runtime():
    """Each test starts and ends without a running runtime."""
    yield
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        nrt.reset()
    nrt.simulator.configure(deterministic=False)
    os.environ.pop("NEURON_RT_VISIBLE_CORES", None)
