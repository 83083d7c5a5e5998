//! The same-work floor on ROS 1, on the driver's own transport (nrt-ros1's `net`, as floor_ros1.rs): floor_same.rs's
//! topics, `cmd_vel` received → one `set_speed` event frame written to the robot; each event frame read → its
//! messages published. One message per topic is made once (frames, limits, covariances, names) and refilled per
//! frame (stamp and values) before `publish` serialises it. As thymio-rt's ROS 1 front end, every topic is
//! published whether or not it has a subscriber, `/aseba/events/<name>` (asebaros_msgs/Event) included. A self-re-exec mode of the bench binary: [`ENV`] gives the relay
//! port, crate::FLOOR_LIMIT_ENV the limit; threads as floor_ros1.rs's.

use std::time::Duration;

/// Environment variable that turns the bench binary into the ROS 1 same-work floor: the relay port to connect to.
pub const ENV: &str = "THYMIO_BENCH_FLOOR_SAME_ROS1";

/// Runs the floor against the robot behind 127.0.0.1:`port` for at most `limit` or until SIGINT (then unregistered
/// from the master).
#[cfg(feature = "ros1")]
pub fn run(port: u16, limit: Duration) -> Result<(), String> {
    use crate::floor::set_speed_frame;
    use nrt_ros1::net::{Address, Limits, Node};
    use nrt_ros1::ros1_msgs::geometry_msgs::Twist;
    use std::io::Write;
    let master = std::env::var("ROS_MASTER_URI").map_err(|_| "ROS_MASTER_URI is not set")?;
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .map_err(|e| format!("tokio runtime: {e}"))?;
    let address = Address::from_env().map_err(|e| format!("ROS_IP / ROS_HOSTNAME: {e}"))?;
    let node = Node::start(
        rt.handle().clone(),
        &master,
        "/floor_same_ros1",
        address,
        Limits::default(),
    )
    .map_err(|e| format!("ROS 1 node on {master}: {e}"))?;
    let ids = crate::floor_same::Ids::of_script()?;
    let out = imp::Outputs::new(&node, &ids.names).map_err(|e| format!("advertising: {e}"))?;
    let mut cmd_vel = node
        .subscribe::<Twist>("/cmd_vel", 100)
        .map_err(|e| format!("cmd_vel subscription: {e}"))?;
    let robot = std::net::TcpStream::connect(("127.0.0.1", port))
        .map_err(|e| format!("the robot's relay on port {port}: {e}"))?;
    robot
        .set_nodelay(true)
        .map_err(|e| format!("TCP_NODELAY to the robot: {e}"))?;
    let mut writer = robot
        .try_clone()
        .map_err(|e| format!("the robot's socket: {e}"))?;
    let reader = robot
        .try_clone()
        .map_err(|e| format!("the robot's socket: {e}"))?;
    let publisher = std::thread::spawn(move || {
        let mut out = out;
        crate::floor_same::read_events(reader, ids, |id, args, e, now| {
            out.publish_event(id, args, now);
            if let Some(e) = e {
                out.publish(e, now);
            }
        });
        // the publishers dropped here: unadvertised, off the runtime
    });
    println!("READY");
    let served = rt.block_on(async {
        let serve = async {
            while let Some(t) = cmd_vel.next().await {
                let t = t.map_err(|e| format!("cmd_vel: {e}"))?;
                writer
                    .write_all(&set_speed_frame(t.linear.x)?)
                    .map_err(|e| format!("writing to the robot: {e}"))?;
            }
            Ok::<(), String>(())
        };
        tokio::select! {
            r = serve => r,
            _ = tokio::signal::ctrl_c() => Ok(()),
            _ = tokio::time::sleep(limit) => Ok(()),
        }
    });
    let _ = robot.shutdown(std::net::Shutdown::Both);
    let joined = publisher
        .join()
        .map_err(|_| "the publishing thread panicked".to_owned());
    drop(cmd_vel);
    drop(node);
    rt.shutdown_timeout(Duration::from_secs(2));
    served.and(joined)
}

