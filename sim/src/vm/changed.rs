//! CHANGED_VARIABLES packets (`AsebaSendChangedVariables`, protocol 7+): the words that differ
//! from the shadow copy, as `{start, count, values…}` blocks, cut where the official node cuts.

use super::Vm;
use msgs::wire::MAX_PAYLOAD;

/// Packet limit of a node built with `ASEBA_LIMITED_MESSAGE_SIZE` (the Thymio): 90 bytes of
/// type and payload.
pub const LIMITED_PACKET: usize = 90;
/// Packet limit otherwise: `ASEBA_MAX_OUTER_PACKET_SIZE − 4`.
pub const FULL_PACKET: usize = 518;

impl Vm {
    /// Builds the CHANGED_VARIABLES payloads as the official node does and updates the shadow
    /// copy: one block per run of changed words, a packet sent as soon as its type and payload
    /// reach `max_packet` bytes, and a last packet at the end of memory (closed by a block
    /// `{0, 0}` unless a run reaches the end). Always at least one packet. `send` gets each
    /// payload; `buf` is scratch (reused, not grown past [`MAX_PAYLOAD`] + 6 bytes).
    ///
    /// Where the official node would write past its 518-byte buffer (a block header added to a
    /// nearly full packet when `max_packet` is large), the packet is sent first instead.
    pub fn changed_variables_packets(
        &mut self,
        max_packet: usize,
        buf: &mut Vec<u8>,
        mut send: impl FnMut(&[u8]),
    ) {
        buf.clear();
        let n = self.variables.len();
        let mut has_header = false;
        let mut has_modified = false;
        let (mut size_pos, mut first, mut size) = (0usize, 0u16, 0u16);
        for idx in 0..=n {
            let at_end = idx == n;
            if !has_header {
                if buf.len() + 6 > MAX_PAYLOAD {
                    send(buf);
                    buf.clear();
                }
                size_pos = buf.len();
                buf.extend_from_slice(&[0; 4]);
                has_header = true;
            }
            let modified = !at_end && self.variables_old[idx] != self.variables[idx];
            if modified {
                if !has_modified {
                    has_modified = true;
                    first = idx as u16;
                }
                buf.extend_from_slice(&self.variables[idx].to_le_bytes());
                size += 1;
                self.variables_old[idx] = self.variables[idx];
            }
            // the official count includes the 2-byte type before the payload
            let full = 2 + buf.len() >= max_packet || buf.len() + 2 > MAX_PAYLOAD;
            if (!modified && has_modified) || full || at_end {
                buf[size_pos..size_pos + 2].copy_from_slice(&first.to_le_bytes());
                buf[size_pos + 2..size_pos + 4].copy_from_slice(&size.to_le_bytes());
                has_modified = false;
                (first, size) = (0, 0);
                has_header = false;
            }
            if full || at_end {
                send(buf);
                buf.clear();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::vm::VmSizes;

    fn packets(vm: &mut Vm, max: usize) -> Vec<Vec<u16>> {
        let mut buf = Vec::new();
        let mut got = Vec::new();
        vm.changed_variables_packets(max, &mut buf, |p| {
            got.push(
                p.chunks(2)
                    .map(|c| u16::from_le_bytes([c[0], c[1]]))
                    .collect(),
            )
        });
        got
    }

    #[test]
    fn blocks_runs_and_the_closing_block() {
        let mut vm = Vm::new(
            1,
            VmSizes {
                bytecode: 4,
                variables: 10,
                stack: 4,
            },
        );
        assert_eq!(packets(&mut vm, LIMITED_PACKET), vec![vec![0, 0]]);
        vm.variables_mut()[2] = 5;
        vm.variables_mut()[3] = 6;
        vm.variables_mut()[7] = -1;
        assert_eq!(
            packets(&mut vm, LIMITED_PACKET),
            vec![vec![2, 2, 5, 6, 7, 1, 0xFFFF, 0, 0]]
        );
        // the shadow is updated: nothing changed since
        assert_eq!(packets(&mut vm, LIMITED_PACKET), vec![vec![0, 0]]);
        // a run reaching the end of memory closes the last packet itself
        vm.variables_mut()[9] = 3;
        assert_eq!(packets(&mut vm, LIMITED_PACKET), vec![vec![9, 1, 3]]);
    }

    #[test]
    fn long_runs_are_cut_at_the_packet_limit() {
        let mut vm = Vm::new(
            1,
            VmSizes {
                bytecode: 4,
                variables: 100,
                stack: 4,
            },
        );
        for (i, v) in vm.variables_mut().iter_mut().enumerate() {
            *v = i as i16 + 1;
        }
        let got = packets(&mut vm, LIMITED_PACKET);
        // 2 (type) + 4 (block header) + 2 × 42 words = 90 bytes: cut after 42 words
        assert_eq!(got[0][..2], [0, 42]);
        assert_eq!(got[0].len(), 44);
        assert_eq!(got[1][..2], [42, 42]);
        assert_eq!(got[2][..2], [84, 16]);
        assert_eq!(got.len(), 3);
        let mut big = Vm::new(
            1,
            VmSizes {
                bytecode: 4,
                variables: 600,
                stack: 4,
            },
        );
        big.variables_mut().fill(7);
        for p in packets(&mut big, FULL_PACKET) {
            assert!(p.len() * 2 <= MAX_PAYLOAD);
        }
    }
}
