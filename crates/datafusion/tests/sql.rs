//! `bloom_agg` / `bloom_contains` through SQL: every key type, nulls, empty input, bad
//! parameters, corrupt bytes, agreement with the core filter, and multi-partition builds.

use bloomforge_core::{BlockedBloomFilter, SplitBlockBloomFilter};
use bloomforge_counting::CountingBloomFilter;
use bloomforge_datafusion::{
    register, BloomAccumulator, BloomContainsFilter, BloomUdfError, CountingBloomAccumulator,
};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, BinaryViewArray, Int16Array, Int32Array, Int64Array,
    Int8Array, LargeBinaryArray, LargeStringArray, RecordBatch, StringArray, StringViewArray,
    UInt16Array, UInt32Array, UInt64Array, UInt8Array,
};
use datafusion::arrow::datatypes::{DataType, Field, Schema};
use datafusion::common::ScalarValue;
use datafusion::datasource::MemTable;
use datafusion::error::DataFusionError;
use datafusion::logical_expr::Accumulator;
use datafusion::prelude::{CsvReadOptions, SessionConfig, SessionContext};
use std::sync::Arc;

const N: u64 = 1000;
const FP: f64 = 0.01;

fn context() -> SessionContext {
    let ctx = SessionContext::new();
    register(&ctx);
    ctx
}

/// Registers `name(k)` as a one-partition table holding `column`.
fn table(ctx: &SessionContext, name: &str, column: ArrayRef) {
    let schema = Arc::new(Schema::new(vec![Field::new(
        "k",
        column.data_type().clone(),
        true,
    )]));
    let batch = RecordBatch::try_new(schema.clone(), vec![column]).unwrap();
    let mem = MemTable::try_new(schema, vec![vec![batch]]).unwrap();
    ctx.register_table(name, Arc::new(mem)).unwrap();
}

async fn binary_value(ctx: &SessionContext, sql: &str) -> Option<Vec<u8>> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    let col = batches[0].column(0).as_binary::<i32>();
    assert_eq!(col.len(), 1, "{sql}: one row");
    col.is_valid(0).then(|| col.value(0).to_vec())
}

async fn booleans(ctx: &SessionContext, sql: &str) -> Vec<Option<bool>> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect()
}

async fn error_of(ctx: &SessionContext, sql: &str) -> DataFusionError {
    match ctx.sql(sql).await {
        Err(e) => e,
        Ok(df) => df.collect().await.expect_err(sql),
    }
}

fn core_filter() -> SplitBlockBloomFilter {
    SplitBlockBloomFilter::new(N, FP).unwrap()
}

/// Each key type, with a null: the aggregate equals the core filter of the non-null keys
/// (hashed as the crate docs' table says), and `bloom_contains` finds every key.
#[tokio::test]
async fn every_key_type_matches_the_core_filter() {
    let words = [
        "alpha",
        "beta",
        "gamma",
        "",
        "a longer key than twelve bytes",
    ];
    let strs: Vec<Option<&str>> = words.iter().copied().map(Some).chain([None]).collect();
    let bytes: Vec<Option<&[u8]>> = strs.iter().map(|s| s.map(str::as_bytes)).collect();
    let ints: Vec<Option<i64>> = vec![Some(0), Some(-1), Some(42), None, Some(-128), Some(127)];
    let uints: Vec<Option<u64>> = vec![Some(0), Some(1), Some(42), None, Some(255)];

    let mut by_str = core_filter();
    by_str.insert_batch(&words);
    let mut by_bytes = core_filter();
    for w in words {
        by_bytes.insert(w.as_bytes());
    }
    let mut by_i64 = core_filter();
    ints.iter().flatten().for_each(|v| {
        by_i64.insert(v);
    });
    let mut by_u64 = core_filter();
    uints.iter().flatten().for_each(|v| {
        by_u64.insert(v);
    });

    let cases: Vec<(ArrayRef, &SplitBlockBloomFilter)> = vec![
        (Arc::new(StringArray::from(strs.clone())), &by_str),
        (Arc::new(LargeStringArray::from(strs.clone())), &by_str),
        (Arc::new(StringViewArray::from(strs.clone())), &by_str),
        (Arc::new(BinaryArray::from(bytes.clone())), &by_bytes),
        (Arc::new(LargeBinaryArray::from(bytes.clone())), &by_bytes),
        (Arc::new(BinaryViewArray::from(bytes.clone())), &by_bytes),
        (
            Arc::new(Int8Array::from_iter(
                ints.iter().map(|v| v.map(|v| v as i8)),
            )),
            &by_i64,
        ),
        (
            Arc::new(Int16Array::from_iter(
                ints.iter().map(|v| v.map(|v| v as i16)),
            )),
            &by_i64,
        ),
        (
            Arc::new(Int32Array::from_iter(
                ints.iter().map(|v| v.map(|v| v as i32)),
            )),
            &by_i64,
        ),
        (Arc::new(Int64Array::from(ints.clone())), &by_i64),
        (
            Arc::new(UInt8Array::from_iter(
                uints.iter().map(|v| v.map(|v| v as u8)),
            )),
            &by_u64,
        ),
        (
            Arc::new(UInt16Array::from_iter(
                uints.iter().map(|v| v.map(|v| v as u16)),
            )),
            &by_u64,
        ),
        (
            Arc::new(UInt32Array::from_iter(
                uints.iter().map(|v| v.map(|v| v as u32)),
            )),
            &by_u64,
        ),
        (Arc::new(UInt64Array::from(uints.clone())), &by_u64),
    ];
    for (column, expected) in cases {
        let data_type = column.data_type().clone();
        let nulls = column.null_count();
        assert_eq!(nulls, 1, "{data_type}: the case has one null");
        let ctx = context();
        table(&ctx, "t", column.clone());
        let got = binary_value(&ctx, "SELECT bloom_agg(k, 1000, 0.01) FROM t")
            .await
            .unwrap();
        assert_eq!(
            got,
            expected.to_bytes(),
            "{data_type}: bits differ from core"
        );

        let answers = booleans(
            &ctx,
            "SELECT bloom_contains((SELECT bloom_agg(k, 1000, 0.01) FROM t), k) FROM t",
        )
        .await;
        assert_eq!(answers.len(), column.len(), "{data_type}");
        for (i, a) in answers.iter().enumerate() {
            let expect = column.is_valid(i).then_some(true);
            assert_eq!(*a, expect, "{data_type}: row {i}");
        }
    }
}

/// Integers are one key type: an Int32 column's filter answers Int64 and UInt64 queries
/// of the same (non-negative) values.
#[tokio::test]
async fn integers_widen_to_one_key() {
    let ctx = context();
    table(&ctx, "t", Arc::new(Int32Array::from(vec![7, 9, 11])));
    let filter = binary_value(&ctx, "SELECT bloom_agg(k, 1000, 0.01) FROM t").await;
    for key in [
        "CAST(7 AS BIGINT)",
        "CAST(9 AS BIGINT UNSIGNED)",
        "CAST(11 AS TINYINT)",
        "CAST(11 AS INT UNSIGNED)",
    ] {
        let batches = ctx
            .sql(&format!("SELECT bloom_contains($1, {key})"))
            .await
            .unwrap()
            .with_param_values(vec![ScalarValue::Binary(filter.clone())])
            .unwrap()
            .collect()
            .await
            .unwrap();
        assert!(batches[0].column(0).as_boolean().value(0), "{key}");
    }
}

