//! Workloads: the same member and non-member keys are fed to every filter.
//!
//! Every generator produces distinct members and non-members disjoint from them, by
//! construction (counter-indexed keys through a bijection, or an index embedded in the
//! string), so a positive answer for a non-member is a false positive and never a
//! duplicate.

use crate::rng::{indexed_key, Xoshiro256};
use crate::BenchError;
use std::collections::HashSet;
use std::hash::Hash;
use std::path::Path;

/// A key type the harness can feed to every filter.
pub trait BenchKey: Hash + Eq + Clone + Send + Sync + std::fmt::Debug + 'static {
    /// Calls `f` with the key's plain encoding (little-endian bytes for integers, UTF-8
    /// for strings): what the Parquet hash (XXH64 seed 0) is computed over.
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R;
    /// The `u64` key given to xorf's `BinaryFuse8`: the integer itself, or std's SipHash
    /// of a string (what xorf's `HashProxy` does).
    fn fuse_key(&self) -> u64;
    /// Heap bytes the key owns (for the `HashSet` memory estimate).
    fn heap_bytes(&self) -> usize;
}

impl BenchKey for u64 {
    #[inline(always)]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(&self.to_le_bytes())
    }
    #[inline(always)]
    fn fuse_key(&self) -> u64 {
        *self
    }
    fn heap_bytes(&self) -> usize {
        0
    }
}

impl BenchKey for String {
    #[inline(always)]
    fn with_bytes<R>(&self, f: impl FnOnce(&[u8]) -> R) -> R {
        f(self.as_bytes())
    }
    #[inline(always)]
    fn fuse_key(&self) -> u64 {
        use std::hash::{BuildHasher, BuildHasherDefault};
        BuildHasherDefault::<std::collections::hash_map::DefaultHasher>::default().hash_one(self)
    }
    fn heap_bytes(&self) -> usize {
        self.capacity()
    }
}

/// Members and disjoint non-members of one key type.
#[derive(Clone, Debug)]
pub struct Workload<K> {
    /// Short name (`random-u64`, `sequential-u64`, `url`, `file`).
    pub name: String,
    /// Keys inserted into every filter (distinct).
    pub members: Vec<K>,
    /// Keys never inserted (distinct, disjoint from `members`): every positive answer is
    /// a false positive.
    pub non_members: Vec<K>,
}

/// A workload of either key type.
#[derive(Clone, Debug)]
pub enum AnyWorkload {
    /// Integer keys.
    U64(Workload<u64>),
    /// String keys.
    Str(Workload<String>),
}

impl AnyWorkload {
    /// The workload's name.
    pub fn name(&self) -> &str {
        match self {
            AnyWorkload::U64(w) => &w.name,
            AnyWorkload::Str(w) => &w.name,
        }
    }

    /// Number of members.
    pub fn len(&self) -> usize {
        match self {
            AnyWorkload::U64(w) => w.members.len(),
            AnyWorkload::Str(w) => w.members.len(),
        }
    }

    /// Whether there are no members.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Number of non-members.
    pub fn num_queries(&self) -> usize {
        match self {
            AnyWorkload::U64(w) => w.non_members.len(),
            AnyWorkload::Str(w) => w.non_members.len(),
        }
    }
}

/// Which generator to use.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WorkloadKind {
    /// Uniform random `u64` keys (SplitMix64 of a counter).
    RandomU64,
    /// `0..n` as members, `n..n + q` as non-members.
    SequentialU64,
    /// URL-like strings with shared prefixes.
    Urls,
    /// One key per line of a file.
    File(std::path::PathBuf),
}

impl WorkloadKind {
    /// Builds the workload with `n` members and `q` non-members (a file supplies its own
    /// members; `n` is then ignored).
    ///
    /// # Errors
    /// [`BenchError::Io`] / [`BenchError::Config`] for an unreadable or empty key file.
    pub fn generate(&self, n: usize, q: usize, seed: u64) -> Result<AnyWorkload, BenchError> {
        Ok(match self {
            WorkloadKind::RandomU64 => AnyWorkload::U64(random_u64(n, q, seed)),
            WorkloadKind::SequentialU64 => AnyWorkload::U64(sequential_u64(n, q)),
            WorkloadKind::Urls => AnyWorkload::Str(urls(n, q, seed)),
            WorkloadKind::File(path) => AnyWorkload::Str(from_file(path, q)?),
        })
    }
}

/// Random `u64` members `key(0..n)` and non-members `key(n..n + q)` of the bijective
/// counter stream [`indexed_key`].
pub fn random_u64(n: usize, q: usize, seed: u64) -> Workload<u64> {
    let members = (0..n as u64).map(|i| indexed_key(seed, i)).collect();
    let non_members = (n as u64..(n + q) as u64)
        .map(|i| indexed_key(seed, i))
        .collect();
    Workload {
        name: "random-u64".into(),
        members,
        non_members,
    }
}

