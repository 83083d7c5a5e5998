use super::*;
use nrt_engine::thymio::calibration::Calibration;
use nrt_engine::thymio::params::Ranges;
use std::collections::BTreeSet;
use std::time::Duration;

fn frames() -> Frames {
    Frames::new(
        "t1",
        "odom",
        "base_link",
        ["left_wheel_joint", "right_wheel_joint"],
    )
}

fn collect(
    f: impl FnOnce(&mut dyn FnMut(SensorTopic, SensorMessage)),
) -> Vec<(SensorTopic, SensorMessage)> {
    let mut out = Vec::new();
    f(&mut |t, m| out.push((t, m)));
    out
}

fn every_event() -> Vec<RobotEvent> {
    vec![
        RobotEvent::Ground([100, 900]),
        RobotEvent::GroundReflected([1, 2]),
        RobotEvent::GroundAmbient([1, 2]),
        RobotEvent::Accelerometer([1, -2, 21]),
        RobotEvent::Tap,
        RobotEvent::Temperature(245),
        RobotEvent::Sound(120),
        RobotEvent::Remote {
            address: 0,
            command: 12,
        },
        RobotEvent::Buttons([0, 1, 0, 0, 1]),
        RobotEvent::Button {
            index: 3,
            pressed: true,
        },
        RobotEvent::Comm {
            value: 7,
            payloads: [1; PROXIMITY_COUNT],
            intensities: [2; PROXIMITY_COUNT],
        },
    ]
}

#[test]
fn the_catalogue_names_every_topic_once_with_ros_thymios_leaves() {
    let leaves: Vec<String> = SensorTopic::all().map(SensorTopic::leaf).collect();
    let unique: BTreeSet<&String> = leaves.iter().collect();
    assert_eq!(unique.len(), leaves.len(), "{leaves:?}");
    for leaf in [
        "proximity/left",
        "proximity/center",
        "proximity/rear_right",
        "proximity/laser",
        "ground/left",
        "ground/right",
        "imu",
        "tap",
        "temperature",
        "sound",
        "remote",
        "buttons",
        "buttons/center",
        "comm/rx",
    ] {
        assert!(leaves.iter().any(|l| l == leaf), "{leaf} in {leaves:?}");
    }
    let sensor_data: Vec<String> = SensorTopic::all()
        .filter(|t| t.is_sensor_data())
        .map(SensorTopic::leaf)
        .collect();
    assert_eq!(sensor_data.len(), 7 + 1 + 2 + 2, "{sensor_data:?}");
}

#[test]
fn every_message_has_its_topics_kind() {
    let stamp = Duration::from_secs(5);
    let f = frames();
    let cal = Calibration::simulation();
    let mut seen = BTreeSet::new();
    let mut check = |t: SensorTopic, m: SensorMessage| {
        assert_eq!(m.kind(), t.kind(), "{t:?}: {m:?}");
        seen.insert(t);
    };
    proximity_messages(
        &[0, 1000, 2000, 3000, 4000, 0, 100],
        &cal,
        Ranges::Rep117,
        stamp,
        &f,
        |_| true,
        &mut check,
    );
    for e in every_event() {
        event_messages(e, 500, Ranges::Rep117, stamp, &f, |_| true, &mut check);
    }
    // every topic but the buttons not pressed in these events is fed by some input
    let fed: BTreeSet<SensorTopic> = SensorTopic::all()
        .filter(|t| !matches!(t, SensorTopic::Button(i) if *i != 3))
        .collect();
    assert_eq!(seen, fed);
}

#[test]
fn messages_carry_the_layers_content_in_the_robots_frames() {
    let stamp = Duration::from_secs(5);
    let f = frames();
    let got = collect(|out| {
        event_messages(
            RobotEvent::Ground([100, 900]),
            500,
            Ranges::Rep117,
            stamp,
            &f,
            |_| true,
            out,
        )
    });
    assert_eq!(
        got,
        vec![
            (
                SensorTopic::Ground(0),
                SensorMessage::Range(sensors::ground(
                    100,
                    500,
                    stamp,
                    "t1/ground_left_link".into(),
                    Ranges::Rep117
                ))
            ),
            (
                SensorTopic::Ground(1),
                SensorMessage::Range(sensors::ground(
                    900,
                    500,
                    stamp,
                    "t1/ground_right_link".into(),
                    Ranges::Rep117
                ))
            ),
        ]
    );
    let got = collect(|out| {
        event_messages(
            RobotEvent::Temperature(245),
            500,
            Ranges::Rep117,
            stamp,
            &f,
            |_| true,
            out,
        )
    });
    assert_eq!(
        got,
        vec![(
            SensorTopic::Temperature,
            SensorMessage::Temperature(sensors::temperature(245, stamp, "t1/base_link".into()))
        )]
    );
}

