"""A script written for nrtpy runs with only its import changed."""

import subprocess
import sys
from pathlib import Path


def test_nrtpy_script_runs_unchanged(copy_neff):
    script = Path(__file__).with_name("nrtpy_script.py")
    assert "import nrt as nrtpy" in script.read_text()
    r = subprocess.run([sys.executable, str(script), str(copy_neff)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "input: shape=[8, 128], size=4096" in r.stdout
    assert "NrtpyError: Nrtpy Error: tensor" in r.stdout
    assert "NrtError: NRT Error NRT_" in r.stdout
    assert r.stdout.rstrip().endswith("nrtpy script ok")
