//! Collectives between the logical cores of one process, run as DMA work
//! on a simulated trn2 device (eight cores, LNC 1): every op x several
//! dtypes x world sizes 2, 4 and 8, checked against a host reference;
//! bit-identical results on every rank and run; a missing rank, a
//! mismatched op and bad arguments give their status and message.

use half::{bf16, f16};
use nrt::cc::{Arrival, CcKind, ReduceOp};
use nrt::config::Env;
use nrt::tensor::Tensor;
use nrt::{NrtStatus, Runtime, RuntimeOptions};
use nrt_hal::{Arch, Device};
use nrt_isa::dtype::Dtype;
use nrt_sim::{SimConfig, SimDevice};
use std::path::PathBuf;
use std::sync::Arc;

fn runtime(test: &str, env: &[(&str, &str)]) -> Runtime {
    let dir: PathBuf = std::env::temp_dir().join(format!("nrt-cc-{}-{test}", std::process::id()));
    let cfg = SimConfig::builder().arch(Arch::Trn2).devices(1).hbm_bytes_per_channel(256 << 20).locks(dir, test).build();
    let devs: Vec<Arc<dyn Device>> = SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
    let mut pairs = vec![("NEURON_LOGICAL_NC_CONFIG", "1")];
    pairs.extend_from_slice(env);
    Runtime::init(RuntimeOptions::new(devs, Env::from_pairs(pairs))).unwrap()
}

fn enc(dtype: Dtype, v: i64) -> Vec<u8> {
    match dtype {
        Dtype::Float32 => (v as f32).to_le_bytes().to_vec(),
        Dtype::Float16 => f16::from_f32(v as f32).to_le_bytes().to_vec(),
        Dtype::Bfloat16 => bf16::from_f32(v as f32).to_le_bytes().to_vec(),
        Dtype::Int8 | Dtype::Uint8 => vec![v as u8],
        Dtype::Int16 | Dtype::Uint16 => (v as u16).to_le_bytes().to_vec(),
        Dtype::Int32 | Dtype::Uint32 => (v as u32).to_le_bytes().to_vec(),
        _ => unreachable!(),
    }
}

fn encode(dtype: Dtype, v: &[i64]) -> Vec<u8> {
    v.iter().flat_map(|&x| enc(dtype, x)).collect()
}

/// Rank `r`'s input values: small integers (every sum of eight is exact
/// in every dtype tested), negative ones for signed and float types.
fn values(dtype: Dtype, r: usize, len: u64) -> Vec<i64> {
    let signed = !matches!(dtype, Dtype::Uint8 | Dtype::Uint16 | Dtype::Uint32);
    (0..len as i64).map(|i| (i * 7 + r as i64 * 3 + i / 5) % 8 - if signed { 3 } else { 0 }).collect()
}

fn reduce(op: ReduceOp, vals: impl Iterator<Item = i64>) -> i64 {
    let v: Vec<i64> = vals.collect();
    match op {
        ReduceOp::Add | ReduceOp::Fma => v.iter().sum(),
        ReduceOp::Max => *v.iter().max().unwrap(),
        ReduceOp::Min => *v.iter().min().unwrap(),
    }
}

fn reference(kind: &CcKind, op: ReduceOp, n: usize, count: u64, inputs: &[Vec<i64>]) -> Vec<Vec<i64>> {
    let c = count as usize;
    match kind {
        CcKind::AllReduce => vec![(0..c).map(|i| reduce(op, inputs.iter().map(|v| v[i]))).collect(); n],
        CcKind::AllGather => vec![inputs.concat(); n],
        CcKind::ReduceScatter => (0..n).map(|r| (0..c).map(|i| reduce(op, inputs.iter().map(|v| v[r * c + i]))).collect()).collect(),
        CcKind::AllToAll => (0..n).map(|r| (0..n).flat_map(|j| inputs[j][r * c..(r + 1) * c].to_vec()).collect()).collect(),
        CcKind::Permute(pairs) => (0..n).map(|r| pairs.iter().find(|p| p.1 == r).map_or(vec![0; c], |p| inputs[p.0].clone())).collect(),
    }
}

