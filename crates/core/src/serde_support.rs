//! `serde` support (feature `serde`): a filter serializes as the bytes of its `to_bytes`
//! (the versioned format of [`crate::format`], checksum included) and deserializes
//! through `from_bytes`, with every check that implies. Binary formats store the bytes as
//! one byte string; text formats such as JSON as a sequence of numbers (compact formats
//! are the better fit for filters).
//!
//! Only filters whose hasher can be restored from the stored seed deserialize this way
//! (the default hasher); a keyed filter's secret key is never stored, so deserializing
//! one fails with [`Error::HasherMismatch`](crate::Error::HasherMismatch): read it with
//! `from_bytes_with_hasher` instead.

use crate::{BlockedBloomFilter, SplitBlockBloomFilter, StandardBloomFilter};
use core::fmt;
use serde::de::{Deserializer, SeqAccess, Visitor};

/// Reads a byte string written by `serialize_bytes`, or a sequence of `u8` (formats
/// without a byte-string type). For crates that add filter kinds to the format.
///
/// # Errors
/// The deserializer's error for input that is neither.
pub fn deserialize_bytes<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Vec<u8>, D::Error> {
    deserializer.deserialize_byte_buf(BytesVisitor)
}

struct BytesVisitor;

impl<'de> Visitor<'de> for BytesVisitor {
    type Value = Vec<u8>;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the bytes of a serialized bloomforge filter")
    }

    fn visit_bytes<E: serde::de::Error>(self, v: &[u8]) -> Result<Vec<u8>, E> {
        Ok(v.to_vec())
    }

    fn visit_byte_buf<E: serde::de::Error>(self, v: Vec<u8>) -> Result<Vec<u8>, E> {
        Ok(v)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Vec<u8>, A::Error> {
        // The size hint comes from the input: cap the up-front allocation, then grow as
        // elements actually arrive.
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0).min(1 << 16));
        while let Some(b) = seq.next_element::<u8>()? {
            out.push(b);
        }
        Ok(out)
    }
}

/// Implements `Serialize` / `Deserialize` for filter types `$F<S>` that have `to_bytes`
/// and a `decode(&[u8], Option<S>)` (the counting and d-left crates use it too).
#[doc(hidden)]
#[macro_export]
macro_rules! serde_via_bytes {
    ($($F:ident),*) => {$(
        impl<S: $crate::format::PersistentHasher> ::serde::Serialize for $F<S> {
            fn serialize<Z: ::serde::Serializer>(&self, serializer: Z) -> ::core::result::Result<Z::Ok, Z::Error> {
                serializer.serialize_bytes(&self.to_bytes())
            }
        }

        impl<'de, S: $crate::format::PersistentHasher> ::serde::Deserialize<'de> for $F<S> {
            fn deserialize<D: ::serde::Deserializer<'de>>(deserializer: D) -> ::core::result::Result<Self, D::Error> {
                let bytes = $crate::serde_support::deserialize_bytes(deserializer)?;
                $F::decode(&bytes, None).map_err(<D::Error as ::serde::de::Error>::custom)
            }
        }
    )*};
}

serde_via_bytes!(
    BlockedBloomFilter,
    SplitBlockBloomFilter,
    StandardBloomFilter
);
