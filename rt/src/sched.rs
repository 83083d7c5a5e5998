//! Setup of the RT thread, in the order rt-practice.md §4 gives: CPU affinity, SCHED_FIFO,
//! `mlockall(MCL_CURRENT | MCL_FUTURE)`, stack prefault, `/dev/cpu_dma_latency`. Each step
//! that fails is recorded with its errno and the thread runs anyway (graceful degradation);
//! the NRT side logs [`SetupSummary::warnings`] once.

pub use handoff::thread_setup::{allowed_cpus, current_policy, pin_current_thread, set_fifo};
use handoff::{SetupStatus, SetupSummary};
use nix::errno::Errno;
use std::fs::File;
use std::io::Write;

/// Default SCHED_FIFO priority: the midpoint, as ros2_control (not 99: migration/watchdog).
pub const DEFAULT_PRIORITY: u8 = 50;
/// Default stack bytes touched before the loop.
pub const DEFAULT_PREFAULT: usize = 256 * 1024;

/// What the RT thread asks for at start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RtSetup {
    /// CPU to pin to (`None`: leave the affinity alone).
    pub cpu: Option<usize>,
    /// SCHED_FIFO priority 1–99 (`None`: stay SCHED_OTHER).
    pub priority: Option<u8>,
    /// `mlockall(MCL_CURRENT | MCL_FUTURE)`.
    pub lock_memory: bool,
    /// Stack bytes to touch (must be below the thread's stack size).
    pub prefault_stack: usize,
    /// Hold `/dev/cpu_dma_latency` at 0 while the thread runs (no deep C-states).
    pub dma_latency: bool,
}

impl Default for RtSetup {
    fn default() -> Self {
        RtSetup {
            cpu: None,
            priority: Some(DEFAULT_PRIORITY),
            lock_memory: true,
            prefault_stack: DEFAULT_PREFAULT,
            dma_latency: true,
        }
    }
}

impl RtSetup {
    /// No privileged step at all (tests, benchmarks, free-running loops).
    pub fn unprivileged() -> Self {
        RtSetup {
            cpu: None,
            priority: None,
            lock_memory: false,
            prefault_stack: DEFAULT_PREFAULT,
            dma_latency: false,
        }
    }
}

/// Keeps `/dev/cpu_dma_latency` at 0 while alive (closing it restores the default).
#[derive(Debug)]
pub struct DmaLatencyGuard(#[allow(dead_code)] File);

fn status(r: Result<(), Errno>) -> SetupStatus {
    match r {
        Ok(()) => SetupStatus::Ok,
        Err(e) => SetupStatus::Failed { errno: e as i32 },
    }
}

/// The CPU the RT thread takes when none is configured: the last allowed one (CPU 0 takes most
/// interrupts and housekeeping; under `taskset -c 4,5` it is 5, not "the count minus one").
pub fn default_rt_cpu() -> Option<usize> {
    allowed_cpus().last().copied()
}

/// Locks current and future pages of the process in RAM.
pub fn lock_memory() -> Result<(), Errno> {
    use nix::sys::mman::{mlockall, MlockAllFlags};
    mlockall(MlockAllFlags::MCL_CURRENT | MlockAllFlags::MCL_FUTURE)
}

/// Touches `bytes` of stack below the caller so that the loop never faults on its stack.
#[inline(never)]
pub fn prefault_stack(bytes: usize) {
    const CHUNK: usize = 16 * 1024;
    #[inline(never)]
    fn touch(left: usize) {
        let mut a = [0u8; CHUNK];
        std::hint::black_box(&mut a);
        if left > CHUNK {
            touch(left - CHUNK);
        }
        std::hint::black_box(&a);
    }
    if bytes > 0 {
        touch(bytes);
    }
}

/// Opens `/dev/cpu_dma_latency` and writes 0.
pub fn hold_dma_latency() -> Result<DmaLatencyGuard, Errno> {
    let mut f = File::options()
        .write(true)
        .open("/dev/cpu_dma_latency")
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(0)))?;
    f.write_all(&0i32.to_ne_bytes())
        .map_err(|e| Errno::from_raw(e.raw_os_error().unwrap_or(0)))?;
    Ok(DmaLatencyGuard(f))
}

/// Whether the kernel is PREEMPT_RT (`/sys/kernel/realtime` = 1).
pub fn realtime_kernel() -> bool {
    std::fs::read_to_string("/sys/kernel/realtime").is_ok_and(|s| s.trim() == "1")
}

