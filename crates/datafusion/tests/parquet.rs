//! Parquet split-block Bloom filters, both ways: files written by the parquet crate read as
//! bloomforge filters, files whose filters bloomforge built read by the parquet crate, and
//! `bloom_parquet_contains` and `bloom_parquet_filter` from SQL. Every key set is fixed (no randomness), so each
//! statistical bound below is checked against the same keys on every run; the bounds hold
//! with false-alarm probability below 1e-6 for any one key set.

use bloomforge_core::SplitBlockBloomFilter;
use bloomforge_datafusion::parquet::{
    build_filter, contains_any, parquet_num_blocks, read_column_filter, read_row_group_filters,
    write_parquet, BloomColumn, ParquetColumnFilter, PhysicalType,
};
use bloomforge_datafusion::{register, BloomUdfError};
use datafusion::arrow::array::{
    Array, ArrayRef, AsArray, BinaryArray, Int32Array, Int64Array, RecordBatch, StringArray,
    UInt32Array,
};
use datafusion::error::DataFusionError;
use datafusion::prelude::SessionContext;
use parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use parquet::arrow::ArrowWriter;
use parquet::bloom_filter::Sbbf;
use parquet::file::metadata::ParquetMetaDataReader;
use parquet::file::properties::{ReaderProperties, WriterProperties};
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::serialized_reader::ReadOptionsBuilder;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const ROWS_PER_GROUP: usize = 1000;
const GROUPS: usize = 3;
const FP: f64 = 0.01;

fn url(i: usize) -> String {
    format!("https://example.com/page/{i}")
}

/// Row group `g`: urls and ids `g*1000 .. g*1000+1000`, small ints, every 10th url NULL.
fn batch(g: usize) -> RecordBatch {
    let rows = g * ROWS_PER_GROUP..(g + 1) * ROWS_PER_GROUP;
    let urls: StringArray = rows
        .clone()
        .map(|i| (i % 10 != 3).then(|| url(i)))
        .collect();
    let ids = Int64Array::from_iter_values(rows.clone().map(|i| i as i64 * 7919 - 1_000_000));
    let small = Int32Array::from_iter_values(rows.clone().map(|i| i as i32 - 1500));
    let unsigned = UInt32Array::from_iter_values(rows.map(|i| u32::MAX - i as u32));
    RecordBatch::try_from_iter([
        ("url", Arc::new(urls) as ArrayRef),
        ("id", Arc::new(ids) as ArrayRef),
        ("small", Arc::new(small) as ArrayRef),
        ("unsigned", Arc::new(unsigned) as ArrayRef),
    ])
    .unwrap()
}

fn batches() -> Vec<RecordBatch> {
    (0..GROUPS).map(batch).collect()
}

