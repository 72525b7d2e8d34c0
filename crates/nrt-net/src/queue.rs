//! Safe, owning forms of a comm's transfers: a queue that owns its comm
//! and the buffer of every transfer in flight, so callers without
//! `unsafe` (the runtime's collectives proxy) can keep many transfers
//! posted. Transfers finish in posting order on a connection, so the
//! queues test the oldest one. Dropping a queue (or taking its comm back)
//! cancels what is still in flight before the buffers are freed.
//!
//! A transfer's bytes are either a buffer the queue owns, or a range of a
//! [`Region`]: device memory mapped into the process and registered with
//! the transport, sent from and received into where it is (no staging
//! copy), as the NIC reads and writes device memory on hardware.

use std::collections::VecDeque;
use std::sync::Arc;

use crate::error::{NetError, NetResult};
use crate::transport::{Registration, RecvComm, Request, SendComm, Transport};
use nrt_hal::{Device, DeviceAddr};

/// Device memory registered with a transport: `len` bytes at device
/// address `addr`, mapped into the process by the device
/// ([`Device::map_hbm`]); the region keeps the device, and so the
/// mapping, alive. Transfers of a queue may send from and receive into
/// its bytes without a copy.
pub struct Region {
    reg: Registration,
    addr: DeviceAddr,
    len: u64,
    _device: Arc<dyn Device>,
}

impl std::fmt::Debug for Region {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "Region({}+{} at {:#x})", self.addr, self.len, self.reg.range().0)
    }
}

impl Region {
    /// Maps the HBM channel holding `addr .. addr + len` of `device` into
    /// the process (once; later calls find the same window) and registers
    /// the range with `transport`. Fails when the device cannot map its
    /// memory or the range is not inside one channel.
    pub fn in_device(transport: &dyn Transport, device: Arc<dyn Device>, addr: DeviceAddr, len: u64) -> NetResult<Region> {
        let mut channel = 0u32;
        let va = loop {
            let w = device.map_hbm(channel).map_err(|e| NetError::Invalid(format!("device memory at {addr} cannot be registered: {e}")))?;
            let Some(w) = w else {
                return Err(NetError::Invalid(format!("{addr}+{len} is not inside one HBM channel of the device")));
            };
            if let Some(va) = w.host_addr(addr)
                && w.device_addr(va, len).is_some()
            {
                break va;
            }
            channel += 1;
        };
        let n = usize::try_from(len).map_err(|_| NetError::Invalid(format!("a region of {len} bytes")))?;
        // SAFETY: `va .. va + len` is inside a window `map_hbm` returned;
        // the device keeps its windows mapped for its life (the
        // `Device::map_hbm` contract), and the region holds the device.
        let reg = unsafe { transport.register(va as *const u8, n)? };
        Ok(Region { reg, addr, len, _device: device })
    }

    /// The registered device range.
    pub fn device_range(&self) -> (DeviceAddr, u64) {
        (self.addr, self.len)
    }

    /// The host address of `len` bytes at device address `addr`, when they
    /// lie inside the region.
    fn host(&self, addr: DeviceAddr, len: usize) -> NetResult<usize> {
        let off = addr.get().checked_sub(self.addr.get()).filter(|o| o.checked_add(len as u64).is_some_and(|end| end <= self.len));
        match off {
            Some(o) => Ok(self.reg.range().0 + o as usize),
            None => Err(NetError::Invalid(format!("{len} bytes at {addr} are outside the registered region {}+{}", self.addr, self.len))),
        }
    }
}

/// The bytes of a transfer in flight.
enum Bytes {
    /// A buffer the queue owns.
    Owned(Vec<u8>),
    /// A range of a region (kept registered and mapped while in flight).
    InRegion(#[allow(dead_code)] Arc<Region>),
}

impl Bytes {
    /// The owned buffer back; an empty one for a region transfer.
    fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Owned(b) => b,
            Bytes::InRegion(_) => Vec::new(),
        }
    }
}

/// Sends in flight on one connection, oldest first.
pub struct SendQueue {
    comm: Option<Box<dyn SendComm>>,
    inflight: VecDeque<(Request, Bytes)>,
}

impl SendQueue {
    /// A queue over `comm`.
    pub fn new(comm: Box<dyn SendComm>) -> SendQueue {
        SendQueue { comm: Some(comm), inflight: VecDeque::new() }
    }

    fn comm(&mut self) -> &mut dyn SendComm {
        &mut **self.comm.as_mut().expect("a queue keeps its comm until into_comm")
    }

    /// The peer, for messages.
    pub fn peer(&self) -> String {
        self.comm.as_ref().map_or_else(String::new, |c| c.peer())
    }

    /// Posts a send of all of `buf`; the queue keeps the buffer until the
    /// send finishes.
    pub fn post(&mut self, buf: Vec<u8>) -> NetResult<()> {
        // SAFETY: the buffer's heap block moves into `inflight` with its
        // request and stays there, unchanged, until `test_oldest` sees the
        // request finished or `cancel_all` has cancelled it.
        let req = unsafe { self.comm().isend(buf.as_ptr(), buf.len(), None)? };
        self.inflight.push_back((req, Bytes::Owned(buf)));
        Ok(())
    }

    /// Posts a send of the `len` bytes at device address `addr` inside
    /// `region`, from where they are.
    pub fn post_region(&mut self, region: &Arc<Region>, addr: DeviceAddr, len: usize) -> NetResult<()> {
        let at = region.host(addr, len)?;
        // SAFETY: the range is inside the region's mapped, registered
        // memory, which the clone of `region` kept with the request keeps
        // alive until the request finished or was cancelled.
        let req = unsafe { self.comm().isend(at as *const u8, len, Some(&region.reg))? };
        self.inflight.push_back((req, Bytes::InRegion(Arc::clone(region))));
        Ok(())
    }

