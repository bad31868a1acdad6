//! Little-endian field readers and a `Write` adapter over `encode_to`'s sink.

/// The little-endian `u32` at `b[at..at + 4]` (the caller checked the length).
pub(crate) fn le_u32(b: &[u8], at: usize) -> u32 {
    bloomforge_core::format::u32_at(b, at)
}

/// The little-endian `u64` at `b[at..at + 8]` (the caller checked the length).
pub(crate) fn le_u64(b: &[u8], at: usize) -> u64 {
    bloomforge_core::format::u64_at(b, at)
}

/// The little-endian `f64` at `b[at..at + 8]` (the caller checked the length).
pub(crate) fn le_f64(b: &[u8], at: usize) -> f64 {
    f64::from_bits(le_u64(b, at))
}

/// Hands everything written to `encode_to`'s payload sink, so a nested core filter can
/// stream itself into the payload with its own `write_to`.
pub(crate) struct SinkWriter<'a>(pub(crate) &'a mut dyn FnMut(&[u8]));

impl std::io::Write for SinkWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        (self.0)(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}
