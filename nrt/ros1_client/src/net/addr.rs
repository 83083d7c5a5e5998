//! Where the node listens and what it advertises, from `ROS_HOSTNAME` / `ROS_IP` (ROS 1's order: `ROS_HOSTNAME`
//! wins). Every listening socket (XML-RPC slave API, TCPROS) binds to that address — loopback when the name
//! resolves to loopback — so `ROS_IP=127.0.0.1` keeps every other host out. With neither set, ROS's behaviour:
//! the host name is advertised and the sockets listen on every interface.

use std::net::{IpAddr, Ipv4Addr, ToSocketAddrs};

/// The address the node binds and the name it advertises.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Address {
    /// In our URIs (`http://HOST:port/`, `rosrpc://HOST:port`, requestTopic's answers).
    pub host: String,
    /// Where every socket of the node listens.
    pub bind: IpAddr,
}

/// `ROS_IP` / `ROS_HOSTNAME` that cannot be used.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AddrError {
    /// `ROS_IP` is not an IP address.
    #[error("ROS_IP {0:?} is not an IP address")]
    Ip(String),
    /// `ROS_HOSTNAME` does not resolve.
    #[error("ROS_HOSTNAME {0:?} does not resolve: {1}")]
    Hostname(String, String),
}

impl Address {
    /// From the environment.
    pub fn from_env() -> Result<Address, AddrError> {
        let var = |k| {
            std::env::var(k)
                .ok()
                .filter(|v: &String| !v.trim().is_empty())
        };
        Address::from_vars(var("ROS_IP"), var("ROS_HOSTNAME"))
    }

    /// From the values of `ROS_IP` and `ROS_HOSTNAME` (`None`: unset or empty).
    pub fn from_vars(
        ros_ip: Option<String>,
        hostname: Option<String>,
    ) -> Result<Address, AddrError> {
        if let Some(name) = hostname {
            let name = name.trim().to_owned();
            let bind = resolve(&name)?;
            return Ok(Address { host: name, bind });
        }
        if let Some(ip) = ros_ip {
            let ip = ip.trim().to_owned();
            let bind: IpAddr = ip.parse().map_err(|_| AddrError::Ip(ip.clone()))?;
            return Ok(Address { host: ip, bind });
        }
        Ok(Address {
            host: host_name(),
            bind: IpAddr::V4(Ipv4Addr::UNSPECIFIED),
        })
    }

    /// Whether the node listens on every interface (neither variable set).
    pub fn is_every_interface(&self) -> bool {
        self.bind.is_unspecified()
    }
}

/// The first address `name` resolves to (IPv4 preferred, as ROS 1 is).
fn resolve(name: &str) -> Result<IpAddr, AddrError> {
    if let Ok(ip) = name.parse::<IpAddr>() {
        return Ok(ip);
    }
    let all: Vec<IpAddr> = (name, 0)
        .to_socket_addrs()
        .map_err(|e| AddrError::Hostname(name.to_owned(), e.to_string()))?
        .map(|a| a.ip())
        .collect();
    all.iter()
        .find(|a| a.is_ipv4())
        .or(all.first())
        .copied()
        .ok_or_else(|| AddrError::Hostname(name.to_owned(), "no address".into()))
}

/// This machine's host name (`localhost` if it has none).
fn host_name() -> String {
    let mut buf = [0u8; 256];
    // SAFETY: gethostname writes at most `buf.len()` bytes into the live local buffer.
    let r = unsafe { libc::gethostname(buf.as_mut_ptr().cast(), buf.len()) };
    let end = buf.iter().position(|b| *b == 0).unwrap_or(buf.len());
    match (r, std::str::from_utf8(&buf[..end])) {
        (0, Ok(name)) if !name.is_empty() => name.to_owned(),
        _ => "localhost".to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ros_ip_is_bound_and_advertised() {
        let a = Address::from_vars(Some("127.0.0.1".into()), None).unwrap();
        assert_eq!(a.host, "127.0.0.1");
        assert_eq!(a.bind, IpAddr::V4(Ipv4Addr::LOCALHOST));
        assert!(!a.is_every_interface());
        assert_eq!(
            Address::from_vars(Some("not-an-ip".into()), None),
            Err(AddrError::Ip("not-an-ip".into()))
        );
    }

    #[test]
    fn ros_hostname_wins_and_resolves_to_its_address() {
        let a = Address::from_vars(Some("10.0.0.9".into()), Some("localhost".into())).unwrap();
        assert_eq!(a.host, "localhost");
        assert!(a.bind.is_loopback(), "{a:?}");
        assert!(matches!(
            Address::from_vars(None, Some("no-such-host.invalid".into())),
            Err(AddrError::Hostname(..))
        ));
    }

    #[test]
    fn neither_set_listens_everywhere_under_the_host_name() {
        let a = Address::from_vars(None, None).unwrap();
        assert!(a.is_every_interface());
        assert!(!a.host.is_empty());
    }
}
