//! DMA queues: 16 engines x 16 queues per core, each with an M2S and an S2M
//! ring of 16-byte descriptors in device memory.
//!
//! A doorbell (a `drtp_inc` register write, from the host or from a
//! trigger descriptor) adds to a tail with `Release`; the queue's worker
//! loads the tails with `Acquire`, so descriptor bytes written before the
//! doorbell are visible when the engine walks them. Pairs (TX i, RX i) are
//! consumed together; a pair whose TX has the LAST bit completes a packet,
//! which bumps the queue's completion semaphore and sets its event.

pub mod desc;
pub mod pattern;
pub mod reduce;
pub mod regs;
pub mod rings;
pub mod walk;

pub use regs::{RegRef, reg_ref};

use nrt_hal::arch::{DMA_REG_DRBP_HIGH, DMA_REG_DRBP_LOW, DMA_REG_DRHP, DMA_REG_DRL, DMA_REG_DRTP, DMA_REG_DRTP_INC, DMA_REG_STATUS};
use nrt_hal::{DeviceAddr, DmaQueueState, DmaQueueStatus, DmaRingConfig};
use std::sync::Mutex;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

/// Programming and progress of one queue, owned by whoever holds the lock
/// (the queue worker while it walks, or the programming path).
#[derive(Clone, Debug)]
pub struct QueueRegs {
    /// Software status.
    pub status: DmaQueueStatus,
    /// Rings, length and completion targets.
    pub config: DmaRingConfig,
    /// Descriptors processed on the TX side (free-running).
    pub tx_head: u64,
    /// Descriptors processed on the RX side (free-running).
    pub rx_head: u64,
    /// The TX and RX heads' slots in the ring (`head % descriptors`),
    /// kept with the heads so a walk computes no division per pair.
    slots: [u64; 2],
    /// Virtual time (ps) at which the queue's last transfer finished.
    pub clock: u64,
    /// The TX and RX rings' pinned pages and decoded descriptors, and the
    /// decoded pairs kept by slot (see [`rings::DescRings`]).
    pub rings: rings::DescRings,
    /// The pages the last plain copy read and wrote (see
    /// [`rings::CopyPins`]).
    pub copy_pins: rings::CopyPins,
    /// The pattern blocks the queue's transfers read, decoded (see
    /// [`rings::PatternBlocks`]).
    pub blocks: rings::PatternBlocks,
    /// The core's notification-binding generation ([`crate::core::Core::nq_generation`])
    /// at which the queue's DMA trace ring was last found unbound
    /// (`u64::MAX`: not known): while the generation reads the same, a
    /// completed packet skips the trace ring's lookup.
    trace_unbound_at: u64,
    /// The packet being walked: when its first pair started and the
    /// bytes its pairs moved so far (its trace records state both).
    packet: (u64, u64),
}

impl QueueRegs {
    /// The ring addresses of the next TX and RX descriptors.
    #[inline]
    fn next_descriptors(&self) -> (DeviceAddr, DeviceAddr) {
        (self.config.tx_ring.offset(self.slots[0] * 16), self.config.rx_ring.offset(self.slots[1] * 16))
    }

    /// Moves both heads past the pair just processed, in a ring of `n`
    /// (the queue's descriptor count) descriptors.
    #[inline]
    fn advance(&mut self, n: u64) {
        self.tx_head += 1;
        self.rx_head += 1;
        for s in &mut self.slots {
            *s += 1;
            if *s >= n {
                *s = 0;
            }
        }
    }

    fn disabled() -> QueueRegs {
        QueueRegs {
            status: DmaQueueStatus::Disabled,
            config: DmaRingConfig {
                tx_ring: DeviceAddr(0),
                rx_ring: DeviceAddr(0),
                descriptors: 0,
                completion_semaphore: None,
                completion_event: None,
            },
            tx_head: 0,
            rx_head: 0,
            slots: [0; 2],
            clock: 0,
            rings: Default::default(),
            copy_pins: Default::default(),
            blocks: Default::default(),
            trace_unbound_at: u64::MAX,
            packet: (0, 0),
        }
    }
}

/// One DMA queue.
#[derive(Debug)]
pub struct DmaQueue {
    /// Programming and heads.
    pub regs: Mutex<QueueRegs>,
    /// Submitted TX descriptors (free-running; doorbells add with Release).
    pub tx_tail: AtomicU64,
    /// Submitted RX descriptors.
    pub rx_tail: AtomicU64,
    /// Mirrors of the heads for lock-free "is work pending" checks.
    pub tx_head_pub: AtomicU64,
    /// Mirror of the RX head.
    pub rx_head_pub: AtomicU64,
    /// Whether a worker task for this queue is already queued.
    pub queued: AtomicBool,
}

