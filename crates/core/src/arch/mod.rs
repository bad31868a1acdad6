//! Probe kernels and their run-time dispatch.
//!
//! Every probe exists once in `scalar` (portable, always compiled, the test oracle and the
//! Miri path) and again in `avx2` / `avx512` (x86-64 only, `#[target_feature]` functions).
//! The CPU is inspected once per process ([`Backend::detect`], cached); each filter stores
//! the chosen [`Backend`] and batch calls dispatch once per batch, so no probe pays for a
//! feature check.
//!
//! Kernels implement the crate-private `Kernel` trait; the generic batch loops in
//! `crate::raw` are instantiated inside `#[target_feature]` wrappers so the kernels inline
//! into them.
//!
//! This module is also the workspace's one CPU detection and dispatch: [`CpuFeatures`]
//! is what the CPU has (detected once), [`Backend::is_available_with`] and
//! [`Backend::detect_among`] let a family whose kernels need more than a backend's own
//! features check and choose, and the `dispatch_kernels!` macro instantiates a family's
//! generic loop with its kernel for each backend (the counting and cuckoo filters use it
//! with their own kernel types).

#[cfg(target_arch = "x86_64")]
pub(crate) mod avx2;
#[cfg(target_arch = "x86_64")]
pub(crate) mod avx512;
mod cpu;
pub(crate) mod portable;
pub(crate) mod scalar;

use crate::block::{Block256, Block512};
use core::sync::atomic::{AtomicU8, Ordering};
pub use cpu::CpuFeatures;

/// An implementation of the probe kernels.
///
/// [`Backend::detect`] picks the fastest one this CPU supports; filters use it by default.
/// [`set_backend`](crate::BlockedBloomFilter::set_backend) overrides it (for benchmarks and
/// tests); every backend gives bit-identical results.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Backend {
    /// Portable scalar code: the reference implementation.
    Scalar,
    /// Portable SIMD through the `wide` crate (SSE2 / NEON, chosen at compile time): the
    /// default where no run-time x86 kernel applies.
    Wide,
    /// x86-64 AVX2 kernels.
    Avx2,
    /// x86-64 AVX-512F kernels (split-block probes use the AVX2 kernel: a 256-bit block is
    /// one AVX2 register).
    Avx512,
}

const UNKNOWN: u8 = u8::MAX;
static DETECTED: AtomicU8 = AtomicU8::new(UNKNOWN);

impl Backend {
    /// The fastest backend this CPU supports, detected on first call and cached.
    #[inline]
    pub fn detect() -> Backend {
        let cached = DETECTED.load(Ordering::Relaxed);
        if cached != UNKNOWN {
            return Self::from_u8(cached);
        }
        let best = Self::available().last().copied().unwrap_or(Backend::Scalar);
        DETECTED.store(best as u8, Ordering::Relaxed);
        best
    }

    fn from_u8(v: u8) -> Backend {
        match v {
            1 => Backend::Wide,
            2 => Backend::Avx2,
            3 => Backend::Avx512,
            _ => Backend::Scalar,
        }
    }

    /// The CPU features the backend's kernels need: none for `Scalar` and `Wide`, AVX2 for
    /// `Avx2`, AVX2 and AVX-512F for `Avx512`.
    pub const fn required_features(self) -> CpuFeatures {
        match self {
            Backend::Scalar | Backend::Wide => CpuFeatures::NONE,
            Backend::Avx2 => CpuFeatures::AVX2,
            Backend::Avx512 => CpuFeatures::AVX2.union(CpuFeatures::AVX512F),
        }
    }

    /// Whether this CPU can run the backend.
    pub fn is_available(self) -> bool {
        self.required_features().is_detected()
    }

    /// Whether this CPU runs a kernel of this backend that needs `extra` features besides
    /// the backend's own ([`required_features`](Self::required_features)).
    ///
    /// ```
    /// use bloomforge_core::{arch::CpuFeatures, Backend};
    /// assert!(Backend::Scalar.is_available_with(CpuFeatures::NONE));
    /// let bw = Backend::Avx512.is_available_with(CpuFeatures::AVX512BW);
    /// assert!(!bw || Backend::Avx512.is_available());
    /// ```
    pub fn is_available_with(self, extra: CpuFeatures) -> bool {
        (self.required_features() | extra).is_detected()
    }