/// Against the core filter: a filter built in Rust and passed as a parameter answers each
/// key exactly as `SplitBlockBloomFilter::contains` does (false positives included).
#[tokio::test]
async fn contains_agrees_with_core_on_every_key() {
    let mut filter = SplitBlockBloomFilter::builder()
        .expected_items(500)
        .false_pos(0.2)
        .seed(7)
        .build()
        .unwrap();
    let inserted: Vec<String> = (0..500)
        .map(|i| format!("https://site{i}.example/"))
        .collect();
    filter.insert_batch(&inserted);
    let queries: Vec<String> = (0..5000)
        .map(|i| format!("https://site{i}.example/"))
        .collect();
    let ctx = context();
    table(&ctx, "q", Arc::new(StringArray::from(queries.clone())));
    let df = ctx
        .sql("SELECT bloom_contains($1, k) FROM q")
        .await
        .unwrap()
        .with_param_values(vec![ScalarValue::Binary(Some(filter.to_bytes()))])
        .unwrap();
    let batches = df.collect().await.unwrap();
    let answers: Vec<bool> = batches
        .iter()
        .flat_map(|b| {
            b.column(0)
                .as_boolean()
                .iter()
                .map(Option::unwrap)
                .collect::<Vec<_>>()
        })
        .collect();
    let expected: Vec<bool> = queries
        .iter()
        .map(|q| filter.contains(q.as_str()))
        .collect();
    assert_eq!(answers, expected);
    // The FP rate 0.2 makes false positives common: the test compares them too.
    assert!(
        expected[500..].iter().any(|&b| b),
        "some false positive among 4500"
    );
    assert!(
        expected[500..].iter().any(|&b| !b),
        "some true negative among 4500"
    );
}

/// NULL semantics: a NULL key or a NULL filter gives NULL; nulls are not inserted.
#[tokio::test]
async fn nulls() {
    let ctx = context();
    table(
        &ctx,
        "t",
        Arc::new(StringArray::from(vec![Some("x"), None])),
    );
    // Only the non-null key went in.
    let bytes = binary_value(&ctx, "SELECT bloom_agg(k, 1000, 0.01) FROM t")
        .await
        .unwrap();
    let mut expected = core_filter();
    expected.insert("x");
    assert_eq!(bytes, expected.to_bytes());
    let answers = booleans(
        &ctx,
        "SELECT bloom_contains((SELECT bloom_agg(k, 1000, 0.01) FROM t), k) FROM t",
    )
    .await;
    assert_eq!(answers, vec![Some(true), None]);
    let answers = booleans(&ctx, "SELECT bloom_contains(NULL, k) FROM t").await;
    assert_eq!(answers, vec![None, None]);
    let answers = booleans(&ctx, "SELECT bloom_contains(CAST(NULL AS BYTEA), 'x')").await;
    assert_eq!(answers, vec![None]);
    // In WHERE, NULL does not match.
    let answers = booleans(
        &ctx,
        "SELECT k IS NULL FROM t WHERE bloom_contains((SELECT bloom_agg(k, 1000, 0.01) FROM t), k)",
    )
    .await;
    assert_eq!(answers, vec![Some(false)]);
}

/// Zero rows, or only nulls: an empty filter (not NULL), which contains nothing.
#[tokio::test]
async fn empty_input_gives_an_empty_filter() {
    let ctx = context();
    table(
        &ctx,
        "t",
        Arc::new(StringArray::from(vec![Some("x"), Some("y")])),
    );
    table(
        &ctx,
        "n",
        Arc::new(StringArray::from(vec![None::<&str>, None])),
    );
    let empty = core_filter().to_bytes();
    for sql in [
        "SELECT bloom_agg(k, 1000, 0.01) FROM t WHERE k = 'absent'",
        "SELECT bloom_agg(k, 1000, 0.01) FROM n",
    ] {
        assert_eq!(binary_value(&ctx, sql).await.unwrap(), empty, "{sql}");
    }
    let answers = booleans(
        &ctx,
        "SELECT bloom_contains((SELECT bloom_agg(k, 1000, 0.01) FROM t WHERE k = 'absent'), k) FROM t",
    )
    .await;
    assert_eq!(answers, vec![Some(false), Some(false)]);
}

/// GROUP BY: one filter per group, each the core filter of that group's keys.
#[tokio::test]
async fn one_filter_per_group() {
    let ctx = context();
    ctx.sql("CREATE TABLE g(grp INT, k TEXT) AS VALUES (1, 'a'), (2, 'b'), (1, 'c'), (2, NULL)")
        .await
        .unwrap();
    let batches = ctx
        .sql("SELECT grp, bloom_agg(k, 1000, 0.01) FROM g GROUP BY grp ORDER BY grp")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let filters: Vec<Vec<u8>> = batches
        .iter()
        .flat_map(|b| {
            b.column(1)
                .as_binary::<i32>()
                .iter()
                .map(|v| v.unwrap().to_vec())
                .collect::<Vec<_>>()
        })
        .collect();
    let mut one = core_filter();
    one.insert_batch(&["a", "c"]);
    let mut two = core_filter();
    two.insert("b");
    assert_eq!(filters, vec![one.to_bytes(), two.to_bytes()]);
}

/// A filter column (the array path): one filter per row, here from a join.
#[tokio::test]
async fn filter_column_per_row() {
    let ctx = context();
    ctx.sql("CREATE TABLE a(grp INT, k TEXT) AS VALUES (1, 'a'), (2, 'b')")
        .await
        .unwrap();
    ctx.sql("CREATE TABLE q(grp INT, k TEXT) AS VALUES (1, 'a'), (1, 'b'), (2, 'b'), (2, NULL), (3, 'a')")
        .await
        .unwrap();
    // grp 3 has no filter: the LEFT JOIN gives a NULL filter, hence NULL.
    let answers = booleans(
        &ctx,
        "WITH f AS (SELECT grp, bloom_agg(k, 1000, 0.01) AS bf FROM a GROUP BY grp) \
         SELECT bloom_contains(f.bf, q.k) FROM q LEFT JOIN f ON q.grp = f.grp \
         ORDER BY q.grp, q.k NULLS LAST",
    )
    .await;
    // 'b' in grp 1's filter {a} is a false positive with probability ~1e-2 at this size;
    // compare with the core filter instead of assuming.
    let mut one = core_filter();
    one.insert("a");
    assert_eq!(
        answers,
        vec![Some(true), Some(one.contains("b")), Some(true), None, None]
    );
}

