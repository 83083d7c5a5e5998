//! Thymios and wireless dongles on USB, found by vendor/product id in sysfs
//! (`/sys/class/tty/<tty>/device` → the USB device above it: `idVendor`, `idProduct`, `serial`, …),
//! as libudev (and so `serialport`'s enumeration) reads them. The sysfs root is a parameter, so
//! that the walk is tested on a tree of files.

use serde::Serialize;
use std::path::{Path, PathBuf};

/// USB vendor id of EPFL/Mobsya devices (aseba.md §1.4).
pub const THYMIO_VID: u16 = 0x0617;
/// USB product id of a Thymio-II on its cable.
pub const THYMIO_PID: u16 = 0x000A;
/// USB product id of the Thymio Wireless dongle.
pub const DONGLE_PID: u16 = 0x000C;

/// What a Mobsya USB device is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    /// A Thymio-II on a USB cable.
    Thymio,
    /// A Thymio Wireless dongle (robots paired with it share its port).
    WirelessDongle,
    /// Another product of the vendor.
    Other,
}

impl Kind {
    /// The kind of a Mobsya product id.
    pub fn of(pid: u16) -> Kind {
        match pid {
            THYMIO_PID => Kind::Thymio,
            DONGLE_PID => Kind::WirelessDongle,
            _ => Kind::Other,
        }
    }

    /// Its name for people.
    pub fn label(self) -> &'static str {
        match self {
            Kind::Thymio => "Thymio-II",
            Kind::WirelessDongle => "Thymio Wireless dongle",
            Kind::Other => "Mobsya device",
        }
    }
}

/// One serial port of a Mobsya USB device.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct UsbPort {
    /// Device path, e.g. `/dev/ttyACM0`.
    pub device: PathBuf,
    /// Thymio or dongle.
    pub kind: Kind,
    /// USB vendor id.
    pub vid: u16,
    /// USB product id.
    pub pid: u16,
    /// USB serial number, when the device has one.
    pub serial: Option<String>,
    /// USB product string (the Thymio pads it with spaces: trimmed).
    pub product: Option<String>,
}

impl UsbPort {
    /// The target string that opens this port.
    pub fn target(&self) -> String {
        format!("ser:device={}", self.device.display())
    }
}

/// Every tty below `sys` (`/sys` on a machine) whose USB device has the Mobsya vendor id, sorted
/// by device path; `/dev/<tty>` is its device. A tree that cannot be read gives no ports.
pub fn thymio_ports(sys: &Path) -> Vec<UsbPort> {
    let Ok(entries) = std::fs::read_dir(sys.join("class/tty")) else {
        return Vec::new();
    };
    let mut ports: Vec<UsbPort> = entries
        .flatten()
        .filter_map(|e| {
            let tty = e.file_name().to_string_lossy().into_owned();
            let usb = usb_device_of(&e.path().join("device"))?;
            let vid = hex_id(&usb.join("idVendor"))?;
            let pid = hex_id(&usb.join("idProduct"))?;
            (vid == THYMIO_VID).then(|| UsbPort {
                device: Path::new("/dev").join(&tty),
                kind: Kind::of(pid),
                vid,
                pid,
                serial: attribute(&usb.join("serial")),
                product: attribute(&usb.join("product")),
            })
        })
        .collect();
    ports.sort_by(|a, b| a.device.cmp(&b.device));
    ports
}

/// The USB device directory above a tty's `device` link: the nearest ancestor with an `idVendor`.
fn usb_device_of(device_link: &Path) -> Option<PathBuf> {
    let mut dir = std::fs::canonicalize(device_link).ok()?;
    loop {
        if dir.join("idVendor").is_file() {
            return Some(dir);
        }
        if !dir.pop() {
            return None;
        }
    }
}

/// A sysfs attribute, trimmed; `None` if absent or empty.
fn attribute(path: &Path) -> Option<String> {
    let text = std::fs::read_to_string(path).ok()?;
    let text = text.trim();
    (!text.is_empty()).then(|| text.to_owned())
}

/// A 4-digit hexadecimal id attribute (`0617`).
fn hex_id(path: &Path) -> Option<u16> {
    u16::from_str_radix(&attribute(path)?, 16).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fs;

    /// A fake sysfs: USB device `usb` (vid, pid) with interface `usb:1.0` holding tty `tty`.
    fn add(sys: &Path, usb: &str, vid: &str, pid: &str, tty: &str, serial: Option<&str>) {
        let dev = sys.join("devices/pci0000:00/usb1").join(usb);
        let iface = dev.join(format!("{usb}:1.0"));
        fs::create_dir_all(iface.join("tty").join(tty)).unwrap();
        fs::write(dev.join("idVendor"), format!("{vid}\n")).unwrap();
        fs::write(dev.join("idProduct"), format!("{pid}\n")).unwrap();
        fs::write(dev.join("product"), "Thymio-II      \n").unwrap();
        if let Some(s) = serial {
            fs::write(dev.join("serial"), format!("{s}\n")).unwrap();
        }
        fs::create_dir_all(sys.join("class/tty").join(tty)).unwrap();
        std::os::unix::fs::symlink(&iface, sys.join("class/tty").join(tty).join("device")).unwrap();
    }

    #[test]
    fn finds_thymios_and_dongles_by_vendor_and_product_id() {
        let dir = tempfile::tempdir().unwrap();
        let sys = dir.path();
        add(sys, "1-2", "0617", "000c", "ttyACM1", None);
        add(sys, "1-1", "0617", "000a", "ttyACM0", Some("abc"));
        add(sys, "1-3", "2341", "0043", "ttyACM2", None); // an Arduino
        fs::create_dir_all(sys.join("class/tty/tty0")).unwrap(); // a console: no device link
        let ports = thymio_ports(sys);
        assert_eq!(ports.len(), 2, "{ports:?}");
        assert_eq!(ports[0].device, Path::new("/dev/ttyACM0"));
        assert_eq!(ports[0].kind, Kind::Thymio);
        assert_eq!(ports[0].serial.as_deref(), Some("abc"));
        assert_eq!(ports[0].product.as_deref(), Some("Thymio-II"));
        assert_eq!(ports[0].target(), "ser:device=/dev/ttyACM0");
        assert_eq!(ports[1].kind, Kind::WirelessDongle);
        assert_eq!((ports[1].vid, ports[1].pid), (0x0617, 0x000C));
    }

    #[test]
    fn no_sysfs_is_no_ports() {
        assert!(thymio_ports(Path::new("/nonexistent-sysfs")).is_empty());
        assert_eq!(Kind::of(0x42), Kind::Other);
    }
}
