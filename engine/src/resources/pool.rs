//! [`IndexedPool`]: resources with identities (CPU ids, GPU devices), each
//! holding one unit that fractional requests may share.

use crate::ir::Amount;

const ONE: u64 = Amount::SCALE;

/// A set of resource ids, each with capacity 1.0 in fixed point.
///
/// A request's whole part takes whole free ids, lowest first; its fractional
/// part takes a share of the id that has the least room left that is still
/// enough (best fit), so four 0.25 requests share one id.
#[derive(Debug, Clone, Default)]
pub(crate) struct IndexedPool {
    /// The ids, sorted and distinct.
    ids: Vec<u32>,
    /// What is left of each id, in [`Amount`] units (at most one unit).
    free: Vec<u64>,
    /// How many ids are entirely free.
    whole: u32,
}

impl IndexedPool {
    /// A pool of the given ids, all free (duplicates count once).
    pub(crate) fn new(mut ids: Vec<u32>) -> Self {
        ids.sort_unstable();
        ids.dedup();
        let whole = ids.len() as u32;
        Self { free: vec![ONE; ids.len()], ids, whole }
    }

    /// The ids, in order.
    pub(crate) fn ids(&self) -> &[u32] {
        &self.ids
    }

    /// Whether `amount` can be taken now.
    pub(crate) fn fits(&self, amount: Amount) -> bool {
        let (whole, frac) = (amount.0 / ONE, amount.0 % ONE);
        let full = u64::from(self.whole);
        if frac == 0 || full > whole {
            return full >= whole;
        }
        // The fractional part needs a partly used id with room, besides `whole` free ids.
        full >= whole && self.free.iter().any(|&f| f < ONE && f >= frac)
    }

    /// Takes `amount` (which must fit) and appends `(id, share)` pairs to `taken`.
    pub(crate) fn take(&mut self, amount: Amount, taken: &mut Vec<(u32, Amount)>) {
        debug_assert!(self.fits(amount), "take of {amount} without room");
        let (mut whole, frac) = (amount.0 / ONE, amount.0 % ONE);
        for (slot, free) in self.free.iter_mut().enumerate() {
            if whole == 0 {
                break;
            }
            if *free == ONE {
                *free = 0;
                whole -= 1;
                self.whole -= 1;
                taken.push((self.ids[slot], Amount(ONE)));
            }
        }
        if frac == 0 {
            return;
        }
        let best = self.free.iter().enumerate().filter(|&(_, &f)| f >= frac).min_by_key(|&(slot, &f)| (f, slot));
        if let Some((slot, _)) = best {
            if self.free[slot] == ONE {
                self.whole -= 1;
            }
            self.free[slot] -= frac;
            taken.push((self.ids[slot], Amount(frac)));
        }
    }

    /// Takes `amount` from exactly `ids` — whole ids first, then the share
    /// of the last one, as [`IndexedPool::take`] lists them — and appends
    /// `(id, share)` pairs to `taken`; false, and nothing taken, unless
    /// `ids` name as many ids of this pool as `amount` needs, each with room.
    pub(crate) fn take_ids(&mut self, amount: Amount, ids: &[u32], taken: &mut Vec<(u32, Amount)>) -> bool {
        let (whole, frac) = ((amount.0 / ONE) as usize, amount.0 % ONE);
        if ids.len() != whole + usize::from(frac > 0) {
            return false;
        }
        let mut shares = Vec::with_capacity(ids.len());
        for (n, id) in ids.iter().enumerate() {
            let share = if n < whole { ONE } else { frac };
            match self.ids.binary_search(id) {
                Ok(slot) if self.free[slot] >= share && !shares.iter().any(|&(s, _)| s == slot) => {
                    shares.push((slot, share));
                }
                _ => return false,
            }
        }
        for (slot, share) in shares {
            if self.free[slot] == ONE {
                self.whole -= 1;
            }
            self.free[slot] -= share;
            taken.push((self.ids[slot], Amount(share)));
        }
        true
    }

    /// Gives back shares taken earlier.
    pub(crate) fn give(&mut self, taken: &[(u32, Amount)]) {
        for &(id, share) in taken {
            if let Ok(slot) = self.ids.binary_search(&id) {
                let free = &mut self.free[slot];
                *free = (*free + share.0).min(ONE);
                if *free == ONE {
                    self.whole += 1;
                }
            }
        }
    }

