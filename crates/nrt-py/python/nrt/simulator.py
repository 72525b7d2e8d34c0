"""The simulated NeuronCore from Python.

:func:`configure` chooses how the next runtime start builds its devices
(``deterministic=True``: single-threaded fixed-order stepping, bit-identical
results and timestamps run to run; ``threads``; ``instance``), overriding
the ``NEURON_SIM_*`` variables. :func:`inject` arms faults on the running
devices in ``NEURON_SIM_INJECT`` syntax, e.g. ``"hang@core=0"``,
``"nan:at=MATMUL"``, ``"dma_abort:after=2"``.
"""

from ._nrt import sim_configure as configure
from ._nrt import sim_inject as inject
from ._nrt import sim_settings as settings

__all__ = ["configure", "inject", "settings"]
