//! The simulated firmware on hand-assembled FW14 bytecode: natives' effects, the emit limit,
//! event priority and coalescing, sounds ending by themselves, power off.

use super::firmware::ev;
use super::*;
use crate::vm::Outbox;
use msgs::reassembler::Reassembler;
use msgs::wire::{kind, Message};

struct Null;

impl Outbox for Null {
    fn send(&mut self, _: &Message<'_>) {}
}

/// A FW14 robot running `code` (already started, past its init event).
fn robot_with(code: &[u16]) -> Robot {
    let mut r = robot(Variant::Firmware14, 1, 9, Pose::default(), 5);
    r.node.vm.write_bytecode(0, code.iter().copied()).unwrap();
    r.node.vm.reset(&mut r.fw, &mut Null);
    r.node.vm.cmd_run(&mut Null);
    r
}

/// Ticks `ms` and returns the frames sent as (kind, payload).
fn tick(r: &mut Robot, ms: u32) -> Vec<(u16, Vec<u8>)> {
    let arena = Arena::default();
    let mut bytes = Vec::new();
    for _ in 0..ms {
        r.tick(&arena, &[]);
        r.take_output(&mut bytes);
    }
    let mut reasm = Reassembler::new();
    let mut input = &bytes[..];
    let mut got = Vec::new();
    while let Some(f) = reasm.push(&mut input) {
        let f = f.unwrap();
        got.push((f.kind, f.payload.to_vec()));
    }
    got
}

fn var(r: &Robot, name: &str) -> Vec<i16> {
    r.variable(name).unwrap().to_vec()
}

#[test]
fn thymio_lets_33_words_through_and_refuses_34() {
    for (len, refused) in [(33u16, false), (34, true)] {
        let mut r = robot_with(&[3, 0xFFFF, 3, 0xB002, 128, len, 0x0000]);
        let got = tick(&mut r, 1);
        if refused {
            assert_eq!(got[0].0, kind::NODE_SPECIFIC_ERROR);
            assert_eq!(&got[0].1[3..], b"Argument array size is too large (>32)");
            assert!(r.node.vm.step_by_step());
        } else {
            assert_eq!(got[0], (2, vec![0; 66]));
        }
    }
}

#[test]
fn settings_and_their_range() {
    // v129 = 1234 ; settings.write(v128 = 3, v129) ; settings.read(v128, v130) ; v128 = 40 ; read
    let code = [
        3, 0xFFFF, 3, //
        0x2000, 1234, 0x4081, 0x1003, 0x4080, //
        0x1081, 0x1080, 0xC002, // write(address @128, value @129)
        0x1082, 0x1080, 0xC001, // read(address @128, value @130)
        0x2000, 40, 0x4080, 0x1082, 0x1080, 0xC001, 0x0000,
    ];
    let mut r = robot_with(&code);
    let got = tick(&mut r, 1);
    assert_eq!(r.fw.settings[3], 1234);
    assert_eq!(r.variables()[130], 1234);
    assert_eq!(got[0].0, kind::NODE_SPECIFIC_ERROR);
    assert_eq!(&got[0].1[3..], b"Address out of settings");
}

#[test]
fn led_natives_write_the_leds_and_their_variables() {
    // v128..v135 = 1..8 ; leds.circle(v128…v135): arguments pushed last first
    let mut code = vec![3, 0xFFFF, 3];
    for i in 0..8u16 {
        code.extend([0x1001 + i, 0x4080 + i]);
    }
    for i in (0..8u16).rev() {
        code.push(0x1080 + i);
    }
    code.extend([0xC027, 0x0000]);
    let mut r = robot_with(&code);
    tick(&mut r, 1);
    assert_eq!(r.fw.leds.circle, [1, 2, 3, 4, 5, 6, 7, 8]);
    assert_eq!(var(&r, "leds.circle"), vec![1, 2, 3, 4, 5, 6, 7, 8]);
    // the program writes leds.top directly: applied by the next main-loop iteration
    r.node.vm.variables_mut()[101] = 40;
    tick(&mut r, 1);
    assert_eq!(r.fw.leds.top, [32, 0, 0], "clamped to 32");
}

#[test]
fn a_tone_ends_with_sound_finished() {
    // init: v128 = 440 ; v129 = 6 ; sound.freq(v128, v129)
    // onevent sound.finished: v130 += 1
    let code = [
        5, 0xFFFF, 5, 0xFFF3, 14, //
        0x2000, 440, 0x4080, 0x1006, 0x4081, 0x1081, 0x1080, 0xC02B, 0x0000, //
        0x3082, 0x1001, 0x8002, 0x4082, 0x0000,
    ];
    let mut r = robot_with(&code);
    tick(&mut r, 99);
    assert_eq!(r.variables()[130], 0);
    assert_eq!(r.fw.sound.last, Some(("sound.freq".into(), vec![440, 6])));
    tick(&mut r, 2);
    assert_eq!(r.variables()[130], 1, "6/60 s later");
}

#[test]
fn local_events_by_priority_and_coalesced() {
    let mut r = robot_with(&[1]);
    r.fw.trigger(ev::TIMER1);
    r.fw.trigger(ev::MOTOR);
    r.fw.trigger(ev::MOTOR);
    r.fw.trigger(ev::PROX);
    assert_eq!(r.fw.take_event(), Some(ev::PROX));
    assert_eq!(r.fw.take_event(), Some(ev::MOTOR));
    assert_eq!(r.fw.take_event(), Some(ev::TIMER1));
    assert_eq!(r.fw.take_event(), None);
}

#[test]
fn poweroff_stops_the_robot() {
    let mut r = robot_with(&[3, 0xFFFF, 3, 0x2000, 300, 0x4056, 0xC03B, 0x0000]);
    tick(&mut r, 1);
    assert!(!r.powered);
    assert_eq!(r.targets, [0, 0]);
    r.deliver(&Message::ListNodes { version: 9 }.to_frame(0).unwrap());
    assert!(
        tick(&mut r, 10).is_empty(),
        "a robot switched off says nothing"
    );
}

#[test]
fn no_sd_card() {
    // sd.open(v128 = 1, status @129)
    let code = [3, 0xFFFF, 3, 0x1001, 0x4080, 0x1081, 0x1080, 0xC034, 0x0000];
    let mut r = robot_with(&code);
    tick(&mut r, 1);
    assert_eq!(r.variables()[129], -1);
    assert_eq!(var(&r, "sd.present"), vec![0]);
}

#[test]
fn robots_do_not_drive_through_each_other() {
    let arena = Arena::default();
    let mut a = robot(
        Variant::Firmware14,
        1,
        9,
        Pose {
            x: 0.5,
            y: 1.0,
            theta: 0.0,
        },
        1,
    );
    a.node.vm.variables_mut()[86] = 500;
    a.node.vm.variables_mut()[87] = 500;
    let other = [(0.8, 1.0, None)];
    for _ in 0..3000 {
        a.tick(&arena, &other);
    }
    assert!(a.pose.x > 0.6, "it moved ({})", a.pose.x);
    assert!(
        a.pose.x <= 0.8 - 2.0 * robot::BODY_RADIUS + 1e-9,
        "stopped at the other robot"
    );
    assert!(a.collisions > 0);
    // the robot in front shows on the front sensor
    assert!(var(&a, "prox.horizontal")[2] > 1000);
}

#[test]
fn playground_variant_rates_and_step_limit() {
    let mut r = robot(Variant::Playground, 1, 5, Pose::default(), 5);
    assert_eq!(r.node.description.variables_size, 586);
    // init: loop v100 += 1 forever; onevent buttons: v101 += 1
    let code = [
        5, 0xFFFF, 5, 0xFFF9, 10, //
        0x3064, 0x1001, 0x8002, 0x4064, 0x9FFC, //
        0x3065, 0x1001, 0x8002, 0x4065, 0x0000,
    ];
    r.node.vm.write_bytecode(0, code.iter().copied()).unwrap();
    r.node.vm.reset(&mut r.fw, &mut Null);
    r.node.vm.cmd_run(&mut Null);
    let got = tick(&mut r, 1000);
    assert_eq!(got[0].0, kind::EVENT_EXECUTION_KILLED);
    assert_eq!(r.variables()[100], 200, "killed after 1000 instructions");
    assert_eq!(r.variables()[101], 20, "buttons at 20 Hz");
    assert_eq!(var(&r, "_fwversion"), vec![11, 0]);
}

#[test]
fn the_accelerometer_feels_starts_and_turns() {
    let mut r = robot(
        Variant::Firmware14,
        1,
        9,
        Pose {
            x: 1.0,
            y: 1.0,
            theta: 0.0,
        },
        2,
    );
    let arena = Arena::default();
    let acc = |r: &Robot| var(r, "acc");
    for _ in 0..200 {
        r.tick(&arena, &[]);
    }
    assert!(
        acc(&r)[1].abs() <= 2 && (21..=23).contains(&acc(&r)[2]),
        "at rest {:?}",
        acc(&r)
    );
    // full speed ahead: the sensor reads backwards (y front→back) while it speeds up
    r.node.vm.variables_mut()[86] = 1000;
    r.node.vm.variables_mut()[87] = 1000;
    let mut min_y = 0;
    for _ in 0..70 {
        r.tick(&arena, &[]);
        min_y = min_y.min(acc(&r)[1]);
    }
    assert!(min_y <= -3, "forward acceleration {min_y}");
    // a left turn at speed pushes to the left (x right→left positive)
    r.node.vm.variables_mut()[86] = 300;
    for _ in 0..400 {
        r.tick(&arena, &[]);
    }
    assert!(acc(&r)[0] >= 1, "centripetal {:?}", acc(&r));
}

#[test]
fn wheel_differences_curve_the_true_path_but_not_the_speed_reading() {
    let arena = Arena::default();
    let start = Pose {
        x: 1.0,
        y: 1.0,
        theta: 0.0,
    };
    let drive = |wheels: Wheels, target: i16| {
        let mut r = robot(Variant::Firmware14, 1, 9, start, 1);
        r.wheel_model = wheels;
        r.node.vm.variables_mut()[86] = target;
        r.node.vm.variables_mut()[87] = target;
        for _ in 0..2000 {
            r.tick(&arena, &[]);
        }
        (
            r.pose,
            var(&r, "motor.left.speed")[0],
            var(&r, "motor.right.speed")[0],
        )
    };
    let (ideal, ..) = drive(Wheels::default(), 200);
    assert!(ideal.theta.abs() < 1e-9 && ideal.x > 1.1, "{ideal:?}");
    let skewed = Wheels {
        gain: [1.06, 0.96],
        deadband: [0, 0],
    };
    let (p, left, right) = drive(skewed, 200);
    // right slower than left: the robot turns right (clockwise) at (vr − vl) / L
    let w = 200.0 * robot::UNIT_SPEED * (0.96 - 1.06) / robot::AXIS_LENGTH;
    assert!(
        (p.theta - w * 2.0).abs() < 0.02,
        "{} vs {}",
        p.theta,
        w * 2.0
    );
    // the robot's own reading does not see it (noise ±3 units)
    assert!(
        (left - 200).abs() < 12 && (right - 200).abs() < 12,
        "{left} {right}"
    );
    // a target within a wheel's deadband does not turn it, and reads 0
    let dead = Wheels {
        gain: [1.0; 2],
        deadband: [10, 10],
    };
    let (p, left, right) = drive(dead, 10);
    assert_eq!((p, left, right), (start, 0, 0));
    let (p, ..) = drive(dead, 11);
    assert!(p.x > start.x);
}

#[test]
fn the_ground_sensors_see_the_table_edge_and_a_robot_past_it_falls() {
    let arena =
        Arena::parse("width: 2.0\nheight: 1.0\nwalls: false\ntable: [0.0, 0.0, 1.2, 1.0]\n")
            .unwrap();
    let start = Pose {
        x: 1.0,
        y: 0.5,
        theta: 0.0,
    };
    let mut r = robot(Variant::Firmware14, 1, 9, start, 3);
    for _ in 0..200 {
        r.tick(&arena, &[]);
    }
    assert!(
        var(&r, "prox.ground.delta").iter().all(|&d| d > 900),
        "on the table"
    );
    r.node.vm.variables_mut()[86] = 200;
    r.node.vm.variables_mut()[87] = 200;
    let mut void_seen_at = None;
    for _ in 0..10_000 {
        r.tick(&arena, &[]);
        if void_seen_at.is_none() && var(&r, "prox.ground.delta").iter().all(|&d| d < 15) {
            void_seen_at = Some(r.pose.x);
        }
    }
    // the sensors (7.2 cm ahead of the centre, read at 10 Hz) see the void as they pass the edge
    let x = void_seen_at.expect("the ground sensors never saw the void");
    assert!(
        (1.12..1.15).contains(&x),
        "void seen with the centre at x = {x}"
    );
    // the robot went over the edge and stopped there (fell)
    assert!((1.2..1.21).contains(&r.pose.x), "fell at x = {}", r.pose.x);
}

#[test]
fn a_hostile_arena_is_refused_by_the_yaml_guard() {
    // 400 KB of nesting: the YAML parser alone takes seconds to refuse it
    let e = Arena::parse(&format!("width: 2.0\nobstacles: {}\n", "[".repeat(400_000))).unwrap_err();
    assert_eq!(
        e, "YAML nested deeper than the limit of 64 levels at line 2",
        "{e}"
    );
}
