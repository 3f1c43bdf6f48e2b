//! Fuzz target: DPoP (`aimon_console::dpop`) — a server's `DPoP-Nonce` header, a challenge or
//! token error that may ask for a nonce, and a proof to check, on any bytes.
//!
//! Held: no panic; a nonce taken is within its syntax and bound, and a proof signed with it
//! verifies and carries it back; the bytes themselves, as a proof, are never verified for a
//! request they were not signed for.
#![no_main]

use aimon_console::dpop::{asks_for_nonce, nonce, verify, DpopKey};
use libfuzzer_sys::fuzz_target;

const URL: &str = "http://127.0.0.1:1/mcp";

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let _ = asks_for_nonce(&text);
    assert!(verify(&text, "POST", URL, Some("token")).is_err());
    if let Some(taken) = nonce(data) {
        assert!(!taken.is_empty() && taken.len() <= 512);
        assert!(taken.bytes().all(|b| (0x21..=0x7e).contains(&b) && b != b'"' && b != b'\\'));
        let key = DpopKey::generate().expect("key");
        let proof = key
            .proof("POST", URL, Some("token"), Some(&taken))
            .expect("proof");
        let seen = verify(&proof, "POST", URL, Some("token")).expect("its own proof verifies");
        assert_eq!(seen.nonce.as_deref(), Some(taken.as_str()));
        assert_eq!(seen.jkt, key.thumbprint());
    }
});