    /// Sends in flight.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Tests the oldest send: its buffer back once done (empty for a
    /// region's), `None` while in flight or when nothing is.
    pub fn test_oldest(&mut self) -> NetResult<Option<Vec<u8>>> {
        let Some(&(req, _)) = self.inflight.front() else { return Ok(None) };
        match self.comm().test(req) {
            Ok(Some(_)) => Ok(self.inflight.pop_front().map(|(_, b)| b.into_vec())),
            Ok(None) => Ok(None),
            Err(e) => {
                // A failed request is freed by the transport.
                self.inflight.pop_front();
                Err(e)
            }
        }
    }

    /// Cancels every send in flight.
    pub fn cancel_all(&mut self) {
        while let Some((req, buf)) = self.inflight.pop_front() {
            let _ = self.comm().cancel(req);
            drop(buf);
        }
    }

    /// The comm, after cancelling what is in flight.
    pub fn into_comm(mut self) -> Box<dyn SendComm> {
        self.cancel_all();
        self.comm.take().expect("comm")
    }
}

impl Drop for SendQueue {
    fn drop(&mut self) {
        if self.comm.is_some() {
            self.cancel_all();
        }
    }
}

/// Receives posted on one connection, oldest first.
pub struct RecvQueue {
    comm: Option<Box<dyn RecvComm>>,
    inflight: VecDeque<(Request, Bytes)>,
}

impl RecvQueue {
    /// A queue over `comm`.
    pub fn new(comm: Box<dyn RecvComm>) -> RecvQueue {
        RecvQueue { comm: Some(comm), inflight: VecDeque::new() }
    }

    fn comm(&mut self) -> &mut dyn RecvComm {
        &mut **self.comm.as_mut().expect("a queue keeps its comm until into_comm")
    }

    /// The peer, for messages.
    pub fn peer(&self) -> String {
        self.comm.as_ref().map_or_else(String::new, |c| c.peer())
    }

    /// Posts a receive of at most `buf.len()` bytes into `buf`.
    pub fn post(&mut self, mut buf: Vec<u8>) -> NetResult<()> {
        // SAFETY: as in `SendQueue::post`: the buffer is not touched by us
        // until its request finished or was cancelled.
        let req = unsafe { self.comm().irecv(buf.as_mut_ptr(), buf.len(), None)? };
        self.inflight.push_back((req, Bytes::Owned(buf)));
        Ok(())
    }

    /// Posts a receive of at most `cap` bytes into device address `addr`
    /// inside `region`, where they are to be (the bytes there are the
    /// transport's until the receive is done or cancelled).
    pub fn post_region(&mut self, region: &Arc<Region>, addr: DeviceAddr, cap: usize) -> NetResult<()> {
        let at = region.host(addr, cap)?;
        // SAFETY: as in `SendQueue::post_region`; nothing in this process
        // reads the range until the request is done (the device reads it
        // only when the proxy rings the landing after completion).
        let req = unsafe { self.comm().irecv(at as *mut u8, cap, Some(&region.reg))? };
        self.inflight.push_back((req, Bytes::InRegion(Arc::clone(region))));
        Ok(())
    }

    /// Receives in flight.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Tests the oldest receive: its buffer (empty for a region's: the
    /// bytes are in the region) and the bytes received once done, `None`
    /// while in flight or when nothing is posted.
    pub fn test_oldest(&mut self) -> NetResult<Option<(Vec<u8>, usize)>> {
        let Some(&(req, _)) = self.inflight.front() else { return Ok(None) };
        match self.comm().test(req) {
            Ok(Some(n)) => Ok(self.inflight.pop_front().map(|(_, b)| (b.into_vec(), n))),
            Ok(None) => Ok(None),
            Err(e) => {
                self.inflight.pop_front();
                Err(e)
            }
        }
    }

    /// Makes completed receives visible (see [`RecvComm::flush`]).
    pub fn flush(&mut self) -> NetResult<()> {
        self.comm().flush()
    }

    /// Cancels every receive in flight.
    pub fn cancel_all(&mut self) {
        while let Some((req, buf)) = self.inflight.pop_front() {
            let _ = self.comm().cancel(req);
            drop(buf);
        }
    }

    /// The comm, after cancelling what is in flight.
    pub fn into_comm(mut self) -> Box<dyn RecvComm> {
        self.cancel_all();
        self.comm.take().expect("comm")
    }
}

impl Drop for RecvQueue {
    fn drop(&mut self) {
        if self.comm.is_some() {
            self.cancel_all();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{InProcTransport, Transport};
    use crate::limits::Bound;
    use std::time::Duration;

    #[test]
    fn queued_messages_arrive_in_order_and_dropping_cancels() {
        let t = InProcTransport::new();
        let (h, mut l) = t.listen().unwrap();
        let mut s = SendQueue::new(t.connect(&h).unwrap());
        let mut r = RecvQueue::new(l.accept(Bound::new(Duration::from_secs(5), "T")).unwrap());
        for i in 0..3u8 {
            r.post(vec![0; 8]).unwrap();
            s.post(vec![i; 4]).unwrap();
        }
        let mut got = Vec::new();
        while got.len() < 3 {
            if let Some((b, n)) = r.test_oldest().unwrap() {
                got.push(b[..n].to_vec());
            }
            let _ = s.test_oldest().unwrap();
        }
        assert_eq!(got, vec![vec![0; 4], vec![1; 4], vec![2; 4]]);
        r.post(vec![0; 8]).unwrap();
        assert_eq!(r.in_flight(), 1);
        drop(r);
    }
}
