//! Where the RT thread's companion threads run: the NRT threads that the RT thread wakes on its
//! hot path (the front ends' odometry publishers). Woken on another CPU, a thread waits for
//! that CPU to leave its idle state (tens of µs on bare metal, ~100 µs and a millisecond tail
//! in a virtual machine); woken on the RT thread's own CPU at a SCHED_FIFO priority below it, it
//! runs as soon as the RT thread waits again, before any SCHED_OTHER thread there. What the
//! configuration asks for is described here; applying it is the NRT side's
//! (`nrt_interface::companion`).

/// Where and at which priority a companion thread should run.
///
/// ```
/// use handoff::CompanionPlacement;
/// let p = CompanionPlacement { cpu: Some(1), priority: 1 };
/// assert_eq!(p.describe(), "CPU 1, SCHED_FIFO 1");
/// assert_eq!(CompanionPlacement::default().describe(), "any CPU, SCHED_OTHER");
/// ```
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct CompanionPlacement {
    /// The CPU to pin it to (the RT thread's); `None`: wherever the scheduler puts it.
    pub cpu: Option<u16>,
    /// Its SCHED_FIFO priority, below the RT thread's; 0: SCHED_OTHER.
    pub priority: u8,
}

impl CompanionPlacement {
    /// What is asked, for the log.
    pub fn describe(&self) -> String {
        let cpu = match self.cpu {
            Some(c) => format!("CPU {c}"),
            None => "any CPU".to_owned(),
        };
        match self.priority {
            0 => format!("{cpu}, SCHED_OTHER"),
            p => format!("{cpu}, SCHED_FIFO {p}"),
        }
    }
}
