"""nrt-rs from Python, in nrtpy's shape.

``import nrt as nrtpy`` runs scripts written for AWS's nrtpy unchanged: the
same functions, classes (``NrtpyModel`` / ``NrtpyTensor`` are aliases of
:class:`Model` / :class:`Tensor`), arguments, defaults and error texts. The
runtime runs in this process over the simulated NeuronCore (no libnrt.so);
:mod:`nrt.simulator` sets its deterministic mode and injects faults.
"""

# Every helper module is imported under a private name, so `dir(nrt)`
# lists the API (`__all__`) and nothing else.
import atexit as _atexit
import enum as _enum
import os as _os
import threading as _threading
import warnings as _warnings

from . import _nrt
from ._nrt import (
    BenchmarkResult,
    DebugEvent,
    DebugStream,
    Model,
    NrtError,
    NrtpyError,
    NrtTensor,
    Runtime,
    Status,
    SystemTraceSession,
    Tensor,
    TensorMetadata,
    tensor_cast,
    tensor_compute,
    version,
)
from . import simulator

# nrtpy's names for the same classes.
NrtpyModel = Model
NrtpyTensor = Tensor
NrtModel = Model

#: nrt-rs's version (``version()["nrt_rs"]``).
__version__: str = version()["nrt_rs"]

__all__ = [
    "BenchmarkResult",
    "DebugEvent",
    "DebugStream",
    "Model",
    "NrtError",
    "NrtModel",
    "NrtpyError",
    "NrtpyModel",
    "NrtpyTensor",
    "NrtTensor",
    "Runtime",
    "Status",
    "SystemTraceSession",
    "Tensor",
    "TensorMetadata",
    "NrtComputeOp",
    "configure",
    "get_nrtpy_singleton",
    "reset",
    "simulator",
    "tensor_cast",
    "tensor_compute",
    "version",
]


class NrtComputeOp(_enum.Enum):
    """The element-wise reductions of :func:`tensor_compute` (nrtpy's names)."""

    ADD = "ADD"
    MIN = "MIN"
    MAX = "MAX"


_singleton: "Runtime | None" = None
_singleton_lock = _threading.Lock()


def configure(visible_cores=None) -> None:
    """Sets the logical cores the runtime will use (NEURON_RT_VISIBLE_CORES).

    ``None`` leaves the environment unchanged. Only before the runtime
    starts (or after :func:`reset`): ``RuntimeError`` otherwise. ``TypeError``
    unless a sequence of ints; ``ValueError`` for a negative id.
    """
    if _nrt.is_active():
        raise NrtpyError("Nrtpy Error: configure() must be called before the runtime is initialized; call nrt.reset() first")
    if visible_cores is None:
        return
    if isinstance(visible_cores, (int, str, bytes)) or not hasattr(visible_cores, "__iter__"):
        raise TypeError(f"visible_cores must be a sequence of ints, got {type(visible_cores).__name__}")
    cores = list(visible_cores)
    for c in cores:
        if not isinstance(c, int) or isinstance(c, bool):
            raise TypeError(f"visible_cores must contain only ints, got {c!r}")
        if c < 0:
            raise ValueError(f"core ids must be non-negative, got {c}")
    _os.environ["NEURON_RT_VISIBLE_CORES"] = ",".join(str(c) for c in cores)


def reset() -> None:
    """Closes the runtime: every tensor and model becomes invalid (using
    one raises ``NrtpyError``). A no-op when nothing was started."""
    global _singleton
    if _nrt.is_active():
        _warnings.warn("nrt.reset(): closing the runtime; existing tensors and models are now invalid", UserWarning, stacklevel=2)
    with _singleton_lock:
        _singleton = None
    _nrt._reset()


def get_nrtpy_singleton() -> Runtime:
    """The process's runtime object (created on first use, thread safe)."""
    global _singleton
    with _singleton_lock:
        if _singleton is None:
            _singleton = Runtime()
        return _singleton


@_atexit.register
def _close_at_exit() -> None:
    # Close before the interpreter tears down the module, so queued
    # asynchronous work completes while Python can still take callbacks.
    try:
        _nrt._reset()
    except Exception:  # noqa: BLE001 - nothing to report to at exit
        pass
