//! Who gets in at the XML-RPC door: at most [`super::Limits::max_xmlrpc`] connections at once, at most
//! [`super::Limits::max_xmlrpc_per_peer`] from one address. A newcomer is never turned away for the others: when
//! its address (or the whole door) is full, the **oldest connection still sending its request** is dropped to
//! make room. A slow or idle peer can hold a place only until newer connections need it (and never longer than
//! the request deadline), so a caller that sends its request promptly is served however many slow connections
//! are open — on loopback, where every peer is 127.0.0.1, as from another host. Only a connection already
//! answered (its request read whole) is never dropped; a door full of those turns the newcomer away.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use tokio::sync::Notify;

struct Entry {
    peer: IpAddr,
    /// Still sending its request (may be dropped for a newcomer).
    reading: bool,
    evict: Arc<Notify>,
}

#[derive(Default)]
struct Table {
    /// By admission order (ids only grow: the first is the oldest).
    entries: BTreeMap<u64, Entry>,
    next: u64,
}

/// The admission table of one XML-RPC listener (see the module documentation).
pub(crate) struct Door {
    table: Mutex<Table>,
    max: usize,
    per_peer: usize,
}

/// A connection let in: told when it is dropped for a newcomer; leaves the table when this is dropped.
pub(crate) struct Pass {
    door: Arc<Door>,
    id: u64,
    /// Notified when the connection is dropped to make room.
    pub evicted: Arc<Notify>,
}

impl Door {
    /// A door for `max` connections at once, `per_peer` of them from one address (each at least 1).
    pub fn new(max: usize, per_peer: usize) -> Arc<Door> {
        Arc::new(Door {
            table: Mutex::default(),
            max: max.max(1),
            per_peer: per_peer.max(1),
        })
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets a connection from `peer` in, dropping the oldest one still sending its request of the same address
    /// when that address is full, then of any address when the door is full; `None` when every place is held by
    /// a connection being answered. The second value counts the connections dropped.
    pub fn enter(self: &Arc<Door>, peer: IpAddr) -> (Option<Pass>, usize) {
        let mut t = self.lock();
        let mut dropped = 0;
        let from_peer = t.entries.values().filter(|e| e.peer == peer).count();
        if from_peer >= self.per_peer && evict_oldest(&mut t, |e| e.peer == peer) {
            dropped += 1;
        }
        if t.entries.len() >= self.max && evict_oldest(&mut t, |_| true) {
            dropped += 1;
        }
        let room = t.entries.len() < self.max
            && t.entries.values().filter(|e| e.peer == peer).count() < self.per_peer;
        if !room {
            return (None, dropped);
        }
        let id = t.next;
        t.next += 1;
        let evict = Arc::new(Notify::new());
        t.entries.insert(
            id,
            Entry {
                peer,
                reading: true,
                evict: evict.clone(),
            },
        );
        let pass = Pass {
            door: self.clone(),
            id,
            evicted: evict,
        };
        (Some(pass), dropped)
    }

    /// Connections in the table.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }
}

/// Drops the oldest connection still reading among those `which` selects; whether there was one.
fn evict_oldest(t: &mut Table, which: impl Fn(&Entry) -> bool) -> bool {
    let Some(id) = t
        .entries
        .iter()
        .find(|(_, e)| e.reading && which(e))
        .map(|(id, _)| *id)
    else {
        return false;
    };
    if let Some(e) = t.entries.remove(&id) {
        // a permit is kept if the task is not waiting yet: it sees it at its first wait
        e.evict.notify_one();
    }
    true
}

impl Pass {
    /// The request is read whole: from now on the connection is not dropped for a newcomer.
    pub fn answering(&self) {
        if let Some(e) = self.door.lock().entries.get_mut(&self.id) {
            e.reading = false;
        }
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.door.lock().entries.remove(&self.id);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ip(n: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
    }

    #[test]
    fn a_full_address_drops_its_own_oldest_reader() {
        let door = Door::new(10, 2);
        let (a, _) = door.enter(ip(1));
        let (b, _) = door.enter(ip(1));
        let (other, _) = door.enter(ip(2));
        let (c, dropped) = door.enter(ip(1));
        assert_eq!(dropped, 1);
        assert!(c.is_some());
        // a (the oldest of 10.0.0.1) was told; b and the other address were not
        let (a, b, other) = (a.unwrap(), b.unwrap(), other.unwrap());
        assert!(block_notified(&a.evicted));
        assert!(!block_notified(&b.evicted));
        assert!(!block_notified(&other.evicted));
        assert_eq!(door.len(), 3);
    }

    #[test]
    fn a_full_door_drops_the_oldest_reader_and_lets_the_newcomer_in() {
        let door = Door::new(3, 3);
        let passes: Vec<Pass> = (0..3).map(|i| door.enter(ip(i)).0.unwrap()).collect();
        // the oldest is being answered: the next oldest still reading goes
        passes[0].answering();
        let (newcomer, dropped) = door.enter(ip(9));
        assert!(newcomer.is_some());
        assert_eq!(dropped, 1);
        assert!(!block_notified(&passes[0].evicted));
        assert!(block_notified(&passes[1].evicted));
        assert_eq!(door.len(), 3);
    }

    #[test]
    fn a_door_full_of_answered_connections_turns_the_newcomer_away() {
        let door = Door::new(2, 2);
        let a = door.enter(ip(1)).0.unwrap();
        let b = door.enter(ip(1)).0.unwrap();
        a.answering();
        b.answering();
        assert!(door.enter(ip(2)).0.is_none());
        drop(a);
        assert!(door.enter(ip(2)).0.is_some());
    }

    #[test]
    fn many_slow_connections_never_keep_a_newcomer_out() {
        let door = Door::new(8, 4);
        let mut slow = Vec::new();
        for _ in 0..100 {
            let (p, _) = door.enter(ip(1));
            slow.push(p.expect("always let in"));
        }
        assert!(door.len() <= 4);
        let legit = door.enter(ip(1)).0.expect("let in");
        assert!(!block_notified(&legit.evicted));
    }

    /// Whether `n` holds a notification (without waiting for one).
    fn block_notified(n: &Notify) -> bool {
        let f = n.notified();
        tokio::pin!(f);
        let waker = std::task::Waker::noop();
        let mut cx = std::task::Context::from_waker(waker);
        f.as_mut().poll(&mut cx).is_ready()
    }

    use std::future::Future;
}