/// Runs one op on ranks 0..n (rank r on logical core r), one thread per
/// rank; returns each rank's output bytes.
fn run(rt: &Runtime, kind: &CcKind, dtype: Dtype, op: ReduceOp, count: u64, inputs: &[Vec<u8>], in_place: bool) -> Vec<nrt::NrtResult<Vec<u8>>> {
    let vncs: Vec<u32> = (0..inputs.len() as u32).collect();
    run_on(rt, &vncs, kind, dtype, op, count, inputs, in_place)
}

/// [`run`] with rank r on logical core `vncs[r]`.
#[allow(clippy::too_many_arguments)]
fn run_on(rt: &Runtime, vncs: &[u32], kind: &CcKind, dtype: Dtype, op: ReduceOp, count: u64, inputs: &[Vec<u8>], in_place: bool) -> Vec<nrt::NrtResult<Vec<u8>>> {
    let n = inputs.len();
    let (_, out_elems) = kind.sizes(n, count);
    let out_bytes = out_elems * dtype.size_bytes() as u64;
    let tensors: Vec<(Arc<Tensor>, Arc<Tensor>)> = (0..n)
        .map(|r| {
            let v = rt.vcore(vncs[r]).unwrap();
            let mem = rt.memory(v.device).unwrap();
            let i = Arc::new(Tensor::allocate_device(mem, v.physical[0], (inputs[r].len() as u64).max(1), "in").unwrap());
            i.write(0, &inputs[r]).unwrap();
            let o = if in_place { i.clone() } else { Arc::new(Tensor::allocate_device(mem, v.physical[0], out_bytes.max(1), "out").unwrap()) };
            (i, o)
        })
        .collect();
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..n)
            .map(|r| {
                let (i, o) = tensors[r].clone();
                let kind = kind.clone();
                s.spawn(move || {
                    let a = Arrival { group: (0..n as u32).collect(), rank: r, vnc: vncs[r], kind, dtype, op, count, input: vec![i], output: vec![o.clone()] };
                    rt.collectives().run(rt, a)?;
                    let mut b = vec![0u8; out_bytes as usize];
                    o.read(0, &mut b)?;
                    Ok(b)
                })
            })
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    })
}

fn check(rt: &Runtime, kind: &CcKind, dtype: Dtype, op: ReduceOp, n: usize, count: u64, in_place: bool) {
    let vncs: Vec<u32> = (0..n as u32).collect();
    check_on(rt, &vncs, kind, dtype, op, count, in_place);
}

/// [`check`] with rank r on logical core `vncs[r]`.
fn check_on(rt: &Runtime, vncs: &[u32], kind: &CcKind, dtype: Dtype, op: ReduceOp, count: u64, in_place: bool) {
    let n = vncs.len();
    let (in_elems, _) = kind.sizes(n, count);
    let vals: Vec<Vec<i64>> = (0..n).map(|r| values(dtype, r, in_elems)).collect();
    let inputs: Vec<Vec<u8>> = vals.iter().map(|v| encode(dtype, v)).collect();
    let got = run_on(rt, vncs, kind, dtype, op, count, &inputs, in_place);
    let want = reference(kind, op, n, count, &vals);
    for (r, g) in got.into_iter().enumerate() {
        let g = g.unwrap_or_else(|e| panic!("{kind} {} {} n={n}: rank {r}: {e}", dtype.name(), op.name()));
        let mut w = encode(dtype, &want[r]);
        if matches!(kind, CcKind::Permute(_)) && w.len() != g.len() {
            w.resize(g.len(), 0);
        }
        assert!(g == w, "{kind} {} {} n={n} count={count}: rank {r} differs from the reference", dtype.name(), op.name());
    }
}

