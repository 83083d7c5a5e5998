//! Dashel target strings (aseba.md §1.6) parsed into typed targets: `tcp:host=H;port=P`,
//! `tcp:localhost;33333`, `tcpin:port=P;address=A`, `ser:device=/dev/ttyACM0`,
//! `ser:name=Thymio-II`, `ser:port=1;baud=115200;dtr=false`, `udp:…`, `file:…`, `stdin:`,
//! `stdout:`, plus thymio-rt's own `sim` / `sim:robots=N` (the embedded simulator).
//!
//! As in Dashel, parameters have an implicit order per protocol so keys may be omitted, but
//! once a key is given explicitly the following ones must be explicit too; defaults are merged.
//! Every error names the parameter and the offending text.

use std::fmt;
use std::str::FromStr;

/// Parity of a serial port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Parity {
    /// No parity bit.
    None,
    /// Even parity.
    Even,
    /// Odd parity.
    Odd,
}

/// Flow control of a serial port.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FlowControl {
    /// None.
    None,
    /// Hardware (RTS/CTS).
    Hard,
}

/// Which serial port: by path, by description, or by index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SerialSelector {
    /// OS path (`device=`).
    Device(String),
    /// Case-sensitive substring of the port description (`name=`).
    Name(String),
    /// 1-based index into the enumerated ports (`port=`).
    Port(u32),
}

/// A serial target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SerialTarget {
    /// Which port.
    pub selector: SerialSelector,
    /// Baud rate.
    pub baud: u32,
    /// Stop bits (1 or 2).
    pub stop_bits: u8,
    /// Parity.
    pub parity: Parity,
    /// Flow control.
    pub flow: FlowControl,
    /// Data bits (5–8).
    pub bits: u8,
    /// Assert DTR (the Thymio needs it).
    pub dtr: bool,
}

/// A typed Dashel target.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// TCP client.
    Tcp {
        /// Host.
        host: String,
        /// Port.
        port: u16,
    },
    /// TCP server.
    TcpIn {
        /// Port (0: any free port).
        port: u16,
        /// Address to bind.
        address: String,
    },
    /// Serial port.
    Serial(SerialTarget),
    /// UDP socket (parsed; links do not support it).
    Udp {
        /// Port.
        port: u16,
        /// Address.
        address: String,
    },
    /// File (parsed; links do not support it).
    File {
        /// Path.
        name: String,
        /// `read` or `write`.
        write: bool,
    },
    /// Standard input (parsed; links do not support it).
    Stdin,
    /// Standard output (parsed; links do not support it).
    Stdout,
    /// The embedded simulator with this many robots.
    Sim {
        /// Robots (≥ 1).
        robots: u16,
    },
}

/// A target string that does not parse.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum TargetError {
    /// No `proto:` prefix or an unknown protocol.
    #[error("unknown protocol \"{proto}\" in \"{target}\" (tcp, tcpin, ser, udp, file, stdin, stdout, sim)")]
    Protocol {
        /// Protocol found.
        proto: String,
        /// Whole target.
        target: String,
    },
    /// A key the protocol does not have.
    #[error("unknown parameter \"{key}\" in \"{target}\"")]
    UnknownKey {
        /// Key.
        key: String,
        /// Whole target.
        target: String,
    },
    /// A value without key after an explicit `key=value`.
    #[error("value \"{value}\" without a key after an explicit parameter in \"{target}\"")]
    ImplicitAfterExplicit {
        /// Value.
        value: String,
        /// Whole target.
        target: String,
    },
    /// More values than the protocol has parameters.
    #[error("too many values in \"{target}\" (unexpected \"{value}\")")]
    TooManyValues {
        /// Value.
        value: String,
        /// Whole target.
        target: String,
    },
    /// A required parameter is missing.
    #[error("missing {param} in \"{target}\"")]
    Missing {
        /// Parameter.
        param: &'static str,
        /// Whole target.
        target: String,
    },
    /// A number outside the range its parameter allows.
    #[error("{param} \"{value}\" in \"{target}\" is out of range: {param} must be {min} to {max}")]
    OutOfRange {
        /// Parameter.
        param: &'static str,
        /// Value.
        value: String,
        /// Smallest allowed.
        min: u64,
        /// Largest allowed.
        max: u64,
        /// Whole target.
        target: String,
    },
    /// A value that does not fit its parameter.
    #[error("invalid {param} \"{value}\" in \"{target}\"")]
    Invalid {
        /// Parameter.
        param: String,
        /// Value.
        value: String,
        /// Whole target.
        target: String,
    },
}

/// Most robots of the embedded simulator (`sim:robots=N`): as many as one driver drives
/// (`handoff::MAX_ROBOTS`).
pub const MAX_SIM_ROBOTS: u16 = 64;

