//! In-NEFF collectives: NEFFs from `nrt_gen::cc` loaded by 2, 4 and 8
//! ranks of one process (one thread per rank, each on its own logical
//! core, as `nrt_load_collectives` does), executed, and checked against a
//! reference; results bit-identical on every rank and every run. Plus the
//! load's error cases (world size, mismatched ops, a rank that never
//! loads, a missing self) and unload / reload.

mod exec_support;

use exec_support::{decode, encode, read_all, sim};
use nrt::cc::neff::CcRank;
use nrt::load::{LoadSettings, ModelHost};
use nrt::status::NrtStatus;
use nrt::tensor::{Tensor, TensorSet};
use nrt_gen::cc::{CollectiveSpec, collective_neff, collective_neff_for};
use nrt_gen::cc_chain::{ChainOp, ChainSpec, chain_neff, chain_neff_for, chain_reference};
use nrt_isa::dtype::Dtype;
use nrt_isa::instr::{AluOp, CollectiveType};
use std::sync::Arc;
use std::time::Duration;

/// A host whose logical cores are single physical cores (8 of them).
fn host() -> ModelHost {
    let settings = LoadSettings { exec_timeout: Duration::from_secs(20), ..LoadSettings::default() };
    ModelHost::with_lnc(sim(), 1, settings).expect("host")
}

fn rank(r: u32, world: u32) -> CcRank {
    CcRank::local(r, world, Duration::from_secs(20))
}

fn bytes_of(d: Dtype, v: &[f32]) -> Vec<u8> {
    match d {
        Dtype::Int32 => v.iter().flat_map(|x| (*x as i32).to_le_bytes()).collect(),
        Dtype::Uint8 => v.iter().map(|x| *x as u8).collect(),
        _ => encode(d, v),
    }
}

fn values_of(d: Dtype, b: &[u8]) -> Vec<f32> {
    match d {
        Dtype::Int32 => b.chunks(4).map(|c| i32::from_le_bytes([c[0], c[1], c[2], c[3]]) as f32).collect(),
        Dtype::Uint8 => b.iter().map(|x| *x as f32).collect(),
        _ => decode(d, b),
    }
}

/// Rank `r`'s input: small non-negative integers (exact in every dtype
/// and any summation order), different per rank, element and run.
fn input(r: usize, elems: u64, run: usize) -> Vec<f32> {
    (0..elems).map(|i| ((r * 7 + i as usize * 3 + run * 5) % 11) as f32).collect()
}

fn reduce(op: AluOp, xs: impl Iterator<Item = f32>) -> f32 {
    xs.reduce(|a, b| match op {
        AluOp::Max => a.max(b),
        AluOp::Min => a.min(b),
        _ => a + b,
    })
    .expect("ranks")
}

/// What every rank's output must be.
fn reference(s: &CollectiveSpec, ins: &[Vec<f32>]) -> Vec<Vec<f32>> {
    let n = ins.len();
    let c = s.count as usize;
    match s.kind {
        CollectiveType::AllReduce => (0..n).map(|_| (0..c).map(|i| reduce(s.op, ins.iter().map(|v| v[i]))).collect()).collect(),
        CollectiveType::AllGather => (0..n).map(|_| ins.concat()).collect(),
        CollectiveType::ReduceScatter => (0..n).map(|r| (0..c).map(|i| reduce(s.op, ins.iter().map(|v| v[r * c + i]))).collect()).collect(),
        CollectiveType::AllToAll => (0..n).map(|r| (0..n).flat_map(|j| ins[j][r * c..(r + 1) * c].to_vec()).collect()).collect(),
        CollectiveType::Permute => {
            let mut out = vec![vec![0.0; c]; n];
            for &(src, dst) in &s.pairs {
                out[dst as usize] = ins[src as usize].clone();
            }
            out
        }
    }
}

/// Where a rank loads: its device's host and its logical core there.
type Place<'a> = (&'a ModelHost, i32);

