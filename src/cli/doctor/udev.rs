//! The udev rule that gives users a Thymio's serial port (and keeps ModemManager away from it),
//! its installation, and the permission check: opening the port read-write as the user will.

use super::usb::{DONGLE_PID, THYMIO_PID, THYMIO_VID};
use std::path::{Path, PathBuf};

/// Where `--install-udev-rule` writes the rule.
pub const RULE_PATH: &str = "/etc/udev/rules.d/99-thymio.rules";

/// The rule: Thymio-II and Wireless dongle ttys in group `dialout`, read-write for the group and
/// for the user at the seat (`uaccess`), ignored by ModemManager.
pub fn rule_text() -> String {
    let mut s = String::from(
        "# Thymio-II (USB) and Thymio Wireless dongle: read-write for group dialout and for the\n\
         # logged-in user; ModemManager leaves them alone. Written by `thymio-rt doctor`.\n",
    );
    for pid in [THYMIO_PID, DONGLE_PID] {
        s.push_str(&format!(
            "SUBSYSTEM==\"tty\", ATTRS{{idVendor}}==\"{THYMIO_VID:04x}\", ATTRS{{idProduct}}==\"{pid:04x}\", \
             MODE=\"0660\", GROUP=\"dialout\", TAG+=\"uaccess\", ENV{{ID_MM_DEVICE_IGNORE}}=\"1\"\n"
        ));
    }
    s
}

/// Why the rule could not be installed.
#[derive(Debug, thiserror::Error)]
pub enum InstallError {
    /// Not root.
    #[error("installing {path} needs root: run `sudo thymio-rt doctor --install-udev-rule`")]
    NotRoot {
        /// The rule's path.
        path: String,
    },
    /// Writing failed.
    #[error("cannot write {path}: {source}")]
    Write {
        /// The rule's path.
        path: String,
        /// Cause.
        source: std::io::Error,
    },
}

/// Writes the rule to `path` (its directory created) when `euid` is root. Reloading udev is the
/// caller's ([`reload_udev`]).
pub fn install_rule(path: &Path, euid: u32) -> Result<(), InstallError> {
    let shown = path.display().to_string();
    if euid != 0 {
        return Err(InstallError::NotRoot { path: shown });
    }
    let write = || -> std::io::Result<()> {
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::write(path, rule_text())
    };
    write().map_err(|source| InstallError::Write {
        path: shown,
        source,
    })
}

/// `udevadm control --reload-rules` then `udevadm trigger` on tty devices; what went wrong, if
/// anything (no udevadm: a container; the rule is applied at the next boot or plug).
pub fn reload_udev() -> Result<(), String> {
    for args in [
        &["control", "--reload-rules"][..],
        &["trigger", "--subsystem-match=tty"][..],
    ] {
        let status = std::process::Command::new("udevadm")
            .args(args)
            .status()
            .map_err(|e| format!("udevadm {}: {e}", args.join(" ")))?;
        if !status.success() {
            return Err(format!("udevadm {}: {status}", args.join(" ")));
        }
    }
    Ok(())
}

/// What opening the port read-write said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Access {
    /// It opens.
    Ok,
    /// No such device.
    Missing,
    /// EACCES/EPERM: the user may not open it.
    Denied,
    /// EBUSY: another program opened it exclusively.
    Busy,
    /// Another error.
    Other(String),
}

/// Opens `device` read-write (non-blocking, not as controlling terminal) and closes it.
pub fn try_open(device: &Path) -> Access {
    use std::os::unix::fs::OpenOptionsExt;
    let opened = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .custom_flags(nix::libc::O_NOCTTY | nix::libc::O_NONBLOCK)
        .open(device);
    match opened {
        Ok(_) => Access::Ok,
        Err(e) => access_of(&e),
    }
}

