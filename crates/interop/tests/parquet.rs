//! `bloomforge_interop::parquet` end to end: files written with the parquet crate's
//! low-level writer (several row groups, string, int64 and nullable int32 columns, snappy
//! and zstd, key-value metadata, page indexes, parquet-rs's own filters on another column),
//! indexed, then read back with the parquet crate.

use bloomforge_core::{parquet_hash, SplitBlockBloomFilter};
use bloomforge_interop::parquet::{
    filters, index_file, parquet_num_blocks, probe, IndexOptions, IndexReport, ProbeAnswer,
    ProbeValue,
};
use bloomforge_interop::Error;
use bloomforge_testkit::stats::binomial_upper_tail;
use parquet::basic::{Compression, ZstdLevel};
use parquet::bloom_filter::Sbbf;
use parquet::data_type::{BoolType, ByteArray, ByteArrayType, Int32Type, Int64Type};
use parquet::file::metadata::{KeyValue, ParquetMetaData};
use parquet::file::properties::WriterProperties;
use parquet::file::reader::{FileReader, SerializedFileReader};
use parquet::file::serialized_reader::ReadOptionsBuilder;
use parquet::file::writer::SerializedFileWriter;
use parquet::record::Row;
use parquet::schema::parser::parse_message_type;
use parquet::schema::types::ColumnPath;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::Arc;

const SCHEMA: &str = "message test {
    required binary url (UTF8);
    required int64 id;
    optional int32 small;
    optional binary tag (UTF8);
    optional group nested { optional binary inner (UTF8); }
    required boolean flag;
}";

const ROW_GROUPS: usize = 6;
const ROWS: usize = 3000;

fn url(group: usize, row: usize) -> String {
    format!(
        "https://site{}.example/{group}/page?id={row}",
        (group * 7919 + row) % 1013
    )
}

fn id(group: usize, row: usize) -> i64 {
    ((group * ROWS + row) as i64) * 7 - 50_000
}

/// Nulls every 7th row; 40 distinct values.
fn small(row: usize) -> Option<i32> {
    (!row.is_multiple_of(7)).then_some((row % 40) as i32 - 5)
}

fn tag(row: usize) -> Option<String> {
    (!row.is_multiple_of(5)).then(|| format!("tag{}", row % 10))
}

/// A file of `ROW_GROUPS` row groups of `ROWS` rows with `codec`, small data pages (so
/// chunks have many pages and page indexes), key-value metadata, and parquet-rs's own
/// Bloom filter on `tag`.
fn write_file(path: &Path, codec: Compression) {
    let schema = Arc::new(parse_message_type(SCHEMA).unwrap());
    let props = WriterProperties::builder()
        .set_compression(codec)
        .set_data_page_row_count_limit(500)
        .set_write_batch_size(500)
        .set_key_value_metadata(Some(vec![
            KeyValue::new("origin".to_string(), "bloomforge test".to_string()),
            KeyValue::new("ARROW:schema".to_string(), "not really".to_string()),
        ]))
        .set_column_bloom_filter_enabled(ColumnPath::from("tag"), true)
        .set_created_by("bloomforge test writer".to_string())
        .build();
    let mut w =
        SerializedFileWriter::new(File::create(path).unwrap(), schema, Arc::new(props)).unwrap();
    for g in 0..ROW_GROUPS {
        let mut rg = w.next_row_group().unwrap();
        let urls: Vec<ByteArray> = (0..ROWS)
            .map(|r| ByteArray::from(url(g, r).as_str()))
            .collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&urls, None, None)
            .unwrap();
        col.close().unwrap();

        let ids: Vec<i64> = (0..ROWS).map(|r| id(g, r)).collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int64Type>()
            .write_batch(&ids, None, None)
            .unwrap();
        col.close().unwrap();

        let defs: Vec<i16> = (0..ROWS).map(|r| i16::from(small(r).is_some())).collect();
        let smalls: Vec<i32> = (0..ROWS).filter_map(small).collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<Int32Type>()
            .write_batch(&smalls, Some(&defs), None)
            .unwrap();
        col.close().unwrap();

        let defs: Vec<i16> = (0..ROWS).map(|r| i16::from(tag(r).is_some())).collect();
        let tags: Vec<ByteArray> = (0..ROWS)
            .filter_map(tag)
            .map(|t| ByteArray::from(t.as_str()))
            .collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&tags, Some(&defs), None)
            .unwrap();
        col.close().unwrap();

        // nested.inner: group and leaf present on even rows, group only on rows = 1 mod 4.
        let defs: Vec<i16> = (0..ROWS)
            .map(|r| if r % 2 == 0 { 2 } else { (r % 4 == 1) as i16 })
            .collect();
        let inner: Vec<ByteArray> = (0..ROWS)
            .step_by(2)
            .map(|r| ByteArray::from(format!("in{r}").as_str()))
            .collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<ByteArrayType>()
            .write_batch(&inner, Some(&defs), None)
            .unwrap();
        col.close().unwrap();

        let flags: Vec<bool> = (0..ROWS).map(|r| r % 3 == 0).collect();
        let mut col = rg.next_column().unwrap().unwrap();
        col.typed::<BoolType>()
            .write_batch(&flags, None, None)
            .unwrap();
        col.close().unwrap();
        rg.close().unwrap();
    }
    w.close().unwrap();
}

