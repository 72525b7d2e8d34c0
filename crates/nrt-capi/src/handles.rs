//! Registries of live handles. A handle given to C is the address of a
//! small heap cell this module owns; the object behind it is found by
//! looking that address up, never by dereferencing the caller's pointer.
//! A stale, foreign or already-freed pointer is therefore simply absent
//! and the export reports NRT_INVALID_HANDLE (or NRT_INVALID) instead of
//! touching freed memory.

use nrt_core::{NrtError, NrtResult, NrtStatus};
use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard};

/// The heap cell whose address is the handle (its content only makes the
/// allocation non-zero-sized, so every live handle has its own address).
struct Cell {
    _tag: u64,
}

/// Handle address -> (the cell that owns the address, the object).
type Entries<T> = HashMap<usize, (Box<Cell>, Arc<T>)>;

/// Live handles of one kind (`what` names it in errors).
pub struct Registry<T> {
    what: &'static str,
    map: Mutex<Entries<T>>,
}

impl<T> Registry<T> {
    /// An empty registry (usable in a `static` via `LazyLock`).
    pub fn new(what: &'static str) -> Registry<T> {
        Registry { what, map: Mutex::new(HashMap::new()) }
    }

    fn lock(&self) -> MutexGuard<'_, Entries<T>> {
        self.map.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Registers `value` and returns its new handle.
    pub fn insert(&self, value: T) -> usize {
        let cell = Box::new(Cell { _tag: 0x6e72_745f_6861_6e64 });
        let key = &*cell as *const Cell as usize;
        self.lock().insert(key, (cell, Arc::new(value)));
        key
    }

    /// The object behind `handle`, or NRT_INVALID_HANDLE.
    pub fn get(&self, handle: usize) -> NrtResult<Arc<T>> {
        if handle == 0 {
            return Err(NrtError::invalid(format!("{} handle is NULL", self.what)));
        }
        self.lock().get(&handle).map(|(_, v)| Arc::clone(v)).ok_or_else(|| self.unknown(handle))
    }

    /// Whether `handle` is live.
    pub fn contains(&self, handle: usize) -> bool {
        self.lock().contains_key(&handle)
    }

    /// Unregisters `handle` and returns its object.
    pub fn remove(&self, handle: usize) -> NrtResult<Arc<T>> {
        if handle == 0 {
            return Err(NrtError::invalid(format!("{} handle is NULL", self.what)));
        }
        self.lock().remove(&handle).map(|(_, v)| v).ok_or_else(|| self.unknown(handle))
    }

    /// Unregisters everything (runtime close) and returns the objects.
    pub fn drain(&self) -> Vec<Arc<T>> {
        self.lock().drain().map(|(_, (_, v))| v).collect()
    }

    /// Every live object (a snapshot).
    pub fn values(&self) -> Vec<Arc<T>> {
        self.lock().values().map(|(_, v)| Arc::clone(v)).collect()
    }

    /// Number of live handles.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether there are no live handles.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn unknown(&self, handle: usize) -> NrtError {
        NrtError::new(NrtStatus::InvalidHandle, format!("{:#x} is not a live {} handle (freed, stale or foreign)", handle, self.what))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handles_are_unique_and_checked() {
        let r: Registry<u32> = Registry::new("thing");
        let a = r.insert(1);
        let b = r.insert(2);
        assert_ne!(a, b);
        assert_eq!(*r.get(a).unwrap(), 1);
        assert_eq!(*r.remove(b).unwrap(), 2);
        assert_eq!(r.get(b).unwrap_err().status, NrtStatus::InvalidHandle);
        assert_eq!(r.get(0).unwrap_err().status, NrtStatus::Invalid);
        assert_eq!(r.get(a ^ 0x10).unwrap_err().status, NrtStatus::InvalidHandle);
        assert_eq!(r.drain().len(), 1);
        assert!(r.is_empty());
    }
}
