//! B1, natively: the shared cache trace replayed through the core's LRU, plus single-op
//! microbenchmarks (get-hit, get-miss, set-new with eviction, set-update).
//!
//! `cargo bench --bench cache_trace` runs criterion on a trace generated here (same recipe as
//! `bench/b1_cache.py`: 400 paths, Zipf(1.0), 80% get with set on miss, 20% set, log-normal
//! sizes). With `POSTCOMPACT_B1_TRACE=<file>` (written by `bench/b1_cache.py`) it instead
//! replays that exact trace `POSTCOMPACT_B1_REPEATS` times (default 5) and prints one JSON line
//! — min/median ns per op, hits, evictions and the microbenchmarks — so the Python benchmark
//! can put the native numbers in the same table as every other implementation.
//!
//! Trace file (little-endian): `b"PCB1TRC\0"`, u32 version (1), u32 paths, u32 ops,
//! u32 max_entries, u64 max_size, then per path a u64 size, then per path a u32 length and
//! that many UTF-8 bytes, then per op a u16: the path index, with bit 15 set for a `set`.

use std::hint::black_box;
use std::time::Instant;

use std::hash::BuildHasher;

use _core::lru::{FastBuildHasher, LruCache};
use criterion::{BenchmarkId, Criterion, Throughput};

const SET_BIT: u16 = 0x8000;

struct Trace {
    max_entries: usize,
    max_size: u64,
    sizes: Vec<u64>,
    paths: Vec<String>,
    ops: Vec<u16>,
}

fn read_trace(path: &str) -> Result<Trace, String> {
    let data = std::fs::read(path).map_err(|e| format!("{path}: {e}"))?;
    let mut at = 0usize;
    let mut take = |n: usize| -> Result<&[u8], String> {
        let slice = data
            .get(at..at + n)
            .ok_or_else(|| format!("{path}: truncated at byte {at}"))?;
        at += n;
        Ok(slice)
    };
    if take(8)? != b"PCB1TRC\0" {
        return Err(format!("{path}: not a B1 trace"));
    }
    let u32_at = |b: &[u8]| u32::from_le_bytes(b.try_into().expect("4 bytes"));
    let u64_at = |b: &[u8]| u64::from_le_bytes(b.try_into().expect("8 bytes"));
    let version = u32_at(take(4)?);
    if version != 1 {
        return Err(format!("{path}: unsupported trace version {version}"));
    }
    let n_paths = u32_at(take(4)?) as usize;
    let n_ops = u32_at(take(4)?) as usize;
    let max_entries = u32_at(take(4)?) as usize;
    let max_size = u64_at(take(8)?);
    let mut sizes = Vec::with_capacity(n_paths);
    for _ in 0..n_paths {
        sizes.push(u64_at(take(8)?));
    }
    let mut paths = Vec::with_capacity(n_paths);
    for _ in 0..n_paths {
        let len = u32_at(take(4)?) as usize;
        let bytes = take(len)?.to_vec();
        paths.push(String::from_utf8(bytes).map_err(|e| format!("{path}: {e}"))?);
    }
    let raw = take(n_ops * 2)?;
    let ops = raw
        .chunks_exact(2)
        .map(|c| u16::from_le_bytes([c[0], c[1]]))
        .collect();
    Ok(Trace {
        max_entries,
        max_size,
        sizes,
        paths,
        ops,
    })
}

