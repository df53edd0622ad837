//! A set of `u128` kept as merged, disjoint runs, so "first free address at or after X" is a
//! logarithmic lookup however long the allocated runs grow (the random-scan strategy makes
//! them long: it fills the gap right after a run more often than any other).

use std::collections::BTreeMap;

/// Disjoint, non-adjacent inclusive runs `start -> end`.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct IntervalSet {
    /// Invariant: runs are disjoint and never adjacent (`end + 1 < next start`).
    runs: BTreeMap<u128, u128>,
    len: u128,
}

impl IntervalSet {
    pub(crate) fn len(&self) -> u128 {
        self.len
    }

    fn run_containing(&self, value: u128) -> Option<(u128, u128)> {
        let (&start, &end) = self.runs.range(..=value).next_back()?;
        (end >= value).then_some((start, end))
    }

    pub(crate) fn contains(&self, value: u128) -> bool {
        self.run_containing(value).is_some()
    }

    /// Adds a value; false when it was present.
    ///
    /// One walk of the tree finds both neighbours (the last run starting at or before
    /// `value + 1`, and the one before it), so the usual insert, of an address apart from every
    /// run, walks twice; a value that extends the run before it walks once.
    pub(crate) fn insert(&mut self, value: u128) -> bool {
        let (prev, next) = {
            let mut runs = self.runs.range_mut(..=value.saturating_add(1));
            match runs.next_back() {
                Some((&start, &mut end)) if start > value => (runs.next_back(), Some((start, end))),
                last => (last, None),
            }
        };
        // Runs never touch, so `end < value` below: `end + 1` cannot overflow.
        let joins_prev = match &prev {
            Some((_, end)) if **end >= value => return false,
            Some((_, end)) => **end + 1 == value,
            None => false,
        };
        match (prev, next) {
            (Some((_, end)), Some((next_start, next_end))) if joins_prev => {
                *end = next_end;
                self.runs.remove(&next_start);
            }
            (Some((_, end)), None) if joins_prev => *end = value,
            (_, Some((next_start, next_end))) => {
                self.runs.remove(&next_start);
                self.runs.insert(value, next_end);
            }
            _ => {
                self.runs.insert(value, value);
            }
        }
        self.len += 1;
        true
    }

    /// Removes a value; false when it was absent.
    pub(crate) fn remove(&mut self, value: u128) -> bool {
        let Some((start, end)) = self.run_containing(value) else { return false };
        self.runs.remove(&start);
        if start < value {
            self.runs.insert(start, value - 1);
        }
        if value < end {
            self.runs.insert(value + 1, end);
        }
        self.len -= 1;
        true
    }

    /// The first value in `[from, to)` that is not in the set.
    pub(crate) fn first_absent(&self, from: u128, to: u128) -> Option<u128> {
        if from >= to {
            return None;
        }
        let candidate = match self.run_containing(from) {
            Some((_, end)) => end.checked_add(1)?,
            None => from,
        };
        (candidate < to).then_some(candidate)
    }

    /// How many values lie in `[lo, hi]`.
    pub(crate) fn count_in(&self, lo: u128, hi: u128) -> u128 {
        let first = self.runs.range(..=lo).next_back().map_or(lo, |(s, _)| *s);
        self.runs
            .range(first..=hi)
            .map(|(&s, &e)| {
                let a = s.max(lo);
                let b = e.min(hi);
                if a <= b { b - a + 1 } else { 0 }
            })
            .sum()
    }

    /// Whether every run is well formed and runs are disjoint and never adjacent (the invariant,
    /// for the model-based tests).
    #[cfg(test)]
    pub(crate) fn is_merged(&self) -> bool {
        self.runs.iter().all(|(start, end)| start <= end)
            && self
                .runs
                .iter()
                .zip(self.runs.iter().skip(1))
                .all(|((_, &end), (&next, _))| end.checked_add(1).is_some_and(|after| after < next))
    }

    /// Every value in ascending order (for the model-based tests).
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        self.runs.iter().flat_map(|(&s, &e)| s..=e)
    }
}