const DTYPES: [Dtype; 9] = [Dtype::Float32, Dtype::Float16, Dtype::Bfloat16, Dtype::Int8, Dtype::Uint8, Dtype::Int16, Dtype::Uint16, Dtype::Int32, Dtype::Uint32];

#[test]
fn every_reduction_x_dtype_x_world_size_matches_the_reference() {
    let rt = runtime("reduce", &[]);
    for n in [2usize, 4, 8] {
        for dtype in DTYPES {
            for op in [ReduceOp::Add, ReduceOp::Fma, ReduceOp::Max, ReduceOp::Min] {
                check(&rt, &CcKind::AllReduce, dtype, op, n, 1000, false);
            }
            check(&rt, &CcKind::AllReduce, dtype, ReduceOp::Add, n, 333, true);
            check(&rt, &CcKind::ReduceScatter, dtype, ReduceOp::Add, n, 250, false);
            check(&rt, &CcKind::ReduceScatter, dtype, ReduceOp::Max, n, 7, false);
        }
    }
}

#[test]
fn every_data_movement_op_x_dtype_x_world_size_matches_the_reference() {
    let rt = runtime("move", &[]);
    for n in [2usize, 4, 8] {
        for dtype in [Dtype::Float32, Dtype::Bfloat16, Dtype::Int8, Dtype::Uint32] {
            check(&rt, &CcKind::AllGather, dtype, ReduceOp::Add, n, 300, false);
            check(&rt, &CcKind::AllToAll, dtype, ReduceOp::Add, n, 100, false);
            check(&rt, &CcKind::Permute((0..n).map(|r| (r, (r + 1) % n)).collect()), dtype, ReduceOp::Add, n, 500, false);
            // send/recv: pairs exchange.
            check(&rt, &CcKind::Permute((0..n).map(|r| (r, r ^ 1)).collect()), dtype, ReduceOp::Add, n, 64, false);
        }
    }
}

#[test]
fn a_buffer_larger_than_one_pass_and_a_tiny_one_reduce_right() {
    let rt = runtime("passes", &[]);
    check(&rt, &CcKind::AllReduce, Dtype::Float32, ReduceOp::Add, 2, 2 * (1 << 20) * 2 + 3, false);
    check(&rt, &CcKind::AllReduce, Dtype::Int32, ReduceOp::Add, 8, 3, false);
    check(&rt, &CcKind::AllReduce, Dtype::Int32, ReduceOp::Add, 4, 0, false);
}

#[test]
fn fp32_all_reduce_is_bit_identical_on_every_rank_and_run_and_sums_in_ring_order() {
    let rt = runtime("bits", &[]);
    let n = 8;
    let count = 4099u64;
    let mut x = 0x1234_5678u32;
    let vals: Vec<Vec<f32>> = (0..n)
        .map(|_| {
            (0..count)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 17;
                    x ^= x << 5;
                    (x as f32 / u32::MAX as f32 - 0.5) * 1e3 * if x % 3 == 0 { 1e-4 } else { 1.0 }
                })
                .collect()
        })
        .collect();
    let inputs: Vec<Vec<u8>> = vals.iter().map(|v| v.iter().flat_map(|f| f.to_le_bytes()).collect()).collect();
    let first: Vec<Vec<u8>> = run(&rt, &CcKind::AllReduce, Dtype::Float32, ReduceOp::Add, count, &inputs, false).into_iter().map(|r| r.unwrap()).collect();
    for r in 1..n {
        assert_eq!(first[r], first[0], "rank {r} differs from rank 0");
    }
    let again: Vec<Vec<u8>> = run(&rt, &CcKind::AllReduce, Dtype::Float32, ReduceOp::Add, count, &inputs, false).into_iter().map(|r| r.unwrap()).collect();
    assert_eq!(again, first, "a second run gives the same bits");
    // Chunk c is summed along the ring from rank c + 1 to rank c.
    let per = count.div_ceil(n as u64) as usize;
    let want: Vec<u8> = (0..count as usize)
        .flat_map(|i| {
            let c = i / per;
            let mut acc = vals[(c + 1) % n][i];
            for k in 2..=n {
                acc += vals[(c + k) % n][i];
            }
            acc.to_le_bytes()
        })
        .collect();
    assert_eq!(first[0], want);
}

