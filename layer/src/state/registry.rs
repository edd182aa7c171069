//! A map from dispatch key (or any 64-bit handle) to shared state, behind a
//! `parking_lot` read-write lock with a cheap multiplicative hash: hooks on
//! hot paths take one uncontended read lock and one atomic increment.

use parking_lot::RwLock;
use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::Arc;

/// The loader's dispatch-table pointer at the start of a dispatchable object.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub(crate) struct DispatchKey(pub usize);

/// Hashes handles (pointers or 64-bit ids): they are already unique, so one
/// multiply spreads them over the buckets (Fibonacci hashing).
#[derive(Default)]
pub(crate) struct HandleHasher(u64);

impl Hasher for HandleHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0.rotate_left(8) ^ u64::from(b)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
        }
    }
    fn write_u64(&mut self, value: u64) {
        self.0 = (self.0 ^ value).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
    fn write_usize(&mut self, value: usize) {
        self.write_u64(value as u64);
    }
}

pub(crate) type HandleMap<K, V> = HashMap<K, V, BuildHasherDefault<HandleHasher>>;

/// Shared state by dispatch key.
pub(crate) struct Registry<T> {
    map: RwLock<HandleMap<DispatchKey, Arc<T>>>,
}

impl<T> Default for Registry<T> {
    fn default() -> Self {
        Registry { map: RwLock::new(HandleMap::default()) }
    }
}

impl<T> Registry<T> {
    pub(crate) fn get(&self, key: DispatchKey) -> Option<Arc<T>> {
        self.map.read().get(&key).cloned()
    }
    pub(crate) fn insert(&self, key: DispatchKey, value: Arc<T>) {
        self.map.write().insert(key, value);
    }
    pub(crate) fn remove(&self, key: DispatchKey) -> Option<Arc<T>> {
        self.map.write().remove(&key)
    }
}
