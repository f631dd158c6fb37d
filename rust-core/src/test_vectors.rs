//! The shared vectors of `spec/vectors.json`, read at test time from the
//! project's spec folder (../spec relative to this stack).

use std::path::PathBuf;

pub fn spec_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..").join("spec")
}

pub fn vectors() -> serde_json::Value {
    let path = spec_dir().join("vectors.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    serde_json::from_str(&text).expect("vectors.json is JSON")
}

/// The `keys` entries: every dev signing key, with its type, alg, kid and JWK.
pub fn key_entries() -> Vec<serde_json::Value> {
    vectors()["keys"].as_array().expect("keys").clone()
}

/// The `keys` entry of the dev key of `key_type` (`rsa-2048`, `p-256`, ...).
pub fn key_entry(key_type: &str) -> serde_json::Value {
    key_entries().into_iter().find(|k| k["type"] == key_type).unwrap_or_else(|| panic!("no {key_type} key"))
}

pub fn dev_key_pem(key_type: &str) -> String {
    let file = key_entry(key_type)["file"].as_str().expect("file").to_owned();
    std::fs::read_to_string(spec_dir().join(file)).expect("dev key")
}