#[test]
fn a_rank_that_never_arrives_times_out_naming_it() {
    let rt = runtime("missing", &[("NEURON_RT_CC_NET_TIMEOUT", "0.3")]);
    let v = rt.vcore(0).unwrap();
    let t = Arc::new(Tensor::allocate_device(rt.memory(v.device).unwrap(), v.physical[0], 64, "t").unwrap());
    let a = Arrival { group: vec![0, 1, 2], rank: 0, vnc: 0, kind: CcKind::AllReduce, dtype: Dtype::Float32, op: ReduceOp::Add, count: 16, input: vec![t.clone()], output: vec![t] };
    let e = rt.collectives().run(&rt, a).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    assert!(e.message.contains("rank(s) 1, 2 never arrived") && e.message.contains("NEURON_RT_CC_NET_TIMEOUT"), "{}", e.message);
}

/// Two processes loading one world without `NEURON_RT_ROOT_COMM_ID`
/// cannot meet: the load says so in its first warning, seconds into the
/// wait (here a quarter of the 2 s bound), and in its timeout.
#[test]
fn a_world_loaded_without_root_comm_id_warns_early_and_its_timeout_names_the_variable() {
    use nrt::cc::neff::CcRank;
    use nrt::load::ModelHost;
    use nrt::log::{Level, capture};
    use nrt_gen::cc::{CollectiveSpec, collective_neff};
    use nrt_isa::instr::{AluOp, CollectiveType};
    let rt = runtime("root-unset", &[("NEURON_RT_CC_NET_TIMEOUT", "2")]);
    let cap = capture(Level::Warn);
    let me = CcRank::joining(&rt, 0, 0, 2).unwrap();
    assert!(me.root_comm_unset, "rank 1 is not registered here and nothing says where it is");
    let host = ModelHost::for_runtime_device(&rt, 0, Arc::new(nrt::model::ModelDb::default())).unwrap();
    let neff = collective_neff(&CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 16, 2)).unwrap();
    let e = host.load_collectives(&neff, 0, -1, &me).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    assert!(e.message.contains("rank(s) 1 never loaded") && e.message.contains("NEURON_RT_ROOT_COMM_ID is unset"), "{}", e.message);
    let warned = cap.lines().iter().any(|l| l.contains("waiting for rank(s) 1 of replica group [0, 1]") && l.contains("NEURON_RT_ROOT_COMM_ID is unset"));
    assert!(warned, "no early warning naming the variable: {:?}", cap.lines());
    // Both ranks registered here: nothing to say about other processes.
    rt.collectives().register_rank(1, 1, 2).unwrap();
    assert!(!CcRank::joining(&rt, 0, 0, 2).unwrap().root_comm_unset);
}

