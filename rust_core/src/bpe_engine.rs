//! Exact BPE token counts of pre-tokenised pieces, on tables of our own.
//!
//! The algorithm is the backtracking encoder of GitHub's `bpe` crate (rust-gems), which yields
//! exactly the tokens of tiktoken's rank-ordered merging: take the longest token that is a
//! prefix of the rest of the piece; keep it if BPE could end a token where the previous one
//! ends and this one starts (`Engine::valid_pair`), else try the next shorter prefix token,
//! and when none fits, back up one token and remember that its end cannot be reached. Only the
//! count is kept.
//!
//! The tables are built once per encoding from the vocabulary that `bpe-openai` embeds (token
//! ids are tiktoken's ranks) and laid out for the hot path:
//!
//! * two hash tables of the tokens of at most 16 bytes, the bytes kept in the slot, so that a
//!   piece that is one token (most words, spaces and punctuation) costs one probe and no
//!   pointer chase: tokens under 8 bytes in 8-byte slots (their bytes and length in one word:
//!   the table most probes go to is small), the longer ones with both words and the length;
//! * a byte trie whose token nodes are numbered by token id (so a walk reads the token off the
//!   node), with a dense table for the first two bytes and one `u64` per edge in a hash table;
//!   below those, a whole three-byte UTF-8 character (CJK, and every other script past U+07FF)
//!   is one probe of a second table instead of three byte edges, with the deepest token on
//!   the way (CJK counting +20-35%, B2); a node under which a token ends inside such a
//!   character is marked, and only there does a character without a whole step take the byte
//!   edges (elsewhere the walk stops: no token lies that way);
//! * the merge tree of every token (`split`) and the reverse map from a pair to the token it
//!   merges into (`pairs`), for the pair check;
//! * a memo of the pair check: adjacent token pairs recur, and the check walks merge trees.
//!   It is shared by all threads (relaxed atomics: an entry is one word, and losing a race only
//!   costs a recomputation).

use std::sync::atomic::{AtomicU64, Ordering};

const NONE: u32 = u32::MAX;
/// Token ids fit in 18 bits (o200k_base has 199,998 tokens), trie nodes in 20.
const ID_BITS: u32 = 18;
const NODE_BITS: u32 = 20;
/// Pieces up to this long are looked up whole before the trie walk.
const SINGLE_MAX: usize = 16;
/// log2 of the pair-check memo's slots (8 bytes each).
const MEMO_BITS: u32 = 17;