/// Ranks 0..world of one device: rank r on logical core r.
fn on_one(host: &ModelHost, world: u32) -> Vec<Place<'_>> {
    (0..world).map(|r| (host, r as i32)).collect()
}

/// Ranks 0..world spread over the devices of an instance, `per_device`
/// ranks on each: rank r on logical core r % per_device of device
/// r / per_device.
fn spread(hosts: &[ModelHost], world: u32, per_device: u32) -> Vec<Place<'_>> {
    (0..world).map(|r| (&hosts[(r / per_device) as usize], (r % per_device) as i32)).collect()
}

/// Loads `neff` on ranks 0..world (rank r on logical core r), each from
/// its own thread.
fn load_all(host: &ModelHost, neff: &[u8], world: u32) -> Vec<Result<u32, nrt::status::NrtError>> {
    load_on(&on_one(host, world), neff)
}

/// Loads `neff` as rank r at `places[r]`, each from its own thread.
fn load_on(places: &[Place<'_>], neff: &[u8]) -> Vec<Result<u32, nrt::status::NrtError>> {
    let world = places.len() as u32;
    std::thread::scope(|s| {
        let hs: Vec<_> = places.iter().enumerate().map(|(r, &(host, vnc))| s.spawn(move || host.load_collectives(neff, vnc, -1, &rank(r as u32, world)))).collect();
        hs.into_iter().map(|h| h.join().expect("load thread")).collect()
    })
}

/// Executes every rank's model once with `ins`, each from its own thread;
/// returns each rank's output bytes.
fn execute_all(host: &ModelHost, models: &[u32], ins: &[Vec<u8>], out_bytes: u64) -> Vec<Vec<u8>> {
    execute_on(&on_one(host, models.len() as u32), models, ins, out_bytes)
}

/// [`execute_all`] of ranks at `places`.
fn execute_on(places: &[Place<'_>], models: &[u32], ins: &[Vec<u8>], out_bytes: u64) -> Vec<Vec<u8>> {
    std::thread::scope(|s| {
        let hs: Vec<_> = models
            .iter()
            .zip(ins)
            .zip(places)
            .map(|((&m, input), &(host, _))| {
                s.spawn(move || try_execute(host, m, input, out_bytes).unwrap_or_else(|e| panic!("execute of model {m}: {e}")))
            })
            .collect();
        hs.into_iter().map(|h| h.join().expect("execute thread")).collect()
    })
}

/// Executes `model` once with `input`; its output bytes.
fn try_execute(host: &ModelHost, model: u32, input: &[u8], out_bytes: u64) -> Result<Vec<u8>, nrt::status::NrtError> {
    let mut i = TensorSet::new();
    i.add("input", Arc::new(Tensor::from_host_bytes(input.to_vec(), "input")));
    let out = Arc::new(Tensor::allocate_host(out_bytes, "output").unwrap());
    let mut o = TensorSet::new();
    o.add("output", out.clone());
    host.execute(model, &i, &o)?;
    Ok(read_all(&out))
}

/// Loads, runs `runs` times and checks every rank against the reference,
/// then unloads.
fn check(host: &ModelHost, s: &CollectiveSpec, runs: usize) -> Vec<Vec<Vec<u8>>> {
    let neff = collective_neff(s).unwrap();
    let models: Vec<u32> = load_all(host, &neff, s.world).into_iter().map(|r| r.unwrap_or_else(|e| panic!("{s:?}: load: {e}"))).collect();
    let (ie, oe) = s.elements();
    let es = s.dtype.size_bytes() as u64;
    let mut all = Vec::new();
    for run in 0..runs {
        let ins: Vec<Vec<f32>> = (0..s.world as usize).map(|r| input(r, ie, run)).collect();
        let outs = execute_all(host, &models, &ins.iter().map(|v| bytes_of(s.dtype, v)).collect::<Vec<_>>(), oe * es);
        let want = reference(s, &ins);
        for (r, out) in outs.iter().enumerate() {
            assert_eq!(values_of(s.dtype, out), want[r], "{:?} {} x{} run {run}: rank {r}", s.kind, s.dtype.name(), s.world);
        }
        all.push(outs);
    }
    for m in models {
        host.unload(m).unwrap();
    }
    all
}

#[test]
fn every_op_and_dtype_on_2_4_and_8_ranks() {
    let host = host();
    let kinds = [
        (CollectiveType::AllReduce, AluOp::Add),
        (CollectiveType::AllReduce, AluOp::Max),
        (CollectiveType::AllGather, AluOp::Bypass),
        (CollectiveType::ReduceScatter, AluOp::Add),
        (CollectiveType::ReduceScatter, AluOp::Min),
        (CollectiveType::AllToAll, AluOp::Bypass),
        (CollectiveType::Permute, AluOp::Bypass),
    ];
    for world in [2u32, 4, 8] {
        for (kind, op) in kinds {
            for dtype in [Dtype::Float32, Dtype::Bfloat16, Dtype::Int32] {
                let s = CollectiveSpec::whole_world(kind, op, dtype, 96, world);
                check(&host, &s, 2);
            }
        }
    }
}

#[test]
fn an_all_reduce_in_place_and_an_uneven_count() {
    let host = host();
    let mut s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 1001, 4);
    s.in_place = true;
    check(&host, &s, 3);
    s.in_place = false;
    s.dtype = Dtype::Uint8;
    check(&host, &s, 1);
}

#[test]
fn two_replica_groups_run_side_by_side() {
    let host = host();
    let mut s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 64, 4);
    s.groups = vec![vec![0, 2], vec![1, 3]];
    let neff = collective_neff(&s).unwrap();
    let models: Vec<u32> = load_all(&host, &neff, 4).into_iter().map(Result::unwrap).collect();
    let ins: Vec<Vec<f32>> = (0..4).map(|r| input(r, 64, 0)).collect();
    let outs = execute_all(&host, &models, &ins.iter().map(|v| bytes_of(Dtype::Float32, v)).collect::<Vec<_>>(), 256);
    for (r, out) in outs.iter().enumerate() {
        let peer = r ^ 2;
        let want: Vec<f32> = (0..64).map(|i| ins[r.min(peer)][i] + ins[r.max(peer)][i]).collect();
        assert_eq!(values_of(Dtype::Float32, out), want, "rank {r} sums with rank {peer}");
    }
    for m in models {
        host.unload(m).unwrap();
    }
}