    /// Whether this CPU runs the backend's kernels on 8- and 16-bit lanes: as
    /// [`is_available`](Self::is_available), and for `Avx512` AVX-512BW as well. The
    /// counting filter's and the compact approximator's AVX-512 kernels work on bytes and
    /// words, which AVX-512F alone lacks.
    ///
    /// ```
    /// use bloomforge_core::Backend;
    /// assert!(Backend::Scalar.is_available_with_bw());
    /// assert!(!Backend::Avx512.is_available_with_bw() || Backend::Avx512.is_available());
    /// ```
    pub fn is_available_with_bw(self) -> bool {
        self.is_available_with(match self {
            Backend::Avx512 => CpuFeatures::AVX512BW,
            _ => CpuFeatures::NONE,
        })
    }

    /// The fastest of `candidates` (listed slowest first) whose kernels run on this CPU,
    /// each needing `extra(backend)` besides the backend's own features; `Scalar` if none
    /// does. This is how a family whose kernels exist for only some backends, or need more
    /// than a backend's base features, picks its default:
    ///
    /// ```
    /// use bloomforge_core::{arch::CpuFeatures, Backend};
    /// // Kernels for AVX2, and for AVX-512 where the CPU also has AVX-512BW.
    /// let bw = |b| if b == Backend::Avx512 { CpuFeatures::AVX512BW } else { CpuFeatures::NONE };
    /// let best = Backend::detect_among(&[Backend::Avx2, Backend::Avx512], bw);
    /// assert!(best == Backend::Scalar || best.is_available_with(bw(best)));
    /// ```
    pub fn detect_among(candidates: &[Backend], extra: impl Fn(Backend) -> CpuFeatures) -> Backend {
        candidates
            .iter()
            .rev()
            .copied()
            .find(|&b| b.is_available_with(extra(b)))
            .unwrap_or(Backend::Scalar)
    }

    /// Every backend this CPU supports, slowest (scalar) first.
    pub fn available() -> Vec<Backend> {
        [
            Backend::Scalar,
            Backend::Wide,
            Backend::Avx2,
            Backend::Avx512,
        ]
        .into_iter()
        .filter(|b| b.is_available())
        .collect()
    }

    /// Short lowercase name (`"scalar"`, `"wide"`, `"avx2"`, `"avx512"`).
    pub fn name(self) -> &'static str {
        match self {
            Backend::Scalar => "scalar",
            Backend::Wide => "wide",
            Backend::Avx2 => "avx2",
            Backend::Avx512 => "avx512",
        }
    }
}

/// Probe kernels for the two block layouts.
///
/// # Safety
/// Implementations may use CPU features beyond the compilation target. Calling any method
/// requires that the CPU supports the implementation's backend
/// (`Backend::is_available()` for the `Backend` the implementation is named after), and the
/// caller must be compiled with (or inlined into a function with) those target features
/// enabled for the intrinsics to inline. An implementation may rely on nothing more than
/// what each method's `# Safety` section states; the block arguments are references, so
/// they are valid, aligned (64 bytes for [`Block512`], 32 for [`Block256`]) and not
/// written by anything else for the duration of the call.
pub(crate) unsafe trait Kernel {
    /// Whether out-of-cache blocked batch inserts take the grouped pipeline with this
    /// kernel (`raw::insert_batch`): it pays where building the 512-bit mask is long (a
    /// scalar position and two shifts per probe), not where AVX-512 builds it in a few
    /// vector ops.
    const GROUPED_BLOCKED_INSERT: bool;

    /// Whether every one of the `k` probe bits of `h32` is set in `block`.
    ///
    /// # Safety
    /// - The CPU must support the backend this kernel implements: nothing beyond the
    ///   compilation target for `Scalar` and `Portable`, AVX2 for `Avx2`, AVX2 and
    ///   AVX-512F for `Avx512`; callers check with `Backend::is_available()` (or have the
    ///   features enabled at compile time).
    /// - `k <= BLOCKED_MAX_HASHES` (64): the SIMD kernels load the probe multipliers eight
    ///   at a time from the 64-entry `BLOCKED_POWERS` tables and would read past their end
    ///   for a larger `k` (the scalar kernel panics instead). `k = 0` is allowed.
    unsafe fn blocked_contains(block: &Block512, h32: u32, k: u32) -> bool;

    /// The 512-bit mask of the `k` probe bits of `h32`.
    ///
    /// # Safety
    /// - The CPU must support the backend this kernel implements: nothing beyond the
    ///   compilation target for `Scalar` and `Portable`, AVX2 for `Avx2`, AVX2 and
    ///   AVX-512F for `Avx512`; callers check with `Backend::is_available()` (or have the
    ///   features enabled at compile time).
    /// - `k <= BLOCKED_MAX_HASHES` (64): the SIMD kernels load the probe multipliers eight
    ///   at a time from the 64-entry `BLOCKED_POWERS` tables and would read past their end
    ///   for a larger `k` (the scalar kernel panics instead). `k = 0` is allowed.
    unsafe fn blocked_mask(h32: u32, k: u32) -> Block512;

