//! DPoP in the demo server's authorization mode (`--oauth --oauth-dpop`, RFC 9449): the
//! authorization server offers ES256 proofs and binds the tokens it issues to the key of the
//! proof that asked for them (`token_type: DPoP`, refresh tokens too); the resource takes a
//! token only as `Authorization: DPoP` with a fresh proof of that key for the request. With
//! `--oauth-dpop-nonce`, both also ask for their nonce first (`use_dpop_nonce`, §8 and §9).
//!
//! Proofs are checked by `crate::dpop::verify`, the module the client signs them with.

use std::collections::HashSet;
use std::sync::Mutex;

use hyper::{Request, Response, StatusCode};

use super::auth_http::{log, oauth_error, plain, random_token, Body};
use crate::dpop;

/// The DPoP flags of the authorization mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct DemoDpop {
    /// Ask for a nonce before taking a proof.
    pub nonce: bool,
}

/// The proof checks of one demo server.
pub(super) struct Guard {
    /// The nonce handed out, when one is asked for.
    nonce: Option<String>,
    /// The `jti`s seen at the resource (a proof is good once).
    seen: Mutex<HashSet<String>>,
}

impl Guard {
    pub fn new(options: DemoDpop) -> Guard {
        Guard {
            nonce: options.nonce.then(|| random_token("demo-nonce")),
            seen: Mutex::new(HashSet::new()),
        }
    }

    /// At the token endpoint (`url`): the thumbprint the token is to be bound to, or the 400.
    pub fn token_request(
        &self,
        proof: Option<&str>,
        url: &str,
    ) -> Result<String, Box<Response<Body>>> {
        let refuse = |why: &str| {
            log(&format!("DPoP proof refused at the token endpoint: {why}"));
            Box::new(oauth_error(
                StatusCode::BAD_REQUEST,
                "invalid_dpop_proof",
                why,
            ))
        };
        let proof = proof.ok_or_else(|| refuse("no DPoP proof"))?;
        let verified = dpop::verify(proof, "POST", url, None).map_err(refuse)?;
        if let Some(nonce) = &self.nonce {
            if verified.nonce.as_ref() != Some(nonce) {
                log("DPoP nonce asked for at the token endpoint");
                let mut answer = oauth_error(
                    StatusCode::BAD_REQUEST,
                    "use_dpop_nonce",
                    "the authorization server requires a DPoP nonce",
                );
                with_nonce(&mut answer, nonce);
                return Err(Box::new(answer));
            }
        }
        Ok(verified.jkt)
    }

    /// At the resource (`url`), a request presenting `token`, bound to `jkt`: `None` when its
    /// proof holds, else the 401 (with `challenge`, the resource's `DPoP` challenge).
    pub fn resource_request<B>(
        &self,
        request: &Request<B>,
        url: &str,
        token: &str,
        jkt: &str,
        challenge: &str,
    ) -> Option<Response<Body>> {
        let refuse = |error: &str, why: &str| {
            log(&format!("DPoP proof refused at the resource: {why}"));
            unauthorized(challenge, error, why)
        };
        let proofs: Vec<&str> = request
            .headers()
            .get_all(dpop::PROOF_HEADER)
            .iter()
            .filter_map(|v| v.to_str().ok())
            .collect();
        let [proof] = proofs[..] else {
            return Some(refuse("invalid_dpop_proof", "not exactly one DPoP proof"));
        };
        let verified = match dpop::verify(proof, request.method().as_str(), url, Some(token)) {
            Ok(verified) => verified,
            Err(why) => return Some(refuse("invalid_dpop_proof", why)),
        };
        if verified.jkt != jkt {
            return Some(refuse(
                "invalid_token",
                "the proof's key is not the one the token is bound to",
            ));
        }
        if let Some(nonce) = &self.nonce {
            if verified.nonce.as_ref() != Some(nonce) {
                log("DPoP nonce asked for at the resource");
                let mut answer = unauthorized(
                    challenge,
                    "use_dpop_nonce",
                    "the resource requires a DPoP nonce",
                );
                with_nonce(&mut answer, nonce);
                return Some(answer);
            }
        }
        let fresh = self
            .seen
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(verified.jti);
        if !fresh {
            return Some(refuse("invalid_dpop_proof", "a proof used twice"));
        }
        None
    }
}

/// A 401 with the resource's challenge and `error`.
fn unauthorized(challenge: &str, error: &str, why: &str) -> Response<Body> {
    let mut answer = plain(StatusCode::UNAUTHORIZED, "a valid DPoP proof is required");
    let value = format!("{challenge}, error=\"{error}\", error_description=\"{why}\"");
    if let Ok(value) = http::HeaderValue::from_str(&value) {
        answer
            .headers_mut()
            .insert(http::header::WWW_AUTHENTICATE, value);
    }
    answer
}

fn with_nonce(answer: &mut Response<Body>, nonce: &str) {
    if let Ok(value) = http::HeaderValue::from_str(nonce) {
        answer.headers_mut().insert(dpop::NONCE_HEADER, value);
    }
}
