//! libFuzzer entry point of the `decode` target; the checks live in
//! `bloomforge_fuzz::decode` so the stable replay test (`tests/replay.rs`) runs them too.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bloomforge_fuzz::decode::run_bytes(data));
