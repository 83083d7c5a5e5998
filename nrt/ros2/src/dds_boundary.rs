//! Which hosts the process's DDS participants accept, decided once at start from the environment ROS reads.
//!
//! ROS 2 Jazzy's `ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST` (and the older `ROS_LOCALHOST_ONLY=1`) only limits
//! *automatic* discovery: rmw_fastrtps then gives the participant a UDP transport listening on every interface, so
//! a peer on another host that names this one in its `ROS_STATIC_PEERS` discovers the driver and commands the robot.
//! When the user asked for one host, [`confine`] makes Fast DDS accept loopback only: it writes a Fast DDS XML
//! profile (a UDPv4 transport whose interface allowlist is `127.0.0.1`, shared memory, no built-in transports, no
//! multicast, `127.0.0.1` as the initial peer) and points `FASTRTPS_DEFAULT_PROFILES_FILE` (Fast DDS 2.x, the wheels'
//! 2.14) and `FASTDDS_DEFAULT_PROFILES_FILE` (3.x) at it. rmw_fastrtps would add its own unrestricted UDP transport
//! under `LOCALHOST`, so the process's discovery range becomes `SYSTEM_DEFAULT` ("the middleware's configuration
//! decides", which is now the profile) and `ROS_LOCALHOST_ONLY` is removed. Every participant of the process loads that default profile:
//! r2r keeps one rcl context per process, so one participant carries every node (`asebaros`, the hidden
//! `_asebaros_hot`, the robots' `thymio_driver` nodes).
//!
//! The user's own settings rule: with another discovery range nothing changes; with a profile file of their own, a
//! non-Fast-DDS middleware, a discovery server or static peers on other hosts, nothing changes either and the
//! decision says why the boundary is not the driver's to enforce.
//!
//! [`confine`] changes the process's environment: call it before any other thread exists.

use std::ffi::OsString;
use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

/// Fast DDS 2.x reads its default profile file from this variable.
pub const FASTRTPS_PROFILES_VAR: &str = "FASTRTPS_DEFAULT_PROFILES_FILE";
/// Fast DDS 3.x reads its default profile file from this variable.
pub const FASTDDS_PROFILES_VAR: &str = "FASTDDS_DEFAULT_PROFILES_FILE";
/// The profiles Fast DDS loads from the working directory (2.x, 3.x) unless `SKIP_DEFAULT_XML_FILE=1`.
const CWD_PROFILES: [&str; 2] = [
    "DEFAULT_FASTRTPS_PROFILES.xml",
    "DEFAULT_FASTDDS_PROFILES.xml",
];

/// The Fast DDS profile that confines a participant to this host (the XML syntax of Fast DDS 2.14, which 3.x still
/// reads). The UDP transport binds `127.0.0.1` only and tries 32 participant ports on it (as rmw_fastrtps does under
/// `LOCALHOST`); shared memory carries the data between local processes; the explicit metatraffic unicast locator
/// leaves out the default multicast one, so no socket listens on any other address.
pub const LOOPBACK_PROFILE: &str = r#"<?xml version="1.0" encoding="UTF-8"?>
<!-- Written by thymio-rt because ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST (or ROS_LOCALHOST_ONLY=1):
     DDS accepts loopback and shared memory only; nothing from another host is discovered or obeyed. -->
<dds xmlns="http://www.eprosima.com/XMLSchemas/fastRTPS_Profiles">
  <profiles>
    <transport_descriptors>
      <transport_descriptor>
        <transport_id>thymio_rt_loopback_udp</transport_id>
        <type>UDPv4</type>
        <maxInitialPeersRange>32</maxInitialPeersRange>
        <interfaceWhiteList>
          <address>127.0.0.1</address>
        </interfaceWhiteList>
      </transport_descriptor>
      <transport_descriptor>
        <transport_id>thymio_rt_shm</transport_id>
        <type>SHM</type>
      </transport_descriptor>
    </transport_descriptors>
    <participant profile_name="thymio_rt_loopback" is_default_profile="true">
      <rtps>
        <userTransports>
          <transport_id>thymio_rt_loopback_udp</transport_id>
          <transport_id>thymio_rt_shm</transport_id>
        </userTransports>
        <useBuiltinTransports>false</useBuiltinTransports>
        <builtin>
          <metatrafficUnicastLocatorList>
            <locator><udpv4><address>127.0.0.1</address></udpv4></locator>
          </metatrafficUnicastLocatorList>
          <initialPeersList>
            <locator><udpv4><address>127.0.0.1</address></udpv4></locator>
          </initialPeersList>
        </builtin>
      </rtps>
    </participant>
  </profiles>
</dds>
"#;

/// What the user asked for, read as rcl reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Range {
    /// This host only; the text names the setting that asked for it.
    Localhost(String),
    /// Another range (`SUBNET`, ROS's default when unset, `OFF`, `SYSTEM_DEFAULT`), described.
    Other(String),
}