/// A file written by the parquet crate's own writer with its own Bloom filters on every
/// column but `small`.
fn parquet_written(dir: &Path) -> PathBuf {
    let path = dir.join("parquet_written.parquet");
    // Per column: parquet 59 falls back to the file-wide default when a column's filter
    // is switched off, so a global `set_bloom_filter_enabled(true)` cannot exempt `small`.
    let mut props = WriterProperties::builder().set_max_row_group_row_count(Some(ROWS_PER_GROUP));
    for column in ["url", "id", "unsigned"] {
        props = props
            .set_column_bloom_filter_enabled(ColumnPath::from(column), true)
            .set_column_bloom_filter_fpp(ColumnPath::from(column), FP)
            .set_column_bloom_filter_max_ndv(ColumnPath::from(column), ROWS_PER_GROUP as u64);
    }
    let props = props.build();
    let mut w =
        ArrowWriter::try_new(File::create(&path).unwrap(), batch(0).schema(), Some(props)).unwrap();
    for b in batches() {
        w.write(&b).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
    path
}

fn bloomforge_written(dir: &Path, batches: &[RecordBatch]) -> PathBuf {
    let path = dir.join("bloomforge_written.parquet");
    write_parquet(
        File::create(&path).unwrap(),
        batches,
        &[
            BloomColumn::new("url", FP),
            BloomColumn::new("id", FP),
            BloomColumn::new("small", FP),
            BloomColumn::new("unsigned", FP),
        ],
        WriterProperties::default(),
    )
    .unwrap();
    path
}

/// The parquet crate's reading of a column's filter in each row group.
fn parquet_reads(path: &Path, column: usize) -> Vec<Option<Sbbf>> {
    let options = ReadOptionsBuilder::new()
        .with_reader_properties(
            ReaderProperties::builder()
                .set_read_bloom_filter(true)
                .build(),
        )
        .build();
    let reader =
        SerializedFileReader::new_with_options(File::open(path).unwrap(), options).unwrap();
    (0..reader.num_row_groups())
        .map(|g| {
            reader
                .get_row_group(g)
                .unwrap()
                .get_column_bloom_filter(column)
                .cloned()
        })
        .collect()
}

fn bitset(sbbf: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    sbbf.write_bitset(&mut out).unwrap();
    out
}

/// Bloomforge's own build of a column's non-null values at `blocks` blocks.
fn bloomforge_build(array: &dyn Array, blocks: usize) -> SplitBlockBloomFilter {
    let mut hashes = Vec::new();
    bloomforge_datafusion::parquet::parquet_hashes(array, &mut hashes).unwrap();
    let mut f = SplitBlockBloomFilter::with_num_blocks(blocks as u64).unwrap();
    f.insert_hash_batch(&hashes);
    f
}

#[test]
fn parquet_written_filters_are_bloomforge_filters() {
    let dir = tempfile::tempdir().unwrap();
    let path = parquet_written(dir.path());
    let input = batches();
    for (column, index) in [("url", 0), ("id", 1), ("unsigned", 3)] {
        let ours = read_row_group_filters(&path, column).unwrap();
        let theirs = parquet_reads(&path, index);
        assert_eq!(ours.len(), GROUPS);
        for (g, (f, t)) in ours.iter().zip(&theirs).enumerate() {
            // The same bits the parquet crate reads ...
            assert_eq!(
                f.filter().as_bytes(),
                bitset(t.as_ref().unwrap()),
                "{column} {g}"
            );
            // ... and the same bits bloomforge builds from the same values at that size.
            let values = input[g].column(index);
            let built = bloomforge_build(values.as_ref(), f.filter().num_blocks());
            assert_eq!(f.filter(), &built, "{column} row group {g}");
            // Every written value is contained, asked by its own Arrow type.
            let answers = f.contains_array(values.as_ref()).unwrap();
            for i in 0..values.len() {
                assert_eq!(answers.is_valid(i), values.is_valid(i));
                assert!(
                    values.is_null(i) || answers.value(i),
                    "{column} {g} row {i}"
                );
            }
        }
    }
    assert_eq!(
        read_column_filter(&path, "id").unwrap().physical_type(),
        PhysicalType::Int64
    );
    assert_eq!(
        read_column_filter(&path, "url").unwrap().physical_type(),
        PhysicalType::ByteArray
    );
}

#[test]
fn the_file_filter_is_the_union_of_the_row_groups() {
    let dir = tempfile::tempdir().unwrap();
    let path = parquet_written(dir.path());
    let groups = read_row_group_filters(&path, "url").unwrap();
    let whole = read_column_filter(&path, "url").unwrap();
    let smallest = groups
        .iter()
        .map(|f| f.filter().num_blocks())
        .min()
        .unwrap();
    assert_eq!(whole.filter().num_blocks(), smallest);
    // Folding onto the smallest size is the build of every value at that size.
    let all: Vec<ArrayRef> = batches().iter().map(|b| b.column(0).clone()).collect();
    let all =
        datafusion::arrow::compute::concat(&all.iter().map(|a| a.as_ref()).collect::<Vec<_>>())
            .unwrap();
    assert_eq!(whole.filter(), &bloomforge_build(all.as_ref(), smallest));
    for i in 0..GROUPS * ROWS_PER_GROUP {
        assert!(i % 10 == 3 || whole.contains_bytes(url(i).as_bytes()).unwrap());
    }
}

#[test]
fn row_groups_of_different_filter_sizes_fold_into_one() {
    // parquet-rs folds each row group's filter down to its own distinct count, so a row
    // group of 50 values and one of 5000 get filters of different sizes.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("uneven.parquet");
    let props = WriterProperties::builder()
        .set_bloom_filter_enabled(true)
        .set_bloom_filter_fpp(FP)
        .set_bloom_filter_max_ndv(100_000)
        .build();
    let small = Int64Array::from_iter_values(0..50);
    let large = Int64Array::from_iter_values(1000..6000);
    let b = |a: Int64Array| RecordBatch::try_from_iter([("k", Arc::new(a) as ArrayRef)]).unwrap();
    let mut w = ArrowWriter::try_new(
        File::create(&path).unwrap(),
        b(small.clone()).schema(),
        Some(props),
    )
    .unwrap();
    for batch in [b(small), b(large)] {
        w.write(&batch).unwrap();
        w.flush().unwrap();
    }
    w.close().unwrap();
    let groups = read_row_group_filters(&path, "k").unwrap();
    let (a, c) = (
        groups[0].filter().num_blocks(),
        groups[1].filter().num_blocks(),
    );
    assert!(a < c, "{a} blocks vs {c}");
    let whole = read_column_filter(&path, "k").unwrap();
    assert_eq!(whole.filter().num_blocks(), a);
    for k in (0..50).chain(1000..6000) {
        assert!(whole.contains_i64(k).unwrap(), "{k}");
    }
}

#[test]
fn bloomforge_written_filters_read_by_the_parquet_crate() {
    let dir = tempfile::tempdir().unwrap();
    let input = batches();
    let path = bloomforge_written(dir.path(), &input);
    for (column, index) in [("url", 0), ("id", 1), ("small", 2), ("unsigned", 3)] {
        let theirs = parquet_reads(&path, index);
        assert_eq!(theirs.len(), GROUPS);
        for (g, sbbf) in theirs.iter().enumerate() {
            let sbbf = sbbf
                .as_ref()
                .unwrap_or_else(|| panic!("{column} {g}: no filter"));
            let values = input[g].column(index);
            // The stored bitset is bloomforge's build of the row group's values.
            let items = (values.len() - values.null_count()) as u64;
            let ours = build_filter(values.as_ref(), items, FP).unwrap();
            assert_eq!(bitset(sbbf), ours.as_bytes(), "{column} row group {g}");
            assert_eq!(
                sbbf.num_blocks() as u64,
                parquet_num_blocks(items, FP).unwrap()
            );
            // The parquet crate's own check finds every value.
            for i in 0..values.len() {
                let present = match column {
                    "url" => values.is_null(i) || sbbf.check(values.as_string::<i32>().value(i)),
                    "id" => sbbf.check(
                        &values
                            .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
                            .value(i),
                    ),
                    "small" => sbbf.check(
                        &values
                            .as_primitive::<datafusion::arrow::datatypes::Int32Type>()
                            .value(i),
                    ),
                    // Parquet stores UInt32 as the i32 of the same bits.
                    _ => sbbf.check(
                        &(values
                            .as_primitive::<datafusion::arrow::datatypes::UInt32Type>()
                            .value(i) as i32),
                    ),
                };
                assert!(present, "{column} row group {g} row {i}");
            }
            // And rejects absent values at about the target rate: 10 000 absent keys at
            // p <= 0.01 give on average <= 100 false positives; more than 160 has
            // probability below 1e-6 (Chernoff bound for Binomial(10 000, 0.01)).
            let absent = (0..10_000i64)
                .filter(|&i| match column {
                    "url" => sbbf.check(format!("absent-{i}").as_str()),
                    "id" => sbbf.check(&(i64::MAX - i)),
                    _ => sbbf.check(&(i32::MAX - i as i32)),
                })
                .count();
            assert!(absent <= 160, "{column} {g}: {absent} false positives");
        }
    }
    // The data round-trips: the file is an ordinary Parquet file.
    let reader = ParquetRecordBatchReaderBuilder::try_new(File::open(&path).unwrap())
        .unwrap()
        .build()
        .unwrap();
    let back: Vec<RecordBatch> = reader.map(Result::unwrap).collect();
    let total: usize = back.iter().map(RecordBatch::num_rows).sum();
    assert_eq!(total, GROUPS * ROWS_PER_GROUP);
    assert_eq!(
        datafusion::arrow::compute::concat_batches(&back[0].schema(), &back).unwrap(),
        datafusion::arrow::compute::concat_batches(&input[0].schema(), &input).unwrap()
    );
    // And bloomforge reads back exactly what it wrote.
    let ours = read_row_group_filters(&path, "small").unwrap();
    assert_eq!(
        ours[1].filter(),
        &build_filter(input[1].column(2).as_ref(), ROWS_PER_GROUP as u64, FP).unwrap()
    );
}

#[test]
fn keys_follow_the_column_type() {
    let dir = tempfile::tempdir().unwrap();
    let path = bloomforge_written(dir.path(), &batches());
    // `small` is INT32: Int64 keys in range are asked as i32, keys out of range are absent.
    let small = read_column_filter(&path, "small").unwrap();
    assert_eq!(small.physical_type(), PhysicalType::Int32);
    assert!(small.contains_i64(-1500).unwrap());
    assert!(small.contains_i64(1499).unwrap());
    assert!(!small.contains_i64(1 << 40).unwrap());
    assert!(!small.contains_i64(-(1 << 40)).unwrap());
    let keys = Int64Array::from(vec![Some(-1500), None, Some(1 << 40)]);
    let answers = small.contains_array(&keys).unwrap();
    assert!(answers.value(0));
    assert!(answers.is_null(1));
    assert!(!answers.value(2));
    // `unsigned` is UInt32 stored as INT32: large u32 keys find their bits.
    let unsigned = read_column_filter(&path, "unsigned").unwrap();
    assert!(unsigned.contains_u64(u64::from(u32::MAX)).unwrap());
    assert!(unsigned.contains_i64(i64::from(u32::MAX) - 5).unwrap());
    assert!(!unsigned.contains_u64(1 << 33).unwrap());
    // A string key for an integer column (and the reverse) is a typed error.
    let e = small.contains_bytes(b"x").unwrap_err();
    assert!(
        matches!(e, BloomUdfError::UnsupportedColumnType { .. }),
        "{e}"
    );
    let url = read_column_filter(&path, "url").unwrap();
    assert!(matches!(
        url.contains_i64(1),
        Err(BloomUdfError::UnsupportedColumnType { .. })
    ));
    // String and binary keys with the same bytes are the same key.
    assert!(url.contains_bytes(url_bytes(5).as_slice()).unwrap());
}

fn url_bytes(i: usize) -> Vec<u8> {
    url(i).into_bytes()
}

#[test]
fn missing_filters_columns_and_files_are_typed_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = parquet_written(dir.path());
    match read_column_filter(&path, "small") {
        Err(BloomUdfError::NoBloomFilter {
            column, row_group, ..
        }) => assert_eq!((column.as_str(), row_group), ("small", 0)),
        other => panic!("{other:?}"),
    }
    match read_row_group_filters(&path, "nope") {
        Err(BloomUdfError::NoSuchColumn { available, .. }) => {
            assert_eq!(available, ["url", "id", "small", "unsigned"])
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        read_column_filter(dir.path().join("absent.parquet"), "url"),
        Err(BloomUdfError::Io { .. })
    ));
    // Not Parquet at all, empty, truncated: errors from the footer reader.
    let junk = dir.path().join("junk.parquet");
    std::fs::write(&junk, b"this is not a parquet file at all").unwrap();
    assert!(matches!(
        read_column_filter(&junk, "url"),
        Err(BloomUdfError::Parquet { .. })
    ));
    std::fs::write(&junk, b"").unwrap();
    assert!(read_column_filter(&junk, "url").is_err());
    let whole = std::fs::read(&path).unwrap();
    for cut in [1, 8, whole.len() / 2, whole.len() - 9, whole.len() - 1] {
        std::fs::write(&junk, &whole[..cut]).unwrap();
        assert!(read_column_filter(&junk, "url").is_err(), "cut at {cut}");
    }
}

