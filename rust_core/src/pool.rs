//! A small pool of worker threads that live as long as the process, for the batch calls.
//!
//! `count_batch` used to spawn its helpers per call (`std::thread::scope`): each started with
//! an empty per-thread piece-count cache ([`crate::bpe_engine::Scratch`]) and paid the spawn.
//! These workers keep their caches warm from one batch to the next, as the calling thread's
//! does. [`broadcast`] runs one job on the calling thread and on every worker at once and
//! returns when all of them are done, so the job may borrow from the caller's stack.
//!
//! One batch uses the pool at a time: a second caller meanwhile (another thread, the GIL
//! released) runs its job on its own thread alone rather than wait. A process forked after the
//! pool started has none of its threads; there the job runs on the calling thread alone too.

use std::panic::{catch_unwind, resume_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Condvar, Mutex, MutexGuard, OnceLock};

/// A job as the workers see it: the borrow is only used while [`broadcast`] waits for them.
type Job = &'static (dyn Fn() + Sync);

#[derive(Default)]
struct State {
    job: Option<Job>,
    generation: u64,
    running: usize,
    panicked: bool,
}

struct Pool {
    /// Workers started (set while the pool is made, before anyone can broadcast).
    workers: AtomicUsize,
    pid: u32,
    turn: Mutex<()>,
    state: Mutex<State>,
    start: Condvar,
    done: Condvar,
}

fn lock(m: &Mutex<State>) -> MutexGuard<'_, State> {
    // A job's panic is caught before it could poison the lock; recover the state regardless.
    m.lock().unwrap_or_else(|e| e.into_inner())
}

fn pool() -> &'static Pool {
    static POOL: OnceLock<&'static Pool> = OnceLock::new();
    POOL.get_or_init(|| {
        let threads = std::thread::available_parallelism().map_or(1, |n| n.get().min(8));
        let pool: &'static Pool = Box::leak(Box::new(Pool {
            workers: AtomicUsize::new(0),
            pid: std::process::id(),
            turn: Mutex::new(()),
            state: Mutex::new(State::default()),
            start: Condvar::new(),
            done: Condvar::new(),
        }));
        for i in 1..threads {
            let spawned = std::thread::Builder::new()
                .name(format!("postcompact-core-{i}"))
                .spawn(move || work(pool));
            if spawned.is_ok() {
                pool.workers.fetch_add(1, Ordering::Relaxed);
            }
        }
        pool
    })
}

fn work(pool: &'static Pool) {
    let mut seen = 0;
    loop {
        let job = {
            let mut st = lock(&pool.state);
            while st.generation == seen {
                st = pool.start.wait(st).unwrap_or_else(|e| e.into_inner());
            }
            seen = st.generation;
            st.job.expect("a job for each generation")
        };
        let ok = catch_unwind(AssertUnwindSafe(job)).is_ok();
        let mut st = lock(&pool.state);
        st.panicked |= !ok;
        st.running -= 1;
        if st.running == 0 {
            pool.done.notify_all();
        }
    }
}

/// The number of threads a [`broadcast`] job runs on (the caller and the workers).
pub fn threads() -> usize {
    pool().workers.load(Ordering::Relaxed) + 1
}

/// Runs `job` on the calling thread and on every worker, and returns once all have returned;
/// a panic on any of them is raised here, after all have finished.
pub fn broadcast(job: &(dyn Fn() + Sync)) {
    let pool = pool();
    let workers = pool.workers.load(Ordering::Relaxed);
    let turn = match pool.turn.try_lock() {
        Ok(turn) if workers > 0 && pool.pid == std::process::id() => turn,
        _ => return job(),
    };
    // SAFETY: the workers use `job` only between the broadcast below and `running` reaching
    // zero, and this function does not return (nor unwind) before that.
    let erased: Job = unsafe { std::mem::transmute::<&(dyn Fn() + Sync), Job>(job) };
    {
        let mut st = lock(&pool.state);
        st.job = Some(erased);
        st.generation += 1;
        st.running = workers;
        st.panicked = false;
    }
    pool.start.notify_all();
    let here = catch_unwind(AssertUnwindSafe(job));
    let panicked = {
        let mut st = lock(&pool.state);
        while st.running > 0 {
            st = pool.done.wait(st).unwrap_or_else(|e| e.into_inner());
        }
        st.job = None;
        st.panicked
    };
    drop(turn);
    if let Err(payload) = here {
        resume_unwind(payload);
    }
    assert!(!panicked, "a batch worker panicked");
}

#[cfg(test)]
mod tests {
    use super::*;

    // The tests share the one pool: each holds this so that no other test's broadcast makes
    // its own run inline.
    static SERIAL: Mutex<()> = Mutex::new(());

    fn serial() -> MutexGuard<'static, ()> {
        SERIAL.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// How many threads ran one broadcast job.
    fn runs() -> usize {
        let ran = AtomicUsize::new(0);
        broadcast(&|| {
            ran.fetch_add(1, Ordering::SeqCst);
        });
        ran.load(Ordering::SeqCst)
    }

    #[test]
    fn every_thread_runs_the_job_once() {
        let _serial = serial();
        for _ in 0..50 {
            assert_eq!(runs(), threads());
        }
    }

    #[test]
    fn a_panic_reaches_the_caller_and_the_pool_still_works() {
        let _serial = serial();
        let caller = std::thread::current().id();
        let r = catch_unwind(|| {
            broadcast(&|| {
                if std::thread::current().id() != caller {
                    panic!("worker");
                }
            })
        });
        assert_eq!(r.is_err(), threads() > 1);
        assert_eq!(runs(), threads());
    }

    #[test]
    fn concurrent_callers_each_get_their_job_done() {
        let _serial = serial();
        let handles: Vec<_> = (0..4)
            .map(|_| {
                std::thread::spawn(|| {
                    for _ in 0..100 {
                        let n = runs();
                        assert!(n == 1 || n == threads(), "{n}");
                    }
                })
            })
            .collect();
        for h in handles {
            h.join().unwrap();
        }
    }
}
