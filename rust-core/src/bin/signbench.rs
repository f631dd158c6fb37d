//! `signbench SECONDS`: the Rust stacks' own signing ceiling, a binary beside
//! the services (`stack.json`'s "signbench" command of actix and axum: both
//! sign with this crate's `TokenSigner`).
//!
//! The benchmark compares each stack's CPU per request with what the two
//! signatures of a token pair cost (RS256, ES256 or EdDSA, as the key
//! decides). `openssl speed` gives one reference; this gives the other: the
//! service's own `TokenSigner` (same settings, same key, same aws-lc-rs
//! provider, same claims) minting token pairs on one thread, after a warm-up.
//! It opens no port and never connects to the database.
//!
//! Prints one JSON line on stdout:
//! `{"token_pairs": N, "seconds": wall, "thread_cpu_seconds": cpu, "provider": "..."}`.

use std::process::ExitCode;
use std::time::{Duration, Instant};

use jsonwebtoken::Algorithm;
use serde::Serialize;
use uuid::Uuid;

use simple_auth_core::settings::Settings;
use simple_auth_core::token_signer::TokenSigner;
use simple_auth_core::user::User;
use simple_auth_core::{EXIT_REFUSED, parsed_key_provider};

/// Untimed first, so the measured part starts with warm caches.
const WARM_UP: Duration = Duration::from_secs(2);

const USAGE: &str = "usage: signbench SECONDS   (timed seconds, a positive number)";

/// What the signer is built on, as the harness reports it: the algorithm and
/// the aws-lc-rs key pair type that signs it (`parsed_key_provider`).
fn provider(signer: &TokenSigner) -> String {
    let key_pair = match signer.alg() {
        Algorithm::ES256 => "EcdsaKeyPair, ECDSA_P256_SHA256_FIXED_SIGNING",
        Algorithm::EdDSA => "Ed25519KeyPair",
        _ => "RsaKeyPair, RSA_PKCS1_SHA256",
    };
    let provider = if parsed_key_provider::install() {
        "aws-lc-rs (jsonwebtoken CryptoProvider, key parsed once)"
    } else {
        "aws-lc-rs (jsonwebtoken's stock provider, key parsed per signature)"
    };
    format!("{provider}: {:?} with {key_pair}", signer.alg())
}

#[derive(Debug, Serialize)]
struct Measurement {
    token_pairs: u64,
    seconds: f64,
    thread_cpu_seconds: f64,
    provider: String,
}

/// The timed duration from the command's arguments (exactly one, positive, finite).
fn parse_seconds(args: &[String]) -> Result<Duration, String> {
    let [arg] = args else {
        return Err(USAGE.to_owned());
    };
    match arg.parse::<f64>() {
        Ok(s) if s.is_finite() && s > 0.0 => Ok(Duration::from_secs_f64(s)),
        _ => Err(format!("signbench: '{arg}' is not a positive number of seconds\n{USAGE}")),
    }
}

/// Issues token pairs for a fixed sample user on the calling thread: `warm_up`
/// untimed, then `timed`. Every token is kept "used" (its length summed).
fn measure(signer: &TokenSigner, warm_up: Duration, timed: Duration) -> Result<Measurement, String> {
    let user = User {
        id: Uuid::from_u128(0x6f1c_55a2_0e7d_4b8e_9a3c_1d2e_3f4a_5b6c),
        username: "signbench".into(),
        name: "Sign Bench".into(),
        email: "signbench@example.com".into(),
        password_hash: String::new(),
    };
    let mut bytes = 0usize;
    let mut issue = || -> Result<(), String> {
        // A fresh sid per pair, as each login's session has (and as issue() drew itself before #23).
        let pair = signer.issue(&user, "signbench", Uuid::new_v4()).map_err(|e| format!("signing failed: {e}"))?;
        bytes += pair.access_token.len() + pair.id_token.len();
        Ok(())
    };

    let start = Instant::now();
    while start.elapsed() < warm_up {
        issue()?;
    }

    let mut token_pairs = 0u64;
    let cpu0 = thread_cpu_time();
    let start = Instant::now();
    while start.elapsed() < timed {
        issue()?;
        token_pairs += 1;
    }
    let seconds = start.elapsed().as_secs_f64();
    let thread_cpu_seconds = (thread_cpu_time() - cpu0).as_secs_f64();
    std::hint::black_box(bytes);
    Ok(Measurement { token_pairs, seconds, thread_cpu_seconds, provider: provider(signer) })
}

/// CPU time consumed by the calling thread so far.
fn thread_cpu_time() -> Duration {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid, writable timespec; the clock id is a constant
    // every Linux kernel supports.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    assert_eq!(rc, 0, "clock_gettime(CLOCK_THREAD_CPUTIME_ID) failed");
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// Settings and key exactly as the service loads them, then one
/// measurement. Exit 2 on bad arguments or settings.
fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let timed = match parse_seconds(&args) {
        Ok(timed) => timed,
        Err(message) => {
            eprintln!("{message}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    let signer = match Settings::from_env()
        .map_err(|e| e.to_string())
        .and_then(|settings| TokenSigner::from_settings(&settings).map_err(|e| e.to_string()))
    {
        Ok(signer) => signer,
        Err(message) => {
            eprintln!("signbench: {message}");
            return ExitCode::from(EXIT_REFUSED);
        }
    };
    match measure(&signer, WARM_UP, timed) {
        Ok(measurement) => {
            println!("{}", serde_json::to_string(&measurement).expect("a flat struct serializes"));
            ExitCode::SUCCESS
        }
        Err(message) => {
            eprintln!("signbench: {message}");
            ExitCode::FAILURE
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A dev key of spec/keys (the library's test helpers are not visible to
    /// a binary's tests).
    fn dev_key_pem(file: &str) -> String {
        let path = format!("{}/../spec/keys/{file}", env!("CARGO_MANIFEST_DIR"));
        std::fs::read_to_string(path).expect("dev key")
    }

    fn args(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn seconds_must_be_one_positive_finite_number() {
        assert_eq!(parse_seconds(&args(&["5"])), Ok(Duration::from_secs(5)));
        assert_eq!(parse_seconds(&args(&["0.25"])), Ok(Duration::from_millis(250)));
        for bad in [&[][..], &["0"], &["-1"], &["abc"], &["inf"], &["NaN"], &["1", "2"]] {
            assert!(parse_seconds(&args(bad)).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_short_run_counts_token_pairs_and_its_own_cpu_time() {
        // `TokenSigner::issue` itself (claims, signatures) is tested in token_signer.rs.
        for (file, alg, what) in [
            ("dev-rsa-2048.pem", "RS256", "RsaKeyPair"),
            ("dev-p256.pem", "ES256", "EcdsaKeyPair"),
            ("dev-ed25519.pem", "EdDSA", "Ed25519KeyPair"),
        ] {
            let signer =
                TokenSigner::from_pem(&dev_key_pem(file), "https://issuer.test".into(), "aud-test".into(), 900)
                    .expect("dev key");
            let m = measure(&signer, Duration::ZERO, Duration::from_millis(100)).expect("measure");
            assert!(m.token_pairs > 0);
            assert!(m.seconds >= 0.1);
            assert!(m.thread_cpu_seconds > 0.0 && m.thread_cpu_seconds <= m.seconds + 0.05);
            assert!(
                m.provider.starts_with("aws-lc-rs") && m.provider.contains(&format!("{alg} with {what}")),
                "{}",
                m.provider
            );
        }
    }
}
