//! Line diffs of rulesets, for `svclab upgrade --diff` and the playground's side-by-side view.
//!
//! Rulesets are tens of thousands of lines in canonical order, and a mode switch changes nearly
//! all of them, so the diff is patience-style: lines that occur once on each side anchor the
//! match (their longest increasing run), the stretches between anchors are matched the same way,
//! and only a stretch without anchors and small enough is matched line by line (longest common
//! subsequence); a larger one is all removed, then all added. Deterministic, never quadratic in
//! a whole ruleset.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

/// Cells of the line-by-line table a stretch without anchors may take.
const MAX_TABLE_CELLS: usize = 1 << 20;

/// What a line of a diff is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum DiffTag {
    /// On both sides.
    Same,
    /// Only before.
    Removed,
    /// Only after.
    Added,
}

/// One line of a diff, with its 1-based line numbers on the sides it is on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DiffLine {
    /// Same, removed or added.
    pub tag: DiffTag,
    /// Its line before.
    pub before: Option<usize>,
    /// Its line after.
    pub after: Option<usize>,
    /// The text, without its line end.
    pub text: String,
}

/// The diff of two texts, line by line, in order: every line of `before` and of `after` once.
///
/// ```
/// use svclab_core::{DiffTag, diff_lines};
/// let diff = diff_lines("a\nb\nc\n", "a\nc\nd\n");
/// let tags: Vec<DiffTag> = diff.iter().map(|l| l.tag).collect();
/// assert_eq!(tags, [DiffTag::Same, DiffTag::Removed, DiffTag::Same, DiffTag::Added]);
/// ```
pub fn diff_lines(before: &str, after: &str) -> Vec<DiffLine> {
    let a: Vec<&str> = before.lines().collect();
    let b: Vec<&str> = after.lines().collect();
    let pairs = matched_pairs(&a, &b);
    let mut out = Vec::with_capacity(a.len().max(b.len()));
    let (mut i, mut j) = (0, 0);
    let line = |tag, before: Option<usize>, after: Option<usize>, text: &str| DiffLine {
        tag,
        before: before.map(|n| n + 1),
        after: after.map(|n| n + 1),
        text: text.to_owned(),
    };
    for (pi, pj) in pairs.into_iter().chain([(a.len(), b.len())]) {
        while i < pi {
            out.push(line(DiffTag::Removed, Some(i), None, a[i]));
            i += 1;
        }
        while j < pj {
            out.push(line(DiffTag::Added, None, Some(j), b[j]));
            j += 1;
        }
        if pi < a.len() && pj < b.len() {
            out.push(line(DiffTag::Same, Some(pi), Some(pj), a[pi]));
            i = pi + 1;
            j = pj + 1;
        }
    }
    out
}

/// A unified diff (`--- before`, `+++ after`, hunks with `context` lines around each change);
/// empty when the texts are the same.
pub(crate) fn unified(diff: &[DiffLine], before: &str, after: &str, context: usize) -> String {
    let changed: Vec<usize> =
        diff.iter().enumerate().filter(|(_, l)| l.tag != DiffTag::Same).map(|(at, _)| at).collect();
    if changed.is_empty() {
        return String::new();
    }
    let mut out = format!("--- {before}\n+++ {after}\n");
    let mut k = 0;
    while k < changed.len() {
        let start = changed[k].saturating_sub(context);
        let mut end = changed[k];
        while k < changed.len() && changed[k] <= end + 2 * context + 1 {
            end = changed[k];
            k += 1;
        }
        let end = (end + context + 1).min(diff.len());
        let hunk = &diff[start..end];
        let first = |side: fn(&DiffLine) -> Option<usize>| {
            hunk.iter().find_map(side).or_else(|| diff[..start].iter().rev().find_map(side))
        };
        let count = |side: fn(&DiffLine) -> Option<usize>| hunk.iter().filter_map(side).count();
        let before_start = first(|l| l.before).unwrap_or(0);
        let after_start = first(|l| l.after).unwrap_or(0);
        let _ = writeln!(
            out,
            "@@ -{before_start},{} +{after_start},{} @@",
            count(|l| l.before),
            count(|l| l.after)
        );
        for l in hunk {
            let mark = match l.tag {
                DiffTag::Same => ' ',
                DiffTag::Removed => '-',
                DiffTag::Added => '+',
            };
            let _ = writeln!(out, "{mark}{}", l.text);
        }
    }
    out
}

