//! Durations as the config writes them (`500ms`, `10s`, `1.5s`, `2m`, `1h`, a bare number of
//! seconds): a small grammar of its own, exact to the nanosecond, apart from the loader.

use std::time::Duration;

/// Parse a duration: a number followed by `ms`, `s`, `m` or `h` (`500ms`, `10s`, `1.5s`, `2m`,
/// `1h`); a plain number is seconds.
pub fn parse_duration(s: &str) -> Result<Duration, String> {
    let text = s.trim();
    let split = text
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(split);
    let bad_number = || {
        format!(
            "invalid duration {s:?}: expected a number then ms, s, m or h (e.g. 500ms, 10s, 1.5s)"
        )
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    if whole.is_empty() && fraction.is_empty() {
        return Err(bad_number());
    }
    if !whole
        .chars()
        .chain(fraction.chars())
        .all(|c| c.is_ascii_digit())
    {
        return Err(bad_number());
    }
    let unit_nanos: u128 = match unit.trim_start() {
        "ms" => 1_000_000,
        "" | "s" => 1_000_000_000,
        "m" => 60_000_000_000,
        "h" => 3_600_000_000_000,
        other => {
            return Err(format!(
                "invalid duration {s:?}: unknown unit {other:?} (use ms, s, m or h; a plain number is seconds)"
            ))
        }
    };
    let too_long = || format!("invalid duration {s:?}: too long");
    let whole: u128 = if whole.is_empty() {
        0
    } else {
        whole.parse().map_err(|_| too_long())?
    };
    // Fixed-point: digits past nanosecond precision are dropped.
    let mut fraction_nanos: u128 = 0;
    let mut scale = unit_nanos;
    for digit in fraction.chars().filter_map(|c| c.to_digit(10)) {
        scale /= 10;
        fraction_nanos += u128::from(digit) * scale;
    }
    let nanos = whole
        .checked_mul(unit_nanos)
        .and_then(|n| n.checked_add(fraction_nanos))
        .ok_or_else(too_long)?;
    // Past this, a deadline computed from it could overflow the clock; no wait needs more.
    if nanos > MAX_DURATION.as_nanos() {
        return Err(format!(
            "invalid duration {s:?}: too long (at most {}h)",
            MAX_DURATION.as_secs() / 3600
        ));
    }
    let secs = u64::try_from(nanos / 1_000_000_000).map_err(|_| too_long())?;
    // The remainder is below 1e9, so it fits.
    let sub = u32::try_from(nanos % 1_000_000_000).unwrap_or(0);
    Ok(Duration::new(secs, sub))
}

/// The longest duration a config may give: 30 days.
pub const MAX_DURATION: Duration = Duration::from_secs(30 * 24 * 3600);
