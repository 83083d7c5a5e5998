//! VM unit tests on hand-written bytecode (the differential tests against the official VM
//! are in sim/tests/).

use super::std_natives::{self, StdState};
use super::*;
use msgs::opcodes::{FLAG_EVENT_ACTIVE, FLAG_STEP_BY_STEP};

/// Records what the VM sends, as (kind, words) pairs.
#[derive(Default)]
struct Rec(Vec<(u16, Vec<u16>)>);

impl Outbox for Rec {
    fn send(&mut self, msg: &Message<'_>) {
        let frame = msg.to_frame(1).unwrap();
        let kind = u16::from_le_bytes([frame[4], frame[5]]);
        let words = frame[6..]
            .chunks(2)
            .map(|c| u16::from_le_bytes([c[0], *c.get(1).unwrap_or(&0)]))
            .collect();
        self.0.push((kind, words));
    }
}

/// Standard natives at ids 0…29, no reset behaviour.
struct Std(StdState);

impl Target for Std {
    fn native(&mut self, vm: &mut Vm, id: u16, out: &mut dyn Outbox) -> Result<(), Fault> {
        std_natives::call(vm, id, &mut self.0, out)
    }
    fn reset(&mut self, _vm: &mut Vm) {}
}

fn vm_with(code: &[u16]) -> (Vm, Std, Rec) {
    let mut vm = Vm::new(
        1,
        VmSizes {
            bytecode: 256,
            variables: 64,
            stack: 8,
        },
    );
    let mut t = Std(StdState::new(0));
    let mut rec = Rec::default();
    vm.write_bytecode(0, code.iter().copied()).unwrap();
    vm.reset(&mut t, &mut rec);
    vm.cmd_run(&mut rec);
    rec.0.clear();
    (vm, t, rec)
}

/// Runs the init event of `code` (table [3, 0xFFFF, 3], code at 3).
fn run_init(code: &[u16]) -> (Vm, Rec) {
    let mut image = vec![3, 0xFFFF, 3];
    image.extend_from_slice(code);
    let (mut vm, mut t, mut rec) = vm_with(&image);
    vm.run(1000, &mut t, &mut rec);
    (vm, rec)
}

#[test]
fn arithmetic_wraps_like_c_on_16_bits() {
    // v0 = 30000 + 30000 ; v1 = -32768 / -1 ; v2 = abs(-32768) ; v3 = 7 % -3 ; v4 = -7 >> 1
    let (vm, _) = run_init(&[
        0x2000, 30000, 0x2000, 30000, 0x8002, 0x4000, //
        0x2000, 0x8000, 0x1FFF, 0x8005, 0x4001, //
        0x2000, 0x8000, 0x7001, 0x4002, //
        0x1007, 0x1FFD, 0x8006, 0x4003, //
        0x1FF9, 0x1001, 0x8001, 0x4004, 0x0000,
    ]);
    assert_eq!(&vm.variables()[..5], &[-5536, -32768, -32768, 1, -4]);
    assert!(!vm.event_active());
}

#[test]
fn division_by_zero_stops_with_the_official_message() {
    let (vm, rec) = run_init(&[0x1001, 0x1000, 0x8005, 0x4000, 0x0000]);
    assert_eq!(rec.0, vec![(0x9007, vec![5])]);
    assert_eq!(vm.flags(), FLAG_STEP_BY_STEP);
    // the result 0 is stored? no: execution stopped right after the division
    assert_eq!(vm.pc(), 6);
}

#[test]
fn out_of_bounds_keeps_pc_on_the_instruction() {
    // push 5 ; LOAD_INDIRECT base 10 size 3
    let (vm, rec) = run_init(&[0x1005, 0x500A, 3, 0x0000]);
    assert_eq!(rec.0, vec![(0x9006, vec![4, 3, 5])]);
    assert_eq!(vm.pc(), 4);
    assert_eq!(vm.flags(), FLAG_STEP_BY_STEP);
}

#[test]
fn when_fires_on_edges_only() {
    // event 0 (user): when v0 == 1 do v1++ end
    let image = [
        3, 0, 3, //
        0x3000, 0x1001, 0xA10A, 6, 0x3001, 0x1001, 0x8002, 0x4001, 0x0000,
    ];
    let (mut vm, mut t, mut rec) = vm_with(&image);
    let mut fire = |vm: &mut Vm, v0: i16| {
        vm.variables_mut()[0] = v0;
        vm.setup_event(0, &mut rec);
        vm.run(0, &mut t, &mut rec);
    };
    for v in [1, 1, 0, 1, 1, 1, 0, 0, 1] {
        fire(&mut vm, v);
    }
    assert_eq!(vm.variables()[1], 3);
    // RESET clears the edge memory only after the table's double (official scan start):
    // here the branch is at word 5 < 2*3+1, so its bit survives a reset
    let before = vm.bytecode()[5];
    vm.reset(&mut t, &mut rec);
    assert_eq!(vm.bytecode()[5], before);
}

#[test]
fn step_limit_kills_the_event() {
    // JUMP 0 forever
    let (vm, rec) = run_init(&[0x9000]);
    assert_eq!(rec.0, vec![(0x9008, vec![3])]);
    assert!(!vm.event_active());
}