fn dir() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

fn metadata(path: &Path) -> ParquetMetaData {
    let options = ReadOptionsBuilder::new()
        .with_page_index()
        .with_encoding_stats_as_mask(false)
        .build();
    SerializedFileReader::new_with_options(File::open(path).unwrap(), options)
        .unwrap()
        .metadata()
        .clone()
}

/// Every row of every row group, as the parquet crate's record reader decodes them.
fn rows(path: &Path) -> Vec<Vec<Row>> {
    let reader = SerializedFileReader::new(File::open(path).unwrap()).unwrap();
    (0..reader.num_row_groups())
        .map(|g| {
            reader
                .get_row_group(g)
                .unwrap()
                .get_row_iter(None)
                .unwrap()
                .map(|r| r.unwrap())
                .collect()
        })
        .collect()
}

/// The stored filter of column `col` in row group `rg`, read by the parquet crate.
fn sbbf(path: &Path, rg: usize, col: usize) -> Option<Sbbf> {
    let file = File::open(path).unwrap();
    let reader = SerializedFileReader::new(file.try_clone().unwrap()).unwrap();
    let chunk = reader.metadata().row_group(rg).column(col).clone();
    Sbbf::read_from_column_chunk(&chunk, &file).unwrap()
}

fn bitset(filter: &Sbbf) -> Vec<u8> {
    let mut out = Vec::new();
    filter.write_bitset(&mut out).unwrap();
    out
}

const URL: usize = 0;
const ID: usize = 1;
const SMALL: usize = 2;
const TAG: usize = 3;

