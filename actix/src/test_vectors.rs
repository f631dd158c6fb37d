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

pub fn dev_key_pem(bits: u64) -> String {
    let v = vectors();
    let file = v["keys"]
        .as_array()
        .and_then(|keys| keys.iter().find(|k| k["bits"].as_u64() == Some(bits)))
        .and_then(|k| k["file"].as_str())
        .expect("key entry")
        .to_owned();
    std::fs::read_to_string(spec_dir().join(file)).expect("dev key")
}
