//! The decoders and views of format kinds 7-18 (bitmap, cuckoo, stream, retrieval) on
//! stable, deterministically: a valid encoding of every kind (unkeyed and keyed) decodes
//! by exactly one reader and re-encodes to itself; every truncation of it, and random byte
//! flips (fixed-seed), are refused with a typed error by every reader; flips with the
//! checksum re-sealed never panic. The committed seeds of the `families` fuzz target
//! (`seeds/families/`, written by `write_family_seeds`) still decode.

use bloomforge_fuzz::families::{check_all, valid_encodings};
use std::path::Path;

/// xorshift64*: a small, fixed-seed generator (reproducible cases, no dependency).
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

fn accepted_by(bytes: &[u8]) -> Vec<&'static str> {
    check_all(bytes)
        .accepted
        .into_iter()
        .map(|(w, _)| w)
        .collect()
}

#[test]
fn valid_encodings_decode_once_and_round_trip() {
    for (name, bytes) in valid_encodings() {
        let verdict = check_all(&bytes);
        let [(reader, again)] = &verdict.accepted[..] else {
            panic!(
                "{name}: accepted by {:?}",
                verdict.accepted.iter().map(|(w, _)| w).collect::<Vec<_>>()
            );
        };
        assert_eq!(again, &bytes, "{name}: {reader} re-encodes differently");
    }
}

#[test]
fn every_truncation_is_refused() {
    for (name, bytes) in valid_encodings() {
        for n in 0..bytes.len() {
            let got = accepted_by(&bytes[..n]);
            assert!(
                got.is_empty(),
                "{name} cut to {n} bytes accepted by {got:?}"
            );
        }
    }
}

/// 400 cases per encoding: 1 to 4 random bytes changed. Unsealed, the checksum refuses
/// them all; re-sealed, each reader refuses them or returns a well-formed filter (checked
/// by `check_all`), and at most one reader accepts.
#[test]
fn random_flips_are_refused_or_well_formed() {
    let mut rng = Rng(0x5EED_F11B);
    for (name, bytes) in valid_encodings() {
        for case in 0..400 {
            let mut bad = bytes.clone();
            for _ in 0..=rng.below(4) {
                let i = rng.below(bad.len());
                bad[i] ^= (rng.below(255) + 1) as u8;
            }
            let got = accepted_by(&bad);
            assert!(
                got.is_empty(),
                "{name} case {case}: flipped bytes accepted by {got:?}"
            );
            bloomforge_core::format::reseal(&mut bad);
            let got = accepted_by(&bad);
            assert!(got.len() <= 1, "{name} case {case}: accepted by {got:?}");
        }
    }
}

/// The committed seeds of the valid encodings still decode (by one reader), and so do the
/// kept seeds of earlier encodings (`old-888a351-*`: the fuse, xor and Bloomier filters
/// before their fingerprint derivation was recorded).
#[test]
fn committed_valid_seeds_decode() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/families");
    let mut n = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        // `old-<commit>-<kind>`: valid seeds of an earlier encoding of the kind (kept when
        // its format gained a variant: they must still decode).
        if !name.starts_with("valid-") && !name.starts_with("old-") {
            continue;
        }
        let data = std::fs::read(&path).unwrap();
        assert_eq!(data[0] & 1, 0, "{name}: not a raw-mode seed");
        assert_eq!(accepted_by(&data[1..]).len(), 1, "{name} no longer decodes");
        n += usize::from(name.starts_with("valid-"));
    }
    assert_eq!(n, valid_encodings().len(), "a kind has no valid seed");
}

/// Writes `seeds/families/`: `valid-<kind>` (mode byte 0, then a valid encoding),
/// `truncated-<kind>` (the same cut in half) and `structured-NN` (an odd mode byte, then
/// fixed-seed random bytes for the structured mutations) when `BLOOMFORGE_WRITE_FIXTURES`
/// is set, after a format change; otherwise checks the committed seeds are what today's
/// code writes:
/// `BLOOMFORGE_WRITE_FIXTURES=1 cargo test --manifest-path fuzz/Cargo.toml --no-default-features --test families`
#[test]
fn write_family_seeds() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("seeds/families");
    std::fs::create_dir_all(&dir).unwrap();
    for (name, bytes) in valid_encodings() {
        let mut valid = vec![0u8];
        valid.extend_from_slice(&bytes);
        fixture(dir.join(format!("valid-{name}")), &valid);
        fixture(
            dir.join(format!("truncated-{name}")),
            &valid[..valid.len() / 2],
        );
    }
    let mut rng = Rng(0x5EED_5EED);
    for i in 0..12 {
        let len = 16 + rng.below(240);
        let mut data: Vec<u8> = (0..len).map(|_| rng.next() as u8).collect();
        data[0] |= 1;
        fixture(dir.join(format!("structured-{i:02}")), data);
    }
}

/// Found by this target: `AttenuatedBloomFilter::from_bytes` multiplied the stored depth
/// by the stored size of one level filter unchecked, so re-sealed bytes with a huge size
/// panicked on overflow instead of returning a typed error (the replay seeds do not reach
/// it, a longer run did). Fixed with checked products; this keeps it fixed.
#[test]
fn attenuated_level_size_overflow_is_a_typed_error() {
    use bloomforge_fuzz::families::{encode, Kind};
    let mut bytes = encode(
        Kind::Attenuated {
            depth: 1,
            neighbours: 0,
        },
        false,
        7,
        &[1, 2, 3],
    );
    // Payload: id (8 bytes), depth (u32), edges (u32), size of one level filter (u64).
    bytes[64 + 8..64 + 12].copy_from_slice(&4u32.to_le_bytes());
    bytes[64 + 16..64 + 24].copy_from_slice(&(1u64 << 62).to_le_bytes());
    bloomforge_core::format::reseal(&mut bytes);
    assert!(bloomforge_stream::AttenuatedBloomFilter::from_bytes(&bytes).is_err());
}

/// Writes `bytes` to `path` when `BLOOMFORGE_WRITE_FIXTURES` is set (regenerating the
/// fixtures after an intended format change); otherwise checks that today's code writes
/// exactly the committed bytes, so an unintended change of the encoding fails here.
fn fixture(path: impl AsRef<std::path::Path>, bytes: impl AsRef<[u8]>) {
    let (path, bytes) = (path.as_ref(), bytes.as_ref());
    if std::env::var_os("BLOOMFORGE_WRITE_FIXTURES").is_some() {
        std::fs::write(path, bytes).unwrap();
    } else {
        let old = std::fs::read(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
        assert!(
            old == bytes,
            "{}: today's code writes other bytes",
            path.display()
        );
    }
}
