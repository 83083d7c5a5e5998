//! The 30 standard natives of the Aseba VM (aseba.md §3.12), as every official VM describes them
//! (transcribed from the descriptions sent by the Mobsya VM of pyaseba and by Aseba Playground).

use super::TargetDescription;

/// Appends the 30 standard natives (`math.*`, `deque.*`) to `d`, in their standard order.
pub fn push_standard_natives(d: &mut TargetDescription) {
    d.push_native(
        "math.copy",
        "copies src to dest element by element",
        &[("dest", -1), ("src", -1)],
    );
    d.push_native(
        "math.fill",
        "fills dest with constant value",
        &[("dest", -1), ("value", 1)],
    );
    d.push_native(
        "math.addscalar",
        "add scalar to each element of src and store result to dest",
        &[("dest", -1), ("src", -1), ("scalar", 1)],
    );
    d.push_native(
        "math.add",
        "adds src1 and src2, write to dest, element by element",
        &[("dest", -1), ("src1", -1), ("src2", -1)],
    );
    d.push_native(
        "math.sub",
        "substracts src2 from src1 to dest, element by element",
        &[("dest", -1), ("src1", -1), ("src2", -1)],
    );
    d.push_native(
        "math.mul",
        "multiplies src1 and src2 to dest, element by element",
        &[("dest", -1), ("src1", -1), ("src2", -1)],
    );
    d.push_native(
        "math.div",
        "divides src1 by src2 to dest, element by element",
        &[("dest", -1), ("src1", -1), ("src2", -1)],
    );
    d.push_native(
        "math.min",
        "writes the minimum of src1 and src2 to dest, element by element",
        &[("dest", -1), ("src1", -1), ("src2", -1)],
    );
    d.push_native(
        "math.max",
        "writes the maximum of src1 and src2 to dest, element by element",
        &[("dest", -1), ("src1", -1), ("src2", -1)],
    );
    d.push_native(
        "math.clamp",
        "clamp src to low/high bounds into dest, element by element",
        &[("dest", -1), ("src", -1), ("low", -1), ("high", -1)],
    );
    d.push_native(
        "math.dot",
        "writes the dot product of src1 and src2 to dest, after a shift",
        &[("dest", 1), ("src1", -1), ("src2", -1), ("shift", 1)],
    );
    d.push_native(
        "math.stat",
        "performs statistics on src",
        &[("src", -1), ("min", 1), ("max", 1), ("mean", 1)],
    );
    d.push_native(
        "math.argbounds",
        "get the indices (argmin, argmax) of the limit values of src",
        &[("src", -1), ("argmin", 1), ("argmax", 1)],
    );
    d.push_native("math.sort", "sort array in place", &[("array", -1)]);
    d.push_native(
        "math.muldiv",
        "performs dest = (a*b)/c in 32 bits element by element",
        &[("dest", -1), ("a", -1), ("b", -1), ("c", -1)],
    );
    d.push_native(
        "math.atan2",
        "performs dest = atan2(y,x) element by element",
        &[("dest", -1), ("y", -1), ("x", -1)],
    );
    d.push_native(
        "math.sin",
        "performs dest = sin(x) element by element",
        &[("dest", -1), ("x", -1)],
    );
    d.push_native(
        "math.cos",
        "performs dest = cos(x) element by element",
        &[("dest", -1), ("x", -1)],
    );
    d.push_native(
        "math.rot2",
        "rotates v of angle a to dest",
        &[("dest", 2), ("v", 2), ("a", 1)],
    );
    d.push_native(
        "math.sqrt",
        "performs dest = sqrt(x) element by element",
        &[("dest", -1), ("x", -1)],
    );
    d.push_native(
        "math.rand",
        "fill array with random values",
        &[("dest", -1)],
    );
    d.push_native(
        "deque.size",
        "report size of dest",
        &[("deque", -1), ("size", 1)],
    );
    d.push_native(
        "deque.get",
        "fill dest from deque at index",
        &[("deque", -1), ("dest", -2), ("index", 1)],
    );
    d.push_native(
        "deque.set",
        "copies src to deque at index",
        &[("deque", -1), ("src", -2), ("index", 1)],
    );
    d.push_native(
        "deque.insert",
        "shift deque at index by len(src) and insert src",
        &[("deque", -1), ("src", -2), ("index", 1)],
    );
    d.push_native(
        "deque.erase",
        "shift deque at index by len to erase",
        &[("deque", -1), ("index", 1), ("len", 1)],
    );
    d.push_native(
        "deque.push_front",
        "insert src before the front of deque",
        &[("deque", -1), ("src", -2)],
    );
    d.push_native(
        "deque.push_back",
        "insert src after the back of deque",
        &[("deque", -1), ("src", -2)],
    );
    d.push_native(
        "deque.pop_front",
        "fill dest from front of deque then erase elements",
        &[("deque", -1), ("dest", -2)],
    );
    d.push_native(
        "deque.pop_back",
        "fill dest from back of deque then erase elements",
        &[("deque", -1), ("dest", -2)],
    );
}

/// Number of standard natives.
pub const STANDARD_NATIVES: usize = 30;
