//! Fuzz target: what inspects a server's stdout. `classify_line` on every line, and the bounded
//! line reader held against a plain split of the same bytes (with a small buffer and limit, so
//! lines straddle buffer refills and cross the limit).
#![no_main]

use aimon_console::mcp::transport::lines::{classify_line, read_line_bounded, Line};
use libfuzzer_sys::fuzz_target;
use tokio::io::BufReader;

fuzz_target!(|data: &[u8]| {
    let Some((&knobs, stream)) = data.split_first() else {
        return;
    };
    let capacity = usize::from(knobs & 0x0f) + 1;
    let max = usize::from(knobs >> 4) * 4;

    let mut expected: Vec<&[u8]> = stream.split(|b| *b == b'\n').collect();
    if expected.last().is_some_and(|p| p.is_empty()) {
        expected.pop();
    }

    let mut reader = BufReader::with_capacity(capacity, stream);
    let mut buf = Vec::new();
    let mut seen = 0;
    loop {
        let line = futures::executor::block_on(read_line_bounded(&mut reader, &mut buf, max));
        match line {
            Ok(Line::Complete) => {
                let want = expected[seen];
                assert!(
                    want.len() <= max,
                    "a line over the limit came through whole"
                );
                assert_eq!(buf.as_slice(), want);
                let _ = classify_line(&buf);
            }
            Ok(Line::TooLong(n)) => {
                assert_eq!(n, expected[seen].len());
                assert!(n > max);
            }
            Ok(Line::Eof) => break,
            Err(e) => panic!("reading a byte slice cannot fail: {e}"),
        }
        seen += 1;
    }
    assert_eq!(seen, expected.len());
    // Whole input as one line, too: the classifier never panics on any bytes.
    let _ = classify_line(stream);
});