#[test]
fn breakpoints_pause_before_the_instruction() {
    let image = [3, 0xFFFF, 3, 0x1001, 0x4000, 0x1002, 0x4001, 0x0000];
    let (mut vm, mut t, mut rec) = vm_with(&image);
    assert!(vm.set_breakpoint(5));
    vm.run(0, &mut t, &mut rec);
    assert_eq!(vm.variables()[0], 1);
    assert_eq!(vm.variables()[1], 0);
    // the official VM leaves EVENT_RUNNING set when it stops on a breakpoint
    assert_eq!(rec.0.last().unwrap(), &(0x900A, vec![5, 0x7]));
    vm.cmd_step(&mut t, &mut rec);
    vm.cmd_run(&mut rec);
    vm.run(0, &mut t, &mut rec);
    assert_eq!(vm.variables()[1], 2);
    assert!(vm.clear_breakpoint(5));
    assert!(!vm.clear_breakpoint(5));
    for i in 0..16 {
        assert!(vm.set_breakpoint(i));
    }
    assert!(!vm.set_breakpoint(99));
}

#[test]
fn new_event_kills_the_active_one() {
    let image = [5, 0, 5, 1, 7, 0x1001, 0x0000, 0x1002, 0x0000];
    let (mut vm, _t, mut rec) = vm_with(&image);
    vm.setup_event(0, &mut rec);
    vm.setup_event(1, &mut rec);
    assert_eq!(rec.0, vec![(0x9008, vec![5])]);
    assert_eq!(vm.pc(), 7);
    assert_eq!(vm.flags() & FLAG_EVENT_ACTIVE, FLAG_EVENT_ACTIVE);
}

#[test]
fn asserts_refuse_instead_of_trashing_memory() {
    // STORE to variable 4000 (memory is 64 words)
    let (vm, rec) = run_init(&[0x1001, 0x4FA0, 0x0000]);
    assert_eq!(rec.0.len(), 1);
    assert_eq!(rec.0[0].0, 0x9009);
    assert_eq!(vm.flags(), FLAG_STEP_BY_STEP);
    // stack underflow, unknown opcode, jump outside
    for code in [vec![0x4000], vec![0xF000], vec![0x97FF], vec![0xE000]] {
        let (vm, rec) = run_init(&code);
        assert_eq!(rec.0[0].0, 0x9009, "{code:x?}");
        assert_eq!(vm.flags(), FLAG_STEP_BY_STEP);
    }
}

#[test]
fn emit_sends_variables() {
    // v0..v1 = [7, -2]; emit 4 with them
    let (_, rec) = run_init(&[0x1007, 0x4000, 0x1FFE, 0x4001, 0xB004, 0, 2, 0x0000]);
    assert_eq!(rec.0, vec![(4, vec![7, 0xFFFE])]);
}

#[test]
fn subroutines_call_and_return() {
    // init: callsub @6 ; STOP ; sub: v0 = 9 ; SUB_RET
    let (vm, _) = run_init(&[0xD006, 0x0000, 0x0000, 0x1009, 0x4000, 0xE000]);
    assert_eq!(vm.variables()[0], 9);
    assert!(!vm.event_active());
}

#[test]
fn std_natives_follow_the_official_code() {
    // math.fill(v[0..4], 7) with the template size pushed first: push 4, push &value(10), push &dest(0)
    let (vm, _) = run_init(&[0x1007, 0x400A, 0x1004, 0x100A, 0x1000, 0xC001, 0x0000]);
    assert_eq!(&vm.variables()[..4], &[7, 7, 7, 7]);
    // math.sqrt of a negative value is a node-specific error
    let (vm, rec) = run_init(&[0x1FFF, 0x4000, 0x1001, 0x1000, 0x1001, 0xC013, 0x0000]);
    assert_eq!(rec.0[0].0, 0x9009);
    assert_eq!(vm.flags(), FLAG_STEP_BY_STEP);
    // math.rand: the official LCG
    let mut s = StdState::new(0);
    assert_eq!(s.next_random(), 13849);
    assert_eq!(
        s.next_random(),
        13849u16.wrapping_mul(25173).wrapping_add(13849)
    );
}

#[test]
fn deques_push_pop_and_refuse_overflows() {
    // deque of capacity 3 at v[0..5]; value at v[10]
    let mut vm = Vm::new(
        1,
        VmSizes {
            bytecode: 16,
            variables: 32,
            stack: 8,
        },
    );
    let mut t = Std(StdState::new(0));
    let mut rec = Rec::default();
    let mut call = |vm: &mut Vm, args: &[u16], id: u16| {
        vm.flags = FLAG_EVENT_ACTIVE;
        vm.sp = -1;
        for a in args.iter().rev() {
            vm.push(*a as i16).unwrap();
        }
        t.native(vm, id, &mut rec).unwrap();
    };
    for v in [5, 6, 7] {
        vm.variables_mut()[10] = v;
        // push_back(deque @0, src @10): pops deque, src, len(deque)=5, len(src)=1
        call(&mut vm, &[0, 10, 5, 1], 27);
    }
    assert_eq!(vm.variables()[0], 3);
    vm.variables_mut()[10] = 8;
    call(&mut vm, &[0, 10, 5, 1], 27);
    assert_eq!(vm.flags(), FLAG_STEP_BY_STEP, "full deque refuses");
    // pop_front into v[11]
    call(&mut vm, &[0, 11, 5, 1], 28);
    assert_eq!(vm.variables()[11], 5);
    call(&mut vm, &[0, 11, 5, 1], 29);
    assert_eq!(vm.variables()[11], 7);
    assert_eq!(vm.variables()[0], 1);
}
