//! The LRU against a plain reference model (a Vec, most recently used first), as a proptest
//! state machine. Bounds are tiny so that count evictions, size evictions and oversize
//! rejections happen in most runs; after every step the order, sizes, total, length, eviction
//! count and the operation's result must agree.

use proptest::prelude::*;
use proptest_state_machine::{prop_state_machine, ReferenceStateMachine, StateMachineTest};

use _core::lru::{Limits, LruCache, SetOutcome};

type Key = u8;
type Value = u32;

#[derive(Clone, Debug)]
enum Op {
    Set(Key, Value, u64),
    Get(Key),
    Peek(Key),
    Has(Key),
    Delete(Key),
    Clear,
    /// `load(dump())`: must change nothing.
    Reload,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Outcome {
    Set(SetOutcome<Value>),
    Value(Option<Value>),
    Bool(bool),
    Deleted(Option<Value>),
    Unit,
}

/// The reference: entries most recently used first.
#[derive(Clone, Debug)]
struct Model {
    max_entries: usize,
    max_size: u64,
    max_entry_size: u64,
    entries: Vec<(Key, Value, u64)>,
    evictions: u64,
    last: Outcome,
}

impl Model {
    fn total(&self) -> u64 {
        self.entries.iter().map(|e| e.2).sum()
    }

    fn position(&self, key: Key) -> Option<usize> {
        self.entries.iter().position(|e| e.0 == key)
    }

    fn evict_last(&mut self) {
        self.entries.pop().expect("evicting from an empty model");
        self.evictions += 1;
    }

    fn set(&mut self, key: Key, value: Value, size: u64) -> SetOutcome<Value> {
        let size = size.max(1);
        if size > self.max_entry_size {
            let removed = self.position(key).map(|i| self.entries.remove(i).1);
            return SetOutcome::Rejected(removed);
        }
        if let Some(i) = self.position(key) {
            let (_, old, _) = self.entries.remove(i);
            // Promoted with its old size taken out; evict the others until the new size fits.
            while self.total() + size > self.max_size {
                self.evict_last();
            }
            self.entries.insert(0, (key, value, size));
            return SetOutcome::Replaced(old);
        }
        if self.entries.len() == self.max_entries {
            self.evict_last();
        }
        while self.total() + size > self.max_size {
            self.evict_last();
        }
        self.entries.insert(0, (key, value, size));
        SetOutcome::Added
    }
}

struct Reference;

impl ReferenceStateMachine for Reference {
    type State = Model;
    type Transition = Op;

    fn init_state() -> BoxedStrategy<Model> {
        (1usize..6, 1u64..40, prop::option::of(1u64..40))
            .prop_map(|(max_entries, max_size, entry)| Model {
                max_entries,
                max_size,
                max_entry_size: entry.map_or(max_size, |e| e.min(max_size)),
                entries: Vec::new(),
                evictions: 0,
                last: Outcome::Unit,
            })
            .boxed()
    }

    fn transitions(_state: &Model) -> BoxedStrategy<Op> {
        let key = 0u8..8;
        prop_oneof![
            6 => (key.clone(), any::<u32>(), prop_oneof![3 => 0u64..15, 1 => 0u64..45])
                .prop_map(|(k, v, s)| Op::Set(k, v, s)),
            4 => key.clone().prop_map(Op::Get),
            1 => key.clone().prop_map(Op::Peek),
            1 => key.clone().prop_map(Op::Has),
            2 => key.prop_map(Op::Delete),
            1 => Just(Op::Reload),
            1 => prop_oneof![9 => Just(Op::Reload), 1 => Just(Op::Clear)],
        ]
        .boxed()
    }

    fn apply(mut state: Model, op: &Op) -> Model {
        state.last = match *op {
            Op::Set(k, v, s) => Outcome::Set(state.set(k, v, s)),
            Op::Get(k) => Outcome::Value(state.position(k).map(|i| {
                let e = state.entries.remove(i);
                state.entries.insert(0, e);
                e.1
            })),
            Op::Peek(k) => Outcome::Value(state.position(k).map(|i| state.entries[i].1)),
            Op::Has(k) => Outcome::Bool(state.position(k).is_some()),
            Op::Delete(k) => Outcome::Deleted(state.position(k).map(|i| state.entries.remove(i).1)),
            Op::Clear => {
                state.entries.clear();
                Outcome::Unit
            }
            Op::Reload => Outcome::Unit,
        };
        state
    }
}

struct LruTest;

impl StateMachineTest for LruTest {
    type SystemUnderTest = LruCache<Key, Value>;
    type Reference = Reference;

    fn init_test(model: &Model) -> Self::SystemUnderTest {
        let limits = Limits::new(model.max_entries, model.max_size)
            .and_then(|l| l.with_max_entry_size(model.max_entry_size))
            .unwrap();
        LruCache::with_limits(limits)
    }

    fn apply(mut sut: Self::SystemUnderTest, model: &Model, op: Op) -> Self::SystemUnderTest {
        let got = match op {
            Op::Set(k, v, s) => Outcome::Set(sut.set(k, v, s)),
            Op::Get(k) => Outcome::Value(sut.get(&k).copied()),
            Op::Peek(k) => Outcome::Value(sut.peek(&k).copied()),
            Op::Has(k) => Outcome::Bool(sut.contains(&k)),
            Op::Delete(k) => Outcome::Deleted(sut.delete(&k).map(|(_, v)| v)),
            Op::Clear => {
                sut.clear();
                Outcome::Unit
            }
            Op::Reload => {
                let evictions = sut.evictions();
                let dump = sut.dump();
                sut.load(dump);
                assert_eq!(sut.evictions(), evictions, "reloading evicted something");
                Outcome::Unit
            }
        };
        assert_eq!(got, model.last, "result of {op:?}");
        sut
    }

    fn check_invariants(sut: &Self::SystemUnderTest, model: &Model) {
        sut.check_invariants();
        assert_eq!(
            sut.dump(),
            model.entries,
            "entries (most recently used first)"
        );
        assert_eq!(sut.len(), model.entries.len());
        assert_eq!(sut.total_size(), model.total());
        assert_eq!(sut.evictions(), model.evictions);
        assert!(sut.len() <= model.max_entries);
        assert!(sut.total_size() <= model.max_size);
    }
}

prop_state_machine! {
    #![proptest_config(ProptestConfig {
        cases: 512,
        max_shrink_iters: 4096,
        failure_persistence: None,
        .. ProptestConfig::default()
    })]

    #[test]
    fn lru_matches_the_reference_model(sequential 1..120 => LruTest);
}
