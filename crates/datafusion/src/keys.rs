//! How Arrow values become keys: the one hashing rule shared by `bloom_agg` and
//! `bloom_contains`, so a filter built by one answers for the other and for the core filter.
//!
//! The rule is documented in `keys.md` (the crate docs' "Keys" section).

use core::hash::BuildHasher;
use datafusion::arrow::array::{Array, ArrayAccessor, AsArray};
use datafusion::arrow::datatypes::{
    DataType, Int16Type, Int32Type, Int64Type, Int8Type, UInt16Type, UInt32Type, UInt64Type,
    UInt8Type,
};

/// Whether `bloom_agg` / `bloom_contains` can hash values of this type as they are.
pub(crate) fn is_key_type(t: &DataType) -> bool {
    matches!(
        t,
        DataType::Utf8
            | DataType::LargeUtf8
            | DataType::Utf8View
            | DataType::Binary
            | DataType::LargeBinary
            | DataType::BinaryView
            | DataType::Int8
            | DataType::Int16
            | DataType::Int32
            | DataType::Int64
            | DataType::UInt8
            | DataType::UInt16
            | DataType::UInt32
            | DataType::UInt64
    )
}

/// The names of the supported key types, for error messages.
pub(crate) const KEY_TYPES: &str = "Utf8, LargeUtf8, Utf8View, Binary, LargeBinary, BinaryView, \
     Int8/16/32/64 or UInt8/16/32/64";

/// What to do with a null row.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Nulls {
    /// Leave it out (`bloom_agg`: nulls are not keys).
    Skip,
    /// Write a placeholder hash 0 so `out[i]` stays row `i` (`bloom_contains` masks the
    /// answer with the null buffer afterwards).
    Placeholder,
}

/// Hashes rows `start..end` of `array` into `out` (appended), as the core filter hashes the
/// key type in the module table.
///
/// # Errors
/// The type name, when `array` is not a key type (the functions' signatures coerce to key
/// types, so this is only reached through direct use of the accumulator).
pub(crate) fn hash_rows<S: BuildHasher>(
    hasher: &S,
    array: &dyn Array,
    start: usize,
    end: usize,
    nulls: Nulls,
    out: &mut Vec<u64>,
) -> Result<(), DataType> {
    // One loop per physical type; `to_key` widens integers to the documented key type.
    fn run<A, K, S>(
        hasher: &S,
        array: A,
        start: usize,
        end: usize,
        nulls: Nulls,
        out: &mut Vec<u64>,
        to_key: impl Fn(A::Item) -> K,
    ) where
        A: ArrayAccessor + Array + Copy,
        K: core::hash::Hash,
        S: BuildHasher,
    {
        if array.null_count() == 0 {
            out.extend((start..end).map(|i| hasher.hash_one(to_key(array.value(i)))));
            return;
        }
        for i in start..end {
            if array.is_valid(i) {
                out.push(hasher.hash_one(to_key(array.value(i))));
            } else if nulls == Nulls::Placeholder {
                out.push(0);
            }
        }
    }
    debug_assert!(start <= end && end <= array.len());
    match array.data_type() {
        DataType::Utf8 => run(
            hasher,
            array.as_string::<i32>(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::LargeUtf8 => run(
            hasher,
            array.as_string::<i64>(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::Utf8View => run(
            hasher,
            array.as_string_view(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::Binary => run(
            hasher,
            array.as_binary::<i32>(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::LargeBinary => run(
            hasher,
            array.as_binary::<i64>(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::BinaryView => run(
            hasher,
            array.as_binary_view(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::Int8 => run(
            hasher,
            array.as_primitive::<Int8Type>(),
            start,
            end,
            nulls,
            out,
            i64::from,
        ),
        DataType::Int16 => run(
            hasher,
            array.as_primitive::<Int16Type>(),
            start,
            end,
            nulls,
            out,
            i64::from,
        ),
        DataType::Int32 => run(
            hasher,
            array.as_primitive::<Int32Type>(),
            start,
            end,
            nulls,
            out,
            i64::from,
        ),
        DataType::Int64 => run(
            hasher,
            array.as_primitive::<Int64Type>(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        DataType::UInt8 => run(
            hasher,
            array.as_primitive::<UInt8Type>(),
            start,
            end,
            nulls,
            out,
            u64::from,
        ),
        DataType::UInt16 => run(
            hasher,
            array.as_primitive::<UInt16Type>(),
            start,
            end,
            nulls,
            out,
            u64::from,
        ),
        DataType::UInt32 => run(
            hasher,
            array.as_primitive::<UInt32Type>(),
            start,
            end,
            nulls,
            out,
            u64::from,
        ),
        DataType::UInt64 => run(
            hasher,
            array.as_primitive::<UInt64Type>(),
            start,
            end,
            nulls,
            out,
            |v| v,
        ),
        other => return Err(other.clone()),
    }
    Ok(())
}
