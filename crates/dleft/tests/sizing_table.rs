//! The sizing table of the crate docs (lib.rs, "Storage and speed"), recomputed from the
//! builder's own sizing: this test fails when the defaults or the sizing change and the
//! table is not updated with them. `cargo test -p bloomforge-dleft --test integration
//! sizing_table:: -- --nocapture` prints the rows.

use bloomforge_dleft::{DLeftCountingBloomFilter, DLeftSizing, DEFAULT_COUNTER_BITS};

/// A counting Bloom filter's bits per key at `p` with 4-bit counters:
/// `4 * log2(1/p) / ln 2`.
fn cbf_bits(p: f64) -> f64 {
    4.0 * (1.0 / p).log2() / std::f64::consts::LN_2
}

fn close(got: f64, want: f64, tol: f64, what: &str) {
    assert!(
        (got - want).abs() <= tol,
        "{what}: computed {got}, table says {want}"
    );
}

/// One row: (target, r, bits/key, expected FP in %, CBF bits/key at the target, ratio), as
/// printed, checked against `sizing`.
fn check(s: &DLeftSizing, p: f64, row: (u32, f64, f64, f64, f64)) {
    let (r, bits, fp_pct, cbf, ratio) = row;
    println!(
        "| {p} | {} | {:.2} | {:.2e} % | {:.1} | {:.2} | (load {:.3}, c = {})",
        s.remainder_bits,
        s.bits_per_key,
        s.false_pos * 100.0,
        cbf_bits(p),
        s.bits_per_key / cbf_bits(p),
        s.load,
        s.counter_bits
    );
    assert_eq!(s.remainder_bits, r, "r at {p}");
    close(s.bits_per_key, bits, 0.005, "bits/key");
    // The FP column has two significant digits.
    close(s.false_pos * 100.0, fp_pct, fp_pct * 0.01, "expected FP");
    close(cbf_bits(p), cbf, 0.05, "counting Bloom filter bits/key");
    close(s.bits_per_key / cbf_bits(p), ratio, 0.005, "ratio");
}

#[test]
fn crate_doc_sizing_table() {
    assert_eq!(DEFAULT_COUNTER_BITS, 4);
    let n = 1_000_000;
    let table = [
        (0.01, (12, 21.33, 0.58, 38.3, 0.56)),
        (0.001, (15, 25.33, 0.073, 57.5, 0.44)),
        (0.0001, (18, 29.33, 0.0092, 76.7, 0.38)),
    ];
    for (p, row) in table {
        let s = DLeftCountingBloomFilter::with_false_pos(p)
            .sizing(n)
            .unwrap();
        assert_eq!((s.subtables, s.cells_per_bucket), (4, 8));
        assert_eq!(s.counter_bits, DEFAULT_COUNTER_BITS);
        close(s.load, 6.0, 0.001, "load");
        check(&s, p, row);
    }
    // The 2-bit figures the docs quote for `.counter_bits(2)`.
    for (p, bits) in [(0.01, 18.67), (0.001, 22.67), (0.0001, 26.67)] {
        let s = DLeftSizing::compute(n, p, 4, 8, 2, None).unwrap();
        close(s.bits_per_key, bits, 0.005, "2-bit bits/key");
    }
}
