//! The server's certificate and the client's pin. The server makes a fresh self-signed
//! certificate each time it starts ([`ServerIdentity::generate`]); the client accepts
//! that one certificate and nothing else ([`PinnedCertVerifier`]: the end-entity DER
//! must equal the pinned DER byte for byte, and the handshake's signature must verify
//! with its key). There is no way to skip the check.

use std::sync::{Arc, Mutex};

use rustls::client::danger::{HandshakeSignatureValid, ServerCertVerified, ServerCertVerifier};
use rustls::crypto::CryptoProvider;
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer, ServerName, UnixTime};
use rustls::{DigitallySignedStruct, SignatureScheme};

use crate::QuicError;

/// The name in the certificate and the one the client asks for (the pin, not the name,
/// is what the client checks).
pub(crate) const SERVER_NAME: &str = "dualperf.invalid";

/// The ring provider both ends use (no process-wide default is installed or needed).
pub(crate) fn provider() -> Arc<CryptoProvider> {
    Arc::new(rustls::crypto::ring::default_provider())
}

/// A server's certificate and private key.
pub(crate) struct ServerIdentity {
    pub(crate) cert: CertificateDer<'static>,
    pub(crate) key: PrivateKeyDer<'static>,
}

impl ServerIdentity {
    /// A fresh self-signed certificate (ECDSA P-256) for [`SERVER_NAME`].
    pub(crate) fn generate() -> Result<ServerIdentity, QuicError> {
        let made = rcgen::generate_simple_self_signed(vec![SERVER_NAME.to_string()])
            .map_err(|e| QuicError::Setup(format!("making a self-signed certificate: {e}")))?;
        Ok(ServerIdentity {
            cert: made.cert.der().clone(),
            key: PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(made.signing_key.serialize_der())),
        })
    }
}

/// SHA-256 of a certificate's DER, lower-case hex: how a certificate is named in errors
/// and how a user compares the one a server published with the one a client saw.
pub fn sha256_hex(cert: &CertificateDer<'_>) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, cert.as_ref());
    digest.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Accepts exactly one certificate. Records the certificate a server presented when it
/// was not the pinned one, so that the client can say so instead of "handshake failed".
#[derive(Debug)]
pub(crate) struct PinnedCertVerifier {
    pinned: CertificateDer<'static>,
    provider: Arc<CryptoProvider>,
    refused: Mutex<Option<String>>,
}

impl PinnedCertVerifier {
    pub(crate) fn new(pinned: CertificateDer<'static>) -> Arc<PinnedCertVerifier> {
        Arc::new(PinnedCertVerifier {
            pinned,
            provider: provider(),
            refused: Mutex::new(None),
        })
    }

    /// The SHA-256 of the certificate refused, if one was.
    pub(crate) fn refused_sha256(&self) -> Option<String> {
        self.refused.lock().ok().and_then(|r| r.clone())
    }

    pub(crate) fn pinned_sha256(&self) -> String {
        sha256_hex(&self.pinned)
    }
}

impl ServerCertVerifier for PinnedCertVerifier {
    fn verify_server_cert(
        &self,
        end_entity: &CertificateDer<'_>,
        _intermediates: &[CertificateDer<'_>],
        _server_name: &ServerName<'_>,
        _ocsp_response: &[u8],
        _now: UnixTime,
    ) -> Result<ServerCertVerified, rustls::Error> {
        if end_entity.as_ref() == self.pinned.as_ref() {
            return Ok(ServerCertVerified::assertion());
        }
        if let Ok(mut refused) = self.refused.lock() {
            *refused = Some(sha256_hex(end_entity));
        }
        Err(rustls::Error::InvalidCertificate(
            rustls::CertificateError::ApplicationVerificationFailure,
        ))
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &CertificateDer<'_>,
        dss: &DigitallySignedStruct,
    ) -> Result<HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(
            message,
            cert,
            dss,
            &self.provider.signature_verification_algorithms,
        )
    }

    fn supported_verify_schemes(&self) -> Vec<SignatureScheme> {
        self.provider
            .signature_verification_algorithms
            .supported_schemes()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn verify(v: &PinnedCertVerifier, cert: &CertificateDer<'_>) -> Result<(), rustls::Error> {
        let name = ServerName::try_from(SERVER_NAME).map_err(|_| rustls::Error::DecryptError)?;
        v.verify_server_cert(cert, &[], &name, &[], UnixTime::now())
            .map(|_| ())
    }

    #[test]
    fn the_pin_accepts_its_certificate_and_refuses_any_other() {
        let ours = ServerIdentity::generate().unwrap().cert;
        let other = ServerIdentity::generate().unwrap().cert;
        assert_ne!(ours, other, "each start makes a fresh certificate");
        let v = PinnedCertVerifier::new(ours.clone());
        assert!(verify(&v, &ours).is_ok());
        assert_eq!(v.refused_sha256(), None);
        assert!(verify(&v, &other).is_err());
        assert_eq!(v.refused_sha256(), Some(sha256_hex(&other)));
        assert_eq!(v.pinned_sha256().len(), 64);
    }
}
