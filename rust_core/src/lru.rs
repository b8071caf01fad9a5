//! A strict LRU bounded by entry count **and** total size, with npm lru-cache 11's semantics.
//!
//! This is the cache Claude Code keeps its `readFileState` in
//! (`new LRUCache({max, maxSize, sizeCalculation})`), reproduced operation for operation so that
//! the same sequence of calls leaves the same keys in the same order:
//!
//! - the size of an entry is `max(1, size)`;
//! - [`LruCache::get`] makes an entry the most recently used; [`LruCache::peek`] and
//!   [`LruCache::contains`] do not;
//! - an entry larger than `max_entry_size` (by default `max_size`) is not stored, and an existing
//!   entry under the same key is removed ([`SetOutcome::Rejected`]);
//! - updating an existing key makes it the most recently used, replaces its size, then evicts from
//!   the least recently used end while the total would exceed `max_size`;
//! - adding a new key when the cache holds `max_entries` evicts the least recently used entry
//!   first, then evicts while the total would exceed `max_size`;
//! - iteration, [`LruCache::dump`] and [`LruCache::keys`] run from the most to the least recently
//!   used; [`LruCache::load`] takes that order and reproduces it.
//!
//! Two differences from lru-cache, both unobservable through Claude Code's use of it: lru-cache
//! keeps the old size when `set` is called again with the *identical* value object (it skips the
//! size bookkeeping), while this cache always takes the size it is given; and lru-cache's `dump()`
//! is least-recently-used first while [`LruCache::dump`] is most-recently-used first (each
//! `load` accepts its own `dump`'s order, so `load(dump())` restores the same cache in both).
//!
//! Layout: a `hashbrown::HashTable<u32>` of slot indices (the key lives only in its slot, with its
//! hash, so nothing is stored twice and eviction never re-hashes) and a slab of slots linked by
//! `u32` indices. Operations allocate nothing except when the slab or table grows to a new high
//! water mark; the key itself is owned by the caller's `K`.

use std::borrow::Borrow;
use std::fmt;
use std::hash::{BuildHasher, Hash, Hasher};

use hashbrown::HashTable;

/// The null link.
const NIL: u32 = u32::MAX;

/// The largest `max_entries` a cache accepts (slots are addressed by `u32`, one value reserved).
pub const MAX_ENTRIES_LIMIT: usize = (u32::MAX - 1) as usize;

/// How much slab and table space is reserved up front: never more than this many entries. The
/// daemon holds one cache per agent, up to hundreds of thousands of them, most nearly empty: a
/// cache costs little until it is filled, and grows by doubling.
const PREALLOCATE_LIMIT: usize = 8;

/// The size an entry is accounted at: `max(1, size)`, as Claude Code's `sizeCalculation` does.
#[inline]
#[must_use]
pub const fn entry_size(size: u64) -> u64 {
    if size == 0 {
        1
    } else {
        size
    }
}

// ---------------------------------------------------------------------------------------------
// Hashing
// ---------------------------------------------------------------------------------------------

/// A small, fast, non-cryptographic hasher for short keys such as file paths.
///
/// Byte strings are consumed 16 bytes at a time, each block folded into the state with one
/// 64×64→128-bit multiply (the high and low halves xored), the last block read so that it ends at
/// the last byte (it may overlap the previous one; the length is mixed in first); `finish`
/// applies a full avalanche so that both the low bits (bucket) and the top seven bits (the
/// table's control byte) are well mixed even for keys sharing a long prefix. Keys come from
/// local, authenticated clients, so flooding resistance is not a goal; speed on 20–100 byte
/// paths is.
#[derive(Debug, Clone, Copy, Default)]
pub struct FastHasher {
    state: u64,
}

// Fractional hex digits of pi: arbitrary, fixed, odd where multiplied.
const SEED: u64 = 0x243f_6a88_85a3_08d3;
const P1: u64 = 0x1319_8a2e_0370_7344;
const P2: u64 = 0xa409_3822_299f_31d0;
const P3: u64 = 0x082e_fa98_ec4e_6c89;
const P4: u64 = 0x4528_21e6_38d0_1377;
const MUL: u64 = 0x9e37_79b9_7f4a_7c15; // 2^64 / golden ratio, odd

#[inline(always)]
const fn fold(a: u64, b: u64) -> u64 {
    let p = (a as u128).wrapping_mul(b as u128);
    (p as u64) ^ ((p >> 64) as u64)
}

#[inline(always)]
fn read8(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 8];
    word.copy_from_slice(&bytes[at..at + 8]);
    u64::from_le_bytes(word)
}

#[inline(always)]
fn read4(bytes: &[u8], at: usize) -> u64 {
    let mut word = [0u8; 4];
    word.copy_from_slice(&bytes[at..at + 4]);
    u64::from(u32::from_le_bytes(word))
}

impl FastHasher {
    #[inline(always)]
    fn add_word(&mut self, word: u64) {
        self.state = (self.state.rotate_left(23) ^ word).wrapping_mul(MUL);
    }
}

