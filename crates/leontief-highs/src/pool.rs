//! A small pool of HiGHS instances, so that the many small LPs of a run
//! do not each pay for creating one.

use highs_sys as ffi;
use std::ffi::c_void;

/// Instances of LPs up to this many rows and columns go back to the
/// thread's pool when dropped (larger ones may hold large buffers, and
/// their solves dwarf the set-up anyway).
pub(crate) const POOL_UP_TO: usize = 4096;

/// Cleared instances kept per thread.
const POOL_SIZE: usize = 4;

/// A thread's cleared HiGHS instances. Creating one reads
/// /sys/devices/system/cpu/online and sets up HiGHS's options and timers,
/// and dropping it frees them: about a fifth of the simulator's exact DRFH
/// mode, which solves thousands of masters of a dozen rows, each in a
/// HiGHS instance of its own. `Highs_clear` resets the options and empties
/// the model; `load` sets every option it relies on again.
struct Pool(Vec<*mut c_void>);

impl Drop for Pool {
    fn drop(&mut self) {
        for &p in &self.0 {
            // SAFETY: the pool owns its instances; each is destroyed once.
            unsafe { ffi::Highs_destroy(p) }
        }
    }
}

thread_local! {
    static POOL: std::cell::RefCell<Pool> = const { std::cell::RefCell::new(Pool(Vec::new())) };
}

/// A cleared instance from this thread's pool, or a new one.
pub(crate) fn pool_take() -> *mut c_void {
    let pooled = POOL.try_with(|p| p.borrow_mut().0.pop()).ok().flatten();
    // SAFETY: Highs_create has no preconditions.
    pooled.unwrap_or_else(|| unsafe { ffi::Highs_create() })
}

/// Hand a cleared instance to this thread's pool: false when the pool is
/// full or gone (the caller destroys it).
pub(crate) fn pool_put(ptr: *mut c_void) -> bool {
    POOL.try_with(|p| {
        let mut p = p.borrow_mut();
        if p.0.len() < POOL_SIZE {
            p.0.push(ptr);
            true
        } else {
            false
        }
    })
    .unwrap_or(false)
}
