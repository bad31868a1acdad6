//! Criterion benchmarks for bloomforge (see `benches/`).
