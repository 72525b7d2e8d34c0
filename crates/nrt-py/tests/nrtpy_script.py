# A script written against nrtpy's documented API (getting started,
# model, tensor, configuration and errors pages); only the import differs.
import sys

import numpy as np

import nrt as nrtpy

neff = sys.argv[1]
nrtpy.configure(visible_cores=[0, 1])
model = nrtpy.NrtpyModel.load_from_neff(neff)
for name, meta in model.input_tensors_info.items():
    print(f"{name}: shape={meta.shape}, size={meta.size}")
x = np.random.rand(*model.input_tensors_info["input"].shape).astype(np.float32)
src = nrtpy.NrtpyTensor.from_numpy(x, name="input")
outputs = model({"input": src})
result = outputs["output"].numpy()
assert np.array_equal(result, x)
dst = nrtpy.NrtpyTensor.from_numpy(np.zeros_like(x), name="output")
assert model({"input": src}, outputs={"output": dst}) is None
assert np.array_equal(dst.numpy(), x)
stats = model.benchmark({"input": src}, warmup_iter=2, benchmark_iter=5, mode="host")
print(f"mean {stats.mean_ms:.4f} ms, min {stats.min_ms:.4f}, max {stats.max_ms:.4f}, std {stats.std_dev_ms:.4f}, n={stats.iterations}")
try:
    model({"wrong_name": src})
except ValueError as e:
    print("ValueError:", e)
nrtpy.get_nrtpy_singleton().free_tensor(dst)
try:
    dst.numpy()
except nrtpy.NrtpyError as e:
    print("NrtpyError:", e)
try:
    nrtpy.NrtpyModel.load_from_neff(__file__)
except nrtpy.NrtError as e:
    print("NrtError:", e)
nrtpy.reset()
print("nrtpy script ok")
