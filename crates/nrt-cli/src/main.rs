//! The `nrt` command: inspect, unpack and pack NEFFs, assemble and
//! disassemble engine programs, run and benchmark models on the simulated
//! device.
//!
//! Every verb prints its result on stdout; a failure prints one line
//! `nrt: error: ...` on stderr naming what was wrong, and exits non-zero.

mod alloc_count;
mod asm_cmd;
mod check_cmd;
mod gen_cmd;
mod bench_async;
mod bench_cmd;
mod bench_device;
mod cc_cmd;
mod decoder_cmd;
mod decoder_run;
mod custom_ops_data;
#[allow(dead_code)] // shared with the runtime tests (#[path]); they use the reference helpers
mod example_data;
mod inspect;
mod lower_cmd;
mod local_workers;
mod ls_cmd;
mod monitor_cmd;
mod observe;
mod profile_cmd;
mod top_cmd;
mod kernel_cmd;
mod model_io;
mod neff_cmd;
mod run_cmd;
mod run_ranks;
mod tp_mlp_data;

/// Counts heap allocations so `nrt bench` can report them per execute.
#[global_allocator]
static GLOBAL: alloc_count::Counting = alloc_count::Counting;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

/// Command-line interface of nrt-rs.
#[derive(Parser)]
#[command(name = "nrt", version, about = "nrt-rs: the Neuron runtime, with a simulated NeuronCore")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Work with NEFF files: inspect, unpack, pack, check, lower.
    Neff {
        #[command(subcommand)]
        command: NeffCommand,
    },
    /// Assemble a text engine program into 64-byte instruction records.
    Asm {
        /// The program text.
        input: PathBuf,
        /// Where to write the records.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Disassemble an engine stream (a `.bin` of 64-byte records), or every
    /// stream of a NEFF with the compiler's instruction names from its debug info.
    Disasm {
        /// The instruction stream or NEFF file.
        input: PathBuf,
        /// With a NEFF: only this subgraph (e.g. sg00).
        #[arg(long)]
        subgraph: Option<String>,
        /// With a NEFF: only this engine (pe, act, pool, dve, sp).
        #[arg(long)]
        engine: Option<String>,
    },
    /// Load a NEFF (or pack a source directory on the fly), execute it once on
    /// the simulated device, print output checksums and write NAME.npy files.
    Run {
        /// The NEFF file or NEFF source directory.
        model: PathBuf,
        /// An input from a .npy file; inputs not given get deterministic pseudo-random data.
        #[arg(long = "input", value_name = "NAME=PATH.npy", value_parser = model_io::parse_input_arg)]
        inputs: Vec<(String, PathBuf)>,
        /// Where to write each output as NAME.npy (created if missing).
        #[arg(long)]
        output_dir: Option<PathBuf>,
        /// Also write a device instruction profile of the execution (Chrome
        /// trace JSON: every instruction per engine, with the compiler's
        /// names) under this directory.
        #[arg(long, value_name = "DIR")]
        profile: Option<PathBuf>,
        /// Run a set of NEFFs with in-NEFF collectives: MODEL is a directory
        /// holding one model per rank (rank0/ .. or rank0.neff ..), each
        /// loaded with nrt_load_collectives as its rank on its own logical
        /// core; every rank gets the same inputs; outputs go to
        /// OUTPUT_DIR/rankR/. A tp-decoder tree (`nrt gen tp-decoder`)
        /// runs its prefill then 4 decode steps on every rank and is
        /// checked against its f64 reference.
        #[arg(long, value_name = "N")]
        ranks: Option<usize>,
        /// With --ranks: split the ranks over P processes on this machine
        /// (each owning N / P logical cores), which meet at
        /// NEURON_RT_ROOT_COMM_ID (a free loopback port unless set) and
        /// move the collectives' bytes over libfabric, as cc-test's
        /// --processes.
        #[arg(long, value_name = "P", default_value_t = 1)]
        processes: usize,
    },
    /// Measure execute latency (sync) or queued throughput (async) of a model on the simulated device.
    Bench {
        /// The NEFF file or NEFF source directory.
        model: PathBuf,
        /// Timed executions (sync: 1000; async: at least 1000 and about
        /// 200 ms worth at the warm-up's rate).
        #[arg(long)]
        iterations: Option<u64>,
        /// Untimed executions first (sync: 50; async: at least 50 and
        /// 100 ms, past the slower start of the unit's worker).
        #[arg(long)]
        warmup: Option<u64>,
        /// Print one JSON object instead of the table.
        #[arg(long)]
        json: bool,
        /// `sync` (nrt_execute latency) or `async` (queued executions:
        /// executions/s and the mean gap between completions).
        #[arg(long, default_value = "sync", value_parser = ["sync", "async"])]
        mode: String,
        /// Requests kept queued in async mode (1..=63).
        #[arg(long, default_value_t = 8)]
        depth: u64,
        /// Also measure the two-thread spin hand-off round trip and print
        /// latency as a ratio of it (sync mode).
        #[arg(long)]
        spin: bool,
        /// Skip the traced pass (device time, traced latency): only the
        /// untraced executions run (sync mode).
        #[arg(long)]
        host_only: bool,
    },
    /// Write the generated members under DIR: the mlp examples' constants
    /// (W.npy, b.npy), the tp-mlp ranks' weight shards, and custom_ops'
    /// argument blocks and kernel libraries.
    ExampleData {
        /// The examples directory (holding mlp/ and mlp-bf16/).
        #[arg(default_value = "examples")]
        dir: PathBuf,
    },
    /// Generate models in the compiler's encoding.
    Gen {
        #[command(subcommand)]
        command: GenCommand,
    },
    /// List the simulated devices, their cores and memory and the processes
    /// using them (neuron-ls; read from the devices' datastores).
    Ls {
        /// Show the PID, whole command line and runtime version of the processes.
        #[arg(short, long)]
        wide: bool,
        /// One sub-row per process using each device.
        #[arg(short = 'a', long)]
        show_all_procs: bool,
        /// Print neuron-ls's JSON array instead of the table.
        #[arg(short, long)]
        json_output: bool,
    },
    /// Periodic JSON reports of every process using the simulated devices
    /// (neuron-monitor's groups and fields).
    Monitor {
        /// neuron-monitor config file (period, neuron_runtimes, system_metrics).
        #[arg(short, long)]
        config: Option<PathBuf>,
        /// Stop after this many reports (0: until interrupted).
        #[arg(long, default_value_t = 0)]
        count: u64,
        /// Write the Prometheus text form instead of JSON.
        #[arg(long)]
        prometheus: bool,
        /// Accepted for neuron-monitor compatibility (0..4); reports are the same.
        #[arg(long, default_value_t = 0, value_parser = clap::value_parser!(u8).range(0..=4))]
        verbose: u8,
    },
    /// Live terminal view of core utilisation, memory by category, models
    /// and processes on the simulated devices (neuron-top).
    Top {
        /// Refresh interval in seconds.
        #[arg(long, default_value_t = 1.0)]
        interval: f64,
    },
    /// Summarise a device profile nrt wrote (per engine busy and idle time
    /// and what it waited on, per DMA queue packets and bytes, opcode
    /// counts, top instructions), optionally as an HTML timeline page.
    Profile {
        /// The profile file (`nrt run --profile`, nrt_profile_start/stop,
        /// inspect), or a directory of them (`nrt run --profile DIR`'s).
        file: PathBuf,
        /// Also write a self-contained timeline page (one track per engine and DMA queue).
        #[arg(long, value_name = "OUT.html")]
        html: Option<PathBuf>,
    },
    /// Benchmark and check collectives between ranks on the simulated
    /// instance, as nccom-test does: `nrt cc-test -r RANKS [options] OP`
    /// with OP one of all_reduce|allr, all_gather|allg,
    /// reduce_scatter|redsct, sendrecv, alltoall, permute. The ranks are
    /// logical cores of this process, or split over --processes on this
    /// machine or -N machines.
    CcTest {
        /// The operation (`-c OP` reads as the default check, then OP).
        op: Option<String>,
        /// Ranks in all: logical cores, split evenly over the processes
        /// (this one alone unless --processes or -N).
        #[arg(short = 'r', long = "nranks")]
        ranks: usize,
        /// Nodes (machines): more than 1 launches one process per host of
        /// --hosts through mpirun (Open MPI), which meet at
        /// NEURON_RT_ROOT_COMM_ID (set it to the first host's address:port).
        #[arg(short = 'N', long = "nnodes", default_value_t = 1)]
        nodes: usize,
        /// Hosts of a multi-node run, one per node, comma separated (with -N).
        #[arg(short = 's', long)]
        hosts: Option<String>,
        /// Processes on this machine the ranks split over (ours): the command spawns them, they meet at NEURON_RT_ROOT_COMM_ID (a free loopback port unless set) and talk over libfabric.
        #[arg(long, default_value_t = 1)]
        processes: usize,
        /// Smallest size (e.g. 32M, 2kb).
        #[arg(short = 'b', long = "minbytes", default_value = "32M", value_parser = cc_cmd::parse_size)]
        min_bytes: u64,
        /// Largest size.
        #[arg(short = 'e', long = "maxbytes", default_value = "32M", value_parser = cc_cmd::parse_size)]
        max_bytes: u64,
        /// Size step (default (max - min) / 10).
        #[arg(short = 'i', long = "stepbytes", value_parser = cc_cmd::parse_size)]
        step_bytes: Option<u64>,
        /// Size factor between steps (overrides -i).
        #[arg(short = 'f', long = "stepfactor")]
        step_factor: Option<u64>,
        /// Timed iterations per size.
        #[arg(short = 'n', long = "iters", default_value_t = 20)]
        iters: u32,
        /// Warm-up iterations per size.
        #[arg(short = 'w', long = "warmup_iters", default_value_t = 5)]
        warmup: u32,
        /// Element type: uint8, int8, fp8e4, uint16, int16, fp16, bf16, uint32, int32, fp32.
        #[arg(short = 'd', long = "datatype", default_value = "uint8")]
        datatype: String,
        /// Check the outputs: random (a CPU golden) or all_ones.
        #[arg(short = 'c', long = "check", num_args = 0..=1, default_missing_value = "random")]
        check: Option<String>,
        /// Seed of --check random.
        #[arg(long, default_value_t = 0)]
        seed: u64,
        /// Write the results as JSON to this file.
        #[arg(long = "report-to-json-file")]
        report: Option<PathBuf>,
        /// Add the algorithm column.
        #[arg(long = "show-algorithm")]
        show_algorithm: bool,
        /// Also measure host memcpy bandwidth of each size, interleaved with
        /// the iterations, and print the medians and their ratio (ours).
        #[arg(long = "compare-memcpy")]
        compare_memcpy: bool,
    },
    /// Build GPSIMD custom-op kernel libraries.
    Kernel {
        #[command(subcommand)]
        command: KernelCommand,
    },
}

