//! Who holds a serial port: the processes with a file descriptor on the device, found by reading
//! the `/proc/<pid>/fd/*` links (as `fuser` does), named by their command (argv[0], since `comm` is
//! cut at 15 characters: `thymio-device-m`). The proc root is a parameter so the scan is tested on
//! a tree of files. A pseudo-terminal's own server (the process holding its master side, e.g.
//! `thymio-rt sim --pty`, which keeps the slave open too) is told apart: it is the robot's end,
//! not a rival.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// A process holding the port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Holder {
    /// Process id.
    pub pid: u32,
    /// Its command's name (argv[0]'s file name, else `comm`).
    pub name: String,
    /// It holds the master side of this pseudo-terminal: it serves the port (the robot's end).
    pub serves: bool,
}

/// The result of a scan.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Scan {
    /// Processes with the device open.
    pub holders: Vec<Holder>,
    /// Processes whose descriptors could not be read (another user's, without privileges).
    pub unreadable: usize,
}

/// Processes under `proc` (other than `self_pid`) with a descriptor on `device`, compared after
/// resolving symbolic links (`/dev/serial/by-id/…` is the same port as `/dev/ttyACM0`).
pub fn scan(proc: &Path, device: &Path, self_pid: u32) -> Scan {
    let device = std::fs::canonicalize(device).unwrap_or_else(|_| device.to_path_buf());
    let pts = device
        .strip_prefix("/dev/pts")
        .ok()
        .and_then(|n| n.to_str()?.parse::<u32>().ok());
    let mut out = Scan::default();
    let Ok(entries) = std::fs::read_dir(proc) else {
        return out;
    };
    for e in entries.flatten() {
        let Some(pid) = e.file_name().to_str().and_then(|s| s.parse::<u32>().ok()) else {
            continue;
        };
        if pid == self_pid {
            continue;
        }
        let Ok(fds) = std::fs::read_dir(e.path().join("fd")) else {
            out.unreadable += 1;
            continue;
        };
        let mut holds = false;
        let mut serves = false;
        for fd in fds.flatten() {
            let Ok(target) = std::fs::read_link(fd.path()) else {
                continue;
            };
            holds |= target == device;
            if pts.is_some() && target.file_name().is_some_and(|n| n == "ptmx") {
                let info = e.path().join("fdinfo").join(fd.file_name());
                serves |= std::fs::read_to_string(info).is_ok_and(|i| tty_index(&i) == pts);
            }
        }
        if holds {
            out.holders.push(Holder {
                pid,
                name: process_name(&e.path()),
                serves,
            });
        }
    }
    out.holders.sort_by_key(|h| h.pid);
    out
}

/// The `tty-index` of a pseudo-terminal master's `/proc/<pid>/fdinfo/<fd>`.
pub fn tty_index(fdinfo: &str) -> Option<u32> {
    fdinfo
        .lines()
        .find_map(|l| l.strip_prefix("tty-index:"))
        .and_then(|v| v.trim().parse().ok())
}

/// A process's name: argv[0]'s file name from `cmdline`, else `comm`, else `?`.
pub fn process_name(proc_pid: &Path) -> String {
    let argv0 = std::fs::read(proc_pid.join("cmdline")).ok().and_then(|c| {
        let first = c.split(|&b| b == 0).next()?.to_vec();
        let path = PathBuf::from(String::from_utf8_lossy(&first).into_owned());
        let name = path.file_name()?.to_string_lossy().into_owned();
        (!name.is_empty()).then_some(name)
    });
    argv0
        .or_else(|| {
            std::fs::read_to_string(proc_pid.join("comm"))
                .ok()
                .map(|s| s.trim().to_owned())
                .filter(|s| !s.is_empty())
        })
        .unwrap_or_else(|| "?".to_owned())
}

