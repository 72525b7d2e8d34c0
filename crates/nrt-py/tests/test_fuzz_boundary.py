"""The module's boundary under fuzzing (fuzz_boundary.py), in a child
process so a crash fails this test instead of ending the run: a few
seconds of atheris (libFuzzer) when it is installed, and a fixed-seed
random round that must reach both accepted and refused calls."""

import importlib.util
import os
import re
import subprocess
import sys
from pathlib import Path

HARNESS = Path(__file__).with_name("fuzz_boundary.py")


def run(args, tmp_path):
    env = dict(os.environ, NEURON_RT_LOG_LEVEL="QUIET")
    r = subprocess.run([sys.executable, str(HARNESS), *args], capture_output=True, text=True, timeout=300, env=env, cwd=tmp_path)
    tail = "\n".join((r.stdout + r.stderr).splitlines()[-40:])
    assert r.returncode == 0, f"the boundary fuzz harness failed ({r.returncode}):\n{tail}"
    return r.stdout + r.stderr


def test_seeded_random_inputs_reach_accepted_and_refused_calls(tmp_path):
    out = run(["--random", "7", "400"], tmp_path)
    counts = dict((k, int(v)) for k, v in re.findall(r"(\w+:\w+)=(\d+)", out))
    for key in ["allocate_tensor:ok", "Tensor:ok", "Tensor:ValueError", "numpy:ok", "tensor_read:ok", "tensor_read:NrtError", "tensor_write:ok",
                "tensor_write:TypeError", "from_numpy:ok", "from_numpy:ValueError", "write_from_numpy:ValueError"]:
        assert counts.get(key, 0) > 0, f"{key} never happened: {out[-2000:]}"


def test_atheris_finds_no_crash(tmp_path):
    if importlib.util.find_spec("atheris") is None:
        print("note: atheris is not installed (pip install atheris); only the seeded random round ran")
        import pytest

        pytest.skip("atheris not installed")
    out = run(["-max_total_time=4", "-rss_limit_mb=4096", f"-artifact_prefix={tmp_path}/"], tmp_path)
    done = re.search(r"Done (\d+) runs", out)
    assert done and int(done.group(1)) > 100, out[-2000:]
