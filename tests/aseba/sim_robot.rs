//! The simulated Thymio-II behaves like the robot: it answers the protocol as firmware 14,
//! runs programs compiled by thymio-rt's compiler, fires its local events at the firmware
//! rates, moves as its wheels are told, and senses its arena.

use msgs::description::thymio_ii_fw14;
use msgs::reassembler::Reassembler;
use msgs::wire::{Message, Words};
use nrt_compiler::{compile, EventDef};
use sim::thymio::arena::{GroundPatch, Shape};
use sim::thymio::{Arena, Pose};
use sim::world::{HostEnds, World, WorldConfig};

/// A world of one robot (or more) with a host link, stepped by hand.
struct Bench {
    world: World,
    host: HostEnds,
    reasm: Reassembler,
    script_vars: Vec<msgs::description::NamedVariable>,
}

impl Bench {
    fn new(config: WorldConfig) -> Bench {
        let mut world = World::new(&config);
        let host = world.attach((0..config.robots).collect(), 1 << 16);
        Bench {
            world,
            host,
            reasm: Reassembler::new(),
            script_vars: Vec::new(),
        }
    }

    fn one() -> Bench {
        Bench::new(WorldConfig {
            realtime: false,
            ..WorldConfig::default()
        })
    }

    fn send(&mut self, msg: Message<'_>) {
        let frame = msg.to_frame(0).unwrap();
        for b in frame {
            self.host.0.push(b).unwrap();
        }
    }

    /// Steps `ms` and returns the frames received as (source, kind, words).
    fn run(&mut self, ms: u64) -> Vec<(u16, u16, Vec<i16>)> {
        let mut got = Vec::new();
        for _ in 0..ms {
            self.world.step();
            let n = self.host.1.slots();
            let chunk = self.host.1.read_chunk(n).unwrap();
            let bytes: Vec<u8> = chunk.into_iter().collect();
            let mut input = &bytes[..];
            while let Some(f) = self.reasm.push(&mut input) {
                let f = f.unwrap();
                let words = Words::from_le_bytes(f.payload).iter().collect();
                got.push((f.source, f.kind, words));
            }
        }
        got
    }

    fn load(&mut self, source: &str, events: &[EventDef]) {
        let program = compile(source, &thymio_ii_fw14(), events, &[]).unwrap();
        self.script_vars = program.variables.clone();
        let words: Vec<i16> = program.bytecode.iter().map(|w| *w as i16).collect();
        for (i, chunk) in words.chunks(256).enumerate() {
            self.send(Message::SetBytecode {
                dest: 1,
                start: (i * 256) as u16,
                words: Words::from_slice(chunk),
            });
        }
        self.send(Message::Run { dest: 1 });
        self.run(5);
    }

    fn var(&self, name: &str) -> Vec<i16> {
        let r = &self.world.robots[0];
        if let Some(v) = self.script_vars.iter().find(|v| v.name == name) {
            return r.variables()[v.address as usize..(v.address + v.size) as usize].to_vec();
        }
        r.variable(name)
            .unwrap_or_else(|| panic!("no variable {name}"))
            .to_vec()
    }
}

fn count(frames: &[(u16, u16, Vec<i16>)], kind: u16) -> usize {
    frames.iter().filter(|f| f.1 == kind).count()
}

#[test]
fn answers_the_protocol_like_firmware_14() {
    let mut b = Bench::one();
    b.send(Message::ListNodes { version: 9 });
    let got = b.run(3);
    assert_eq!(got, vec![(1, 0x900C, vec![9])]);
    b.send(Message::GetNodeDescription {
        dest: 1,
        version: 9,
    });
    let got = b.run(3);
    // 1 + 44 + 17 + 60 frames, in order
    assert_eq!(got.len(), 122);
    assert_eq!(got[0].1, 0x9000);
    assert_eq!(count(&got, 0x9001), 44);
    assert_eq!(count(&got, 0x9003), 60);
    // variables come in replies of at most 47 words, like the Thymio's
    b.send(Message::GetVariables {
        dest: 1,
        start: 0,
        length: 128,
    });
    let got = b.run(3);
    let sizes: Vec<usize> = got
        .iter()
        .filter(|f| f.1 == 0x9005)
        .map(|f| f.2.len() - 1)
        .collect();
    assert_eq!(sizes, vec![47, 47, 34]);
    // identity variables after power-on
    assert_eq!(b.var("_id"), vec![1]);
    assert_eq!(b.var("_productId"), vec![8]);
    assert_eq!(b.var("_fwversion")[0], 14);
    // another node's commands are ignored
    b.send(Message::GetVariables {
        dest: 7,
        start: 0,
        length: 1,
    });
    assert!(b.run(3).is_empty());
}

