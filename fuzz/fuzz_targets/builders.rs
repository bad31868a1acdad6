//! libFuzzer entry point of the `builders` target; the checks live in
//! `bloomforge_fuzz::builders` so the stable replay test (`tests/replay.rs`) runs them too.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bloomforge_fuzz::builders::run_bytes(data));