impl Hasher for FastHasher {
    #[inline]
    fn write(&mut self, bytes: &[u8]) {
        let len = bytes.len();
        let mut h = self.state ^ (len as u64).wrapping_mul(MUL);
        if len <= 16 {
            let (a, b) = if len >= 8 {
                (read8(bytes, 0), read8(bytes, len - 8))
            } else if len >= 4 {
                (read4(bytes, 0), read4(bytes, len - 4))
            } else if len > 0 {
                let spread = u64::from(bytes[0])
                    | (u64::from(bytes[len / 2]) << 8)
                    | (u64::from(bytes[len - 1]) << 16);
                (spread, 0)
            } else {
                (0, 0)
            };
            h = fold(a ^ P1 ^ h, b ^ P2);
        } else {
            let mut at = 0;
            while len - at > 16 {
                h = fold(read8(bytes, at) ^ P1 ^ h, read8(bytes, at + 8) ^ P2);
                at += 16;
            }
            h = fold(read8(bytes, len - 16) ^ P3 ^ h, read8(bytes, len - 8) ^ P4);
        }
        self.state = h;
    }

    #[inline]
    fn write_u8(&mut self, i: u8) {
        self.add_word(u64::from(i));
    }

    #[inline]
    fn write_u32(&mut self, i: u32) {
        self.add_word(u64::from(i));
    }

    #[inline]
    fn write_u64(&mut self, i: u64) {
        self.add_word(i);
    }

    #[inline]
    fn write_usize(&mut self, i: usize) {
        self.add_word(i as u64);
    }

    #[inline]
    fn finish(&self) -> u64 {
        // A murmur3-style finaliser.
        let mut h = self.state ^ SEED;
        h ^= h >> 33;
        h = h.wrapping_mul(0xff51_afd7_ed55_8ccd);
        h ^= h >> 33;
        h = h.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
        h ^ (h >> 33)
    }
}

/// [`BuildHasher`] for [`FastHasher`]; the default hasher of [`LruCache`].
#[derive(Debug, Clone, Copy, Default)]
pub struct FastBuildHasher;

impl BuildHasher for FastBuildHasher {
    type Hasher = FastHasher;

    #[inline]
    fn build_hasher(&self) -> FastHasher {
        FastHasher { state: SEED }
    }
}

// ---------------------------------------------------------------------------------------------
// Limits
// ---------------------------------------------------------------------------------------------

/// The bounds of a cache. Build with [`Limits::new`], optionally
/// [`Limits::with_max_entry_size`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    max_entries: usize,
    max_size: u64,
    max_entry_size: u64,
}

/// Why a set of bounds was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitsError {
    /// `max_entries` was 0 or above [`MAX_ENTRIES_LIMIT`].
    MaxEntries(u64),
    /// `max_size` was 0.
    MaxSize(u64),
    /// `max_entry_size` was 0 or above `max_size`.
    MaxEntrySize {
        /// The refused value.
        max_entry_size: u64,
        /// The cache's `max_size`.
        max_size: u64,
    },
}

impl fmt::Display for LimitsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Self::MaxEntries(n) => write!(
                f,
                "max_entries must be between 1 and {MAX_ENTRIES_LIMIT}, got {n}"
            ),
            Self::MaxSize(n) => write!(f, "max_size must be at least 1, got {n}"),
            Self::MaxEntrySize {
                max_entry_size,
                max_size,
            } => write!(
                f,
                "max_entry_size must be between 1 and max_size ({max_size}), got {max_entry_size}"
            ),
        }
    }
}

impl std::error::Error for LimitsError {}

impl Limits {
    /// Bounds of `max_entries` entries and `max_size` total size; `max_entry_size = max_size`.
    ///
    /// # Errors
    /// [`LimitsError`] when either bound is 0 or `max_entries` exceeds [`MAX_ENTRIES_LIMIT`].
    pub fn new(max_entries: usize, max_size: u64) -> Result<Self, LimitsError> {
        if max_entries == 0 || max_entries > MAX_ENTRIES_LIMIT {
            return Err(LimitsError::MaxEntries(max_entries as u64));
        }
        if max_size == 0 {
            return Err(LimitsError::MaxSize(max_size));
        }
        Ok(Self {
            max_entries,
            max_size,
            max_entry_size: max_size,
        })
    }

    /// The same bounds with a smaller per-entry size limit (lru-cache's `maxEntrySize`).
    ///
    /// # Errors
    /// [`LimitsError::MaxEntrySize`] unless `1 <= max_entry_size <= max_size`.
    pub fn with_max_entry_size(self, max_entry_size: u64) -> Result<Self, LimitsError> {
        if max_entry_size == 0 || max_entry_size > self.max_size {
            return Err(LimitsError::MaxEntrySize {
                max_entry_size,
                max_size: self.max_size,
            });
        }
        Ok(Self {
            max_entry_size,
            ..self
        })
    }

    /// Most entries the cache holds.
    #[must_use]
    pub const fn max_entries(&self) -> usize {
        self.max_entries
    }

    /// Largest total size the cache holds.
    #[must_use]
    pub const fn max_size(&self) -> u64 {
        self.max_size
    }

    /// Largest size of one entry; larger entries are refused.
    #[must_use]
    pub const fn max_entry_size(&self) -> u64 {
        self.max_entry_size
    }
}

// ---------------------------------------------------------------------------------------------
// The cache
// ---------------------------------------------------------------------------------------------

/// What [`LruCache::set`] did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SetOutcome<V> {
    /// A new key was stored.
    Added,
    /// An existing key got the new value; this is the old one.
    Replaced(V),
    /// The entry was larger than `max_entry_size` and was not stored; if the key was present,
    /// its entry was removed and this is its value.
    Rejected(Option<V>),
}

