//! `Model` (nrtpy's `NrtpyModel`): a NEFF loaded on a logical core, run
//! with dicts of tensors. Load, execute and waits release the GIL.

use crate::dtypes;
use crate::errors::{nrt_error, nrtpy_error, value_error};
use crate::session::{self, Cell, ModelRef, Slot};
use crate::tensor::{NrtTensor, Tensor, TensorMetadata};
use nrt::tensor::TensorSet;
use pyo3::prelude::*;
use pyo3::types::{PyDict, PyString};
use std::sync::Arc;
use std::time::Instant;

/// One model input or output, with what a call checks against.
pub struct Io {
    sig: nrt_neff::TensorSignature,
    key: Py<PyString>,
    shape: Vec<usize>,
    size: u64,
    /// numpy dtype (None if numpy cannot represent it).
    dtype: Option<Py<PyAny>>,
    /// numpy's name for it.
    dtype_name: String,
}

impl Io {
    fn new(py: Python<'_>, sig: nrt_neff::TensorSignature) -> Io {
        let dtype = dtypes::numpy_dtype(py, &sig.dtype).ok();
        let dtype_name = dtype.as_ref().and_then(|d| d.getattr("name").ok()?.extract::<String>().ok()).unwrap_or_else(|| sig.dtype.clone());
        Io {
            key: PyString::new(py, &sig.name).unbind(),
            shape: sig.shape.iter().map(|&d| d as usize).collect(),
            size: sig.size_bytes().unwrap_or(0),
            dtype: dtype.map(Bound::unbind),
            dtype_name,
            sig,
        }
    }
}

/// Where `model(..., save_trace=True)` writes its profile without an
/// `ntff_name`: `<NEFF stem>.ntff` in the current directory.
fn default_ntff(neff_path: &str) -> std::path::PathBuf {
    let stem = std::path::Path::new(neff_path).file_stem().map_or_else(|| "model".into(), |s| s.to_os_string());
    std::path::PathBuf::from(stem).with_extension("ntff")
}

/// A loaded NEFF.
///
/// `model(inputs, outputs=None, save_trace=False, ntff_name=None)` runs it
/// once: `inputs` (and `outputs`, if given) map the NEFF's names to
/// `nrt.Tensor`s on the model's core. Without `outputs`, they are
/// allocated and returned as a dict; otherwise returns None.
/// `save_trace=True` or `ntff_name` also writes a device profile of this
/// execution to `ntff_name` (default: `<NEFF stem>.ntff` in the current
/// directory).
// (Said here because Python shows a slot method's generic "Call self as a
// function." as `Model.__call__.__doc__`; `help(nrt.Model)` shows this.)
#[pyclass(module = "nrt", name = "Model", frozen, subclass)]
pub struct Model {
    cell: Arc<Cell<ModelRef>>,
    /// Model name (the NEFF file stem unless given).
    #[pyo3(get)]
    pub name: String,
    /// The NEFF path.
    #[pyo3(get)]
    pub neff_path: String,
    /// Logical core it runs on.
    #[pyo3(get)]
    pub core_id: u32,
    /// Whether it was loaded as a collectives participant (through the
    /// collectives load: its rank joined the in-NEFF collectives' world).
    #[pyo3(get)]
    pub cc_enabled: bool,
    /// Rank in the collectives group.
    #[pyo3(get)]
    pub rank_id: u32,
    /// Size of the collectives group.
    #[pyo3(get)]
    pub world_size: u32,
    inputs: Vec<Io>,
    outputs: Vec<Io>,
    input_info: Py<PyDict>,
    output_info: Py<PyDict>,
}

fn info_dict(py: Python<'_>, ios: &[Io]) -> PyResult<Py<PyDict>> {
    let d = PyDict::new(py);
    for io in ios {
        d.set_item(&io.sig.name, Py::new(py, TensorMetadata::of(&io.sig))?)?;
    }
    Ok(d.unbind())
}

impl Model {
    fn live(&self) -> PyResult<ModelRef> {
        match &*session::lock(&self.cell) {
            Slot::Live(m) => Ok(*m),
            Slot::Freed => Err(nrtpy_error(format!("model {:?} was unloaded; it cannot be used any more", self.name))),
            Slot::Reset => Err(nrtpy_error(format!("model {:?} was unloaded by nrt.reset(); load it again", self.name))),
        }
    }

