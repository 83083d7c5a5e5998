//! Unit tests of [`super`]: foreign commands held and released, as `/diagnostics` shows them.

use super::super::tests::{driven_robot, engine};
use super::*;
use crate::diagnostics::{foreign as status, ERROR, OK};
use handoff::LinkId;
use msgs::wire::Words;

#[test]
fn another_clients_wheel_commands_are_an_alarm_and_reads_are_not() {
    let (mut e, mut rt) = engine(0);
    driven_robot(&mut e, &mut rt);
    let now = Instant::now();
    // legitimate traffic: the robot's own events, another event, a read
    let odometry = Message::UserEvent {
        id: 0,
        args: Words::from_slice(&[1, 2, 3]),
    };
    rt.rt_push_frame(LinkId(0), 3, &odometry.to_frame(3).unwrap());
    let other = Message::UserEvent {
        id: 0,
        args: Words::from_slice(&[1, 2, 3]),
    };
    rt.rt_push_frame(LinkId(0), 4, &other.to_frame(0).unwrap());
    let read = Message::GetVariables {
        dest: 3,
        start: 0,
        length: 4,
    };
    rt.rt_push_frame(LinkId(0), 5, &read.to_frame(0).unwrap());
    e.poll(now);
    assert_eq!(e.foreign_commands().active(now).count(), 0);
    assert_eq!(status("asebaros", e.foreign_commands(), now).level, OK);
    // another client's set_speed to the robot we drive (id 1 in its script)
    let set_speed = Message::UserEvent {
        id: 1,
        args: Words::from_slice(&[500, -500]),
    };
    rt.rt_push_frame(LinkId(0), 6, &set_speed.to_frame(0).unwrap());
    e.poll(now);
    let active: Vec<_> = e.foreign_commands().active(now).collect();
    assert_eq!(active.len(), 1, "{active:?}");
    assert_eq!((active[0].0, active[0].1.source), (NodeId(3), 0));
    let s = status("asebaros", e.foreign_commands(), now);
    assert_eq!(s.level, ERROR);
    assert!(s.message.contains("node(s) 3"), "{}", s.message);
    // it ends when they stop
    let later = now + FOREIGN_HOLD;
    assert_eq!(status("asebaros", e.foreign_commands(), later).level, OK);
}
