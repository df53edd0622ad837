//! A line diff of expected and actual output (longest common subsequence), printed like
//! `diff -u` without hunk headers: ` ` kept, `-` expected only, `+` actual only.

/// Lines of context kept around each change.
const CONTEXT: usize = 3;

/// The diff of `expected` and `actual`, empty when they are equal.
pub(crate) fn unified(expected: &str, actual: &str) -> String {
    let old: Vec<&str> = expected.lines().collect();
    let new: Vec<&str> = actual.lines().collect();
    // lcs[i][j]: length of the longest common subsequence of old[i..] and new[j..].
    let mut lcs = vec![vec![0_u32; new.len() + 1]; old.len() + 1];
    for i in (0..old.len()).rev() {
        for j in (0..new.len()).rev() {
            lcs[i][j] = if old[i] == new[j] {
                lcs[i + 1][j + 1] + 1
            } else {
                lcs[i + 1][j].max(lcs[i][j + 1])
            };
        }
    }
    let mut script: Vec<(char, &str)> = Vec::new();
    let (mut i, mut j) = (0, 0);
    while i < old.len() || j < new.len() {
        if i < old.len() && j < new.len() && old[i] == new[j] {
            script.push((' ', old[i]));
            i += 1;
            j += 1;
        } else if j < new.len() && (i == old.len() || lcs[i][j + 1] >= lcs[i + 1][j]) {
            script.push(('+', new[j]));
            j += 1;
        } else {
            script.push(('-', old[i]));
            i += 1;
        }
    }
    let changed: Vec<usize> =
        script.iter().enumerate().filter(|(_, (tag, _))| *tag != ' ').map(|(at, _)| at).collect();
    if changed.is_empty() {
        // Same lines, different line ends (a missing final newline).
        return if expected == actual {
            String::new()
        } else {
            "(the outputs differ only in their final newline)\n".to_owned()
        };
    }
    let near = |at: usize| changed.iter().any(|&c| c.abs_diff(at) <= CONTEXT);
    let mut out = String::new();
    let mut skipped = false;
    for (at, (tag, line)) in script.iter().enumerate() {
        if near(at) {
            if skipped {
                out.push_str("...\n");
                skipped = false;
            }
            out.push(*tag);
            out.push_str(line);
            out.push('\n');
        } else {
            skipped = true;
        }
    }
    if skipped {
        out.push_str("...\n");
    }
    out
}