/// Bad parameters are planning errors naming the parameter; nothing panics.
#[tokio::test]
async fn bad_parameters_are_plan_errors() {
    let ctx = context();
    ctx.sql("CREATE TABLE t(k TEXT, n BIGINT, b BOOLEAN) AS VALUES ('x', 10, true)")
        .await
        .unwrap();
    for (sql, needle) in [
        ("SELECT bloom_agg(k, n, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 0, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, -5, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 1000, 0.0) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 1000, 1.5) FROM t", "false_pos"),
        (
            "SELECT bloom_agg(k, 1000, CAST(n AS DOUBLE) / 1000) FROM t",
            "false_pos",
        ),
        (
            "SELECT bloom_agg(b, 1000, 0.01) FROM t",
            "unsupported key type",
        ),
        ("SELECT bloom_agg(k, 'many', 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 1000) FROM t", "3 or 4 arguments"),
        (
            "SELECT bloom_contains(k, k) FROM t",
            "filter_bytes must be Binary",
        ),
        (
            "SELECT bloom_contains(X'00', b) FROM t",
            "unsupported key type",
        ),
    ] {
        let e = error_of(&ctx, sql).await;
        let msg = e.to_string();
        assert!(msg.contains(needle), "{sql}: {msg}");
        assert!(
            matches!(e.find_root(), DataFusionError::Plan(_)),
            "{sql}: not a plan error: {e:?}"
        );
    }
    // A constant expression is accepted (folded or evaluated once).
    let bytes = binary_value(&ctx, "SELECT bloom_agg(k, 500 * 2, 0.02 / 2) FROM t")
        .await
        .unwrap();
    let mut expected = core_filter();
    expected.insert("x");
    assert_eq!(bytes, expected.to_bytes());
}

/// Bytes that are not a valid split-block filter are an execution error wrapping
/// `BloomUdfError::InvalidFilter`: garbage, truncated, a flipped payload bit (checksum),
/// another filter kind. Garbage whose first bytes read as a Guava header (strategy 1, two
/// hashes) is refused as a Guava filter instead: `BloomUdfError::InvalidForeignFilter`.
#[tokio::test]
async fn corrupt_filter_bytes_are_errors() {
    let ctx = context();
    table(&ctx, "t", Arc::new(StringArray::from(vec!["x", "y"])));
    let mut good = core_filter();
    good.insert("x");
    let good = good.to_bytes();
    let mut flipped = good.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    let mut blocked = BlockedBloomFilter::new(N, FP).unwrap();
    blocked.insert("x");
    let cases: Vec<(&str, Vec<u8>)> = vec![
        ("garbage", vec![0xff, 2, 3, 4]),
        ("garbage like a Guava header", vec![1, 2, 3, 4]),
        ("empty", vec![]),
        ("truncated", good[..good.len() - 32].to_vec()),
        ("header only", good[..64].to_vec()),
        ("flipped payload bit", flipped),
        ("blocked filter", blocked.to_bytes()),
    ];
    for (what, bytes) in cases {
        for sql in [
            "SELECT bloom_contains($1, k) FROM t",
            "SELECT bloom_contains($1, 'x')",
        ] {
            let result = ctx
                .sql(sql)
                .await
                .unwrap()
                .with_param_values(vec![ScalarValue::Binary(Some(bytes.clone()))])
                .unwrap()
                .collect()
                .await;
            let e = result.expect_err(what);
            let DataFusionError::External(inner) = e.find_root() else {
                panic!("{what}: {e:?}");
            };
            let error = inner.downcast_ref::<BloomUdfError>();
            let expected = if what.contains("Guava") {
                matches!(error, Some(BloomUdfError::InvalidForeignFilter { .. }))
            } else {
                matches!(error, Some(BloomUdfError::InvalidFilter { .. }))
            };
            assert!(expected, "{what}: {inner}");
        }
    }
    // The good bytes work through the same path.
    let answers = ctx
        .sql("SELECT bloom_contains($1, k) FROM t")
        .await
        .unwrap()
        .with_param_values(vec![ScalarValue::Binary(Some(good))])
        .unwrap()
        .collect()
        .await
        .unwrap();
    assert!(answers[0].column(0).as_boolean().value(0));
}

/// The accumulator on its own: merging a state of other parameters is refused with a
/// message naming what differs, and leaves the filter unchanged; corrupt state bytes too.
#[test]
fn mismatched_merge_is_refused() {
    let keys: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    let mut acc = BloomAccumulator::new(N, FP).unwrap();
    acc.update_batch(std::slice::from_ref(&keys)).unwrap();
    let before = acc.filter().to_bytes();

    let mut other = BloomAccumulator::new(N * 100, FP).unwrap();
    other.update_batch(std::slice::from_ref(&keys)).unwrap();
    let mut same = BloomAccumulator::new(N, FP).unwrap();
    same.update_batch(&[Arc::new(StringArray::from(vec!["c"]))])
        .unwrap();
    let state = |acc: &mut BloomAccumulator| -> Vec<Option<Vec<u8>>> {
        match acc.state().unwrap().remove(0) {
            ScalarValue::Binary(b) => vec![b],
            other => panic!("state is {other:?}"),
        }
    };
    // A good state first, then the mismatched one: nothing of either is merged.
    let mut states = state(&mut same);
    states.extend(state(&mut other));
    let array: ArrayRef = Arc::new(BinaryArray::from_iter(states));
    let e = acc.merge_batch(&[array]).unwrap_err();
    let msg = e.to_string();
    assert!(msg.contains("cannot merge partial filters"), "{msg}");
    assert!(msg.contains("differ"), "{msg}");
    let DataFusionError::External(inner) = &e else {
        panic!("{e:?}")
    };
    assert!(matches!(
        inner.downcast_ref::<BloomUdfError>(),
        Some(BloomUdfError::MismatchedMerge { .. })
    ));
    assert_eq!(acc.filter().to_bytes(), before, "unchanged after the error");

    let garbage: ArrayRef = Arc::new(BinaryArray::from_iter_values([&[9u8; 80][..]]));
    assert!(acc.merge_batch(&[garbage]).is_err());
    assert_eq!(acc.filter().to_bytes(), before);

    // The good state alone merges to the union; a NULL state is ignored.
    let mut states = state(&mut same);
    states.push(None);
    let array: ArrayRef = Arc::new(BinaryArray::from_iter(states));
    acc.merge_batch(&[array]).unwrap();
    let mut expected = core_filter();
    expected.insert_batch(&["a", "b", "c"]);
    assert_eq!(acc.filter().to_bytes(), expected.to_bytes());
}

fn keys(n: usize) -> Vec<String> {
    (0..n)
        .map(|i| format!("https://host{}.example/p/{i}", i % 97))
        .collect()
}

/// target_partitions 1..=8 over a multi-batch, multi-partition MemTable: the partial /
/// final aggregation gives the same bits as a sequential core build.
#[tokio::test]
async fn partitions_give_the_sequential_bits_memtable() {
    let all = keys(20_000);
    let mut expected = SplitBlockBloomFilter::new(20_000, FP).unwrap();
    expected.insert_batch(&all);
    let expected = expected.to_bytes();
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, false)]));
    // 4 partitions of 5 batches of 1000 rows.
    let partitions: Vec<Vec<RecordBatch>> = all
        .chunks(5000)
        .map(|part| {
            part.chunks(1000)
                .map(|c| {
                    RecordBatch::try_new(
                        schema.clone(),
                        vec![Arc::new(StringArray::from_iter_values(c))],
                    )
                    .unwrap()
                })
                .collect()
        })
        .collect();
    for target in 1..=8 {
        let config = SessionConfig::new()
            .with_target_partitions(target)
            .with_batch_size(777);
        let ctx = SessionContext::new_with_config(config);
        register(&ctx);
        let mem = MemTable::try_new(schema.clone(), partitions.clone()).unwrap();
        ctx.register_table("t", Arc::new(mem)).unwrap();
        let got = binary_value(&ctx, "SELECT bloom_agg(k, 20000, 0.01) FROM t")
            .await
            .unwrap();
        assert!(got == expected, "target_partitions {target}: bits differ");
    }
}

