//! Statistics for false-positive tests (placeholder).
