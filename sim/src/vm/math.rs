//! Fixed-point maths of the standard natives, bit-exact with the official VM as compiled for
//! a host (`natives.c`, non-PIC paths): table-based sine and arctangent, integer square root,
//! comb sort.

/// Arctangent table: 20 octaves of 8 entries plus the end point (official values).
pub const ATAN_TABLE: [i16; 161] = [
    652, 735, 816, 896, 977, 1058, 1139, 1218, 1300, 1459, 1620, 1777, 1935, 2093, 2250, 2403,
    2556, 2868, 3164, 3458, 3748, 4029, 4307, 4578, 4839, 5359, 5836, 6290, 6720, 7126, 7507, 7861,
    8203, 8825, 9357, 9839, 10260, 10640, 10976, 11281, 11557, 12037, 12425, 12755, 13036, 13277,
    13486, 13671, 13837, 14112, 14331, 14514, 14666, 14796, 14907, 15003, 15091, 15235, 15348,
    15441, 15519, 15585, 15642, 15691, 15736, 15808, 15865, 15912, 15951, 15984, 16013, 16037,
    16060, 16096, 16125, 16148, 16168, 16184, 16199, 16211, 16222, 16240, 16255, 16266, 16276,
    16284, 16292, 16298, 16303, 16312, 16320, 16325, 16331, 16334, 16338, 16341, 16344, 16348,
    16352, 16355, 16357, 16360, 16361, 16363, 16364, 16366, 16369, 16369, 16371, 16372, 16373,
    16373, 16375, 16375, 16377, 16376, 16378, 16378, 16378, 16379, 16379, 16380, 16380, 16380,
    16382, 16381, 16381, 16381, 16382, 16382, 16382, 16382, 16382, 16382, 16384, 16383, 16383,
    16383, 16383, 16383, 16383, 16383, 16383, 16383, 16383, 16383, 16384, 16384, 16384, 16384,
    16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384, 16384,
];

/// Quarter-wave sine table, 129 entries (official values).
pub const SIN_TABLE: [i16; 129] = [
    0, 403, 804, 1207, 1608, 2010, 2411, 2812, 3212, 3612, 4011, 4411, 4808, 5206, 5603, 5998,
    6393, 6787, 7180, 7572, 7962, 8352, 8740, 9127, 9513, 9896, 10279, 10660, 11040, 11417, 11794,
    12167, 12540, 12911, 13279, 13646, 14010, 14373, 14733, 15091, 15447, 15801, 16151, 16500,
    16846, 17190, 17531, 17869, 18205, 18538, 18868, 19196, 19520, 19842, 20160, 20476, 20788,
    21097, 21403, 21706, 22006, 22302, 22595, 22884, 23171, 23453, 23732, 24008, 24279, 24548,
    24812, 25073, 25330, 25583, 25833, 26078, 26320, 26557, 26791, 27020, 27246, 27467, 27684,
    27897, 28106, 28311, 28511, 28707, 28899, 29086, 29269, 29448, 29622, 29792, 29957, 30117,
    30274, 30425, 30572, 30715, 30852, 30985, 31114, 31238, 31357, 31471, 31581, 31686, 31786,
    31881, 31972, 32057, 32138, 32215, 32285, 32352, 32413, 32470, 32521, 32569, 32610, 32647,
    32679, 32706, 32728, 32746, 32758, 32766, 32767,
];

/// `aseba_atan2`: angle of (x, y) in [−32768, 32767] for [−π, π).
pub fn atan2(y: i16, x: i16) -> i16 {
    if y == 0 {
        return if x >= 0 { 0 } else { -32768 };
    }
    // C: `int16_t ax = abs(x)`, so abs(-32768) stays -32768
    let ax = (x as i32).abs() as i16;
    let ay = (y as i32).abs() as i16;
    let mut res: i16;
    if x == 0 {
        res = 16384;
    } else {
        let value: i32 = ((ay as i32) << 16).wrapping_div(ax as i32);
        let mut fb1: i32 = 0;
        for k in 0..32 {
            if value >> k != 0 {
                fb1 = k;
            }
        }
        let index = fb1 - 12;
        if index < 0 {
            res = ((ATAN_TABLE[0] as i32).wrapping_mul(value) >> 12) as i16;
        } else {
            let rest = value.wrapping_sub(1i32.wrapping_shl(fb1 as u32));
            let sub = (rest >> (fb1 - 8)) as i16;
            let bin = (sub >> 5) as i32;
            let delta = (sub & 0x1f) as i32;
            // the official code can index outside its table for x = -32768; stay inside
            let at = |i: i32| ATAN_TABLE[i.clamp(0, ATAN_TABLE.len() as i32 - 1) as usize] as i32;
            let i0 = index * 8 + bin;
            res = ((at(i0) * (32 - delta) + at(i0 + 1) * delta) >> 5) as i16;
        }
        if x < 0 {
            res = (32768 - res as i32) as i16;
        }
    }
    if y > 0 {
        res
    } else {
        res.wrapping_neg()
    }
}

