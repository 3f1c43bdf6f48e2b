//! DPoP (RFC 9449, MCP's SEP-1932): proofs that whoever presents an OAuth token holds the key it
//! was bound to. ES256 keys through ring, as the private-key JWTs of `mcp/auth/jwt.rs`.
//!
//! The client side (`mcp/auth/dpop.rs`) makes a key per server, signs a fresh proof for every
//! token request and every request to the server, and learns the nonces servers hand out in a
//! `DPoP-Nonce` header. The demo server's authorization mode (`demo/dpop.rs`) checks proofs with
//! [`verify`]. Both read the same header syntax here, so they cannot drift apart.

use std::time::{SystemTime, UNIX_EPOCH};

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use ring::rand::{SecureRandom, SystemRandom};
use ring::signature::{self, EcdsaKeyPair, KeyPair, UnparsedPublicKey};
use serde_json::{json, Value};

/// The one algorithm offered and accepted.
pub const ALGORITHM: &str = "ES256";
/// The header a proof travels in, and the one a server's nonce comes back in.
pub const PROOF_HEADER: &str = "dpop";
pub const NONCE_HEADER: &str = "dpop-nonce";
/// How far a proof's `iat` may be from the verifier's clock.
const IAT_WINDOW_SECS: u64 = 300;
/// The longest nonce taken from a server (RFC 9449 sets no bound; this keeps a lying server
/// from making every later proof huge).
const MAX_NONCE: usize = 512;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum DpopError {
    #[error("the stored DPoP key is unreadable")]
    BadKey,
    #[error("signing a DPoP proof failed")]
    Signing,
}

/// A P-256 key that signs proofs. Its `Debug` form holds no key material.
pub struct DpopKey {
    pair: EcdsaKeyPair,
    pkcs8: Vec<u8>,
    jwk: Value,
    thumbprint: String,
}

impl std::fmt::Debug for DpopKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DpopKey(jkt {})", self.thumbprint)
    }
}

impl DpopKey {
    /// A new random key.
    pub fn generate() -> Result<DpopKey, DpopError> {
        let rng = SystemRandom::new();
        let pkcs8 = EcdsaKeyPair::generate_pkcs8(&signature::ECDSA_P256_SHA256_FIXED_SIGNING, &rng)
            .map_err(|_| DpopError::Signing)?;
        DpopKey::from_pkcs8(pkcs8.as_ref())
    }

    /// The key stored as [`DpopKey::to_stored`] wrote it.
    pub fn from_stored(text: &str) -> Result<DpopKey, DpopError> {
        let der = URL_SAFE_NO_PAD
            .decode(text.trim())
            .map_err(|_| DpopError::BadKey)?;
        DpopKey::from_pkcs8(&der)
    }

    fn from_pkcs8(der: &[u8]) -> Result<DpopKey, DpopError> {
        let pair = EcdsaKeyPair::from_pkcs8(
            &signature::ECDSA_P256_SHA256_FIXED_SIGNING,
            der,
            &SystemRandom::new(),
        )
        .map_err(|_| DpopError::BadKey)?;
        let jwk = public_jwk(pair.public_key().as_ref()).ok_or(DpopError::BadKey)?;
        let thumbprint = thumbprint(&jwk).ok_or(DpopError::BadKey)?;
        Ok(DpopKey {
            pair,
            pkcs8: der.to_vec(),
            jwk,
            thumbprint,
        })
    }

    /// The private key as text for the token store (a 0600 file).
    pub fn to_stored(&self) -> String {
        URL_SAFE_NO_PAD.encode(&self.pkcs8)
    }

    /// The JWK thumbprint (RFC 7638) tokens bound to this key carry as `cnf.jkt`.
    pub fn thumbprint(&self) -> &str {
        &self.thumbprint
    }

    /// A fresh proof for a `method` request to `url`: a new `jti`, `iat` now, `ath` when an
    /// access token goes with it, `nonce` when the server handed one out.
    pub fn proof(
        &self,
        method: &str,
        url: &str,
        access_token: Option<&str>,
        nonce: Option<&str>,
    ) -> Result<String, DpopError> {
        let mut jti = [0_u8; 16];
        SystemRandom::new()
            .fill(&mut jti)
            .map_err(|_| DpopError::Signing)?;
        let header = json!({"typ": "dpop+jwt", "alg": ALGORITHM, "jwk": self.jwk});
        let mut claims = json!({
            "jti": URL_SAFE_NO_PAD.encode(jti),
            "htm": method.to_ascii_uppercase(),
            "htu": htu(url),
            "iat": now(),
        });
        if let Some(token) = access_token {
            claims["ath"] = json!(ath(token));
        }
        if let Some(nonce) = nonce {
            claims["nonce"] = json!(nonce);
        }
        let input = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode(header.to_string()),
            URL_SAFE_NO_PAD.encode(claims.to_string())
        );
        let signature = self
            .pair
            .sign(&SystemRandom::new(), input.as_bytes())
            .map_err(|_| DpopError::Signing)?;
        Ok(format!(
            "{input}.{}",
            URL_SAFE_NO_PAD.encode(signature.as_ref())
        ))
    }
}

fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_secs())
        .unwrap_or(0)
}

/// The public JWK of an uncompressed P-256 point (`04 || x || y`).
fn public_jwk(point: &[u8]) -> Option<Value> {
    if point.len() != 65 || point[0] != 4 {
        return None;
    }
    Some(json!({
        "kty": "EC",
        "crv": "P-256",
        "x": URL_SAFE_NO_PAD.encode(&point[1..33]),
        "y": URL_SAFE_NO_PAD.encode(&point[33..]),
    }))
}

/// The RFC 7638 thumbprint of an EC JWK: SHA-256 of its required members in order.
fn thumbprint(jwk: &Value) -> Option<String> {
    let canonical = format!(
        r#"{{"crv":{},"kty":{},"x":{},"y":{}}}"#,
        jwk.get("crv")?,
        jwk.get("kty")?,
        jwk.get("x")?,
        jwk.get("y")?
    );
    let digest = ring::digest::digest(&ring::digest::SHA256, canonical.as_bytes());
    Some(URL_SAFE_NO_PAD.encode(digest.as_ref()))
}

/// A request URL as a proof names it: without query and fragment (RFC 9449 §4.2).
pub fn htu(url: &str) -> &str {
    let end = url.find(['?', '#']).unwrap_or(url.len());
    &url[..end]
}

/// The `ath` claim of an access token: base64url of its SHA-256.
pub fn ath(token: &str) -> String {
    let digest = ring::digest::digest(&ring::digest::SHA256, token.as_bytes());
    URL_SAFE_NO_PAD.encode(digest.as_ref())
}

/// A `DPoP-Nonce` header's value when it is one (RFC 9449 §8.1: 1*NQCHAR, printable ASCII
/// without `"` and `\`), within [`MAX_NONCE`]; `None` for anything else.
pub fn nonce(value: &[u8]) -> Option<String> {
    let ok = !value.is_empty()
        && value.len() <= MAX_NONCE
        && value
            .iter()
            .all(|&b| b == 0x21 || (0x23..=0x5b).contains(&b) || (0x5d..=0x7e).contains(&b));
    ok.then(|| String::from_utf8_lossy(value).into_owned())
}

/// Whether a challenge (`WWW-Authenticate`) or a token endpoint's error body asks for a nonce:
/// `error="use_dpop_nonce"` (RFC 9449 §8, §9).
pub fn asks_for_nonce(text: &str) -> bool {
    let lower = text.to_ascii_lowercase();
    lower.contains("use_dpop_nonce") && (lower.contains("error=") || lower.contains("\"error\""))
}

/// What a valid proof says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verified {
    /// The thumbprint of the key that signed it.
    pub jkt: String,
    pub jti: String,
    pub nonce: Option<String>,
}