/// The boundary the process runs with.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// ROS's and the user's settings rule; nothing is changed (the text says which range is in force).
    Leave(String),
    /// One host was asked for, but the user's own configuration decides; the text says which and what to do.
    NotEnforced(String),
    /// One host was asked for and the loopback profile will enforce it; the text names the setting.
    Confine {
        /// The setting that asked for one host.
        asked_by: String,
    },
}

/// The discovery range the environment asks for (`get` reads a variable), with rcl's precedence: `ROS_LOCALHOST_ONLY`
/// starting with `1` wins; an empty or unset `ROS_AUTOMATIC_DISCOVERY_RANGE` is `SUBNET`; a value rcl does not know
/// is taken as `LOCALHOST`, as rcl does.
pub fn requested_range(get: &dyn Fn(&str) -> Option<String>) -> Range {
    if get("ROS_LOCALHOST_ONLY").is_some_and(|v| v.starts_with('1')) {
        return Range::Localhost("ROS_LOCALHOST_ONLY=1".into());
    }
    match get("ROS_AUTOMATIC_DISCOVERY_RANGE")
        .unwrap_or_default()
        .as_str()
    {
        "" => Range::Other("SUBNET (ROS's default: ROS_AUTOMATIC_DISCOVERY_RANGE unset)".into()),
        "LOCALHOST" => Range::Localhost("ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST".into()),
        v @ ("SUBNET" | "OFF" | "SYSTEM_DEFAULT") => {
            Range::Other(format!("{v} (ROS_AUTOMATIC_DISCOVERY_RANGE)"))
        }
        v => Range::Localhost(format!(
            "ROS_AUTOMATIC_DISCOVERY_RANGE={v} (not a range ROS knows: ROS takes it as LOCALHOST)"
        )),
    }
}

/// Whether a `ROS_STATIC_PEERS` entry names this host.
fn is_loopback_peer(peer: &str) -> bool {
    let p = peer.trim();
    p.is_empty()
        || p.eq_ignore_ascii_case("localhost")
        || p.parse::<std::net::IpAddr>().is_ok_and(|a| a.is_loopback())
}

/// Decides the boundary from the environment (`get`) and whether a file of that name is in the working directory
/// (`in_cwd`).
pub fn decide(get: &dyn Fn(&str) -> Option<String>, in_cwd: &dyn Fn(&str) -> bool) -> Decision {
    let asked_by = match requested_range(get) {
        Range::Other(range) => return Decision::Leave(range),
        Range::Localhost(asked_by) => asked_by,
    };
    let set = |name: &str| get(name).filter(|v| !v.is_empty());
    let not_enforced = |why: String| {
        Decision::NotEnforced(format!(
            "{asked_by} asks for this host only, but {why}; thymio-rt leaves it in force and does not restrict \
             DDS to loopback: make sure that configuration keeps other hosts out"
        ))
    };
    if let Some(rmw) = set("RMW_IMPLEMENTATION") {
        if !rmw.starts_with("rmw_fastrtps") {
            let hint = if rmw.starts_with("rmw_cyclonedds") {
                match set("CYCLONEDDS_URI") {
                    Some(uri) => format!("CYCLONEDDS_URI={uri} is in effect"),
                    None => {
                        "set CYCLONEDDS_URI to a configuration whose General/Interfaces lists only \
                             <NetworkInterface address=\"127.0.0.1\"/>"
                            .into()
                    }
                }
            } else {
                "configure that middleware to use the loopback interface only".into()
            };
            return not_enforced(format!(
                "RMW_IMPLEMENTATION={rmw} is not Fast DDS, which is all thymio-rt confines ({hint})"
            ));
        }
    }
    for var in [FASTRTPS_PROFILES_VAR, FASTDDS_PROFILES_VAR] {
        if let Some(path) = set(var) {
            return not_enforced(format!("your Fast DDS profile {var}={path} is in effect"));
        }
    }
    if !get("SKIP_DEFAULT_XML_FILE").is_some_and(|v| v.starts_with('1')) {
        if let Some(file) = CWD_PROFILES.into_iter().find(|f| in_cwd(f)) {
            return not_enforced(format!(
                "your Fast DDS profile {file} in the working directory is in effect"
            ));
        }
    }
    if let Some(server) = set("ROS_DISCOVERY_SERVER") {
        return not_enforced(format!("ROS_DISCOVERY_SERVER={server} is in effect"));
    }
    // ROS_LOCALHOST_ONLY=1 makes rcl ignore the static peers.
    if !asked_by.starts_with("ROS_LOCALHOST_ONLY") {
        if let Some(peers) = set("ROS_STATIC_PEERS") {
            let remote: Vec<&str> = peers.split(';').filter(|p| !is_loopback_peer(p)).collect();
            if !remote.is_empty() {
                return not_enforced(format!(
                    "ROS_STATIC_PEERS names other hosts ({}), which ROS adds to the range",
                    remote.join(", ")
                ));
            }
        }
    }
    Decision::Confine { asked_by }
}

