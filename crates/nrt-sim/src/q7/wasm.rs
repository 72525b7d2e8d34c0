//! The process-wide wasmtime engine (cranelift, epoch interruption), the
//! epoch ticker, and the cache of compiled libraries keyed by their bytes.

use nrt_isa::ucode::{KernelRow, LibraryImage};
use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Condvar, Mutex, OnceLock};
use std::time::Duration;
use wasmtime::{Config, Engine, ExternType, FuncType, Linker, Module, Store, StoreLimits, StoreLimitsBuilder, Val, ValType};

/// Milliseconds between two epoch ticks (the watchdog's resolution).
pub const EPOCH_TICK_MS: u64 = 10;
/// Largest guest memory a kernel may grow to (64 MiB).
pub const MAX_GUEST_MEMORY: usize = 64 << 20;
/// Wasm stack a kernel may use before STACK_OVERFLOW.
pub const MAX_WASM_STACK: usize = 512 << 10;
/// Compiled libraries kept (distinct images); the cache is cleared when full.
const CACHE_LIMIT: usize = 64;

struct WasmHost {
    engine: Engine,
    ticker: Mutex<TickerState>,
    /// Wakes the ticker while [`TickerState::waiting`].
    wake: Condvar,
}

/// What the epoch ticker goes by.
#[derive(Debug, Default)]
struct TickerState {
    /// Invocations running.
    running: usize,
    /// Invocations started so far (wrapping): the ticker keeps ticking
    /// through a tick period in which any started, so back-to-back ops
    /// (each invocation takes `running` from 0 to 1 in deterministic
    /// mode) do not wake it with a system call each time.
    starts: u64,
    /// The ticker is waiting on [`WasmHost::wake`]; only then does a start
    /// notify it (a notify is a system call even with no one waiting).
    waiting: bool,
}

static HOST: OnceLock<Result<WasmHost, String>> = OnceLock::new();
static TICKER: OnceLock<()> = OnceLock::new();

fn host() -> Result<&'static WasmHost, String> {
    HOST
        .get_or_init(|| {
            let mut c = Config::new();
            c.epoch_interruption(true);
            c.max_wasm_stack(MAX_WASM_STACK);
            c.cranelift_opt_level(wasmtime::OptLevel::Speed);
            // NRT_Q7_PERFMAP=1: wasmtime writes /tmp/perf-<pid>.map, so
            // `perf report` names kernel functions instead of raw addresses.
            if std::env::var_os("NRT_Q7_PERFMAP").is_some() {
                c.profiler(wasmtime::ProfilingStrategy::PerfMap);
            }
            Engine::new(&c)
                .map(|engine| WasmHost { engine, ticker: Mutex::new(TickerState::default()), wake: Condvar::new() })
                .map_err(|e| format!("cannot create the wasm engine: {e}"))
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// The shared engine.
pub fn engine() -> Result<&'static Engine, String> {
    host().map(|s| &s.engine)
}

/// Marks one invocation running while the guard lives; the ticker thread
/// (one per process, started on first use) advances the epoch every
/// [`EPOCH_TICK_MS`] while some invocation runs (and through one more tick
/// after the last one started), and waits otherwise.
pub struct Running(&'static WasmHost);

impl Running {
    /// Starts counting one invocation.
    pub fn start() -> Result<Running, String> {
        let s = host()?;
        let mut st = s.ticker.lock().unwrap_or_else(|e| e.into_inner());
        st.running += 1;
        st.starts = st.starts.wrapping_add(1);
        // This runs per invocation: notify (a system call) only a ticker
        // that waits.
        if st.waiting {
            s.wake.notify_all();
        }
        drop(st);
        TICKER.get_or_init(|| {
            // The ticker never ends; a panic in it restarts it (runaway
            // kernels are stopped only while it ticks).
            let spawned = std::thread::Builder::new().name("nrt-sim-q7-epoch".into()).spawn(move || {
                while std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| ticker(s))).is_err() {
                    std::thread::sleep(Duration::from_millis(EPOCH_TICK_MS));
                }
            });
            if spawned.is_err() {
                // Without a ticker runaway kernels cannot be stopped; the
                // watchdog then relies on the callback's own clock check,
                // which only runs at epoch ticks: nothing else to do.
            }
        });
        Ok(Running(s))
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let mut st = self.0.ticker.lock().unwrap_or_else(|e| e.into_inner());
        st.running = st.running.saturating_sub(1);
    }
}

