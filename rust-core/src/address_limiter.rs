//! `AddressLimiter`: failed logins per client address (contract §8), kept in
//! memory, per instance, in a fixed window from the first failure; at
//! `LOGIN_IP_MAX_FAILURES` the address gets 429 until the window has passed.
//! At most `MAX_TRACKED_ADDRESSES` addresses; when full, expired windows are
//! swept, and an address beyond that is not tracked.
//!
//! The per-username limit lives in PostgreSQL (`UserRepository`); the cap of
//! argon2id checks is `PasswordCheckLimit`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// The address table's bound.
pub const MAX_TRACKED_ADDRESSES: usize = 100_000;

/// One address's window: when its first failure came, and how many since.
#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    failures: u32,
}

struct Table {
    windows: HashMap<IpAddr, Window>,
    /// No sweep before this: the earliest a window of a full table can expire.
    /// Keeps a flood of new addresses from sweeping 100,000 entries each.
    no_sweep_before: Option<Instant>,
}

/// Failed logins per client address (a `std` mutex: held for a map lookup,
/// never across an await).
pub struct AddressLimiter {
    max_failures: u32,
    window: Duration,
    capacity: usize,
    table: Mutex<Table>,
}

impl AddressLimiter {
    pub fn new(max_failures: u32, window: Duration) -> Self {
        Self::with_capacity(max_failures, window, MAX_TRACKED_ADDRESSES)
    }

    pub fn with_capacity(max_failures: u32, window: Duration, capacity: usize) -> Self {
        AddressLimiter {
            max_failures: max_failures.max(1),
            window,
            capacity,
            table: Mutex::new(Table { windows: HashMap::new(), no_sweep_before: None }),
        }
    }

    /// `Err(seconds)` while `address` is locked: the window's remaining
    /// seconds, rounded up, at least 1.
    pub fn check(&self, address: IpAddr, now: Instant) -> Result<(), u64> {
        let table = self.lock();
        match table.windows.get(&address) {
            Some(w) if w.failures >= self.max_failures => match (w.started + self.window).checked_duration_since(now) {
                Some(left) if !left.is_zero() => Err(ceil_seconds(left)),
                _ => Ok(()),
            },
            _ => Ok(()),
        }
    }

    /// One failed login from `address`.
    pub fn record_failure(&self, address: IpAddr, now: Instant) {
        let mut table = self.lock();
        if let Some(w) = table.windows.get_mut(&address) {
            if now < w.started + self.window {
                w.failures = w.failures.saturating_add(1);
            } else {
                *w = Window { started: now, failures: 1 };
            }
            return;
        }
        if table.windows.len() >= self.capacity && !self.sweep(&mut table, now) {
            return; // full of live windows: not tracked
        }
        table.windows.insert(address, Window { started: now, failures: 1 });
    }

    /// Drops the expired windows of a full table; whether there is room now.
    fn sweep(&self, table: &mut Table, now: Instant) -> bool {
        if table.no_sweep_before.is_some_and(|t| now < t) {
            return false;
        }
        let window = self.window;
        table.windows.retain(|_, w| now < w.started + window);
        let room = table.windows.len() < self.capacity;
        table.no_sweep_before = if room { None } else { table.windows.values().map(|w| w.started + window).min() };
        room
    }

