//! [`CacheLine`]: keeps a value off the cache lines of its neighbours.
//!
//! The async path hands requests from submitting threads to an execution
//! unit's worker on another core; every cache line both cores write (or
//! one writes while the other reads) moves between them on each request,
//! at about half the spin round trip `nrt bench` reports. Fields that one
//! side writes per request (queue cursors and slots, event counts, a
//! model's execution lock, a tensor's completion counters) are wrapped so
//! that they share no line with what the other side reads.

/// A value alone on its cache line: 128 bytes, the pair of 64-byte lines
/// x86's adjacent-line prefetcher fetches together.
#[derive(Debug, Default)]
#[repr(align(128))]
pub struct CacheLine<T>(pub T);

impl<T> std::ops::Deref for CacheLine<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.0
    }
}

#[cfg(test)]
mod tests {
    use super::CacheLine;
    use std::sync::atomic::AtomicU64;

    #[test]
    fn neighbours_never_share_a_line() {
        let pair = [CacheLine(AtomicU64::new(1)), CacheLine(AtomicU64::new(2))];
        let (a, b) = (&pair[0].0 as *const AtomicU64 as usize, &pair[1].0 as *const AtomicU64 as usize);
        assert_eq!(a % 128, 0);
        assert!(b - a >= 128);
        assert_eq!(pair[1].load(std::sync::atomic::Ordering::Relaxed), 2, "derefs to the value");
    }
}