fn ticker(s: &'static WasmHost) {
    let mut seen = 0u64;
    loop {
        {
            let mut st = s.ticker.lock().unwrap_or_else(|e| e.into_inner());
            // Idle for a whole tick: nothing runs and nothing started.
            while st.running == 0 && st.starts == seen {
                st.waiting = true;
                st = s.wake.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            st.waiting = false;
            seen = st.starts;
        }
        std::thread::sleep(Duration::from_millis(EPOCH_TICK_MS));
        s.engine.increment_epoch();
    }
}

/// A library compiled and checked against the kernel ABI.
#[derive(Debug)]
pub struct CompiledLib {
    /// The compiled module.
    pub module: Module,
    /// Kernel names by index (`get_func_name(i)`).
    pub kernels: Vec<String>,
    /// The library's `kernel_info_table`.
    pub table: Vec<KernelRow>,
}

impl CompiledLib {
    /// The first table row for (spec, opcode), resolved to its kernel name.
    pub fn lookup(&self, spec: u8, opcode: u8) -> Option<Result<&str, String>> {
        let row = self.table.iter().find(|r| r.spec == spec && r.opcode == opcode)?;
        Some(
            self.kernels
                .get(row.func as usize)
                .map(String::as_str)
                .ok_or_else(|| format!("table row (spec {spec}, opcode {opcode:#x}) names kernel {} of {}", row.func, self.kernels.len())),
        )
    }

    /// The kernel called `name`.
    pub fn by_name(&self, name: &str) -> Option<&str> {
        self.kernels.iter().find(|k| k.as_str() == name).map(String::as_str)
    }
}

/// The imports a kernel may use: name, parameters, results.
pub(crate) const IMPORTS: &[(&str, &[ValType], &[ValType])] = &[
    ("get_cpu_id", &[], &[ValType::I32]),
    ("get_cpu_count", &[], &[ValType::I32]),
    ("arg_block", &[ValType::I32, ValType::I32], &[ValType::I32]),
    ("tensor_read", &[ValType::I32, ValType::I64, ValType::I32, ValType::I32], &[ValType::I32]),
    ("tensor_write", &[ValType::I32, ValType::I64, ValType::I32, ValType::I32], &[ValType::I32]),
    ("stdio_write", &[ValType::I32, ValType::I32, ValType::I32], &[ValType::I32]),
    ("one_value", &[], &[ValType::I32]),
];

fn func_is(t: &ExternType, params: &[ValType], results: &[ValType]) -> bool {
    let Some(f) = t.func() else { return false };
    let eq = |a: &mut dyn ExactSizeIterator<Item = ValType>, b: &[ValType]| a.len() == b.len() && a.zip(b).all(|(x, y)| ValType::eq(&x, y));
    eq(&mut f.params(), params) && eq(&mut f.results(), results)
}

/// Compiles `lib` and checks it against the ABI (`docs/gpsimd.md` §3).
fn compile(lib: &LibraryImage) -> Result<CompiledLib, String> {
    let engine = engine()?;
    let module = Module::new(engine, &lib.wasm).map_err(|e| format!("module does not compile: {e:#}"))?;
    for imp in module.imports() {
        let ok = imp.module() == "env"
            && IMPORTS.iter().any(|(n, p, r)| *n == imp.name() && func_is(&imp.ty(), p, r));
        if !ok {
            return Err(format!("import {}.{} is not part of the kernel ABI (or has the wrong type)", imp.module(), imp.name()));
        }
    }
    let i32v = [ValType::I32];
    let need: [(&str, &[ValType], &[ValType]); 3] =
        [("get_func_cnt", &[], &i32v), ("get_func_name", &i32v, &i32v), ("get_func_ptr", &i32v, &i32v)];
    for (name, p, r) in need {
        match module.get_export(name) {
            Some(t) if func_is(&t, p, r) => {}
            Some(_) => return Err(format!("export {name} has the wrong type")),
            None => return Err(format!("missing export {name}")),
        }
    }
    if !matches!(module.get_export("memory"), Some(ExternType::Memory(_))) {
        return Err("missing export memory".into());
    }
    let kernels = list_kernels(&module)?;
    for name in &kernels {
        match module.get_export(name) {
            Some(t) if func_is(&t, &[], &i32v) => {}
            _ => return Err(format!("kernel {name} is not exported as a () -> i32 function")),
        }
    }
    for r in &lib.table {
        if r.func as usize >= kernels.len() {
            return Err(format!("table row (spec {}, opcode {:#x}) names kernel {} of {}", r.spec, r.opcode, r.func, kernels.len()));
        }
    }
    Ok(CompiledLib { module, kernels, table: lib.table.clone() })
}

type Cache = HashMap<Vec<u8>, Result<Arc<CompiledLib>, String>>;
static CACHE: OnceLock<Mutex<Cache>> = OnceLock::new();
static COMPILES: AtomicUsize = AtomicUsize::new(0);

/// The compiled form of `lib`, from the cache when the same bytes were
/// compiled before (failures are cached too).
pub fn compiled(lib: &LibraryImage) -> Result<Arc<CompiledLib>, String> {
    let key = lib.to_file();
    let cache = CACHE.get_or_init(|| Mutex::new(HashMap::new()));
    if let Some(hit) = cache.lock().unwrap_or_else(|e| e.into_inner()).get(&key) {
        return hit.clone();
    }
    COMPILES.fetch_add(1, Ordering::Relaxed);
    let r = compile(lib).map(Arc::new);
    let mut c = cache.lock().unwrap_or_else(|e| e.into_inner());
    if c.len() >= CACHE_LIMIT {
        c.clear();
    }
    c.insert(key, r.clone());
    r
}

/// Compilations so far (to test that the cache works).
pub fn compile_count() -> usize {
    COMPILES.load(Ordering::Relaxed)
}

/// Instantiates `module` once to read its kernel list (`get_func_cnt`,
/// `get_func_name`, `get_func_ptr`), checking names and handles.
///
/// The kernel imports are bound to what they answer outside an op (the
/// invocation's linker, `invoke`, answers the same with no op in flight):
/// the ids and counts read as 0, a stdio write takes nothing, the
/// argument and tensor imports trap.
fn list_kernels(module: &Module) -> Result<Vec<String>, String> {
    let mut store = Store::new(engine()?, StoreLimitsBuilder::new().memory_size(MAX_GUEST_MEMORY).instances(1).build());
    store.limiter(|s| s);
    store.set_epoch_deadline(100);
    let inst = inspection_linker()?.instantiate(&mut store, module).map_err(|e| format!("cannot instantiate: {e}"))?;
    let cnt = inst.get_typed_func::<(), i32>(&mut store, "get_func_cnt").map_err(|e| e.to_string())?;
    let name = inst.get_typed_func::<i32, i32>(&mut store, "get_func_name").map_err(|e| e.to_string())?;
    let ptr = inst.get_typed_func::<i32, i32>(&mut store, "get_func_ptr").map_err(|e| e.to_string())?;
    let mem = inst.get_memory(&mut store, "memory").ok_or("missing export memory")?;
    let n = cnt.call(&mut store, ()).map_err(|e| format!("get_func_cnt trapped: {e}"))?;
    if !(0..0x8000).contains(&n) {
        return Err(format!("get_func_cnt returned {n}, expected 0..0x8000"));
    }
    let mut names = Vec::with_capacity(n as usize);
    for i in 0..n {
        let p = name.call(&mut store, i).map_err(|e| format!("get_func_name({i}) trapped: {e}"))? as u32 as usize;
        let data = mem.data(&store);
        let s = data.get(p..).ok_or_else(|| format!("get_func_name({i}) points outside memory"))?;
        let end = s.iter().take(256).position(|&b| b == 0).ok_or_else(|| format!("kernel {i}'s name is not NUL-terminated within 255 bytes"))?;
        let s = std::str::from_utf8(&s[..end]).map_err(|_| format!("kernel {i}'s name is not UTF-8"))?.to_string();
        if s.is_empty() {
            return Err(format!("kernel {i} has an empty name"));
        }
        if ptr.call(&mut store, i).map_err(|e| format!("get_func_ptr({i}) trapped: {e}"))? == 0 {
            return Err(format!("kernel {i} ({s}) is not registered (get_func_ptr returned 0)"));
        }
        names.push(s);
    }
    Ok(names)
}

/// The linker [`list_kernels`] instantiates with (see there).
fn inspection_linker() -> Result<&'static Linker<StoreLimits>, String> {
    static LINKER: OnceLock<Result<Linker<StoreLimits>, String>> = OnceLock::new();
    LINKER
        .get_or_init(|| {
            let engine = engine()?;
            let mut l = Linker::new(engine);
            for (name, params, results) in IMPORTS {
                let ty = FuncType::new(engine, params.iter().cloned(), results.iter().cloned());
                let traps = match *name {
                    "arg_block" => Some("arg_block outside an op"),
                    "tensor_read" | "tensor_write" => Some("tensor access outside an op"),
                    _ => None,
                };
                l.func_new("env", name, ty, move |_, _, out| {
                    if let Some(why) = traps {
                        return Err(wasmtime::Error::msg(why));
                    }
                    out.iter_mut().for_each(|v| *v = Val::I32(0));
                    Ok(())
                })
                .map_err(|e| format!("cannot define the kernel imports: {e}"))?;
            }
            Ok(l)
        })
        .as_ref()
        .map_err(Clone::clone)
}

/// Checks a library file as the device would load it: header, table,
/// module, exports and imports. Returns the kernel names.
pub fn check_library(file: &[u8]) -> Result<Vec<String>, String> {
    let lib = LibraryImage::from_file(file).map_err(|e| e.to_string())?;
    compiled(&lib).map(|c| c.kernels.clone())
}