#[test]
fn fp32_results_are_bit_identical_across_ranks_and_runs() {
    let host = host();
    let s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 4096, 8);
    let neff = collective_neff(&s).unwrap();
    let models: Vec<u32> = load_all(&host, &neff, 8).into_iter().map(Result::unwrap).collect();
    // Values whose sum depends on the order: only a fixed order agrees.
    let ins: Vec<Vec<u8>> = (0..8).map(|r| bytes_of(Dtype::Float32, &(0..4096).map(|i| ((r * 4096 + i) as f32 * 0.37).sin() * 10f32.powi((i % 7) as i32 - 3)).collect::<Vec<_>>())).collect();
    let first = execute_all(&host, &models, &ins, 4096 * 4);
    for out in &first[1..] {
        assert_eq!(out, &first[0], "every rank holds the same bits");
    }
    for _ in 0..3 {
        assert_eq!(execute_all(&host, &models, &ins, 4096 * 4), first, "every run gives the same bits");
    }
    for m in models {
        host.unload(m).unwrap();
    }
}

#[test]
fn unload_and_reload_run_again() {
    let host = host();
    let s = CollectiveSpec::whole_world(CollectiveType::AllGather, AluOp::Bypass, Dtype::Float32, 32, 2);
    let a = check(&host, &s, 1);
    let b = check(&host, &s, 1);
    assert_eq!(a, b);
}

