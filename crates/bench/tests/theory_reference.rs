//! The theory the harness reports reproduces the independent Python reference
//! (`fp_theory.py` -> `reference.csv`, copied into `tests/data/`) to 1e-6 relative.

use bloomforge_bench::math::{self, ProbeModel};

#[test]
fn reproduces_reference_csv() {
    let csv = include_str!("data/reference.csv");
    let mut checked = 0;
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        assert_eq!(f.len(), 7, "bad line {line}");
        let (variant, b, s, w, k) = (
            f[0],
            f[1].parse::<usize>().unwrap(),
            f[2].parse::<u32>().unwrap(),
            f[3].parse::<u32>().unwrap(),
            f[4].parse::<u32>().unwrap(),
        );
        let c: f64 = f[5].parse().unwrap();
        let want: f64 = f[6].parse().unwrap();
        let got = match variant {
            "standard" => math::std_fp_c(c, k),
            "blocked" => math::blocked_fp(c, b, k, ProbeModel::Replace),
            "blocked_distinct" => math::blocked_fp(c, b, k, ProbeModel::Distinct),
            "blocked_putze" => math::blocked_fp(c, b, k, ProbeModel::Putze),
            "split" => math::split_block_fp(c, s, w),
            other => panic!("unknown variant {other}"),
        };
        let rel = ((got - want) / want).abs();
        assert!(rel < 1e-6, "{line}: got {got:e}, rel err {rel:e}");
        checked += 1;
    }
    assert_eq!(checked, 1312);
}