#[test]
fn corrupt_filters_are_errors_not_panics() {
    let dir = tempfile::tempdir().unwrap();
    let path = parquet_written(dir.path());
    let meta = ParquetMetaDataReader::new()
        .parse_and_finish(&File::open(&path).unwrap())
        .unwrap();
    let chunk = meta.row_group(0).column(0);
    let offset = chunk.bloom_filter_offset().unwrap() as usize;
    let len = chunk.bloom_filter_length().unwrap() as usize;
    let good = std::fs::read(&path).unwrap();
    let bad = dir.path().join("bad.parquet");
    // Every byte of the header, set to values that change its meaning: decoded or refused.
    let mut refused = 0;
    for at in offset..offset + 20 {
        for v in [0u8, 0x01, 0x15, 0x1c, 0x7f, 0x80, 0xff] {
            let mut bytes = good.clone();
            bytes[at] = v;
            std::fs::write(&bad, &bytes).unwrap();
            match read_row_group_filters(&bad, "url") {
                Ok(filters) => assert_eq!(filters.len(), GROUPS),
                Err(BloomUdfError::InvalidBloomFilter { row_group, .. }) => {
                    assert_eq!(row_group, 0);
                    refused += 1;
                }
                Err(e) => panic!("unexpected error {e}"),
            }
        }
    }
    assert!(refused > 20, "{refused}");
    // A header that claims more bitset than the chunk stores.
    let mut bytes = good.clone();
    assert_eq!(bytes[offset], 0x15, "field 1, i32");
    bytes[offset + 1] = bytes[offset + 1].wrapping_add(64);
    std::fs::write(&bad, &bytes).unwrap();
    assert!(matches!(
        read_column_filter(&bad, "url"),
        Err(BloomUdfError::InvalidBloomFilter { .. })
    ));
    assert!(len > 32);
}

