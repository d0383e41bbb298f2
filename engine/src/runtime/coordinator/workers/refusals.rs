//! [`Refusals`]: how often to say that a connection was refused. A flood of
//! connections from one address would otherwise print a line each.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// At most one line per address per this long.
pub const REFUSAL_WINDOW: Duration = Duration::from_secs(60);

/// Refusals per address: when one was last reported, and how many since.
#[derive(Debug, Default)]
pub struct Refusals {
    by_address: HashMap<String, (Instant, u64)>,
}

impl Refusals {
    /// Notes a refused connection from `peer` (`host:port`); returns how many
    /// more were refused from its address since the last line, if a line
    /// is due now.
    pub fn note(&mut self, peer: &str, now: Instant) -> Option<u64> {
        let address = peer.rsplit_once(':').map_or(peer, |(host, _)| host).to_owned();
        match self.by_address.get_mut(&address) {
            Some((last, held)) if now.duration_since(*last) < REFUSAL_WINDOW => {
                *held += 1;
                None
            }
            Some((last, held)) => {
                *last = now;
                Some(std::mem::take(held))
            }
            None => {
                self.by_address.insert(address, (now, 0));
                Some(0)
            }
        }
    }

    /// The addresses with refusals not yet reported, and how many (said at the end of a run).
    pub fn held(&mut self) -> Vec<(String, u64)> {
        let mut held: Vec<(String, u64)> = self
            .by_address
            .iter_mut()
            .filter(|(_, (_, n))| *n > 0)
            .map(|(a, (_, n))| (a.clone(), std::mem::take(n)))
            .collect();
        held.sort();
        held
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_line_per_address_per_window() {
        let mut r = Refusals::default();
        let t0 = Instant::now();
        assert_eq!(r.note("10.0.0.1:5000", t0), Some(0));
        for port in 1..=4999 {
            assert_eq!(r.note(&format!("10.0.0.1:{port}"), t0 + Duration::from_millis(port)), None);
        }
        assert_eq!(r.note("10.0.0.2:1", t0), Some(0), "another address has its own window");
        assert_eq!(r.note("10.0.0.1:1", t0 + REFUSAL_WINDOW), Some(4999));
        assert_eq!(r.note("10.0.0.1:2", t0 + REFUSAL_WINDOW), None);
        assert_eq!(r.held(), [("10.0.0.1".to_owned(), 1)]);
        assert!(r.held().is_empty());
    }
}