#[test]
fn the_device_wait_takes_the_execution_timeout_init_accepted() {
    // NEURON_RT_EXEC_TIMEOUT has one rule (whole seconds, 0 allowed, as
    // libnrt documents): a value init accepts is the collective's device
    // bound too, never refused by the collective itself.
    for timeout in ["0", "30"] {
        let rt = runtime(&format!("exec-timeout-{timeout}"), &[("NEURON_RT_EXEC_TIMEOUT", timeout)]);
        let inputs: Vec<Vec<u8>> = (0..2).map(|r| encode(Dtype::Float32, &values(Dtype::Float32, r, 16))).collect();
        for r in run(&rt, &CcKind::AllReduce, Dtype::Float32, ReduceOp::Add, 16, &inputs, false) {
            match r {
                Ok(_) => {}
                // 0: done only if the device finished before the first check.
                Err(e) if timeout == "0" => {
                    assert_eq!(e.status, NrtStatus::ExecHwErrCollectives, "{}", e.message);
                    assert!(e.message.contains("within 0.0 sec (NEURON_RT_EXEC_TIMEOUT)"), "{}", e.message);
                }
                Err(e) => panic!("NEURON_RT_EXEC_TIMEOUT={timeout}: {e}"),
            }
        }
        rt.close().unwrap();
    }
    let devs: Vec<Arc<dyn Device>> = Vec::new();
    let e = Runtime::init(RuntimeOptions::new(devs, Env::from_pairs([("NEURON_RT_EXEC_TIMEOUT", "0.5")]))).unwrap_err();
    assert!(e.status == NrtStatus::Invalid && e.message.contains("NEURON_RT_EXEC_TIMEOUT=\"0.5\""), "{}", e.message);
}

#[test]
fn mismatched_peers_fail_on_every_rank_naming_both_sides() {
    let rt = runtime("mismatch", &[("NEURON_RT_CC_NET_TIMEOUT", "20")]);
    let results = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2usize)
            .map(|r| {
                let rt = &rt;
                s.spawn(move || {
                    let v = rt.vcore(r as u32).unwrap();
                    let t = Arc::new(Tensor::allocate_device(rt.memory(v.device).unwrap(), v.physical[0], 4096, "t").unwrap());
                    let count = if r == 0 { 16 } else { 32 };
                    let a = Arrival { group: vec![0, 1], rank: r, vnc: r as u32, kind: CcKind::AllReduce, dtype: Dtype::Float32, op: ReduceOp::Add, count, input: vec![t.clone()], output: vec![t] };
                    rt.collectives().run(rt, a)
                })
            })
            .collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect::<Vec<_>>()
    });
    for r in results {
        let e = r.unwrap_err();
        assert_eq!(e.status, NrtStatus::Invalid);
        assert!(e.message.contains("mismatched collectives between the peers: rank 0 (vnc 0) runs all_reduce of 16 float32 (add) but rank 1 (vnc 1) runs all_reduce of 32 float32 (add)"), "{}", e.message);
    }
}

#[test]
fn bad_arrivals_are_refused_before_waiting() {
    let rt = runtime("bad", &[]);
    let v = rt.vcore(0).unwrap();
    let small = Arc::new(Tensor::allocate_device(rt.memory(v.device).unwrap(), v.physical[0], 8, "small").unwrap());
    let host = Arc::new(Tensor::allocate_host(64, "host").unwrap());
    let base = Arrival { group: vec![0], rank: 0, vnc: 0, kind: CcKind::AllReduce, dtype: Dtype::Float32, op: ReduceOp::Add, count: 16, input: vec![small.clone()], output: vec![small.clone()] };
    let e = rt.collectives().run(&rt, base.clone()).unwrap_err();
    assert!(e.message.contains("has 8 bytes; the operation needs 64"), "{}", e.message);
    let e = rt.collectives().run(&rt, Arrival { input: vec![host.clone()], output: vec![host], count: 2, ..base.clone() }).unwrap_err();
    assert!(e.message.contains("is in host memory"), "{}", e.message);
    let e = rt.collectives().run(&rt, Arrival { rank: 3, ..base.clone() }).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    let e = rt.collectives().run(&rt, Arrival { group: vec![0, 0], ..base.clone() }).unwrap_err();
    assert!(e.message.contains("names a participant twice"), "{}", e.message);
    let e = rt.collectives().run(&rt, Arrival { dtype: Dtype::Unknown, ..base }).unwrap_err();
    assert!(e.message.contains("cannot be reduced"), "{}", e.message);
}