/// Everything but the filters is the input's: schema, row groups, rows, chunks' bytes
/// and metadata, page indexes, key-value metadata, `created_by`.
fn assert_same_data(input: &Path, output: &Path) {
    let (a, b) = (metadata(input), metadata(output));
    let (fa, fb) = (a.file_metadata(), b.file_metadata());
    assert_eq!(fa.schema(), fb.schema());
    assert_eq!(fa.num_rows(), fb.num_rows());
    assert_eq!(fa.key_value_metadata(), fb.key_value_metadata());
    assert_eq!(fa.created_by(), fb.created_by());
    assert_eq!(a.num_row_groups(), b.num_row_groups());
    let (ca_index, cb_index) = (a.column_index().unwrap(), b.column_index().unwrap());
    let (oa_index, ob_index) = (a.offset_index().unwrap(), b.offset_index().unwrap());
    let (bytes_a, bytes_b) = (
        std::fs::read(input).unwrap(),
        std::fs::read(output).unwrap(),
    );
    for (g, (ra, rb)) in a.row_groups().iter().zip(b.row_groups()).enumerate() {
        assert_eq!(ra.num_rows(), rb.num_rows(), "row group {g}");
        assert_eq!(ra.total_byte_size(), rb.total_byte_size(), "row group {g}");
        for (c, (ca, cb)) in ra.columns().iter().zip(rb.columns()).enumerate() {
            let at = format!("row group {g}, column {c}");
            assert_eq!(ca.compression(), cb.compression(), "{at}");
            assert_eq!(ca.compressed_size(), cb.compressed_size(), "{at}");
            assert_eq!(ca.uncompressed_size(), cb.uncompressed_size(), "{at}");
            assert_eq!(ca.num_values(), cb.num_values(), "{at}");
            assert_eq!(
                ca.encodings().collect::<Vec<_>>(),
                cb.encodings().collect::<Vec<_>>(),
                "{at}"
            );
            assert_eq!(ca.page_encoding_stats(), cb.page_encoding_stats(), "{at}");
            assert!(ca.page_encoding_stats().is_some(), "{at}");
            assert_eq!(ca.statistics(), cb.statistics(), "{at}");
            // The chunk's bytes, copied as they are.
            let range = |m: &parquet::file::metadata::ColumnChunkMetaData| {
                let start = m.dictionary_page_offset().unwrap_or(m.data_page_offset()) as usize;
                start..start + m.compressed_size() as usize
            };
            assert!(
                bytes_a[range(ca)] == bytes_b[range(cb)],
                "{at}: chunk bytes differ"
            );
            // The page indexes, their page offsets moved with the chunk.
            assert_eq!(ca_index[g][c], cb_index[g][c], "{at}");
            let (oa, ob) = (&oa_index[g][c], &ob_index[g][c]);
            assert!(oa.page_locations.len() > 1, "{at}: several pages");
            let shift = range(cb).start as i64 - range(ca).start as i64;
            for (pa, pb) in oa.page_locations.iter().zip(&ob.page_locations) {
                assert_eq!(pa.offset + shift, pb.offset, "{at}");
                assert_eq!(pa.compressed_page_size, pb.compressed_page_size, "{at}");
                assert_eq!(pa.first_row_index, pb.first_row_index, "{at}");
            }
        }
    }
    // The decoded rows, row group by row group.
    assert_eq!(rows(input), rows(output));
}

/// No false negatives, through the parquet crate's own probe (`Sbbf::check`, hashing as
/// Parquet readers do) and through `probe`.
fn assert_no_false_negatives(path: &Path) {
    for g in 0..ROW_GROUPS {
        let urls = sbbf(path, g, URL).unwrap();
        let ids = sbbf(path, g, ID).unwrap();
        let smalls = sbbf(path, g, SMALL).unwrap();
        for r in 0..ROWS {
            assert!(
                urls.check(&ByteArray::from(url(g, r).as_str())),
                "url {g}/{r}"
            );
            assert!(ids.check(&id(g, r)), "id {g}/{r}");
            if let Some(v) = small(r) {
                assert!(smalls.check(&v), "small {g}/{r}");
            }
        }
    }
    for r in (0..ROWS).step_by(397) {
        let g = r % ROW_GROUPS;
        let answers = probe(path, "url", &url(g, r).into()).unwrap();
        assert_eq!(answers.len(), ROW_GROUPS);
        assert_eq!(answers[g].answer, ProbeAnswer::MayContain, "url {g}/{r}");
        assert_eq!(answers[g].rows, ROWS as u64);
        let answers = probe(path, "id", &ProbeValue::Text(id(g, r).to_string())).unwrap();
        assert_eq!(answers[g].answer, ProbeAnswer::MayContain, "id {g}/{r}");
        let answers = probe(path, "id", &id(g, r).into()).unwrap();
        assert_eq!(answers[g].answer, ProbeAnswer::MayContain, "id {g}/{r}");
    }
}