    /// Resolves a dict of tensors against `ios`: the same names, each a
    /// `Tensor` on the model's core with the NEFF's shape and dtype.
    fn bind(&self, ios: &[Io], given: &Bound<'_, PyAny>, kind: &str) -> PyResult<TensorSet> {
        let py = given.py();
        let given = given.cast::<PyDict>().map_err(|_| pyo3::exceptions::PyTypeError::new_err(format!("{kind}s must be a dict of name -> Tensor")))?;
        let names = || ios.iter().map(|io| format!("{:?}", io.sig.name)).collect::<Vec<_>>().join(", ");
        let unknown: Vec<String> = given
            .keys()
            .iter()
            .map(|k| k.extract::<String>().map(|k| format!("{k:?}")).unwrap_or_else(|_| k.repr().map(|r| r.to_string()).unwrap_or_default()))
            .filter(|k| !ios.iter().any(|io| &format!("{:?}", io.sig.name) == k))
            .collect();
        if !unknown.is_empty() {
            return Err(value_error(format!("unknown {kind} name(s) {}; model {:?} expects {kind}s {}", unknown.join(", "), self.name, names())));
        }
        let mut set = TensorSet::new();
        for io in ios {
            let Some(item) = given.get_item(io.key.bind(py))? else {
                return Err(value_error(format!("{kind} {:?} is missing; model {:?} expects {kind}s {}", io.sig.name, self.name, names())));
            };
            let t = item.cast::<Tensor>().map_err(|_| {
                pyo3::exceptions::PyTypeError::new_err(format!("{kind} {:?} must be an nrt.Tensor, got {}", io.sig.name, item.get_type().name().map(|n| n.to_string()).unwrap_or_default()))
            })?;
            let t = t.get();
            let r = t.tensor_ref.get();
            if r.core_id != self.core_id {
                return Err(value_error(format!("{kind} {:?} is on core {}, model {:?} runs on core {}", io.sig.name, r.core_id, self.name, self.core_id)));
            }
            if t.shape != io.shape {
                return Err(value_error(format!("{kind} {:?} has shape {:?}, the model expects {:?}", io.sig.name, t.shape, io.shape)));
            }
            if !dtypes::compatible(&t.dtype_name, &io.dtype_name) {
                return Err(value_error(format!("{kind} {:?} has dtype {}, the model expects {}", io.sig.name, t.dtype_name, io.dtype_name)));
            }
            set.add(&io.sig.name, t.live()?);
        }
        Ok(set)
    }

    /// Output tensors allocated on the model's core, as a dict and a set.
    fn allocate_outputs<'py>(&self, py: Python<'py>) -> PyResult<(Bound<'py, PyDict>, TensorSet)> {
        let d = PyDict::new(py);
        let mut set = TensorSet::new();
        for io in &self.outputs {
            let dtype = io.dtype.as_ref().ok_or_else(|| nrtpy_error(format!("output {:?} has dtype {:?}, which numpy cannot represent", io.sig.name, io.sig.dtype)))?;
            let r = NrtTensor::allocate(py, io.size, self.core_id, &io.sig.name)?;
            set.add(&io.sig.name, r.live()?);
            let t = Tensor::over(py, Py::new(py, r)?, io.shape.clone(), dtype.bind(py).clone(), Some(io.sig.name.clone()))?;
            d.set_item(io.key.bind(py), Py::new(py, t)?)?;
        }
        Ok((d, set))
    }

    fn execute(&self, py: Python<'_>, m: ModelRef, ins: &TensorSet, outs: &TensorSet) -> PyResult<()> {
        let s = session::get()?;
        py.detach(|| s.host(m.device)?.execute(m.id, ins, outs)).map_err(|e| nrt_error(py, "Failed to execute model", &e))
    }

    fn sets<'py>(&self, py: Python<'py>, inputs: &Bound<'py, PyAny>, outputs: Option<&Bound<'py, PyAny>>) -> PyResult<(TensorSet, TensorSet, Option<Bound<'py, PyDict>>)> {
        let ins = self.bind(&self.inputs, inputs, "input")?;
        Ok(match outputs {
            Some(o) if !o.is_none() => (ins, self.bind(&self.outputs, o, "output")?, None),
            _ => {
                let (d, set) = self.allocate_outputs(py)?;
                (ins, set, Some(d))
            }
        })
    }
}

