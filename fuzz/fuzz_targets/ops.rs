//! libFuzzer entry point of the `ops` target; the checks live in
//! `bloomforge_fuzz::ops` so the stable replay test (`tests/replay.rs`) runs them too.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bloomforge_fuzz::ops::run_bytes(data));