/// Absent values are excluded by >= 95 % of the row groups' filters.
///
/// Each of the `N = ABSENT * ROW_GROUPS` probes of a value no row group holds is a false
/// positive with probability at most the filter's own false-positive rate, which the
/// report gives from its fill and which is checked to be <= 0.01 (ideal hashing: the
/// fixed values behave as random ones). The test fails only if more than 5 % of the
/// probes pass: `P(Binomial(N, 0.01) > 0.05 N)`, computed below, is below 1e-6.
fn assert_absent_values_excluded(path: &Path, report: &IndexReport) {
    const ABSENT: usize = 400;
    let n = (ABSENT * ROW_GROUPS) as u64;
    let limit = n / 20;
    assert!(binomial_upper_tail(limit + 1, n, 0.01) < 1e-6);
    for c in &report.columns {
        assert!(c.max_estimated_false_pos <= 0.01, "{c:?}");
    }
    let mut passed = [0u64; 3];
    for i in 0..ABSENT {
        let absent_url = format!("https://elsewhere.example/{i}");
        let absent_id = 1_000_000_000 + i as i64;
        for g in 0..ROW_GROUPS {
            passed[0] += u64::from(
                sbbf(path, g, URL)
                    .unwrap()
                    .check(&ByteArray::from(absent_url.as_str())),
            );
            passed[1] += u64::from(sbbf(path, g, ID).unwrap().check(&absent_id));
        }
    }
    // Through `probe` too, for the int32 column (values 100.. never occur).
    for i in 0..ABSENT {
        let answers = probe(path, "small", &ProbeValue::Int(100 + i as i64)).unwrap();
        passed[2] += answers
            .iter()
            .filter(|a| a.answer == ProbeAnswer::MayContain)
            .count() as u64;
    }
    for (column, p) in ["url", "id", "small"].iter().zip(passed) {
        assert!(p <= limit, "{column}: {p} of {n} absent probes passed");
    }
}

fn index(input: &Path, output: &Path, columns: &[&str]) -> IndexReport {
    index_file(input, output, &IndexOptions::new(columns.iter().copied())).unwrap()
}

#[test]
fn indexes_snappy_and_zstd_files_copying_the_data() {
    let codecs = [
        Compression::SNAPPY,
        Compression::ZSTD(ZstdLevel::try_new(3).unwrap()),
    ];
    for codec in codecs {
        let d = dir();
        let (input, output) = (d.path().join("in.parquet"), d.path().join("out.parquet"));
        write_file(&input, codec);
        let before = std::fs::read(&input).unwrap();
        let report = index(&input, &output, &["url", "id", "small"]);
        assert_eq!(
            std::fs::read(&input).unwrap(),
            before,
            "the input is read only"
        );
        assert_eq!(report.row_groups, ROW_GROUPS);
        assert_eq!(report.rows, (ROW_GROUPS * ROWS) as u64);
        assert_eq!(report.filters_kept, ROW_GROUPS, "tag's parquet-rs filters");
        assert_eq!(
            report.output_bytes,
            std::fs::metadata(&output).unwrap().len()
        );
        let names: Vec<&str> = report.columns.iter().map(|c| c.column.as_str()).collect();
        assert_eq!(names, ["url", "id", "small"]);
        for c in &report.columns {
            assert_eq!(c.row_groups_indexed, ROW_GROUPS, "{c:?}");
            assert_eq!(c.row_groups_kept, 0);
            assert!(
                c.estimated_false_pos > 0.0 && c.estimated_false_pos <= 0.01,
                "{c:?}"
            );
        }
        // Exact distinct counts: every url and id is distinct, `small` has 40 values.
        assert_eq!(
            report.columns[0].distinct_values,
            (ROW_GROUPS * ROWS) as u64
        );
        assert_eq!(report.columns[2].distinct_values, 40 * ROW_GROUPS as u64);
        let meta = metadata(&output);
        for (g, rg) in meta.row_groups().iter().enumerate() {
            // The footer records the codec, not the level.
            let kind = |c: Compression| std::mem::discriminant(&c);
            assert_eq!(
                kind(rg.column(0).compression()),
                kind(codec),
                "row group {g}"
            );
            for (c, chunk) in rg.columns().iter().enumerate() {
                let has = chunk.bloom_filter_offset().is_some();
                assert_eq!(has, c <= TAG, "row group {g}, column {c}");
            }
            // parquet-rs's filter on `tag`, kept bit for bit.
            assert_eq!(
                bitset(&sbbf(&output, g, TAG).unwrap()),
                bitset(&sbbf(&input, g, TAG).unwrap())
            );
        }
        assert_same_data(&input, &output);
        assert_no_false_negatives(&output);
        assert_absent_values_excluded(&output, &report);
    }
}

