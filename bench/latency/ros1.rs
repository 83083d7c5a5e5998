//! The ROS 1 row of the end-to-end section: Debian's rosmaster on a free loopback port, the parameters
//! thymio-rt needs on Aseba Playground set on its parameter server (ROS 1 names: `/asebaros/script/path`), and
//! the environment of the driver (`thymio-rt run --ros1 --no-ros`) and of the rospy client
//! (bench/latency/e2e_client_ros1.py).

use crate::procs::Proc;
use std::process::Command;

/// The system Python that has Debian's rospy.
pub const PYTHON: &str = "/usr/bin/python3";

/// Why the ROS 1 row cannot run, if it cannot.
pub fn missing() -> Option<String> {
    let ok = std::path::Path::new("/usr/bin/rosmaster").exists()
        && Command::new(PYTHON)
            .args(["-c", "import rospy, rosgraph, nav_msgs.msg"])
            .status()
            .is_ok_and(|s| s.success());
    (!ok).then(|| "Debian's rosmaster/rospy are not installed: run scripts/setup-ros1.sh".into())
}

/// Puts a ROS 1 process on the master at `port`, on loopback.
pub fn env(cmd: &mut Command, port: u16) {
    cmd.env("ROS_MASTER_URI", format!("http://127.0.0.1:{port}"))
        .env("ROS_IP", "127.0.0.1")
        .env_remove("ROS_HOSTNAME")
        .env_remove("ROS_NAMESPACE")
        .env(
            "ROS_HOME",
            std::env::temp_dir().join(format!("bench-ros1-{port}")),
        );
}

/// A rosmaster on 127.0.0.1:`port` with the ROS 1 names of `params` (`script.path:=X` → `/asebaros/script/path`)
/// set, once it answers.
pub fn master(port: u16, params: &[String]) -> Result<Proc, String> {
    let mut c = Command::new(PYTHON);
    c.args(["/usr/bin/rosmaster", "--core", "-p", &port.to_string()]);
    env(&mut c, port);
    let p = Proc::spawn("rosmaster", c);
    let mut script = String::from(
        "import rosgraph, sys, time\nm = rosgraph.Master('/latency_bench')\nfor _ in range(200):\n    \
         try:\n        m.getPid(); break\n    except Exception:\n        time.sleep(0.05)\n",
    );
    for p in params {
        let (name, value) = p
            .split_once(":=")
            .ok_or_else(|| format!("parameter {p}: no :="))?;
        let value = match value.parse::<i64>() {
            Ok(i) => i.to_string(),
            Err(_) => format!("{value:?}"),
        };
        script.push_str(&format!(
            "m.setParam('/asebaros/{}', {value})\n",
            name.replace('.', "/")
        ));
    }
    let mut c = Command::new(PYTHON);
    c.args(["-c", &script]);
    env(&mut c, port);
    let out = c
        .output()
        .map_err(|e| format!("cannot run {PYTHON}: {e}"))?;
    if !out.status.success() {
        return Err(format!(
            "cannot set the parameters on the ROS 1 master: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(p)
}