/// Errors of [`confine`].
#[derive(Debug, thiserror::Error)]
pub enum BoundaryError {
    /// The profile file could not be written: the driver does not start rather than run open to other hosts.
    #[error(
        "cannot write the DDS loopback profile {path} (asked for by {asked_by}): {source}; \
         the driver does not start unconfined"
    )]
    Profile {
        /// The file.
        path: PathBuf,
        /// The setting that asked for one host.
        asked_by: String,
        /// Why.
        #[source]
        source: std::io::Error,
    },
}

/// The boundary in force; removes the profile it wrote when dropped (Fast DDS reads it once, when the first
/// participant is made, but it stays for the process's life so that it can be inspected).
#[derive(Debug)]
pub struct DdsBoundary {
    decision: Decision,
    profile: Option<PathBuf>,
}

impl DdsBoundary {
    /// The decision taken.
    pub fn decision(&self) -> &Decision {
        &self.decision
    }

    /// The profile written, if the boundary is the driver's.
    pub fn profile(&self) -> Option<&Path> {
        self.profile.as_deref()
    }

    /// Whether the line of [`Self::describe`] is a warning (one host asked for, not enforced by the driver).
    pub fn is_warning(&self) -> bool {
        matches!(self.decision, Decision::NotEnforced(_))
    }

    /// One line saying which boundary is in force.
    pub fn describe(&self) -> String {
        match (&self.decision, &self.profile) {
            (Decision::Confine { asked_by }, Some(path)) => format!(
                "DDS boundary: this host only ({asked_by}): Fast DDS accepts loopback and shared memory only \
                 (profile {}); nothing from another host is discovered or obeyed",
                path.display()
            ),
            (Decision::Confine { asked_by }, None) => format!("DDS boundary: {asked_by}"),
            (Decision::NotEnforced(why), _) => format!("DDS boundary NOT enforced: {why}"),
            (Decision::Leave(range), _) => format!(
                "DDS boundary: discovery range {range}: hosts on the network can discover this driver and \
                 command the robot (ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST keeps it to this host)"
            ),
        }
    }
}

impl Drop for DdsBoundary {
    fn drop(&mut self) {
        if let Some(path) = &self.profile {
            let _ = std::fs::remove_file(path);
        }
    }
}

/// Where the profile of process `pid` goes: `$XDG_RUNTIME_DIR` (the user's private run-time directory) when set, else
/// the temporary directory; `nonce` (the start time's nanoseconds) makes the name hard to guess, so that another user
/// of a shared temporary directory cannot take it first.
pub fn profile_path(runtime_dir: Option<OsString>, pid: u32, nonce: u32) -> PathBuf {
    let dir = runtime_dir
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .unwrap_or_else(std::env::temp_dir);
    dir.join(format!("thymio-rt-{pid}-{nonce:08x}-dds-loopback.xml"))
}

/// Writes `content` to a new file at `path`, readable by its owner only. A file left there (by a process of the same
/// id, or planted) is removed first, never written through: a symbolic link is replaced, not followed.
fn write_new(path: &Path, content: &str) -> std::io::Result<()> {
    let open = || {
        std::fs::OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(0o600)
            .open(path)
    };
    let mut file = match open() {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
            std::fs::remove_file(path)?;
            open()?
        }
        other => other?,
    };
    file.write_all(content.as_bytes())?;
    file.sync_all()
}

/// Decides the boundary from the process's environment and, when the driver is to enforce one host, writes the
/// loopback profile and points Fast DDS at it (see the module's documentation).
///
/// Call it before any other thread of the process exists and before the first rcl context: it changes the
/// environment, which C code (rcl, Fast DDS) reads without Rust's lock.
pub fn confine() -> Result<DdsBoundary, BoundaryError> {
    let get = |name: &str| std::env::var(name).ok();
    let in_cwd = |file: &str| Path::new(file).is_file();
    let decision = decide(&get, &in_cwd);
    let Decision::Confine { asked_by } = &decision else {
        return Ok(DdsBoundary {
            decision,
            profile: None,
        });
    };
    let nonce = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.subsec_nanos());
    let path = profile_path(
        std::env::var_os("XDG_RUNTIME_DIR"),
        std::process::id(),
        nonce,
    );
    write_new(&path, LOOPBACK_PROFILE).map_err(|source| BoundaryError::Profile {
        path: path.clone(),
        asked_by: asked_by.clone(),
        source,
    })?;
    std::env::set_var(FASTRTPS_PROFILES_VAR, &path);
    std::env::set_var(FASTDDS_PROFILES_VAR, &path);
    // Under LOCALHOST rmw_fastrtps adds a UDP transport on every interface; SYSTEM_DEFAULT leaves the transports
    // to the profile. ROS_LOCALHOST_ONLY=1 would force LOCALHOST back.
    std::env::set_var("ROS_AUTOMATIC_DISCOVERY_RANGE", "SYSTEM_DEFAULT");
    std::env::remove_var("ROS_LOCALHOST_ONLY");
    Ok(DdsBoundary {
        decision,
        profile: Some(path),
    })
}

#[cfg(test)]
#[path = "dds_boundary_tests.rs"]
mod tests;