#[test]
fn topics_nobody_wants_are_not_built() {
    let stamp = Duration::from_secs(5);
    let f = frames();
    let cal = Calibration::simulation();
    let only_laser = |t: SensorTopic| t == SensorTopic::Laser;
    let got = collect(|out| {
        proximity_messages(
            &[0; PROXIMITY_COUNT],
            &cal,
            Ranges::Rep117,
            stamp,
            &f,
            only_laser,
            out,
        )
    });
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, SensorTopic::Laser);
    let got = collect(|out| {
        event_messages(
            RobotEvent::Tap,
            500,
            Ranges::Rep117,
            stamp,
            &f,
            |_| false,
            out,
        )
    });
    assert!(got.is_empty());
}

#[test]
fn a_button_index_beyond_the_five_is_no_topic() {
    let f = frames();
    let got = collect(|out| {
        event_messages(
            RobotEvent::Button {
                index: 9,
                pressed: true,
            },
            500,
            Ranges::Rep117,
            Duration::ZERO,
            &f,
            |_| true,
            out,
        )
    });
    assert!(got.is_empty());
}

/// `ranges: ros_thymio` reaches every proximity and ground `Range` topic (ROS-Thymio's −1, `min_range`, 1.0, 0.0
/// where the default gives ±inf); the laser scan keeps REP-117's +inf for an empty sector either way.
#[test]
fn ranges_ros_thymio_reaches_every_range_topic_and_not_the_laser() {
    let (f, cal, stamp) = (frames(), Calibration::real(), Duration::ZERO);
    let raw = [0, 0, 5000, 2000, 0, 0, 0];
    let ranges = |mode: Ranges| {
        let mut out = Vec::new();
        proximity_messages(
            &raw,
            &cal,
            mode,
            stamp,
            &f,
            |_| true,
            |t, m| out.push((t, m)),
        );
        event_messages(
            RobotEvent::Ground([20, 900]),
            500,
            mode,
            stamp,
            &f,
            |_| true,
            |t, m| out.push((t, m)),
        );
        out.into_iter()
            .map(|(t, m)| match m {
                SensorMessage::Range(r) => (t, vec![r.range]),
                SensorMessage::LaserScan(s) => (t, s.ranges),
                m => panic!("{t:?}: {m:?}"),
            })
            .collect::<Vec<_>>()
    };
    let (inf, min) = (f32::INFINITY, values::PROXIMITY_RANGE_MIN);
    let rep = ranges(Ranges::Rep117);
    let ros = ranges(Ranges::RosThymio);
    let value = |all: &[(SensorTopic, Vec<f32>)], topic| {
        all.iter().find(|(t, _)| *t == topic).unwrap().1.clone()
    };
    for (i, (r, t)) in [(inf, -1.0), (inf, -1.0), (-inf, min)]
        .into_iter()
        .enumerate()
    {
        assert_eq!(value(&rep, SensorTopic::Proximity(i)), [r], "sensor {i}");
        assert_eq!(value(&ros, SensorTopic::Proximity(i)), [t], "sensor {i}");
    }
    let d = value(&rep, SensorTopic::Proximity(3));
    assert!(d[0].is_finite() && d == value(&ros, SensorTopic::Proximity(3)));
    assert_eq!(
        value(&rep, SensorTopic::Laser),
        value(&ros, SensorTopic::Laser)
    );
    assert_eq!(value(&ros, SensorTopic::Laser)[4], inf, "{ros:?}");
    assert_eq!(value(&rep, SensorTopic::Ground(0)), [inf]);
    assert_eq!(value(&rep, SensorTopic::Ground(1)), [-inf]);
    assert_eq!(value(&ros, SensorTopic::Ground(0)), [1.0]);
    assert_eq!(value(&ros, SensorTopic::Ground(1)), [0.0]);
}
