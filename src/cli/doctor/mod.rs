//! `thymio-rt doctor`: the bring-up check for a real robot. It lists Thymios and wireless dongles
//! on USB ([`usb`]), checks the serial port (there, not held by another program ([`holders`]),
//! openable by this user, else the udev rule ([`udev`])), then connects as `thymio-rt nodes` does
//! and checks each node ([`live`]: protocol, script against firmware, battery, sensors against
//! the reflexes' thresholds, and the wheels when asked). The verdicts are [`checks`]; the table
//! and JSON are [`report`]. Exit status: 0 healthy, 1 a check failed, 2 usage.

pub mod checks;
pub mod holders;
pub mod live;
pub mod report;
pub mod sensors;
pub mod udev;
pub mod usb;

use super::{print_out, CliError, CliResult};
use crate::config::Config;
use checks::{Check, Status};
use msgs::target::{SerialSelector, Target};
use std::path::{Path, PathBuf};
use std::time::Duration;
use usb::UsbPort;

/// Arguments of `thymio-rt doctor`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Target, as `run` takes it (ser:device=/dev/ttyACM0, ser:name=Thymio-II, tcp:host=H;port=P,
    /// sim). Default: the first Thymio or dongle found on USB.
    #[arg(long, short = 't', value_name = "TARGET")]
    target: Option<String>,
    /// YAML configuration whose script and obstacle_stop / cliff_stop thresholds to check against
    /// (default: the built-in one, as `run`).
    #[arg(long, value_name = "FILE")]
    config: Option<PathBuf>,
    /// Print one JSON document instead of the table.
    #[arg(long)]
    json: bool,
    /// Also drive both wheels slowly forward then backward for about two seconds and read their
    /// speeds back (lift the robot or give it room).
    #[arg(long)]
    wheels: bool,
    /// Samples of the proximity and ground sensors (one every 100 ms).
    #[arg(long, default_value_t = 10, value_parser = clap::value_parser!(u16).range(1..=600))]
    samples: u16,
    /// How long to wait for the network and each answer [s].
    #[arg(long, default_value_t = 5.0, value_name = "SECONDS")]
    timeout: f64,
    /// Print the udev rule that gives users the Thymio's port, and exit.
    #[arg(long, conflicts_with = "install_udev_rule")]
    udev_rule: bool,
    /// Write the udev rule to /etc/udev/rules.d/99-thymio.rules and reload udev (as root), and exit.
    #[arg(long)]
    install_udev_rule: bool,
}

/// A usage error (exit status 2).
fn usage(message: impl std::fmt::Display) -> CliError {
    CliError {
        message: message.to_string(),
        code: 2,
    }
}

/// Entry point of `thymio-rt doctor`.
pub fn main(args: Args) -> CliResult {
    if args.udev_rule {
        return print_out(udev::rule_text().trim_end());
    }
    if args.install_udev_rule {
        return install();
    }
    let timeout = Duration::try_from_secs_f64(args.timeout)
        .ok()
        .filter(|d| !d.is_zero())
        .ok_or_else(|| usage(format!("invalid --timeout {}", args.timeout)))?;
    let config = match &args.config {
        Some(path) => Config::from_file(path).map_err(usage)?,
        None => Config::builtin().map_err(usage)?,
    };
    if let Some(t) = &args.target {
        t.parse::<Target>()
            .map_err(|e| usage(format!("--target {t}: {e}")))?;
    }
    let found = usb::thymio_ports(Path::new("/sys"));
    let mut checks = vec![usb_check(&found, args.target.is_some())];
    let target = args
        .target
        .clone()
        .or_else(|| found.first().map(UsbPort::target));
    if let Some(target) = &target {
        let parsed: Target = target
            .parse()
            .map_err(|e| usage(format!("--target {target}: {e}")))?;
        let mut reachable = true;
        if let Target::Serial(serial) = &parsed {
            let port = port_checks(&serial.selector, &found);
            reachable = port.iter().all(|c| c.status != Status::Fail);
            checks.extend(port);
        }
        if reachable {
            let opts = live::Options {
                samples: usize::from(args.samples),
                wheels: args.wheels,
                timeout,
            };
            checks.extend(live::check(target, &config, &opts));
        } else {
            checks.push(Check::new(
                "connect",
                Status::Skip,
                "not tried: the port check failed",
            ));
        }
    }
    let report = report::Report::new(target, found, checks);
    print_out(
        if args.json {
            report.json()
        } else {
            report.table()
        }
        .trim_end(),
    )?;
    if report.healthy {
        Ok(())
    } else {
        Err(CliError::new(format!(
            "not healthy: {}",
            report.failures().join(", ")
        )))
    }
}

/// `--install-udev-rule`: writes the rule, reloads udev.
fn install() -> CliResult {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { nix::libc::geteuid() };
    let path = udev::rule_path();
    udev::install_rule(&path, euid).map_err(CliError::new)?;
    print_out(&format!("wrote {}", path.display()))?;
    match udev::reload_udev() {
        Ok(()) => print_out("udev reloaded: unplug and plug the robot in"),
        Err(e) => print_out(&format!(
            "udev not reloaded ({e}): the rule applies from the next boot; unplug and plug the robot in"
        )),
    }
}