/// The same over a CSV file split into byte ranges (one scan partition per range).
#[tokio::test]
async fn partitions_give_the_sequential_bits_csv() {
    let all = keys(20_000);
    let mut expected = SplitBlockBloomFilter::new(20_000, FP).unwrap();
    expected.insert_batch(&all);
    let expected = expected.to_bytes();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("urls.csv");
    let mut text = String::from("url\n");
    for k in &all {
        text.push_str(k);
        text.push('\n');
    }
    std::fs::write(&path, text).unwrap();
    for target in 1..=8 {
        let mut config = SessionConfig::new().with_target_partitions(target);
        // Split even this small file into `target` ranges.
        config.options_mut().optimizer.repartition_file_min_size = 1;
        let ctx = SessionContext::new_with_config(config);
        register(&ctx);
        ctx.register_csv("u", path.to_str().unwrap(), CsvReadOptions::new())
            .await
            .unwrap();
        let plan = ctx
            .sql("EXPLAIN SELECT bloom_agg(url, 20000, 0.01) FROM u")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let plan = datafusion::arrow::util::pretty::pretty_format_batches(&plan)
            .unwrap()
            .to_string();
        if target > 1 {
            // The scan really is split, and the aggregation really is partial + final.
            assert!(
                plan.contains(&format!("file_groups={{{target} groups")),
                "{plan}"
            );
            assert!(plan.contains("AggregateExec: mode=Partial"), "{plan}");
        }
        let got = binary_value(&ctx, "SELECT bloom_agg(url, 20000, 0.01) FROM u")
            .await
            .unwrap();
        assert!(got == expected, "target_partitions {target}: bits differ");
    }
}

/// A filter bound to a named function answers as `bloom_contains` and the core filter;
/// bad bytes are refused when binding.
#[tokio::test]
async fn bound_filter_agrees_with_bloom_contains() {
    let mut filter = SplitBlockBloomFilter::builder()
        .expected_items(300)
        .false_pos(0.2)
        .seed(3)
        .build()
        .unwrap();
    let inserted = keys(300);
    filter.insert_batch(&inserted);
    let queries = keys(3000);
    let ctx = context();
    table(&ctx, "q", Arc::new(StringArray::from(queries.clone())));
    let bound = BloomContainsFilter::from_bytes("in_f", &filter.to_bytes()).unwrap();
    ctx.register_udf(datafusion::logical_expr::ScalarUDF::from(bound));
    let answers = booleans(&ctx, "SELECT in_f(k) FROM q").await;
    let expected: Vec<Option<bool>> = queries
        .iter()
        .map(|q| Some(filter.contains(q.as_str())))
        .collect();
    assert_eq!(answers, expected);
    let df = ctx
        .sql("SELECT bloom_contains($1, k) FROM q")
        .await
        .unwrap()
        .with_param_values(vec![ScalarValue::Binary(Some(filter.to_bytes()))])
        .unwrap();
    let via_bytes: Vec<Option<bool>> = df
        .collect()
        .await
        .unwrap()
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect();
    assert_eq!(answers, via_bytes);
    assert_eq!(booleans(&ctx, "SELECT in_f(NULL)").await, vec![None]);
    let mut bad = filter.to_bytes();
    bad[70] ^= 4;
    assert!(matches!(
        BloomContainsFilter::from_bytes("bad", &bad),
        Err(BloomUdfError::InvalidFilter { .. })
    ));
}

// ---- The counting kind, planning-time checks, the planned constant filter ----

/// One column of each key type, with a null, and a function inserting its non-null
/// values into a counting filter as the crate docs' table hashes them.
fn counting_cases() -> Vec<(ArrayRef, CountingBloomFilter)> {
    let strs = vec![
        Some("alpha"),
        Some(""),
        None,
        Some("a longer key than twelve"),
    ];
    let bytes: Vec<Option<&[u8]>> = strs.iter().map(|s| s.map(str::as_bytes)).collect();
    let ints = vec![Some(0i64), Some(-1), None, Some(127)];
    let uints = vec![Some(0u64), Some(42), None, Some(255)];
    let filter = |insert: &dyn Fn(&mut CountingBloomFilter)| {
        let mut f = CountingBloomFilter::new(N, FP).unwrap();
        insert(&mut f);
        f
    };
    let by_str = filter(&|f| {
        strs.iter().flatten().for_each(|s| {
            f.insert(*s);
        })
    });
    let by_bytes = filter(&|f| {
        bytes.iter().flatten().for_each(|b| {
            f.insert(*b);
        })
    });
    let by_i64 = filter(&|f| {
        ints.iter().flatten().for_each(|v| {
            f.insert(v);
        })
    });
    let by_u64 = filter(&|f| {
        uints.iter().flatten().for_each(|v| {
            f.insert(v);
        })
    });
    let small = |v: &Option<i64>| v.map(|v| v as i8);
    vec![
        (Arc::new(StringArray::from(strs.clone())), by_str.clone()),
        (
            Arc::new(LargeStringArray::from(strs.clone())),
            by_str.clone(),
        ),
        (Arc::new(StringViewArray::from(strs.clone())), by_str),
        (Arc::new(BinaryArray::from(bytes.clone())), by_bytes.clone()),
        (
            Arc::new(LargeBinaryArray::from(bytes.clone())),
            by_bytes.clone(),
        ),
        (Arc::new(BinaryViewArray::from(bytes)), by_bytes),
        (
            Arc::new(Int8Array::from_iter(ints.iter().map(small))),
            by_i64.clone(),
        ),
        (
            Arc::new(Int16Array::from_iter(
                ints.iter().map(|v| v.map(|v| v as i16)),
            )),
            by_i64.clone(),
        ),
        (
            Arc::new(Int32Array::from_iter(
                ints.iter().map(|v| v.map(|v| v as i32)),
            )),
            by_i64.clone(),
        ),
        (Arc::new(Int64Array::from(ints.clone())), by_i64),
        (
            Arc::new(UInt8Array::from_iter(
                uints.iter().map(|v| v.map(|v| v as u8)),
            )),
            by_u64.clone(),
        ),
        (
            Arc::new(UInt16Array::from_iter(
                uints.iter().map(|v| v.map(|v| v as u16)),
            )),
            by_u64.clone(),
        ),
        (
            Arc::new(UInt32Array::from_iter(
                uints.iter().map(|v| v.map(|v| v as u32)),
            )),
            by_u64.clone(),
        ),
        (Arc::new(UInt64Array::from(uints)), by_u64),
    ]
}