/// `nrt gen ...` subcommands.
#[derive(Subcommand)]
enum GenCommand {
    /// Write a NEFF computing output0 [M, N] = x [M, K] @ y [K, N], tiled as
    /// the compiler does (PE transposes, spills, accumulation groups of 32
    /// K-tiles, LNC 2 splitting N or M over the two cores).
    Matmul {
        /// Rows of x and output0 (a multiple of 128).
        #[arg(long)]
        m: usize,
        /// Columns of x, rows of y (a multiple of 128).
        #[arg(long)]
        k: usize,
        /// Columns of y and output0.
        #[arg(long)]
        n: usize,
        /// Element type of x, y and output0.
        #[arg(long, default_value = "fp16", value_parser = ["fp16", "bf16", "fp32"])]
        dtype: String,
        /// Logical NeuronCore size (physical cores).
        #[arg(long, default_value_t = 2, value_parser = clap::value_parser!(u8).range(1..=2))]
        lnc: u8,
        /// With LNC 2: split the output columns (n) or rows (m) between the cores.
        #[arg(long, default_value = "n", value_parser = ["n", "m"])]
        split: String,
        /// Print these tensors from the device, tile by tile as they pass
        /// through SBUF (DEBUG_TENSOR_READ, NKI's device_print): each tile
        /// goes to the debug stream under the prefix NAME.rROW.cCOL (its
        /// first element's row and column).
        #[arg(long = "print", value_name = "TENSOR[,TENSOR]", value_delimiter = ',', value_parser = ["x", "y", "output0"])]
        prints: Vec<String>,
        /// The NEFF to write.
        #[arg(short, long)]
        output: PathBuf,
    },
    /// Write a tensor-parallel Llama-style decoder (DIR/decoder.json,
    /// DIR/prefill/rankR, DIR/decode/rankR): RMSNorm, column-parallel QKV,
    /// causal softmax attention over a KV cache, row-parallel output
    /// projection and SwiGLU MLP, two in-NEFF all-reduces per layer; a
    /// context-encoding (prefill) and a token-generation (decode) NEFF per
    /// rank sharing weights and caches. d_model 256, 8 heads of 32, ffn 768,
    /// a 16-token prompt, 32 cache positions.
    TpDecoder {
        /// Tensor-parallel ranks (1, 2, 4 or 8: the heads split evenly).
        #[arg(long, default_value_t = 2)]
        ranks: usize,
        /// Decoder layers.
        #[arg(long, default_value_t = 4)]
        layers: usize,
        /// Logical NeuronCore size (physical cores; also the batch: one sequence per core).
        #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u8).range(1..=2))]
        lnc: u8,
        /// Seed of the weights and the token embeddings.
        #[arg(long, default_value_t = 1)]
        seed: u64,
        /// Also write DIR/data: each rank's weight shards
        /// (rankR/NAME.npy) and the token inputs of the prefill and of the
        /// decode steps `nrt run --ranks` runs (x_prefill.npy,
        /// x_decode.npy), for clients that bind them themselves (C,
        /// Python).
        #[arg(long)]
        data: bool,
        /// The directory to write the trees under.
        #[arg(short, long)]
        output_dir: PathBuf,
    },
    /// Write the tensor-parallel mlp example's rank source trees
    /// (DIR/rank0, DIR/rank1, ...): relu(x @ W1 + b1) @ W2 + b2 with the
    /// hidden units split over the ranks and an in-NEFF all-reduce
    /// (x [128, 256], 512 hidden units, the example's constants).
    TpMlp {
        /// Ranks (1, 2 or 4: each holds whole 128-unit chunks).
        #[arg(long, default_value_t = 2)]
        ranks: usize,
        /// Leave the constants (.npy shards) out; `nrt run`, `nrt neff pack`
        /// and `nrt example-data` generate them for examples/tp-mlp.
        #[arg(long)]
        no_constants: bool,
        /// The directory to write the rank trees under.
        #[arg(short, long)]
        output_dir: PathBuf,
    },
}