impl<V> SetOutcome<V> {
    /// Whether the new value is now in the cache.
    #[must_use]
    pub const fn is_stored(&self) -> bool {
        !matches!(self, Self::Rejected(_))
    }
}

#[derive(Clone)]
struct Slot<K, V> {
    /// Towards the most recently used end.
    prev: u32,
    /// Towards the least recently used end.
    next: u32,
    hash: u64,
    size: u64,
    entry: Option<(K, V)>,
}

/// A strict LRU bounded by entry count and total size. See the [module docs](self).
pub struct LruCache<K, V, S = FastBuildHasher> {
    table: HashTable<u32>,
    slots: Vec<Slot<K, V>>,
    free: Vec<u32>,
    /// Most recently used.
    head: u32,
    /// Least recently used.
    tail: u32,
    len: usize,
    total_size: u64,
    evictions: u64,
    limits: Limits,
    hasher: S,
}

impl<K, V, S> fmt::Debug for LruCache<K, V, S>
where
    K: fmt::Debug,
{
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LruCache")
            .field("limits", &self.limits)
            .field("len", &self.len)
            .field("total_size", &self.total_size)
            .field("evictions", &self.evictions)
            .field("keys", &self.iter().map(|(k, _, _)| k).collect::<Vec<_>>())
            .finish()
    }
}

impl<K: Clone, V: Clone, S: Clone> Clone for LruCache<K, V, S> {
    fn clone(&self) -> Self {
        self.map_values(V::clone)
    }
}

impl<K, V> LruCache<K, V, FastBuildHasher> {
    /// An empty cache of at most `max_entries` entries and `max_size` total size.
    ///
    /// # Errors
    /// [`LimitsError`] when a bound is 0 or `max_entries` is above [`MAX_ENTRIES_LIMIT`].
    pub fn new(max_entries: usize, max_size: u64) -> Result<Self, LimitsError> {
        Ok(Self::with_limits(Limits::new(max_entries, max_size)?))
    }

    /// An empty cache with the given bounds.
    #[must_use]
    pub fn with_limits(limits: Limits) -> Self {
        Self::with_limits_and_hasher(limits, FastBuildHasher)
    }
}

impl<K, V, S> LruCache<K, V, S> {
    /// An empty cache with the given bounds and hasher.
    #[must_use]
    pub fn with_limits_and_hasher(limits: Limits, hasher: S) -> Self {
        let reserve = limits.max_entries.min(PREALLOCATE_LIMIT);
        Self {
            table: HashTable::with_capacity(reserve),
            slots: Vec::with_capacity(reserve),
            free: Vec::new(),
            head: NIL,
            tail: NIL,
            len: 0,
            total_size: 0,
            evictions: 0,
            limits,
            hasher,
        }
    }

    /// The cache's bounds.
    #[must_use]
    pub const fn limits(&self) -> Limits {
        self.limits
    }

    /// Number of entries.
    #[must_use]
    pub const fn len(&self) -> usize {
        self.len
    }

    /// Whether the cache is empty.
    #[must_use]
    pub const fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// Sum of the entries' sizes (each at least 1).
    #[must_use]
    pub const fn total_size(&self) -> u64 {
        self.total_size
    }

    /// How many entries were evicted to respect the bounds since the cache was made (or since
    /// [`LruCache::reset_evictions`]). Deletions, `clear` and oversize rejections do not count.
    #[must_use]
    pub const fn evictions(&self) -> u64 {
        self.evictions
    }

    /// Set the eviction counter back to 0.
    pub fn reset_evictions(&mut self) {
        self.evictions = 0;
    }

    /// Remove every entry. Keeps the bounds and the eviction counter.
    pub fn clear(&mut self) {
        self.table.clear();
        self.slots.clear();
        self.free.clear();
        self.head = NIL;
        self.tail = NIL;
        self.len = 0;
        self.total_size = 0;
    }

    /// Move every entry into a new cache with the same bounds, leaving this one empty (with its
    /// eviction count). Lets a caller drop the entries later, e.g. outside a lock.
    #[must_use]
    pub fn take(&mut self) -> Self
    where
        S: Clone,
    {
        let fresh = Self::with_limits_and_hasher(self.limits, self.hasher.clone());
        let taken = std::mem::replace(self, fresh);
        self.evictions = taken.evictions;
        taken
    }

