//! Making a diverging case minimal: objects are taken out one at a time, as long as the
//! divergence stays. Every candidate of a round goes to upstream in one batch (one process), so
//! a case of N objects costs at most N rounds.

use serde_json::Value;

/// The smallest case found by removing objects from `objects` (never one `pinned` says to
/// keep) while `diverges` still holds. `diverges` gets every candidate of a round at once and
/// answers, for each, whether the divergence is still there.
pub fn shrink(
    mut objects: Vec<Value>,
    pinned: impl Fn(&Value) -> bool,
    mut diverges: impl FnMut(&[Vec<Value>]) -> Vec<bool>,
) -> Vec<Value> {
    loop {
        let candidates: Vec<Vec<Value>> = (0..objects.len())
            .filter(|&i| !pinned(&objects[i]))
            .map(|i| {
                let mut fewer = objects.clone();
                fewer.remove(i);
                fewer
            })
            .collect();
        if candidates.is_empty() {
            return objects;
        }
        let verdicts = diverges(&candidates);
        match candidates.into_iter().zip(verdicts).find(|(_, still)| *still) {
            Some((smaller, _)) => objects = smaller,
            None => return objects,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::shrink;

    #[test]
    fn only_the_objects_the_divergence_needs_stay() {
        // "Diverges" while objects 2 and 5 are both there; the profile is pinned.
        let objects: Vec<Value> = (0..8).map(|i| json!({"n": i})).collect();
        let mut rounds = 0;
        let smallest = shrink(
            objects,
            |o| o["n"] == 0,
            |candidates| {
                rounds += 1;
                candidates
                    .iter()
                    .map(|c| c.iter().any(|o| o["n"] == 2) && c.iter().any(|o| o["n"] == 5))
                    .collect()
            },
        );
        assert_eq!(smallest, vec![json!({"n": 0}), json!({"n": 2}), json!({"n": 5})]);
        assert_eq!(rounds, 6);
    }
}
