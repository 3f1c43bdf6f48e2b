//! Client assertions for `private_key_jwt` (RFC 7523): a short-lived JWT signed with the
//! client's private key, sent instead of a client secret.
//!
//! Signed with ring, which the build already has for rustls, instead of rmcp's
//! `auth-client-credentials-jwt` (its jsonwebtoken would pull in aws-lc; docs/ARCHITECTURE.md §4
//! keeps ring). Keys are PEM: PKCS#8 (EC P-256, EC P-384, RSA) or PKCS#1 (RSA).

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, RsaKeyPair};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::PrivateKeyDer;
use serde_json::json;

use crate::config::SigningAlgorithm;

/// How long an assertion is valid.
const LIFETIME_SECS: u64 = 300;

/// Why a key could not be used to sign.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum JwtError {
    #[error("the private key is not PEM (PKCS#8, or PKCS#1 for RSA)")]
    NotPem,
    #[error("an EC key in SEC1 form (BEGIN EC PRIVATE KEY): convert it to PKCS#8 with `openssl pkcs8 -topk8 -nocrypt`")]
    Sec1,
    #[error("the private key is not an EC P-256, EC P-384 or RSA key usable for {0}")]
    Unusable(&'static str),
    #[error("signing failed")]
    Signing,
}

/// A private key ready to sign client assertions.
pub struct SigningKey {
    algorithm: SigningAlgorithm,
    key: Key,
}

enum Key {
    Ec(EcdsaKeyPair),
    Rsa(RsaKeyPair),
}

impl std::fmt::Debug for SigningKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "SigningKey({}, <redacted>)", self.algorithm.as_str())
    }
}