    /// Entries from the most to the least recently used, as `(key, value, size)`.
    #[must_use]
    pub fn iter(&self) -> Iter<'_, K, V> {
        Iter {
            slots: &self.slots,
            cur: self.head,
            remaining: self.len,
        }
    }

    /// Keys from the most to the least recently used.
    pub fn keys(&self) -> impl ExactSizeIterator<Item = &K> + '_ {
        self.iter().map(|(k, _, _)| k)
    }

    /// The least recently used entry (the next to be evicted), as `(key, value, size)`.
    #[must_use]
    pub fn lru(&self) -> Option<(&K, &V, u64)> {
        self.entry_at(self.tail)
    }

    /// The most recently used entry, as `(key, value, size)`.
    #[must_use]
    pub fn mru(&self) -> Option<(&K, &V, u64)> {
        self.entry_at(self.head)
    }

    fn entry_at(&self, index: u32) -> Option<(&K, &V, u64)> {
        let slot = self.slots.get(index as usize)?;
        slot.entry.as_ref().map(|(k, v)| (k, v, slot.size))
    }

    /// A copy with the same bounds, order, sizes and eviction count, each value mapped by `f`
    /// (for values that need a context to be cloned, such as Python references).
    pub fn map_values<V2>(&self, mut f: impl FnMut(&V) -> V2) -> LruCache<K, V2, S>
    where
        K: Clone,
        S: Clone,
    {
        LruCache {
            table: self.table.clone(),
            slots: self
                .slots
                .iter()
                .map(|s| Slot {
                    prev: s.prev,
                    next: s.next,
                    hash: s.hash,
                    size: s.size,
                    entry: s.entry.as_ref().map(|(k, v)| (k.clone(), f(v))),
                })
                .collect(),
            free: self.free.clone(),
            head: self.head,
            tail: self.tail,
            len: self.len,
            total_size: self.total_size,
            evictions: self.evictions,
            limits: self.limits,
            hasher: self.hasher.clone(),
        }
    }

    // --- the list -----------------------------------------------------------------------------

    #[inline(always)]
    fn unlink(&mut self, i: u32) {
        let (prev, next) = {
            let s = &self.slots[i as usize];
            (s.prev, s.next)
        };
        if prev == NIL {
            self.head = next;
        } else {
            self.slots[prev as usize].next = next;
        }
        if next == NIL {
            self.tail = prev;
        } else {
            self.slots[next as usize].prev = prev;
        }
    }

    #[inline(always)]
    fn push_front(&mut self, i: u32) {
        let head = self.head;
        {
            let s = &mut self.slots[i as usize];
            s.prev = NIL;
            s.next = head;
        }
        if head == NIL {
            self.tail = i;
        } else {
            self.slots[head as usize].prev = i;
        }
        self.head = i;
    }

    #[inline(always)]
    fn promote(&mut self, i: u32) {
        if self.head != i {
            self.unlink(i);
            self.push_front(i);
        }
    }

    /// Take the entry out of slot `i` (table, list, accounting) and free the slot.
    fn remove_slot(&mut self, i: u32) -> (K, V) {
        let hash = self.slots[i as usize].hash;
        match self.table.find_entry(hash, |&j| j == i) {
            Ok(occupied) => {
                occupied.remove();
            }
            Err(_) => unreachable!("slot {i} is not in the table"),
        }
        self.unlink(i);
        let slot = &mut self.slots[i as usize];
        let Some(entry) = slot.entry.take() else {
            unreachable!("slot {i} is empty")
        };
        self.total_size -= slot.size;
        slot.size = 0;
        self.len -= 1;
        if self.len == 0 {
            // Like lru-cache, start over with a compact slab once empty.
            self.slots.clear();
            self.free.clear();
        } else {
            self.free.push(i);
        }
        entry
    }

    /// Evict the least recently used entry.
    #[inline]
    fn evict_lru(&mut self, on_evict: &mut impl FnMut(K, V)) {
        debug_assert!(self.tail != NIL, "evicting from an empty cache");
        let (k, v) = self.remove_slot(self.tail);
        self.evictions += 1;
        on_evict(k, v);
    }
}

/// The pre-hashed API: for keys whose hash is already known (say, Python's cached `str`
/// hash) or whose comparison needs a context. `hash` must be the same function of the key for
/// every call on one cache, and `eq` must say whether a stored key equals the one looked up.
impl<K, V, S> LruCache<K, V, S> {
    /// The slot of the entry whose key matches.
    #[inline(always)]
    fn find_hashed(&self, hash: u64, mut eq: impl FnMut(&K) -> bool) -> Option<u32> {
        let slots = &self.slots;
        self.table
            .find(hash, |&i| match &slots[i as usize].entry {
                Some((k, _)) => eq(k),
                None => false,
            })
            .copied()
    }

    /// [`LruCache::get`] by hash and key comparison.
    #[inline]
    pub fn get_hashed(&mut self, hash: u64, eq: impl FnMut(&K) -> bool) -> Option<&V> {
        let i = self.find_hashed(hash, eq)?;
        self.promote(i);
        self.slots[i as usize].entry.as_ref().map(|(_, v)| v)
    }

    /// [`LruCache::peek_entry`] by hash and key comparison.
    #[inline]
    pub fn peek_hashed(&self, hash: u64, eq: impl FnMut(&K) -> bool) -> Option<(&K, &V, u64)> {
        let i = self.find_hashed(hash, eq)?;
        self.entry_at(i)
    }

    /// [`LruCache::delete`] by hash and key comparison.
    pub fn delete_hashed(&mut self, hash: u64, eq: impl FnMut(&K) -> bool) -> Option<(K, V)> {
        let i = self.find_hashed(hash, eq)?;
        Some(self.remove_slot(i))
    }

    /// [`LruCache::set_with`] by hash and key comparison; `make_key` makes the key to store
    /// and is only called when the key is new.
    pub fn set_hashed(
        &mut self,
        hash: u64,
        eq: impl FnMut(&K) -> bool,
        make_key: impl FnOnce() -> K,
        value: V,
        size: u64,
        on_evict: impl FnMut(K, V),
    ) -> SetOutcome<V> {
        let found = self.find_hashed(hash, eq);
        self.set_found(hash, found, make_key, value, size, on_evict)
    }