#[test]
fn write_parquet_refuses_bad_arguments() {
    let input = batches();
    let sink = || Vec::<u8>::new();
    let e = write_parquet(
        sink(),
        &input,
        &[BloomColumn::new("nope", FP)],
        Default::default(),
    )
    .unwrap_err();
    assert!(matches!(e, BloomUdfError::InvalidArgument(_)), "{e}");
    let e = write_parquet(
        sink(),
        &input,
        &[BloomColumn::new("url", 1.5)],
        Default::default(),
    )
    .unwrap_err();
    assert!(matches!(e, BloomUdfError::Core(_)), "{e}");
    let e = write_parquet(sink(), &[], &[], Default::default()).unwrap_err();
    assert!(matches!(e, BloomUdfError::InvalidArgument(_)), "{e}");
    let other =
        RecordBatch::try_from_iter([("x", Arc::new(Int32Array::from(vec![1])) as ArrayRef)])
            .unwrap();
    let e = write_parquet(sink(), &[input[0].clone(), other], &[], Default::default()).unwrap_err();
    assert!(matches!(e, BloomUdfError::InvalidArgument(_)), "{e}");
    // A fixed size for every row group (one size: the groups union without folding).
    let mut out = Vec::new();
    write_parquet(
        &mut out,
        &input,
        &[BloomColumn::new("id", FP).expected_items(10_000)],
        Default::default(),
    )
    .unwrap();
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("fixed.parquet");
    std::fs::write(&path, &out).unwrap();
    let groups = read_row_group_filters(&path, "id").unwrap();
    let blocks = parquet_num_blocks(10_000, FP).unwrap() as usize;
    assert!(groups.iter().all(|f| f.filter().num_blocks() == blocks));
}