#[test]
fn local_events_fire_at_firmware_rates() {
    let mut b = Bench::one();
    let src = "var n_motor = 0\nvar n_prox = 0\nvar n_acc = 0\nvar n_buttons = 0\nvar temp = 0\nvar t0 = 0\n\
               timer.period[0] = 50\n\
               onevent motor\nn_motor++\nonevent prox\nn_prox++\nonevent acc\nn_acc++\nonevent buttons\n\
               n_buttons++\nonevent temperature\ntemp++\nonevent timer0\nt0++\n";
    b.load(src, &[]);
    b.run(2000);
    let v = |n: &str| b.var(n)[0];
    assert!(
        (198..=201).contains(&v("n_motor")),
        "motor {}",
        v("n_motor")
    );
    assert!((19..=21).contains(&v("n_prox")), "prox {}", v("n_prox"));
    assert!((31..=33).contains(&v("n_acc")), "acc {}", v("n_acc"));
    assert!(
        (99..=101).contains(&v("n_buttons")),
        "buttons {}",
        v("n_buttons")
    );
    assert!((1..=2).contains(&v("temp")), "temperature {}", v("temp"));
    assert!((39..=40).contains(&v("t0")), "timer0 {}", v("t0"));
}

#[test]
fn wheels_follow_targets_and_the_robot_moves() {
    let mut b = Bench::one();
    let start = b.world.robots[0].pose;
    b.load("motor.left.target = 200\nmotor.right.target = 200\n", &[]);
    b.run(2000);
    let r = &b.world.robots[0];
    let moved = (r.pose.x - start.x).hypot(r.pose.y - start.y);
    // 200 units × 0.3413 mm/s = 68 mm/s for 2 s, less the 50 ms response
    assert!((moved - 0.1365 + 0.0034).abs() < 0.005, "moved {moved}");
    let speed = b.var("motor.left.speed")[0];
    assert!((190..=210).contains(&speed), "measured speed {speed}");
    // turning in place: opposite targets, no translation
    b.load("motor.left.target = -300\nmotor.right.target = 300\n", &[]);
    let before = b.world.robots[0].pose;
    b.run(1000);
    let after = b.world.robots[0].pose;
    assert!((after.x - before.x).hypot(after.y - before.y) < 0.01);
    let turned = (after.theta - before.theta).rem_euclid(std::f64::consts::TAU);
    let expected = 2.0 * 300.0 * sim::thymio::robot::UNIT_SPEED / sim::thymio::robot::AXIS_LENGTH;
    assert!(
        (turned - expected).abs() < 0.15,
        "turned {turned}, expected about {expected}"
    );
}