    /// Sets the probe bits of `h32`; returns whether they were all set before.
    ///
    /// # Safety
    /// - The CPU must support the backend this kernel implements: nothing beyond the
    ///   compilation target for `Scalar` and `Portable`, AVX2 for `Avx2`, AVX2 and
    ///   AVX-512F for `Avx512`; callers check with `Backend::is_available()` (or have the
    ///   features enabled at compile time).
    /// - `k <= BLOCKED_MAX_HASHES` (64): the SIMD kernels load the probe multipliers eight
    ///   at a time from the 64-entry `BLOCKED_POWERS` tables and would read past their end
    ///   for a larger `k` (the scalar kernel panics instead). `k = 0` is allowed.
    unsafe fn blocked_insert(block: &mut Block512, h32: u32, k: u32) -> bool;

    /// The split-block mask of `h32`: one bit per 32-bit word (Parquet salts).
    ///
    /// # Safety
    /// The CPU must support the backend this kernel implements: nothing beyond the
    /// compilation target for `Scalar` and `Portable`, AVX2 for `Avx2`, AVX2 and AVX-512F
    /// for `Avx512`; callers check with `Backend::is_available()` (or have the features
    /// enabled at compile time). There is no other precondition.
    unsafe fn split_mask(h32: u32) -> Block256;

    /// Whether all eight mask bits of `h32` are set in `block`.
    ///
    /// # Safety
    /// The CPU must support the backend this kernel implements: nothing beyond the
    /// compilation target for `Scalar` and `Portable`, AVX2 for `Avx2`, AVX2 and AVX-512F
    /// for `Avx512`; callers check with `Backend::is_available()` (or have the features
    /// enabled at compile time). There is no other precondition.
    unsafe fn split_contains(block: &Block256, h32: u32) -> bool;

    /// Sets the eight mask bits; returns whether they were all set before.
    ///
    /// # Safety
    /// The CPU must support the backend this kernel implements: nothing beyond the
    /// compilation target for `Scalar` and `Portable`, AVX2 for `Avx2`, AVX2 and AVX-512F
    /// for `Avx512`; callers check with `Backend::is_available()` (or have the features
    /// enabled at compile time). There is no other precondition.
    unsafe fn split_insert(block: &mut Block256, h32: u32) -> bool;
}

