//! Wall-clock and CPU-time measurement: warm-up runs, repetitions, medians.

use crate::BenchError;
use std::time::Instant;

/// Which CPU clock accompanies the wall clock.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CpuClock {
    /// CPU time of the calling thread (single-threaded measurements).
    Thread,
    /// CPU time of the whole process (multi-threaded measurements).
    Process,
}

/// CPU time consumed so far by the thread or the process, in nanoseconds (`None` where
/// the platform has no such clock).
pub fn cpu_ns(clock: CpuClock) -> Option<u64> {
    #[cfg(unix)]
    {
        let id = match clock {
            CpuClock::Thread => libc::CLOCK_THREAD_CPUTIME_ID,
            CpuClock::Process => libc::CLOCK_PROCESS_CPUTIME_ID,
        };
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec for the duration of the call and the
        // clock id is one of the constants libc defines for this platform.
        let rc = unsafe { libc::clock_gettime(id, &mut ts) };
        (rc == 0).then(|| ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64)
    }
    #[cfg(not(unix))]
    {
        let _ = clock;
        None
    }
}

/// Result of a repeated measurement, per key.
#[derive(Clone, Copy, Debug, PartialEq, serde::Serialize)]
pub struct Timing {
    /// Median wall-clock nanoseconds per key over the repetitions.
    pub ns_per_key: f64,
    /// Fastest repetition, nanoseconds per key.
    pub min_ns_per_key: f64,
    /// Median CPU nanoseconds per key (thread or process clock), where available.
    pub cpu_ns_per_key: Option<f64>,
    /// Number of timed repetitions.
    pub reps: usize,
}

/// The median of `values` (mean of the middle two for an even count; NaN when empty).
pub fn median(values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let mid = v.len() / 2;
    if v.len() % 2 == 1 {
        v[mid]
    } else {
        0.5 * (v[mid - 1] + v[mid])
    }
}

/// Runs `f` `warmup` times untimed, then `reps` times timed, and returns the per-key
/// timing (`keys` keys per run) and the last run's value. Every run's result is passed
/// through, so a run that fails its answer check aborts the measurement.
///
/// # Errors
/// The first error `f` returns.
pub fn measure<R>(
    warmup: usize,
    reps: usize,
    keys: usize,
    clock: CpuClock,
    mut f: impl FnMut() -> Result<R, BenchError>,
) -> Result<(Timing, R), BenchError> {
    let reps = reps.max(1);
    for _ in 0..warmup {
        drop(std::hint::black_box(f()?));
    }
    let mut wall = Vec::with_capacity(reps);
    let mut cpu = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        drop(last.take());
        let c0 = cpu_ns(clock);
        let t0 = Instant::now();
        // black_box: a result nobody reads must still be computed.
        let r = std::hint::black_box(f()?);
        let elapsed = t0.elapsed().as_nanos() as f64;
        let c1 = cpu_ns(clock);
        wall.push(elapsed);
        if let (Some(a), Some(b)) = (c0, c1) {
            cpu.push(b.saturating_sub(a) as f64);
        }
        last = Some(r);
    }
    let per = keys.max(1) as f64;
    let timing = Timing {
        ns_per_key: median(&wall) / per,
        min_ns_per_key: wall.iter().copied().fold(f64::INFINITY, f64::min) / per,
        cpu_ns_per_key: (cpu.len() == reps).then(|| median(&cpu) / per),
        reps,
    };
    // `reps >= 1`, so the loop ran and stored a value.
    let value = last.ok_or_else(|| BenchError::Config("no repetition ran".into()))?;
    Ok((timing, value))
}

/// Like [`measure`], but each run first calls `setup` untimed (e.g. to build an empty
/// filter) and times only `run` on its value; returns the timing and the last value.
///
/// # Errors
/// The first error `setup` or `run` returns.
pub fn measure_with<S>(
    warmup: usize,
    reps: usize,
    keys: usize,
    clock: CpuClock,
    mut setup: impl FnMut() -> Result<S, BenchError>,
    mut run: impl FnMut(&mut S) -> Result<(), BenchError>,
) -> Result<(Timing, S), BenchError> {
    let reps = reps.max(1);
    for _ in 0..warmup {
        let mut s = setup()?;
        run(&mut s)?;
    }
    let mut wall = Vec::with_capacity(reps);
    let mut cpu = Vec::with_capacity(reps);
    let mut last = None;
    for _ in 0..reps {
        drop(last.take());
        let mut s = setup()?;
        let c0 = cpu_ns(clock);
        let t0 = Instant::now();
        run(&mut s)?;
        let elapsed = t0.elapsed().as_nanos() as f64;
        let c1 = cpu_ns(clock);
        wall.push(elapsed);
        if let (Some(a), Some(b)) = (c0, c1) {
            cpu.push(b.saturating_sub(a) as f64);
        }
        last = Some(s);
    }
    let per = keys.max(1) as f64;
    let timing = Timing {
        ns_per_key: median(&wall) / per,
        min_ns_per_key: wall.iter().copied().fold(f64::INFINITY, f64::min) / per,
        cpu_ns_per_key: (cpu.len() == reps).then(|| median(&cpu) / per),
        reps,
    };
    let value = last.ok_or_else(|| BenchError::Config("no repetition ran".into()))?;
    Ok((timing, value))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn median_of_odd_and_even() {
        assert_eq!(median(&[3.0, 1.0, 2.0]), 2.0);
        assert_eq!(median(&[4.0, 1.0, 2.0, 3.0]), 2.5);
        assert!(median(&[]).is_nan());
    }

    #[test]
    fn measure_counts_runs_and_passes_errors() {
        let mut runs = 0;
        // Each run sleeps 2 ms: at least 200 us a key of wall time over 10 keys, and
        // far less CPU time than wall time (a sleeping thread uses none).
        let (t, v) = measure(2, 3, 10, CpuClock::Thread, || {
            runs += 1;
            std::thread::sleep(std::time::Duration::from_millis(2));
            Ok(runs)
        })
        .unwrap();
        assert_eq!((runs, v, t.reps), (5, 5, 3));
        assert!(t.ns_per_key >= 200_000.0, "{}", t.ns_per_key);
        #[cfg(unix)]
        {
            let cpu = t.cpu_ns_per_key.expect("a thread CPU clock on unix");
            assert!(cpu < t.ns_per_key / 2.0, "{cpu} {}", t.ns_per_key);
        }
        let err = measure(0, 3, 1, CpuClock::Process, || -> Result<(), BenchError> {
            Err(BenchError::Config("boom".into()))
        });
        assert!(err.is_err());
        let mut setups = 0;
        let (t, v) = measure_with(
            1,
            2,
            4,
            CpuClock::Thread,
            || {
                setups += 1;
                Ok(vec![0u8; 4])
            },
            |v| {
                v[0] += 1;
                Ok(())
            },
        )
        .unwrap();
        assert_eq!((setups, v[0], t.reps), (3, 1, 2));
    }
}