/// `aseba_sin`: sine scaled to ±32767, angle in [−32768, 32767] for [−π, π).
pub fn sin(angle: i16) -> i16 {
    let (lookup, invert) = if angle < 0 {
        if angle < -16384 {
            (32768 + angle as i32, true)
        } else if angle > -16384 {
            (-(angle as i32), true)
        } else {
            return -32767;
        }
    } else if angle > 16384 {
        (32767 - angle as i32 + 1, false)
    } else if angle < 16384 {
        (angle as i32, false)
    } else {
        return 32767;
    };
    let index = (lookup >> 7) as usize;
    let sub = lookup & 0x7f;
    let result =
        ((SIN_TABLE[index] as i32 * (128 - sub) + SIN_TABLE[index + 1] as i32 * sub) >> 7) as i16;
    if invert {
        result.wrapping_neg()
    } else {
        result
    }
}

/// `aseba_cos`.
pub fn cos(angle: i16) -> i16 {
    sin((16384i32 + angle as i32) as i16)
}

/// `aseba_sqrt`: floor of the square root of a non-negative value.
pub fn sqrt(num: i16) -> i16 {
    let mut op = num as i32;
    let mut res: i32 = 0;
    let mut one: i32 = 1 << 14;
    while one > op {
        one >>= 2;
    }
    while one != 0 {
        if op >= res + one {
            op -= res + one;
            res = (res >> 1) + one;
        } else {
            res >>= 1;
        }
        one >>= 2;
    }
    res as i16
}

/// `aseba_comb_sort`: ascending, in place.
pub fn comb_sort(values: &mut [i16]) {
    let size = values.len();
    let mut gap = size;
    let mut swapped = false;
    while gap > 1 || swapped {
        if gap > 1 {
            gap = gap * 4 / 5;
        }
        swapped = false;
        let mut i = 0;
        while gap + i < size {
            if values[i] as i32 - values[i + gap] as i32 > 0 {
                values.swap(i, i + gap);
                swapped = true;
            }
            i += 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sine_landmarks() {
        assert_eq!(sin(0), 0);
        assert_eq!(sin(16384), 32767);
        assert_eq!(sin(-16384), -32767);
        assert_eq!(sin(8192), 23171);
        assert_eq!(cos(0), 32767);
        assert_eq!(sin(-32768), 0);
        for a in (-32768i32..=32767).step_by(7) {
            let exact = (a as f64 * std::f64::consts::PI / 32768.0).sin() * 32767.0;
            assert!((sin(a as i16) as f64 - exact).abs() < 8.0, "sin({a})");
        }
    }

    #[test]
    fn atan2_landmarks() {
        assert_eq!(atan2(0, 5), 0);
        assert_eq!(atan2(0, -5), -32768);
        assert_eq!(atan2(5, 0), 16384);
        assert_eq!(atan2(-5, 0), -16384);
        for (y, x) in [
            (1i16, 1i16),
            (100, 3),
            (-7, 200),
            (300, -300),
            (32767, 1),
            (1, -32767),
            (32767, 32767),
        ] {
            let exact = (y as f64).atan2(x as f64) / std::f64::consts::PI * 32768.0;
            let got = atan2(y, x) as f64;
            let d = (got - exact).abs();
            let err = d.min(65536.0 - d);
            assert!(err < 64.0, "atan2({y},{x}) = {got}, exact {exact}");
        }
        // -32768 stays negative through the official `abs`: the result is off, as officially
        assert_eq!(atan2(1, -32768), 16384);
        let _ = atan2(-32768, 1);
        let _ = atan2(-32768, -32768);
        // -32768 stays negative through the official `abs`: the result is off, as officially
        assert_eq!(atan2(1, -32768), 16384);
        let _ = atan2(-32768, 1);
        let _ = atan2(-32768, -32768);
    }

    #[test]
    fn sqrt_is_floor() {
        for v in 0..=32767i16 {
            let r = sqrt(v) as i32;
            assert!(
                r * r <= v as i32 && (r + 1) * (r + 1) > v as i32,
                "sqrt({v}) = {r}"
            );
        }
    }

    #[test]
    fn comb_sort_sorts() {
        let mut v = [5i16, -3, 32767, -32768, 0, 7, 7, 1];
        comb_sort(&mut v);
        assert_eq!(v, [-32768, -3, 0, 1, 5, 7, 7, 32767]);
        comb_sort(&mut []);
    }
}
