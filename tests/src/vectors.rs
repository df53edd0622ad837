//! The validation vectors' object format, shared by every harness that replays them (the vector
//! runner, plugin parity, the gateways, Kubewarden): a vector names a `base` object and applies
//! RFC 7386 JSON merge patches to it, `patch` for the object sent and, for an update,
//! `old_patch` for the object stored before it.

use serde_json::Value;

/// The objects one vector describes.
pub struct Objects {
    /// The object created or sent as the update.
    pub object: Value,
    /// For `op: update`, the stored object (the base when the vector has no `old_patch`).
    pub old: Option<Value>,
}

/// The objects of `vector`, whose base is looked up in `bases` (the file's `bases` map).
pub fn objects(vector: &Value, bases: &Value) -> Result<Objects, String> {
    let name = vector["base"].as_str().ok_or("vector has no base")?;
    let base = bases.get(name).ok_or_else(|| format!("unknown base {name:?}"))?;
    let patched = |key: &str| {
        let mut object = base.clone();
        if let Some(patch) = vector.get(key) {
            merge_patch(&mut object, patch);
        }
        object
    };
    let old = (vector["op"].as_str() == Some("update")).then(|| patched("old_patch"));
    Ok(Objects { object: patched("patch"), old })
}

/// RFC 7386 JSON merge patch: objects merge, `null` deletes, everything else replaces.
fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(patch) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(serde_json::Map::new());
    }
    let Value::Object(map) = target else { return };
    for (key, value) in patch {
        if value.is_null() {
            map.remove(key);
        } else {
            merge_patch(map.entry(key.clone()).or_insert(Value::Null), value);
        }
    }
}