async fn booleans(ctx: &SessionContext, sql: &str) -> Vec<Option<bool>> {
    let batches = ctx.sql(sql).await.unwrap().collect().await.unwrap();
    batches
        .iter()
        .flat_map(|b| b.column(0).as_boolean().iter().collect::<Vec<_>>())
        .collect()
}

/// A temp dir with the parquet-rs-written and the bloomforge-written file, and a session
/// with the functions and every row of the files as table `t`.
fn sql_setup() -> (tempfile::TempDir, PathBuf, PathBuf, SessionContext) {
    let dir = tempfile::tempdir().unwrap();
    let path = parquet_written(dir.path());
    let bf = bloomforge_written(dir.path(), &batches());
    let ctx = SessionContext::new();
    register(&ctx);
    ctx.register_batch(
        "t",
        datafusion::arrow::compute::concat_batches(&batch(0).schema(), &batches()).unwrap(),
    )
    .unwrap();
    (dir, path, bf, ctx)
}

#[tokio::test]
async fn bloom_parquet_contains_from_sql() {
    let (_dir, path, bf, ctx) = sql_setup();
    let p = path.display();
    // Every row of the file finds itself; NULL urls give NULL.
    let got = booleans(
        &ctx,
        &format!("SELECT bloom_parquet_contains('{p}', 'url', url) FROM t"),
    )
    .await;
    assert_eq!(got.len(), GROUPS * ROWS_PER_GROUP);
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (i % 10 != 3).then_some(true), "row {i}");
    }
    let got = booleans(
        &ctx,
        &format!("SELECT bloom_parquet_contains('{p}', 'id', id) FROM t"),
    )
    .await;
    assert!(got.iter().all(|g| *g == Some(true)));
    // Absent keys: mostly false. Each row group's filter is folded to about 1 %, so a key
    // absent from all three hits with p <= ~0.03: 10 000 keys give ~300 on average, more
    // than 400 has probability below 1e-6 (Chernoff). And SQL answers exactly as the Rust
    // API over the row groups' filters.
    let absent: StringArray = (0..10_000).map(|i| Some(format!("absent-{i}"))).collect();
    ctx.register_batch(
        "absent",
        RecordBatch::try_from_iter([("k", Arc::new(absent) as ArrayRef)]).unwrap(),
    )
    .unwrap();
    let got = booleans(
        &ctx,
        &format!("SELECT bloom_parquet_contains('{p}', 'url', k) FROM absent"),
    )
    .await;
    let hits = got.iter().filter(|g| **g == Some(true)).count();
    assert_eq!(got.len(), 10_000);
    assert!(hits <= 400, "{hits}");
    let groups = read_row_group_filters(&path, "url").unwrap();
    let absent: StringArray = (0..10_000).map(|i| Some(format!("absent-{i}"))).collect();
    let rust = contains_any(&groups, &absent).unwrap();
    assert_eq!(got, rust.iter().collect::<Vec<_>>());
    // Constant keys, NULL keys, and an Int64 literal on the INT32 column.
    for (key, column, expected) in [
        ("-1000000", "id", Some(true)),
        ("CAST(NULL AS BIGINT)", "id", None),
        ("NULL", "url", None),
        ("-1500", "small_bf", Some(true)),
        ("4294967296", "small_bf", Some(false)),
    ] {
        let file = if column == "small_bf" {
            bf.display().to_string()
        } else {
            p.to_string()
        };
        let column = column.trim_end_matches("_bf");
        let got = booleans(
            &ctx,
            &format!("SELECT bloom_parquet_contains('{file}', '{column}', {key})"),
        )
        .await;
        assert_eq!(got, [expected], "{key} in {column}");
    }
    // As a filter in WHERE: every row of t whose url the file may hold (all non-null).
    let kept = ctx
        .sql(&format!(
            "SELECT count(*) FROM t WHERE bloom_parquet_contains('{p}', 'url', url)"
        ))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let kept = kept[0]
        .column(0)
        .as_primitive::<datafusion::arrow::datatypes::Int64Type>()
        .value(0);
    assert_eq!(kept as usize, GROUPS * ROWS_PER_GROUP * 9 / 10);
}