    /// The body of `set`, once the key has been looked up (`found`).
    #[inline]
    fn set_found(
        &mut self,
        hash: u64,
        found: Option<u32>,
        make_key: impl FnOnce() -> K,
        value: V,
        size: u64,
        mut on_evict: impl FnMut(K, V),
    ) -> SetOutcome<V> {
        let size = entry_size(size);
        if size > self.limits.max_entry_size {
            return SetOutcome::Rejected(found.map(|i| self.remove_slot(i).1));
        }
        let max_size = self.limits.max_size;
        if let Some(i) = found {
            // Update: most recently used first, then swap the size and evict to fit.
            self.promote(i);
            let slot = &mut self.slots[i as usize];
            let old_size = std::mem::replace(&mut slot.size, size);
            let old = match slot.entry.as_mut() {
                Some((_, v)) => std::mem::replace(v, value),
                None => unreachable!("slot {i} is empty"),
            };
            self.total_size -= old_size;
            // `i` is at the head, and with `size <= max_size` the loop stops before reaching it.
            while self.total_size > max_size - size {
                debug_assert!(self.tail != i);
                self.evict_lru(&mut on_evict);
            }
            self.total_size += size;
            return SetOutcome::Replaced(old);
        }
        // Addition: make room for one more entry, then for its size.
        if self.len >= self.limits.max_entries {
            self.evict_lru(&mut on_evict);
        }
        while self.total_size > max_size - size {
            self.evict_lru(&mut on_evict);
        }
        let slot = Slot {
            prev: NIL,
            next: NIL,
            hash,
            size,
            entry: Some((make_key(), value)),
        };
        let i = match self.free.pop() {
            Some(i) => {
                self.slots[i as usize] = slot;
                i
            }
            None => {
                let i = self.slots.len() as u32;
                self.slots.push(slot);
                i
            }
        };
        let slots = &self.slots;
        self.table
            .insert_unique(hash, i, |&j| slots[j as usize].hash);
        self.push_front(i);
        self.len += 1;
        self.total_size += size;
        SetOutcome::Added
    }
}

impl<K, V, S> LruCache<K, V, S>
where
    K: Hash + Eq,
    S: BuildHasher,
{
    #[inline(always)]
    fn hash_of<Q: Hash + ?Sized>(&self, key: &Q) -> u64 {
        self.hasher.hash_one(key)
    }

    #[inline(always)]
    fn find<Q>(&self, hash: u64, key: &Q) -> Option<u32>
    where
        K: Borrow<Q>,
        Q: Eq + ?Sized,
    {
        self.find_hashed(hash, |k| k.borrow() == key)
    }

    /// The value under `key`, making it the most recently used.
    #[inline]
    pub fn get<Q>(&mut self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.find(self.hash_of(key), key)?;
        self.promote(i);
        self.slots[i as usize].entry.as_ref().map(|(_, v)| v)
    }

    /// Like [`LruCache::get`], mutably. Changing the value does not change its accounted size.
    #[inline]
    pub fn get_mut<Q>(&mut self, key: &Q) -> Option<&mut V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.find(self.hash_of(key), key)?;
        self.promote(i);
        self.slots[i as usize].entry.as_mut().map(|(_, v)| v)
    }

    /// The value under `key`, without touching the order.
    #[inline]
    pub fn peek<Q>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.peek_entry(key).map(|(_, v, _)| v)
    }

    /// The stored key, value and size under `key`, without touching the order.
    #[inline]
    pub fn peek_entry<Q>(&self, key: &Q) -> Option<(&K, &V, u64)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.find(self.hash_of(key), key)?;
        self.entry_at(i)
    }

    /// Whether `key` is present, without touching the order.
    #[inline]
    pub fn contains<Q>(&self, key: &Q) -> bool
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        self.find(self.hash_of(key), key).is_some()
    }

    /// Remove `key`; returns its key and value if it was present.
    pub fn delete<Q>(&mut self, key: &Q) -> Option<(K, V)>
    where
        K: Borrow<Q>,
        Q: Hash + Eq + ?Sized,
    {
        let i = self.find(self.hash_of(key), key)?;
        Some(self.remove_slot(i))
    }

    /// Store `value` under `key` with the given size (accounted as `max(1, size)`), evicting
    /// least recently used entries as lru-cache 11 does. Evicted entries are dropped.
    pub fn set(&mut self, key: K, value: V, size: u64) -> SetOutcome<V> {
        self.set_with(key, value, size, |_, _| {})
    }

    /// [`LruCache::set`], handing each evicted entry to `on_evict` (least recently used first)
    /// instead of dropping it — for values whose drop must wait until a lock is released.
    pub fn set_with(
        &mut self,
        key: K,
        value: V,
        size: u64,
        on_evict: impl FnMut(K, V),
    ) -> SetOutcome<V> {
        let hash = self.hash_of(&key);
        let found = self.find(hash, &key);
        self.set_found(hash, found, move || key, value, size, on_evict)
    }

    /// [`LruCache::set_with`] taking the key by reference: the owned key is only made (by
    /// `K::from`) when the key is new, so updates allocate nothing.
    pub fn set_borrowed<Q>(
        &mut self,
        key: &Q,
        value: V,
        size: u64,
        on_evict: impl FnMut(K, V),
    ) -> SetOutcome<V>
    where
        K: Borrow<Q> + for<'q> From<&'q Q>,
        Q: Hash + Eq + ?Sized,
    {
        let hash = self.hash_of(key);
        let found = self.find(hash, key);
        self.set_found(hash, found, || K::from(key), value, size, on_evict)
    }

    /// The entries as `(key, value, size)`, most recently used first.
    #[must_use]
    pub fn dump(&self) -> Vec<(K, V, u64)>
    where
        K: Clone,
        V: Clone,
    {
        self.iter()
            .map(|(k, v, size)| (k.clone(), v.clone(), size))
            .collect()
    }

    /// Replace the contents with `entries`, given most recently used first (the order of
    /// [`LruCache::dump`] and [`LruCache::iter`]): they are set from the last to the first, so
    /// the order is reproduced; entries that do not fit are evicted or rejected as by `set`.
    pub fn load(&mut self, entries: impl IntoIterator<Item = (K, V, u64)>) {
        let entries: Vec<_> = entries.into_iter().collect();
        self.clear();
        for (k, v, size) in entries.into_iter().rev() {
            let _ = self.set(k, v, size);
        }
    }

    /// Check the internal invariants (for tests): list and table agree, sizes add up, bounds hold.
    ///
    /// # Panics
    /// When an invariant does not hold.
    pub fn check_invariants(&self) {
        let mut count = 0usize;
        let mut total = 0u64;
        let mut prev = NIL;
        let mut cur = self.head;
        while cur != NIL {
            let slot = &self.slots[cur as usize];
            assert_eq!(slot.prev, prev, "broken back link at slot {cur}");
            let (k, _) = slot.entry.as_ref().expect("linked slot is empty");
            assert_eq!(slot.hash, self.hash_of(k), "stale hash at slot {cur}");
            assert_eq!(
                self.find(slot.hash, k),
                Some(cur),
                "slot {cur} not found by key"
            );
            assert!(slot.size >= 1 && slot.size <= self.limits.max_entry_size);
            count += 1;
            total += slot.size;
            prev = cur;
            cur = slot.next;
        }
        assert_eq!(prev, self.tail, "tail does not end the list");
        assert_eq!(count, self.len, "len");
        assert_eq!(self.table.len(), self.len, "table len");
        assert_eq!(total, self.total_size, "total size");
        assert!(self.len <= self.limits.max_entries, "too many entries");
        assert!(self.total_size <= self.limits.max_size, "too large");
        assert_eq!(
            self.slots.iter().filter(|s| s.entry.is_some()).count(),
            self.len,
            "orphan slots"
        );
    }
}

