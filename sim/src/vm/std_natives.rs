//! The 30 standard natives (aseba.md §3.12), bit-exact with the official `natives.c`:
//! arguments popped in the official order, memory read and written in the official order
//! (overlapping arguments behave the same), the same errors. Every access is checked: where
//! the official code would read or write outside memory, the call is refused with a [`Fault`].

use super::math;
use super::{Fault, Outbox, Vm};
use msgs::wire::Message;

/// Number of standard natives.
pub const COUNT: u16 = 30;

/// State the standard natives keep (the `math.rand` generator).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct StdState {
    /// Linear congruential generator state.
    pub rand: u16,
}

impl StdState {
    /// A generator seeded with `seed`.
    pub fn new(seed: u16) -> Self {
        StdState { rand: seed }
    }

    /// `AsebaGetRandom`.
    pub fn next_random(&mut self) -> u16 {
        self.rand = self.rand.wrapping_mul(25173).wrapping_add(13849);
        self.rand
    }
}

fn get(vm: &Vm, a: u32) -> Result<i16, Fault> {
    vm.var(a)
}

fn set(vm: &mut Vm, a: u32, v: i16) -> Result<(), Fault> {
    vm.set_var(a, v)
}

/// Element-wise `dest[i] = f(src1[i], src2[i])`, the official loop order.
fn zip2(vm: &mut Vm, f: impl Fn(i16, i16) -> i16) -> Result<(), Fault> {
    let (dest, s1, s2, len) = (
        vm.pop_arg()? as u32,
        vm.pop_arg()? as u32,
        vm.pop_arg()? as u32,
        vm.pop_arg()? as u32,
    );
    for i in 0..len {
        let v = f(get(vm, s1 + i)?, get(vm, s2 + i)?);
        set(vm, dest + i, v)?;
    }
    Ok(())
}

/// Element-wise `dest[i] = f(x[i])`.
fn map1(vm: &mut Vm, f: impl Fn(i16) -> i16) -> Result<(), Fault> {
    let (dest, x, len) = (
        vm.pop_arg()? as u32,
        vm.pop_arg()? as u32,
        vm.pop_arg()? as u32,
    );
    for i in 0..len {
        let v = f(get(vm, x + i)?);
        set(vm, dest + i, v)?;
    }
    Ok(())
}

fn division_by_zero(vm: &mut Vm, out: &mut dyn Outbox) {
    vm.stop_with_error();
    out.send(&Message::DivisionByZero { pc: vm.pc() });
}

