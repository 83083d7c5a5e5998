//! Serial link (USB Thymio-II, wireless dongle, pseudo-terminal): opened through the
//! `serialport` crate (exclusive, raw 8N1, DTR asserted), then read and written on the raw file
//! descriptor in non-blocking mode so that no call allocates (the crate's timeout path does).
//!
//! `VMIN = 1, VTIME = 0` with `O_NONBLOCK` makes "no data" an `EAGAIN` and a hang-up (USB
//! unplug) a zero-byte read, so a dead port is always seen. The RT thread waits on the tty's
//! descriptor; the driver's low-latency flag (`ASYNC_LOW_LATENCY`) is set where the tty has one,
//! so that received bytes are pushed to the reader at once rather than batched.

use super::{Link, LinkError};
use handoff::LinkKind;
use nix::errno::Errno;
use nix::fcntl::{fcntl, FcntlArg, OFlag};
use nix::sys::termios::{tcgetattr, tcsetattr, SetArg, SpecialCharacterIndices};
use serialport::{SerialPortInfo, SerialPortType, TTYPort};
use std::os::fd::{AsRawFd, BorrowedFd};
use std::path::PathBuf;

/// USB vendor id of EPFL/Mobsya devices.
pub const THYMIO_VID: u16 = 0x0617;
/// Well-known names of USB product ids (aseba.md §1.4; the dongle's product string).
const KNOWN_PRODUCTS: [(u16, &str); 2] = [(0x000A, "Thymio-II"), (0x000C, "Thymio-II Wireless")];

/// How to find the port (Dashel `ser:` priority: device > name > port).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SerialSelector {
    /// An OS path, e.g. `/dev/ttyACM0`.
    Device(PathBuf),
    /// Case-sensitive substring of a port's description (`product (path)`, manufacturer, or the
    /// well-known name of a Thymio USB id).
    Name(String),
    /// Index into the enumerated ports, from 0, in enumeration order (as Dashel on Linux).
    Port(usize),
}

/// A serial target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerialSpec {
    /// Which port.
    pub selector: SerialSelector,
    /// Baud rate (irrelevant for USB CDC; 115200 by convention).
    pub baud: u32,
    /// Assert DTR (the Thymio ignores the link without it).
    pub dtr: bool,
}

impl SerialSpec {
    /// A device path at 115200 baud with DTR.
    pub fn device(path: impl Into<PathBuf>) -> Self {
        SerialSpec {
            selector: SerialSelector::Device(path.into()),
            baud: 115_200,
            dtr: true,
        }
    }
}

/// Why a serial port could not be opened.
#[derive(Debug, thiserror::Error)]
pub enum SerialOpenError {
    /// No enumerated port matches the name.
    #[error("no serial port matches name {0:?}")]
    NoSuchName(String),
    /// The index is beyond the enumerated ports.
    #[error("no serial port at index {index} ({count} ports)")]
    NoSuchPort {
        /// Requested index.
        index: usize,
        /// Ports enumerated.
        count: usize,
    },
    /// Enumeration or opening failed.
    #[error("serial port {path}: {source}")]
    Open {
        /// Port.
        path: String,
        /// Cause.
        source: serialport::Error,
    },
    /// Configuring the descriptor failed.
    #[error("serial port {path}: {what}: {errno}")]
    Configure {
        /// Port.
        path: String,
        /// Step.
        what: &'static str,
        /// Cause.
        errno: Errno,
    },
}

/// Whether a port's description contains `name` (Dashel matches `product (path)`).
pub fn port_matches(info: &SerialPortInfo, name: &str) -> bool {
    if info.port_name.contains(name) {
        return true;
    }
    if let SerialPortType::UsbPort(usb) = &info.port_type {
        let product = usb.product.as_deref().unwrap_or("");
        if format!("{} ({})", product.trim_end(), info.port_name).contains(name) {
            return true;
        }
        if usb
            .manufacturer
            .as_deref()
            .is_some_and(|m| m.contains(name))
        {
            return true;
        }
        if usb.vid == THYMIO_VID
            && KNOWN_PRODUCTS
                .iter()
                .any(|&(pid, known)| pid == usb.pid && known.contains(name))
        {
            return true;
        }
    }
    false
}

