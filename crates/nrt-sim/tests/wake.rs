//! Targeted wake-ups (`nrt_sim::wake`) never lose one: engines blocked on
//! different semaphores and events are each released by exactly the
//! change they wait for, whoever makes it (another engine's issue or
//! completion update, a host semaphore call, an EVT_SEM window write, a
//! CTRL_ER range reset), in deterministic and in threaded mode.

use nrt_hal::{CoreId, Device, DeviceAddr, EngineId, MemoryLocation};
use nrt_sim::engine::RunState;
use nrt_sim::engine::record::build;
use nrt_sim::{SimConfig, SimDevice};
use std::time::{Duration, Instant};

const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };
const C0: CoreId = CoreId(0);
const ES: u8 = 0xA0;
// Wait modes.
const SEM_GE: u8 = 5;
const SEM_EQ: u8 = 1;
const EVT_SET: u8 = 6;
// Update modes (issue time; +16 at completion).
const SEM_INC: u8 = 3;
const SEM_DEC: u8 = 4;
const SEM_INC_DONE: u8 = 19;

fn device(deterministic: bool) -> SimDevice {
    SimDevice::new(&SimConfig::builder().deterministic(deterministic).threads(2).hbm_bytes_per_channel(16 << 20).build(), 0)
}

fn start(dev: &SimDevice, engine: EngineId, records: &[[u8; 64]]) {
    let bytes: Vec<u8> = records.concat();
    let at = dev.alloc(HBM0, bytes.len() as u64, 4096).unwrap();
    dev.write(at, &bytes).unwrap();
    dev.start_engine(C0, engine, at, bytes.len() as u64).unwrap();
}

/// Waits (threaded mode) until every engine in `engines` ran off its stream.
fn until_idle(dev: &SimDevice, engines: &[EngineId]) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !engines.iter().all(|e| dev.engine_state(C0, *e) == Some(RunState::Idle)) {
        assert!(Instant::now() < deadline, "engines still blocked: {:?}", engines.iter().map(|e| dev.engine_state(C0, *e)).collect::<Vec<_>>());
        std::thread::sleep(Duration::from_millis(1));
    }
}

fn state(dev: &SimDevice, e: EngineId) -> Option<RunState> {
    dev.engine_state(C0, e)
}

/// PE and ACT pass a token back and forth `rounds` times through two
/// semaphores: each wait is released only by the other engine's update.
fn ping_pong(deterministic: bool, rounds: usize) {
    let dev = device(deterministic);
    let mut pe = Vec::new();
    let mut act = Vec::new();
    for _ in 0..rounds {
        // PE: take a unit of sem 1 (wait >= 1, decrement at issue), then give sem 2 at completion.
        pe.push(build::record(ES, (SEM_GE, 1), (SEM_DEC, 1), 1));
        pe.push(build::record(ES, (0, 0), (SEM_INC_DONE, 2), 0));
        // ACT: give sem 1 at issue, then take a unit of sem 2.
        act.push(build::record(ES, (0, 0), (SEM_INC, 1), 0));
        act.push(build::record(ES, (SEM_GE, 2), (SEM_DEC, 2), 1));
    }
    start(&dev, EngineId::Pe, &pe);
    start(&dev, EngineId::Act, &act);
    until_idle(&dev, &[EngineId::Pe, EngineId::Act]);
    assert_eq!((dev.semaphore_read(C0, 1).unwrap(), dev.semaphore_read(C0, 2).unwrap()), (0, 0));
}

#[test]
fn ping_pong_deterministic() {
    ping_pong(true, 200);
}

#[test]
fn ping_pong_threaded() {
    for _ in 0..5 {
        ping_pong(false, 500);
    }
}

/// Three engines blocked on three different registers; each change
/// releases exactly its waiter and leaves the others blocked.
fn every_source_of_change(deterministic: bool) {
    let dev = device(deterministic);
    // PE waits for sem 10 (a host increment), ACT for event 4 (an EVT_SEM
    // window write), POOL for sem 20 == 0 after it was set to 3 (a CTRL_ER
    // range reset by SP), DVE for sem 30 (SP's completion update).
    dev.semaphore_set(C0, 20, 3).unwrap();
    start(&dev, EngineId::Pe, &[build::record(ES, (SEM_GE, 10), (0, 0), 1)]);
    start(&dev, EngineId::Act, &[build::record(ES, (EVT_SET, 4), (0, 0), 0)]);
    start(&dev, EngineId::Pool, &[build::record(ES, (SEM_EQ, 20), (0, 0), 0)]);
    start(&dev, EngineId::Dve, &[build::record(ES, (SEM_GE, 30), (0, 0), 1)]);
    let blocked = |dev: &SimDevice, e: EngineId| {
        // Give a threaded device time to (wrongly) run the engine.
        if !deterministic {
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(state(dev, e), Some(RunState::Running), "{e:?} must still wait");
    };
    for e in [EngineId::Pe, EngineId::Act, EngineId::Pool, EngineId::Dve] {
        blocked(&dev, e);
    }

    dev.semaphore_increment(C0, 10, 1).unwrap();
    until_idle(&dev, &[EngineId::Pe]);
    blocked(&dev, EngineId::Act);

    // Event 4 through the EVT_SEM window (events block at offset 0).
    let evt_sem: DeviceAddr = dev.info().arch.evt_sem_addr(C0);
    dev.write(evt_sem.offset(4 * 4), &1u32.to_le_bytes()).unwrap();
    until_idle(&dev, &[EngineId::Act]);
    blocked(&dev, EngineId::Pool);

    // SP resets sems 0..=25 (POOL's sem 20 goes to zero) and then gives
    // sem 30 at completion of its last record.
    start(&dev, EngineId::Sp, &[build::reset_range(false, 0, 25), build::record(ES, (0, 0), (SEM_INC_DONE, 30), 0)]);
    until_idle(&dev, &[EngineId::Sp, EngineId::Pool, EngineId::Dve]);
}

#[test]
fn every_source_of_change_deterministic() {
    every_source_of_change(true);
}

#[test]
fn every_source_of_change_threaded() {
    every_source_of_change(false);
}

/// A take on the quick issue path (a wait-and-take of one semaphore,
/// tested against the other engines' published keys before the device's
/// wake runs) releases an engine waiting for the value the take leaves:
/// PE waits for sem 40 == 0, SP takes sem 40 from 1 to 0 (with an
/// EVENT_SEMAPHORE and with a NOP), and PE runs off its stream.
fn take_releases_waiter(deterministic: bool, opcode: u8) {
    let dev = device(deterministic);
    dev.semaphore_set(C0, 40, 1).unwrap();
    start(&dev, EngineId::Pe, &[build::record(ES, (SEM_EQ, 40), (0, 0), 0)]);
    if !deterministic {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(state(&dev, EngineId::Pe), Some(RunState::Running), "PE must wait for sem 40 == 0");
    start(&dev, EngineId::Sp, &[build::record(opcode, (SEM_GE, 40), (SEM_DEC, 40), 1)]);
    until_idle(&dev, &[EngineId::Sp, EngineId::Pe]);
    assert_eq!(dev.semaphore_read(C0, 40).unwrap(), 0);
}

#[test]
fn take_releases_waiter_deterministic() {
    take_releases_waiter(true, ES);
    take_releases_waiter(true, 0xA4);
}

#[test]
fn take_releases_waiter_threaded() {
    for _ in 0..20 {
        take_releases_waiter(false, ES);
        take_releases_waiter(false, 0xA4);
    }
}