    /// Addresses in the table (expired ones not yet swept included).
    pub fn tracked(&self) -> usize {
        self.lock().windows.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Table> {
        self.table.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whole seconds, rounded up.
fn ceil_seconds(d: Duration) -> u64 {
    (d.as_secs() + u64::from(d.subsec_nanos() > 0)).max(1)
}

#[cfg(test)]
mod tests {
    use super::*;

    const WINDOW: Duration = Duration::from_secs(300);

    fn ip(n: u32) -> IpAddr {
        IpAddr::from(std::net::Ipv4Addr::from(0x0a00_0000 + n))
    }

    #[test]
    fn the_address_locks_at_the_limit_until_the_window_passes() {
        let limits = AddressLimiter::new(3, WINDOW);
        let t0 = Instant::now();
        for i in 0..2 {
            limits.record_failure(ip(1), t0 + Duration::from_secs(i));
            assert_eq!(limits.check(ip(1), t0 + Duration::from_secs(i)), Ok(()));
        }
        limits.record_failure(ip(1), t0 + Duration::from_secs(10));
        // The window runs from the first failure, not the last.
        assert_eq!(limits.check(ip(1), t0 + Duration::from_secs(10)), Err(290));
        assert_eq!(limits.check(ip(1), t0 + Duration::from_millis(10_500)), Err(290)); // 289.5 s, rounded up
        assert_eq!(limits.check(ip(1), t0 + Duration::from_millis(299_999)), Err(1));
        assert_eq!(limits.check(ip(1), t0 + WINDOW), Ok(()));
        assert_eq!(limits.check(ip(2), t0), Ok(()), "another address is not locked");
        // After the window a failure starts a new one, counted from 1.
        limits.record_failure(ip(1), t0 + WINDOW);
        assert_eq!(limits.check(ip(1), t0 + WINDOW), Ok(()));
        limits.record_failure(ip(1), t0 + WINDOW);
        limits.record_failure(ip(1), t0 + WINDOW + Duration::from_secs(1));
        assert_eq!(limits.check(ip(1), t0 + WINDOW + Duration::from_secs(1)), Err(299));
    }

    #[test]
    fn a_limit_of_one_locks_on_the_first_failure() {
        let limits = AddressLimiter::new(1, Duration::from_secs(2));
        let t0 = Instant::now();
        assert_eq!(limits.check(ip(1), t0), Ok(()));
        limits.record_failure(ip(1), t0);
        assert_eq!(limits.check(ip(1), t0), Err(2));
    }

    #[test]
    fn the_table_is_bounded_and_swept_when_full() {
        let limits = AddressLimiter::with_capacity(1, WINDOW, 3);
        let t0 = Instant::now();
        for n in 0..3 {
            limits.record_failure(ip(n), t0 + Duration::from_secs(u64::from(n)));
        }
        assert_eq!(limits.tracked(), 3);
        // Full of live windows: a fourth address is not tracked.
        limits.record_failure(ip(3), t0 + Duration::from_secs(5));
        assert_eq!(limits.tracked(), 3);
        assert_eq!(limits.check(ip(3), t0 + Duration::from_secs(5)), Ok(()));
        // A tracked address still counts.
        assert!(limits.check(ip(0), t0 + Duration::from_secs(5)).is_err());
        // Once the first window has passed, the sweep makes room for one.
        let later = t0 + WINDOW;
        limits.record_failure(ip(4), later);
        assert_eq!(limits.tracked(), 3);
        assert!(limits.check(ip(4), later).is_err(), "tracked after the sweep");
        assert_eq!(limits.check(ip(0), later), Ok(()));
        // Still full of live windows until ip(1)'s passes.
        limits.record_failure(ip(5), later + Duration::from_millis(500));
        assert_eq!(limits.check(ip(5), later + Duration::from_millis(500)), Ok(()));
        limits.record_failure(ip(5), later + Duration::from_secs(1));
        assert!(limits.check(ip(5), later + Duration::from_secs(1)).is_err());
        // Everything expired: all swept for the next new address.
        let much_later = later + WINDOW + WINDOW;
        limits.record_failure(ip(6), much_later);
        assert_eq!(limits.tracked(), 1);
    }

    #[test]
    fn retry_after_is_rounded_up_and_at_least_one() {
        assert_eq!(ceil_seconds(Duration::from_millis(1)), 1);
        assert_eq!(ceil_seconds(Duration::from_secs(1)), 1);
        assert_eq!(ceil_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(ceil_seconds(Duration::ZERO), 1);
    }
}
