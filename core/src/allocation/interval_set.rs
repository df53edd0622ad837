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
    pub(crate) fn insert(&mut self, value: u128) -> bool {
        if self.contains(value) {
            return false;
        }
        let mut start = value;
        let mut end = value;
        if let Some(prev_end) = value.checked_sub(1).and_then(|p| self.run_containing(p)) {
            start = prev_end.0;
            self.runs.remove(&prev_end.0);
        }
        if let Some(next) = value.checked_add(1)
            && let Some(next_end) = self.runs.remove(&next)
        {
            end = next_end;
        }
        self.runs.insert(start, end);
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

    /// Every value in ascending order (for the model-based tests).
    #[cfg(test)]
    pub(crate) fn iter(&self) -> impl Iterator<Item = u128> + '_ {
        self.runs.iter().flat_map(|(&s, &e)| s..=e)
    }
}
