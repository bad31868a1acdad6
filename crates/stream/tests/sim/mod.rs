//! A small network simulation for the attenuated Bloom filter, shared by the test
//! `tests/attenuated.rs` and the example `attenuated_sim` (which prints the figures of
//! `docs/guide/stream.md`).

#![allow(dead_code)]

use bloomforge_stream::AttenuatedBloomFilter;
use std::collections::VecDeque;

/// SplitMix64: a seeded generator for the graph and the queries.
pub use bloomforge_testkit::rng::SplitMix64 as Rng;

/// A random simple `d`-regular graph on `n` nodes (configuration model: pair shuffled
/// stubs, start again on a self-loop or a double edge).
pub fn regular_graph(n: usize, d: usize, rng: &mut Rng) -> Vec<Vec<u32>> {
    'again: loop {
        let mut stubs: Vec<u32> = (0..n * d).map(|s| (s / d) as u32).collect();
        for i in (1..stubs.len()).rev() {
            let j = rng.below(i as u64 + 1) as usize;
            stubs.swap(i, j);
        }
        let mut adj = vec![Vec::with_capacity(d); n];
        for pair in stubs.chunks_exact(2) {
            let (a, b) = (pair[0], pair[1]);
            if a == b || adj[a as usize].contains(&b) {
                continue 'again;
            }
            adj[a as usize].push(b);
            adj[b as usize].push(a);
        }
        return adj;
    }
}

/// Hop distances from `src` (`u32::MAX`: unreachable).
pub fn bfs(adj: &[Vec<u32>], src: u32) -> Vec<u32> {
    let mut dist = vec![u32::MAX; adj.len()];
    dist[src as usize] = 0;
    let mut queue = VecDeque::from([src]);
    while let Some(u) = queue.pop_front() {
        for &v in &adj[u as usize] {
            if dist[v as usize] == u32::MAX {
                dist[v as usize] = dist[u as usize] + 1;
                queue.push_back(v);
            }
        }
    }
    dist
}

/// The network: one attenuated filter per node, `docs` documents per node (document `j`
/// of node `u` is the key `u * docs + j`).
pub struct Net {
    pub adj: Vec<Vec<u32>>,
    pub nodes: Vec<AttenuatedBloomFilter>,
    pub docs: u64,
    pub depth: usize,
}

impl Net {
    /// Builds the graph and the filters (each level sized for `docs (degree-1)^(D-1)`
    /// keys at `fp`), then runs `depth` rounds in which every node merges from each
    /// neighbour's state of the round before.
    pub fn new(n: usize, degree: usize, depth: usize, docs: u64, fp: f64, seed: u64) -> Net {
        let mut rng = Rng::new(seed);
        let adj = regular_graph(n, degree, &mut rng);
        let items = docs * (degree as u64 - 1).pow(depth as u32 - 1);
        let mut nodes: Vec<AttenuatedBloomFilter> = (0..n)
            .map(|u| {
                let mut f = AttenuatedBloomFilter::builder()
                    .node_id(u as u64)
                    .expected_items(items)
                    .false_pos(fp)
                    .depth(depth)
                    .seed(seed)
                    .build()
                    .unwrap();
                for &v in &adj[u] {
                    f.add_neighbour(u64::from(v)).unwrap();
                }
                f.extend(u as u64 * docs..(u as u64 + 1) * docs);
                f
            })
            .collect();
        for _ in 0..depth {
            let before = nodes.clone();
            for (u, node) in nodes.iter_mut().enumerate() {
                for &v in &adj[u] {
                    node.merge_from_neighbour(&before[v as usize]).unwrap();
                }
            }
        }
        Net {
            adj,
            nodes,
            docs,
            depth,
        }
    }

    /// The node that holds `doc`.
    pub fn holder(&self, doc: u64) -> u32 {
        (doc / self.docs) as u32
    }

    /// Walks a query for `doc` from `src`: at each node, found if its local filter
    /// matches, else on to the neighbour [`AttenuatedBloomFilter::route`] names, for at
    /// most `ttl` hops. Returns whether the node where it stopped holds `doc`, the hops,
    /// and the sum over the nodes it decided at while still on a shortest path of the
    /// chance that a false positive misled it there (see the test).
    pub fn query(&self, src: u32, doc: u64, ttl: usize, dist: &[u32]) -> (bool, usize, f64) {
        let (mut u, mut hops, mut risk) = (src, 0, 0.0);
        let mut on_path = true;
        loop {
            let node = &self.nodes[u as usize];
            let d = dist[u as usize] as usize;
            if on_path {
                risk += self.step_risk(u, d);
            }
            if node.contains_local(&doc) {
                return (self.holder(doc) == u, hops, risk);
            }
            if hops == ttl {
                return (false, hops, risk);
            }
            match node.route(&doc) {
                Some((v, _)) => {
                    on_path = on_path && dist[v as usize] as usize + 1 == d;
                    u = v as u32;
                    hops += 1;
                }
                None => return (false, hops, risk),
            }
        }
    }

    /// Union bound on a false positive misleading node `u` at distance `d` from the
    /// holder: its local filter (if `d > 0`) and every neighbour's levels below `d`
    /// (all levels if `d > D`), each at its rate from its fill.
    pub fn step_risk(&self, u: u32, d: usize) -> f64 {
        let node = &self.nodes[u as usize];
        let mut r = if d > 0 {
            node.local().expected_false_pos()
        } else {
            0.0
        };
        if d == 0 {
            return 0.0;
        }
        for v in node.neighbours() {
            for level in 0..d.min(self.depth) {
                r += node.level(v, level).unwrap().expected_false_pos();
            }
        }
        r
    }
}