/// `nrt kernel ...` subcommands.
#[derive(Subcommand)]
enum KernelCommand {
    /// Build a GPSIMD kernel crate for wasm32 (+simd128, release), check it
    /// against the device ABI and write the library file a NEFF includes.
    Build {
        /// The kernel crate (a cdylib using nrt-kernel).
        crate_dir: PathBuf,
        /// The library file to write (default: <crate dir name>.ucpl).
        #[arg(short, long)]
        output: Option<PathBuf>,
        /// Cargo target directory for the wasm build.
        #[arg(long)]
        target_dir: Option<PathBuf>,
    },
}

#[derive(Subcommand)]
enum NeffCommand {
    /// Show a NEFF's header, subgraphs, vars, queue sets, I/O tensors and programs.
    Inspect {
        /// The NEFF file.
        file: PathBuf,
        /// Print one JSON object instead of tables.
        #[arg(long)]
        json: bool,
        /// Check the payload digest against the header.
        #[arg(long)]
        verify_hash: bool,
    },
    /// Extract every member of a NEFF (and its header as neff-header.json) into DIR.
    Unpack {
        /// The NEFF file.
        file: PathBuf,
        /// The directory to create or fill.
        dir: PathBuf,
    },
    /// Pack DIR into a NEFF; `*.asm` programs are assembled into `.bin` members of the same stem.
    Pack {
        /// The directory (as written by `unpack`, or hand-made).
        dir: PathBuf,
        /// The NEFF file to write.
        file: PathBuf,
        /// Model name stored in the header.
        #[arg(long)]
        name: Option<String>,
        /// Payload digest: sha256 (plain tar, pkg_version 1) or md5 (gzip tar, pkg_version 2).
        #[arg(long, value_parser = ["sha256", "md5"])]
        hash: Option<String>,
    },
    /// List what of a NEFF the simulator cannot run (opcode, engine, count,
    /// first instruction's name), without executing it; fails if anything.
    Check {
        /// The NEFF file.
        file: PathBuf,
    },
    /// Load a NEFF (or source directory) on the simulated device and print,
    /// per engine, the lowered and relocated stream the runtime staged: one
    /// record per line with its header word and opcode name.
    Lower {
        /// The NEFF file or NEFF source directory.
        model: PathBuf,
        /// Only this engine (pe, act, pool, dve, sp).
        #[arg(long)]
        engine: Option<String>,
    },
}