#[test]
fn senses_walls_obstacles_and_the_ground() {
    let arena = Arena {
        ground: vec![GroundPatch {
            shape: Shape::Box([0.0, 0.0, 2.0, 0.5]),
            reflectance: 0.0,
        }],
        robots: vec![[1.0, 0.3, 0.0], [1.85, 1.5, 0.0]],
        ..Arena::default()
    };
    let mut b = Bench::new(WorldConfig {
        robots: 2,
        arena,
        realtime: false,
        ..WorldConfig::default()
    });
    b.run(300);
    let prox = |b: &Bench, i: usize| {
        b.world.robots[i]
            .variable("prox.horizontal")
            .unwrap()
            .to_vec()
    };
    let delta = |b: &Bench, i: usize| {
        b.world.robots[i]
            .variable("prox.ground.delta")
            .unwrap()
            .to_vec()
    };
    // robot 0 sees nothing, on black; robot 1 faces the wall 6 cm from its front sensor, on white
    assert_eq!(prox(&b, 0), vec![0; 7]);
    assert!(delta(&b, 0).iter().all(|d| *d < 100), "{:?}", delta(&b, 0));
    let p1 = prox(&b, 1);
    assert!(p1[2] > 2500 && p1[2] < 4600, "{p1:?}");
    assert!(p1[5] == 0 && p1[6] == 0, "{p1:?}");
    assert!(delta(&b, 1).iter().all(|d| *d > 800), "{:?}", delta(&b, 1));
    // the wall stops robot 1, and the knock is a tap
    b.world.robots[1].node.vm.variables_mut()[86] = 300;
    b.world.robots[1].node.vm.variables_mut()[87] = 300;
    b.run(2000);
    let r1 = &b.world.robots[1];
    assert!(r1.pose.x < 2.0 - sim::thymio::robot::BODY_RADIUS + 1e-6);
    assert!(r1.collisions > 0);
}

#[test]
fn buttons_and_led_natives_act_on_the_robot() {
    let mut b = Bench::one();
    let events = [EventDef {
        name: "pressed".into(),
        size: 1,
    }];
    b.load(
        "onevent button.center\nif button.center == 1 then\ncall leds.top(32, 0, 8)\nemit pressed [1]\nend\n\
         onevent button.forward\ncall leds.circle(1,2,3,4,5,6,7,8)\ncall sound.freq(440, 6)\n",
        &events,
    );
    b.world.robots[0].buttons[2] = true;
    let got = b.run(60);
    assert!(got.iter().any(|f| f.1 == 0 && f.2 == vec![1]), "{got:?}");
    assert_eq!(b.world.robots[0].fw.leds.top, [32, 0, 8]);
    assert_eq!(b.var("leds.top"), vec![32, 0, 8]);
    b.world.robots[0].buttons[3] = true;
    b.run(200);
    assert_eq!(b.world.robots[0].fw.leds.circle, [1, 2, 3, 4, 5, 6, 7, 8]);
    let sound = &b.world.robots[0].fw.sound;
    assert_eq!(sound.last, Some(("sound.freq".to_string(), vec![440, 6])));
}

#[test]
fn errors_stop_the_program_with_the_official_messages() {
    let mut b = Bench::one();
    b.load(
        "var a[3]\nvar i = 5\nvar z = 0\nonevent timer0\na[i] = 1\nonevent timer1\ni = 1 / z\n",
        &[],
    );
    b.send(Message::SetVariables {
        dest: 1,
        start: 124,
        values: Words::from_slice(&[10]),
    });
    let got = b.run(50);
    let oob: Vec<_> = got.iter().filter(|f| f.1 == 0x9006).collect();
    assert_eq!(oob.len(), 1, "{got:?}");
    assert_eq!(&oob[0].2[1..], &[3, 5]);
}

#[test]
fn same_seed_same_world() {
    let run = |seed| {
        let mut b = Bench::new(WorldConfig {
            seed,
            realtime: false,
            ..WorldConfig::default()
        });
        b.world.robots[0].node.vm.variables_mut()[86] = 150;
        b.world.robots[0].node.vm.variables_mut()[87] = 100;
        b.run(1500);
        (
            b.world.robots[0].pose,
            b.world.robots[0].variables().to_vec(),
        )
    };
    assert_eq!(run(7), run(7));
    assert_ne!(run(7).1, run(8).1);
}

#[test]
fn bus_links_robots_to_each_other() {
    let mut b = Bench::new(WorldConfig {
        robots: 2,
        realtime: false,
        ..WorldConfig::default()
    });
    b.send(Message::ListNodes { version: 9 });
    let got = b.run(3);
    let mut ids: Vec<u16> = got.iter().filter(|f| f.1 == 0x900C).map(|f| f.0).collect();
    ids.sort();
    assert_eq!(ids, vec![1, 2]);
    let _ = Pose::default();
}
