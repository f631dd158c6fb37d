//! TLS to PostgreSQL with libpq's meanings of `sslmode` and `sslrootcert`,
//! through rustls (aws-lc-rs, the provider the signer already uses) and
//! `tokio-postgres-rustls`.
//!
//! | sslmode | without sslrootcert | with sslrootcert |
//! | --- | --- | --- |
//! | disable | plain TCP | plain TCP (not read) |
//! | prefer (default) | TLS if offered, not verified | TLS if offered, chain verified |
//! | require | TLS, not verified | TLS, chain verified |
//! | verify-ca | refused at start | TLS, chain verified |
//! | verify-full | refused at start | TLS, chain and host name verified |
//!
//! `sslrootcert=system` is the platform's trust store and, as in libpq 16+,
//! means `verify-full` (the default with it; any other mode is refused).

use std::sync::Arc;

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::client::{WebPkiServerVerifier, verify_server_cert_signed_by_trust_anchor};
use rustls::crypto::{WebPkiSupportedAlgorithms, verify_tls12_signature, verify_tls13_signature};
use rustls::pki_types::pem::PemObject as _;
use rustls::pki_types::{CertificateDer, ServerName, UnixTime};
use rustls::server::ParsedCertificate;
use rustls::{ClientConfig, DigitallySignedStruct, RootCertStore, SignatureScheme};
use tokio_postgres_rustls::MakeRustlsConnect;

/// libpq's `sslmode` values this service honours.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SslMode {
    Disable,
    Prefer,
    Require,
    VerifyCa,
    VerifyFull,
}

pub const SSLMODES: &str = "disable, prefer, require, verify-ca or verify-full";

impl SslMode {
    /// Exact, case-sensitive names, as libpq.
    pub fn parse(value: &str) -> Option<SslMode> {
        Some(match value {
            "disable" => SslMode::Disable,
            "prefer" => SslMode::Prefer,
            "require" => SslMode::Require,
            "verify-ca" => SslMode::VerifyCa,
            "verify-full" => SslMode::VerifyFull,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            SslMode::Disable => "disable",
            SslMode::Prefer => "prefer",
            SslMode::Require => "require",
            SslMode::VerifyCa => "verify-ca",
            SslMode::VerifyFull => "verify-full",
        }
    }
}

/// Where trusted CA certificates come from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RootCert {
    File(String),
    System,
}

/// The TLS part of `DATABASE_URL`, checked for consistency (not yet for the
/// file's contents: see [`connector`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DatabaseTls {
    pub mode: SslMode,
    pub root: Option<RootCert>,
}

impl DatabaseTls {
    /// `sslmode` and `sslrootcert` as given (`None` when absent).
    pub fn from_params(sslmode: Option<&str>, sslrootcert: Option<&str>) -> Result<Self, String> {
        let root = sslrootcert.filter(|r| !r.is_empty()).map(|r| match r {
            "system" => RootCert::System,
            path => RootCert::File(path.to_owned()),
        });
        let mode = match sslmode {
            None if root == Some(RootCert::System) => SslMode::VerifyFull,
            None => SslMode::Prefer,
            Some(value) => {
                SslMode::parse(value).ok_or_else(|| format!("sslmode={value:?} is not supported (use {SSLMODES})"))?
            }
        };
        match (mode, &root) {
            (SslMode::VerifyCa | SslMode::VerifyFull, None) => Err(format!(
                "sslmode={} needs sslrootcert (the path of a PEM file of trusted CA certificates, or system)",
                mode.name()
            )),
            (mode, Some(RootCert::System)) if mode != SslMode::VerifyFull => Err(format!(
                "sslrootcert=system needs sslmode=verify-full, not {} (as libpq: a certificate any public CA signed would pass)",
                mode.name()
            )),
            _ => Ok(DatabaseTls { mode, root }),
        }
    }

    /// Whether connections are made without TLS at all.
    pub fn is_disabled(&self) -> bool {
        self.mode == SslMode::Disable
    }

