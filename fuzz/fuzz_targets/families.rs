//! libFuzzer entry point of the `families` target (the decoders and views of format kinds
//! 7-17: bitmap, cuckoo, stream and retrieval); the checks live in
//! `bloomforge_fuzz::families` so the stable replay test (`tests/replay.rs`) runs them too.

#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| bloomforge_fuzz::families::run_bytes(data));
