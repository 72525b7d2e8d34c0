//! Safe, owning forms of a comm's transfers: a queue that owns its comm
//! and the buffer of every transfer in flight, so callers without
//! `unsafe` (the runtime's collectives proxy) can keep many transfers
//! posted. Transfers finish in posting order on a connection, so the
//! queues test the oldest one. Dropping a queue (or taking its comm back)
//! cancels what is still in flight before the buffers are freed.

use std::collections::VecDeque;

use crate::error::NetResult;
use crate::transport::{RecvComm, Request, SendComm};

/// Sends in flight on one connection, oldest first.
pub struct SendQueue {
    comm: Option<Box<dyn SendComm>>,
    inflight: VecDeque<(Request, Vec<u8>)>,
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
        self.inflight.push_back((req, buf));
        Ok(())
    }

    /// Sends in flight.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Tests the oldest send: its buffer back once done, `None` while in
    /// flight or when nothing is.
    pub fn test_oldest(&mut self) -> NetResult<Option<Vec<u8>>> {
        let Some(&(req, _)) = self.inflight.front() else { return Ok(None) };
        match self.comm().test(req) {
            Ok(Some(_)) => Ok(self.inflight.pop_front().map(|(_, b)| b)),
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
    inflight: VecDeque<(Request, Vec<u8>)>,
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
        self.inflight.push_back((req, buf));
        Ok(())
    }

    /// Receives in flight.
    pub fn in_flight(&self) -> usize {
        self.inflight.len()
    }

    /// Tests the oldest receive: its buffer and the bytes received once
    /// done, `None` while in flight or when nothing is posted.
    pub fn test_oldest(&mut self) -> NetResult<Option<(Vec<u8>, usize)>> {
        let Some(&(req, _)) = self.inflight.front() else { return Ok(None) };
        match self.comm().test(req) {
            Ok(Some(n)) => Ok(self.inflight.pop_front().map(|(_, b)| (b, n))),
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