/// Defines a safe function that runs a generic kernel loop with the kernel of a
/// [`Backend`], inside a function compiled with that backend's target features so the
/// kernel inlines into the loop: the one dispatch mechanism of the workspace (core's
/// blocked and split-block filters, the counting filter, the cuckoo filter).
///
/// The `kernels` table names the kernel type of each backend and, for the two x86-64
/// ones, every target feature it is compiled with (as string literals). `$generic` is an
/// `#[inline(always)] unsafe fn` taking the kernel as its first generic parameter; the
/// generated `$name` takes a [`Backend`] before `$generic`'s arguments:
///
/// ```text
/// dispatch_kernels! {
///     kernels { avx512: Avx512 ["avx2", "avx512f", "avx512bw"], avx2: Avx2 ["avx2"],
///               wide: Portable, scalar: Portable }
///     pub(crate) fn d_insert_one<>(lines: &mut [Line], hash: u64, k: u32) -> bool => insert_one
/// }
/// ```
///
/// The generated function checks only the CPU requirement, through the `Backend`: a
/// crate must let a filter hold a backend only after checking that this CPU has every
/// feature its table lists for it ([`Backend::is_available_with`] with the kernels' extra
/// features). Every other precondition of `$generic` is left to the generated function's
/// callers, which pass a filter's own validated fields. Where the crate is compiled with a
/// backend's features enabled (`-C target-cpu=native`), that backend's kernel is called
/// directly, without the wrapper.
#[macro_export]
#[doc(hidden)]
macro_rules! dispatch_kernels {
    (
        kernels {
            avx512: $k512:ty [$($f512:literal),+],
            avx2: $k2:ty [$($f2:literal),+],
            wide: $kw:ty,
            scalar: $ks:ty $(,)?
        }
        $(#[$meta:meta])*
        $vis:vis fn $name:ident <$($g:ident : $bound:path),*> ( $($arg:ident : $ty:ty),* ) -> $ret:ty
        => $generic:ident
    ) => {
        $(#[$meta])*
        #[allow(clippy::too_many_arguments)]
        $vis fn $name<$($g: $bound),*>(backend: $crate::arch::Backend, $($arg: $ty),*) -> $ret {
            #[cfg(all(target_arch = "x86_64", $(target_feature = $f512),+))]
            if backend == $crate::arch::Backend::Avx512 {
                // SAFETY: the features are enabled at compile time for the whole crate; the
                // other preconditions are this function's callers' (see `dispatch_kernels!`).
                return unsafe { $generic::<$k512, $($g),*>($($arg),*) };
            }
            #[cfg(all(target_arch = "x86_64", $(target_feature = $f2),+))]
            if backend == $crate::arch::Backend::Avx2 {
                // SAFETY: the features are enabled at compile time for the whole crate; the
                // other preconditions are this function's callers' (see `dispatch_kernels!`).
                return unsafe { $generic::<$k2, $($g),*>($($arg),*) };
            }
            match backend {
                #[cfg(target_arch = "x86_64")]
                $crate::arch::Backend::Avx512 => {
                    /// The generic function with the AVX-512 kernel, compiled with its features.
                    ///
                    /// # Safety
                    /// The CPU must support every feature enabled here (callers check
                    /// through the filter's `Backend`), and the arguments must meet the
                    /// generic function's other preconditions.
                    $(#[target_feature(enable = $f512)])+
                    unsafe fn wrapper<$($g: $bound),*>($($arg: $ty),*) -> $ret {
                        // SAFETY: this function runs only with the kernel's features
                        // enabled; the other preconditions are this function's own.
                        unsafe { $generic::<$k512, $($g),*>($($arg),*) }
                    }
                    // SAFETY: a filter holds `Backend::Avx512` only after its crate checked
                    // every feature of the kernel on this CPU; the other preconditions are
                    // this function's callers' (see `dispatch_kernels!`).
                    unsafe { wrapper::<$($g),*>($($arg),*) }
                }
                #[cfg(target_arch = "x86_64")]
                $crate::arch::Backend::Avx2 => {
                    /// The generic function with the AVX2 kernel, compiled with its features.
                    ///
                    /// # Safety
                    /// The CPU must support every feature enabled here (callers check
                    /// through the filter's `Backend`), and the arguments must meet the
                    /// generic function's other preconditions.
                    $(#[target_feature(enable = $f2)])+
                    unsafe fn wrapper<$($g: $bound),*>($($arg: $ty),*) -> $ret {
                        // SAFETY: this function runs only with the kernel's features
                        // enabled; the other preconditions are this function's own.
                        unsafe { $generic::<$k2, $($g),*>($($arg),*) }
                    }
                    // SAFETY: a filter holds `Backend::Avx2` only after its crate checked
                    // every feature of the kernel on this CPU; the other preconditions are
                    // this function's callers' (see `dispatch_kernels!`).
                    unsafe { wrapper::<$($g),*>($($arg),*) }
                }
                // SAFETY: the portable kernel needs no CPU feature beyond the target's; the
                // other preconditions are this function's callers' (see `dispatch_kernels!`).
                $crate::arch::Backend::Wide => unsafe { $generic::<$kw, $($g),*>($($arg),*) },
                // SAFETY: the scalar kernel needs no CPU feature; the other preconditions
                // are this function's callers' (see `dispatch_kernels!`).
                _ => unsafe { $generic::<$ks, $($g),*>($($arg),*) },
            }
        }
    };
}

/// [`dispatch_kernels!`](crate::dispatch_kernels) with core's probe kernels (`Kernel`):
/// the preconditions left to callers are, for the block probes, `k` within the layout's
/// `MIN_HASHES..=MAX_HASHES`, and for `raw::contains_one` a non-empty block array of at
/// most `L::MAX_BLOCKS` blocks.
macro_rules! dispatch_fn {
    ($($item:tt)*) => {
        $crate::dispatch_kernels! {
            kernels {
                avx512: $crate::arch::avx512::Avx512 ["avx2", "avx512f"],
                avx2: $crate::arch::avx2::Avx2 ["avx2"],
                wide: $crate::arch::portable::Portable,
                scalar: $crate::arch::scalar::Scalar,
            }
            $($item)*
        }
    };
}
pub(crate) use dispatch_fn;

/// Checks that `backend` runs on this CPU.
pub(crate) fn check_backend(backend: Backend) -> crate::Result<()> {
    if backend.is_available() {
        Ok(())
    } else {
        Err(crate::Error::BackendUnavailable(backend.name()))
    }
}