/// `bloom_agg(.., 'counting')` over every key type equals the counting crate's filter of
/// the non-null keys, and `bloom_contains` reads the bytes (kind from the header) both as
/// a subquery and as a `$1` parameter.
#[tokio::test]
async fn counting_kind_matches_the_counting_filter_for_every_key_type() {
    let cases = counting_cases();
    assert_eq!(cases.len(), 14);
    for (column, expected) in cases {
        let data_type = column.data_type().clone();
        assert_eq!(column.null_count(), 1, "{data_type}");
        let ctx = context();
        table(&ctx, "t", column.clone());
        let got = binary_value(&ctx, "SELECT bloom_agg(k, 1000, 0.01, 'counting') FROM t")
            .await
            .unwrap();
        assert!(got == expected.to_bytes(), "{data_type}: bytes differ");
        // The kind is case-insensitive and any string type.
        let upper = binary_value(
            &ctx,
            "SELECT bloom_agg(k, 1000, 0.01, arrow_cast('COUNTING', 'Utf8View')) FROM t",
        )
        .await
        .unwrap();
        assert!(upper == got, "{data_type}");
        let expect: Vec<Option<bool>> = (0..column.len())
            .map(|i| column.is_valid(i).then_some(true))
            .collect();
        let answers = booleans(
            &ctx,
            "SELECT bloom_contains((SELECT bloom_agg(k, 1000, 0.01, 'counting') FROM t), k) FROM t",
        )
        .await;
        assert_eq!(answers, expect, "{data_type}: subquery");
        let answers = collect_booleans(
            ctx.sql("SELECT bloom_contains($1, k) FROM t")
                .await
                .unwrap()
                .with_param_values(vec![ScalarValue::Binary(Some(got))])
                .unwrap(),
        )
        .await;
        assert_eq!(answers, expect, "{data_type}: parameter");
    }
}

async fn collect_booleans(df: datafusion::dataframe::DataFrame) -> Vec<Option<bool>> {
    df.collect()
        .await
        .unwrap()
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect()
}

/// Nulls and empty input with the counting kind: nulls are skipped, no rows give the
/// empty counting filter (not NULL).
#[tokio::test]
async fn counting_kind_nulls_and_empty_input() {
    let ctx = context();
    table(
        &ctx,
        "t",
        Arc::new(StringArray::from(vec![Some("x"), None])),
    );
    table(
        &ctx,
        "n",
        Arc::new(StringArray::from(vec![None::<&str>, None])),
    );
    let mut one = CountingBloomFilter::new(N, FP).unwrap();
    one.insert("x");
    let empty = CountingBloomFilter::new(N, FP).unwrap().to_bytes();
    let got = binary_value(&ctx, "SELECT bloom_agg(k, 1000, 0.01, 'counting') FROM t")
        .await
        .unwrap();
    assert!(got == one.to_bytes());
    for sql in [
        "SELECT bloom_agg(k, 1000, 0.01, 'counting') FROM t WHERE k = 'absent'",
        "SELECT bloom_agg(k, 1000, 0.01, 'counting') FROM n",
    ] {
        assert!(binary_value(&ctx, sql).await.unwrap() == empty, "{sql}");
    }
    let answers = booleans(
        &ctx,
        "SELECT bloom_contains((SELECT bloom_agg(k, 1000, 0.01, 'counting') FROM t \
         WHERE k = 'absent'), k) FROM t",
    )
    .await;
    assert_eq!(answers, vec![Some(false), None]);
}

/// Rows of `w(id, grp, k)`: ids 0..60, two groups, repeated keys and some nulls.
fn window_rows() -> Vec<(i64, i64, Option<String>)> {
    (0..60i64)
        .map(|i| {
            let k = (i % 11 != 5).then(|| format!("key{}", (i * 7) % 13));
            (i, i % 2, k)
        })
        .collect()
}

/// A sliding frame over the counting kind: each row's filter, built by inserting the
/// rows entering the frame and retracting those leaving it, equals a counting filter
/// recomputed from the frame's rows alone (no counter can saturate: a frame has at most
/// 5 rows).
#[tokio::test]
async fn counting_kind_retracts_in_window_frames() {
    let rows = window_rows();
    let ctx = context();
    let schema = Arc::new(Schema::new(vec![
        Field::new("id", DataType::Int64, false),
        Field::new("grp", DataType::Int64, false),
        Field::new("k", DataType::Utf8, true),
    ]));
    let batch = RecordBatch::try_new(
        schema.clone(),
        vec![
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.0))),
            Arc::new(Int64Array::from_iter_values(rows.iter().map(|r| r.1))),
            Arc::new(StringArray::from_iter(rows.iter().map(|r| r.2.clone()))),
        ],
    )
    .unwrap();
    // Two partitions of the table, so the window also runs after a repartition.
    let (a, b) = (batch.slice(0, 25), batch.slice(25, 35));
    let mem = MemTable::try_new(schema, vec![vec![a], vec![b]]).unwrap();
    ctx.register_table("w", Arc::new(mem)).unwrap();

    // (frame, partition by group?, the ids of row i's frame)
    type Frame = fn(usize, &[usize]) -> Vec<usize>;
    let cases: [(&str, bool, Frame); 3] = [
        ("ROWS BETWEEN 3 PRECEDING AND CURRENT ROW", false, |i, _| {
            (i.saturating_sub(3)..=i).collect()
        }),
        ("ROWS BETWEEN 2 PRECEDING AND 2 FOLLOWING", false, |i, _| {
            (i.saturating_sub(2)..=(i + 2).min(59)).collect()
        }),
        // Within a group: positions in the group's own order.
        (
            "ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING",
            true,
            |i, group| {
                let pos = group.iter().position(|&g| g == i).unwrap();
                group[pos.saturating_sub(1)..(pos + 2).min(group.len())].to_vec()
            },
        ),
    ];
    for (frame, by_group, ids) in cases {
        let partition = if by_group { "PARTITION BY grp " } else { "" };
        let sql = format!(
            "SELECT id, bloom_agg(k, 1000, 0.01, 'counting') OVER ({partition}ORDER BY id {frame}) \
             FROM w ORDER BY id"
        );
        let batches = ctx.sql(&sql).await.unwrap().collect().await.unwrap();
        let mut seen = 0;
        for batch in &batches {
            let id = batch
                .column(0)
                .as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            let filters = batch.column(1).as_binary::<i32>();
            for r in 0..batch.num_rows() {
                let i = id.value(r) as usize;
                let group: Vec<usize> = (0..60).filter(|j| j % 2 == i % 2).collect();
                let mut expected = CountingBloomFilter::new(N, FP).unwrap();
                for j in ids(i, &group) {
                    if let Some(k) = &rows[j].2 {
                        expected.insert(k.as_str());
                    }
                }
                assert!(
                    filters.value(r) == expected.to_bytes().as_slice(),
                    "{frame}: row {i} differs from the recomputed filter"
                );
                seen += 1;
            }
        }
        assert_eq!(seen, 60, "{frame}");
    }

    // The split-block kind cannot retract: a sliding frame is refused, a growing one works.
    let e = error_of(
        &ctx,
        "SELECT bloom_agg(k, 1000, 0.01) OVER (ORDER BY id ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM w",
    )
    .await;
    assert!(e.to_string().contains("retract_batch"), "{e}");
    let batches = ctx
        .sql("SELECT bloom_agg(k, 1000, 0.01) OVER (ORDER BY id ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) FROM w ORDER BY id")
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let last = batches.last().unwrap();
    let last = last.column(0).as_binary::<i32>().value(last.num_rows() - 1);
    let mut all = core_filter();
    rows.iter().flat_map(|r| r.2.as_deref()).for_each(|k| {
        all.insert(k);
    });
    assert!(last == all.to_bytes().as_slice());
}

