//! Who gets in at the XML-RPC door: at most [`super::Limits::max_xmlrpc`] connections at once, at most
//! [`super::Limits::max_xmlrpc_per_peer`] from one address. A newcomer is never turned away for the others: when
//! its address (or the whole door) is full, the **oldest connection still sending its request after the grace**
//! ([`super::Limits::xmlrpc_grace`]) is dropped to make room. A slow or idle peer can hold a place only until
//! newer connections need it (and never longer than the request deadline), so a caller that sends its request
//! promptly is served however many slow connections are open — on loopback, where every peer is 127.0.0.1, as
//! from another host. A connection younger than the grace is never dropped: a burst of prompt callers (roscpp's
//! `rosbag record -a` opens some forty `requestTopic` connections at once) waits at the door
//! ([`Admission::Wait`]) for a place, which such callers free within milliseconds, instead of dropping one
//! another. Only a connection already answered (its request read whole) is never dropped at all; a door full of
//! those turns the newcomer away.

use std::collections::BTreeMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::{Duration, Instant};
use tokio::sync::Notify;

struct Entry {
    peer: IpAddr,
    /// When it was let in.
    since: Instant,
    /// Still sending its request (may be dropped for a newcomer once older than the grace).
    reading: bool,
    evict: Arc<Notify>,
}

/// What the door says to a newcomer.
pub(crate) enum Admission {
    /// Let in.
    In(Pass),
    /// No place yet: every connection that could make room is younger than the grace. Try again when a place is
    /// freed ([`Door::freed`]) or after this long, when the oldest of them is past its grace.
    Wait(Duration),
    /// Every place is held by a connection being answered.
    Full,
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
    grace: Duration,
    /// Notified whenever a connection leaves or is answered (a waiting newcomer may find room).
    freed: Notify,
}

/// A connection let in: told when it is dropped for a newcomer; leaves the table when this is dropped.
pub(crate) struct Pass {
    door: Arc<Door>,
    id: u64,
    /// Notified when the connection is dropped to make room.
    pub evicted: Arc<Notify>,
}

impl Door {
    /// A door for `max` connections at once, `per_peer` of them from one address (each at least 1); a connection
    /// still reading is dropped for a newcomer only once older than `grace`.
    pub fn new(max: usize, per_peer: usize, grace: Duration) -> Arc<Door> {
        Arc::new(Door {
            table: Mutex::default(),
            max: max.max(1),
            per_peer: per_peer.max(1),
            grace,
            freed: Notify::new(),
        })
    }

    /// Completes when a connection leaves or is answered (or was since the last wait): a newcomer told to
    /// [`Admission::Wait`] tries again then.
    pub async fn freed(&self) {
        self.freed.notified().await
    }

    fn lock(&self) -> MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Lets a connection from `peer` in now (see [`Door::enter_at`]). The second value counts the connections
    /// dropped.
    pub fn enter(self: &Arc<Door>, peer: IpAddr) -> (Admission, usize) {
        self.enter_at(peer, Instant::now())
    }

    /// Lets a connection from `peer` in at `now`, dropping the oldest one still sending its request past its
    /// grace of the same address when that address is full, then of any address when the door is full.
    pub fn enter_at(self: &Arc<Door>, peer: IpAddr, now: Instant) -> (Admission, usize) {
        let mut t = self.lock();
        let mut dropped = 0;
        let from_peer = t.entries.values().filter(|e| e.peer == peer).count();
        if from_peer >= self.per_peer && self.evict_oldest(&mut t, now, |e| e.peer == peer) {
            dropped += 1;
        }
        if t.entries.len() >= self.max && self.evict_oldest(&mut t, now, |_| true) {
            dropped += 1;
        }
        let peer_full = t.entries.values().filter(|e| e.peer == peer).count() >= self.per_peer;
        let door_full = t.entries.len() >= self.max;
        if peer_full || door_full {
            // the reader that will first be past its grace among those that could make room
            let first_due = t
                .entries
                .values()
                .filter(|e| e.reading && (door_full || e.peer == peer))
                .map(|e| (e.since + self.grace).saturating_duration_since(now))
                .min();
            return match first_due {
                Some(d) => (Admission::Wait(d), dropped),
                None => (Admission::Full, dropped),
            };
        }
        let id = t.next;
        t.next += 1;
        let evict = Arc::new(Notify::new());
        t.entries.insert(
            id,
            Entry {
                peer,
                since: now,
                reading: true,
                evict: evict.clone(),
            },
        );
        let pass = Pass {
            door: self.clone(),
            id,
            evicted: evict,
        };
        (Admission::In(pass), dropped)
    }