/// Iterator over a cache from the most to the least recently used entry.
pub struct Iter<'a, K, V> {
    slots: &'a [Slot<K, V>],
    cur: u32,
    remaining: usize,
}

impl<'a, K, V> Iterator for Iter<'a, K, V> {
    type Item = (&'a K, &'a V, u64);

    #[inline]
    fn next(&mut self) -> Option<Self::Item> {
        if self.cur == NIL {
            return None;
        }
        let slot = &self.slots[self.cur as usize];
        self.cur = slot.next;
        self.remaining -= 1;
        slot.entry.as_ref().map(|(k, v)| (k, v, slot.size))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl<K, V> ExactSizeIterator for Iter<'_, K, V> {}

impl<'a, K, V, S> IntoIterator for &'a LruCache<K, V, S> {
    type Item = (&'a K, &'a V, u64);
    type IntoIter = Iter<'a, K, V>;

    fn into_iter(self) -> Self::IntoIter {
        self.iter()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    type Cache = LruCache<String, u32>;

    fn cache(max: usize, max_size: u64) -> Cache {
        LruCache::new(max, max_size).unwrap()
    }

    fn keys(c: &Cache) -> Vec<&str> {
        c.keys().map(String::as_str).collect()
    }

    #[test]
    fn limits_are_validated() {
        assert_eq!(Cache::new(0, 10).unwrap_err(), LimitsError::MaxEntries(0));
        assert_eq!(Cache::new(1, 0).unwrap_err(), LimitsError::MaxSize(0));
        let l = Limits::new(3, 10).unwrap();
        assert_eq!(l.max_entry_size(), 10);
        assert!(l.with_max_entry_size(11).is_err());
        assert!(l.with_max_entry_size(0).is_err());
        assert_eq!(l.with_max_entry_size(4).unwrap().max_entry_size(), 4);
        assert_eq!(
            LimitsError::MaxSize(0).to_string(),
            "max_size must be at least 1, got 0"
        );
    }

    #[test]
    fn count_bound_evicts_lru() {
        let mut c = cache(3, 100);
        for (i, k) in ["a", "b", "c", "d"].iter().enumerate() {
            assert_eq!(c.set((*k).into(), i as u32, 1), SetOutcome::Added);
        }
        assert_eq!(keys(&c), ["d", "c", "b"]);
        assert_eq!(c.evictions(), 1);
        c.check_invariants();
    }

    #[test]
    fn get_promotes_peek_and_contains_do_not() {
        let mut c = cache(3, 100);
        for k in ["a", "b", "c"] {
            c.set(k.into(), 0, 1);
        }
        assert_eq!(c.peek("a"), Some(&0));
        assert!(c.contains("a"));
        assert_eq!(keys(&c), ["c", "b", "a"]);
        assert_eq!(c.get("a"), Some(&0));
        assert_eq!(keys(&c), ["a", "c", "b"]);
        c.set("d".into(), 0, 1);
        assert_eq!(keys(&c), ["d", "a", "c"]);
        assert_eq!(c.get("zz"), None);
        c.check_invariants();
    }

    #[test]
    fn size_bound_and_zero_sizes() {
        let mut c = cache(10, 10);
        c.set("a".into(), 0, 4);
        c.set("b".into(), 0, 4);
        c.set("z".into(), 0, 0); // counts as 1
        assert_eq!(c.total_size(), 9);
        c.set("c".into(), 0, 3); // needs 3: evicts a (LRU)
        assert_eq!(keys(&c), ["c", "z", "b"]);
        assert_eq!(c.total_size(), 8);
        c.set("d".into(), 0, 10); // needs everything
        assert_eq!(keys(&c), ["d"]);
        assert_eq!(c.total_size(), 10);
        assert_eq!(c.evictions(), 4);
        c.check_invariants();
    }

    #[test]
    fn oversize_is_rejected_and_removes_existing() {
        let mut c = cache(10, 10);
        c.set("a".into(), 1, 5);
        c.set("b".into(), 2, 5);
        assert_eq!(c.set("x".into(), 3, 11), SetOutcome::Rejected(None));
        assert_eq!(keys(&c), ["b", "a"]);
        assert_eq!(c.set("a".into(), 4, 11), SetOutcome::Rejected(Some(1)));
        assert_eq!(keys(&c), ["b"]);
        assert_eq!(c.total_size(), 5);
        assert_eq!(c.evictions(), 0);
        c.check_invariants();

        let mut c: Cache =
            LruCache::with_limits(Limits::new(10, 10).unwrap().with_max_entry_size(3).unwrap());
        assert!(!c.set("a".into(), 1, 4).is_stored());
        assert!(c.set("a".into(), 1, 3).is_stored());
    }

    #[test]
    fn update_replaces_size_promotes_and_evicts() {
        let mut c = cache(10, 10);
        c.set("a".into(), 1, 3);
        c.set("b".into(), 2, 3);
        c.set("c".into(), 3, 3);
        assert_eq!(c.set("a".into(), 9, 7), SetOutcome::Replaced(1));
        // a is promoted first and its old size dropped: 3+3 > 10-7 evicts b, then 3 fits.
        assert_eq!(keys(&c), ["a", "c"]);
        assert_eq!(c.total_size(), 10);
        assert_eq!(c.set("a".into(), 8, 10), SetOutcome::Replaced(9));
        assert_eq!(c.total_size(), 10);
        assert_eq!(c.peek("a"), Some(&8));
        c.check_invariants();
    }

    #[test]
    fn count_eviction_happens_before_size_eviction() {
        // Full by count; the new entry also needs size room.
        let mut c = cache(2, 10);
        c.set("a".into(), 0, 5);
        c.set("b".into(), 0, 5);
        c.set("c".into(), 0, 5);
        assert_eq!(keys(&c), ["c", "b"]);
        assert_eq!(c.evictions(), 1);
        c.set("d".into(), 0, 6);
        assert_eq!(keys(&c), ["d"]);
        assert_eq!(c.evictions(), 3);
        c.check_invariants();
    }

    #[test]
    fn delete_clear_and_reuse() {
        let mut c = cache(3, 100);
        for k in ["a", "b", "c"] {
            c.set(k.into(), 0, 2);
        }
        assert_eq!(c.delete("b"), Some(("b".to_string(), 0)));
        assert_eq!(c.delete("b"), None);
        assert_eq!(keys(&c), ["c", "a"]);
        c.set("d".into(), 0, 2);
        c.set("e".into(), 0, 2);
        assert_eq!(keys(&c), ["e", "d", "c"]);
        c.check_invariants();
        c.clear();
        assert!(c.is_empty());
        assert_eq!(c.total_size(), 0);
        assert_eq!(c.evictions(), 1);
        c.set("f".into(), 0, 2);
        assert_eq!(keys(&c), ["f"]);
        c.delete("f");
        assert!(c.is_empty());
        c.check_invariants();
    }

    #[test]
    fn dump_load_round_trip_keeps_order_and_sizes() {
        let mut c = cache(4, 100);
        for (i, k) in ["a", "b", "c", "d"].iter().enumerate() {
            c.set((*k).into(), i as u32, (i as u64) * 3);
        }
        c.get("b");
        let dump = c.dump();
        assert_eq!(
            dump,
            vec![
                ("b".to_string(), 1, 3),
                ("d".to_string(), 3, 9),
                ("c".to_string(), 2, 6),
                ("a".to_string(), 0, 1),
            ]
        );
        let mut d = cache(4, 100);
        d.set("zz".into(), 0, 1);
        d.load(dump.clone());
        assert_eq!(d.dump(), dump);
        assert_eq!(d.total_size(), c.total_size());
        // Loading into smaller bounds keeps the most recently used.
        let mut e = cache(2, 100);
        e.load(dump);
        assert_eq!(keys_of(&e), ["b", "d"]);
        d.check_invariants();
        e.check_invariants();
    }

    fn keys_of(c: &Cache) -> Vec<String> {
        c.keys().cloned().collect()
    }

    #[test]
    fn clone_and_map_values_preserve_everything() {
        let mut c = cache(3, 100);
        for k in ["a", "b", "c", "d"] {
            c.set(k.into(), 7, 2);
        }
        c.get("b");
        let d = c.clone();
        assert_eq!(d.dump(), c.dump());
        assert_eq!(d.evictions(), 1);
        let e = c.map_values(|v| u64::from(*v) * 2);
        assert_eq!(e.peek("b"), Some(&14));
        assert_eq!(e.keys().cloned().collect::<Vec<_>>(), keys_of(&c));
        d.check_invariants();
        e.check_invariants();
    }

    #[test]
    fn set_with_reports_evictions_in_lru_order() {
        let mut c = cache(5, 10);
        for k in ["a", "b", "c"] {
            c.set(k.into(), 0, 3);
        }
        let mut gone = Vec::new();
        c.set_with("d".into(), 0, 8, |k, _| gone.push(k));
        assert_eq!(gone, ["a", "b", "c"]);
        assert_eq!(c.lru().map(|(k, _, _)| k.as_str()), Some("d"));
        assert_eq!(c.mru().map(|(_, _, s)| s), Some(8));
    }

    #[test]
    fn hashed_api_matches_the_keyed_one() {
        fn eq(q: &str) -> impl Fn(&Key) -> bool + '_ {
            move |k| k.0.eq_ignore_ascii_case(q)
        }
        // Keys compared case-insensitively, hashed by the caller: the hashed API needs neither
        // `Hash` nor `Eq` on the stored key.
        struct Key(String);
        let hash = |k: &str| FastBuildHasher.hash_one(k.to_ascii_lowercase());
        let mut c: LruCache<Key, u32> = LruCache::new(2, 10).unwrap();
        let set = |c: &mut LruCache<Key, u32>, k: &str, v: u32, size: u64| {
            c.set_hashed(hash(k), eq(k), || Key(k.to_owned()), v, size, |_, _| {})
        };
        assert_eq!(set(&mut c, "A", 1, 4), SetOutcome::Added);
        assert_eq!(set(&mut c, "b", 2, 4), SetOutcome::Added);
        assert_eq!(set(&mut c, "a", 3, 4), SetOutcome::Replaced(1));
        assert_eq!(c.get_hashed(hash("B"), eq("B")), Some(&2));
        assert_eq!(
            c.peek_hashed(hash("a"), eq("a"))
                .map(|(k, v, s)| (k.0.as_str(), *v, s)),
            Some(("A", 3, 4))
        );
        assert_eq!(set(&mut c, "c", 4, 4), SetOutcome::Added); // evicts A (LRU)
        assert!(c.peek_hashed(hash("a"), eq("a")).is_none());
        assert_eq!(c.delete_hashed(hash("C"), eq("C")).map(|(_, v)| v), Some(4));
        assert_eq!(set(&mut c, "b", 5, 11), SetOutcome::Rejected(Some(2)));
        assert!(c.is_empty());
    }

    #[test]
    fn hasher_distinguishes_tails_and_prefixes() {
        let h = |s: &str| FastBuildHasher.hash_one(s);
        assert_ne!(h("a"), h("a\0"));
        assert_ne!(h("ab"), h("ba"));
        assert_ne!(h("abcdefgh"), h("abcdefgi"));
        assert_ne!(h("0123456789abcdefX"), h("0123456789abcdefY"));
        assert_ne!(
            h("0123456789abcdef0123456789abcdef"),
            h("0123456789abcdef0123456789abcdeg")
        );
        // Every length from 0 to 64 hashes differently, and every single-byte change shows.
        let base = "x".repeat(64);
        let all: std::collections::HashSet<u64> = (0..=64).map(|n| h(&base[..n])).collect();
        assert_eq!(all.len(), 65);
        for n in 1..=40 {
            let s: Vec<u8> = (0..n).map(|i| b'a' + (i % 26) as u8).collect();
            for i in 0..n {
                let mut t = s.clone();
                t[i] ^= 1;
                assert_ne!(
                    h(std::str::from_utf8(&s).unwrap()),
                    h(std::str::from_utf8(&t).unwrap()),
                    "len {n}, byte {i}"
                );
            }
        }
        assert_ne!(h(""), h("\0"));
        assert_ne!(
            h("/home/user/project/src/a.rs"),
            h("/home/user/project/src/b.rs")
        );
        // Top seven bits vary across similar keys.
        let tops: std::collections::HashSet<u64> = (0..200)
            .map(|i| h(&format!("/repo/src/file{i}.rs")) >> 57)
            .collect();
        assert!(tops.len() > 60, "{}", tops.len());
    }

    #[test]
    fn stress_against_invariants() {
        // A deterministic random walk; the proptest model in tests/lru_model.rs checks order.
        let mut c: LruCache<u32, u32> = LruCache::new(7, 50).unwrap();
        let mut x: u64 = 0x1234_5678;
        for _ in 0..20_000 {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let key = (x % 23) as u32;
            match (x >> 20) % 6 {
                0..=2 => {
                    let _ = c.set(key, key, (x >> 32) % 60);
                }
                3 => {
                    c.get(&key);
                }
                4 => {
                    c.delete(&key);
                }
                _ => {
                    if x.is_multiple_of(97) {
                        c.clear();
                    }
                }
            }
            c.check_invariants();
        }
    }
}