/// target_partitions 1..=4: the partial counting filters add up to the sequential one.
#[tokio::test]
async fn counting_partitions_give_the_sequential_counters() {
    let all = keys(5000);
    let mut expected = CountingBloomFilter::new(5000, FP).unwrap();
    expected.insert_batch(&all);
    let expected = expected.to_bytes();
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, false)]));
    let partitions: Vec<Vec<RecordBatch>> = all
        .chunks(1250)
        .map(|part| {
            part.chunks(400)
                .map(|c| {
                    let col = Arc::new(StringArray::from_iter_values(c));
                    RecordBatch::try_new(schema.clone(), vec![col]).unwrap()
                })
                .collect()
        })
        .collect();
    for target in 1..=4 {
        let config = SessionConfig::new().with_target_partitions(target);
        let ctx = SessionContext::new_with_config(config);
        register(&ctx);
        let mem = MemTable::try_new(schema.clone(), partitions.clone()).unwrap();
        ctx.register_table("t", Arc::new(mem)).unwrap();
        let got = binary_value(&ctx, "SELECT bloom_agg(k, 5000, 0.01, 'counting') FROM t")
            .await
            .unwrap();
        assert!(
            got == expected,
            "target_partitions {target}: counters differ"
        );
    }
}

fn state_of(acc: &mut dyn Accumulator) -> ArrayRef {
    match acc.state().unwrap().remove(0) {
        ScalarValue::Binary(b) => Arc::new(BinaryArray::from_iter(vec![b])),
        other => panic!("state is {other:?}"),
    }
}

fn udf_error(e: &DataFusionError) -> &BloomUdfError {
    let DataFusionError::External(inner) = e.find_root() else {
        panic!("not an external error: {e:?}");
    };
    inner
        .downcast_ref::<BloomUdfError>()
        .expect("a BloomUdfError")
}

/// The counting accumulator on its own: merge adds counters (saturating at 15, as the
/// counting crate's union); states of other parameters or the other kind, corrupt bytes
/// and retracting an absent key are refused with the filter unchanged.
#[test]
fn counting_merge_and_retract_refusals() {
    let ab: ArrayRef = Arc::new(StringArray::from(vec!["a", "b"]));
    let mut acc = CountingBloomAccumulator::new(N, FP).unwrap();
    acc.update_batch(std::slice::from_ref(&ab)).unwrap();
    let before = acc.filter().to_bytes();

    let mut other_size = CountingBloomAccumulator::new(N * 100, FP).unwrap();
    other_size.update_batch(std::slice::from_ref(&ab)).unwrap();
    let e = acc.merge_batch(&[state_of(&mut other_size)]).unwrap_err();
    assert!(
        matches!(udf_error(&e), BloomUdfError::MismatchedMerge { .. }),
        "{e}"
    );
    assert!(e.to_string().contains("size differs"), "{e}");
    assert!(acc.filter().to_bytes() == before);

    let mut split = BloomAccumulator::new(N, FP).unwrap();
    split.update_batch(std::slice::from_ref(&ab)).unwrap();
    let e = acc.merge_batch(&[state_of(&mut split)]).unwrap_err();
    assert!(
        matches!(
            udf_error(&e),
            BloomUdfError::MismatchedKinds {
                accumulator: "counting",
                state: "split-block"
            }
        ),
        "{e}"
    );
    let e = split.merge_batch(&[state_of(&mut acc)]).unwrap_err();
    assert!(matches!(
        udf_error(&e),
        BloomUdfError::MismatchedKinds { .. }
    ));

    let mut flipped = before.clone();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for bad in [vec![9u8; 80], before[..100].to_vec(), flipped] {
        let bad: ArrayRef = Arc::new(BinaryArray::from_iter_values([bad]));
        let e = acc.merge_batch(&[bad]).unwrap_err();
        assert!(
            matches!(udf_error(&e), BloomUdfError::InvalidFilter { .. }),
            "{e}"
        );
    }
    assert!(acc.filter().to_bytes() == before);

    // Retracting a key never added: refused.
    let absent: ArrayRef = Arc::new(StringArray::from(vec!["never added"]));
    let mut probe = CountingBloomFilter::new(N, FP).unwrap();
    probe.insert_batch(&["a", "b"]);
    assert!(
        !probe.contains("never added"),
        "the seed's key is a false positive"
    );
    let e = acc.retract_batch(&[absent]).unwrap_err();
    assert!(
        matches!(udf_error(&e), BloomUdfError::RetractAbsent { .. }),
        "{e}"
    );
    assert!(acc.filter().to_bytes() == before);
    assert!(acc.supports_retract_batch() && !split.supports_retract_batch());

    // Saturation: 20 copies of one key in each of two partials; the merge saturates the
    // key's counters at 15, as the counting crate's union does.
    let hot: ArrayRef = Arc::new(StringArray::from(vec!["hot"; 20]));
    let mut left = CountingBloomAccumulator::new(N, FP).unwrap();
    let mut right = CountingBloomAccumulator::new(N, FP).unwrap();
    left.update_batch(std::slice::from_ref(&hot)).unwrap();
    right.update_batch(std::slice::from_ref(&hot)).unwrap();
    let mut expected = left.filter().clone();
    expected.union(right.filter()).unwrap();
    left.merge_batch(&[state_of(&mut right)]).unwrap();
    assert!(left.filter().to_bytes() == expected.to_bytes());
    assert_eq!(
        left.filter().count("hot"),
        bloomforge_core::Count::AtLeast(15)
    );
    // 40 retracts of "hot" leave its saturated counters at 15: still present.
    for _ in 0..2 {
        left.retract_batch(std::slice::from_ref(&hot)).unwrap();
    }
    assert!(left.filter().contains("hot"));
}