/// The stored bitset is core's split-block filter of the row group's values, sized by
/// `parquet_num_blocks` for the exact distinct count.
#[test]
fn the_stored_bitset_is_cores_filter_of_the_values() {
    let d = dir();
    let (input, output) = (d.path().join("in.parquet"), d.path().join("out.parquet"));
    write_file(&input, Compression::SNAPPY);
    let report = index_file(
        &input,
        &output,
        &IndexOptions::new(["url", "small"]).false_pos(0.001),
    )
    .unwrap();
    let mut url_bytes = 0;
    for g in 0..ROW_GROUPS {
        let blocks = parquet_num_blocks(ROWS as u64, 0.001).unwrap();
        let mut want = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
        for r in 0..ROWS {
            want.insert_hash(parquet_hash(url(g, r).as_bytes()));
        }
        let got = bitset(&sbbf(&output, g, URL).unwrap());
        assert_eq!(got, want.to_parquet_bytes(), "row group {g}");
        assert!(got.len().is_power_of_two());
        url_bytes += got.len() as u64;

        let blocks = parquet_num_blocks(40, 0.001).unwrap();
        let mut want = SplitBlockBloomFilter::with_num_blocks(blocks).unwrap();
        for v in (0..ROWS).filter_map(small) {
            want.insert_hash(parquet_hash(&v.to_le_bytes()));
        }
        assert_eq!(
            bitset(&sbbf(&output, g, SMALL).unwrap()),
            want.to_parquet_bytes()
        );
    }
    assert_eq!(report.columns[0].filter_bytes, url_bytes);
    // `filters` reads the same filters back.
    let listed = filters(&output).unwrap();
    assert_eq!(listed.len(), ROW_GROUPS * 6);
    let url0 = &listed[0];
    assert_eq!((url0.row_group, url0.column.as_str()), (0, "url"));
    assert_eq!(url0.physical_type, "BYTE_ARRAY");
    assert_eq!(url0.rows, ROWS as u64);
    let f = url0.filter.unwrap();
    assert_eq!(f.bitset_bytes, url_bytes / ROW_GROUPS as u64);
    assert!(f.estimated_false_pos <= 0.001, "{f:?}");
    // The fill estimate of the distinct count is within a few percent.
    assert!(
        (f.estimated_distinct / ROWS as f64 - 1.0).abs() < 0.05,
        "{f:?}"
    );
    let id0 = &listed[1];
    assert_eq!(
        (id0.column.as_str(), id0.physical_type.as_str()),
        ("id", "INT64")
    );
    assert!(id0.filter.is_none());
    assert!(listed[5].filter.is_none() && listed[5].column == "flag");
}