/// Reads a NEFF file (`str` or path-like).
fn read_neff(py: Python<'_>, path: &str) -> PyResult<Vec<u8>> {
    py.detach(|| std::fs::read(path)).map_err(|e| {
        let msg = format!("cannot read NEFF file {path:?}: {e}");
        if e.kind() == std::io::ErrorKind::OutOfMemory { pyo3::exceptions::PyMemoryError::new_err(msg) } else { nrtpy_error(msg) }
    })
}

#[pymethods]
impl Model {
    /// Loads a NEFF onto logical core `core_id`.
    #[classmethod]
    #[allow(clippy::too_many_arguments)]
    #[pyo3(signature = (neff_path, name=None, core_id=0, cc_enabled=false, rank_id=0, world_size=1))]
    fn load_from_neff(
        _cls: &Bound<'_, pyo3::types::PyType>,
        py: Python<'_>,
        neff_path: &Bound<'_, PyAny>,
        name: Option<String>,
        core_id: u32,
        cc_enabled: bool,
        rank_id: u32,
        world_size: u32,
    ) -> PyResult<Model> {
        let path: String = py.import("os")?.getattr("fspath")?.call1((neff_path,))?.extract()?;
        if world_size == 0 || rank_id >= world_size {
            return Err(value_error(format!("rank_id {rank_id} is not in a world of {world_size}")));
        }
        let bytes = read_neff(py, &path)?;
        let s = session::get()?;
        // The GIL is released while the load waits for the other ranks
        // (threads of this process or other processes), as for execute.
        let loaded = py.detach(|| -> nrt::NrtResult<_> {
            let (d, local) = s.rt.locate_vnc(core_id)?;
            let host = s.host(d)?;
            let id = if cc_enabled {
                // nrtpy's nrt_load_collectives: the rank joins (or sets up)
                // the in-NEFF collectives' world before the load.
                let rank = nrt::cc::neff::CcRank::joining(&s.rt, core_id, rank_id, world_size)?;
                host.load_collectives(&bytes, local as i32, -1, &rank)?
            } else {
                host.load_file(&bytes, std::path::Path::new(&path), local as i32, -1)?
            };
            let (ins, outs) = host.tensor_info(id)?;
            let runtime_name = host.models().get(id).map(|m| m.name.clone()).unwrap_or_default();
            Ok((ModelRef { id, device: d }, ins, outs, runtime_name))
        });
        let (m, ins, outs, runtime_name) = loaded.map_err(|e| nrt_error(py, "Failed to load model", &e))?;
        let inputs: Vec<Io> = ins.into_iter().map(|s| Io::new(py, s)).collect();
        let outputs: Vec<Io> = outs.into_iter().map(|s| Io::new(py, s)).collect();
        // The runtime's name for it (what the logs and the tools show)
        // unless the caller names it.
        let name = name.unwrap_or(runtime_name);
        Ok(Model {
            cell: s.model_cell(m),
            name,
            neff_path: path,
            core_id,
            cc_enabled,
            rank_id,
            world_size,
            input_info: info_dict(py, &inputs)?,
            output_info: info_dict(py, &outputs)?,
            inputs,
            outputs,
        })
    }

    /// `{name: TensorMetadata}` of the inputs.
    #[getter]
    fn input_tensors_info(&self, py: Python<'_>) -> Py<PyDict> {
        self.input_info.clone_ref(py)
    }

    /// `{name: TensorMetadata}` of the outputs.
    #[getter]
    fn output_tensors_info(&self, py: Python<'_>) -> Py<PyDict> {
        self.output_info.clone_ref(py)
    }