/// Checks a proof for a `method` request to `url` (RFC 9449 §4.3): one compact JWS of type
/// `dpop+jwt`, ES256, signed by the public key in its header (no private part), with `jti`,
/// the request's method and URL, a recent `iat`, and the token's `ath` when one goes with it.
pub fn verify(
    proof: &str,
    method: &str,
    url: &str,
    access_token: Option<&str>,
) -> Result<Verified, &'static str> {
    let mut parts = proof.split('.');
    let (Some(h), Some(c), Some(s), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err("the proof is not a compact JWS");
    };
    let decode = |part: &str| -> Option<Value> {
        serde_json::from_slice(&URL_SAFE_NO_PAD.decode(part).ok()?).ok()
    };
    let header = decode(h).ok_or("the proof's header is not JSON")?;
    let claims = decode(c).ok_or("the proof's claims are not JSON")?;
    if header["typ"] != "dpop+jwt" {
        return Err("typ is not dpop+jwt");
    }
    if header["alg"] != ALGORITHM {
        return Err("alg is not ES256");
    }
    let jwk = &header["jwk"];
    if jwk.get("d").is_some() {
        return Err("the jwk holds a private key");
    }
    if jwk["kty"] != "EC" || jwk["crv"] != "P-256" {
        return Err("the jwk is not a P-256 key");
    }
    let coordinate = |name: &str| {
        jwk[name]
            .as_str()
            .and_then(|v| URL_SAFE_NO_PAD.decode(v).ok())
            .filter(|v| v.len() == 32)
    };
    let (Some(x), Some(y)) = (coordinate("x"), coordinate("y")) else {
        return Err("the jwk's coordinates are unreadable");
    };
    let mut point = vec![4_u8];
    point.extend_from_slice(&x);
    point.extend_from_slice(&y);
    let signature = URL_SAFE_NO_PAD
        .decode(s)
        .map_err(|_| "the signature is not base64url")?;
    UnparsedPublicKey::new(&signature::ECDSA_P256_SHA256_FIXED, &point)
        .verify(format!("{h}.{c}").as_bytes(), &signature)
        .map_err(|_| "the signature does not verify")?;
    let jti = claims["jti"].as_str().ok_or("no jti")?.to_string();
    if !claims["htm"]
        .as_str()
        .is_some_and(|m| m.eq_ignore_ascii_case(method))
    {
        return Err("htm is not the request's method");
    }
    let named = claims["htu"].as_str().ok_or("no htu")?;
    if named.contains(['?', '#']) || named.trim_end_matches('/') != htu(url).trim_end_matches('/') {
        return Err("htu is not the request's URL");
    }
    let iat = claims["iat"].as_u64().ok_or("no iat")?;
    if iat.abs_diff(now()) > IAT_WINDOW_SECS {
        return Err("iat is not recent");
    }
    if let Some(token) = access_token {
        if claims["ath"].as_str() != Some(ath(token).as_str()) {
            return Err("ath is not the token's hash");
        }
    }
    Ok(Verified {
        jkt: thumbprint(jwk).ok_or("the jwk is incomplete")?,
        jti,
        nonce: claims["nonce"].as_str().map(str::to_string),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_proof_verifies_and_names_its_key() {
        let key = DpopKey::generate().expect("key");
        let url = "http://127.0.0.1:9/mcp?x=1#f";
        let proof = key
            .proof("post", url, Some("tok"), Some("n-1"))
            .expect("proof");
        let seen = verify(&proof, "POST", "http://127.0.0.1:9/mcp", Some("tok")).expect("valid");
        assert_eq!(seen.jkt, key.thumbprint());
        assert_eq!(seen.nonce.as_deref(), Some("n-1"));
        // Another method, URL or token is refused; each proof has its own jti.
        assert!(verify(&proof, "GET", "http://127.0.0.1:9/mcp", Some("tok")).is_err());
        assert!(verify(&proof, "POST", "http://127.0.0.1:9/other", Some("tok")).is_err());
        assert!(verify(&proof, "POST", "http://127.0.0.1:9/mcp", Some("t2")).is_err());
        let again = key.proof("POST", url, Some("tok"), None).expect("proof");
        let second = verify(&again, "POST", url, Some("tok")).expect("valid");
        assert_ne!(second.jti, seen.jti);
        // A stored key is the same key.
        let stored = DpopKey::from_stored(&key.to_stored()).expect("stored");
        assert_eq!(stored.thumbprint(), key.thumbprint());
        assert_eq!(
            format!("{key:?}"),
            format!("DpopKey(jkt {})", key.thumbprint())
        );
        assert_eq!(DpopKey::from_stored("!!").err(), Some(DpopError::BadKey));
    }

    #[test]
    fn a_tampered_proof_is_refused() {
        let key = DpopKey::generate().expect("key");
        let proof = key
            .proof("POST", "http://h/token", None, None)
            .expect("proof");
        let other = DpopKey::generate().expect("key");
        let forged = other
            .proof("POST", "http://h/token", None, None)
            .expect("proof");
        let (head, _) = proof.split_once('.').expect("dot");
        let (_, rest) = forged.split_once('.').expect("dot");
        assert_eq!(
            verify(&format!("{head}.{rest}"), "POST", "http://h/token", None),
            Err("the signature does not verify")
        );
        assert!(verify("a.b", "POST", "http://h/token", None).is_err());
    }

    #[test]
    fn the_thumbprint_is_rfc_7638s() {
        // RFC 7638 §3.1 uses an RSA key; this is the EC form of the same rule, checked by hand:
        // members crv, kty, x, y in that order, no spaces.
        let jwk = json!({"kty": "EC", "crv": "P-256", "x": "AQ", "y": "Ag", "use": "sig"});
        let digest = ring::digest::digest(
            &ring::digest::SHA256,
            br#"{"crv":"P-256","kty":"EC","x":"AQ","y":"Ag"}"#,
        );
        assert_eq!(
            thumbprint(&jwk).as_deref(),
            Some(URL_SAFE_NO_PAD.encode(digest.as_ref()).as_str())
        );
    }

    #[test]
    fn nonces_are_taken_only_in_their_syntax() {
        assert_eq!(
            nonce(b"eyJ7S_zG.eyJH0-Z.HX4w-7v").as_deref(),
            Some("eyJ7S_zG.eyJH0-Z.HX4w-7v")
        );
        assert_eq!(nonce(b""), None);
        assert_eq!(nonce(b"has space"), None);
        assert_eq!(nonce(b"quo\"te"), None);
        assert_eq!(nonce(&[b'a'; MAX_NONCE + 1]), None);
        assert!(asks_for_nonce(
            r#"DPoP error="use_dpop_nonce", error_description="x""#
        ));
        assert!(asks_for_nonce(r#"{"error":"use_dpop_nonce"}"#));
        assert!(!asks_for_nonce(r#"DPoP error="invalid_token""#));
    }
}
