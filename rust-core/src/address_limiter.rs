//! `AddressLimiter`: login attempts per client address (contract §8), kept
//! in memory, per instance, in a fixed window from the first attempt. A
//! password grant *reserves* one attempt before anything else (at
//! `LOGIN_IP_MAX_FAILURES` reserved in the window: 429 until it has passed)
//! and gives it back when the grant was not a failure, so however many
//! attempts arrive at once, at most that many are evaluated.
//!
//! The key is `client_address::limit_key`: an IPv4 address, an IPv6 /64. At
//! most `MAX_TRACKED_ADDRESSES` keys; when full, expired windows are swept
//! (at most once a second), and a key beyond that is not tracked.
//!
//! The per-username limit lives in PostgreSQL (`UserRepository`); the cap of
//! argon2id checks is `PasswordCheckLimit`.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use crate::client_address::limit_key;

/// The address table's bound.
pub const MAX_TRACKED_ADDRESSES: usize = 100_000;
/// A full table is swept at most this often.
pub const SWEEP_INTERVAL: Duration = Duration::from_secs(1);

/// One key's window: when its first attempt came, and how many are reserved since.
#[derive(Debug, Clone, Copy)]
struct Window {
    started: Instant,
    reserved: u32,
}

struct Table {
    windows: HashMap<IpAddr, Window>,
    /// No sweep before this: keeps a flood of new addresses from sweeping
    /// 100,000 entries each.
    no_sweep_before: Option<Instant>,
}

/// One reserved attempt, to give back with `AddressLimiter::release`. Holds
/// the window it was counted in: once that window has passed, giving it back
/// changes nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[must_use]
pub struct Reservation(Option<(IpAddr, Instant)>);

impl Reservation {
    /// Nothing reserved (no address, or not tracked).
    pub const NONE: Reservation = Reservation(None);
}

/// Login attempts per client address (a `std` mutex: held for a map
/// lookup, never across an await).
pub struct AddressLimiter {
    max_attempts: u32,
    window: Duration,
    capacity: usize,
    table: Mutex<Table>,
}

impl AddressLimiter {
    pub fn new(max_attempts: u32, window: Duration) -> Self {
        Self::with_capacity(max_attempts, window, MAX_TRACKED_ADDRESSES)
    }

    pub fn with_capacity(max_attempts: u32, window: Duration, capacity: usize) -> Self {
        AddressLimiter {
            max_attempts: max_attempts.max(1),
            window,
            capacity,
            table: Mutex::new(Table { windows: HashMap::new(), no_sweep_before: None }),
        }
    }

    /// Reserves one attempt for `address`, atomically: `Err(seconds)` when
    /// its window already holds `LOGIN_IP_MAX_FAILURES` (nothing reserved;
    /// the window's remaining seconds, rounded up, at least 1).
    pub fn reserve(&self, address: IpAddr, now: Instant) -> Result<Reservation, u64> {
        let key = limit_key(address);
        let mut table = self.lock();
        if let Some(w) = table.windows.get_mut(&key) {
            match (w.started + self.window).checked_duration_since(now) {
                Some(left) if !left.is_zero() => {
                    if w.reserved >= self.max_attempts {
                        return Err(ceil_seconds(left));
                    }
                    w.reserved += 1;
                }
                _ => *w = Window { started: now, reserved: 1 },
            }
            return Ok(Reservation(Some((key, w.started))));
        }
        if table.windows.len() >= self.capacity && !self.sweep(&mut table, now) {
            return Ok(Reservation::NONE); // full of live windows: not tracked
        }
        table.windows.insert(key, Window { started: now, reserved: 1 });
        Ok(Reservation(Some((key, now))))
    }

    /// Gives a reserved attempt back (the grant was not a failure), if its
    /// window is still the key's.
    pub fn release(&self, reservation: Reservation) {
        let Reservation(Some((key, started))) = reservation else { return };
        let mut table = self.lock();
        if let Some(w) = table.windows.get_mut(&key)
            && w.started == started
        {
            w.reserved = w.reserved.saturating_sub(1);
        }
    }

    /// Drops the expired windows of a full table, at most once per
    /// `SWEEP_INTERVAL`; whether there is room now.
    fn sweep(&self, table: &mut Table, now: Instant) -> bool {
        if table.no_sweep_before.is_some_and(|t| now < t) {
            return false;
        }
        let window = self.window;
        table.windows.retain(|_, w| now < w.started + window);
        table.no_sweep_before = Some(now + SWEEP_INTERVAL);
        table.windows.len() < self.capacity
    }

    /// Keys in the table (expired ones not yet swept included).
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

    fn at(t0: Instant, millis: u64) -> Instant {
        t0 + Duration::from_millis(millis)
    }

    #[test]
    fn the_address_locks_when_its_attempts_are_reserved_until_the_window_passes() {
        let limits = AddressLimiter::new(3, WINDOW);
        let t0 = Instant::now();
        for i in 0..3 {
            assert!(limits.reserve(ip(1), at(t0, i * 1000)).is_ok(), "attempt {i}");
        }
        // The window runs from the first attempt, not the last.
        assert_eq!(limits.reserve(ip(1), at(t0, 10_000)), Err(290));
        assert_eq!(limits.reserve(ip(1), at(t0, 10_500)), Err(290)); // 289.5 s, rounded up
        assert_eq!(limits.reserve(ip(1), at(t0, 299_999)), Err(1));
        assert!(limits.reserve(ip(2), t0).is_ok(), "another address is not locked");
        // After the window a new one starts, counted from 1.
        let later = t0 + WINDOW;
        assert!(limits.reserve(ip(1), later).is_ok());
        assert!(limits.reserve(ip(1), later).is_ok());
        assert!(limits.reserve(ip(1), later + Duration::from_secs(1)).is_ok());
        assert_eq!(limits.reserve(ip(1), later + Duration::from_secs(1)), Err(299));
    }