    /// Runs the model once: `inputs` (and `outputs`, if given) map the
    /// NEFF's names to `nrt.Tensor`s on the model's core. Without
    /// `outputs`, they are allocated and returned as a dict; otherwise
    /// returns None. `save_trace=True` or `ntff_name` also writes a device
    /// profile of this execution to `ntff_name` (default: `<NEFF
    /// stem>.ntff` in the current directory).
    #[pyo3(signature = (inputs, outputs=None, save_trace=false, ntff_name=None))]
    fn __call__<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyAny>,
        outputs: Option<&Bound<'py, PyAny>>,
        save_trace: bool,
        ntff_name: Option<&Bound<'py, PyAny>>,
    ) -> PyResult<Option<Bound<'py, PyDict>>> {
        let m = self.live()?;
        let (ins, outs, made) = self.sets(py, inputs, outputs)?;
        let ntff = ntff_name.filter(|n| !n.is_none());
        if !save_trace && ntff.is_none() {
            self.execute(py, m, &ins, &outs)?;
            return Ok(made);
        }
        // The profile goes to ntff_name, else to `<NEFF stem>.ntff` in the
        // current directory (nrtpy writes it beside the NEFF, whose
        // directory may be read-only: a model store, a package); only a
        // successful execution writes it.
        let path = match ntff {
            Some(n) => std::path::PathBuf::from(n.str()?.to_cow()?.as_ref()),
            None => default_ntff(&self.neff_path),
        };
        let s = session::get()?;
        let model = s.rt.shared_models().get(m.id).ok_or_else(|| nrtpy_error(format!("model {:?} is no longer loaded", self.name)))?;
        py.detach(|| nrt::profile::capture::start(&model, nrt::profile::capture::Keep::All))
            .map_err(|e| nrt_error(py, "Failed to start the device profile", &e))?;
        let ran = self.execute(py, m, &ins, &outs);
        let captured = nrt::profile::capture::stop(&model).map_err(|e| nrt_error(py, "Failed to stop the device profile", &e))?;
        ran?;
        py.detach(|| nrt::profile::capture::write_profile(&path, &model, captured.executions()))
            .map_err(|e| nrt_error(py, &format!("Failed to write the device profile {}", path.display()), &e))?;
        Ok(made)
    }

    /// Times `benchmark_iter` executions after `warmup_iter` untimed ones.
    /// `mode="host"`: wall clock around each execute. `mode="device"`:
    /// NeuronCore time from the system trace (see `SystemTraceSession`).
    #[pyo3(signature = (inputs, outputs=None, warmup_iter=5, benchmark_iter=5, mode="device"))]
    fn benchmark<'py>(
        &self,
        py: Python<'py>,
        inputs: &Bound<'py, PyAny>,
        outputs: Option<&Bound<'py, PyAny>>,
        warmup_iter: u32,
        benchmark_iter: u32,
        mode: &str,
    ) -> PyResult<crate::bench::BenchmarkResult> {
        if mode != "device" && mode != "host" {
            return Err(value_error(format!("mode must be 'device' or 'host', got {mode:?}")));
        }
        if benchmark_iter < 1 {
            return Err(value_error(format!("benchmark_iter must be at least 1, got {benchmark_iter}")));
        }
        let m = self.live()?;
        let (ins, outs, _) = self.sets(py, inputs, outputs)?;
        if mode == "device" {
            let run = |n: u32| -> PyResult<()> {
                for _ in 0..n {
                    self.execute(py, m, &ins, &outs)?;
                }
                Ok(())
            };
            return crate::trace::device_benchmark(py, self.core_id, warmup_iter, benchmark_iter, run);
        }
        for _ in 0..warmup_iter {
            self.execute(py, m, &ins, &outs)?;
        }
        let s = session::get()?;
        let host = s.host(m.device).map_err(|e| nrt_error(py, "Failed to execute model", &e))?;
        let mut d = nrt::host_memory::with_capacity::<f64>(benchmark_iter.into(), format_args!("durations of {benchmark_iter} benchmark iterations")).map_err(|e| crate::errors::memory_error(&e))?;
        let timed = py.detach(|| -> nrt::NrtResult<Vec<f64>> {
            for _ in 0..benchmark_iter {
                let t0 = Instant::now();
                host.execute(m.id, &ins, &outs)?;
                d.push(t0.elapsed().as_secs_f64() * 1e3);
            }
            Ok(d)
        });
        let durations = timed.map_err(|e| nrt_error(py, "Failed to execute model", &e))?;
        Ok(crate::bench::BenchmarkResult::of(durations, warmup_iter))
    }

    /// Queues one execution on the core's compute execution unit and
    /// returns a `concurrent.futures.Future` resolved (from the runtime's
    /// worker) with the outputs dict (or None when `outputs` was given),
    /// or failed with `NrtError`. Tensors in flight are waited for by
    /// reads and writes. `asyncio.wrap_future` makes it awaitable.
    #[pyo3(signature = (inputs, outputs=None))]
    fn submit<'py>(&self, py: Python<'py>, inputs: &Bound<'py, PyAny>, outputs: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let m = self.live()?;
        let (ins, outs, made) = self.sets(py, inputs, outputs)?;
        let fut = py.import("concurrent.futures")?.getattr("Future")?.call0()?;
        let s = session::get()?;
        let model = s.rt.shared_models().get(m.id).ok_or_else(|| nrtpy_error(format!("model {:?} is no longer loaded", self.name)))?;
        let resolve = fut.clone().unbind();
        let result: Py<PyAny> = made.map_or_else(|| py.None(), |d| d.into_any().unbind());
        let on_complete = nrt::xu::unit::OnComplete::once(move |_seq, status| {
            Python::attach(|py| {
                let r = if status == nrt::NrtStatus::Success {
                    resolve.call_method1(py, "set_result", (result,))
                } else {
                    let e = nrt_error(py, "Failed to execute model", &nrt::NrtError::new(status, "asynchronous execution failed"));
                    resolve.call_method1(py, "set_exception", (e.value(py).clone(),))
                };
                if let Err(e) = r {
                    e.write_unraisable(py, None);
                }
            });
        });
        let core = self.core_id;
        let queued = py.detach(move || s.xus.execute_implicit(core, model, ins, outs, on_complete));
        queued.map_err(|e| nrt_error(py, "Failed to queue model execution", &e))?;
        Ok(fut)
    }

    /// `await model.run_async(inputs, outputs=None)`: [`Model::submit`]
    /// as an asyncio future of the running loop.
    #[pyo3(signature = (inputs, outputs=None))]
    fn run_async<'py>(&self, py: Python<'py>, inputs: &Bound<'py, PyAny>, outputs: Option<&Bound<'py, PyAny>>) -> PyResult<Bound<'py, PyAny>> {
        let fut = self.submit(py, inputs, outputs)?;
        py.import("asyncio")?.getattr("wrap_future")?.call1((fut,))
    }

    /// Unloads the model now (`NrtpyError` if already unloaded).
    fn unload(&self, py: Python<'_>) -> PyResult<()> {
        let m = self.live()?;
        *session::lock(&self.cell) = Slot::Freed;
        let s = session::get()?;
        py.detach(|| s.host(m.device)?.unload(m.id)).map_err(|e| nrt_error(py, "Failed to unload model", &e))
    }

    /// Whether the model is loaded.
    #[getter]
    fn is_loaded(&self) -> bool {
        matches!(&*session::lock(&self.cell), Slot::Live(_))
    }

    fn __enter__(slf: Py<Self>) -> Py<Self> {
        slf
    }

    fn __exit__(&self, py: Python<'_>, _t: &Bound<'_, PyAny>, _v: &Bound<'_, PyAny>, _tb: &Bound<'_, PyAny>) -> PyResult<bool> {
        if self.is_loaded() {
            self.unload(py)?;
        }
        Ok(false)
    }

    fn __repr__(&self) -> String {
        let io = |ios: &[Io]| ios.iter().map(|i| format!("{}: {}{:?}", i.sig.name, i.dtype_name, i.shape)).collect::<Vec<_>>().join(", ");
        let state = match &*session::lock(&self.cell) {
            Slot::Live(m) => format!("id {}", m.id),
            Slot::Freed => "unloaded".into(),
            Slot::Reset => "reset".into(),
        };
        format!("Model(name={:?}, core_id={}, {state}, inputs={{{}}}, outputs={{{}}})", self.name, self.core_id, io(&self.inputs), io(&self.outputs))
    }
}

impl Drop for Model {
    fn drop(&mut self) {
        // Unload a model Python forgot (nrtpy frees on GC too). Nothing
        // to do after reset or an explicit unload.
        let m = match std::mem::replace(&mut *session::lock(&self.cell), Slot::Freed) {
            Slot::Live(m) => m,
            _ => return,
        };
        if let Some(s) = session::current() {
            let run = || {
                if let Ok(h) = s.host(m.device) {
                    let _ = h.unload(m.id);
                }
            };
            // Dropped with the GIL held (garbage collection): release it
            // while the unload waits for executions still in flight.
            match Python::try_attach(|py| py.detach(run)) {
                Some(()) => {}
                None => run(),
            }
        }
    }
}