/// A trace made here (for plain `cargo bench`), following B1's recipe.
fn synthetic_trace(n_ops: usize, median: f64, seed: u64) -> Trace {
    const PATHS: usize = 400;
    let mut state = seed;
    let mut next = move || {
        // splitmix64
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    };
    let mut uniform = move || (next() >> 11) as f64 / (1u64 << 53) as f64;
    let sizes: Vec<u64> = (0..PATHS)
        .map(|_| {
            let (u1, u2) = (uniform().max(f64::MIN_POSITIVE), uniform());
            let normal = (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos();
            ((median * (1.2 * normal).exp()) as u64).min(2 * 1024 * 1024)
        })
        .collect();
    let mut cumulative = Vec::with_capacity(PATHS);
    let mut total = 0.0;
    for rank in 1..=PATHS {
        total += 1.0 / rank as f64;
        cumulative.push(total);
    }
    let ops = (0..n_ops)
        .map(|_| {
            let x = uniform() * total;
            let index = cumulative.partition_point(|&c| c < x).min(PATHS - 1) as u16;
            if uniform() < 0.2 {
                index | SET_BIT
            } else {
                index
            }
        })
        .collect();
    Trace {
        max_entries: 100,
        max_size: 25 * 1024 * 1024,
        sizes,
        paths: (0..PATHS)
            .map(|i| {
                format!(
                    "/home/dev/work/project/src/pkg{:02}/module_{i:03}.py",
                    i % 17
                )
            })
            .collect(),
        ops,
    }
}

/// Replay, hashing every key on every operation: returns (hits, evictions). Keys are stored by
/// reference (`&str`), as a JavaScript `Map` or the Python binding holds its string keys.
fn replay(trace: &Trace) -> (u64, u64) {
    let mut cache: LruCache<&str, u32> =
        LruCache::new(trace.max_entries, trace.max_size).expect("valid bounds");
    let mut hits = 0u64;
    for &op in &trace.ops {
        let index = (op & !SET_BIT) as usize;
        let key = trace.paths[index].as_str();
        if op & SET_BIT == 0 && cache.get(key).is_some() {
            hits += 1;
            continue;
        }
        let _ = cache.set(key, index as u32, trace.sizes[index]);
    }
    (hits, cache.evictions())
}

/// Replay with each key's hash computed once, as V8 and CPython cache a string's hash in the
/// string (what npm lru-cache's `Map` and the Python binding get for free).
fn replay_cached(trace: &Trace, hashes: &[u64]) -> (u64, u64) {
    let mut cache: LruCache<&str, u32> =
        LruCache::new(trace.max_entries, trace.max_size).expect("valid bounds");
    let mut hits = 0u64;
    for &op in &trace.ops {
        let index = (op & !SET_BIT) as usize;
        let key = trace.paths[index].as_str();
        let hash = hashes[index];
        if op & SET_BIT == 0 && cache.get_hashed(hash, |k| *k == key).is_some() {
            hits += 1;
            continue;
        }
        let _ = cache.set_hashed(
            hash,
            |k| *k == key,
            || key,
            index as u32,
            trace.sizes[index],
            |_, _| {},
        );
    }
    (hits, cache.evictions())
}

#[inline]
#[allow(clippy::boxed_local)] // the signature `set_borrowed` hands evicted entries to
fn drop_evicted(_key: Box<str>, _value: u32) {}

fn keys(prefix: &str, n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("/home/dev/work/project/{prefix}/file_{i:04}.rs"))
        .collect()
}

fn full_cache(keys: &[String]) -> LruCache<Box<str>, u32> {
    let mut cache = LruCache::new(keys.len(), 25 * 1024 * 1024).expect("valid bounds");
    for (i, k) in keys.iter().enumerate() {
        let _ = cache.set(k.as_str().into(), i as u32, 6 * 1024);
    }
    cache
}