/// Resolves a selector to a device path (enumerates ports for names and indices; NRT).
pub fn find_port(selector: &SerialSelector) -> Result<PathBuf, SerialOpenError> {
    let enumerate = || {
        serialport::available_ports().map_err(|source| SerialOpenError::Open {
            path: "(enumeration)".into(),
            source,
        })
    };
    match selector {
        SerialSelector::Device(p) => Ok(p.clone()),
        SerialSelector::Name(name) => enumerate()?
            .into_iter()
            .find(|p| port_matches(p, name))
            .map(|p| PathBuf::from(p.port_name))
            .ok_or_else(|| SerialOpenError::NoSuchName(name.clone())),
        SerialSelector::Port(index) => {
            let ports = enumerate()?;
            let count = ports.len();
            ports
                .into_iter()
                .nth(*index)
                .map(|p| PathBuf::from(p.port_name))
                .ok_or(SerialOpenError::NoSuchPort {
                    index: *index,
                    count,
                })
        }
    }
}

/// Whether `fd` is a Unix98 pseudo-terminal (`/dev/pts/N`, character-device majors 136–143),
/// which has no modem lines such as DTR.
pub fn is_pseudo_terminal(fd: &impl AsRawFd) -> bool {
    use nix::sys::stat::{fstat, major, SFlag};
    // SAFETY: `fd` is borrowed from the caller for the duration of the call, so it stays open.
    let fd = unsafe { BorrowedFd::borrow_raw(fd.as_raw_fd()) };
    fstat(fd).is_ok_and(|st| {
        SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFCHR
            && (136..=143).contains(&major(st.st_rdev))
    })
}

/// An open serial port in non-blocking mode.
#[derive(Debug)]
pub struct SerialLink {
    port: TTYPort,
    path: PathBuf,
    low_latency: bool,
}

/// `struct serial_struct` of `<linux/serial.h>` (TIOCGSERIAL / TIOCSSERIAL).
#[repr(C)]
struct SerialStruct {
    kind: nix::libc::c_int,
    line: nix::libc::c_int,
    port: nix::libc::c_uint,
    irq: nix::libc::c_int,
    flags: nix::libc::c_int,
    xmit_fifo_size: nix::libc::c_int,
    custom_divisor: nix::libc::c_int,
    baud_base: nix::libc::c_int,
    close_delay: nix::libc::c_ushort,
    io_type: nix::libc::c_char,
    reserved_char: [nix::libc::c_char; 1],
    hub6: nix::libc::c_int,
    closing_wait: nix::libc::c_ushort,
    closing_wait2: nix::libc::c_ushort,
    iomem_base: *mut nix::libc::c_uchar,
    iomem_reg_shift: nix::libc::c_ushort,
    port_high: nix::libc::c_uint,
    iomap_base: nix::libc::c_ulong,
}

/// `ASYNC_LOW_LATENCY` of `<linux/tty_flags.h>`.
const ASYNC_LOW_LATENCY: nix::libc::c_int = 1 << 13;

/// Sets the tty driver's low-latency flag (read, or, write back).
fn set_low_latency(fd: BorrowedFd<'_>) -> Result<(), Errno> {
    // SAFETY: all-zero bytes are a valid `SerialStruct` (integers and a null pointer).
    let mut ss: SerialStruct = unsafe { std::mem::zeroed() };
    // SAFETY: TIOCGSERIAL writes one `struct serial_struct` (the layout above) through the
    // pointer, which points to a live, writable value of that size; `fd` is open.
    Errno::result(unsafe {
        nix::libc::ioctl(
            fd.as_raw_fd(),
            nix::libc::TIOCGSERIAL,
            &mut ss as *mut SerialStruct,
        )
    })?;
    if ss.flags & ASYNC_LOW_LATENCY != 0 {
        return Ok(());
    }
    ss.flags |= ASYNC_LOW_LATENCY;
    // SAFETY: TIOCSSERIAL reads one `struct serial_struct` from the pointer, a live value
    // filled by TIOCGSERIAL above; `fd` is open.
    Errno::result(unsafe {
        nix::libc::ioctl(
            fd.as_raw_fd(),
            nix::libc::TIOCSSERIAL,
            &ss as *const SerialStruct,
        )
    })
    .map(drop)
}