#[tokio::test]
async fn bloom_parquet_contains_errors() {
    let dir = tempfile::tempdir().unwrap();
    let path = parquet_written(dir.path());
    let p = path.display();
    let ctx = SessionContext::new();
    register(&ctx);
    let err = |sql: String| {
        let ctx = ctx.clone();
        async move {
            match ctx.sql(&sql).await {
                Err(e) => e,
                Ok(df) => df.collect().await.expect_err(&sql),
            }
        }
    };
    let root = |e: &DataFusionError| -> Option<String> {
        match e.find_root() {
            DataFusionError::External(inner) => inner
                .downcast_ref::<BloomUdfError>()
                .map(|p| format!("{p:?}")),
            _ => None,
        }
    };
    let e = err(format!("SELECT bloom_parquet_contains('{p}', 'nope', 1)")).await;
    assert!(
        root(&e).is_some_and(|r| r.starts_with("NoSuchColumn")),
        "{e}"
    );
    let e = err(format!("SELECT bloom_parquet_contains('{p}', 'small', 1)")).await;
    assert!(
        root(&e).is_some_and(|r| r.starts_with("NoBloomFilter")),
        "{e}"
    );
    let e = err("SELECT bloom_parquet_contains('/no/such/file.parquet', 'url', 'x')".into()).await;
    assert!(root(&e).is_some_and(|r| r.starts_with("Io")), "{e}");
    // A string key for an integer column, a float key, a wrong argument count.
    let e = err(format!("SELECT bloom_parquet_contains('{p}', 'id', 'x')")).await;
    assert!(e.to_string().contains("unsupported type"), "{e}");
    let e = err(format!("SELECT bloom_parquet_contains('{p}', 'id', 1.5)")).await;
    assert!(e.to_string().contains("unsupported"), "{e}");
    let e = err(format!("SELECT bloom_parquet_contains('{p}', 1)")).await;
    assert!(e.to_string().contains("3 arguments"), "{e}");
    // A file column per row is refused at execution (it must be a constant).
    ctx.sql(&format!("CREATE TABLE files(f TEXT) AS VALUES ('{p}')"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let e = err("SELECT bloom_parquet_contains(f, 'url', 'x') FROM files".into()).await;
    assert!(e.to_string().contains("constants"), "{e}");
}

/// `bloom_parquet_filter(file, column)`: the file's filter as bloomforge bytes that
/// `bloom_contains` probes with Parquet's hashing, from a constant, a column of filters,
/// and read back in Rust.
#[tokio::test]
async fn bloom_parquet_filter_feeds_bloom_contains() {
    let (_dir, path, bf, ctx) = sql_setup();
    let p = path.display();

    // The bytes: core's format, Parquet's hash and the column type in the header, the
    // row groups' union as the payload.
    let out = ctx
        .sql(&format!("SELECT bloom_parquet_filter('{p}', 'url')"))
        .await
        .unwrap()
        .collect()
        .await
        .unwrap();
    let bytes = out[0].column(0).as_binary::<i32>().value(0).to_vec();
    let header = bloomforge_core::format::Header::parse(&bytes).unwrap();
    assert_eq!(
        header.algorithm,
        bloomforge_core::format::HashAlgorithm::ParquetXxh64
    );
    let whole = read_column_filter(&path, "url").unwrap();
    let back = ParquetColumnFilter::from_bytes("url", &bytes).unwrap();
    assert_eq!(back.filter(), whole.filter());
    assert_eq!(back.physical_type(), whole.physical_type());
    assert_eq!(
        bloomforge_core::ParquetHasher::of_bytes(&bytes).unwrap(),
        bloomforge_core::ParquetHasher::BYTE_ARRAY
    );
    // bloomforge's own readers refuse it: its keys are not hashed with the default hasher.
    assert!(SplitBlockBloomFilter::from_bytes(&bytes).is_err());

    // Every row finds itself (NULL urls give NULL), on each column type, from the
    // parquet crate's filters and from bloomforge's.
    for (file, column) in [
        (p.to_string(), "url"),
        (p.to_string(), "id"),
        (p.to_string(), "unsigned"),
        (bf.display().to_string(), "small"),
        (bf.display().to_string(), "url"),
    ] {
        let got = booleans(
            &ctx,
            &format!("SELECT bloom_contains(bloom_parquet_filter('{file}', '{column}'), {column}) FROM t"),
        )
        .await;
        assert_eq!(got.len(), GROUPS * ROWS_PER_GROUP);
        for (i, g) in got.iter().enumerate() {
            let expected = (column != "url" || i % 10 != 3).then_some(true);
            assert_eq!(*g, expected, "{column} row {i} of {file}");
        }
    }

    // Absent keys answer as the Rust API's whole-file filter does, bit for bit.
    let absent: StringArray = (0..10_000).map(|i| Some(format!("absent-{i}"))).collect();
    ctx.register_batch(
        "absent",
        RecordBatch::try_from_iter([("k", Arc::new(absent.clone()) as ArrayRef)]).unwrap(),
    )
    .unwrap();
    let got = booleans(
        &ctx,
        &format!("SELECT bloom_contains(bloom_parquet_filter('{p}', 'url'), k) FROM absent"),
    )
    .await;
    let rust = whole.contains_array(&absent).unwrap();
    assert_eq!(got, rust.iter().collect::<Vec<_>>());
    // Three row groups ORed into one filter of one group's size: a random key's chance of
    // a hit is the mean over blocks of the product of its eight words' fill. The hits
    // exceed mean + 6 sqrt(mean) + 10 with probability below 1e-6 (Chernoff).
    let p_hit = whole
        .filter()
        .to_parquet_bytes()
        .chunks_exact(32)
        .map(|block| {
            block
                .chunks_exact(4)
                .map(|w| u32::from_le_bytes(w.try_into().unwrap()).count_ones() as f64 / 32.0)
                .product::<f64>()
        })
        .sum::<f64>()
        / (whole.filter().num_blocks() as f64);
    let mean = 10_000.0 * p_hit;
    let hits = got.iter().filter(|g| **g == Some(true)).count() as f64;
    assert!(
        hits <= mean + 6.0 * mean.sqrt() + 10.0,
        "{hits} hits, mean {mean}"
    );

    // Keys follow the column: an Int64 literal in the INT32 column, one out of its range.
    for (key, expected) in [
        ("-1500", Some(true)),
        ("4294967296", Some(false)),
        ("NULL", None),
    ] {
        let got = booleans(
            &ctx,
            &format!(
                "SELECT bloom_contains(bloom_parquet_filter('{}', 'small'), {key})",
                bf.display()
            ),
        )
        .await;
        assert_eq!(got, [expected], "{key}");
    }

    // A column of filters (one per row; the row-by-row path), and a NULL file.
    let filters: BinaryArray = (0..GROUPS * ROWS_PER_GROUP)
        .map(|_| Some(bytes.as_slice()))
        .collect();
    let keys: StringArray = (0..GROUPS * ROWS_PER_GROUP)
        .map(|i| (i % 10 != 3).then(|| url(i)))
        .collect();
    ctx.register_batch(
        "per_row",
        RecordBatch::try_from_iter([
            ("f", Arc::new(filters) as ArrayRef),
            ("k", Arc::new(keys) as ArrayRef),
        ])
        .unwrap(),
    )
    .unwrap();
    let got = booleans(&ctx, "SELECT bloom_contains(f, k) FROM per_row").await;
    for (i, g) in got.iter().enumerate() {
        assert_eq!(*g, (i % 10 != 3).then_some(true), "row {i}");
    }
    let got = booleans(
        &ctx,
        "SELECT bloom_contains(bloom_parquet_filter(NULL, 'url'), 'x')",
    )
    .await;
    assert_eq!(got, [None]);

    // Errors: a column without a filter, a missing file, wrong arguments.
    for (sql, needle) in [
        (
            format!("SELECT bloom_parquet_filter('{p}', 'small')"),
            "no Bloom filter",
        ),
        (
            "SELECT bloom_parquet_filter('/no/such.parquet', 'url')".to_string(),
            "/no/such.parquet",
        ),
        (format!("SELECT bloom_parquet_filter('{p}')"), "2 arguments"),
        (
            format!("SELECT bloom_parquet_filter('{p}', 1)"),
            "must be strings",
        ),
    ] {
        let e = match ctx.sql(&sql).await {
            Err(e) => e,
            Ok(df) => df.collect().await.expect_err(&sql),
        };
        assert!(e.to_string().contains(needle), "{sql}: {e}");
    }
}