/// The verdict of an open's error.
pub fn access_of(e: &std::io::Error) -> Access {
    match e.raw_os_error() {
        Some(nix::libc::ENOENT) | Some(nix::libc::ENODEV) | Some(nix::libc::ENXIO) => {
            Access::Missing
        }
        Some(nix::libc::EACCES) | Some(nix::libc::EPERM) => Access::Denied,
        Some(nix::libc::EBUSY) => Access::Busy,
        _ => Access::Other(e.to_string()),
    }
}

/// Owner, group and mode of `device` for the message of a refused open (`uid 0, group dialout, 0660`).
pub fn ownership(device: &Path) -> Option<String> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(device).ok()?;
    let groups = std::fs::read_to_string("/etc/group").unwrap_or_default();
    let group = group_name(&groups, m.gid()).unwrap_or_else(|| m.gid().to_string());
    Some(format!(
        "uid {}, group {group}, mode {:04o}",
        m.uid(),
        m.mode() & 0o7777
    ))
}

/// The name of group `gid` in the text of `/etc/group`.
pub fn group_name(etc_group: &str, gid: u32) -> Option<String> {
    etc_group.lines().find_map(|l| {
        let mut f = l.split(':');
        let name = f.next()?;
        let id = f.nth(1)?.parse::<u32>().ok()?;
        (id == gid).then(|| name.to_owned())
    })
}

/// The fix for a refused open.
pub fn denied_fix() -> String {
    format!(
        "install the udev rule (`sudo thymio-rt doctor --install-udev-rule`, writes {RULE_PATH}; \
         then unplug and plug the robot in) or join group dialout (`sudo usermod -aG dialout $USER`, \
         then log out and in again)"
    )
}

/// The rule's path as a `PathBuf`.
pub fn rule_path() -> PathBuf {
    PathBuf::from(RULE_PATH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_matches_both_products_and_keeps_modemmanager_away() {
        let r = rule_text();
        let rules: Vec<&str> = r.lines().filter(|l| !l.starts_with('#')).collect();
        assert_eq!(rules.len(), 2, "{r}");
        assert!(
            rules[0].contains(r#"ATTRS{idVendor}=="0617", ATTRS{idProduct}=="000a""#),
            "{r}"
        );
        assert!(rules[1].contains(r#"ATTRS{idProduct}=="000c""#), "{r}");
        for l in rules {
            assert!(l.starts_with(r#"SUBSYSTEM=="tty""#));
            assert!(l.contains(r#"GROUP="dialout""#) && l.contains(r#"MODE="0660""#));
            assert!(
                l.contains(r#"TAG+="uaccess""#) && l.contains(r#"ENV{ID_MM_DEVICE_IGNORE}="1""#)
            );
        }
    }

    #[test]
    fn installs_only_as_root() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("rules.d/99-thymio.rules");
        let e = install_rule(&path, 1000).unwrap_err();
        assert!(e.to_string().contains("sudo"), "{e}");
        assert!(!path.exists());
        install_rule(&path, 0).unwrap();
        assert_eq!(std::fs::read_to_string(&path).unwrap(), rule_text());
    }

    #[test]
    fn open_errors_are_verdicts() {
        let e = |n| std::io::Error::from_raw_os_error(n);
        assert_eq!(access_of(&e(nix::libc::EACCES)), Access::Denied);
        assert_eq!(access_of(&e(nix::libc::ENOENT)), Access::Missing);
        assert_eq!(access_of(&e(nix::libc::EBUSY)), Access::Busy);
        assert!(matches!(access_of(&e(nix::libc::EIO)), Access::Other(_)));
        assert_eq!(try_open(Path::new("/nonexistent/ttyACM9")), Access::Missing);
        assert_eq!(try_open(Path::new("/dev/null")), Access::Ok);
        assert!(denied_fix().contains(RULE_PATH));
        let groups = "root:x:0:\ndialout:x:20:alice\n";
        assert_eq!(group_name(groups, 20).as_deref(), Some("dialout"));
        assert_eq!(group_name(groups, 5), None);
    }
}