/// The home slot of `x` in a table of `2^(64 - shift)` slots: a multiply-xorshift mix, then
/// the top bits of a second multiply.
#[inline(always)]
fn slot_of(x: u64, shift: u32) -> usize {
    let h = (x ^ (x >> 31)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    ((h ^ (h >> 29)).wrapping_mul(0xBF58_476D_1CE4_E5B9) >> shift) as usize
}

/// The bytes `b[start..start + len]` (`len` <= 16) as two little-endian words: the first 8
/// bytes and the last 8 (overlapping for lengths 9 to 15), zero where there are none.
#[inline(always)]
fn words(b: &[u8], start: usize, len: usize) -> (u64, u64) {
    debug_assert!(len <= SINGLE_MAX);
    let end = start + len;
    if len >= 8 {
        let lo = u64::from_le_bytes(b[start..start + 8].try_into().expect("8 bytes"));
        let hi = if len > 8 {
            u64::from_le_bytes(b[end - 8..end].try_into().expect("8 bytes"))
        } else {
            0
        };
        return (lo, hi);
    }
    let lo = match b.get(start..start + 8) {
        Some(w) => u64::from_le_bytes(w.try_into().expect("8 bytes")) & ((1u64 << (8 * len)) - 1),
        None => {
            let mut buf = [0u8; 8];
            buf[..len].copy_from_slice(&b[start..end]);
            u64::from_le_bytes(buf)
        }
    };
    (lo, 0)
}

/// The hash key of a string of `len` bytes (<= 16) given as [`words`].
#[inline(always)]
fn key_of(lo: u64, hi: u64, len: usize) -> u64 {
    lo ^ hi.rotate_left(27).wrapping_mul(0xA076_1D64_78BD_642F) ^ ((len as u64) << 58)
}

/// A slot of a table of short strings: the string as [`words`] and `(value + 1) << 8 | len`
/// (0 = empty). The token table and the piece-count cache both use it.
#[derive(Clone, Copy, Default)]
struct ShortSlot {
    lo: u64,
    hi: u64,
    tag: u32,
}

impl ShortSlot {
    #[inline(always)]
    fn holds(&self, lo: u64, hi: u64, len: usize) -> bool {
        self.lo == lo && self.hi == hi && self.tag & 0xFF == len as u32
    }

    #[inline(always)]
    fn value(&self) -> u32 {
        (self.tag >> 8) - 1
    }
}

/// log2 of the piece-count cache's slots, in sets of two (24 bytes each: 1.5 MB per thread and
/// encoding, allocated when that thread first counts with it). B2 chose it: on code, 2^12
/// direct-mapped slots counted at ~0.7x toktok-rs, 2^14 at ~0.8x, 2^15 in two ways at ~0.95x
/// and, once longer pieces had a cache of their own, at ~1.0x against ~1.1x for 2^16: B2's code
/// has ~9,500 distinct multi-token pieces of at most 16 bytes, and at 2^15 the ~12% of them
/// whose set holds three or more evict each other on every pass.
const CACHE_BITS: u32 = 16;

/// Pieces of `SINGLE_MAX + 1` to this many bytes have a cache of their own ([`LongCache`]);
/// longer ones (rare: a separator line, a paragraph without a space) are always encoded.
const LONG_MAX: usize = 1024;
/// log2 of the long-piece cache's slots, in sets of two (24 bytes each: 96 KB).
const LONG_CACHE_BITS: u32 = 12;
/// The ring of bytes the long-piece cache's entries point into (256 KB).
const ARENA_BYTES: usize = 1 << 18;

/// A cached count of a piece longer than 16 bytes: its hash, where its bytes are in the ring
/// (a position counted from the ring's start, ever growing), its length (0 = empty) and count.
#[derive(Clone, Copy, Default)]
struct LongSlot {
    hash: u64,
    pos: u64,
    len: u32,
    count: u32,
}

/// The cache of the counts of pieces of 17 to [`LONG_MAX`] bytes: few distinct pieces are that
/// long — indentation runs and long identifiers in code, runs of CJK text between punctuation
/// (a fifth of B2's CJK bytes) — but each one's backtracking costs ~10-50x a lookup. An entry
/// keeps the piece's bytes in a ring (compared on a hit, so a hit is exact); an entry whose
/// bytes the ring has since overwritten is a miss.
#[derive(Default)]
struct LongCache {
    slots: Vec<LongSlot>,
    arena: Vec<u8>,
    head: u64,
}

/// A 64-bit hash of `t` (more than 8 bytes): a multiply-rotate over its words, the last word
/// the last 8 bytes (overlapping), the length mixed in first.
#[inline(always)]
fn long_hash(t: &[u8]) -> u64 {
    debug_assert!(t.len() > 8);
    let step = |h: u64, w: &[u8]| {
        let w = u64::from_le_bytes(w.try_into().expect("8 bytes"));
        (h ^ w).wrapping_mul(0xA076_1D64_78BD_642F).rotate_left(29)
    };
    let mut h = (t.len() as u64).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    let mut words = t.chunks_exact(8);
    for w in &mut words {
        h = step(h, w);
    }
    if !words.remainder().is_empty() {
        h = step(h, &t[t.len() - 8..]);
    }
    h
}

impl LongCache {
    fn new() -> Self {
        Self {
            slots: vec![LongSlot::default(); 1 << LONG_CACHE_BITS],
            arena: vec![0; ARENA_BYTES],
            head: 0,
        }
    }

    /// Whether `s` holds the piece `t` of hash `h` (and its bytes are still in the ring).
    #[inline(always)]
    fn holds(&self, s: &LongSlot, t: &[u8], h: u64) -> bool {
        if s.hash != h || s.len as usize != t.len() || self.head > s.pos + ARENA_BYTES as u64 {
            return false;
        }
        let at = (s.pos % ARENA_BYTES as u64) as usize;
        &self.arena[at..at + t.len()] == t
    }

    /// The cached count of `t`, most recent way first (a hit in the second way swaps them).
    #[inline(always)]
    fn get(&mut self, t: &[u8], h: u64) -> Option<usize> {
        let c = slot_of(h, 64 - LONG_CACHE_BITS) & !1;
        let (first, second) = (self.slots[c], self.slots[c + 1]);
        if self.holds(&first, t, h) {
            return Some(first.count as usize);
        }
        if self.holds(&second, t, h) {
            self.slots.swap(c, c + 1);
            return Some(second.count as usize);
        }
        None
    }

    /// Remember that `t` (hash `h`) is `count` tokens: its bytes at the ring's head (from the
    /// ring's start when they would not fit before its end), the entry in the set's first way.
    fn put(&mut self, t: &[u8], h: u64, count: usize) {
        let len = t.len();
        let mut at = (self.head % ARENA_BYTES as u64) as usize;
        if at + len > ARENA_BYTES {
            self.head += (ARENA_BYTES - at) as u64;
            at = 0;
        }
        self.arena[at..at + len].copy_from_slice(t);
        let c = slot_of(h, 64 - LONG_CACHE_BITS) & !1;
        self.slots[c + 1] = self.slots[c];
        self.slots[c] = LongSlot {
            hash: h,
            pos: self.head,
            len: len as u32,
            count: count as u32,
        };
        self.head += len as u64;
    }
}

/// Per-thread working memory of the counter: the backtracking encoder's buffers, and two-way
/// set-associative caches of the counts of pieces that are more than one token, one for
/// pieces of at most 16 bytes and one for pieces of 17 to 1024 (words and identifiers recur; a
/// miss costs one probe, and an entry is exact, so the caches change only the speed).
#[derive(Default)]
pub struct Scratch {
    tokens: Vec<u32>,
    bits: Vec<u64>,
    cache: Vec<ShortSlot>,
    long: LongCache,
}

impl Scratch {
    /// Buffers and the caches (a default `Scratch` has none: for one-off uses).
    pub fn with_cache() -> Self {
        Self {
            cache: vec![ShortSlot::default(); 1 << CACHE_BITS],
            long: LongCache::new(),
            ..Self::default()
        }
    }
}

/// The tables of one encoding.
pub struct Engine {
    n: u32,
    bytes: Vec<u8>,
    starts: Vec<u32>,
    lens: Vec<u8>,
    /// Every token of at most 7 bytes, as `word | len << 56` (0 = empty): 8 bytes a slot, so
    /// that the table most pieces probe stays small enough for the CPU's caches.
    tiny: Vec<u64>,
    tiny_shift: u32,
    /// Every token of 8 to [`SINGLE_MAX`] bytes.
    tok: Vec<ShortSlot>,
    tok_shift: u32,
    /// Every token, for building the merge tables.
    by_bytes: std::collections::HashMap<Vec<u8>, u32>,
    /// Token of each single byte (every byte is a token).
    root: [u32; 256],
    /// Trie node after the first two bytes, `NONE` if no token starts with them.
    root2: Vec<u32>,
    /// Trie edges below depth 2: `(key + 1) << NODE_BITS | child`, key = `node << 8 | byte`.
    edges: Vec<u64>,
    edge_shift: u32,
    /// Whole three-byte UTF-8 characters below depth 2 (CJK and most other scripts past
    /// U+07FF), one probe for three byte edges: `[key + 1, child | best << 32]`, key =
    /// `node << 24 | the character's bytes`, `best` the deepest token among the three nodes
    /// stepped through (`NONE`: none of them is one).
    chars: Vec<[u64; 2]>,
    char_shift: u32,
    /// Per trie node: set when a token lies one or two bytes below it on the way into a
    /// three-byte character (a token ending inside a character). Only such a node needs the
    /// byte walk into a character that has no whole-character step.
    partial: Vec<u64>,
    next_prefix: Vec<u32>,
    split: Vec<[u32; 2]>,
    /// `(key + 1) << NODE_BITS | merged`, key = `left << ID_BITS | right`.
    pairs: Vec<u64>,
    pair_shift: u32,
    /// `(key + 1) << 1 | valid`, key as in `pairs`.
    memo: Box<[AtomicU64]>,
}

fn table_bits(entries: usize) -> u32 {
    // At most ~45% full: short probe runs for linear probing.
    (entries * 9 / 4)
        .next_power_of_two()
        .trailing_zeros()
        .max(4)
}

impl Engine {
    /// Builds the tables from `tokens`, indexed by rank.
    pub fn build<'a>(tokens: impl ExactSizeIterator<Item = &'a [u8]>) -> Self {
        let n = tokens.len();
        assert!(n < 1 << ID_BITS, "{n} tokens do not fit the packed tables");
        let mut bytes = Vec::new();
        let mut starts = Vec::with_capacity(n + 1);
        let mut lens = Vec::with_capacity(n);
        starts.push(0u32);
        for t in tokens {
            assert!(!t.is_empty() && t.len() < 256, "token of {} bytes", t.len());
            bytes.extend_from_slice(t);
            starts.push(u32::try_from(bytes.len()).expect("vocabulary under 4 GB"));
            lens.push(t.len() as u8);
        }
        let tiny_count = lens.iter().filter(|&&l| (l as usize) < 8).count();
        let tiny_bits = table_bits(tiny_count);
        let tok_bits = table_bits(n - tiny_count);
        let pair_bits = table_bits(n);
        let mut e = Self {
            n: n as u32,
            bytes,
            starts,
            lens,
            tiny: vec![0; 1 << tiny_bits],
            tiny_shift: 64 - tiny_bits,
            tok: vec![ShortSlot::default(); 1 << tok_bits],
            tok_shift: 64 - tok_bits,
            by_bytes: std::collections::HashMap::with_capacity(n),
            root: [NONE; 256],
            root2: vec![NONE; 1 << 16],
            edges: Vec::new(),
            edge_shift: 64,
            chars: Vec::new(),
            char_shift: 64,
            partial: Vec::new(),
            next_prefix: vec![NONE; n],
            split: vec![[0, 0]; n],
            pairs: vec![0; 1 << pair_bits],
            pair_shift: 64 - pair_bits,
            memo: (0..1usize << MEMO_BITS)
                .map(|_| AtomicU64::new(0))
                .collect(),
        };
        for id in 0..n as u32 {
            e.insert_token(id);
        }
        e.build_trie();
        for id in 0..n as u32 {
            let t = e.token(id);
            if t.len() > 1 {
                e.next_prefix[id as usize] = e.longest(&t[..t.len() - 1]);
            }
        }
        e.build_merges();
        e.by_bytes = std::collections::HashMap::new();
        e
    }

    #[inline(always)]
    fn token(&self, id: u32) -> &[u8] {
        &self.bytes[self.starts[id as usize] as usize..self.starts[id as usize + 1] as usize]
    }

    #[inline(always)]
    fn len(&self, id: u32) -> usize {
        self.lens[id as usize] as usize
    }

    fn insert_token(&mut self, id: u32) {
        let t = self.token(id).to_vec();
        self.by_bytes.insert(t.clone(), id);
        if t.len() > SINGLE_MAX {
            return;
        }
        let (lo, hi) = words(&t, 0, t.len());
        if t.len() < 8 {
            let k = lo | (t.len() as u64) << 56;
            let mask = self.tiny.len() - 1;
            let mut i = slot_of(k, self.tiny_shift);
            while self.tiny[i] != 0 {
                i = (i + 1) & mask;
            }
            self.tiny[i] = k;
            return;
        }
        let mask = self.tok.len() - 1;
        let mut i = slot_of(key_of(lo, hi, t.len()), self.tok_shift);
        while self.tok[i].tag != 0 {
            i = (i + 1) & mask;
        }
        self.tok[i] = ShortSlot {
            lo,
            hi,
            tag: ((id + 1) << 8) | t.len() as u32,
        };
    }

    #[inline(always)]
    fn child(&self, node: u32, byte: u8) -> Option<u32> {
        let key = ((node as u64) << 8) | byte as u64;
        let mask = self.edges.len() - 1;
        let mut i = slot_of(key, self.edge_shift);
        loop {
            let s = self.edges[i];
            if s == 0 {
                return None;
            }
            if s >> NODE_BITS == key + 1 {
                return Some((s & ((1 << NODE_BITS) - 1)) as u32);
            }
            i = (i + 1) & mask;
        }
    }

    fn add_edge(&mut self, key: u64, child: u32) {
        let mask = self.edges.len() - 1;
        let mut i = slot_of(key, self.edge_shift);
        while self.edges[i] != 0 {
            i = (i + 1) & mask;
        }
        self.edges[i] = ((key + 1) << NODE_BITS) | child as u64;
    }

    fn build_trie(&mut self) {
        // Shorter tokens first, so that every token's proper prefixes that are tokens already
        // have their nodes (numbered by token id); other prefixes get ids from `n` up. The
        // edges go to a map first, to size the final table by their number.
        let mut order: Vec<u32> = (0..self.n).collect();
        order.sort_by_key(|&id| self.len(id));
        let mut edges: std::collections::HashMap<u64, u32> = std::collections::HashMap::new();
        let mut next_node = self.n;
        for id in order {
            let t = self.token(id);
            if t.len() == 1 {
                self.root[t[0] as usize] = id;
                continue;
            }
            let mut node = self.root[t[0] as usize];
            assert_ne!(node, NONE, "every byte must be a token");
            for (k, &c) in t.iter().enumerate().skip(1) {
                let last = k + 1 == t.len();
                let key = ((node as u64) << 8) | c as u64;
                node = match edges.get(&key) {
                    Some(&child) => {
                        assert!(!last, "duplicate token {id}");
                        child
                    }
                    None => {
                        let child = if last {
                            id
                        } else {
                            next_node += 1;
                            next_node - 1
                        };
                        assert!(child < 1 << NODE_BITS, "trie too large");
                        edges.insert(key, child);
                        child
                    }
                };
            }
        }
        assert!(
            self.root.iter().all(|&r| r != NONE),
            "every byte must be a token"
        );
        let bits = table_bits(edges.len());
        self.edges = vec![0; 1 << bits];
        self.edge_shift = 64 - bits;
        for (&key, &child) in &edges {
            self.add_edge(key, child);
        }
        for b0 in 0..256usize {
            for b1 in 0..256usize {
                if let Some(c) = self.child(self.root[b0], b1 as u8) {
                    self.root2[(b0 << 8) | b1] = c;
                }
            }
        }
        self.build_chars(&edges, next_node);
    }

    /// The whole-character steps and the `partial` marks, from the byte edges.
    fn build_chars(&mut self, edges: &std::collections::HashMap<u64, u32>, nodes: u32) {
        let mut by_key: Vec<(u64, u32)> = edges.iter().map(|(&k, &c)| (k, c)).collect();
        by_key.sort_unstable();
        // The children of `node` reached by a byte in `bytes`.
        let kids = |node: u32, bytes: std::ops::RangeInclusive<u8>| {
            let lo = ((node as u64) << 8) | *bytes.start() as u64;
            let hi = ((node as u64) << 8) | *bytes.end() as u64;
            let from = by_key.partition_point(|&(k, _)| k < lo);
            let to = by_key.partition_point(|&(k, _)| k <= hi);
            by_key[from..to].iter().map(|&(k, c)| ((k & 0xFF) as u8, c))
        };
        let mut steps: Vec<(u64, u64)> = Vec::new();
        self.partial = vec![0; nodes as usize / 64 + 1];
        let token = |id: u32, n: u32| if id < n { id } else { NONE };
        // Every edge by a three-byte character's lead byte, then its two continuation bytes.
        for &(key, n1) in &by_key {
            let (node, lead) = ((key >> 8) as u32, (key & 0xFF) as u8);
            if !(0xE0..=0xEF).contains(&lead) {
                continue;
            }
            for (b1, n2) in kids(n1, 0x80..=0xBF) {
                if n2 < self.n {
                    self.partial[node as usize / 64] |= 1 << (node % 64);
                }
                for (b2, n3) in kids(n2, 0x80..=0xBF) {
                    let best = [n3, n2, n1]
                        .into_iter()
                        .map(|id| token(id, self.n))
                        .find(|&id| id != NONE)
                        .unwrap_or(NONE);
                    let ch = (lead as u64) << 16 | (b1 as u64) << 8 | b2 as u64;
                    steps.push(((node as u64) << 24 | ch, n3 as u64 | (best as u64) << 32));
                }
            }
            if n1 < self.n {
                self.partial[node as usize / 64] |= 1 << (node % 64);
            }
        }
        let bits = table_bits(steps.len());
        self.chars = vec![[0, 0]; 1 << bits];
        self.char_shift = 64 - bits;
        let mask = self.chars.len() - 1;
        for (key, value) in steps {
            let mut i = slot_of(key, self.char_shift);
            while self.chars[i][0] != 0 {
                i = (i + 1) & mask;
            }
            self.chars[i] = [key + 1, value];
        }
    }

    /// The step from `node` over the three-byte character `ch` (its bytes as one number):
    /// the node after it and the deepest token on the way (`NONE`: none), if the trie goes on.
    #[inline(always)]
    fn char_step(&self, node: u32, ch: u64) -> Option<(u32, u32)> {
        if self.chars.is_empty() {
            return None;
        }
        let key = (node as u64) << 24 | ch;
        let mask = self.chars.len() - 1;
        let mut i = slot_of(key, self.char_shift);
        loop {
            let [k, v] = self.chars[i];
            if k == 0 {
                return None;
            }
            if k == key + 1 {
                return Some((v as u32, (v >> 32) as u32));
            }
            i = (i + 1) & mask;
        }
    }

    #[inline(always)]
    fn has_partial(&self, node: u32) -> bool {
        self.partial
            .get(node as usize / 64)
            .is_some_and(|w| w >> (node % 64) & 1 == 1)
    }

    /// The longest token that is a prefix of `t` (non-empty).
    #[inline(always)]
    fn longest(&self, t: &[u8]) -> u32 {
        let first = self.root[t[0] as usize];
        if t.len() < 2 {
            return first;
        }
        let mut node = self.root2[((t[0] as usize) << 8) | t[1] as usize];
        if node == NONE {
            return first;
        }
        let mut best = if node < self.n { node } else { first };
        let mut i = 2;
        while i < t.len() {
            let c = t[i];
            if (0xE0..=0xEF).contains(&c)
                && i + 3 <= t.len()
                && t[i + 1] & 0xC0 == 0x80
                && t[i + 2] & 0xC0 == 0x80
            {
                // A three-byte character: one step over it when the trie has one; else only a
                // node with a token inside such a character walks into it byte by byte.
                let ch = (c as u64) << 16 | (t[i + 1] as u64) << 8 | t[i + 2] as u64;
                if let Some((next, tok)) = self.char_step(node, ch) {
                    node = next;
                    if tok != NONE {
                        best = tok;
                    }
                    i += 3;
                    continue;
                }
                if !self.has_partial(node) {
                    break;
                }
            }
            match self.child(node, c) {
                Some(ch) => {
                    node = ch;
                    if ch < self.n {
                        best = ch;
                    }
                }
                None => break,
            }
            i += 1;
        }
        best
    }

    #[inline(always)]
    fn pair(&self, left: u32, right: u32) -> Option<u32> {
        let key = ((left as u64) << ID_BITS) | right as u64;
        let mask = self.pairs.len() - 1;
        let mut i = slot_of(key, self.pair_shift);
        loop {
            let s = self.pairs[i];
            if s == 0 {
                return None;
            }
            if s >> NODE_BITS == key + 1 {
                return Some((s & ((1 << NODE_BITS) - 1)) as u32);
            }
            i = (i + 1) & mask;
        }
    }

    fn add_pair(&mut self, left: u32, right: u32, merged: u32) {
        let key = ((left as u64) << ID_BITS) | right as u64;
        let mask = self.pairs.len() - 1;
        let mut i = slot_of(key, self.pair_shift);
        while self.pairs[i] != 0 {
            i = (i + 1) & mask;
        }
        self.pairs[i] = ((key + 1) << NODE_BITS) | merged as u64;
    }

    /// Each token's last merge: the first split into a prefix token and a rest token, both of
    /// lower rank, that BPE itself would produce (longest prefix first, as BPE's rank order
    /// implies). Tokens with no such split are leaves, `split[id] == [id, id]`.
    fn build_merges(&mut self) {
        for id in 0..self.n {
            self.split[id as usize] = [id, id];
            let t = self.token(id).to_vec();
            let mut left = self.next_prefix[id as usize];
            while left != NONE {
                let l = self.len(left);
                if let Some(&right) = self.by_bytes.get(&t[l..]) {
                    if left < id && right < id && self.valid_pair_slow(left, right) {
                        self.split[id as usize] = [left, right];
                        self.add_pair(left, right, id);
                        break;
                    }
                }
                left = self.next_prefix[left as usize];
            }
        }
    }

    /// Whether BPE, encoding the bytes of `left` then `right`, keeps the boundary between them:
    /// it does unless some merge across the boundary, of the pieces the two tokens are built
    /// from, ranks before a merge that formed one of them. The two merge trees are unwound at
    /// the boundary, latest merge first; `limit` is the rank a cross-boundary merge must not
    /// beat (ties go to the left, as BPE merges the leftmost of equal-rank pairs first).
    fn valid_pair_slow(&self, mut left: u32, mut right: u32) -> bool {
        let mut limit = u32::MAX;
        loop {
            if let Some(m) = self.pair(left, right) {
                if m < limit {
                    return false;
                }
            }
            if left > right {
                // `left` was merged last: undo it, keeping its right part at the boundary.
                limit = left;
                left = self.split[left as usize][1];
                if left == limit {
                    // A leaf: unwind the right side instead.
                    limit = right + 1;
                    right = self.split[right as usize][0];
                    if right + 1 == limit {
                        return true;
                    }
                }
            } else {
                limit = right + 1;
                right = self.split[right as usize][0];
                if right + 1 == limit {
                    limit = left;
                    left = self.split[left as usize][1];
                    if left == limit {
                        return true;
                    }
                }
            }
        }
    }

    #[inline(always)]
    fn valid_pair(&self, left: u32, right: u32) -> bool {
        let key = ((left as u64) << ID_BITS) | right as u64;
        let cell = &self.memo[slot_of(key, 64 - MEMO_BITS)];
        let s = cell.load(Ordering::Relaxed);
        if s >> 1 == key + 1 {
            return s & 1 == 1;
        }
        let v = self.valid_pair_slow(left, right);
        cell.store(((key + 1) << 1) | u64::from(v), Ordering::Relaxed);
        v
    }

    /// Tokens of the piece `b[start..end]` (non-empty). A short piece is first looked up
    /// whole: pieces under 8 bytes (most of them) in the compact table of short tokens, the
    /// others in the table of longer ones. The branch on the length costs less than the cache
    /// misses of one big table did (B2: ~6% on code).
    #[inline(always)]
    pub fn piece(&self, b: &[u8], start: usize, end: usize, scratch: &mut Scratch) -> usize {
        let len = end - start;
        if len > SINGLE_MAX {
            if len <= LONG_MAX && !scratch.long.slots.is_empty() {
                return self.long_piece(b, start, end, scratch);
            }
            return self.backtrack(&b[start..end], scratch);
        }
        let (lo, hi) = words(b, start, len);
        if len < 8 {
            let k = lo | (len as u64) << 56;
            let mask = self.tiny.len() - 1;
            let mut i = slot_of(k, self.tiny_shift);
            loop {
                let s = self.tiny[i];
                if s == k {
                    return 1;
                }
                if s == 0 {
                    break;
                }
                i = (i + 1) & mask;
            }
        } else {
            let mask = self.tok.len() - 1;
            let mut i = slot_of(key_of(lo, hi, len), self.tok_shift);
            loop {
                let slot = &self.tok[i];
                if slot.tag == 0 {
                    break;
                }
                if slot.holds(lo, hi, len) {
                    return 1;
                }
                i = (i + 1) & mask;
            }
        }
        let key = key_of(lo, hi, len);
        if scratch.cache.is_empty() {
            return self.backtrack(&b[start..end], scratch);
        }
        // Two ways per set: the most recent entry first, the one it displaced second.
        let c = slot_of(key, 64 - CACHE_BITS) & !1;
        let first = scratch.cache[c];
        if first.holds(lo, hi, len) {
            return first.value() as usize;
        }
        let second = scratch.cache[c + 1];
        if second.holds(lo, hi, len) {
            scratch.cache[c + 1] = first;
            scratch.cache[c] = second;
            return second.value() as usize;
        }
        let n = self.backtrack(&b[start..end], scratch);
        scratch.cache[c + 1] = first;
        scratch.cache[c] = ShortSlot {
            lo,
            hi,
            tag: ((n as u32 + 1) << 8) | len as u32,
        };
        n
    }

    /// Tokens of a piece of 17 to [`LONG_MAX`] bytes, through the long-piece cache.
    #[inline(never)]
    fn long_piece(&self, b: &[u8], start: usize, end: usize, scratch: &mut Scratch) -> usize {
        let t = &b[start..end];
        let h = long_hash(t);
        if let Some(n) = scratch.long.get(t, h) {
            return n;
        }
        let n = self.backtrack(t, scratch);
        scratch.long.put(t, h, n);
        n
    }

    /// The backtracking encoder over `t` (non-empty), counting tokens.
    fn backtrack(&self, t: &[u8], scratch: &mut Scratch) -> usize {
        let n = t.len();
        let mut short = [u64::MAX; 2];
        let bits: &mut [u64] = if n < 128 {
            &mut short
        } else {
            scratch.bits.clear();
            scratch.bits.resize(n / 64 + 1, u64::MAX);
            &mut scratch.bits
        };
        // bits[p] set: position p may still start the rest of the encoding.
        let tokens = &mut scratch.tokens;
        tokens.clear();
        let mut pos = 0usize;
        let mut next = Some(self.longest(t));
        while let Some(mut tok) = next {
            let last = tokens.last().copied();
            loop {
                let end = pos + self.len(tok);
                if bits[end / 64] >> (end % 64) & 1 == 1
                    && last.is_none_or(|l| self.valid_pair(l, tok))
                {
                    tokens.push(tok);
                    pos = end;
                    next = (end < n).then(|| self.longest(&t[end..]));
                    break;
                }
                let shorter = self.next_prefix[tok as usize];
                if shorter != NONE {
                    tok = shorter;
                    continue;
                }
                // Nothing fits after `last`: its end is a dead end; retry from its start.
                bits[pos / 64] &= !(1u64 << (pos % 64));
                tokens.pop();
                pos -= last.map_or(0, |l| self.len(l));
                next = last;
                break;
            }
        }
        tokens.len()
    }
}
