//! Keys as the other systems funnel them.

/// A key as Guava and Spark see it: a byte string or a 64-bit integer.
///
/// * Strings are their UTF-8 bytes: Guava's `Funnels.stringFunnel(UTF_8)` and Spark's
///   `putString` hash exactly those bytes.
/// * Byte strings are hashed as they are: Guava's `Funnels.byteArrayFunnel()`, Spark's
///   `putBinary`.
/// * Integers are a Java `long`: Guava's `Funnels.longFunnel()` (its eight little-endian
///   bytes), Spark's `putLong` (`Murmur3_x86_32.hashLong`). A `u64` is taken as the `long`
///   with the same bits. A smaller Java integer is funnelled differently by the two
///   systems (Spark widens an `int` to a `long`; Guava's `Funnels.integerFunnel()` hashes
///   four bytes), so there is no impl for `i32`: pass `i64::from(x)` for Spark's `put(int)`
///   or `&x.to_le_bytes()[..]` for Guava's `integerFunnel`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum KeyRef<'a> {
    /// A string's UTF-8 bytes or a byte array.
    Bytes(&'a [u8]),
    /// A Java `long`.
    Long(i64),
}

/// A type the interop filters take as a key (see [`KeyRef`] for how each is hashed).
pub trait Key {
    /// The key as the other system funnels it.
    fn key_ref(&self) -> KeyRef<'_>;
}

impl Key for KeyRef<'_> {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        *self
    }
}

impl Key for str {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Bytes(self.as_bytes())
    }
}

impl Key for String {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Bytes(self.as_bytes())
    }
}

impl Key for [u8] {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Bytes(self)
    }
}

impl Key for Vec<u8> {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Bytes(self)
    }
}

impl<const N: usize> Key for [u8; N] {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Bytes(self)
    }
}

impl Key for i64 {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Long(*self)
    }
}

impl Key for u64 {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        KeyRef::Long(*self as i64)
    }
}

impl<T: Key + ?Sized> Key for &T {
    #[inline]
    fn key_ref(&self) -> KeyRef<'_> {
        (**self).key_ref()
    }
}