#[test]
fn a_lost_notification_gives_1200_on_the_rank_that_misses_it_and_the_next_op_runs() {
    use nrt_sim::fault::{FaultKind, FaultSpec};
    let dir: PathBuf = std::env::temp_dir().join(format!("nrt-cc-{}-lost", std::process::id()));
    let cfg = SimConfig::builder().arch(Arch::Trn2).devices(1).hbm_bytes_per_channel(64 << 20).locks(dir, "lost").fault(FaultSpec::new(FaultKind::SemLost)).build();
    let devs: Vec<Arc<dyn Device>> = SimDevice::all(&cfg).into_iter().map(|d| Arc::new(d) as Arc<dyn Device>).collect();
    let rt = Runtime::init(RuntimeOptions::new(devs, Env::from_pairs([("NEURON_LOGICAL_NC_CONFIG", "1"), ("NEURON_RT_EXEC_TIMEOUT", "1")]))).unwrap();
    let vals: Vec<Vec<i64>> = (0..4).map(|r| values(Dtype::Int32, r, 64)).collect();
    let inputs: Vec<Vec<u8>> = vals.iter().map(|v| encode(Dtype::Int32, v)).collect();
    let got = run(&rt, &CcKind::AllReduce, Dtype::Int32, ReduceOp::Add, 64, &inputs, false);
    let failed: Vec<&nrt::NrtError> = got.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "exactly the rank whose notification was lost fails");
    assert_eq!(failed[0].status, NrtStatus::ExecHwErrCollectives);
    assert!(failed[0].message.contains("missing collectives status on Neuron Device 0") && failed[0].message.contains("suspected hang in collectives operation"), "{}", failed[0].message);
    // The fault fired once: the next operation completes on every rank.
    check(&rt, &CcKind::AllReduce, Dtype::Int32, ReduceOp::Add, 4, 64, false);
}

/// The communicator contexts: `nrt_load_collectives` (and nrtpy's
/// `cc_enabled` load) joins the in-NEFF context's world, setting it up as
/// the given size when there is none; the same size again succeeds,
/// another is refused; the host-driven context keeps a world of its own;
/// the joining rank is registered on its logical core.
#[test]
fn loads_join_the_neff_contexts_world_and_set_it_up_once() {
    use nrt::cc::CommContext;
    use nrt::cc::neff::CcRank;
    let rt = runtime("contexts", &[]);
    let cc = rt.collectives();
    let r = CcRank::joining(&rt, 0, 0, 2).unwrap();
    assert_eq!((r.rank, r.world), (0, 2));
    assert_eq!(CcRank::joining(&rt, 1, 1, 2).unwrap().world, 2, "the world exists: a later rank joins it");
    assert_eq!(CcRank::joining(&rt, 1, 1, 8).unwrap().world, 2, "a load joins the existing world whatever count it names");
    assert_eq!(CcRank::joining(&rt, 3, 3, 8).unwrap_err().status, NrtStatus::Invalid, "rank 3 is outside the world of 2");
    cc.global_comm(CommContext::Neff, 0, 0, 2).unwrap();
    let e = cc.global_comm(CommContext::Neff, 0, 0, 4).unwrap_err();
    assert!(e.message.contains("world size of 2"), "{}", e.message);
    cc.global_comm(CommContext::Host, 0, 0, 4).unwrap();
    let e = cc.global_comm(CommContext::Neff, 1, 0, 2).unwrap_err();
    assert!(e.message.contains("logical core 0 is already g_device_id 0"), "the rank was registered on its core: {}", e.message);
    assert_eq!(CcRank::joining(&rt, 0, 2, 0).unwrap_err().status, NrtStatus::Invalid, "an empty world");
}

