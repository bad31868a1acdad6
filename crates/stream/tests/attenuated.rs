//! Attenuated Bloom filter: propagation, routing, a network simulation against BFS,
//! serialization and errors.

use crate::sim;

use bloomforge_stream::{AttenuatedBloomFilter, StreamError};
use sim::{bfs, Net, Rng};
use statrs::distribution::{Binomial, DiscreteCDF};

/// 1000 nodes of degree 4 (a seeded random regular graph), D = 3, 5 documents per node,
/// level filters sized for 5 * 3^2 = 45 keys at 1 %. Each document is queried once, from a
/// node at hop distance t = 1, 2, 3 or 4 from its holder (t cycles with the document;
/// the node is drawn at random among those at that distance). A query is *right* when
/// it reaches the holder in exactly t hops (t <= D), or stops at once without a false
/// "found" (t = D + 1 = 4, beyond what the filters know).
///
/// Without false positives every query is right: a node at distance d matches through
/// a neighbour at distance d - 1 at level d - 1 (a shortest path is a non-backtracking
/// walk) and no neighbour matches below it. A false positive can mislead a node only
/// through its local filter or a level below d: `risk` sums those filters' rates (from
/// their fill) over the nodes the query decided at while still on a shortest path, a
/// union bound on the chance that the query goes wrong. Documents hash independently, so
/// the number of wrong queries is a sum of independent Bernoulli variables with
/// probabilities below each query's risk; by Hoeffding (1956) it is at most the
/// (1 - 1e-6) quantile of Binomial(N, mean risk) except with probability below 1e-6.
#[test]
fn routing_matches_bfs_within_the_false_positive_bound() {
    let depth = 3;
    let net = Net::new(1000, 4, depth, 5, 0.01, 7);
    let mut rng = Rng::new(99);
    let (mut n, mut wrong, mut risk) = (0u64, 0u64, 0.0);
    let mut by_t = [(0u64, 0u64, 0u64); 5]; // (queries, found, hops when found)
    for doc in 0..1000 * net.docs {
        let dist = bfs(&net.adj, net.holder(doc));
        let t = 1 + (doc % (depth as u64 + 1)) as u32;
        let at: Vec<u32> = (0..1000u32).filter(|&u| dist[u as usize] == t).collect();
        if at.is_empty() {
            continue;
        }
        let src = at[rng.below(at.len() as u64) as usize];
        let (found, hops, r) = net.query(src, doc, depth + 2, &dist);
        let right = if t as usize <= depth {
            found && hops == t as usize
        } else {
            !found && hops == 0
        };
        n += 1;
        wrong += u64::from(!right);
        risk += r;
        let e = &mut by_t[t as usize];
        e.0 += 1;
        if found {
            e.1 += 1;
            e.2 += hops as u64;
        }
    }
    let mean = risk / n as f64;
    let bound = Binomial::new(mean.min(1.0), n)
        .unwrap()
        .inverse_cdf(1.0 - 1e-6);
    for (t, &(q, f, h)) in by_t.iter().enumerate().skip(1) {
        eprintln!(
            "distance {t}: {q} queries, {f} found, mean hops {:.3}",
            h as f64 / f.max(1) as f64
        );
    }
    eprintln!("{wrong} of {n} queries wrong; union bound mean risk {mean:.5}, bound {bound}");
    assert!(n > 3900, "{n} queries");
    assert!(
        wrong <= bound,
        "{wrong} wrong of {n}, bound {bound} (mean risk {mean})"
    );
    // Most queries within D hops succeed: the bound is not vacuous.
    assert!(mean < 0.05, "mean risk {mean}");
}