#[test]
fn a_neff_world_larger_than_the_communicator_is_invalid() {
    let host = host();
    let s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 8, 4);
    let e = host.load_collectives(&collective_neff(&s).unwrap(), 0, -1, &rank(0, 2)).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("World size of neff 4 is greater than world size of global communicator 2"), "{e}");
    // A plain load is rank 0 of a world of one.
    let e = host.load(&collective_neff(&s).unwrap(), 0, -1).unwrap_err();
    assert!(e.message.contains("global communicator 1"), "{e}");
}

#[test]
fn a_rank_outside_every_group_is_named() {
    let host = host();
    let mut s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 8, 4);
    s.groups = vec![vec![0, 1]];
    let e = host.load_collectives(&collective_neff(&s).unwrap(), 3, -1, &rank(3, 4)).unwrap_err();
    assert_eq!(e.status, NrtStatus::Invalid);
    assert!(e.message.contains("replica groups (0/1) does not have myself 3"), "{e}");
}

#[test]
fn mismatched_ops_fail_every_rank_naming_both_sides() {
    let host = host();
    let a = collective_neff(&CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 16, 2)).unwrap();
    let b = collective_neff(&CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 32, 2)).unwrap();
    let rs = std::thread::scope(|s| {
        let h0 = s.spawn(|| host.load_collectives(&a, 0, -1, &rank(0, 2)));
        let h1 = s.spawn(|| host.load_collectives(&b, 1, -1, &rank(1, 2)));
        [h0.join().unwrap(), h1.join().unwrap()]
    });
    for r in rs {
        let e = r.unwrap_err();
        assert_eq!(e.status, NrtStatus::Invalid);
        assert!(e.message.contains("mismatched collectives between the peers: rank 0") && e.message.contains("all_reduce of 16 float32 (add)") && e.message.contains("rank 1") && e.message.contains("all_reduce of 32 float32 (add)"), "{e}");
    }
    // The cores are free again: a matching pair loads.
    let models: Vec<u32> = load_all(&host, &a, 2).into_iter().map(Result::unwrap).collect();
    for m in models {
        host.unload(m).unwrap();
    }
}

#[test]
fn a_rank_that_never_loads_times_out_naming_it() {
    let host = host();
    let neff = collective_neff(&CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 16, 3)).unwrap();
    let quick = CcRank::local(0, 3, Duration::from_millis(300));
    let e = host.load_collectives(&neff, 0, -1, &quick).unwrap_err();
    assert_eq!(e.status, NrtStatus::Timeout);
    assert!(e.message.contains("rank(s) 1, 2 never loaded") && e.message.contains("NEURON_RT_CC_NET_TIMEOUT"), "{e}");
    // Nothing is left behind: the core takes the collective again.
    let models: Vec<u32> = load_all(&host, &neff, 3).into_iter().map(Result::unwrap).collect();
    for m in models {
        host.unload(m).unwrap();
    }
}

#[test]
fn a_core_holds_as_many_collectives_neffs_as_its_queue_pool_allows() {
    let host = host();
    let neff = collective_neff(&CollectiveSpec::whole_world(CollectiveType::AllGather, AluOp::Bypass, Dtype::Float32, 16, 1)).unwrap();
    let fit = usize::from(nrt::cc::neff::POOL_QUEUES) / nrt::cc::neff::QUEUES_PER_MODEL;
    let mut models: Vec<u32> = (0..fit).map(|_| host.load_collectives(&neff, 0, -1, &rank(0, 1)).unwrap()).collect();
    let e = host.load_collectives(&neff, 0, -1, &rank(0, 1)).unwrap_err();
    assert_eq!(e.status, NrtStatus::Resource, "{e}");
    assert!(e.message.contains("collectives DMA queues") && e.message.contains("unload one"), "{e}");
    // Every one of them runs, in any order.
    let ins = vec![bytes_of(Dtype::Float32, &input(0, 16, 0))];
    for &m in models.iter().rev().chain(&models) {
        assert_eq!(execute_all(&host, &[m], &ins, 64), ins);
    }
    host.unload(models.remove(1)).unwrap();
    models.push(host.load_collectives(&neff, 0, -1, &rank(0, 1)).unwrap());
    for m in models {
        host.unload(m).unwrap();
    }
}