    #[test]
    fn a_released_attempt_is_given_back_in_its_window_only() {
        let limits = AddressLimiter::new(2, WINDOW);
        let t0 = Instant::now();
        let first = limits.reserve(ip(1), t0).expect("first");
        let second = limits.reserve(ip(1), t0).expect("second");
        assert!(limits.reserve(ip(1), t0).is_err(), "both reserved: locked");
        limits.release(first);
        let third = limits.reserve(ip(1), t0).expect("one given back");
        assert!(limits.reserve(ip(1), t0).is_err());
        // Released after its window passed: the new window keeps its count.
        let later = t0 + WINDOW;
        let fresh = limits.reserve(ip(1), later).expect("new window");
        limits.release(second);
        limits.release(third);
        let _ = limits.reserve(ip(1), later).expect("second of the new window");
        assert!(limits.reserve(ip(1), later).is_err(), "old reservations did not free the new window");
        limits.release(fresh);
        assert!(limits.reserve(ip(1), later).is_ok());
        limits.release(Reservation::NONE);
    }

    #[test]
    fn concurrent_reservations_never_pass_the_limit() {
        let limits = std::sync::Arc::new(AddressLimiter::new(10, WINDOW));
        let t0 = Instant::now();
        let granted: usize = (0..8)
            .map(|_| {
                let limits = std::sync::Arc::clone(&limits);
                std::thread::spawn(move || (0..20).filter(|_| limits.reserve(ip(1), t0).is_ok()).count())
            })
            .collect::<Vec<_>>()
            .into_iter()
            .map(|t| t.join().expect("thread"))
            .sum();
        assert_eq!(granted, 10);
    }

    #[test]
    fn an_ipv6_slash_64_is_one_client() {
        let limits = AddressLimiter::new(2, WINDOW);
        let t0 = Instant::now();
        let a: IpAddr = "2001:db8:1:2::1".parse().expect("ip");
        let b: IpAddr = "2001:db8:1:2:ffff::9".parse().expect("ip");
        let other: IpAddr = "2001:db8:1:3::1".parse().expect("ip");
        let _ = limits.reserve(a, t0).expect("a");
        let _ = limits.reserve(b, t0).expect("b");
        assert!(limits.reserve("2001:db8:1:2::77".parse().expect("ip"), t0).is_err(), "the /64 is locked");
        assert!(limits.reserve(other, t0).is_ok(), "another /64 is not");
        let v4: IpAddr = "192.0.2.1".parse().expect("ip");
        let mapped: IpAddr = "::ffff:192.0.2.1".parse().expect("ip");
        let _ = limits.reserve(v4, t0).expect("v4");
        let _ = limits.reserve(mapped, t0).expect("mapped");
        assert!(limits.reserve(v4, t0).is_err(), "a mapped address is its IPv4 address");
        assert!(limits.reserve("192.0.2.2".parse().expect("ip"), t0).is_ok(), "IPv4 by address");
    }

    #[test]
    fn the_table_is_bounded_and_swept_at_most_once_a_second_when_full() {
        let limits = AddressLimiter::with_capacity(1, WINDOW, 3);
        let t0 = Instant::now();
        for (n, start) in [(0, 0), (1, 100), (2, 2000)] {
            let _ = limits.reserve(ip(n), at(t0, start)).expect("tracked");
        }
        assert_eq!(limits.tracked(), 3);
        // Full of live windows: a fourth address is not tracked (the sweep found nothing).
        assert_eq!(limits.reserve(ip(3), at(t0, 5000)), Ok(Reservation::NONE));
        assert_eq!(limits.tracked(), 3);
        // A tracked address still counts.
        assert!(limits.reserve(ip(0), at(t0, 5000)).is_err());
        // ip(0)'s window has passed: the sweep makes room for one.
        assert_ne!(limits.reserve(ip(4), at(t0, 300_000)), Ok(Reservation::NONE));
        assert_eq!(limits.tracked(), 3);
        assert!(limits.reserve(ip(4), at(t0, 300_000)).is_err(), "tracked after the sweep");
        // ip(1)'s has passed too, but the last sweep was under a second ago: not tracked.
        assert_eq!(limits.reserve(ip(5), at(t0, 300_500)), Ok(Reservation::NONE));
        assert_eq!(limits.reserve(ip(5), at(t0, 300_999)), Ok(Reservation::NONE));
        // A second after the last sweep: swept again.
        assert_ne!(limits.reserve(ip(5), at(t0, 301_000)), Ok(Reservation::NONE));
        assert!(limits.reserve(ip(5), at(t0, 301_000)).is_err(), "tracked after the second sweep");
        assert_eq!(limits.tracked(), 3);
    }

    #[test]
    fn retry_after_is_rounded_up_and_at_least_one() {
        assert_eq!(ceil_seconds(Duration::from_millis(1)), 1);
        assert_eq!(ceil_seconds(Duration::from_secs(1)), 1);
        assert_eq!(ceil_seconds(Duration::from_millis(1001)), 2);
        assert_eq!(ceil_seconds(Duration::ZERO), 1);
    }
}