/// `nrt example-data`: writes the mlp examples' constants.
fn example_data_cmd(dir: &std::path::Path) -> anyhow::Result<()> {
    let mut written = example_data::write_all(dir)?;
    written.extend(tp_mlp_data::write_constants(dir)?);
    let custom = dir.join("custom_ops");
    if custom_ops_data::is_custom_ops(&custom) {
        for (member, bytes) in custom_ops_data::members(&custom_ops_data::kernel_target_dir()).map_err(|e| anyhow::anyhow!("custom_ops: {e}"))? {
            let path = custom.join(member);
            if std::fs::read(&path).is_ok_and(|old| old == bytes) {
                continue;
            }
            std::fs::write(&path, &bytes)?;
            written.push(path);
        }
    }
    for p in &written {
        println!("wrote {}", p.display());
    }
    if written.is_empty() {
        println!("constants under {} are up to date", dir.display());
    }
    Ok(())
}

fn main() -> ExitCode {
    // A reader that stops early (`nrt neff inspect F | head`) ends the
    // command quietly, as it ends other Unix tools, instead of a panic in
    // println! on the broken pipe: Rust starts with SIGPIPE ignored.
    // SAFETY: called first, before any thread exists; SIG_DFL is a valid
    // disposition for SIGPIPE.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Neff { command } => match command {
            NeffCommand::Inspect { file, json, verify_hash } => inspect::run(&file, json, verify_hash),
            NeffCommand::Unpack { file, dir } => neff_cmd::unpack(&file, &dir),
            NeffCommand::Pack { dir, file, name, hash } => neff_cmd::pack(&dir, &file, name, hash.as_deref()),
            NeffCommand::Lower { model, engine } => lower_cmd::lower(&model, engine.as_deref()),
            NeffCommand::Check { file } => check_cmd::check(&file),
        },
        Command::Gen { command: GenCommand::Matmul { m, k, n, dtype, lnc, split, prints, output } } => {
            gen_cmd::matmul(&gen_cmd::MatmulArgs { m, k, n, dtype: &dtype, lnc: usize::from(lnc), split: &split, prints: &prints }, &output)
        }
        Command::Asm { input, output } => asm_cmd::assemble(&input, &output),
        Command::Disasm { input, subgraph, engine } => asm_cmd::disassemble(&input, subgraph.as_deref(), engine.as_deref()),
        Command::Gen { command: GenCommand::TpMlp { ranks, no_constants, output_dir } } => gen_cmd::tp_mlp(ranks, !no_constants, &output_dir),
        Command::Run { profile: Some(_), ranks: Some(_), .. } => Err(anyhow::anyhow!("--profile is not supported with --ranks")),
        Command::Run { ranks: None, processes, .. } if processes != 1 => Err(anyhow::anyhow!("--processes {processes} splits the ranks of --ranks N; it needs --ranks")),
        Command::Gen { command: GenCommand::TpDecoder { ranks, layers, lnc, seed, data, output_dir } } => {
            gen_cmd::tp_decoder(&gen_cmd::TpDecoderArgs { ranks, layers, lnc: usize::from(lnc), seed, data }, &output_dir)
        }
        Command::Run { model, inputs, output_dir, ranks: Some(ranks), processes, .. } if decoder_cmd::is_decoder_tree(&model) => decoder_cmd::run(&model, ranks, processes, &inputs, output_dir.as_deref()),
        Command::Run { model, inputs, output_dir, ranks: Some(ranks), processes, .. } => run_ranks::run(&model, ranks, processes, &inputs, output_dir.as_deref()),
        Command::Run { model, inputs, output_dir, profile, ranks: None, .. } => run_cmd::run(&model, &inputs, output_dir.as_deref(), profile.as_deref()),
        Command::Bench { model, iterations, warmup, json, mode, depth, .. } if mode == "async" => bench_async::bench(&model, iterations, warmup, depth, json),
        Command::Bench { model, iterations, warmup, json, spin, host_only, .. } => {
            bench_cmd::bench(&model, iterations.unwrap_or(1000), warmup.unwrap_or(50), json, spin, !host_only)
        }
        Command::ExampleData { dir } => example_data_cmd(&dir),
        Command::Ls { wide, show_all_procs, json_output } => ls_cmd::run(wide, show_all_procs, json_output),
        Command::Monitor { config, count, prometheus, .. } => monitor_cmd::run(config.as_deref(), count, prometheus),
        Command::Top { interval } if !(interval > 0.0 && interval <= 3600.0) => {
            Err(anyhow::anyhow!("--interval {interval}: expected seconds in (0, 3600]"))
        }
        Command::Profile { file, html } => profile_cmd::run(&file, html.as_deref()),
        Command::Top { interval } => top_cmd::run(std::time::Duration::from_secs_f64(interval)),
        Command::CcTest { op, ranks, nodes, hosts, processes, min_bytes, max_bytes, step_bytes, step_factor, iters, warmup, datatype, check, seed, report, show_algorithm, compare_memcpy } => {
            cc_cmd::op_and_check(op, check).and_then(|(op, check)| {
                let o = cc_cmd::Options { ranks, nodes, hosts, processes, op, min_bytes, max_bytes, step_bytes, step_factor, iters, warmup, datatype, check, seed, json: report, show_algorithm, compare_memcpy };
                cc_cmd::run(&o)
            })
        }
        Command::Kernel { command: KernelCommand::Build { crate_dir, output, target_dir } } => {
            kernel_cmd::build(&crate_dir, output.as_deref(), target_dir.as_deref())
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            // One line: the context chain joined, so scripts can grep it.
            let msg = format!("{err:#}").replace('\n', " ");
            eprintln!("nrt: error: {msg}");
            ExitCode::FAILURE
        }
    }
}