impl Default for DmaQueue {
    fn default() -> Self {
        DmaQueue {
            regs: Mutex::new(QueueRegs::disabled()),
            tx_tail: AtomicU64::new(0),
            rx_tail: AtomicU64::new(0),
            tx_head_pub: AtomicU64::new(0),
            rx_head_pub: AtomicU64::new(0),
            queued: AtomicBool::new(false),
        }
    }
}

impl DmaQueue {
    /// Programs the rings and enables the queue (heads and tails to zero).
    pub fn init(&self, config: DmaRingConfig) {
        let mut r = self.regs.lock().unwrap_or_else(|e| e.into_inner());
        *r = QueueRegs { status: DmaQueueStatus::Enabled, config, tx_head: 0, rx_head: 0, clock: r.clock, ..QueueRegs::disabled() };
        for a in [&self.tx_tail, &self.rx_tail, &self.tx_head_pub, &self.rx_head_pub] {
            a.store(0, Ordering::Release);
        }
    }

    /// Disables the queue (core reset).
    pub fn reset(&self) {
        *self.regs.lock().unwrap_or_else(|e| e.into_inner()) = QueueRegs::disabled();
        for a in [&self.tx_tail, &self.rx_tail, &self.tx_head_pub, &self.rx_head_pub] {
            a.store(0, Ordering::Release);
        }
    }

    /// The doorbell: submits `tx` and `rx` more descriptors. The adds are
    /// sequentially consistent (on x86 the same locked add as `Release`):
    /// with the walk's `SeqCst` clear of `queued` and tail reads they order
    /// the doorbell's add against the walk (see `walk::run_queue` and the
    /// model in crates/nrt-loom/src/models/dma_doorbell.rs).
    pub fn ring_doorbell(&self, tx: u32, rx: u32) {
        self.tx_tail.fetch_add(u64::from(tx), Ordering::SeqCst);
        self.rx_tail.fetch_add(u64::from(rx), Ordering::SeqCst);
    }

    /// Whether submitted pairs are waiting to be processed.
    pub fn has_pending(&self) -> bool {
        let tx = self.tx_tail.load(Ordering::Acquire) > self.tx_head_pub.load(Ordering::Acquire);
        let rx = self.rx_tail.load(Ordering::Acquire) > self.rx_head_pub.load(Ordering::Acquire);
        tx && rx
    }

    /// Whether the TX (`rx` false) or RX side has submitted descriptors
    /// not yet processed: [`DmaQueue::has_pending`] of a doorbell that
    /// just added to the other side (which has some then, as a head never
    /// passes its tail).
    #[inline]
    pub fn side_pending(&self, rx: bool) -> bool {
        let (tail, head) = if rx { (&self.rx_tail, &self.rx_head_pub) } else { (&self.tx_tail, &self.tx_head_pub) };
        tail.load(Ordering::Acquire) > head.load(Ordering::Acquire)
    }

    /// The registers as DMA_QUEUE_GET_STATE reports them.
    pub fn state(&self) -> DmaQueueState {
        let r = self.regs.lock().unwrap_or_else(|e| e.into_inner());
        DmaQueueState {
            status: r.status,
            tx_head: r.tx_head,
            tx_tail: self.tx_tail.load(Ordering::Acquire),
            rx_head: r.rx_head,
            rx_tail: self.rx_tail.load(Ordering::Acquire),
        }
    }
}

/// The value of a 32-bit register read.
pub fn read_reg(q: &DmaQueue, r: RegRef) -> u32 {
    let regs = q.regs.lock().unwrap_or_else(|e| e.into_inner());
    let n = u64::from(regs.config.descriptors.max(1));
    let ring = if r.rx { regs.config.rx_ring } else { regs.config.tx_ring };
    let (head, tail) = if r.rx {
        (regs.rx_head, q.rx_tail.load(Ordering::Acquire))
    } else {
        (regs.tx_head, q.tx_tail.load(Ordering::Acquire))
    };
    match r.reg {
        DMA_REG_STATUS => match regs.status {
            DmaQueueStatus::Disabled => 1,
            DmaQueueStatus::Enabled => 2,
            DmaQueueStatus::Aborted => 3,
        },
        DMA_REG_DRBP_LOW => ring.get() as u32,
        DMA_REG_DRBP_HIGH => (ring.get() >> 32) as u32,
        DMA_REG_DRL => regs.config.descriptors,
        DMA_REG_DRHP => (head % n) as u32,
        DMA_REG_DRTP => (tail % n) as u32,
        _ => 0,
    }
}

/// Applies a 32-bit register write. Returns true when it was a doorbell
/// (the caller schedules the queue). Ring programming through registers
/// (base, length) is accepted while the queue is not being walked.
#[inline]
pub fn write_reg(q: &DmaQueue, r: RegRef, value: u32) -> bool {
    if r.reg == DMA_REG_DRTP_INC {
        // One side's tail (a locked add each, so not the other side's by
        // zero as `ring_doorbell` would).
        let tail = if r.rx { &q.rx_tail } else { &q.tx_tail };
        tail.fetch_add(u64::from(value), Ordering::SeqCst);
        return true;
    }
    program_reg(q, r, value);
    false
}

