//! HBM mapped into the process (`Device::map_hbm`): the window is the
//! device memory itself (device writes show through it, stores through it
//! are what the device reads), untouched memory stays unbacked, the
//! dma-buf descriptor reaches the same bytes, and what the sequencers
//! keep of an instruction stream changes only when the device sees a
//! write to it, not on a plain store through the window.

use nrt_hal::{CoreId, Device, EngineId, MemoryLocation, NqRing, NqSpec, NqType};
use nrt_sim::engine::record::build;
use nrt_sim::{SimConfig, SimDevice};
use std::io::{Read, Seek, SeekFrom, Write};
use std::sync::Arc;

const C0: CoreId = CoreId(0);
const HBM0: MemoryLocation = MemoryLocation::Hbm { channel: 0 };
const PAGE: u64 = 64 << 10;

fn device() -> SimDevice {
    SimDevice::new(&SimConfig::builder().deterministic(true).hbm_bytes_per_channel(64 << 20).build(), 0)
}

/// Reads `n` bytes at host address `va` of a mapped window.
fn peek(va: usize, n: usize) -> Vec<u8> {
    // SAFETY: the tests only pass addresses inside a window the device
    // keeps mapped for its life.
    unsafe { std::slice::from_raw_parts(va as *const u8, n).to_vec() }
}

/// Stores `data` at host address `va` of a mapped window, as a client
/// writing through the mapping does.
fn poke(va: usize, data: &[u8]) {
    // SAFETY: as in `peek`.
    unsafe { std::ptr::copy_nonoverlapping(data.as_ptr(), va as *mut u8, data.len()) };
}

#[test]
fn a_mapped_channel_is_the_device_memory() {
    let dev = device();
    let a = dev.alloc(HBM0, 3 * PAGE, 0).unwrap();
    dev.write(a.offset(PAGE - 2), &[1, 2, 3, 4]).unwrap();
    assert_eq!(dev.resident_pages(), 2);
    let w = dev.map_hbm(0).unwrap().expect("channel 0");
    assert_eq!((w.base, w.len), (dev.info().hbm[0].base, 64 << 20));
    assert_eq!(dev.map_hbm(0).unwrap(), Some(w), "mapped once");
    assert_eq!(dev.map_hbm(dev.info().hbm.len() as u32).unwrap(), None, "no more regions");
    let va = w.host_addr(a).unwrap();
    assert_eq!(peek(va + PAGE as usize - 2, 4), vec![1, 2, 3, 4], "bytes written before the mapping moved into it");
    dev.write(a.offset(8), &[9; 8]).unwrap();
    assert_eq!(peek(va + 8, 8), vec![9; 8], "device writes show through the window");
    poke(va + 2 * PAGE as usize + 5, &[7, 7]);
    let mut b = [0u8; 4];
    dev.read(a.offset(2 * PAGE + 4), &mut b).unwrap();
    assert_eq!(b, [0, 7, 7, 0], "a store through the window is what the device reads, on a page it never backed");
    let before = dev.resident_pages();
    let far = dev.alloc(HBM0, 32 << 20, 0).unwrap();
    dev.read(far.offset(16 << 20), &mut b).unwrap();
    assert_eq!((b, dev.resident_pages()), ([0; 4], before), "reading untouched memory backs nothing");
    poke(w.host_addr(far).unwrap() + 100, &[5; 4]);
    dev.memset(far, 0, 32 << 20).unwrap();
    assert_eq!(peek(w.host_addr(far).unwrap() + 100, 4), vec![0; 4], "a memset clears what was stored through the window");
    dev.copy(a.offset(2 * PAGE + 5), far.offset(64), 2).unwrap();
    assert_eq!(peek(w.host_addr(far).unwrap() + 64, 2), vec![7, 7], "a device copy reads stores through the window");
}

#[test]
fn the_dmabuf_descriptor_reaches_the_same_bytes() {
    let dev = device();
    let w = dev.map_hbm(0).unwrap().unwrap();
    let a = dev.alloc(HBM0, PAGE, 0).unwrap();
    dev.write(a.offset(4096 + 3), b"neuron").unwrap();
    let va = w.host_addr(a).unwrap() + 4096 + 3;
    let mut f = std::fs::File::from(dev.dmabuf_fd(va, 6).unwrap());
    let pos = f.stream_position().unwrap();
    assert_eq!(pos, a.get() - w.base.get() + 4096 + 3, "positioned at the channel offset of the address");
    assert_eq!(f.metadata().unwrap().len(), w.len, "the descriptor spans the channel");
    let mut got = [0u8; 6];
    f.read_exact(&mut got).unwrap();
    assert_eq!(&got, b"neuron");
    f.seek(SeekFrom::Start(pos)).unwrap();
    f.write_all(b"NEURON").unwrap();
    let mut back = [0u8; 6];
    dev.read(a.offset(4096 + 3), &mut back).unwrap();
    assert_eq!(&back, b"NEURON", "writes through the descriptor are device memory");
    assert!(dev.dmabuf_fd(w.va + w.len as usize - 2, 4).is_err(), "past the end of the channel");
    assert!(dev.dmabuf_fd(0x1000, 4).is_err(), "not mapped device memory");
}

#[test]
fn stores_through_the_window_do_not_reach_decoded_instructions_until_the_device_sees_a_write() {
    let dev = device();
    let w = dev.map_hbm(0).unwrap().unwrap();
    // The stream, the WRITE's target and the notification ring on pages of
    // their own, so nothing but the stream's own bytes touches its page.
    let target = dev.alloc(HBM0, PAGE, PAGE).unwrap();
    let ring_at = dev.alloc(HBM0, PAGE, PAGE).unwrap();
    let stream_at = dev.alloc(HBM0, PAGE, PAGE).unwrap();
    let nq: Arc<dyn NqRing> = dev.nq_init(NqSpec { core: C0, engine_index: EngineId::Sp.index() as u8, nq_type: NqType::Notify, ring: ring_at, size_bytes: 64 * 16 }).unwrap();
    const DOORBELL: u8 = 1;
    let records = [build::record(0xA0, (5, DOORBELL), (7, DOORBELL), 1), build::write(target.get(), 0xA), build::exit()];
    let bytes: Vec<u8> = records.iter().flatten().copied().collect();
    dev.write(stream_at, &bytes).unwrap();
    dev.start_engine(C0, EngineId::Sp, stream_at, bytes.len() as u64).unwrap();
    let mut runs = 0u64;
    let mut execute = || -> u32 {
        runs += 1;
        dev.semaphore_increment(C0, u32::from(DOORBELL), 1).unwrap();
        nrt_hal::conformance::wait_until("the execution's END record", || nq.produced() >= 2 * runs);
        let mut b = [0u8; 4];
        dev.read(target, &mut b).unwrap();
        u32::from_le_bytes(b)
    };
    assert_eq!(execute(), 0xA);
    // A client store through the window rewrites the WRITE record: the
    // device does not snoop it, the sequencer keeps its decode.
    let patched = build::write(target.get(), 0xB);
    let record_va = w.host_addr(stream_at.offset(64)).unwrap();
    poke(record_va, &patched);
    assert_eq!(peek(record_va, 64), patched.to_vec());
    assert_eq!(execute(), 0xA, "the decoded instruction runs as fetched");
    // The same bytes written through the device (nrt_memcpy_to_device):
    // the sequencer sees the write and fetches the record again.
    dev.write(stream_at.offset(64), &patched).unwrap();
    assert_eq!(execute(), 0xB, "a device write reaches the sequencer");
}