    /// Whether nothing is taken.
    #[cfg(test)]
    pub(crate) fn is_idle(&self) -> bool {
        self.whole as usize == self.ids.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn amount(units: f64) -> Amount {
        Amount::from_f64(units).expect("valid amount")
    }

    #[test]
    fn whole_requests_take_lowest_free_ids() {
        let mut pool = IndexedPool::new(vec![3, 1, 2, 0]);
        let mut taken = Vec::new();
        pool.take(Amount::whole(2), &mut taken);
        assert_eq!(taken, [(0, Amount::whole(1)), (1, Amount::whole(1))]);
        assert!(pool.fits(Amount::whole(2)));
        assert!(!pool.fits(Amount::whole(3)));
        pool.give(&taken);
        assert!(pool.is_idle());
    }

    #[test]
    fn named_ids_are_taken_exactly_or_not_at_all() {
        let mut pool = IndexedPool::new(vec![0, 1, 2, 3]);
        let mut taken = Vec::new();
        assert!(pool.take_ids(Amount::whole(2), &[2, 3], &mut taken));
        assert_eq!(taken, [(2, Amount::whole(1)), (3, Amount::whole(1))]);
        let mut other = Vec::new();
        assert!(!pool.take_ids(Amount::whole(1), &[3], &mut other), "id 3 is taken");
        assert!(!pool.take_ids(Amount::whole(2), &[0], &mut other), "too few ids");
        assert!(!pool.take_ids(Amount::whole(2), &[0, 0], &mut other), "one id twice");
        assert!(!pool.take_ids(Amount::whole(1), &[9], &mut other), "no such id");
        assert!(other.is_empty());
        assert!(pool.take_ids(amount(1.5), &[0, 1], &mut other));
        assert_eq!(other, [(0, Amount::whole(1)), (1, amount(0.5))]);
        assert!(pool.take_ids(amount(0.5), &[1], &mut other), "the rest of id 1");
        assert!(!pool.fits(amount(0.1)));
        pool.give(&taken);
        pool.give(&other);
        assert!(pool.is_idle());
    }

    #[test]
    fn quarters_share_one_id() {
        let mut pool = IndexedPool::new(vec![0, 1]);
        let mut taken = Vec::new();
        for _ in 0..4 {
            pool.take(amount(0.25), &mut taken);
        }
        assert!(taken.iter().all(|&(id, _)| id == 0), "{taken:?}");
        assert!(pool.fits(Amount::whole(1)));
        assert!(!pool.fits(amount(1.25)));
        pool.take(amount(0.25), &mut taken);
        assert_eq!(taken.last(), Some(&(1, amount(0.25))));
    }

    #[test]
    fn fractions_prefer_the_tightest_id() {
        let mut pool = IndexedPool::new(vec![0, 1, 2]);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        pool.take(amount(0.5), &mut a); // id 0: 0.5 left
        pool.take(amount(1.7), &mut b); // id 1 whole, id 0 can't hold 0.7 → id 2: 0.3 left
        assert_eq!(b, [(1, Amount::whole(1)), (2, amount(0.7))]);
        let mut c = Vec::new();
        pool.take(amount(0.3), &mut c); // best fit: id 2 (0.3 left) before id 0 (0.5 left)
        assert_eq!(c, [(2, amount(0.3))]);
        assert!(!pool.fits(amount(0.6)));
        assert!(pool.fits(amount(0.5)));
        pool.give(&a);
        pool.give(&b);
        pool.give(&c);
        assert!(pool.is_idle());
    }

    #[test]
    fn mixed_requests_need_whole_ids_and_a_share() {
        let mut pool = IndexedPool::new(vec![0, 1]);
        let mut taken = Vec::new();
        pool.take(amount(0.5), &mut taken);
        assert!(pool.fits(amount(1.5)), "id 1 whole, 0.5 of id 0");
        assert!(!pool.fits(amount(1.6)));
        assert!(!pool.fits(Amount::whole(2)));
        assert!(pool.fits(Amount::ZERO));
    }
}