#[test]
fn existing_filters_are_replaced_unless_kept() {
    let d = dir();
    let input = d.path().join("in.parquet");
    write_file(&input, Compression::SNAPPY);
    let original: Vec<Vec<u8>> = (0..ROW_GROUPS)
        .map(|g| bitset(&sbbf(&input, g, TAG).unwrap()))
        .collect();

    // Named: bloomforge's filter, sized for tag's 8 values. parquet-rs folds its own
    // filter down to its target rate, here to one block, the size bloomforge picks at
    // 1 %: then the bits are the same (one hash, one probe).
    let same_size = d.path().join("same-size.parquet");
    let report = index(&input, &same_size, &["tag"]);
    assert_eq!(report.columns[0].row_groups_indexed, ROW_GROUPS);
    assert_eq!(report.columns[0].distinct_values, 8 * ROW_GROUPS as u64);
    for (g, before) in original.iter().enumerate() {
        assert_eq!(
            before.len(),
            32 * parquet_num_blocks(8, 0.01).unwrap() as usize
        );
        assert_eq!(&bitset(&sbbf(&same_size, g, TAG).unwrap()), before);
    }
    // At 1e-6 bloomforge's filter is larger: replaced.
    let replaced = d.path().join("replaced.parquet");
    let options = IndexOptions::new(["tag"]).false_pos(1e-6);
    let report = index_file(&input, &replaced, &options).unwrap();
    assert_eq!(report.columns[0].row_groups_indexed, ROW_GROUPS);
    for (g, before) in original.iter().enumerate() {
        let after = bitset(&sbbf(&replaced, g, TAG).unwrap());
        assert_eq!(
            after.len(),
            32 * parquet_num_blocks(8, 1e-6).unwrap() as usize
        );
        assert!(after.len() > before.len());
        let filter = sbbf(&replaced, g, TAG).unwrap();
        for t in (0..ROWS).filter_map(tag) {
            assert!(filter.check(&ByteArray::from(t.as_str())));
        }
    }

    // Named with keep_existing: the chunks that have a filter keep it.
    let kept = d.path().join("kept.parquet");
    let options = IndexOptions::new(["tag", "url"]).keep_existing(true);
    let report = index_file(&input, &kept, &options).unwrap();
    assert_eq!(report.columns[0].row_groups_kept, ROW_GROUPS);
    assert_eq!(report.columns[0].row_groups_indexed, 0);
    assert_eq!(report.columns[0].filter_bytes, 0);
    assert_eq!(report.columns[1].row_groups_indexed, ROW_GROUPS);
    for (g, before) in original.iter().enumerate() {
        assert_eq!(&bitset(&sbbf(&kept, g, TAG).unwrap()), before);
    }
    assert_same_data(&input, &kept);

    // Indexing an indexed file again gives the same bytes.
    let twice = d.path().join("twice.parquet");
    let options = IndexOptions::new(["tag"]).false_pos(1e-6);
    index_file(&replaced, &twice, &options).unwrap();
    let (a, b) = (
        std::fs::read(&replaced).unwrap(),
        std::fs::read(&twice).unwrap(),
    );
    let first = a.iter().zip(&b).position(|(x, y)| x != y);
    assert!(
        a == b,
        "lengths {} and {}, first difference at {first:?}",
        a.len(),
        b.len()
    );
}

#[test]
fn in_place_replaces_the_file_and_keeps_its_permissions() {
    use std::os::unix::fs::PermissionsExt;
    let d = dir();
    let path = d.path().join("data.parquet");
    write_file(&path, Compression::SNAPPY);
    let copy = d.path().join("copy.parquet");
    std::fs::copy(&path, &copy).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o640)).unwrap();
    let report = index(&path, &path, &["url"]);
    assert_eq!(report.columns[0].row_groups_indexed, ROW_GROUPS);
    let mode = std::fs::metadata(&path).unwrap().permissions().mode();
    assert_eq!(mode & 0o777, 0o640);
    assert!(sbbf(&path, 0, URL).is_some());
    assert_same_data(&copy, &path);
    // Nothing else is left in the directory.
    let mut names: Vec<String> = std::fs::read_dir(d.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    assert_eq!(names, ["copy.parquet", "data.parquet"]);
}

/// Runs `index_file` expecting an error: the input is unchanged, no output and no
/// temporary file is left.
fn index_error(input: &Path, options: &IndexOptions) -> Error {
    let d = input.parent().unwrap();
    let before = std::fs::read(input).unwrap();
    let listing = |d: &Path| {
        let mut v: Vec<PathBuf> = std::fs::read_dir(d)
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        v.sort();
        v
    };
    let files = listing(d);
    let output = d.join("never.parquet");
    let err = index_file(input, &output, options).unwrap_err();
    assert_eq!(std::fs::read(input).unwrap(), before, "{err}");
    assert_eq!(listing(d), files, "{err}");
    // In place too.
    let err_in_place = index_file(input, input, options).unwrap_err();
    assert_eq!(err_in_place.to_string(), err.to_string());
    assert_eq!(std::fs::read(input).unwrap(), before, "{err}");
    assert_eq!(listing(d), files, "{err}");
    let message = err.to_string();
    assert!(!message.contains('\n'), "one line: {message}");
    err
}