/// Replica group sets of a world of `w`: everyone; two halves; evens
/// and odds (with one rank, each set is that rank alone).
fn chain_sets(w: u32) -> Vec<Vec<Vec<u32>>> {
    if w == 1 {
        return vec![vec![vec![0]]; 3];
    }
    vec![vec![(0..w).collect()], vec![(0..w / 2).collect(), (w / 2..w).collect()], vec![(0..w).step_by(2).collect(), (1..w).step_by(2).collect()]]
}

/// Eight collectives on the three sets and two pair sets (a ring, a
/// reversal), interleaved with ACT compute.
fn chain(world: u32, lnc: usize) -> ChainSpec {
    let op = |kind, op, set| ChainOp { kind, op, set };
    ChainSpec {
        world,
        cols: 8,
        lnc,
        sets: chain_sets(world),
        pairs: vec![(0..world).map(|r| (r, (r + 1) % world)).collect(), (0..world).map(|r| (r, world - 1 - r)).collect()],
        ops: vec![
            op(CollectiveType::AllReduce, AluOp::Add, 1),
            op(CollectiveType::AllReduce, AluOp::Max, 0),
            op(CollectiveType::ReduceScatter, AluOp::Add, 2),
            op(CollectiveType::AllGather, AluOp::Bypass, 2),
            op(CollectiveType::Permute, AluOp::Bypass, 0),
            op(CollectiveType::AllToAll, AluOp::Bypass, 0),
            op(CollectiveType::AllReduce, AluOp::Min, 2),
            op(CollectiveType::Permute, AluOp::Bypass, 1),
        ],
    }
}

/// Executes every rank's chain model once with fresh inputs and checks
/// each output against the reference (exact: the values stay small
/// multiples of 2^-8, so any summation order gives the same bits).
fn run_chain(host: &ModelHost, s: &ChainSpec, models: &[u32], run: usize) {
    run_chain_on(&on_one(host, s.world), s, models, run)
}