    /// Drops the oldest connection still reading and past its grace at `now` among those `which` selects;
    /// whether there was one.
    fn evict_oldest(&self, t: &mut Table, now: Instant, which: impl Fn(&Entry) -> bool) -> bool {
        let Some(id) = t
            .entries
            .iter()
            .find(|(_, e)| e.reading && now.duration_since(e.since) >= self.grace && which(e))
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

    /// Connections in the table.
    #[cfg(test)]
    pub fn len(&self) -> usize {
        self.lock().entries.len()
    }
}

impl Pass {
    /// The request is read whole: from now on the connection is not dropped for a newcomer.
    pub fn answering(&self) {
        if let Some(e) = self.door.lock().entries.get_mut(&self.id) {
            e.reading = false;
        }
        self.door.freed.notify_one();
    }
}

impl Drop for Pass {
    fn drop(&mut self) {
        self.door.lock().entries.remove(&self.id);
        self.door.freed.notify_one();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::Ipv4Addr;

    fn ip(n: u8) -> IpAddr {
        IpAddr::V4(Ipv4Addr::new(10, 0, 0, n))
    }

    const GRACE: Duration = Duration::from_millis(250);

    fn door(max: usize, per_peer: usize) -> Arc<Door> {
        Door::new(max, per_peer, GRACE)
    }

    fn pass(a: (Admission, usize)) -> Option<Pass> {
        match a.0 {
            Admission::In(p) => Some(p),
            _ => None,
        }
    }

    #[test]
    fn a_full_address_drops_its_own_oldest_reader_past_its_grace() {
        let t0 = Instant::now();
        let door = door(10, 2);
        let a = pass(door.enter_at(ip(1), t0)).unwrap();
        let b = pass(door.enter_at(ip(1), t0 + Duration::from_millis(1))).unwrap();
        let other = pass(door.enter_at(ip(2), t0)).unwrap();
        let (c, dropped) = door.enter_at(ip(1), t0 + GRACE);
        assert_eq!(dropped, 1);
        assert!(matches!(c, Admission::In(_)));
        // a (the oldest of 10.0.0.1) was told; b and the other address were not
        assert!(block_notified(&a.evicted));
        assert!(!block_notified(&b.evicted));
        assert!(!block_notified(&other.evicted));
        assert_eq!(door.len(), 3);
    }

    #[test]
    fn a_full_door_drops_the_oldest_reader_and_lets_the_newcomer_in() {
        let t0 = Instant::now();
        let door = door(3, 3);
        let passes: Vec<Pass> = (0..3)
            .map(|i| pass(door.enter_at(ip(i), t0)).unwrap())
            .collect();
        // the oldest is being answered: the next oldest still reading goes
        passes[0].answering();
        let (newcomer, dropped) = door.enter_at(ip(9), t0 + GRACE);
        assert!(matches!(newcomer, Admission::In(_)));
        assert_eq!(dropped, 1);
        assert!(!block_notified(&passes[0].evicted));
        assert!(block_notified(&passes[1].evicted));
        assert_eq!(door.len(), 3);
    }

    #[test]
    fn a_burst_of_prompt_callers_waits_for_a_place_instead_of_dropping_one_another() {
        // roscpp's `rosbag record -a`: some forty requestTopic connections from 127.0.0.1 at once
        let t0 = Instant::now();
        let door = door(64, 2);
        let a = pass(door.enter_at(ip(1), t0)).unwrap();
        let b = pass(door.enter_at(ip(1), t0)).unwrap();
        let (third, dropped) = door.enter_at(ip(1), t0 + Duration::from_millis(10));
        assert_eq!(dropped, 0);
        match third {
            Admission::Wait(d) => assert_eq!(d, GRACE - Duration::from_millis(10)),
            _ => panic!("a newcomer beside young callers must wait"),
        }
        assert!(!block_notified(&a.evicted));
        assert!(!block_notified(&b.evicted));
        // the first caller is answered and leaves: the door says so, and the newcomer gets its place
        a.answering();
        drop(a);
        assert!(block_notified(&door.freed));
        assert!(pass(door.enter_at(ip(1), t0 + Duration::from_millis(11))).is_some());
        assert!(!block_notified(&b.evicted));
    }

    #[test]
    fn a_door_full_of_answered_connections_turns_the_newcomer_away() {
        let t0 = Instant::now();
        let door = door(2, 2);
        let a = pass(door.enter_at(ip(1), t0)).unwrap();
        let b = pass(door.enter_at(ip(1), t0)).unwrap();
        a.answering();
        b.answering();
        assert!(matches!(
            door.enter_at(ip(2), t0 + GRACE).0,
            Admission::Full
        ));
        drop(a);
        assert!(pass(door.enter_at(ip(2), t0 + GRACE)).is_some());
    }

    #[test]
    fn many_slow_connections_never_keep_a_newcomer_out() {
        let t0 = Instant::now();
        let door = door(8, 4);
        let mut slow = Vec::new();
        let mut now = t0;
        for _ in 0..100 {
            // each newcomer comes when the oldest slow one is past its grace (or earlier: then it waits until then)
            let p = loop {
                match door.enter_at(ip(1), now) {
                    (Admission::In(p), _) => break p,
                    (Admission::Wait(d), _) => now += d,
                    (Admission::Full, _) => panic!("slow connections are never answered"),
                }
            };
            slow.push(p);
        }
        assert!(door.len() <= 4);
        assert!(now <= t0 + GRACE * 100);
        let legit = loop {
            match door.enter_at(ip(1), now) {
                (Admission::In(p), _) => break p,
                (Admission::Wait(d), _) => {
                    assert!(d <= GRACE);
                    now += d
                }
                (Admission::Full, _) => panic!("never full of answered ones"),
            }
        };
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