/// How to free the port from `holder`: what the known holders are and how to stop them.
pub fn fix_for(holder: &Holder) -> String {
    let pid = holder.pid;
    match holder.name.as_str() {
        n if n.starts_with("thymio-device-m") => format!(
            "Thymio Suite's device manager ({n}, pid {pid}) holds the port: quit Thymio Suite and \
             stop the device manager (`kill {pid}`); it starts again with Thymio Suite"
        ),
        "ModemManager" => format!(
            "ModemManager (pid {pid}) probes new serial ports: install the udev rule \
             (`thymio-rt doctor --udev-rule`), which tells it to leave Thymios alone, or \
             `sudo systemctl stop ModemManager`"
        ),
        n if n.starts_with("asebaswitch") || n.starts_with("asebastudio") || n.starts_with("thymio-rt") => format!(
            "{n} (pid {pid}) is connected to the robot: stop it (`kill {pid}`), or connect through it \
             (e.g. an asebaswitch's tcp: port)"
        ),
        n => format!("stop {n} (pid {pid}), e.g. `kill {pid}`, then run the check again"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;
    use std::os::unix::fs::symlink;

    fn process(proc: &Path, pid: u32, cmdline: &[u8], comm: &str, fds: &[&Path]) {
        let dir = proc.join(pid.to_string());
        fs::create_dir_all(dir.join("fd")).unwrap();
        fs::write(dir.join("cmdline"), cmdline).unwrap();
        fs::write(dir.join("comm"), format!("{comm}\n")).unwrap();
        for (i, target) in fds.iter().enumerate() {
            symlink(target, dir.join("fd").join(i.to_string())).unwrap();
        }
    }

    #[test]
    fn names_the_processes_holding_the_device_and_not_ourselves() {
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path().join("proc");
        let dev = dir.path().join("ttyACM0");
        fs::write(&dev, "").unwrap();
        let other = dir.path().join("ttyACM1");
        fs::write(&other, "").unwrap();
        let tdm = b"/opt/ThymioSuite/bin/thymio-device-manager\0--verbose\0";
        process(&proc, 40, tdm, "thymio-device-m", &[&other, &dev]);
        process(&proc, 7, b"", "sleep", &[&dev]); // a kernel-less cmdline: comm
        process(
            &proc,
            99,
            b"/usr/bin/thymio-rt\0doctor\0",
            "thymio-rt",
            &[&dev],
        );
        process(&proc, 50, b"bash\0", "bash", &[&other]);
        fs::create_dir_all(proc.join("self")).unwrap(); // not a pid
        fs::create_dir_all(proc.join("61")).unwrap(); // no fd directory readable
        let s = scan(&proc, &dev, 99);
        assert_eq!(
            s.holders,
            vec![
                Holder {
                    pid: 7,
                    name: "sleep".into(),
                    serves: false,
                },
                Holder {
                    pid: 40,
                    name: "thymio-device-manager".into(),
                    serves: false,
                },
            ]
        );
        assert_eq!(s.unreadable, 1);
        // through a symbolic link to the device (/dev/serial/by-id/…)
        let by_id = dir.path().join("by-id");
        symlink(&dev, &by_id).unwrap();
        assert_eq!(scan(&proc, &by_id, 99).holders.len(), 2);
    }

    #[test]
    fn tells_a_pseudo_terminals_server_from_its_rivals() {
        assert_eq!(
            tty_index("pos:\t0\nflags:\t0104002\ntty-index:\t3\n"),
            Some(3)
        );
        assert_eq!(tty_index("pos:\t0\n"), None);
        let dir = tempfile::tempdir().unwrap();
        let proc = dir.path();
        let pts = Path::new("/dev/pts/3");
        let ptmx = Path::new("/dev/ptmx");
        process(proc, 10, b"thymio-rt\0sim\0", "thymio-rt", &[ptmx, pts]);
        fs::create_dir_all(proc.join("10/fdinfo")).unwrap();
        fs::write(proc.join("10/fdinfo/0"), "pos:\t0\ntty-index:\t3\n").unwrap();
        // another pseudo-terminal's server that also has our slave open
        process(proc, 11, b"socat\0", "socat", &[ptmx, pts]);
        fs::create_dir_all(proc.join("11/fdinfo")).unwrap();
        fs::write(proc.join("11/fdinfo/0"), "tty-index:\t4\n").unwrap();
        let s = scan(proc, pts, 1);
        let got: Vec<(u32, bool)> = s.holders.iter().map(|h| (h.pid, h.serves)).collect();
        assert_eq!(got, vec![(10, true), (11, false)]);
    }

    #[test]
    fn fixes_name_the_known_holders() {
        let tdm = Holder {
            pid: 40,
            name: "thymio-device-manager".into(),
            serves: false,
        };
        assert!(fix_for(&tdm).contains("Thymio Suite"), "{}", fix_for(&tdm));
        assert!(fix_for(&tdm).contains("kill 40"));
        let mm = Holder {
            pid: 3,
            name: "ModemManager".into(),
            serves: false,
        };
        assert!(fix_for(&mm).contains("udev rule"));
        let other = Holder {
            pid: 8,
            name: "minicom".into(),
            serves: false,
        };
        assert!(fix_for(&other).contains("stop minicom (pid 8)"));
    }
}
