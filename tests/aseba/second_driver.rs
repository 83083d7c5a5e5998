//! A second driver on the same TCP robot (issue 23 item 7): two `thymio-rt run` connected to
//! one Aseba Playground robot through its `asebaswitch` both command its wheels. Before, neither
//! noticed; now each one that drives the robot says so loudly (an error naming the node and
//! the source) once the other one's wheel commands reach its link — and one driver alone,
//! with the switch's other traffic, says nothing.

use crate::common;

use common::Proc;
use std::path::Path;
use std::time::Duration;

const ALARM: &str = "another Aseba client";

fn driver(config: &Path) -> Proc {
    let mut cmd = common::thymio_rt();
    cmd.arg("run")
        .arg("-c")
        .arg(config)
        .args(["--no-ros", "--switch-port", "0", "--duration", "90"])
        .args(["--cmd-vel", "0.05,0"]);
    Proc::spawn("thymio-rt run", cmd)
}

#[test]
fn a_second_driver_on_the_same_robot_is_reported_by_the_first() {
    let dir = tempfile::tempdir().unwrap();
    let port = common::free_port();
    let Some(_playground) = common::playground(dir.path(), port, 1) else {
        return; // peer missing, run opted out: skip recorded
    };
    let config = dir.path().join("pg.yaml");
    std::fs::write(
        &config,
        format!(
            "targets: [\"tcp:host=127.0.0.1;port={port}\"]\nscript: {{path: {}}}\nsimulation: true\nrt: {{priority: 0, lock_memory: false}}\n",
            common::root()
                .join("config/aseba/thymio_ros_playground.aesl")
                .display()
        ),
    )
    .unwrap();
    let mut first = driver(&config);
    first.wait_line(Duration::from_secs(60), |l| l.contains("is robot"));
    // driving alone (set_speed renewed every 0.1 s, odometry, the switch's traffic): no alarm
    first.drain();
    assert!(
        !first.seen.iter().any(|l| l.contains(ALARM)),
        "an alarm without a second driver:\n{}",
        first.seen.join("\n")
    );
    let mut second = driver(&config);
    second.wait_line(Duration::from_secs(60), |l| l.contains("is robot"));
    let alarm = first.wait_line(Duration::from_secs(30), |l| l.contains(ALARM));
    assert!(alarm.contains("ERROR"), "{alarm}");
    assert!(alarm.contains("node 1"), "{alarm}");
    assert!(alarm.contains("set_speed"), "{alarm}");
    eprintln!("first driver: {alarm}");
    drop(second);
}
