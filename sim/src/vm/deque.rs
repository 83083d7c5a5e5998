//! The `deque.*` standard natives: a ring buffer stored as `[count, start, items…]`, with the
//! official code's C integer arithmetic (16-bit unsigned values promoted to `int`). Accesses
//! the official code would make outside memory, a zero capacity and runaway shifts are
//! refused with a [`Fault`].

use super::{Fault, Outbox, Vm};
use msgs::wire::Message;

/// Index of `deque[2 + (pos % cap)]`, checked.
fn slot(vm: &Vm, dq: u16, pos: i64, cap: u16) -> Result<u32, Fault> {
    if cap == 0 {
        return Err(Fault::Variable(dq as u32));
    }
    // C `%` keeps the sign of the dividend: a negative position is an access before the deque
    let r = pos % cap as i64;
    let addr = dq as i64 + 2 + r;
    if r < 0 || addr >= vm.variables().len() as i64 {
        return Err(Fault::Variable(addr.max(0) as u32));
    }
    Ok(addr as u32)
}

fn throw(vm: &mut Vm, out: &mut dyn Outbox) {
    vm.stop_with_error();
    out.send(&Message::ArrayAccessOutOfBounds {
        pc: vm.pc(),
        size_index: None,
    });
}

/// `deque_shift`: moves items by `delta` from `target` to `last` (inclusive).
fn shift(vm: &mut Vm, dq: u16, cap: u16, target: u16, last: i16, delta: i16) -> Result<(), Fault> {
    let mut t = target;
    let mut guard = 0u32;
    while if delta < 0 {
        t as i32 >= last as i32
    } else {
        t as i32 <= last as i32
    } {
        guard += 1;
        if guard > 0x1_0000 {
            // the official loop never ends here (the 16-bit counter wraps)
            return Err(Fault::Variable(dq as u32));
        }
        let from = slot(vm, dq, t as i64 + delta as i64, cap)?;
        let to = slot(vm, dq, t as i64, cap)?;
        let v = vm.var(from)?;
        vm.set_var(to, v)?;
        t = if delta < 0 {
            t.wrapping_sub(1)
        } else {
            t.wrapping_add(1)
        };
    }
    Ok(())
}

fn header(vm: &Vm, dq: u16) -> Result<(u16, u16), Fault> {
    Ok((vm.var(dq as u32)? as u16, vm.var(dq as u32 + 1)? as u16))
}

fn get(
    vm: &mut Vm,
    out: &mut dyn Outbox,
    dest: u16,
    dq: u16,
    index: u16,
    dest_len: u16,
    dq_len: u16,
) -> Result<(), Fault> {
    let (size, start) = header(vm, dq)?;
    let cap = dq_len.wrapping_sub(2);
    if dest_len as i32 > size as i32 - index as i32 {
        throw(vm, out);
        return Ok(());
    }
    for i in 0..dest_len {
        let from = slot(vm, dq, start as i64 + index as i64 + i as i64, cap)?;
        let v = vm.var(from)?;
        vm.set_var(dest as u32 + i as u32, v)?;
    }
    Ok(())
}

fn insert(
    vm: &mut Vm,
    out: &mut dyn Outbox,
    dq: u16,
    src: u16,
    index: u16,
    dq_len: u16,
    src_len: u16,
) -> Result<(), Fault> {
    let (size, mut start) = header(vm, dq)?;
    let cap = dq_len.wrapping_sub(2);
    if src_len as i32 > cap as i32 - size as i32 {
        throw(vm, out);
        return Ok(());
    }
    let (s, i, n, c) = (start as i32, index as i32, src_len as i32, cap as i32);
    if (index as i32) < size as i32 / 2 {
        let new_start = if start == 0 {
            c - n
        } else {
            if c == 0 {
                return Err(Fault::Variable(dq as u32));
            }
            (s - n + c) % c
        };
        start = new_start as u16;
        vm.set_var(dq as u32 + 1, start as i16)?;
        shift(vm, dq, cap, start, (i - 1 + n - 1) as i16, n as i16)?;
    } else {
        let sz = size as i32;
        shift(
            vm,
            dq,
            cap,
            (s + sz + n - 1) as u16,
            (s + i + n) as i16,
            (-n) as i16,
        )?;
    }
    for k in 0..src_len {
        let to = slot(vm, dq, start as i64 + index as i64 + k as i64, cap)?;
        let v = vm.var(src as u32 + k as u32)?;
        vm.set_var(to, v)?;
    }
    vm.set_var(dq as u32, size.wrapping_add(src_len) as i16)
}