/// Planning-time errors: a non-constant or out-of-range parameter fails in
/// `create_physical_plan` (or earlier, in `ctx.sql`), before anything executes, as a
/// `DataFusionError::Plan` naming the parameter.
#[tokio::test]
async fn bad_parameters_fail_at_planning() {
    let ctx = context();
    ctx.sql(
        "CREATE TABLE t(k TEXT, n BIGINT, p DOUBLE, s TEXT) AS VALUES ('x', 10, 0.5, 'counting')",
    )
    .await
    .unwrap();
    for (sql, needle) in [
        ("SELECT bloom_agg(k, n, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, n + 1, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 0, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, -5, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, NULL, 0.01) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 1000, p) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 1000, 0.0) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 1000, -0.1) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 1000, 1.0) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 1000, 1.5) FROM t", "false_pos"),
        (
            "SELECT bloom_agg(k, 1000, CAST('NaN' AS DOUBLE)) FROM t",
            "false_pos",
        ),
        ("SELECT bloom_agg(k, 1000, random()) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 1000, 0.01, s) FROM t", "kind"),
        ("SELECT bloom_agg(k, 1000, 0.01, 'cuckoo') FROM t", "kind"),
        ("SELECT bloom_agg(k, 1000, 0.01, NULL) FROM t", "kind"),
        ("SELECT bloom_agg(k, 1000, 0.01, 7) FROM t", "kind"),
        (
            "SELECT bloom_agg(k, 1000, 0.01, 'counting', 1) FROM t",
            "3 or 4 arguments",
        ),
        (
            "SELECT k, bloom_agg(k, n, 0.01, 'counting') FROM t GROUP BY k",
            "expected_items",
        ),
    ] {
        let e = match ctx.sql(sql).await {
            Err(e) => e,
            Ok(df) => df.create_physical_plan().await.expect_err(sql),
        };
        let msg = e.to_string();
        assert!(msg.contains(needle), "{sql}: {msg}");
        assert!(
            matches!(e.find_root(), DataFusionError::Plan(_)),
            "{sql}: not a plan error: {e:?}"
        );
    }
    // In range, and constant expressions folded before the check: planned and run.
    for sql in [
        "SELECT bloom_agg(k, 500 * 2, 0.02 / 2) FROM t",
        "SELECT bloom_agg(k, CAST('1000' AS INT), 0.01, 'split-' || 'block') FROM t",
    ] {
        let got = binary_value(&ctx, sql).await.unwrap();
        let mut expected = core_filter();
        expected.insert("x");
        assert!(got == expected.to_bytes(), "{sql}");
    }
    // A window's parameters reach no planning hook of the aggregate: `register`'s
    // optimizer rule refuses them while planning, as the same plan error.
    for (sql, name) in [
        ("SELECT bloom_agg(k, n, 0.01, 'counting') OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 1000, 1.5, 'counting') OVER (ORDER BY k) FROM t", "false_pos"),
        ("SELECT bloom_agg(k, 0, 0.01) OVER () FROM t", "expected_items"),
        ("SELECT bloom_agg(k, 1000, 0.01, 'cuckoo') OVER () FROM t", "kind"),
        ("SELECT k FROM t WHERE k IN (SELECT k FROM (SELECT k, bloom_agg(k, 1000, 0.0) OVER () AS f FROM t) WHERE f IS NOT NULL)", "false_pos"),
    ] {
        let df = ctx.sql(sql).await.unwrap();
        let e = df.create_physical_plan().await.unwrap_err();
        assert!(e.to_string().contains(name), "{sql}: {e}");
        assert!(matches!(e.find_root(), DataFusionError::Plan(_)), "{sql}: {e:?}");
    }
    // Folded constants pass in a window too.
    let df = ctx
        .sql("SELECT bloom_agg(k, 500 * 2, 0.02 / 2, 'counting') OVER (ORDER BY k) FROM t")
        .await
        .unwrap();
    df.collect().await.unwrap();
    // Without the rule (the function registered alone), the executor refuses the same
    // window when it starts, still as a plan error.
    let bare = SessionContext::new();
    bare.register_udaf(bloomforge_datafusion::bloom_agg_udaf());
    bare.register_batch(
        "t",
        ctx.table("t")
            .await
            .unwrap()
            .collect()
            .await
            .unwrap()
            .remove(0),
    )
    .unwrap();
    let df = bare
        .sql("SELECT bloom_agg(k, n, 0.01, 'counting') OVER (ORDER BY k ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) FROM t")
        .await
        .unwrap();
    let plan = df.create_physical_plan().await.unwrap();
    let e = datafusion::physical_plan::collect(plan, bare.task_ctx())
        .await
        .unwrap_err();
    assert!(e.to_string().contains("expected_items"), "{e}");
    assert!(matches!(e.find_root(), DataFusionError::Plan(_)), "{e:?}");
}

/// A constant filter is checked when the query is planned: corrupt bytes fail in
/// `create_physical_plan`, as `BloomUdfError::InvalidFilter`.
#[tokio::test]
async fn corrupt_constant_filter_fails_at_planning() {
    let ctx = context();
    table(&ctx, "t", Arc::new(StringArray::from(vec!["x", "y"])));
    let mut counting = CountingBloomFilter::new(N, FP).unwrap();
    counting.insert("x");
    let mut flipped = counting.to_bytes();
    let last = flipped.len() - 1;
    flipped[last] ^= 1;
    for bad in [flipped, counting.to_bytes()[..200].to_vec(), vec![0; 64]] {
        let e = ctx
            .sql("SELECT bloom_contains($1, k) FROM t")
            .await
            .unwrap()
            .with_param_values(vec![ScalarValue::Binary(Some(bad))])
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap_err();
        assert!(
            matches!(udf_error(&e), BloomUdfError::InvalidFilter { .. }),
            "{e}"
        );
    }
}