    /// The mode tokio-postgres negotiates with: everything from `require` up
    /// insists on TLS; what is verified is the connector's business.
    pub fn negotiation(&self) -> tokio_postgres::config::SslMode {
        match self.mode {
            SslMode::Disable => tokio_postgres::config::SslMode::Disable,
            SslMode::Prefer => tokio_postgres::config::SslMode::Prefer,
            SslMode::Require | SslMode::VerifyCa | SslMode::VerifyFull => tokio_postgres::config::SslMode::Require,
        }
    }
}

/// The rustls connector for `tls` (not called for `sslmode=disable`). Reads
/// and parses `sslrootcert` here, so an unusable file stops the start.
pub fn connector(tls: &DatabaseTls) -> Result<MakeRustlsConnect, String> {
    let provider = Arc::new(rustls::crypto::aws_lc_rs::default_provider());
    let roots = match &tls.root {
        None => None,
        Some(RootCert::File(path)) => Some(read_roots(path)?),
        Some(RootCert::System) => Some(system_roots()?),
    };
    let algorithms = provider.signature_verification_algorithms;
    let verifier: Arc<dyn ServerCertVerifier> = match (tls.mode, roots) {
        (SslMode::VerifyFull, Some(roots)) => WebPkiServerVerifier::builder_with_provider(roots, provider.clone())
            .build()
            .map_err(|e| format!("sslrootcert: {e}"))?,
        // libpq verifies the chain whenever it has a root certificate, and only then.
        (_, roots) => Arc::new(LibpqVerifier { roots, algorithms }),
    };
    let config = ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|e| format!("TLS set-up failed: {e}"))?
        .dangerous()
        .with_custom_certificate_verifier(verifier)
        .with_no_client_auth();
    Ok(MakeRustlsConnect::new(config))
}

fn read_roots(path: &str) -> Result<Arc<RootCertStore>, String> {
    let unusable = |reason: String| format!("sslrootcert {path} cannot be used: {reason}");
    let pem = std::fs::read(path).map_err(|e| unusable(e.to_string()))?;
    let mut roots = RootCertStore::empty();
    for cert in CertificateDer::pem_slice_iter(&pem) {
        let cert = cert.map_err(|e| unusable(format!("not PEM ({e})")))?;
        roots.add(cert).map_err(|e| unusable(format!("not a CA certificate ({e})")))?;
    }
    if roots.is_empty() {
        return Err(unusable("no certificate in it".to_owned()));
    }
    Ok(Arc::new(roots))
}

fn system_roots() -> Result<Arc<RootCertStore>, String> {
    let found = rustls_native_certs::load_native_certs();
    let mut roots = RootCertStore::empty();
    roots.add_parsable_certificates(found.certs);
    if roots.is_empty() {
        let reason = found.errors.first().map(|e| e.to_string()).unwrap_or_else(|| "none found".to_owned());
        return Err(format!("sslrootcert=system: no trusted CA certificates on this system ({reason})"));
    }
    Ok(Arc::new(roots))
}

/// libpq's checks short of `verify-full`. With a root certificate (`verify-ca`,
/// and `prefer`/`require` given `sslrootcert`) the chain must lead to a
/// trusted root and the host name is not checked. Without one (`prefer`/
/// `require`, where libpq does not verify) any certificate is accepted. Either
/// way the handshake's signatures are checked against the certificate, so the
/// connection is encrypted to whoever holds its key.
#[derive(Debug)]
struct LibpqVerifier {
    roots: Option<Arc<RootCertStore>>,
    algorithms: WebPkiSupportedAlgorithms,
}

