//! [`Lobby`]: the connections that have not yet sent their first handshake
//! message. Each holds a descriptor, so there is room for a bounded number;
//! when it is full, a newcomer still gets in and the oldest connection of
//! the address with the most in the lobby leaves. A flood of silent
//! connections therefore cannot keep a worker out: the worker's connection
//! gets in, and its first message, sent at once, is read and checked long
//! before the flood's newer connections push it out.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::net::IpAddr;

/// Where one connection waits, for [`Lobby::leave`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Ticket {
    source: IpAddr,
    /// The order of arrival.
    number: u64,
}

/// Connections waiting for their first message, each with a `T` (how to
/// tell it to go), grouped by source address in order of arrival.
#[derive(Debug)]
pub struct Lobby<T> {
    capacity: usize,
    next: u64,
    len: usize,
    by_source: HashMap<IpAddr, BTreeMap<u64, T>>,
    /// `(connections waiting, source)` for every source with some.
    crowds: BTreeSet<(usize, IpAddr)>,
}

impl<T> Lobby<T> {
    /// A lobby with room for `capacity` connections (at least one).
    pub fn new(capacity: usize) -> Self {
        Self { capacity: capacity.max(1), next: 0, len: 0, by_source: HashMap::new(), crowds: BTreeSet::new() }
    }

    /// Lets in a connection from `source`; returns its ticket and, if the
    /// lobby was full, the `T` of the connection that must leave to make
    /// room: the oldest of the source with the most connections waiting.
    pub fn enter(&mut self, source: IpAddr, value: T) -> (Ticket, Option<T>) {
        let pushed_out = if self.len >= self.capacity { self.push_out() } else { None };
        let number = self.next;
        self.next += 1;
        let waiting = self.by_source.entry(source).or_default();
        self.crowds.remove(&(waiting.len(), source));
        waiting.insert(number, value);
        self.crowds.insert((waiting.len(), source));
        self.len += 1;
        (Ticket { source, number }, pushed_out)
    }

    /// Takes out the connection of `ticket`, if it is still in (and was not pushed out).
    pub fn leave(&mut self, ticket: Ticket) -> Option<T> {
        let waiting = self.by_source.get_mut(&ticket.source)?;
        let before = waiting.len();
        let value = waiting.remove(&ticket.number)?;
        self.regroup(ticket.source, before);
        Some(value)
    }

    /// Removes the oldest connection of the most crowded source.
    fn push_out(&mut self) -> Option<T> {
        let &(before, source) = self.crowds.last()?;
        let (_, value) = self.by_source.get_mut(&source)?.pop_first()?;
        self.regroup(source, before);
        Some(value)
    }

    /// Books one connection less for `source`, which had `before`.
    fn regroup(&mut self, source: IpAddr, before: usize) {
        self.len -= 1;
        self.crowds.remove(&(before, source));
        if before > 1 {
            self.crowds.insert((before - 1, source));
        } else {
            self.by_source.remove(&source);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(last: u8) -> IpAddr {
        IpAddr::from([10, 0, 0, last])
    }

    #[test]
    fn a_newcomer_always_gets_in_and_the_oldest_goes() {
        let mut lobby = Lobby::new(3);
        let first = lobby.enter(ip(1), "a").0;
        assert_eq!(lobby.enter(ip(1), "b").1, None);
        assert_eq!(lobby.enter(ip(1), "c").1, None);
        assert_eq!(lobby.enter(ip(1), "d").1, Some("a"));
        assert_eq!(lobby.leave(first), None, "pushed out already");
        assert_eq!(lobby.enter(ip(1), "e").1, Some("b"));
        assert_eq!(lobby.len, 3);
    }

    #[test]
    fn the_most_crowded_source_makes_room() {
        let mut lobby = Lobby::new(4);
        let worker = lobby.enter(ip(2), "worker").0;
        for flood in ["f1", "f2", "f3"] {
            assert_eq!(lobby.enter(ip(1), flood).1, None);
        }
        // The flood's address holds three, the worker's one: the flood makes room.
        assert_eq!(lobby.enter(ip(3), "other").1, Some("f1"));
        assert_eq!(lobby.enter(ip(1), "f4").1, Some("f2"));
        assert_eq!(lobby.leave(worker), Some("worker"));
        assert_eq!(lobby.len, 3);
    }

    #[test]
    fn leaving_frees_room_and_forgets_empty_sources() {
        let mut lobby = Lobby::new(2);
        let a = lobby.enter(ip(1), 1).0;
        let b = lobby.enter(ip(2), 2).0;
        assert_eq!(lobby.leave(a), Some(1));
        assert_eq!(lobby.leave(a), None);
        assert_eq!(lobby.enter(ip(3), 3).1, None);
        assert_eq!(lobby.leave(b), Some(2));
        assert_eq!(lobby.by_source.len(), 1);
        assert_eq!(lobby.crowds.len(), 1);
    }
}
