//! A fixed table of request slots: posting takes a free slot, completion
//! frees it; the generation counter makes a stale [`Request`] fail instead
//! of naming a newer transfer. Allocated once per comm, so posting and
//! testing never allocate.

use crate::error::{NetError, NetResult};
use crate::transport::{MAX_REQUESTS, Request};

pub(crate) struct Slots<T> {
    entries: Vec<(u32, Option<T>)>,
    free: Vec<u16>,
}

impl<T> Slots<T> {
    pub(crate) fn new() -> Slots<T> {
        Slots {
            entries: (0..MAX_REQUESTS).map(|_| (0, None)).collect(),
            free: (0..MAX_REQUESTS as u16).rev().collect(),
        }
    }

    /// Takes a free slot for `value`; errors when all are in flight.
    pub(crate) fn insert(&mut self, value: T) -> NetResult<Request> {
        let Some(slot) = self.free.pop() else {
            return Err(NetError::Invalid(format!(
                "Maximum number of pending requests {MAX_REQUESTS} reached on this connection"
            )));
        };
        let e = &mut self.entries[slot as usize];
        e.0 = e.0.wrapping_add(1);
        e.1 = Some(value);
        Ok(Request { slot, generation: e.0 })
    }

    pub(crate) fn get_mut(&mut self, req: Request) -> NetResult<&mut T> {
        match self.entries.get_mut(req.slot as usize) {
            Some((g, Some(v))) if *g == req.generation => Ok(v),
            _ => Err(stale(req)),
        }
    }

    /// The value of a slot by index, whatever its generation (completion
    /// paths that only know the slot).
    pub(crate) fn by_index(&mut self, slot: u16) -> Option<&mut T> {
        self.entries.get_mut(slot as usize).and_then(|e| e.1.as_mut())
    }

    pub(crate) fn remove(&mut self, req: Request) -> NetResult<T> {
        match self.entries.get_mut(req.slot as usize) {
            Some((g, v @ Some(_))) if *g == req.generation => {
                let out = v.take().expect("checked Some");
                self.free.push(req.slot);
                Ok(out)
            }
            _ => Err(stale(req)),
        }
    }

    /// Every occupied slot, for failing or cancelling them all.
    pub(crate) fn occupied(&mut self) -> impl Iterator<Item = (u16, &mut T)> {
        self.entries.iter_mut().enumerate().filter_map(|(i, e)| e.1.as_mut().map(|v| (i as u16, v)))
    }

    #[cfg(test)]
    pub(crate) fn in_flight(&self) -> usize {
        MAX_REQUESTS - self.free.len()
    }
}

fn stale(req: Request) -> NetError {
    NetError::Invalid(format!(
        "request {}/{} is not in flight on this connection (already completed, cancelled, or from another comm)",
        req.slot, req.generation
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slots_refuse_stale_and_overflow() {
        let mut s = Slots::<u32>::new();
        let a = s.insert(7).unwrap();
        assert_eq!(*s.get_mut(a).unwrap(), 7);
        assert_eq!(s.remove(a).unwrap(), 7);
        assert!(s.get_mut(a).is_err(), "a finished request must not be found again");
        let b = s.insert(8).unwrap();
        assert_ne!(a, b);
        for i in 1..MAX_REQUESTS {
            s.insert(i as u32).unwrap();
        }
        let e = s.insert(0).unwrap_err().to_string();
        assert!(e.contains("Maximum number of pending requests 128"), "{e}");
        assert_eq!(s.in_flight(), MAX_REQUESTS);
    }
}