impl SigningKey {
    /// Reads a PEM key; with `algorithm` the key must fit it, without it the algorithm follows
    /// the key (P-256: ES256, P-384: ES384, RSA: RS256).
    pub fn from_pem(pem: &[u8], algorithm: Option<SigningAlgorithm>) -> Result<Self, JwtError> {
        let der = PrivateKeyDer::from_pem_slice(pem).map_err(|_| JwtError::NotPem)?;
        let rng = SystemRandom::new();
        let ec = |alg: &'static signature::EcdsaSigningAlgorithm, der: &[u8]| {
            EcdsaKeyPair::from_pkcs8(alg, der, &rng).ok().map(Key::Ec)
        };
        let candidates: &[SigningAlgorithm] = match algorithm {
            Some(SigningAlgorithm::ES256) => &[SigningAlgorithm::ES256],
            Some(SigningAlgorithm::ES384) => &[SigningAlgorithm::ES384],
            Some(SigningAlgorithm::RS256) => &[SigningAlgorithm::RS256],
            None => &[
                SigningAlgorithm::ES256,
                SigningAlgorithm::ES384,
                SigningAlgorithm::RS256,
            ],
        };
        for &alg in candidates {
            let key = match (&der, alg) {
                (PrivateKeyDer::Pkcs8(k), SigningAlgorithm::ES256) => ec(
                    &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
                    k.secret_pkcs8_der(),
                ),
                (PrivateKeyDer::Pkcs8(k), SigningAlgorithm::ES384) => ec(
                    &signature::ECDSA_P384_SHA384_FIXED_SIGNING,
                    k.secret_pkcs8_der(),
                ),
                (PrivateKeyDer::Pkcs8(k), SigningAlgorithm::RS256) => {
                    RsaKeyPair::from_pkcs8(k.secret_pkcs8_der())
                        .ok()
                        .map(Key::Rsa)
                }
                (PrivateKeyDer::Pkcs1(k), SigningAlgorithm::RS256) => {
                    RsaKeyPair::from_der(k.secret_pkcs1_der())
                        .ok()
                        .map(Key::Rsa)
                }
                (PrivateKeyDer::Sec1(_), _) => return Err(JwtError::Sec1),
                (PrivateKeyDer::Pkcs1(_), SigningAlgorithm::ES256 | SigningAlgorithm::ES384) => {
                    None
                }
                // PrivateKeyDer is non-exhaustive: nothing else is a key we can sign with.
                _ => None,
            };
            if let Some(key) = key {
                return Ok(SigningKey {
                    algorithm: alg,
                    key,
                });
            }
        }
        Err(JwtError::Unusable(match algorithm {
            Some(alg) => alg.as_str(),
            None => "ES256, ES384 or RS256",
        }))
    }

    pub fn algorithm(&self) -> SigningAlgorithm {
        self.algorithm
    }

    /// A client assertion: `iss` and `sub` are the client, `aud` the authorization server's
    /// issuer, valid for five minutes, with a random `jti`.
    pub fn client_assertion(&self, client_id: &str, audience: &str) -> Result<String, JwtError> {
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_secs())
            .unwrap_or(0);
        let mut jti = [0_u8; 16];
        SystemRandom::new()
            .fill(&mut jti)
            .map_err(|_| JwtError::Signing)?;
        let claims = json!({
            "iss": client_id,
            "sub": client_id,
            "aud": audience,
            "iat": now,
            "exp": now + LIFETIME_SECS,
            "jti": jti.iter().map(|b| format!("{b:02x}")).collect::<String>(),
        });
        self.sign(&claims)
    }

    /// A compact JWS of `claims`.
    pub fn sign(&self, claims: &serde_json::Value) -> Result<String, JwtError> {
        let header = json!({"alg": self.algorithm.as_str(), "typ": "JWT"});
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let rng = SystemRandom::new();
        let signature = match &self.key {
            Key::Ec(key) => key
                .sign(&rng, input.as_bytes())
                .map_err(|_| JwtError::Signing)?
                .as_ref()
                .to_vec(),
            Key::Rsa(key) => {
                let mut out = vec![0; key.public().modulus_len()];
                key.sign(
                    &signature::RSA_PKCS1_SHA256,
                    &rng,
                    input.as_bytes(),
                    &mut out,
                )
                .map_err(|_| JwtError::Signing)?;
                out
            }
        };
        Ok(format!("{input}.{}", URL_SAFE_NO_PAD.encode(signature)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use ring::signature::{KeyPair, UnparsedPublicKey};

    /// A fresh P-256 key as PKCS#8 PEM, and its public key.
    fn p256() -> (String, Vec<u8>) {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .expect("generate");
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            pkcs8.as_ref(),
            &rng,
        )
        .expect("parse");
        let body = base64::engine::general_purpose::STANDARD.encode(pkcs8.as_ref());
        let lines: Vec<&str> = body
            .as_bytes()
            .chunks(64)
            .map(|c| std::str::from_utf8(c).unwrap_or(""))
            .collect();
        (
            format!(
                "-----BEGIN PRIVATE KEY-----\n{}\n-----END PRIVATE KEY-----\n",
                lines.join("\n")
            ),
            pair.public_key().as_ref().to_vec(),
        )
    }

    #[test]
    fn an_es256_assertion_verifies_and_carries_the_claims() {
        let (pem, public) = p256();
        let key = SigningKey::from_pem(pem.as_bytes(), None).expect("key");
        assert_eq!(key.algorithm(), SigningAlgorithm::ES256);
        let jwt = key
            .client_assertion("bot", "https://as.example")
            .expect("signed");
        let parts: Vec<&str> = jwt.split('.').collect();
        assert_eq!(parts.len(), 3);
        let signed = format!("{}.{}", parts[0], parts[1]);
        let sig = URL_SAFE_NO_PAD.decode(parts[2]).expect("b64");
        UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &public)
            .verify(signed.as_bytes(), &sig)
            .expect("the signature verifies");
        let header: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[0]).expect("b64")).expect("json");
        assert_eq!(header["alg"], "ES256");
        let claims: serde_json::Value =
            serde_json::from_slice(&URL_SAFE_NO_PAD.decode(parts[1]).expect("b64")).expect("json");
        assert_eq!(claims["iss"], "bot");
        assert_eq!(claims["sub"], "bot");
        assert_eq!(claims["aud"], "https://as.example");
        assert!(claims["exp"].as_u64() > claims["iat"].as_u64());
        assert_eq!(claims["jti"].as_str().map(str::len), Some(32));
        // The Debug form holds no key material.
        assert_eq!(format!("{key:?}"), "SigningKey(ES256, <redacted>)");
    }

    #[test]
    fn bad_keys_are_refused_with_a_reason() {
        assert_eq!(
            SigningKey::from_pem(b"not a key", None).err(),
            Some(JwtError::NotPem)
        );
        let (pem, _) = p256();
        assert_eq!(
            SigningKey::from_pem(pem.as_bytes(), Some(SigningAlgorithm::RS256)).err(),
            Some(JwtError::Unusable("RS256"))
        );
        let sec1 = "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIA==\n-----END EC PRIVATE KEY-----\n";
        assert_eq!(
            SigningKey::from_pem(sec1.as_bytes(), None).err(),
            Some(JwtError::Sec1)
        );
    }
}