/// A simulated trn1 instance of `devices` devices (two cores each), LNC 1:
/// logical core 2d + c is core c of device d; the devices' simulators
/// kept for fault injection.
fn instance(test: &str, devices: u32, env: &[(&str, &str)]) -> (Runtime, Vec<Arc<SimDevice>>) {
    let dir: PathBuf = std::env::temp_dir().join(format!("nrt-cc-{}-{test}", std::process::id()));
    let cfg = SimConfig::builder().arch(Arch::Trn1).devices(devices).hbm_bytes_per_channel(64 << 20).locks(dir, test).build();
    let sims: Vec<Arc<SimDevice>> = SimDevice::all(&cfg).into_iter().map(Arc::new).collect();
    let devs: Vec<Arc<dyn Device>> = sims.iter().map(|d| d.clone() as Arc<dyn Device>).collect();
    let mut pairs = vec![("NEURON_LOGICAL_NC_CONFIG", "1")];
    pairs.extend_from_slice(env);
    (Runtime::init(RuntimeOptions::new(devs, Env::from_pairs(pairs))).unwrap(), sims)
}

/// A world spanning the four devices of an instance: one rank per device
/// (every ring step is device-to-device DMA through the peer window) and
/// two per device (steps within and between devices mixed), every op
/// against the reference; fp32 all-reduce bit for bit the same on every
/// rank.
#[test]
fn a_world_spanning_four_devices_runs_every_op() {
    let (rt, _) = instance("devices", 4, &[]);
    let one_each = [0u32, 2, 4, 6];
    let all: Vec<u32> = (0..8).collect();
    for vncs in [&one_each[..], &all[..]] {
        let n = vncs.len();
        for dtype in [Dtype::Float32, Dtype::Bfloat16, Dtype::Int32] {
            check_on(&rt, vncs, &CcKind::AllReduce, dtype, ReduceOp::Add, 1000, false);
            check_on(&rt, vncs, &CcKind::ReduceScatter, dtype, ReduceOp::Max, 250, false);
        }
        check_on(&rt, vncs, &CcKind::AllReduce, Dtype::Int16, ReduceOp::Min, 333, true);
        check_on(&rt, vncs, &CcKind::AllGather, Dtype::Uint8, ReduceOp::Add, 100, false);
        check_on(&rt, vncs, &CcKind::AllToAll, Dtype::Float16, ReduceOp::Add, 64, false);
        check_on(&rt, vncs, &CcKind::Permute((0..n).map(|r| (r, (r + 1) % n)).collect()), Dtype::Int32, ReduceOp::Add, 77, false);
        // fp32 with fractions: the ring's order, the same bits everywhere.
        let count = 40_000u64;
        let inputs: Vec<Vec<u8>> = (0..n).map(|r| (0..count).flat_map(|i| ((i as f32 * 0.37 + r as f32).sin() * 1e3).to_le_bytes()).collect()).collect();
        let got: Vec<Vec<u8>> = run_on(&rt, vncs, &CcKind::AllReduce, Dtype::Float32, ReduceOp::Add, count, &inputs, false).into_iter().map(|g| g.unwrap()).collect();
        assert!(got.iter().all(|g| *g == got[0]), "every rank holds the same bits");
    }
}

/// A notification lost on its way from one device to another
/// (`sem_lost` armed on device 2 only: the first semaphore write of its
/// engines is rank 2's done signal into rank 3 on device 3) fails that
/// rank with 1200 naming its device; the others complete; the next
/// operation runs.
#[test]
fn a_notification_lost_between_devices_gives_1200_on_the_peer_and_the_next_op_runs() {
    use nrt_sim::fault::{FaultKind, FaultSpec};
    let (rt, sims) = instance("lost-peer", 4, &[("NEURON_RT_EXEC_TIMEOUT", "1")]);
    let vncs = [0u32, 2, 4, 6];
    sims[2].inject(FaultSpec::new(FaultKind::SemLost));
    let vals: Vec<Vec<i64>> = (0..4).map(|r| values(Dtype::Int32, r, 64)).collect();
    let inputs: Vec<Vec<u8>> = vals.iter().map(|v| encode(Dtype::Int32, v)).collect();
    let got = run_on(&rt, &vncs, &CcKind::AllReduce, Dtype::Int32, ReduceOp::Add, 64, &inputs, false);
    for (r, g) in got.iter().enumerate() {
        match (r, g) {
            (3, Err(e)) => {
                assert_eq!(e.status, NrtStatus::ExecHwErrCollectives, "{}", e.message);
                assert!(e.message.contains("missing collectives status on Neuron Device 3 NC 0"), "{}", e.message);
            }
            (3, Ok(_)) => panic!("rank 3 completed without the notification device 2 lost"),
            (_, g) => assert!(g.is_ok(), "rank {r}: {:?}", g.as_ref().err()),
        }
    }
    check_on(&rt, &vncs, &CcKind::AllReduce, Dtype::Int32, ReduceOp::Add, 64, false);
}