/// Runs every requested step on the calling thread (affinity first, so a FIFO thread never
/// starves a busy core while migrating). Never fails: failures are in the summary.
pub fn setup_current_thread(cfg: &RtSetup) -> (SetupSummary, Option<DmaLatencyGuard>) {
    let affinity = match cfg.cpu {
        Some(cpu) => status(pin_current_thread(cpu)),
        None => SetupStatus::NotRequested,
    };
    let scheduler = match cfg.priority {
        Some(p) => status(set_fifo(p.clamp(1, 99))),
        None => SetupStatus::NotRequested,
    };
    let memory_lock = if cfg.lock_memory {
        status(lock_memory())
    } else {
        SetupStatus::NotRequested
    };
    prefault_stack(cfg.prefault_stack);
    let (dma_latency, guard) = if cfg.dma_latency {
        match hold_dma_latency() {
            Ok(g) => (SetupStatus::Ok, Some(g)),
            Err(e) => (SetupStatus::Failed { errno: e as i32 }, None),
        }
    } else {
        (SetupStatus::NotRequested, None)
    };
    let summary = SetupSummary {
        cpu: cfg.cpu.map(|c| c as u16),
        affinity,
        priority: cfg.priority.unwrap_or(0).clamp(0, 99),
        scheduler,
        memory_lock,
        dma_latency,
        stack_prefault_bytes: cfg.prefault_stack.min(u32::MAX as usize) as u32,
        realtime_kernel: realtime_kernel(),
    };
    (summary, guard)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unprivileged_setup_requests_nothing() {
        let (s, guard) = std::thread::spawn(|| setup_current_thread(&RtSetup::unprivileged()))
            .join()
            .unwrap();
        assert!(guard.is_none());
        assert_eq!(s.affinity, SetupStatus::NotRequested);
        assert_eq!(s.scheduler, SetupStatus::NotRequested);
        assert_eq!(s.mode(), handoff::SchedulerMode::Fallback);
        assert!(s.warnings().is_empty());
    }

    #[test]
    fn bad_cpu_and_priority_fail_with_their_errno_and_the_thread_runs_on() {
        let cfg = RtSetup {
            cpu: Some(100_000),
            priority: None,
            lock_memory: false,
            prefault_stack: 64 * 1024,
            dma_latency: false,
        };
        let (s, _) = std::thread::spawn(move || setup_current_thread(&cfg))
            .join()
            .unwrap();
        assert_eq!(
            s.affinity,
            SetupStatus::Failed {
                errno: Errno::EINVAL as i32
            }
        );
        assert_eq!(s.warnings().len(), 1);
        assert!(set_fifo(0).is_err()); // FIFO priorities are 1..=99
    }

    #[test]
    fn fifo_is_obtained_or_refused_with_a_reason() {
        // Whichever the privileges of the test machine, the result must be coherent.
        let (res, policy) = std::thread::spawn(|| (set_fifo(10), current_policy()))
            .join()
            .unwrap();
        match res {
            Ok(()) => assert_eq!(policy, (nix::libc::SCHED_FIFO, 10)),
            Err(e) => {
                assert!(matches!(e, Errno::EPERM | Errno::EINVAL), "{e}");
                assert_eq!(policy.0, nix::libc::SCHED_OTHER);
            }
        }
    }

    /// The affinity mask as the kernel reports it (nix, independent of core_affinity).
    fn mask() -> Vec<usize> {
        let set = nix::sched::sched_getaffinity(nix::unistd::Pid::from_raw(0)).unwrap();
        (0..nix::sched::CpuSet::count())
            .filter(|&c| set.is_set(c).unwrap())
            .collect()
    }

    #[test]
    fn the_default_cpu_is_the_last_allowed_one() {
        let allowed = std::thread::spawn(|| (mask(), allowed_cpus(), default_rt_cpu()))
            .join()
            .unwrap();
        assert_eq!(allowed.1, allowed.0);
        assert_eq!(allowed.2, allowed.0.last().copied());
    }

    #[test]
    fn the_default_cpu_follows_a_restricted_mask() {
        // Confined to one CPU N (as `taskset -c N` does), the default is N; "available CPUs
        // minus one" gave 0, not an allowed CPU whenever N > 0 (here: the last CPU of several).
        let last = *mask().last().unwrap();
        let got = std::thread::spawn(move || {
            pin_current_thread(last).unwrap();
            default_rt_cpu()
        })
        .join()
        .unwrap();
        assert_eq!(got, Some(last));
    }

    #[test]
    fn pinning_beyond_the_cpu_set_is_refused_not_a_panic() {
        let r = std::thread::spawn(|| pin_current_thread(usize::MAX))
            .join()
            .unwrap();
        assert_eq!(r, Err(Errno::EINVAL));
    }

    #[test]
    fn pinning_to_an_allowed_cpu_sticks() {
        let cpu = mask()[0];
        let ok = std::thread::spawn(move || {
            pin_current_thread(cpu).unwrap();
            mask()
        })
        .join()
        .unwrap();
        assert_eq!(ok, vec![cpu]);
    }
}
