//! The LRU with a per-entry size limit below `max_size` (lru-cache's `maxEntrySize`) against a
//! trace recorded from npm lru-cache 11: `tests/data/lru_max_entry_size.json`, the bounds, the
//! ops and lru-cache's state after each (keys most recently used first, total size, the op's
//! result, evictions so far). tests/core/test_lru_parity.py keeps the file equal to what
//! lru-cache does with the trace (and rewrites it); the daemon's `FileStateCache`, whose entries
//! are bounded by `max_size` alone, is replayed against lru-cache live there.

use serde_json::{json, Value};

use _core::lru::{Limits, LruCache};

const GOLDEN: &str = include_str!("data/lru_max_entry_size.json");

fn bound(golden: &Value, name: &str) -> u64 {
    golden[name]
        .as_u64()
        .unwrap_or_else(|| panic!("{name} is not a bound"))
}

#[test]
fn max_entry_size_matches_lru_cache() {
    let golden: Value = serde_json::from_str(GOLDEN).expect("the golden trace is JSON");
    let limits = Limits::new(bound(&golden, "max") as usize, bound(&golden, "maxSize"))
        .and_then(|l| l.with_max_entry_size(bound(&golden, "maxEntrySize")))
        .expect("valid bounds");
    assert!(limits.max_entry_size() < limits.max_size());
    let ops = golden["ops"].as_array().expect("ops");
    let states = golden["states"].as_array().expect("states");
    assert_eq!(ops.len(), states.len());
    assert!(ops.len() >= 500);

    let mut cache: LruCache<String, u64> = LruCache::with_limits(limits);
    let key = |op: &Value| op[1].as_str().expect("a key").to_owned();
    for (step, (op, want)) in ops.iter().zip(states).enumerate() {
        let result = match op[0].as_str().expect("an op name") {
            "set" => {
                let (id, size) = (op[2].as_u64().expect("id"), op[3].as_u64().expect("size"));
                cache.set(key(op), id, size);
                Value::Null
            }
            "get" => json!(cache.get(&key(op))),
            "peek" => json!(cache.peek(&key(op))),
            "has" => json!(cache.contains(&key(op))),
            "delete" => json!(cache.delete(&key(op)).is_some()),
            "clear" => {
                cache.clear();
                Value::Null
            }
            other => panic!("unknown op {other}"),
        };
        let keys: Vec<&str> = cache.keys().map(String::as_str).collect();
        let have = json!([keys, cache.total_size(), result, cache.evictions()]);
        assert_eq!(&have, want, "diverged from lru-cache at step {step} ({op})");
        cache.check_invariants();
    }
}