/// Without ROS 1 there is no ROS 1 floor.
#[cfg(not(feature = "ros1"))]
pub fn run(_port: u16, _limit: Duration) -> Result<(), String> {
    Err("the ROS 1 same-work floor needs the ros1 feature".into())
}

#[cfg(feature = "ros1")]
mod imp {
    use crate::floor_same::{self as same, Event};
    use msgs::thymio::{
        BUTTON_NAMES, GROUND_NAMES, GROUND_RANGE_MAX, GROUND_RANGE_MIN, PROXIMITY_NAMES,
        PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN, SENSOR_FOV,
    };
    use nrt_ros1::net::{NetError, Node, Publisher};
    use nrt_ros1::ros1_msgs::{
        asebaros_msgs::Event as AsebaEvent, geometry_msgs as gm, nav_msgs::Odometry,
        sensor_msgs as sm, std_msgs, tf2_msgs::TFMessage, thymio_msgs::Comm,
    };
    use std::time::Duration;

    /// One topic: its publisher and its message, made once.
    struct Out<T> {
        p: Publisher<T>,
        m: T,
    }

    /// `Out` of `$m` advertised on `$topic` with queue `$depth` (a macro: the message bound of nrt-ros1's `net` is
    /// roslibrust's, which the bench does not depend on).
    macro_rules! out {
        ($node:expr, $topic:expr, $depth:expr, $m:expr) => {
            Out {
                p: $node.advertise($topic, $depth, false)?,
                m: $m,
            }
        };
    }

    /// Publishes an `Out`'s message (errors ignored, as the floor's odom).
    macro_rules! publish {
        ($o:expr) => {{
            let _ = $o.p.publish(&$o.m);
        }};
    }

    fn header(frame: &str) -> std_msgs::Header {
        std_msgs::Header {
            frame_id: frame.into(),
            ..Default::default()
        }
    }

    fn range(frame: String, min: f32, max: f32) -> sm::Range {
        sm::Range {
            header: header(&frame),
            radiation_type: 1,
            field_of_view: SENSOR_FOV,
            min_range: min,
            max_range: max,
            range: f32::INFINITY,
        }
    }

    fn transform(parent: &str, child: &str, y: f64) -> gm::TransformStamped {
        let mut t = gm::TransformStamped {
            header: header(parent),
            child_frame_id: child.into(),
            ..Default::default()
        };
        t.transform.translation.y = y;
        t.transform.rotation.w = 1.0;
        t
    }

    /// Every topic of [`same::topics`].
    pub struct Outputs {
        odom: Out<Odometry>,
        tf: Out<TFMessage>,
        joints: Out<sm::JointState>,
        proximity: Vec<Out<sm::Range>>,
        laser: Out<sm::LaserScan>,
        ground: Vec<Out<sm::Range>>,
        imu: Out<sm::Imu>,
        tap: Out<std_msgs::Empty>,
        temperature: Out<sm::Temperature>,
        sound: Out<std_msgs::Float32>,
        remote: Out<std_msgs::Int8>,
        buttons: Out<sm::Joy>,
        button: Vec<Out<std_msgs::Bool>>,
        comm: Out<Comm>,
        /// `/aseba/events/<name>` by event id (one message, refilled).
        events: Vec<Publisher<AsebaEvent>>,
        event: AsebaEvent,
    }