/// [`run_chain`] of ranks at `places`.
fn run_chain_on(places: &[Place<'_>], s: &ChainSpec, models: &[u32], run: usize) {
    let ins: Vec<Vec<f32>> = (0..s.world as usize).map(|r| input(r, s.elements() as u64, run)).collect();
    let outs = execute_on(places, models, &ins.iter().map(|v| bytes_of(Dtype::Float32, v)).collect::<Vec<_>>(), s.elements() as u64 * 4);
    let want = chain_reference(s, &ins);
    for (r, out) in outs.iter().enumerate() {
        assert_eq!(values_of(Dtype::Float32, out), want[r], "{} ranks, LNC {}, run {run}: rank {r}", s.world, s.lnc);
    }
}

fn load_chain(host: &ModelHost, s: &ChainSpec) -> Vec<u32> {
    load_chain_on(&on_one(host, s.world), s, nrt_gen::DEFAULT_TARGET)
}

/// Loads the chain, written for kelf target `target`, on ranks at `places`.
fn load_chain_on(places: &[Place<'_>], s: &ChainSpec, target: &str) -> Vec<u32> {
    let neff = chain_neff_for(s, target).unwrap();
    load_on(places, &neff).into_iter().map(|r| r.unwrap_or_else(|e| panic!("{} ranks, LNC {}: load: {e}", s.world, s.lnc))).collect()
}

#[test]
fn eight_collectives_on_several_groups_interleaved_with_compute_at_2_4_and_8_ranks() {
    let host = host();
    for world in [2u32, 4, 8] {
        let s = chain(world, 1);
        let models = load_chain(&host, &s);
        for run in 0..2 {
            run_chain(&host, &s, &models, run);
        }
        for m in models {
            host.unload(m).unwrap();
        }
    }
}

#[test]
fn a_chain_at_lnc_2_runs_a_ring_per_physical_core_at_2_and_4_ranks() {
    // A trn2 device at LNC 2: 4 logical cores of 2 physical cores each.
    let settings = LoadSettings { exec_timeout: Duration::from_secs(20), ..LoadSettings::default() };
    let host = ModelHost::with_lnc(sim(), 2, settings).expect("host");
    for world in [2u32, 4] {
        let s = chain(world, 2);
        let models = load_chain(&host, &s);
        for run in 0..2 {
            run_chain(&host, &s, &models, run);
        }
        for m in models {
            host.unload(m).unwrap();
        }
    }
}

/// The chain with its ranks on several devices of an instance: on 2 and
/// 4 trn1 devices at LNC 1 (two ranks per device, steps within and
/// between devices mixed; one rank per device, every step between
/// devices) and on 2 trn2 devices at LNC 2 (a ring per physical core,
/// each between the devices). Every address of a rank on another device
/// (its buffers, doorbells, ready and done semaphores) goes through the
/// peer window.
#[test]
fn a_chain_runs_with_its_ranks_on_several_devices() {
    let settings = LoadSettings { exec_timeout: Duration::from_secs(20), ..LoadSettings::default() };
    let (_, trn1) = exec_support::instance(nrt_hal::Arch::Trn1, 4, 1, settings.clone());
    let (_, trn2) = exec_support::instance(nrt_hal::Arch::Trn2, 2, 2, settings);
    let cases = [(spread(&trn1[..2], 4, 2), 1, "sunda", "2 trn1 devices"), (spread(&trn1, 4, 1), 1, "sunda", "4 trn1 devices, one rank each"), (spread(&trn2, 4, 2), 2, "cayman", "2 trn2 devices at LNC 2")];
    for (places, lnc, target, what) in &cases {
        let s = chain(places.len() as u32, *lnc);
        let models = load_chain_on(places, &s, target);
        for run in 0..2 {
            run_chain_on(places, &s, &models, run);
        }
        for (m, (host, _)) in models.into_iter().zip(places) {
            host.unload(m).unwrap_or_else(|e| panic!("{what}: unload: {e}"));
        }
    }
}

/// A "done" notification lost between devices: `sem_lost` on the first
/// of two trn1 devices, past its two barrier raises, drops the next DMA
/// write into a semaphore, which is a done signal of one of rank 0's
/// lanes into rank 1 on the second device (each lane's last step counts
/// done on the rank it wrote into first). Rank 1 gets 1200 naming its
/// device and the operation, rank 0 completes; the failed model is
/// stopped, and the models loaded next on the same cores run.
#[test]
fn a_notification_lost_between_devices_is_1200_on_the_rank_that_misses_it() {
    use nrt_sim::fault::{FaultKind, FaultSpec};
    let settings = LoadSettings { exec_timeout: Duration::from_secs(1), ..LoadSettings::default() };
    let (sims, hosts) = exec_support::instance(nrt_hal::Arch::Trn1, 2, 1, settings);
    let places = spread(&hosts, 2, 1);
    let s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 64, 2);
    let neff = collective_neff_for(&s, "sunda").unwrap();
    let models: Vec<u32> = load_on(&places, &neff).into_iter().map(Result::unwrap).collect();
    sims[0].inject(FaultSpec::new(FaultKind::SemLost).after(2));
    let ins: Vec<Vec<u8>> = (0..2).map(|r| bytes_of(Dtype::Float32, &input(r, 64, 0))).collect();
    let rs: Vec<Result<Vec<u8>, nrt::status::NrtError>> = std::thread::scope(|sc| {
        let hs: Vec<_> = models.iter().zip(&ins).zip(&places).map(|((&m, x), &(host, _))| sc.spawn(move || try_execute(host, m, x, 256))).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let want = reference(&s, &(0..2).map(|r| input(r, 64, 0)).collect::<Vec<_>>());
    assert_eq!(values_of(Dtype::Float32, rs[0].as_ref().expect("rank 0 completes")), want[0]);
    let e = rs[1].as_ref().expect_err("rank 1 misses a done notification");
    assert_eq!(e.status, NrtStatus::ExecHwErrCollectives, "{e}");
    assert!(e.message.contains("missing collectives status on Neuron Device 1 NC 0") && e.message.contains("suspected hang in collectives operation 0 out of 1"), "{e}");
    // Fail-stop: the failed model refuses to run again until unloaded.
    assert_eq!(try_execute(&hosts[1], models[1], &ins[1], 256).unwrap_err().status, NrtStatus::ExecHwErrCollectives);
    for (m, (host, _)) in models.into_iter().zip(&places) {
        host.unload(m).unwrap();
    }
    // The next load on the same cores runs, bit for bit as it should.
    let models: Vec<u32> = load_on(&places, &neff).into_iter().map(Result::unwrap).collect();
    let outs = execute_on(&places, &models, &ins, 256);
    for (r, out) in outs.iter().enumerate() {
        assert_eq!(values_of(Dtype::Float32, out), want[r], "rank {r} after the failure");
    }
    for (m, (host, _)) in models.into_iter().zip(&places) {
        host.unload(m).unwrap();
    }
}

#[test]
fn two_collectives_neffs_on_the_same_cores_run_in_any_interleaving() {
    // A prefill / decode pair: two programs with their own schedules,
    // queues and semaphores, loaded on the same cores.
    let host = host();
    let a = chain(4, 1);
    let mut b = chain(4, 1);
    b.cols = 4;
    b.ops.reverse();
    // Reduce-scatter before its all-gather.
    b.ops.swap(4, 5);
    let (ma, mb) = (load_chain(&host, &a), load_chain(&host, &b));
    for (run, which) in [0, 1, 1, 0, 1, 0, 0].into_iter().enumerate() {
        match which {
            0 => run_chain(&host, &a, &ma, run),
            _ => run_chain(&host, &b, &mb, run),
        }
    }
    for m in ma.into_iter().chain(mb) {
        host.unload(m).unwrap();
    }
}

#[test]
fn a_mismatch_in_one_op_of_a_chain_names_the_op() {
    let host = host();
    // Ranks 0 and 1 load one chain, 2 and 3 another that differs only in
    // op 6, on the groups {0, 2} and {1, 3}.
    let a = chain(4, 1);
    let mut b = a.clone();
    b.ops[6].op = AluOp::Max;
    let (na, nb) = (chain_neff(&a).unwrap(), chain_neff(&b).unwrap());
    let rs: Vec<_> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..4u32).map(|r| {
            let (host, neff) = (&host, if r < 2 { &na } else { &nb });
            s.spawn(move || host.load_collectives(neff, r as i32, -1, &rank(r, 4)))
        }).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    for r in rs {
        let e = r.unwrap_err();
        assert_eq!(e.status, NrtStatus::Invalid);
        assert!(e.message.contains("collective 6 of its NEFF") && e.message.contains("(min)") && e.message.contains("(max)"), "{e}");
    }
}

/// A host over a device that drops one DMA write into a semaphore: the
/// fifth, past the four ready raises of a 2-rank barrier, so a
/// collective's "done" notification is lost.
fn host_losing_a_notification() -> ModelHost {
    use nrt_sim::fault::{FaultKind, FaultSpec};
    let cfg = nrt_sim::SimConfig::builder().deterministic(true).fault(FaultSpec::new(FaultKind::SemLost).after(4)).build();
    let settings = LoadSettings { exec_timeout: Duration::from_secs(1), ..LoadSettings::default() };
    ModelHost::with_lnc(Arc::new(nrt_sim::SimDevice::new(&cfg, 0)), 1, settings).expect("host")
}

#[test]
fn a_lost_collectives_notification_is_1200_naming_the_operation() {
    let host = host_losing_a_notification();
    let s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 64, 2);
    let neff = collective_neff(&s).unwrap();
    let models: Vec<u32> = load_all(&host, &neff, 2).into_iter().map(Result::unwrap).collect();
    let ins: Vec<Vec<u8>> = (0..2).map(|r| bytes_of(Dtype::Float32, &input(r, 64, 0))).collect();
    let rs: Vec<Result<Vec<u8>, nrt::status::NrtError>> = std::thread::scope(|sc| {
        let hs: Vec<_> = models.iter().zip(&ins).map(|(&m, input)| {
            let host = &host;
            sc.spawn(move || try_execute(host, m, input, 256))
        }).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let failed: Vec<_> = rs.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(failed.len(), 1, "exactly the rank that missed its notification fails: {rs:?}");
    assert_eq!(failed[0].status, NrtStatus::ExecHwErrCollectives, "{}", failed[0]);
    assert!(failed[0].message.contains("suspected hang in collectives operation 0 out of 1"), "{}", failed[0]);
}

#[test]
fn a_peer_that_never_executes_fails_the_barrier_within_the_peer_bound() {
    let host = host();
    let neff = collective_neff(&CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 16, 2)).unwrap();
    let models: Vec<u32> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..2u32).map(|r| {
            let (host, neff) = (&host, &neff);
            s.spawn(move || host.load_collectives(neff, r as i32, -1, &CcRank::local(r, 2, Duration::from_millis(500))).unwrap())
        }).collect();
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    // Only rank 0 executes: it waits at the barrier, then fails.
    let mut i = TensorSet::new();
    i.add("input", Arc::new(Tensor::from_host_bytes(vec![0; 64], "input")));
    let mut o = TensorSet::new();
    o.add("output", Arc::new(Tensor::allocate_host(64, "output").unwrap()));
    let e = host.execute(models[0], &i, &o).unwrap_err();
    assert_eq!(e.status, NrtStatus::ExecHwErrCollectives, "{e}");
    assert!(e.message.contains("Suspected hang in waiting for barrier") && e.message.contains("NEURON_RT_CC_NET_TIMEOUT"), "{e}");
    for m in models {
        host.unload(m).unwrap();
    }
}

#[test]
fn each_rank_executes_as_soon_as_its_own_load_returns() {
    // No join between the loads and the executions: a fast rank's barrier
    // raise must not be lost to a slower peer's load.
    let host = host();
    let s = CollectiveSpec::whole_world(CollectiveType::AllReduce, AluOp::Add, Dtype::Float32, 128, 4);
    let neff = collective_neff(&s).unwrap();
    for _ in 0..3 {
        let outs: Vec<(u32, Vec<f32>)> = std::thread::scope(|sc| {
            let hs: Vec<_> = (0..4u32)
                .map(|r| {
                    let (host, neff) = (&host, &neff);
                    sc.spawn(move || {
                        let m = host.load_collectives(neff, r as i32, -1, &rank(r, 4)).unwrap();
                        let mut i = TensorSet::new();
                        i.add("input", Arc::new(Tensor::from_host_bytes(bytes_of(Dtype::Float32, &input(r as usize, 128, 0)), "input")));
                        let out = Arc::new(Tensor::allocate_host(512, "output").unwrap());
                        let mut o = TensorSet::new();
                        o.add("output", out.clone());
                        host.execute(m, &i, &o).unwrap();
                        (m, values_of(Dtype::Float32, &read_all(&out)))
                    })
                })
                .collect();
            hs.into_iter().map(|h| h.join().unwrap()).collect()
        });
        let want = reference(&s, &(0..4).map(|r| input(r, 128, 0)).collect::<Vec<_>>());
        for (r, (m, got)) in outs.into_iter().enumerate() {
            assert_eq!(got, want[r], "rank {r}");
            host.unload(m).unwrap();
        }
    }
}
