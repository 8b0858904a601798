//! Timestamps as the wire writes them: RFC 3339 (ISO 8601) in UTC.

use std::time::SystemTime;

/// `at` as RFC 3339 in UTC, to the second (`2026-12-03T12:13:20Z`).
pub fn rfc3339(at: SystemTime) -> String {
    let since = at.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    civil(since.as_secs(), None)
}

/// `at` as RFC 3339 in UTC, to the millisecond (`2026-12-03T12:13:20.042Z`): for times that
/// order events less than a second apart (a task's updates).
pub fn rfc3339_millis(at: SystemTime) -> String {
    let since = at.duration_since(SystemTime::UNIX_EPOCH).unwrap_or_default();
    civil(since.as_secs(), Some(since.subsec_millis()))
}

fn civil(secs: u64, millis: Option<u32>) -> String {
    let (days, rest) = (secs / 86_400, secs % 86_400);
    let (h, m, s) = (rest / 3600, rest % 3600 / 60, rest % 60);
    // Civil date from days since 1970-01-01 (Howard Hinnant's algorithm).
    let z = days as i64 + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    match millis {
        None => format!("{year:04}-{month:02}-{d:02}T{h:02}:{m:02}:{s:02}Z"),
        Some(ms) => format!("{year:04}-{month:02}-{d:02}T{h:02}:{m:02}:{s:02}.{ms:03}Z"),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, SystemTime};

    use super::*;

    #[test]
    fn dates() {
        assert_eq!(rfc3339(SystemTime::UNIX_EPOCH), "1970-01-01T00:00:00Z");
        let at = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_300_000);
        assert_eq!(rfc3339(at), "2026-12-03T12:13:20Z");
        let leap = SystemTime::UNIX_EPOCH + Duration::from_secs(951_782_400);
        assert_eq!(rfc3339(leap), "2000-02-29T00:00:00Z");
        assert_eq!(rfc3339_millis(at + Duration::from_millis(42)), "2026-12-03T12:13:20.042Z");
    }
}