impl ServerCertVerifier for LibpqVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if let Some(roots) = &self.roots {
            let cert = ParsedCertificate::try_from(end_entity)?;
            verify_server_cert_signed_by_trust_anchor(&cert, roots, intermediates, now, self.algorithms.all)?;
        }
        Ok(ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls12_signature(message, cert, dss, &self.algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        verify_tls13_signature(message, cert, dss, &self.algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.algorithms.supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A self-signed P-256 CA made for these tests only (no key is kept).
    const TEST_CA: &str = "-----BEGIN CERTIFICATE-----
MIIBqTCCAU+gAwIBAgIURNS8Ib5Uf+VBl1+P8ITUUAZmdycwCgYIKoZIzj0EAwIw
KTEnMCUGA1UEAwwec2ltcGxlLWF1dGggYWN0aXggdW5pdC10ZXN0IENBMCAXDTI2
MTEyMzE2MjEyNFoYDzIxMjYxMDMwMTYyMTI0WjApMScwJQYDVQQDDB5zaW1wbGUt
YXV0aCBhY3RpeCB1bml0LXRlc3QgQ0EwWTATBgcqhkjOPQIBBggqhkjOPQMBBwNC
AARj5G+DlotcjaNh0UlOLHK2FacL61Oakzae9sAtBaDZdFRMHxSQRzi9rUejmjLj
exSyGgLfho93GIaoFGkDphXno1MwUTAdBgNVHQ4EFgQUJA8LjnHs+mVSTkQQSjEe
33hx0mUwHwYDVR0jBBgwFoAUJA8LjnHs+mVSTkQQSjEe33hx0mUwDwYDVR0TAQH/
BAUwAwEB/zAKBggqhkjOPQQDAgNIADBFAiEA5XtbbuJuoXUAVG/fvu7Aj2QdIGqJ
5eEN2CjcqkD9otICIDrMVrMi4ROEIAvQAyGG24Ptsu4xw5uZDgpHwMAEnfV6
-----END CERTIFICATE-----\n";

    fn temp_file(name: &str, contents: &[u8]) -> String {
        let path = std::env::temp_dir().join(format!("simple-auth-core-{}-{name}", std::process::id()));
        std::fs::write(&path, contents).expect("write");
        path.to_string_lossy().into_owned()
    }

    fn settings(mode: SslMode, root: Option<RootCert>) -> DatabaseTls {
        DatabaseTls { mode, root }
    }

    #[test]
    fn connectors_are_built_for_every_verifying_mode() {
        let ca = temp_file("ca.pem", TEST_CA.as_bytes());
        for mode in [SslMode::Prefer, SslMode::Require, SslMode::VerifyCa, SslMode::VerifyFull] {
            connector(&settings(mode, Some(RootCert::File(ca.clone()))))
                .unwrap_or_else(|e| panic!("{}: {e}", mode.name()));
        }
        for mode in [SslMode::Prefer, SslMode::Require] {
            connector(&settings(mode, None)).unwrap_or_else(|e| panic!("{}: {e}", mode.name()));
        }
        let _ = std::fs::remove_file(ca);
    }

    #[test]
    fn unusable_root_files_are_refused_naming_sslrootcert() {
        let not_pem = temp_file("not-pem.txt", b"hello\n");
        let garbage = temp_file("garbage.pem", b"-----BEGIN CERTIFICATE-----\nnope\n-----END CERTIFICATE-----\n");
        let dir = std::env::temp_dir().to_string_lossy().into_owned();
        for path in ["/nonexistent/ca.pem", dir.as_str(), not_pem.as_str(), garbage.as_str()] {
            for mode in [SslMode::Require, SslMode::VerifyFull] {
                let Err(err) = connector(&settings(mode, Some(RootCert::File(path.to_owned())))) else {
                    panic!("{path} accepted");
                };
                assert!(err.starts_with("sslrootcert ") && !err.contains('\n'), "{err}");
            }
        }
        let _ = std::fs::remove_file(not_pem);
        let _ = std::fs::remove_file(garbage);
    }

    #[test]
    fn system_roots_mean_verify_full() {
        assert_eq!(
            DatabaseTls::from_params(None, Some("system")),
            Ok(settings(SslMode::VerifyFull, Some(RootCert::System)))
        );
        for mode in ["disable", "prefer", "require", "verify-ca"] {
            assert!(DatabaseTls::from_params(Some(mode), Some("system")).is_err(), "{mode}");
        }
        assert_eq!(DatabaseTls::from_params(Some("require"), Some("")), Ok(settings(SslMode::Require, None)));
    }
}