    impl Outputs {
        /// Advertised on `node` (odometry's queue as floor_ros1.rs's, the sensors' 1 as the driver's).
        pub fn new(node: &Node, names: &[String]) -> Result<Outputs, NetError> {
            let mut odom = Odometry {
                header: header(same::ODOM_FRAME),
                child_frame_id: same::BASE_FRAME.into(),
                ..Default::default()
            };
            odom.pose.pose.orientation.w = 1.0;
            for i in [0, 7, 14, 21, 28, 35] {
                odom.pose.covariance[i] = 1e-3;
                odom.twist.covariance[i] = 1e-3;
            }
            let half = same::AXIS / 2.0;
            let mut transforms = vec![transform(same::ODOM_FRAME, same::BASE_FRAME, 0.0)];
            for (link, y) in same::WHEEL_LINKS.iter().zip([half, -half]) {
                transforms.push(transform(same::BASE_FRAME, link, y));
            }
            let mut imu = sm::Imu {
                header: header(same::BASE_FRAME),
                ..Default::default()
            };
            imu.orientation.w = 1.0;
            imu.orientation_covariance[0] = -1.0;
            imu.angular_velocity_covariance[0] = -1.0;
            for i in [0, 4, 8] {
                imu.linear_acceleration_covariance[i] = 0.07;
            }
            let (angle_min, step) = same::LASER_ANGLES;
            let laser = sm::LaserScan {
                header: header(same::LASER_FRAME),
                angle_min,
                angle_max: -angle_min,
                angle_increment: step,
                scan_time: 0.1,
                range_min: PROXIMITY_RANGE_MIN + same::LASER_SHIFT,
                range_max: PROXIMITY_RANGE_MAX + same::LASER_SHIFT,
                ranges: vec![0.0; 5],
                intensities: vec![0.0; 5],
                ..Default::default()
            };
            let joints = sm::JointState {
                header: header(""),
                name: same::WHEEL_JOINTS.map(String::from).into(),
                position: vec![0.0; 2],
                velocity: vec![0.0; 2],
                effort: Vec::new(),
            };
            let proximity = (0..PROXIMITY_NAMES.len())
                .map(|i| -> Result<_, NetError> {
                    let m = range(
                        same::proximity_frame(i),
                        PROXIMITY_RANGE_MIN,
                        PROXIMITY_RANGE_MAX,
                    );
                    Ok(out!(
                        node,
                        &format!("/proximity/{}", PROXIMITY_NAMES[i]),
                        1,
                        m
                    ))
                })
                .collect::<Result<_, _>>()?;
            let ground = (0..GROUND_NAMES.len())
                .map(|i| -> Result<_, NetError> {
                    let m = range(same::ground_frame(i), GROUND_RANGE_MIN, GROUND_RANGE_MAX);
                    Ok(out!(node, &format!("/ground/{}", GROUND_NAMES[i]), 1, m))
                })
                .collect::<Result<_, _>>()?;
            let button = BUTTON_NAMES
                .iter()
                .map(|n| -> Result<_, NetError> {
                    Ok(out!(node, &format!("/buttons/{n}"), 1, Default::default()))
                })
                .collect::<Result<_, NetError>>()?;
            let temperature = sm::Temperature {
                header: header(same::BASE_FRAME),
                variance: 0.01,
                ..Default::default()
            };
            let joy = sm::Joy {
                header: header(""),
                axes: Vec::new(),
                buttons: vec![0; 5],
            };
            Ok(Outputs {
                odom: out!(node, "/odom", 100, odom),
                tf: out!(node, "/tf", 100, TFMessage { transforms }),
                joints: out!(node, "/joint_states", 100, joints),
                proximity,
                laser: out!(node, "/proximity/laser", 1, laser),
                ground,
                imu: out!(node, "/imu", 1, imu),
                tap: out!(node, "/tap", 1, Default::default()),
                temperature: out!(node, "/temperature", 1, temperature),
                sound: out!(node, "/sound", 1, Default::default()),
                remote: out!(node, "/remote", 1, Default::default()),
                buttons: out!(node, "/buttons", 1, joy),
                button,
                comm: out!(node, "/comm/rx", 1, Default::default()),
                events: names
                    .iter()
                    .map(|n| node.advertise(&format!("/aseba/events/{n}"), 100, false))
                    .collect::<Result<_, _>>()?,
                event: AsebaEvent {
                    source: 1,
                    ..Default::default()
                },
            })
        }

