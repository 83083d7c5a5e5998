//! `thymio-rt sim`: serve simulated Thymio-II robots to Aseba tools, like Aseba Playground
//! (one TCP port per robot) or a USB Thymio (a pseudo-terminal).

use super::{CliError, CliResult};
use msgs::target::Target;
use sim::server::{serve_pty, serve_tcp, Server};
use sim::thymio::{Arena, Variant};
use sim::world::{World, WorldConfig};
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::time::Duration;

/// Arguments of `thymio-rt sim`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Number of robots (node ids FIRST_ID…FIRST_ID+N-1).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=1024))]
    robots: u16,
    /// Node id of the first robot (another process's robots on the same Aseba network need
    /// other ids).
    #[arg(long, default_value_t = 1, value_parser = clap::value_parser!(u16).range(1..=31744))]
    first_id: u16,
    /// TCP address of the first robot (`tcp:127.0.0.1:PORT`, or a Dashel `tcp:host=…;port=…`);
    /// robot i listens on PORT + i. Default tcp:127.0.0.1:33333.
    #[arg(long, value_name = "tcp:HOST:PORT")]
    listen: Option<String>,
    /// Also serve all the robots as one bus on a pseudo-terminal (prints its path).
    #[arg(long)]
    pty: bool,
    /// Protocol version announced: 9 (firmware 14) or 5 (for the community Aseba tools).
    #[arg(long, default_value_t = 9, value_parser = parse_protocol)]
    protocol: u16,
    /// Simulate the Thymio of Aseba Playground instead of firmware 14.
    #[arg(long)]
    playground: bool,
    /// Arena file (YAML: walls, obstacles, ground pattern, start poses).
    #[arg(long)]
    arena: Option<PathBuf>,
    /// Random seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Run as fast as possible instead of in real time.
    #[arg(long)]
    fast: bool,
    /// Stop after this many seconds (default: until interrupted).
    #[arg(long)]
    duration: Option<f64>,
}

fn parse_protocol(s: &str) -> Result<u16, String> {
    match s {
        "5" => Ok(5),
        "9" => Ok(9),
        _ => Err(format!("protocol {s}: 5 or 9")),
    }
}

fn listen_addr(spec: &str) -> Result<SocketAddr, CliError> {
    if let Some(rest) = spec.strip_prefix("tcp:") {
        if let Ok(addr) = rest.parse::<SocketAddr>() {
            return Ok(addr);
        }
    }
    match spec.parse::<Target>() {
        Ok(Target::Tcp { host, port }) => {
            let ip: IpAddr = if host == "localhost" {
                IpAddr::from([127, 0, 0, 1])
            } else {
                host.parse().map_err(|_| {
                    CliError::new(format!("--listen {spec}: host must be an IP address"))
                })?
            };
            Ok(SocketAddr::new(ip, port))
        }
        _ => Err(CliError::new(format!(
            "--listen {spec}: expected tcp:HOST:PORT or tcp:host=HOST;port=PORT"
        ))),
    }
}

/// Entry point of `thymio-rt sim`.
pub fn main(args: Args) -> CliResult {
    let arena = match &args.arena {
        Some(p) => Arena::load(p).map_err(CliError::new)?,
        None => Arena::default(),
    };
    let config = WorldConfig {
        robots: args.robots as usize,
        first_id: args.first_id,
        seed: args.seed,
        arena,
        protocol: args.protocol,
        variant: if args.playground {
            Variant::Playground
        } else {
            Variant::Firmware14
        },
        realtime: !args.fast,
        wheels: sim::thymio::WheelSpec::IDEAL,
    };
    let world = World::new(&config)
        .spawn()
        .map_err(|e| CliError::new(format!("cannot start the simulation thread: {e}")))?;
    let base = listen_addr(args.listen.as_deref().unwrap_or("tcp:127.0.0.1:33333"))?;
    let mut servers: Vec<Server> = Vec::new();
    for i in 0..config.robots {
        let port = base
            .port()
            .checked_add(i as u16)
            .ok_or_else(|| CliError::new("TCP ports beyond 65535"))?;
        let addr = SocketAddr::new(base.ip(), port);
        let server = serve_tcp(&world, vec![i], addr)
            .map_err(|e| CliError::new(format!("cannot listen on {addr}: {e}")))?;
        println!(
            "robot {} (node {}) on {}",
            i,
            config.first_id + i as u16,
            server.endpoint
        );
        servers.push(server);
    }
    if args.pty {
        let (server, path) = serve_pty(&world, (0..config.robots).collect())
            .map_err(|e| CliError::new(format!("cannot open a pseudo-terminal: {e}")))?;
        println!("all robots on ser:device={}", path.display());
        servers.push(server);
    }
    tracing::info!(
        robots = config.robots,
        protocol = config.protocol,
        "simulation running"
    );
    let deadline = args
        .duration
        .map(|s| std::time::Instant::now() + Duration::from_secs_f64(s.max(0.0)));
    rt::signals::install_stop_handlers().map_err(CliError::new)?;
    loop {
        if rt::signals::stop_signalled() || deadline.is_some_and(|d| std::time::Instant::now() >= d)
        {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    for mut s in servers {
        s.stop();
    }
    drop(world);
    Ok(())
}
