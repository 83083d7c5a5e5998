//! The same-work floor on ROS 2 (r2r), floor_same.rs's topics: `cmd_vel` received → one `set_speed` event frame
//! written to the robot (floor.rs's); each event frame read → its messages published. One message per topic is made
//! once in rcl's native form (frames, limits, covariances, names) and refilled per frame (stamp and values) before
//! `publish_native`, as thymio-rt's odometry publisher does: the least a program can do to publish them.
//!
//! As thymio-rt on ROS 2, the periodic REP-117 sensor topics (proximity, laser, ground, imu, temperature) and
//! `/aseba/events/<name>` are published only while they have a subscriber (one count per topic and message, the
//! driver's rule); the others always. A self-re-exec mode of the bench binary: [`ENV`] gives the relay port, crate::FLOOR_LIMIT_ENV the limit.

use std::time::Duration;

/// Environment variable that turns the bench binary into the ROS 2 same-work floor: the relay port to connect to.
pub const ENV: &str = "THYMIO_BENCH_FLOOR_SAME";

/// Runs the floor against the robot behind 127.0.0.1:`port` for at most `limit`.
#[cfg(feature = "ros2")]
pub fn run(port: u16, limit: Duration) -> Result<(), String> {
    use nrt_ros2::{futures::StreamExt, r2r};
    use std::io::Write;
    let err = |e: r2r::Error| e.to_string();
    let ctx = r2r::Context::create().map_err(err)?;
    let mut node = r2r::Node::create(ctx, "floor_same", "").map_err(err)?;
    let ids = crate::floor_same::Ids::of_script()?;
    let publishers = Publishers::new(&mut node, &ids.names).map_err(err)?;
    let mut cmd_vel = node
        .subscribe::<r2r::geometry_msgs::msg::Twist>("/cmd_vel", r2r::QosProfile::default())
        .map_err(err)?;
    let robot = std::net::TcpStream::connect(("127.0.0.1", port)).map_err(|e| e.to_string())?;
    robot.set_nodelay(true).map_err(|e| e.to_string())?;
    let mut writer = robot.try_clone().map_err(|e| e.to_string())?;
    std::thread::spawn(move || {
        let mut out = Natives::new(publishers);
        crate::floor_same::read_events(robot, ids, |id, args, e, now| {
            out.publish_event(id, args, now);
            if let Some(e) = e {
                out.publish(e, now);
            }
        });
    });
    println!("READY");
    let end = std::time::Instant::now() + limit;
    let mut cx = std::task::Context::from_waker(std::task::Waker::noop());
    while std::time::Instant::now() < end {
        node.spin_once(Duration::from_millis(100));
        while let std::task::Poll::Ready(Some(t)) = cmd_vel.poll_next_unpin(&mut cx) {
            let frame = crate::floor::set_speed_frame(t.linear.x)?;
            writer.write_all(&frame).map_err(|e| e.to_string())?;
        }
    }
    Ok(())
}

/// Without ROS 2 there is no floor.
#[cfg(not(feature = "ros2"))]
pub fn run(_port: u16, _limit: Duration) -> Result<(), String> {
    Err("the same-work floor needs the ros2 feature".into())
}

#[cfg(feature = "ros2")]
use imp::{Natives, Publishers};

#[cfg(feature = "ros2")]
mod imp {
    use crate::floor_same::{self as same, Event};
    use msgs::thymio::{
        BUTTON_NAMES, GROUND_NAMES, GROUND_RANGE_MAX, GROUND_RANGE_MIN, PROXIMITY_NAMES,
        PROXIMITY_RANGE_MAX, PROXIMITY_RANGE_MIN, SENSOR_FOV,
    };
    use nrt_ros2::r2r::{
        self, asebaros_msgs::msg::Event as AsebaEvent, geometry_msgs::msg as gm,
        nav_msgs::msg::Odometry, sensor_msgs::msg as sm, std_msgs::msg as stdm,
        tf2_msgs::msg::TFMessage, thymio_msgs::msg::Comm, NativeMsg, Publisher, QosProfile,
        WrappedTypesupport,
    };
    use std::time::Duration;