        /// Publishes event `id` with `args`, read at `now`, on `/aseba/events/<name>`.
        pub fn publish_event(&mut self, id: u16, args: &[i16], now: Duration) {
            if let Some(p) = self.events.get(id as usize) {
                let m = &mut self.event;
                (m.stamp.secs, m.stamp.nsecs) = (now.as_secs() as i32, now.subsec_nanos() as i32);
                m.data.clear();
                m.data.extend_from_slice(args);
                let _ = p.publish(m);
            }
        }

        /// Publishes what `e`, read at `now` (since the epoch), gives; errors are ignored (as the floor's odom).
        pub fn publish(&mut self, e: Event, now: Duration) {
            let (secs, nsecs) = (now.as_secs() as i32, now.subsec_nanos() as i32);
            macro_rules! stamp {
                ($h:expr) => {{
                    $h.stamp.secs = secs;
                    $h.stamp.nsecs = nsecs;
                }};
            }
            match e {
                Event::Odometry {
                    x,
                    yaw,
                    v,
                    w,
                    wheel_pos,
                    wheel_vel,
                } => {
                    let (qz, qw) = (yaw / 2.0).sin_cos();
                    let o = &mut self.odom.m;
                    stamp!(o.header);
                    o.pose.pose.position.x = x;
                    (o.pose.pose.orientation.z, o.pose.pose.orientation.w) = (qz, qw);
                    o.twist.twist.linear.x = v;
                    o.twist.twist.angular.z = w;
                    publish!(self.odom);
                    for (i, t) in self.tf.m.transforms.iter_mut().enumerate() {
                        stamp!(t.header);
                        if i == 0 {
                            t.transform.translation.x = x;
                            (t.transform.rotation.z, t.transform.rotation.w) = (qz, qw);
                        } else {
                            let (s, c) = (wheel_pos[i - 1] / 2.0).sin_cos();
                            (t.transform.rotation.y, t.transform.rotation.w) = (s, c);
                        }
                    }
                    publish!(self.tf);
                    let j = &mut self.joints.m;
                    stamp!(j.header);
                    j.position.copy_from_slice(&wheel_pos);
                    j.velocity.copy_from_slice(&wheel_vel);
                    publish!(self.joints);
                }
                Event::Proximity { ranges, raw } => {
                    for (out, r) in self.proximity.iter_mut().zip(ranges) {
                        stamp!(out.m.header);
                        out.m.range = r;
                        publish!(out);
                    }
                    let (rays, intensities) = same::laser(&ranges, &raw);
                    let l = &mut self.laser.m;
                    stamp!(l.header);
                    l.ranges.copy_from_slice(&rays);
                    l.intensities.copy_from_slice(&intensities);
                    publish!(self.laser);
                }
                Event::Ground(ranges) => {
                    for (out, r) in self.ground.iter_mut().zip(ranges) {
                        stamp!(out.m.header);
                        out.m.range = r;
                        publish!(out);
                    }
                }
                Event::Imu(acc) => {
                    stamp!(self.imu.m.header);
                    let a = &mut self.imu.m.linear_acceleration;
                    (a.x, a.y, a.z) = (acc[0], acc[1], acc[2]);
                    publish!(self.imu);
                }
                Event::Tap => publish!(self.tap),
                Event::Temperature(t) => {
                    stamp!(self.temperature.m.header);
                    self.temperature.m.temperature = t;
                    publish!(self.temperature);
                }
                Event::Sound(level) => {
                    self.sound.m.data = level;
                    publish!(self.sound);
                }
                Event::Remote(command) => {
                    self.remote.m.data = command;
                    publish!(self.remote);
                }
                Event::Comm {
                    value,
                    payloads,
                    intensities,
                } => {
                    let c = &mut self.comm.m;
                    (c.value, c.payloads, c.intensities) = (value, payloads, intensities);
                    publish!(self.comm);
                }
                Event::Buttons(values) => {
                    stamp!(self.buttons.m.header);
                    self.buttons.m.buttons.copy_from_slice(&values);
                    publish!(self.buttons);
                }
                Event::Button(i, pressed) => {
                    self.button[i].m.data = pressed;
                    publish!(self.button[i]);
                }
            }
        }
    }
}
