//! The attenuated Bloom filter's network simulation (the figures of
//! `docs/guide/stream.md`): 1000 nodes of degree 4 (seeded random regular graph), D = 3,
//! 5 documents a node; every document queried from a node 1..=4 hops away, success and
//! hops against BFS.
//!
//! `cargo run --release -p bloomforge-stream --example attenuated_sim`

#[path = "../tests/sim/mod.rs"]
mod sim;

use sim::{bfs, Net, Rng};

fn main() {
    let depth = 3;
    for fp in [0.01, 0.001] {
        let net = Net::new(1000, 4, depth, 5, fp, 7);
        let mut rng = Rng::new(99);
        let mut rows = [(0u64, 0u64, 0u64, 0u64, 0.0f64); 5]; // queries, found, right, hops, risk
        for doc in 0..1000 * net.docs {
            let dist = bfs(&net.adj, net.holder(doc));
            let t = 1 + (doc % (depth as u64 + 1)) as usize;
            let at: Vec<u32> = (0..1000u32)
                .filter(|&u| dist[u as usize] as usize == t)
                .collect();
            if at.is_empty() {
                continue;
            }
            let src = at[rng.below(at.len() as u64) as usize];
            let (found, hops, risk) = net.query(src, doc, depth + 2, &dist);
            let right = if t <= depth {
                found && hops == t
            } else {
                !found && hops == 0
            };
            let r = &mut rows[t];
            r.0 += 1;
            r.1 += u64::from(found);
            r.2 += u64::from(right);
            if found {
                r.3 += hops as u64;
            }
            r.4 += risk;
        }
        let bytes: u64 = net.nodes.iter().map(|n| n.memory_bytes()).sum();
        println!(
            "level filters at {fp} (sized for 45 keys), {} bytes of filters per node:",
            bytes / 1000
        );
        println!("| BFS distance | queries | found | mean hops when found | right (found in exactly t hops / none beyond D) | predicted wrong (union bound) |");
        println!("|---|---|---|---|---|---|");
        for (t, &(q, f, right, h, risk)) in rows.iter().enumerate().skip(1) {
            println!(
                "| {t} | {q} | {:.2} % | {:.3} | {:.2} % | <= {:.2} % |",
                100.0 * f as f64 / q as f64,
                h as f64 / f.max(1) as f64,
                100.0 * right as f64 / q as f64,
                100.0 * risk / q as f64
            );
        }
    }
}