    /// A mutable slice over a native message's sequence, made with its length by `NativeMsg::from`.
    macro_rules! seq {
        ($s:expr) => {
            if $s.data.is_null() {
                &mut []
            } else {
                // SAFETY: rcl's sequence of `size` initialised elements made by `NativeMsg::from`, owned by the
                // message, not aliased while it is borrowed mutably here.
                unsafe { std::slice::from_raw_parts_mut($s.data, $s.size) }
            }
        };
    }

    /// The publishers, one per topic of [`same::topics`].
    pub struct Publishers {
        odom: Publisher<Odometry>,
        tf: Publisher<TFMessage>,
        joints: Publisher<sm::JointState>,
        proximity: Vec<Publisher<sm::Range>>,
        laser: Publisher<sm::LaserScan>,
        ground: Vec<Publisher<sm::Range>>,
        imu: Publisher<sm::Imu>,
        tap: Publisher<stdm::Empty>,
        temperature: Publisher<sm::Temperature>,
        sound: Publisher<stdm::Float32>,
        remote: Publisher<stdm::Int8>,
        buttons: Publisher<sm::Joy>,
        button: Vec<Publisher<stdm::Bool>>,
        comm: Publisher<Comm>,
        /// `/aseba/events/<name>` by event id.
        events: Vec<Publisher<AsebaEvent>>,
    }

    impl Publishers {
        /// Made on `node` (ROS-Thymio's reliable profile, as the driver's defaults) for the script's event `names`.
        pub fn new(node: &mut r2r::Node, names: &[String]) -> Result<Publishers, r2r::Error> {
            let qos = QosProfile::default;
            let mut range = |leaf: String| node.create_publisher::<sm::Range>(&leaf, qos());
            let proximity = PROXIMITY_NAMES
                .iter()
                .map(|n| range(format!("/proximity/{n}")))
                .collect::<Result<_, _>>()?;
            let ground = GROUND_NAMES
                .iter()
                .map(|n| range(format!("/ground/{n}")))
                .collect::<Result<_, _>>()?;
            let button = BUTTON_NAMES
                .iter()
                .map(|n| node.create_publisher(&format!("/buttons/{n}"), qos()))
                .collect::<Result<_, _>>()?;
            Ok(Publishers {
                odom: node.create_publisher("/odom", qos())?,
                tf: node.create_publisher("/tf", qos())?,
                joints: node.create_publisher("/joint_states", qos())?,
                proximity,
                laser: node.create_publisher("/proximity/laser", qos())?,
                ground,
                imu: node.create_publisher("/imu", qos())?,
                tap: node.create_publisher("/tap", qos())?,
                temperature: node.create_publisher("/temperature", qos())?,
                sound: node.create_publisher("/sound", qos())?,
                remote: node.create_publisher("/remote", qos())?,
                buttons: node.create_publisher("/buttons", qos())?,
                button,
                comm: node.create_publisher("/comm/rx", qos())?,
                events: names
                    .iter()
                    .map(|n| node.create_publisher(&format!("/aseba/events/{n}"), qos()))
                    .collect::<Result<_, _>>()?,
            })
        }
    }