/// Single-op costs in ns, by a plain timed loop (JSON mode).
fn micro() -> [(&'static str, f64); 4] {
    const N: usize = 2_000_000;
    let present = keys("src", 100);
    let absent = keys("other", 100);
    let time = |f: &mut dyn FnMut(usize)| {
        let mut best = f64::INFINITY;
        for _ in 0..5 {
            let t = Instant::now();
            for i in 0..N {
                f(i);
            }
            best = best.min(t.elapsed().as_nanos() as f64 / N as f64);
        }
        best
    };
    let mut cache = full_cache(&present);
    let get_hit = time(&mut |i| {
        black_box(cache.get(present[i % 100].as_str()));
    });
    let get_miss = time(&mut |i| {
        black_box(cache.get(absent[i % 100].as_str()));
    });
    let both: Vec<&str> = present
        .iter()
        .zip(&absent)
        .flat_map(|(a, b)| [a.as_str(), b.as_str()])
        .collect();
    let set_new = time(&mut |i| {
        // Alternating between 200 keys with room for 100: every set adds and evicts.
        let _ = cache.set_borrowed(both[i % 200], i as u32, 6 * 1024, drop_evicted);
    });
    let mut cache = full_cache(&present);
    let set_update = time(&mut |i| {
        let _ = cache.set_borrowed(present[i % 100].as_str(), i as u32, 6 * 1024, drop_evicted);
    });
    [
        ("get_hit", get_hit),
        ("get_miss", get_miss),
        ("set_new_evict", set_new),
        ("set_update", set_update),
    ]
}

fn json_mode(path: &str) {
    let trace = match read_trace(path) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("cache_trace: {e}");
            std::process::exit(2);
        }
    };
    let repeats: usize = std::env::var("POSTCOMPACT_B1_REPEATS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(5)
        .max(1);
    let hashes: Vec<u64> = trace
        .paths
        .iter()
        .map(|p| FastBuildHasher.hash_one(p.as_str()))
        .collect();
    let (hits, evictions) = replay(&trace); // warm-up, and the counts
    assert_eq!(replay_cached(&trace, &hashes), (hits, evictions));
    let mut samples = Vec::with_capacity(repeats);
    let mut cached = Vec::with_capacity(repeats);
    for _ in 0..repeats {
        let t = Instant::now();
        let (h, _) = black_box(replay(black_box(&trace)));
        samples.push(t.elapsed().as_nanos() as f64 / trace.ops.len() as f64);
        assert_eq!(h, hits, "replays disagree");
        let t = Instant::now();
        let (h, _) = black_box(replay_cached(black_box(&trace), black_box(&hashes)));
        cached.push(t.elapsed().as_nanos() as f64 / trace.ops.len() as f64);
        assert_eq!(h, hits, "replays disagree");
    }
    cached.sort_by(f64::total_cmp);
    samples.sort_by(f64::total_cmp);
    let skip_micro = std::env::var("POSTCOMPACT_B1_MICRO").is_ok_and(|v| v == "0");
    let micro = if skip_micro {
        Vec::new()
    } else {
        micro().to_vec()
    };
    let micro = micro
        .iter()
        .map(|(name, ns)| format!("\"{name}\": {ns:.2}"))
        .collect::<Vec<_>>()
        .join(", ");
    println!(
        "{{\"ops\": {}, \"hits\": {hits}, \"evictions\": {evictions}, \"ns_per_op_min\": {:.2}, \
         \"ns_per_op_median\": {:.2}, \"cached_hash_ns_per_op_min\": {:.2}, \
         \"cached_hash_ns_per_op_median\": {:.2}, \"micro\": {{{micro}}}}}",
        trace.ops.len(),
        samples[0],
        samples[samples.len() / 2],
        cached[0],
        cached[cached.len() / 2],
    );
}

fn criterion_benches(c: &mut Criterion) {
    let mut group = c.benchmark_group("b1_trace");
    for (name, median) in [("small", 6.0 * 1024.0), ("large", 150.0 * 1024.0)] {
        let trace = synthetic_trace(200_000, median, 0xb1);
        group.throughput(Throughput::Elements(trace.ops.len() as u64));
        group.bench_with_input(BenchmarkId::new("replay", name), &trace, |b, t| {
            b.iter(|| replay(black_box(t)));
        });
        let hashes: Vec<u64> = trace
            .paths
            .iter()
            .map(|p| FastBuildHasher.hash_one(p.as_str()))
            .collect();
        group.bench_with_input(
            BenchmarkId::new("replay_cached_hash", name),
            &trace,
            |b, t| {
                b.iter(|| replay_cached(black_box(t), &hashes));
            },
        );
    }
    group.finish();

    let present = keys("src", 100);
    let absent = keys("other", 100);
    let mut group = c.benchmark_group("lru_op");
    let mut cache = full_cache(&present);
    let mut i = 0usize;
    group.bench_function("get_hit", |b| {
        b.iter(|| {
            i = (i + 1) % 100;
            black_box(cache.get(present[i].as_str()).copied())
        });
    });
    group.bench_function("get_miss", |b| {
        b.iter(|| {
            i = (i + 1) % 100;
            black_box(cache.get(absent[i].as_str()).copied())
        });
    });
    group.bench_function("set_new_evict", |b| {
        b.iter(|| {
            i = (i + 1) % 200;
            let key = if i.is_multiple_of(2) {
                &present[i / 2]
            } else {
                &absent[i / 2]
            };
            cache
                .set_borrowed(key.as_str(), 1, 6 * 1024, drop_evicted)
                .is_stored()
        });
    });
    let mut cache = full_cache(&present);
    group.bench_function("set_update", |b| {
        b.iter(|| {
            i = (i + 1) % 100;
            cache
                .set_borrowed(present[i].as_str(), 2, 6 * 1024, drop_evicted)
                .is_stored()
        });
    });
    group.finish();
}

fn main() {
    if let Ok(path) = std::env::var("POSTCOMPACT_B1_TRACE") {
        json_mode(&path);
        return;
    }
    let mut c = Criterion::default().configure_from_args();
    criterion_benches(&mut c);
    c.final_summary();
}
