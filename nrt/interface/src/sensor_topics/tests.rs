use super::*;
use nrt_engine::thymio::calibration::Calibration;
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
            payloads: [1; 7],
            intensities: [2; 7],
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
        stamp,
        &f,
        |_| true,
        &mut check,
    );
    for e in every_event() {
        event_messages(e, 500, stamp, &f, |_| true, &mut check);
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
                    "t1/ground_left_link".into()
                ))
            ),
            (
                SensorTopic::Ground(1),
                SensorMessage::Range(sensors::ground(
                    900,
                    500,
                    stamp,
                    "t1/ground_right_link".into()
                ))
            ),
        ]
    );
    let got =
        collect(|out| event_messages(RobotEvent::Temperature(245), 500, stamp, &f, |_| true, out));
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
    let got = collect(|out| proximity_messages(&[0; 7], &cal, stamp, &f, only_laser, out));
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].0, SensorTopic::Laser);
    let got = collect(|out| event_messages(RobotEvent::Tap, 500, stamp, &f, |_| false, out));
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
            Duration::ZERO,
            &f,
            |_| true,
            out,
        )
    });
    assert!(got.is_empty());
}