    /// Whether `p` has a subscriber (the driver's rule for the REP-117 sensor topics; a failed count publishes).
    fn heard<T: WrappedTypesupport + 'static>(p: &Publisher<T>) -> bool {
        p.get_inter_process_subscription_count()
            .map_or(true, |n| n > 0)
    }

    fn header(frame: &str) -> stdm::Header {
        stdm::Header {
            frame_id: frame.into(),
            ..Default::default()
        }
    }

    fn range(frame: String, min: f32, max: f32) -> NativeMsg<sm::Range> {
        NativeMsg::from(&sm::Range {
            header: header(&frame),
            radiation_type: sm::Range::INFRARED as u8,
            field_of_view: SENSOR_FOV,
            min_range: min,
            max_range: max,
            range: f32::INFINITY,
            ..Default::default()
        })
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

    /// One native message per topic, made once, and the publishers.
    pub struct Natives {
        p: Publishers,
        odom: NativeMsg<Odometry>,
        tf: NativeMsg<TFMessage>,
        joints: NativeMsg<sm::JointState>,
        proximity: Vec<NativeMsg<sm::Range>>,
        laser: NativeMsg<sm::LaserScan>,
        ground: Vec<NativeMsg<sm::Range>>,
        imu: NativeMsg<sm::Imu>,
        tap: NativeMsg<stdm::Empty>,
        temperature: NativeMsg<sm::Temperature>,
        sound: NativeMsg<stdm::Float32>,
        remote: NativeMsg<stdm::Int8>,
        buttons: NativeMsg<sm::Joy>,
        button: NativeMsg<stdm::Bool>,
        comm: NativeMsg<Comm>,
        /// Refilled (its data's length varies: not in rcl's native form, as the driver's).
        event: AsebaEvent,
    }

    impl Natives {
        pub fn new(p: Publishers) -> Natives {
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
            imu.orientation_covariance[0] = -1.0;
            imu.angular_velocity_covariance[0] = -1.0;
            for i in [0, 4, 8] {
                imu.linear_acceleration_covariance[i] = 0.07;
            }
            let (angle_min, step) = same::LASER_ANGLES;
            Natives {
                odom: NativeMsg::from(&odom),
                tf: NativeMsg::from(&TFMessage { transforms }),
                joints: NativeMsg::from(&sm::JointState {
                    header: header(""),
                    name: same::WHEEL_JOINTS.map(String::from).into(),
                    position: vec![0.0; 2],
                    velocity: vec![0.0; 2],
                    effort: Vec::new(),
                }),
                proximity: (0..PROXIMITY_NAMES.len())
                    .map(|i| {
                        let frame = same::proximity_frame(i);
                        range(frame, PROXIMITY_RANGE_MIN, PROXIMITY_RANGE_MAX)
                    })
                    .collect(),
                laser: NativeMsg::from(&sm::LaserScan {
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
                }),
                ground: (0..GROUND_NAMES.len())
                    .map(|i| range(same::ground_frame(i), GROUND_RANGE_MIN, GROUND_RANGE_MAX))
                    .collect(),
                imu: NativeMsg::from(&imu),
                tap: NativeMsg::from(&stdm::Empty::default()),
                temperature: NativeMsg::from(&sm::Temperature {
                    header: header(same::BASE_FRAME),
                    variance: 0.01,
                    ..Default::default()
                }),
                sound: NativeMsg::from(&stdm::Float32::default()),
                remote: NativeMsg::from(&stdm::Int8::default()),
                buttons: NativeMsg::from(&sm::Joy {
                    header: header(""),
                    axes: Vec::new(),
                    buttons: vec![0; 5],
                }),
                button: NativeMsg::from(&stdm::Bool::default()),
                comm: NativeMsg::from(&Comm::default()),
                event: AsebaEvent {
                    source: 1,
                    ..Default::default()
                },
                p,
            }
        }

        /// Publishes event `id` with `args`, read at `now`, on `/aseba/events/<name>` while it has a subscriber.
        pub fn publish_event(&mut self, id: u16, args: &[i16], now: Duration) {
            let Some(p) = self.p.events.get(id as usize) else {
                return;
            };
            if heard(p) {
                let m = &mut self.event;
                (m.stamp.sec, m.stamp.nanosec) = (now.as_secs() as i32, now.subsec_nanos());
                m.data.clear();
                m.data.extend_from_slice(args);
                let _ = p.publish(m);
            }
        }

        /// Publishes what `e`, read at `now` (since the epoch), gives; errors are ignored (as the floor's odom).
        pub fn publish(&mut self, e: Event, now: Duration) {
            let (sec, nanosec) = (now.as_secs() as i32, now.subsec_nanos());
            macro_rules! stamp {
                ($h:expr) => {{
                    $h.stamp.sec = sec;
                    $h.stamp.nanosec = nanosec;
                }};
            }
            let p = &self.p;
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
                    let o = &mut *self.odom;
                    stamp!(o.header);
                    o.pose.pose.position.x = x;
                    (o.pose.pose.orientation.z, o.pose.pose.orientation.w) = (qz, qw);
                    o.twist.twist.linear.x = v;
                    o.twist.twist.angular.z = w;
                    let _ = p.odom.publish_native(&mut self.odom);
                    let tfs = seq!(self.tf.transforms);
                    for (i, t) in tfs.iter_mut().enumerate() {
                        stamp!(t.header);
                        if i == 0 {
                            t.transform.translation.x = x;
                            (t.transform.rotation.z, t.transform.rotation.w) = (qz, qw);
                        } else {
                            let (s, c) = (wheel_pos[i - 1] / 2.0).sin_cos();
                            (t.transform.rotation.y, t.transform.rotation.w) = (s, c);
                        }
                    }
                    let _ = p.tf.publish_native(&mut self.tf);
                    let j = &mut *self.joints;
                    stamp!(j.header);
                    seq!(j.position).copy_from_slice(&wheel_pos);
                    seq!(j.velocity).copy_from_slice(&wheel_vel);
                    let _ = p.joints.publish_native(&mut self.joints);
                }
                Event::Proximity { ranges, raw } => {
                    for ((msg, publisher), r) in
                        self.proximity.iter_mut().zip(&p.proximity).zip(ranges)
                    {
                        if heard(publisher) {
                            stamp!(msg.header);
                            msg.range = r;
                            let _ = publisher.publish_native(msg);
                        }
                    }
                    if heard(&p.laser) {
                        let (rays, intensities) = same::laser(&ranges, &raw);
                        let l = &mut *self.laser;
                        stamp!(l.header);
                        seq!(l.ranges).copy_from_slice(&rays);
                        seq!(l.intensities).copy_from_slice(&intensities);
                        let _ = p.laser.publish_native(&mut self.laser);
                    }
                }
                Event::Ground(ranges) => {
                    for ((msg, publisher), r) in self.ground.iter_mut().zip(&p.ground).zip(ranges) {
                        if heard(publisher) {
                            stamp!(msg.header);
                            msg.range = r;
                            let _ = publisher.publish_native(msg);
                        }
                    }
                }
                Event::Imu(acc) => {
                    if heard(&p.imu) {
                        let m = &mut *self.imu;
                        stamp!(m.header);
                        let a = &mut m.linear_acceleration;
                        (a.x, a.y, a.z) = (acc[0], acc[1], acc[2]);
                        let _ = p.imu.publish_native(&mut self.imu);
                    }
                }
                Event::Tap => {
                    let _ = p.tap.publish_native(&mut self.tap);
                }
                Event::Temperature(t) => {
                    if heard(&p.temperature) {
                        stamp!(self.temperature.header);
                        self.temperature.temperature = t;
                        let _ = p.temperature.publish_native(&mut self.temperature);
                    }
                }
                Event::Sound(level) => {
                    self.sound.data = level;
                    let _ = p.sound.publish_native(&mut self.sound);
                }
                Event::Remote(command) => {
                    self.remote.data = command;
                    let _ = p.remote.publish_native(&mut self.remote);
                }
                Event::Comm {
                    value,
                    payloads,
                    intensities,
                } => {
                    let c = &mut *self.comm;
                    (c.value, c.payloads, c.intensities) = (value, payloads, intensities);
                    let _ = p.comm.publish_native(&mut self.comm);
                }
                Event::Buttons(values) => {
                    let b = &mut *self.buttons;
                    stamp!(b.header);
                    seq!(b.buttons).copy_from_slice(&values);
                    let _ = p.buttons.publish_native(&mut self.buttons);
                }
                Event::Button(i, pressed) => {
                    self.button.data = pressed;
                    let _ = p.button[i].publish_native(&mut self.button);
                }
            }
        }
    }
}