/// Sequential integers: members `0..n`, non-members `n..n + q` (the next ids).
pub fn sequential_u64(n: usize, q: usize) -> Workload<u64> {
    Workload {
        name: "sequential-u64".into(),
        members: (0..n as u64).collect(),
        non_members: (n as u64..(n + q) as u64).collect(),
    }
}

const HOSTS: [&str; 16] = [
    "example", "shop", "news", "cdn", "api", "static", "blog", "mail", "video", "search", "images",
    "docs", "login", "data", "edge", "wiki",
];
const TLDS: [&str; 6] = ["com", "org", "net", "io", "de", "co.uk"];
const SEGMENTS: [&str; 12] = [
    "products", "category", "users", "articles", "assets", "v1", "v2", "search", "items", "2024",
    "img", "posts",
];

/// URL number `i`: a few shared host / path words chosen from the stream seeded by
/// `(seed, i)`, then `i` in hex as the last path segment, so URLs are distinct.
pub fn url(seed: u64, i: u64) -> String {
    let mut r = Xoshiro256::new(indexed_key(seed, i));
    let host = HOSTS[r.below(HOSTS.len() as u64) as usize];
    let tld = TLDS[r.below(TLDS.len() as u64) as usize];
    let a = SEGMENTS[r.below(SEGMENTS.len() as u64) as usize];
    let b = SEGMENTS[r.below(SEGMENTS.len() as u64) as usize];
    format!("https://www.{host}.{tld}/{a}/{b}/{i:x}")
}

/// URL-like strings: members `url(0..n)`, non-members `url(n..n + q)`.
pub fn urls(n: usize, q: usize, seed: u64) -> Workload<String> {
    Workload {
        name: "url".into(),
        members: (0..n as u64).map(|i| url(seed, i)).collect(),
        non_members: (n as u64..(n + q) as u64).map(|i| url(seed, i)).collect(),
    }
}

/// One key per line of `path` (trailing `\r` removed, empty lines and duplicates
/// skipped) as members; `q` non-members made by suffixing member lines with `\u{1f}` and
/// a counter, checked against the member set.
///
/// # Errors
/// [`BenchError::Io`] if the file cannot be read, [`BenchError::Config`] if it holds no
/// key.
pub fn from_file(path: &Path, q: usize) -> Result<Workload<String>, BenchError> {
    let text = std::fs::read_to_string(path).map_err(|e| BenchError::Io {
        path: path.display().to_string(),
        source: e,
    })?;
    let mut seen = HashSet::new();
    let mut members = Vec::new();
    for line in text.lines() {
        let key = line.strip_suffix('\r').unwrap_or(line);
        if !key.is_empty() && seen.insert(key) {
            members.push(key.to_string());
        }
    }
    if members.is_empty() {
        return Err(BenchError::Config(format!(
            "key file {} holds no key (one key per line)",
            path.display()
        )));
    }
    let mut non_members = Vec::with_capacity(q);
    let mut j = 0usize;
    while non_members.len() < q {
        let candidate = format!("{}\u{1f}{j}", members[j % members.len()]);
        if !seen.contains(candidate.as_str()) {
            non_members.push(candidate);
        }
        j += 1;
    }
    Ok(Workload {
        name: format!(
            "file:{}",
            path.file_name()
                .map(|s| s.to_string_lossy().into_owned())
                .unwrap_or_default()
        ),
        members,
        non_members,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn disjoint<K: BenchKey>(w: &Workload<K>) -> bool {
        let m: HashSet<&K> = w.members.iter().collect();
        m.len() == w.members.len()
            && w.non_members.iter().all(|k| !m.contains(k))
            && w.non_members.iter().collect::<HashSet<_>>().len() == w.non_members.len()
    }

    #[test]
    fn generators_give_distinct_disjoint_keys() {
        assert!(disjoint(&random_u64(5000, 5000, 7)));
        assert!(disjoint(&sequential_u64(5000, 5000)));
        let u = urls(3000, 3000, 7);
        assert!(disjoint(&u));
        assert!(u.members[0].starts_with("https://www."));
    }

    #[test]
    fn file_workload_dedups_and_builds_non_members() {
        let dir = std::env::temp_dir().join(format!("bloomforge-keys-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("keys.txt");
        std::fs::write(&path, "a\r\nb\n\na\nc\n").unwrap();
        let w = from_file(&path, 10).unwrap();
        assert_eq!(w.members, vec!["a", "b", "c"]);
        assert_eq!(w.non_members.len(), 10);
        assert!(disjoint(&w));
        std::fs::write(&path, "\n\n").unwrap();
        assert!(from_file(&path, 10).is_err());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