/// The `usb` check: what is plugged in. Finding nothing fails only when no target was given.
fn usb_check(found: &[UsbPort], target_given: bool) -> Check {
    let data = serde_json::to_value(found).expect("ports serialize");
    if found.is_empty() {
        let text = "no Thymio-II (0617:000a) or Thymio Wireless dongle (0617:000c) on USB";
        if target_given {
            return Check::new("usb", Status::Skip, text).data(data);
        }
        return Check::new("usb", Status::Fail, text)
            .fix("plug the robot in with a data cable (not a charging-only one) and switch it on, or give --target")
            .data(data);
    }
    let list: Vec<String> = found
        .iter()
        .map(|p| format!("{} at {}", p.kind.label(), p.device.display()))
        .collect();
    Check::new("usb", Status::Ok, list.join(", ")).data(data)
}

/// The port checks of a serial target: found, not held, openable.
fn port_checks(selector: &SerialSelector, found: &[UsbPort]) -> Vec<Check> {
    let selector = match selector {
        SerialSelector::Device(p) => rt::link::SerialSelector::Device(PathBuf::from(p)),
        SerialSelector::Name(n) => rt::link::SerialSelector::Name(n.clone()),
        SerialSelector::Port(i) => rt::link::SerialSelector::Port(i.saturating_sub(1) as usize),
    };
    let listed = if found.is_empty() {
        "none found on USB".to_owned()
    } else {
        let all: Vec<String> = found
            .iter()
            .map(|p| p.device.display().to_string())
            .collect();
        format!("found: {}", all.join(", "))
    };
    let device = match rt::link::find_port(&selector) {
        Ok(d) => d,
        Err(e) => {
            return vec![Check::new("port", Status::Fail, e.to_string()).fix(format!(
                "plug the robot in and switch it on, or name its port ({listed})"
            ))]
        }
    };
    if !device.exists() {
        return vec![Check::new(
            "port",
            Status::Fail,
            format!("{}: no such device", device.display()),
        )
        .fix(format!(
            "plug the robot in and switch it on; a Thymio is a /dev/ttyACM* port ({listed})"
        ))];
    }
    let mut out = vec![Check::new("port", Status::Ok, device.display().to_string())];
    out.push(holders_check(&device));
    out.push(permission_check(&device));
    out
}

/// The `holders` check: no other process has the port open.
fn holders_check(device: &Path) -> Check {
    let scan = holders::scan(Path::new("/proc"), device, std::process::id());
    let data =
        serde_json::json!({"holders": scan.holders, "uninspected_processes": scan.unreadable});
    let (servers, rivals): (Vec<_>, Vec<_>) = scan.holders.iter().partition(|h| h.serves);
    let served = servers
        .iter()
        .map(|h| {
            format!(
                "; the pseudo-terminal is served by {} (pid {})",
                h.name, h.pid
            )
        })
        .collect::<String>();
    if rivals.is_empty() {
        let note = if scan.unreadable > 0 {
            format!(
                "no process of ours holds it ({} processes of other users not inspected: as root all are){served}",
                scan.unreadable
            )
        } else {
            format!("no other process holds it{served}")
        };
        return Check::new("holders", Status::Ok, note).data(data);
    }
    let names: Vec<String> = rivals
        .iter()
        .map(|h| format!("{} (pid {})", h.name, h.pid))
        .collect();
    let fixes: Vec<String> = rivals.iter().map(|h| holders::fix_for(h)).collect();
    Check::new(
        "holders",
        Status::Fail,
        format!("{} held by {}{served}", device.display(), names.join(", ")),
    )
    .fix(fixes.join("; "))
    .data(data)
}

/// The `permission` check: this user can open the port read-write.
fn permission_check(device: &Path) -> Check {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { nix::libc::geteuid() };
    let owner = udev::ownership(device).unwrap_or_default();
    let data = serde_json::json!({"euid": euid, "device": device, "ownership": owner});
    let shown = device.display();
    match udev::try_open(device) {
        udev::Access::Ok => Check::new(
            "permission",
            Status::Ok,
            format!("{shown} opens read-write"),
        )
        .data(data),
        udev::Access::Denied => Check::new(
            "permission",
            Status::Fail,
            format!("permission denied (EACCES) opening {shown} as uid {euid} ({owner})"),
        )
        .fix(udev::denied_fix())
        .data(data),
        udev::Access::Busy => Check::new(
            "permission",
            Status::Fail,
            format!("{shown} is busy (EBUSY): another program opened it exclusively"),
        )
        .fix("quit Thymio Suite (its device manager keeps the port) or the program named above")
        .data(data),
        udev::Access::Missing => {
            Check::new("permission", Status::Fail, format!("{shown} vanished"))
                .fix("plug the robot in again")
                .data(data)
        }
        udev::Access::Other(e) => {
            Check::new("permission", Status::Fail, format!("opening {shown}: {e}"))
                .fix("unplug and plug the robot in; check `dmesg` for USB errors")
                .data(data)
        }
    }
}
