//! Exclusive access to a value through one atomic flag: [`Exclusive::try_lock`] fails instead
//! of waiting.
//!
//! The Python caches keep their state behind one (`FileStateCache` in the core's bindings, the
//! benchmarks' `LruCache` in `bench/lru_py`): one atomic swap to enter, one store to leave, held
//! for the few nanoseconds of an operation, during which no Python code runs. A call that finds
//! the value in use (a re-entrant call, or another thread on a free-threaded build) is refused
//! by the caller rather than deadlocking.

use std::cell::UnsafeCell;
use std::marker::PhantomData;
use std::ops::{Deref, DerefMut};
use std::sync::atomic::{AtomicBool, Ordering};

/// A value reached only through an [`ExclusiveGuard`], at most one at a time.
pub struct Exclusive<T> {
    busy: AtomicBool,
    value: UnsafeCell<T>,
}

// SAFETY: the value is only reached through a guard, and `busy` admits one guard at a time.
unsafe impl<T: Send> Sync for Exclusive<T> {}

impl<T> Exclusive<T> {
    /// `value`, free.
    pub const fn new(value: T) -> Self {
        Self {
            busy: AtomicBool::new(false),
            value: UnsafeCell::new(value),
        }
    }

    /// The value, or None while another guard holds it.
    #[inline]
    pub fn try_lock(&self) -> Option<ExclusiveGuard<'_, T>> {
        if self.busy.swap(true, Ordering::Acquire) {
            None
        } else {
            Some(ExclusiveGuard {
                cell: self,
                _value: PhantomData,
            })
        }
    }
}

/// The one access to an [`Exclusive`]'s value; dropping it frees the value.
pub struct ExclusiveGuard<'a, T> {
    cell: &'a Exclusive<T>,
    /// Shared across threads only when `T` may be (as `&mut T`): the guard hands out `&T`.
    _value: PhantomData<&'a mut T>,
}

impl<T> Deref for ExclusiveGuard<'_, T> {
    type Target = T;

    #[inline]
    fn deref(&self) -> &T {
        // SAFETY: this guard is the only one (see `try_lock`).
        unsafe { &*self.cell.value.get() }
    }
}

impl<T> DerefMut for ExclusiveGuard<'_, T> {
    #[inline]
    fn deref_mut(&mut self) -> &mut T {
        // SAFETY: this guard is the only one (see `try_lock`).
        unsafe { &mut *self.cell.value.get() }
    }
}

impl<T> Drop for ExclusiveGuard<'_, T> {
    #[inline]
    fn drop(&mut self) {
        self.cell.busy.store(false, Ordering::Release);
    }
}

#[cfg(test)]
mod tests {
    use super::Exclusive;

    #[test]
    fn one_guard_at_a_time() {
        let cell = Exclusive::new(vec![1]);
        let mut guard = cell.try_lock().expect("free");
        assert!(cell.try_lock().is_none());
        guard.push(2);
        drop(guard);
        let guard = cell.try_lock().expect("free again");
        assert_eq!(*guard, [1, 2]);
    }
}