/// Calls standard native `index` (0…29).
pub fn call(
    vm: &mut Vm,
    index: u16,
    state: &mut StdState,
    out: &mut dyn Outbox,
) -> Result<(), Fault> {
    match index {
        0 => {
            let (dest, src, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            for i in 0..len {
                let v = get(vm, src + i)?;
                set(vm, dest + i, v)?;
            }
        }
        1 => {
            let (dest, value, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            for i in 0..len {
                let v = get(vm, value)?;
                set(vm, dest + i, v)?;
            }
        }
        2 => {
            let (dest, src, scalar, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            let s = get(vm, scalar)?;
            for i in 0..len {
                let v = get(vm, src + i)?.wrapping_add(s);
                set(vm, dest + i, v)?;
            }
        }
        3 => zip2(vm, |a, b| a.wrapping_add(b))?,
        4 => zip2(vm, |a, b| a.wrapping_sub(b))?,
        5 => zip2(vm, |a, b| a.wrapping_mul(b))?,
        6 => {
            let (dest, s1, s2, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            for i in 0..len {
                let (a, b) = (get(vm, s1 + i)? as i32, get(vm, s2 + i)? as i32);
                if b == 0 {
                    division_by_zero(vm, out);
                    return Ok(());
                }
                set(vm, dest + i, (a / b) as i16)?;
            }
        }
        7 => zip2(vm, |a, b| a.min(b))?,
        8 => zip2(vm, |a, b| a.max(b))?,
        9 => {
            let (dest, src, low, high, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            for i in 0..len {
                let (v, l, h) = (get(vm, src + i)?, get(vm, low + i)?, get(vm, high + i)?);
                set(
                    vm,
                    dest + i,
                    if v > h {
                        h
                    } else if v < l {
                        l
                    } else {
                        v
                    },
                )?;
            }
        }
        10 => {
            let (dest, s1, s2) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            let shift_addr = vm.pop_arg()? as u32;
            let shift = get(vm, shift_addr)?;
            let len = vm.pop_arg()? as u32;
            if shift > 32 {
                return set(vm, dest, 0);
            }
            let mut acc: i32 = 0;
            for i in 0..len {
                acc = acc.wrapping_add((get(vm, s1 + i)? as i32) * (get(vm, s2 + i)? as i32));
            }
            set(vm, dest, acc.wrapping_shr(shift as u32) as i16)?;
        }
        11 => {
            let (src, min, max, mean, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            if len > 0 {
                let first = get(vm, src)?;
                let mut acc = first as i32;
                set(vm, min, first)?;
                set(vm, max, first)?;
                for i in 1..len {
                    let v = get(vm, src + i)?;
                    if v < get(vm, min)? {
                        set(vm, min, v)?;
                    }
                    if v > get(vm, max)? {
                        set(vm, max, v)?;
                    }
                    acc = acc.wrapping_add(v as i32);
                }
                set(vm, mean, (acc / len as i32) as i16)?;
            }
        }
        12 => {
            let (src, argmin, argmax, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            let (mut lo, mut hi) = (i16::MAX, i16::MIN);
            for i in 0..len {
                let v = get(vm, src + i)?;
                if v < lo {
                    lo = v;
                    set(vm, argmin, i as i16)?;
                }
                if v > hi {
                    hi = v;
                    set(vm, argmax, i as i16)?;
                }
            }
        }
        13 => {
            let (src, len) = (vm.pop_arg()? as u32, vm.pop_arg()? as u32);
            vm.check_range(src, len)?;
            math::comb_sort(&mut vm.variables_mut()[src as usize..(src + len) as usize]);
        }
        14 => {
            let (dest, a, b, c, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            for i in 0..len {
                let (x, y, z) = (
                    get(vm, a + i)? as i32,
                    get(vm, b + i)? as i32,
                    get(vm, c + i)? as i32,
                );
                if z == 0 {
                    division_by_zero(vm, out);
                    return Ok(());
                }
                set(vm, dest + i, ((x * y) / z) as i16)?;
            }
        }
        15 => zip2(vm, math::atan2)?,
        16 => map1(vm, math::sin)?,
        17 => map1(vm, math::cos)?,
        18 => {
            let (dest, v, angle) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            let (x, y, a) = (get(vm, v)? as i32, get(vm, v + 1)? as i32, get(vm, angle)?);
            let (c, s) = (math::cos(a) as i32, math::sin(a) as i32);
            set(vm, dest, ((c * x - s * y) >> 15) as i16)?;
            set(vm, dest + 1, ((c * y + s * x) >> 15) as i16)?;
        }
        19 => {
            let (dest, x, len) = (
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
                vm.pop_arg()? as u32,
            );
            for i in 0..len {
                let v = get(vm, x + i)?;
                if v < 0 {
                    vm.emit_node_specific_error("Negative input to sqrt", out);
                    return Ok(());
                }
                set(vm, dest + i, math::sqrt(v))?;
            }
        }
        20 => {
            let (dest, len) = (vm.pop_arg()? as u32, vm.pop_arg()? as u32);
            for i in 0..len {
                let r = state.next_random() as i16;
                set(vm, dest + i, r)?;
            }
        }
        21..=29 => super::deque::call(vm, index, out)?,
        _ => return Err(Fault::Native(index)),
    }
    Ok(())
}