/// [`write_reg`] of a ring-programming register (out of line: the
/// doorbell is the register a running program writes).
#[inline(never)]
fn program_reg(q: &DmaQueue, r: RegRef, value: u32) {
    let Ok(mut regs) = q.regs.try_lock() else { return };
    let ring = if r.rx { &mut regs.config.rx_ring } else { &mut regs.config.tx_ring };
    match r.reg {
        DMA_REG_DRBP_LOW => *ring = DeviceAddr((ring.get() & !0xFFFF_FFFF) | u64::from(value)),
        DMA_REG_DRBP_HIGH => *ring = DeviceAddr((ring.get() & 0xFFFF_FFFF) | (u64::from(value) << 32)),
        DMA_REG_DRL => {
            regs.config.descriptors = value;
            let n = u64::from(value.max(1));
            regs.slots = [regs.tx_head % n, regs.rx_head % n];
            if value > 0 && regs.status == DmaQueueStatus::Disabled {
                regs.status = DmaQueueStatus::Enabled;
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn register_offsets_decode() {
        use nrt_hal::arch::DMA_ENGINE_REGS_SIZE;
        // m2s_q[0] of engine 0, s2m_q[5] of engine 0, m2s_q[15] of engine 2.
        assert_eq!(reg_ref(0x1000 + 0x38), Some(RegRef { queue: 0, rx: false, reg: 0x38 }));
        assert_eq!(reg_ref(0x2_1000 + 5 * 0x1000 + 0x38), Some(RegRef { queue: 5, rx: true, reg: 0x38 }));
        assert_eq!(reg_ref(2 * DMA_ENGINE_REGS_SIZE + 0x1000 + 15 * 0x1000 + 0x28), Some(RegRef { queue: 47, rx: false, reg: 0x28 }));
        // The engine-wide blocks: the M2S state register, the S2M block's
        // head, the general registers.
        assert_eq!(reg_ref(0x200), None);
        assert_eq!(reg_ref(0x2_0000), None);
        assert_eq!(reg_ref(0x1_1000), None);
        assert_eq!(reg_ref(0x3_8000), None);
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(256))]
        /// The kept ring slots are the heads modulo the ring length through
        /// any mix of walked pairs and ring lengths programmed by register.
        #[test]
        fn ring_slots_follow_the_heads(ops in proptest::collection::vec(proptest::option::of(0u32..40), 1..200)) {
            let q = DmaQueue::default();
            q.init(DmaRingConfig { tx_ring: DeviceAddr(0x1000), rx_ring: DeviceAddr(0x2000), descriptors: 7, completion_semaphore: None, completion_event: None });
            for op in ops {
                match op {
                    Some(len) => { write_reg(&q, RegRef { queue: 0, rx: false, reg: DMA_REG_DRL }, len); }
                    None => {
                        let mut r = q.regs.lock().unwrap();
                        let n = u64::from(r.config.descriptors);
                        if n > 0 {
                            r.advance(n);
                        }
                    }
                }
                let r = q.regs.lock().unwrap();
                let n = u64::from(r.config.descriptors.max(1));
                proptest::prop_assert_eq!(r.next_descriptors(), (DeviceAddr(0x1000 + r.tx_head % n * 16), DeviceAddr(0x2000 + r.rx_head % n * 16)));
            }
        }
    }

    #[test]
    fn doorbells_and_state() {
        let q = DmaQueue::default();
        q.init(DmaRingConfig {
            tx_ring: DeviceAddr(0x1000),
            rx_ring: DeviceAddr(0x2000),
            descriptors: 32,
            completion_semaphore: None,
            completion_event: None,
        });
        assert!(!q.has_pending());
        assert!(write_reg(&q, RegRef { queue: 0, rx: false, reg: DMA_REG_DRTP_INC }, 3));
        assert!(!q.has_pending(), "RX side not yet submitted");
        assert!(!q.side_pending(true) && q.side_pending(false));
        assert!(write_reg(&q, RegRef { queue: 0, rx: true, reg: DMA_REG_DRTP_INC }, 3));
        assert!(q.has_pending() && q.side_pending(true));
        assert_eq!(read_reg(&q, RegRef { queue: 0, rx: true, reg: DMA_REG_DRBP_LOW }), 0x2000);
        assert_eq!(read_reg(&q, RegRef { queue: 0, rx: false, reg: DMA_REG_DRTP }), 3);
        assert_eq!(read_reg(&q, RegRef { queue: 0, rx: false, reg: DMA_REG_STATUS }), 2);
        let s = q.state();
        assert_eq!((s.tx_tail, s.rx_tail, s.tx_head), (3, 3, 0));
    }
}