/// `nrt_barrier` on a trn1 instance, its two ranks on two devices: the
/// barrier model is written for the device's generation (a trn2 NEFF is
/// refused there) and its all-reduce runs between the devices.
#[test]
fn nrt_barrier_runs_on_a_trn1_instance_across_its_devices() {
    let (rt, _) = instance("barrier-trn1", 2, &[]);
    let h = nrt::RuntimeHosts::around(Arc::new(rt)).unwrap();
    for _ in 0..2 {
        std::thread::scope(|s| {
            for (rank, vnc) in [(0u32, 0u32), (1, 2)] {
                let h = &h;
                s.spawn(move || h.rt.collectives().barrier(&h.rt, &h.hosts, vnc, rank, 2).unwrap());
            }
        });
    }
    h.close().unwrap();
}

/// The runtime of `runtime` with its model hosts (what `nrt_init` brings
/// up for the C API).
fn runtime_hosts(test: &str, env: &[(&str, &str)]) -> nrt::RuntimeHosts {
    nrt::RuntimeHosts::around(Arc::new(runtime(test, env))).unwrap()
}

#[test]
fn nrt_barrier_runs_a_barrier_model_loaded_once_per_logical_core() {
    let h = runtime_hosts("barrier_model", &[]);
    let rt = &h.rt;
    for _ in 0..3 {
        std::thread::scope(|s| {
            for r in 0..3u32 {
                let h = &h;
                s.spawn(move || h.rt.collectives().barrier(&h.rt, &h.hosts, r, r, 3).unwrap());
            }
        });
    }
    for v in 0..3 {
        assert_eq!(rt.shared_models().count_on(v), 1, "one barrier model on logical core {v}");
    }
    // A world of another size has its own barrier model.
    std::thread::scope(|s| {
        for r in 0..2u32 {
            let h = &h;
            s.spawn(move || h.rt.collectives().barrier(&h.rt, &h.hosts, r, r, 2).unwrap());
        }
    });
    assert_eq!(rt.shared_models().count_on(0), 2);
    h.close().unwrap();
}

#[test]
fn a_failed_barrier_build_is_sticky() {
    let h = runtime_hosts("barrier_sticky", &[("NEURON_RT_CC_NET_TIMEOUT", "0.3")]);
    // Worker 1 never comes: the build times out naming it.
    let e = h.rt.collectives().barrier(&h.rt, &h.hosts, 0, 0, 2).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout, "{e}");
    assert!(e.message.contains("The barrier initialization has failed for LNC:0, worker: 0/2") && e.message.contains("rank(s) 1 never loaded"), "{e}");
    // Later barriers on that logical core fail at once, the same way.
    let started = std::time::Instant::now();
    let again = h.rt.collectives().barrier(&h.rt, &h.hosts, 0, 0, 2).unwrap_err();
    assert_eq!((again.status, &again.message), (e.status, &e.message));
    assert!(started.elapsed() < std::time::Duration::from_millis(300), "no second build");
    h.close().unwrap();
}