/// Counting filters of both layouts, passed as parameters, answer as the counting crate
/// does over many batches (the planned, bound literal is reused batch after batch); so
/// does a split-block filter, and a filter column of counting filters.
#[tokio::test]
async fn counting_filter_bytes_agree_with_the_counting_crate() {
    let inserted = keys(300);
    let queries = keys(3000);
    let mut blocked = CountingBloomFilter::new(300, 0.2).unwrap();
    blocked.insert_batch(&inserted);
    let mut standard = CountingBloomFilter::standard_with_false_pos(0.2)
        .expected_items(300)
        .unwrap();
    standard.insert_batch(&inserted);
    let mut split = SplitBlockBloomFilter::new(300, 0.2).unwrap();
    split.insert_batch(&inserted);
    let ctx = context();
    // 24 batches, so the planned literal serves batch after batch.
    let schema = Arc::new(Schema::new(vec![Field::new("k", DataType::Utf8, false)]));
    let batches: Vec<RecordBatch> = queries
        .chunks(125)
        .map(|c| {
            let col = Arc::new(StringArray::from_iter_values(c));
            RecordBatch::try_new(schema.clone(), vec![col]).unwrap()
        })
        .collect();
    let mem = MemTable::try_new(schema, vec![batches]).unwrap();
    ctx.register_table("q", Arc::new(mem)).unwrap();
    let mut sorted = queries.clone();
    sorted.sort();
    let answers = |contains: &dyn Fn(&str) -> bool| -> Vec<Option<bool>> {
        sorted.iter().map(|q| Some(contains(q))).collect()
    };
    type Case = (&'static str, Vec<u8>, Vec<Option<bool>>);
    let cases: Vec<Case> = vec![
        (
            "blocked counting",
            blocked.to_bytes(),
            answers(&|q| blocked.contains(q)),
        ),
        (
            "standard counting",
            standard.to_bytes(),
            answers(&|q| standard.contains(q)),
        ),
        (
            "split-block",
            split.to_bytes(),
            answers(&|q| split.contains(q)),
        ),
    ];
    let filter_schema = Arc::new(Schema::new(vec![Field::new("bf", DataType::Binary, false)]));
    for (what, bytes, expected) in cases {
        let present = expected.iter().filter(|a| **a == Some(true)).count();
        assert!(
            present > 400,
            "{what}: the test wants false positives too ({present})"
        );
        let got = collect_booleans(
            ctx.sql("SELECT bloom_contains($1, k) FROM q ORDER BY k")
                .await
                .unwrap()
                .with_param_values(vec![ScalarValue::Binary(Some(bytes.clone()))])
                .unwrap(),
        )
        .await;
        assert!(got == expected, "{what}: answers differ");
        // A filter column: the same bytes on every row.
        let column = Arc::new(BinaryArray::from_iter_values([bytes.as_slice()]));
        let batch = RecordBatch::try_new(filter_schema.clone(), vec![column]).unwrap();
        let mem = MemTable::try_new(filter_schema.clone(), vec![vec![batch]]).unwrap();
        ctx.register_table("f", Arc::new(mem)).unwrap();
        let got = booleans(
            &ctx,
            "SELECT bloom_contains(f.bf, q.k) FROM q CROSS JOIN f ORDER BY q.k",
        )
        .await;
        assert!(got == expected, "{what}: filter column answers differ");
        ctx.deregister_table("f").unwrap();
    }
}

/// A filter bound to a session variable (`@name`) answers as the same bytes passed as a
/// parameter, for both kinds; the plan names the variable, never the bytes; bad bytes are
/// refused when bound, an unknown variable when planned.
#[tokio::test]
async fn filter_variables_answer_as_the_bytes() {
    let ctx = context();
    let keys: Vec<String> = (0..5000).map(|i| format!("key-{i}")).collect();
    let probes: StringArray = (0..10_000)
        .map(|i| (i % 97 != 5).then(|| format!("key-{}", i * 3)))
        .collect();
    table(&ctx, "t", Arc::new(probes));
    // Large enough that printing the bytes would show (240 KiB and 1 MiB).
    let mut split = SplitBlockBloomFilter::new(200_000, FP).unwrap();
    let mut counting = CountingBloomFilter::new(200_000, FP).unwrap();
    for k in &keys {
        split.insert(k.as_str());
        counting.insert(k.as_str());
    }
    let vars = bloomforge_datafusion::register_filter_variables(&ctx);
    vars.insert("@split", &split.to_bytes()).unwrap();
    vars.insert("counting", &counting.to_bytes()).unwrap(); // the `@` may be left out
    for (var, bytes) in [
        ("@split", split.to_bytes()),
        ("@counting", counting.to_bytes()),
    ] {
        let by_var = booleans(&ctx, &format!("SELECT bloom_contains({var}, k) FROM t")).await;
        let by_param = ctx
            .sql("SELECT bloom_contains($1, k) FROM t")
            .await
            .unwrap()
            .with_param_values(vec![ScalarValue::Binary(Some(bytes))])
            .unwrap()
            .collect()
            .await
            .unwrap();
        let by_param: Vec<Option<bool>> = by_param
            .iter()
            .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
            .collect();
        assert_eq!(by_var, by_param, "{var}");
        assert_eq!(by_var.len(), 10_000);
        // Members (multiples of 3 below 5000) are found; NULL keys give NULL.
        for (i, got) in by_var.iter().enumerate() {
            if i % 97 == 5 {
                assert_eq!(*got, None, "{var} row {i}");
            } else if i * 3 < 5000 {
                assert_eq!(*got, Some(true), "{var} row {i}");
            }
        }
        // The logical plan names the variable, not the bytes (the physical plan holds
        // the checked filter's list literal).
        let plan = ctx
            .sql(&format!(
                "EXPLAIN SELECT count(*) FROM t WHERE bloom_contains({var}, k)"
            ))
            .await
            .unwrap()
            .collect()
            .await
            .unwrap();
        let logical: Vec<String> = plan
            .iter()
            .flat_map(|b| {
                let kind = b.column(0).as_string::<i32>();
                let text = b.column(1).as_string::<i32>();
                (0..b.num_rows())
                    .filter(|&i| kind.value(i) == "logical_plan")
                    .map(|i| text.value(i).to_string())
                    .collect::<Vec<_>>()
            })
            .collect();
        assert_eq!(logical.len(), 1);
        assert!(logical[0].contains(var), "{}", logical[0]);
        assert!(
            logical[0].len() < 2000,
            "{} bytes of plan",
            logical[0].len()
        );
    }
    // Replaced, removed, refused.
    vars.insert("@split", &core_filter().to_bytes()).unwrap();
    let got = booleans(&ctx, "SELECT bloom_contains(@split, 'key-0')").await;
    assert_eq!(got, [Some(false)]);
    assert!(vars.remove("@split"));
    assert!(!vars.remove("@split"));
    let e = match ctx.sql("SELECT bloom_contains(@split, k) FROM t").await {
        Err(e) => e,
        Ok(df) => df.collect().await.unwrap_err(),
    };
    assert!(e.to_string().contains("@split"), "{e}");
    let mut bad = split.to_bytes();
    let last = bad.len() - 1;
    bad[last] ^= 1;
    assert!(matches!(
        vars.insert("@bad", &bad),
        Err(BloomUdfError::InvalidFilter { .. })
    ));
    assert!(vars.insert("@junk", &[0u8; 10]).is_err());
}

/// Guava's and Spark's filter bytes (written by the real libraries: bloomforge-interop's
/// fixtures) probed in SQL, as a literal and as a column, with their own hashing: every
/// inserted key answers `true`, and the probes answer as the library answered.
#[tokio::test]
async fn guava_and_spark_filters_are_probed_with_their_hashing() {
    let data = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../interop/tests/data");
    let hex = |b: &[u8]| b.iter().map(|x| format!("{x:02x}")).collect::<String>();
    let ctx = context();
    for (name, keys, sql_type) in [
        ("guava-strings-1000-0.01", "keys-strings.txt", "TEXT"),
        ("spark1-strings-2000-0.03", "keys-strings.txt", "TEXT"),
        ("spark2-longs-2000-0.03", "keys-longs.txt", "BIGINT"),
        ("guava-bytes-500-0.01", "keys-bytes.txt", "BYTEA"),
    ] {
        let bytes = std::fs::read(data.join(format!("{name}.bin"))).unwrap();
        let probes_file = keys.replace("keys-", "probes-");
        let answers = std::fs::read_to_string(data.join(format!("{name}.answers"))).unwrap();
        let literal = |line: &str| -> String {
            let (t, v) = line.split_once(':').unwrap();
            match t {
                "l" => format!("CAST({v} AS BIGINT)"),
                "b" => format!("X'{v}'"),
                // A string given by its UTF-8 bytes, cast back to text.
                _ => format!("arrow_cast(X'{v}', 'Utf8')"),
            }
        };
        let read = |f: &str| std::fs::read_to_string(data.join(f)).unwrap();
        let keys_text = read(keys);
        let probes_text = read(&probes_file);
        let keys: Vec<&str> = keys_text.lines().take(200).collect();
        let probes: Vec<&str> = probes_text.lines().take(400).collect();
        let values = |lines: &[&str]| {
            lines
                .iter()
                .map(|l| format!("({})", literal(l)))
                .collect::<Vec<_>>()
                .join(", ")
        };
        let sql = |lines: &[&str]| {
            format!(
                "SELECT bloom_contains(X'{}', CAST(k AS {sql_type})) FROM (VALUES {}) t(k)",
                hex(&bytes),
                values(lines)
            )
        };
        let present = booleans(&ctx, &sql(&keys)).await;
        assert!(
            present.iter().all(|a| *a == Some(true)),
            "{name}: a false negative"
        );
        let got: String = booleans(&ctx, &sql(&probes))
            .await
            .iter()
            .map(|a| if *a == Some(true) { '1' } else { '0' })
            .collect();
        assert_eq!(
            got,
            answers[..probes.len()],
            "{name}: the library's answers"
        );
        // As a column (the filter per row) the answers are the same.
        let sql = format!(
            "SELECT bloom_contains(f, CAST(k AS {sql_type})) FROM (VALUES {}) t(k) \
             CROSS JOIN (SELECT X'{}' AS f) g",
            values(&probes[..50]),
            hex(&bytes)
        );
        let got: String = booleans(&ctx, &sql)
            .await
            .iter()
            .map(|a| if *a == Some(true) { '1' } else { '0' })
            .collect();
        assert_eq!(got, answers[..50], "{name}: per-row answers");
    }
    // Truncated Guava bytes: an error naming the format, not a panic.
    let bytes = std::fs::read(data.join("guava-strings-1000-0.01.bin")).unwrap();
    let err = error_of(
        &ctx,
        &format!("SELECT bloom_contains(X'{}', 'a')", hex(&bytes[..40])),
    )
    .await;
    assert!(
        err.to_string()
            .contains("not a valid Guava or Spark filter"),
        "{err}"
    );
}