/// Aseba keys accepted on any target (asebaswitch remapping), kept aside.
const ASEBA_EXTRA: &[&str] = &["remapLocal", "remapTarget"];

/// Ordered parameters of a protocol with their defaults; `extra` keys are explicit-only.
struct Spec {
    params: &'static [(&'static str, Option<&'static str>)],
    extra: &'static [&'static str],
}

fn spec(proto: &str) -> Option<Spec> {
    Some(match proto {
        "tcp" | "tcppoll" => Spec {
            params: &[
                ("host", None),
                ("port", None),
                ("connectionPort", Some("-1")),
                ("sock", Some("-1")),
            ],
            extra: &[],
        },
        "tcpin" => Spec {
            params: &[("port", Some("5000")), ("address", Some("0.0.0.0"))],
            extra: &[],
        },
        "udp" => Spec {
            params: &[
                ("port", Some("5000")),
                ("address", Some("0.0.0.0")),
                ("sock", Some("-1")),
            ],
            extra: &[],
        },
        "ser" => Spec {
            params: &[
                ("port", Some("1")),
                ("baud", Some("115200")),
                ("stop", Some("1")),
                ("parity", Some("none")),
                ("fc", Some("none")),
                ("bits", Some("8")),
                ("dtr", Some("true")),
            ],
            extra: &["device", "name"],
        },
        "file" => Spec {
            params: &[("name", None), ("mode", Some("read"))],
            extra: &[],
        },
        "stdin" | "stdout" => Spec {
            params: &[],
            extra: &[],
        },
        "sim" => Spec {
            params: &[("robots", Some("1"))],
            extra: &[],
        },
        _ => return None,
    })
}

/// Parameters after parsing: explicit or positional values merged over the defaults.
struct Values<'a> {
    target: &'a str,
    pairs: Vec<(&'a str, String)>,
}

impl Values<'_> {
    fn get(&self, key: &str) -> Option<&str> {
        self.pairs
            .iter()
            .rev()
            .find(|(k, _)| *k == key)
            .map(|(_, v)| v.as_str())
    }

    fn required(&self, key: &'static str) -> Result<&str, TargetError> {
        self.get(key).ok_or(TargetError::Missing {
            param: key,
            target: self.target.to_owned(),
        })
    }

    fn invalid(&self, param: &str, value: &str) -> TargetError {
        TargetError::Invalid {
            param: param.to_owned(),
            value: value.to_owned(),
            target: self.target.to_owned(),
        }
    }

    fn number<T: FromStr>(&self, key: &'static str) -> Result<T, TargetError> {
        let v = self.required(key)?;
        v.parse().map_err(|_| self.invalid(key, v))
    }

    fn boolean(&self, key: &'static str) -> Result<bool, TargetError> {
        match self.required(key)? {
            "true" | "1" => Ok(true),
            "false" | "0" => Ok(false),
            v => Err(self.invalid(key, v)),
        }
    }
}

impl FromStr for Target {
    type Err = TargetError;

    fn from_str(s: &str) -> Result<Target, TargetError> {
        let target = s;
        let (proto, rest) = target.split_once(':').unwrap_or((target, ""));
        let spec = spec(proto).ok_or_else(|| TargetError::Protocol {
            proto: proto.to_owned(),
            target: target.to_owned(),
        })?;
        let mut v = Values {
            target,
            pairs: spec
                .params
                .iter()
                .filter_map(|(k, d)| d.map(|d| (*k, d.to_owned())))
                .collect(),
        };
        let mut position = 0;
        let mut explicit = false;
        for part in rest.split(';').filter(|p| !p.is_empty()) {
            match part.split_once('=') {
                Some((key, value)) => {
                    explicit = true;
                    let known = spec.params.iter().find(|(k, _)| *k == key).map(|(k, _)| *k);
                    let key = known
                        .or_else(|| {
                            spec.extra
                                .iter()
                                .chain(ASEBA_EXTRA)
                                .find(|k| **k == key)
                                .copied()
                        })
                        .ok_or_else(|| TargetError::UnknownKey {
                            key: key.to_owned(),
                            target: target.to_owned(),
                        })?;
                    v.pairs.push((key, value.to_owned()));
                }
                None => {
                    if explicit {
                        return Err(TargetError::ImplicitAfterExplicit {
                            value: part.to_owned(),
                            target: target.to_owned(),
                        });
                    }
                    let (key, _) =
                        spec.params
                            .get(position)
                            .ok_or_else(|| TargetError::TooManyValues {
                                value: part.to_owned(),
                                target: target.to_owned(),
                            })?;
                    v.pairs.push((key, part.to_owned()));
                    position += 1;
                }
            }
        }
        for k in ASEBA_EXTRA {
            if let Some(x) = v.get(k) {
                x.parse::<u16>().map_err(|_| v.invalid(k, x))?;
            }
        }
        build(proto, &v)
    }
}