/// The matched line pairs `(i, j)`, increasing in both.
fn matched_pairs(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let mut pairs = Vec::new();
    // Stretches still to match: (a start, a end, b start, b end).
    let mut pending = vec![(0, a.len(), 0, b.len())];
    while let Some((mut a0, mut a1, mut b0, mut b1)) = pending.pop() {
        while a0 < a1 && b0 < b1 && a[a0] == b[b0] {
            pairs.push((a0, b0));
            a0 += 1;
            b0 += 1;
        }
        while a0 < a1 && b0 < b1 && a[a1 - 1] == b[b1 - 1] {
            pairs.push((a1 - 1, b1 - 1));
            a1 -= 1;
            b1 -= 1;
        }
        if a0 == a1 || b0 == b1 {
            continue;
        }
        let anchors = unique_anchors(&a[a0..a1], &b[b0..b1]);
        if anchors.is_empty() {
            if (a1 - a0).saturating_mul(b1 - b0) <= MAX_TABLE_CELLS {
                pairs.extend(
                    common_subsequence(&a[a0..a1], &b[b0..b1])
                        .into_iter()
                        .map(|(i, j)| (a0 + i, b0 + j)),
                );
            }
            continue;
        }
        let (mut pa, mut pb) = (a0, b0);
        for (i, j) in anchors {
            let (i, j) = (a0 + i, b0 + j);
            pending.push((pa, i, pb, j));
            pairs.push((i, j));
            pa = i + 1;
            pb = j + 1;
        }
        pending.push((pa, a1, pb, b1));
    }
    pairs.sort_unstable();
    pairs
}

/// Lines that occur exactly once on each side, as `(i, j)`, reduced to their longest run with
/// `j` increasing (patience sorting).
fn unique_anchors(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let mut seen: BTreeMap<&str, (u32, u32, usize, usize)> = BTreeMap::new();
    for (i, line) in a.iter().enumerate() {
        let entry = seen.entry(line).or_insert((0, 0, i, 0));
        entry.0 += 1;
    }
    for (j, line) in b.iter().enumerate() {
        if let Some(entry) = seen.get_mut(line) {
            entry.1 += 1;
            entry.3 = j;
        }
    }
    let mut candidates: Vec<(usize, usize)> =
        seen.values().filter(|e| e.0 == 1 && e.1 == 1).map(|e| (e.2, e.3)).collect();
    candidates.sort_unstable();
    longest_increasing(&candidates)
}

/// The longest run of `pairs` (sorted by `i`) with `j` increasing.
fn longest_increasing(pairs: &[(usize, usize)]) -> Vec<(usize, usize)> {
    // tails[k]: index into pairs of the smallest last `j` of a run of length k + 1.
    let mut tails: Vec<usize> = Vec::new();
    let mut previous: Vec<Option<usize>> = vec![None; pairs.len()];
    for (at, &(_, j)) in pairs.iter().enumerate() {
        let k = tails.partition_point(|&t| pairs[t].1 < j);
        previous[at] = k.checked_sub(1).map(|p| tails[p]);
        if k == tails.len() {
            tails.push(at);
        } else {
            tails[k] = at;
        }
    }
    let mut run = Vec::with_capacity(tails.len());
    let mut cursor = tails.last().copied();
    while let Some(at) = cursor {
        run.push(pairs[at]);
        cursor = previous[at];
    }
    run.reverse();
    run
}

/// The longest common subsequence of two short stretches, as matched `(i, j)`.
fn common_subsequence(a: &[&str], b: &[&str]) -> Vec<(usize, usize)> {
    let (n, m) = (a.len(), b.len());
    let width = m + 1;
    let mut table = vec![0u32; (n + 1) * width];
    for i in (0..n).rev() {
        for j in (0..m).rev() {
            table[i * width + j] = if a[i] == b[j] {
                table[(i + 1) * width + j + 1] + 1
            } else {
                table[(i + 1) * width + j].max(table[i * width + j + 1])
            };
        }
    }
    let mut pairs = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < n && j < m {
        if a[i] == b[j] {
            pairs.push((i, j));
            i += 1;
            j += 1;
        } else if table[(i + 1) * width + j] >= table[i * width + j + 1] {
            i += 1;
        } else {
            j += 1;
        }
    }
    pairs
}