#[test]
fn errors_name_the_file_and_leave_it_alone() {
    let d = dir();
    let input = d.path().join("in.parquet");
    write_file(&input, Compression::SNAPPY);
    let shown = input.display().to_string();

    let err = index_error(&input, &IndexOptions::new(["nope"]));
    assert!(matches!(err, Error::InvalidParquet { .. }), "{err:?}");
    assert_eq!(
        err.to_string(),
        format!(
            "{shown}: no column \"nope\"; the file has: url, id, small, tag, nested.inner, flag"
        )
    );

    for name in ["nested", "nested.inner"] {
        let err = index_error(&input, &IndexOptions::new([name]));
        let message = err.to_string();
        assert!(
            message.starts_with(&format!("{shown}: column \"{name}\" is nested")),
            "{message}"
        );
    }

    let err = index_error(&input, &IndexOptions::new(["flag"]));
    assert!(
        err.to_string().contains("unsupported type BOOLEAN"),
        "{err}"
    );

    let err = index_error(&input, &IndexOptions::new(["url"]).false_pos(1.5));
    assert!(matches!(err, Error::Core(_)), "{err:?}");
    let err = index_error(&input, &IndexOptions::new(Vec::<String>::new()));
    assert!(matches!(err, Error::InvalidArgument(_)), "{err:?}");

    // Not Parquet at all, and a truncated file.
    let text = d.path().join("notes.txt");
    std::fs::write(&text, "hello, this is not a Parquet file\n").unwrap();
    let err = index_error(&text, &IndexOptions::new(["url"]));
    assert!(matches!(err, Error::Parquet { .. }), "{err:?}");
    assert!(
        err.to_string()
            .starts_with(&format!("{}: ", text.display())),
        "{err}"
    );
    let truncated = d.path().join("truncated.parquet");
    let bytes = std::fs::read(&input).unwrap();
    std::fs::write(&truncated, &bytes[..bytes.len() / 2]).unwrap();
    let err = index_error(&truncated, &IndexOptions::new(["url"]));
    assert!(
        err.to_string()
            .starts_with(&format!("{}: ", truncated.display())),
        "{err}"
    );
    // Missing input.
    let err = index_file(
        d.path().join("missing.parquet"),
        d.path().join("o.parquet"),
        &IndexOptions::new(["url"]),
    )
    .unwrap_err();
    assert!(matches!(err, Error::Io { .. }), "{err:?}");

    // Probes: a value that does not fit the column is refused, naming both.
    let err = probe(&input, "small", &"3000000000".into()).unwrap_err();
    assert_eq!(
        err.to_string(),
        format!("{shown}: column \"small\" is INT32: 3000000000 is out of range (-2147483648..=2147483647)")
    );
    let err = probe(&input, "id", &"abc".into()).unwrap_err();
    assert!(
        err.to_string().contains("\"abc\" is not an integer"),
        "{err}"
    );
    let err = probe(&input, "nope", &"abc".into()).unwrap_err();
    assert!(err.to_string().contains("no column \"nope\""), "{err}");
    let err = filters(&text).unwrap_err();
    assert!(matches!(err, Error::Parquet { .. }), "{err:?}");
}

#[test]
fn probe_reports_chunks_without_filters() {
    let d = dir();
    let input = d.path().join("in.parquet");
    write_file(&input, Compression::SNAPPY);
    let answers = probe(&input, "url", &url(0, 0).into()).unwrap();
    assert_eq!(answers.len(), ROW_GROUPS);
    assert!(answers.iter().all(|a| a.answer == ProbeAnswer::NoFilter));
    // parquet-rs's own filter on `tag` answers through core's probe as through its own.
    let answers = probe(&input, "tag", &"tag3".into()).unwrap();
    assert!(answers.iter().all(|a| a.answer == ProbeAnswer::MayContain));
}