fn erase(
    vm: &mut Vm,
    out: &mut dyn Outbox,
    dq: u16,
    index: u16,
    len: u16,
    dq_len: u16,
) -> Result<(), Fault> {
    let (size, start) = header(vm, dq)?;
    let cap = dq_len.wrapping_sub(2);
    if len as i32 > size as i32 - index as i32 {
        throw(vm, out);
        return Ok(());
    }
    let (s, i, n, sz) = (start as i32, index as i32, len as i32, size as i32);
    if i < sz / 2 {
        shift(
            vm,
            dq,
            cap,
            (s + i + n - 1) as u16,
            (s + n) as i16,
            (-n) as i16,
        )?;
        if cap == 0 {
            return Err(Fault::Variable(dq as u32));
        }
        vm.set_var(dq as u32 + 1, ((s + n) % cap as i32) as u16 as i16)?;
    } else {
        shift(
            vm,
            dq,
            cap,
            (s + i) as u16,
            (s + sz - 1 - n) as i16,
            n as i16,
        )?;
    }
    vm.set_var(dq as u32, size.wrapping_sub(len) as i16)
}

/// Whether `value` (a signed index) is outside `[0, dq_len - 3]`, in C `int` arithmetic.
fn bad_index(value: i16, dq_len: u16) -> bool {
    value < 0 || value as i32 > dq_len as i32 - 2 - 1
}

/// Calls standard native `index` 21…29.
pub fn call(vm: &mut Vm, index: u16, out: &mut dyn Outbox) -> Result<(), Fault> {
    match index {
        21 => {
            let (dq, size, _len) = (vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?);
            let v = vm.var(dq as u32)?;
            vm.set_var(size as u32, v)?;
        }
        22 | 23 => {
            let (dq, data, idx) = (vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?);
            let idx_raw = vm.var(idx as u32)?;
            let idx_val = idx_raw as u16;
            let (dq_len, data_len) = (vm.pop_arg()?, vm.pop_arg()?);
            if index == 22 {
                if bad_index(idx_raw, dq_len) {
                    throw(vm, out);
                    return Ok(());
                }
                get(vm, out, data, dq, idx_val, data_len, dq_len)?;
            } else {
                let (size, start) = header(vm, dq)?;
                let cap = dq_len.wrapping_sub(2);
                if bad_index(idx_raw, dq_len) || data_len as i32 > size as i32 - idx_val as i32 {
                    throw(vm, out);
                    return Ok(());
                }
                for k in 0..data_len {
                    let to = slot(vm, dq, start as i64 + idx_val as i64 + k as i64, cap)?;
                    let v = vm.var(data as u32 + k as u32)?;
                    vm.set_var(to, v)?;
                }
            }
        }
        24 => {
            let (dq, src, idx) = (vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?);
            let idx_raw = vm.var(idx as u32)?;
            let (dq_len, src_len) = (vm.pop_arg()?, vm.pop_arg()?);
            if idx_raw < 0 || idx_raw as u16 as i32 > dq_len as i32 - 2 - 1 {
                throw(vm, out);
                return Ok(());
            }
            insert(vm, out, dq, src, idx_raw as u16, dq_len, src_len)?;
        }
        25 => {
            let (dq, idx, len) = (vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?);
            let idx_raw = vm.var(idx as u32)?;
            let len_val = vm.var(len as u32)? as u16;
            let dq_len = vm.pop_arg()?;
            if idx_raw < 0 || idx_raw as u16 as i32 > dq_len as i32 - 2 - 1 {
                throw(vm, out);
                return Ok(());
            }
            erase(vm, out, dq, idx_raw as u16, len_val, dq_len)?;
        }
        26 | 27 => {
            let (dq, src, dq_len, src_len) =
                (vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?);
            let at = if index == 26 {
                0
            } else {
                vm.var(dq as u32)? as u16
            };
            insert(vm, out, dq, src, at, dq_len, src_len)?;
        }
        28 | 29 => {
            let (dq, dest, dq_len, dest_len) =
                (vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?, vm.pop_arg()?);
            let at = if index == 28 {
                0
            } else {
                (vm.var(dq as u32)? as u16).wrapping_sub(dest_len)
            };
            // the official code erases even when the read failed
            get(vm, out, dest, dq, at, dest_len, dq_len)?;
            erase(vm, out, dq, at, dest_len, dq_len)?;
        }
        _ => return Err(Fault::Native(index)),
    }
    Ok(())
}