#[test]
fn propagation_on_a_path_and_errors() {
    // 0 - 1 - 2 - 3 - 4, node 4 holds "x"; depth 3.
    let mut nodes: Vec<AttenuatedBloomFilter> = (0..5u64)
        .map(|id| {
            AttenuatedBloomFilter::builder()
                .node_id(id)
                .expected_items(50)
                .build()
                .unwrap()
        })
        .collect();
    for id in 0..5u64 {
        if id > 0 {
            nodes[id as usize].add_neighbour(id - 1).unwrap();
        }
        if id < 4 {
            nodes[id as usize].add_neighbour(id + 1).unwrap();
        }
    }
    nodes[4].insert(&"x");
    for _ in 0..3 {
        let before = nodes.clone();
        for id in 0..5usize {
            for v in before[id].neighbours().collect::<Vec<_>>() {
                nodes[id].merge_from_neighbour(&before[v as usize]).unwrap();
            }
        }
    }
    assert_eq!(nodes[3].route(&"x"), Some((4, 1)));
    assert_eq!(nodes[2].route(&"x"), Some((3, 2)));
    assert_eq!(nodes[1].route(&"x"), Some((2, 3)));
    assert_eq!(nodes[0].route(&"x"), None, "4 hops is beyond D = 3");
    assert_eq!(
        nodes[4].route(&"x"),
        None,
        "no bounce back: 3 -> 4 is not a walk from 4"
    );
    assert!(nodes[1].false_pos_by_level().iter().all(|&p| p < 1e-3));

    // Errors leave the node unchanged.
    let before = nodes[0].clone();
    let stranger = AttenuatedBloomFilter::builder()
        .node_id(9)
        .expected_items(50)
        .build()
        .unwrap();
    assert_eq!(
        nodes[0].merge_from_neighbour(&stranger),
        Err(StreamError::UnknownNeighbour(9))
    );
    let deep = AttenuatedBloomFilter::builder()
        .node_id(1)
        .expected_items(50)
        .depth(4)
        .build()
        .unwrap();
    assert!(matches!(
        nodes[0].merge_from_neighbour(&deep),
        Err(StreamError::Incompatible {
            parameter: "depth",
            ..
        })
    ));
    let other = AttenuatedBloomFilter::builder()
        .node_id(1)
        .expected_items(50)
        .seed(5)
        .build()
        .unwrap();
    assert!(matches!(
        nodes[0].merge_from_neighbour(&other),
        Err(StreamError::Core(
            bloomforge_core::Error::IncompatibleFilters { .. }
        ))
    ));
    assert!(nodes[0].add_neighbour(0).is_err());
    assert_eq!(nodes[0], before);
    assert!(AttenuatedBloomFilter::builder()
        .expected_items(5)
        .depth(0)
        .build()
        .is_err());

    // Serialization round trip; damage refused.
    let bytes = nodes[2].to_bytes();
    let back = AttenuatedBloomFilter::from_bytes(&bytes).unwrap();
    assert_eq!(back, nodes[2]);
    assert_eq!(back.route(&"x"), Some((3, 2)));
    for n in (0..bytes.len()).step_by(3) {
        assert!(AttenuatedBloomFilter::from_bytes(&bytes[..n]).is_err());
    }
    for i in (0..bytes.len()).step_by(11) {
        let mut bad = bytes.clone();
        bad[i] ^= 1;
        assert!(AttenuatedBloomFilter::from_bytes(&bad).is_err(), "byte {i}");
    }
    // new and the builder agree; FromIterator.
    assert_eq!(
        AttenuatedBloomFilter::new(50, 0.01).unwrap(),
        AttenuatedBloomFilter::builder()
            .expected_items(50)
            .false_pos(0.01)
            .build()
            .unwrap()
    );
    let f: AttenuatedBloomFilter = (0..100u64).collect();
    assert!((0..100u64).all(|k| f.contains_local(&k)) && f.depth() == 3);
}

/// `read_from` reads what `to_bytes` wrote, and nothing past it.
#[test]
fn attenuated_read_from_reads_one_node() {
    use bloomforge_stream::AttenuatedBloomFilter;
    let mut node = AttenuatedBloomFilter::new(1_000, 0.01).unwrap();
    node.insert(&"here");
    let mut bytes = node.to_bytes();
    let len = bytes.len();
    bytes.extend_from_slice(b"next");
    let mut reader = bytes.as_slice();
    let back = AttenuatedBloomFilter::read_from(&mut reader).unwrap();
    assert_eq!(back.to_bytes(), bytes[..len]);
    assert_eq!(reader, b"next");
}