impl SerialLink {
    /// Finds and opens the port (blocking, NRT): exclusive, raw 8N1 at `baud`, DTR asserted if
    /// asked (a failure to assert DTR is logged, not fatal: pseudo-terminals have no DTR),
    /// `VMIN = 1, VTIME = 0`, `O_NONBLOCK`. The caller waits the settle time before the first
    /// message (aseba.md §1.4: 200 ms).
    pub fn open(spec: &SerialSpec) -> Result<Self, SerialOpenError> {
        let path = find_port(&spec.selector)?;
        let name = path.to_string_lossy().into_owned();
        let mut port = serialport::new(name.clone(), spec.baud)
            .data_bits(serialport::DataBits::Eight)
            .parity(serialport::Parity::None)
            .stop_bits(serialport::StopBits::One)
            .flow_control(serialport::FlowControl::None)
            .open_native()
            .map_err(|source| SerialOpenError::Open {
                path: name.clone(),
                source,
            })?;
        if spec.dtr {
            use serialport::SerialPort;
            if let Err(e) = port.write_data_terminal_ready(true) {
                if is_pseudo_terminal(&port) {
                    // no modem lines: nothing to assert, and nothing is wrong (simulators, relays)
                    tracing::debug!("{name}: a pseudo-terminal, no DTR to assert ({e})");
                } else {
                    tracing::warn!("{name}: cannot assert DTR ({e}); a Thymio will not answer");
                }
            }
        }
        let mut link = SerialLink {
            port,
            path,
            low_latency: false,
        };
        link.configure()
            .map_err(|(what, errno)| SerialOpenError::Configure {
                path: name.clone(),
                what,
                errno,
            })?;
        match set_low_latency(link.fd()) {
            Ok(()) => link.low_latency = true,
            // pseudo-terminals and ttys without serial driver data: nothing to set
            Err(Errno::ENOTTY | Errno::EINVAL) => {
                tracing::debug!("{name}: no low-latency flag on this tty")
            }
            Err(e) => tracing::warn!("{name}: cannot set the low-latency flag ({e})"),
        }
        Ok(link)
    }

    /// Whether the tty's low-latency flag was set (`false` on pseudo-terminals).
    pub fn low_latency(&self) -> bool {
        self.low_latency
    }

    fn fd(&self) -> BorrowedFd<'_> {
        // SAFETY: the descriptor is owned by `self.port`, open for as long as `self` lives,
        // and the borrow cannot outlive `self`.
        unsafe { BorrowedFd::borrow_raw(self.port.as_raw_fd()) }
    }

    fn configure(&self) -> Result<(), (&'static str, Errno)> {
        let mut t = tcgetattr(self.fd()).map_err(|e| ("tcgetattr", e))?;
        t.control_chars[SpecialCharacterIndices::VMIN as usize] = 1;
        t.control_chars[SpecialCharacterIndices::VTIME as usize] = 0;
        tcsetattr(self.fd(), SetArg::TCSANOW, &t).map_err(|e| ("tcsetattr", e))?;
        let flags = fcntl(self.fd(), FcntlArg::F_GETFL).map_err(|e| ("F_GETFL", e))?;
        let flags = OFlag::from_bits_truncate(flags) | OFlag::O_NONBLOCK;
        fcntl(self.fd(), FcntlArg::F_SETFL(flags)).map_err(|e| ("F_SETFL", e))?;
        Ok(())
    }

    /// The device path.
    pub fn path(&self) -> &std::path::Path {
        &self.path
    }
}

fn map_errno(e: Errno) -> Result<usize, LinkError> {
    match e {
        Errno::EAGAIN | Errno::EINTR => Ok(0),
        e => Err(LinkError::from_errno(e as i32)),
    }
}

impl Link for SerialLink {
    fn read(&mut self, buf: &mut [u8]) -> Result<usize, LinkError> {
        if buf.is_empty() {
            return Ok(0);
        }
        match nix::unistd::read(self.fd(), buf) {
            Ok(0) => Err(LinkError::Eof), // hang-up (VMIN = 1 and O_NONBLOCK: no data is EAGAIN)
            Ok(n) => Ok(n),
            Err(e) => map_errno(e),
        }
    }

    fn write(&mut self, buf: &[u8]) -> Result<usize, LinkError> {
        if buf.is_empty() {
            return Ok(0);
        }
        nix::unistd::write(self.fd(), buf).or_else(map_errno)
    }

    fn kind(&self) -> LinkKind {
        LinkKind::Serial
    }

    /// The tty: readable when bytes arrived or the port hung up.
    fn rt_fd(&self) -> Option<BorrowedFd<'_>> {
        Some(self.fd())
    }
}

#[cfg(test)]
mod tests;