fn build(proto: &str, v: &Values<'_>) -> Result<Target, TargetError> {
    Ok(match proto {
        "tcp" | "tcppoll" => {
            let host = v.required("host")?;
            if host.is_empty() {
                return Err(v.invalid("host", host));
            }
            for k in ["connectionPort", "sock"] {
                let x = v.get(k).unwrap_or("-1");
                x.parse::<i32>().map_err(|_| v.invalid(k, x))?;
            }
            Target::Tcp {
                host: host.to_owned(),
                port: v.number("port")?,
            }
        }
        "tcpin" => Target::TcpIn {
            port: v.number("port")?,
            address: v.required("address")?.to_owned(),
        },
        "udp" => Target::Udp {
            port: v.number("port")?,
            address: v.required("address")?.to_owned(),
        },
        "ser" => {
            let selector = if let Some(d) = v.get("device") {
                if d.is_empty() {
                    return Err(v.invalid("device", d));
                }
                SerialSelector::Device(d.to_owned())
            } else if let Some(n) = v.get("name") {
                if n.is_empty() {
                    return Err(v.invalid("name", n));
                }
                SerialSelector::Name(n.to_owned())
            } else {
                let p: u32 = v.number("port")?;
                if p == 0 {
                    return Err(v.invalid("port", "0"));
                }
                SerialSelector::Port(p)
            };
            let stop_bits: u8 = v.number("stop")?;
            if !(1..=2).contains(&stop_bits) {
                return Err(v.invalid("stop", v.get("stop").unwrap_or_default()));
            }
            let bits: u8 = v.number("bits")?;
            if !(5..=8).contains(&bits) {
                return Err(v.invalid("bits", v.get("bits").unwrap_or_default()));
            }
            let parity = match v.required("parity")? {
                "none" => Parity::None,
                "even" => Parity::Even,
                "odd" => Parity::Odd,
                x => return Err(v.invalid("parity", x)),
            };
            let flow = match v.required("fc")? {
                "none" => FlowControl::None,
                "hard" => FlowControl::Hard,
                x => return Err(v.invalid("fc", x)),
            };
            let baud: u32 = v.number("baud")?;
            if baud == 0 {
                return Err(v.invalid("baud", "0"));
            }
            Target::Serial(SerialTarget {
                selector,
                baud,
                stop_bits,
                parity,
                flow,
                bits,
                dtr: v.boolean("dtr")?,
            })
        }
        "file" => {
            let write = match v.required("mode")? {
                "read" => false,
                "write" => true,
                x => return Err(v.invalid("mode", x)),
            };
            Target::File {
                name: v.required("name")?.to_owned(),
                write,
            }
        }
        "stdin" => Target::Stdin,
        "stdout" => Target::Stdout,
        "sim" => {
            let robots: u64 = v.number("robots")?;
            if !(1..=u64::from(MAX_SIM_ROBOTS)).contains(&robots) {
                return Err(TargetError::OutOfRange {
                    param: "robots",
                    value: robots.to_string(),
                    min: 1,
                    max: MAX_SIM_ROBOTS.into(),
                    target: v.target.to_owned(),
                });
            }
            Target::Sim {
                robots: robots as u16,
            }
        }
        _ => unreachable!("protocol checked by spec()"),
    })
}

impl fmt::Display for Target {
    /// The canonical, explicit form, which parses back to the same target.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Target::Tcp { host, port } => write!(f, "tcp:host={host};port={port}"),
            Target::TcpIn { port, address } => write!(f, "tcpin:port={port};address={address}"),
            Target::Udp { port, address } => write!(f, "udp:port={port};address={address}"),
            Target::Serial(s) => {
                match &s.selector {
                    SerialSelector::Device(d) => write!(f, "ser:device={d}")?,
                    SerialSelector::Name(n) => write!(f, "ser:name={n}")?,
                    SerialSelector::Port(p) => write!(f, "ser:port={p}")?,
                }
                let parity = match s.parity {
                    Parity::None => "none",
                    Parity::Even => "even",
                    Parity::Odd => "odd",
                };
                let fc = match s.flow {
                    FlowControl::None => "none",
                    FlowControl::Hard => "hard",
                };
                write!(
                    f,
                    ";baud={};stop={};parity={parity};fc={fc};bits={};dtr={}",
                    s.baud, s.stop_bits, s.bits, s.dtr
                )
            }
            Target::File { name, write } => {
                write!(
                    f,
                    "file:name={name};mode={}",
                    if *write { "write" } else { "read" }
                )
            }
            Target::Stdin => write!(f, "stdin:"),
            Target::Stdout => write!(f, "stdout:"),
            Target::Sim { robots } => write!(f, "sim:robots={robots}"),
        }
    }
}

#[cfg(test)]
mod tests;
