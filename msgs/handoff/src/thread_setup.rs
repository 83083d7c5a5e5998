//! The calling thread's placement, shared by the RT thread's setup (`rt::sched`) and the NRT
//! threads the RT thread wakes on its hot path (`nrt_interface::companion`, where
//! [`super::CompanionPlacement`] says): the CPUs the process may use, pinning, SCHED_FIFO.

#![allow(unsafe_code)]

use nix::errno::Errno;
use nix::libc;

/// The CPUs this process may run on (its affinity mask: `taskset`, cpusets), ascending.
pub fn allowed_cpus() -> Vec<usize> {
    let mut ids: Vec<usize> = core_affinity::get_core_ids()
        .unwrap_or_default()
        .into_iter()
        .map(|c| c.id)
        .collect();
    ids.sort_unstable();
    ids
}

/// Pins the calling thread to `cpu` (EINVAL: no such CPU, or outside the process's cpuset).
pub fn pin_current_thread(cpu: usize) -> Result<(), Errno> {
    // core_affinity writes the bit into a fixed-size cpu_set_t: an index beyond it would panic.
    if cpu >= libc::CPU_SETSIZE as usize {
        return Err(Errno::EINVAL);
    }
    if core_affinity::set_for_current(core_affinity::CoreId { id: cpu }) {
        Ok(())
    } else {
        // sched_setaffinity's errno, read right after the call that set it.
        Err(Errno::last())
    }
}

/// Switches the calling thread to SCHED_FIFO at `priority`.
pub fn set_fifo(priority: u8) -> Result<(), Errno> {
    let param = libc::sched_param {
        sched_priority: priority as i32,
    };
    // SAFETY: `pthread_self()` is the calling thread, alive during the call; `param` is a
    // valid, initialised sched_param that outlives the call.
    let rc = unsafe { libc::pthread_setschedparam(libc::pthread_self(), libc::SCHED_FIFO, &param) };
    if rc == 0 {
        Ok(())
    } else {
        Err(Errno::from_raw(rc))
    }
}

/// The calling thread's scheduling policy and priority.
pub fn current_policy() -> (i32, i32) {
    let mut policy = 0;
    let mut param = libc::sched_param { sched_priority: 0 };
    // SAFETY: both out-pointers refer to live locals; the thread is the calling one.
    unsafe {
        libc::pthread_getschedparam(libc::pthread_self(), &mut policy, &mut param);
    }
    (policy, param.sched_priority)
}
