// Checks a directory of interoperability fixtures (the layout of
// crates/interop/tests/data/README.md) against the real Guava and Spark libraries.
//
//   java -cp CLASSES:guava.jar:spark-sketch.jar RoundTrip DIR [--keys KEY_DIR]
//
// For every row of DIR/fixtures.tsv:
//   (a) the library's readFrom reads NAME.bin, and writes back exactly those bytes;
//   (b) the filter read answers mightContain = true for every key of the key file;
//   (c) its mightContain on every probe equals NAME.answers (the answers of the writer);
//   (d) the library builds its own filter from the row's parameters and all the keys, and
//       its writeTo bytes equal NAME.bin exactly (and num_bits is its size).
// Prints `ok NAME` or `FAIL NAME: reason` per row; exits 1 if any row failed.
// Key and probe files are looked up in DIR, then in KEY_DIR when given.

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

public final class RoundTrip {
    static final class Failure extends Exception {
        Failure(String message) {
            super(message);
        }
    }

    private final Path dir;
    private final Path keyDir;
    private final Map<String, List<Fixtures.Key>> keyFiles = new HashMap<>();

    RoundTrip(Path dir, Path keyDir) {
        this.dir = dir;
        this.keyDir = keyDir;
    }

    List<Fixtures.Key> keys(String name) throws Exception {
        List<Fixtures.Key> cached = keyFiles.get(name);
        if (cached != null) {
            return cached;
        }
        if (name.contains("/") || name.contains("\\")) {
            throw new Failure("key file names a path: " + name);
        }
        Path p = dir.resolve(name);
        if (!Files.exists(p) && keyDir != null) {
            p = keyDir.resolve(name);
        }
        if (!Files.exists(p)) {
            throw new Failure("no key file " + name);
        }
        List<Fixtures.Key> keys = Fixtures.readKeys(p);
        keyFiles.put(name, keys);
        return keys;
    }

    /** Where two serialized filters differ first, named by the field of the format. */
    static String describeDifference(String system, byte[] expected, byte[] actual) {
        int n = Math.min(expected.length, actual.length);
        int i = 0;
        while (i < n && expected[i] == actual[i]) {
            i++;
        }
        if (i == n) {
            return "the library writes " + expected.length + " bytes, the file has " + actual.length
                    + " (equal up to the shorter)";
        }
        int differing = 0;
        for (int j = i; j < n; j++) {
            if (expected[j] != actual[j]) {
                differing++;
            }
        }
        // Guava: byte strategy ordinal, unsigned byte hash functions, int words, longs.
        // Spark V1: int version, int hash functions, int words, longs.
        // Spark V2: int version, int hash functions, int seed, int words, longs.
        String[] fields;
        int[] ends;
        if (system.equals("guava")) {
            fields = new String[] {"strategy ordinal", "number of hash functions", "number of words"};
            ends = new int[] {1, 2, 6};
        } else if (expected.length >= 4 && java.nio.ByteBuffer.wrap(expected, 0, 4).getInt() == 2) {
            fields = new String[] {"version", "number of hash functions", "seed", "number of words"};
            ends = new int[] {4, 8, 12, 16};
        } else {
            fields = new String[] {"version", "number of hash functions", "number of words"};
            ends = new int[] {4, 8, 12};
        }
        String where = null;
        for (int f = 0; f < fields.length && where == null; f++) {
            if (i < ends[f]) {
                where = fields[f];
            }
        }
        if (where == null) {
            long word = (i - ends[ends.length - 1]) / 8;
            where = "word " + word + " of the bits, bits " + (64 * word) + ".." + (64 * word + 63);
        }
        return String.format("the library writes %d bytes, the file has %d; %d bytes differ, the first at"
                + " byte %d (%s): library 0x%02x, file 0x%02x", expected.length, actual.length, differing, i,
                where, expected[i] & 0xff, actual[i] & 0xff);
    }

    void check(Fixtures.Row row) throws Exception {
        List<Fixtures.Key> keys = keys(row.keys);
        List<Fixtures.Key> probes = keys(row.probes);
        Path binPath = dir.resolve(row.name + ".bin");
        Path answersPath = dir.resolve(row.name + ".answers");
        if (!Files.exists(binPath)) {
            throw new Failure("no " + binPath.getFileName());
        }
        if (!Files.exists(answersPath)) {
            throw new Failure("no " + answersPath.getFileName());
        }
        byte[] bin = Files.readAllBytes(binPath);
        String answers = new String(Files.readAllBytes(answersPath), StandardCharsets.US_ASCII);
        if (answers.endsWith("\n")) {
            answers = answers.substring(0, answers.length() - 1);
        }
        if (answers.length() != probes.size() || !answers.matches("[01]*")) {
            throw new Failure(answersPath.getFileName() + " should be " + probes.size()
                    + " characters '0'/'1' (one line), it has " + answers.length() + " characters");
        }

        // Every check runs; the failures are reported together.
        List<String> problems = new ArrayList<>();

        // (a) read with the library.
        Fixtures.Filter read = null;
        try {
            read = Fixtures.read(row, keys, bin);
        } catch (Exception e) {
            problems.add("readFrom throws " + e);
        }
        if (read != null) {
            byte[] reread = read.bytes();
            if (!java.util.Arrays.equals(reread, bin)) {
                problems.add("read and written back, the filter is not the file's bytes: "
                        + describeDifference(row.system, reread, bin));
            }

            // (b) no false negative.
            int missing = 0;
            Fixtures.Key firstMissing = null;
            for (Fixtures.Key k : keys) {
                if (!read.mightContain(k)) {
                    if (missing++ == 0) {
                        firstMissing = k;
                    }
                }
            }
            if (missing > 0) {
                problems.add(missing + " of " + keys.size() + " keys not found, the first "
                        + firstMissing.line());
            }

            // (c) the same answers on the probes.
            String ours = Fixtures.answers(read, probes);
            int differ = 0;
            int first = -1;
            for (int i = 0; i < ours.length(); i++) {
                if (ours.charAt(i) != answers.charAt(i)) {
                    if (differ++ == 0) {
                        first = i;
                    }
                }
            }
            if (differ > 0) {
                problems.add(differ + " of " + probes.size() + " probe answers differ; the first: probe "
                        + (first + 1) + " " + probes.get(first).line() + ": the library says "
                        + ours.charAt(first) + ", the answers file " + answers.charAt(first));
            }
        }

        // (d) the library's own filter from the same parameters and keys.
        Fixtures.Filter built = null;
        try {
            built = Fixtures.create(row, keys);
        } catch (Exception e) {
            problems.add("the library cannot create the filter of this row: " + e);
        }
        if (built != null) {
            for (Fixtures.Key k : keys) {
                built.put(k);
            }
            byte[] expected = built.bytes();
            if (!java.util.Arrays.equals(expected, bin)) {
                problems.add("not the filter the library builds from the same parameters and keys: "
                        + describeDifference(row.system, expected, bin));
            }
            if (built.numBits() != row.numBits) {
                problems.add("num_bits says " + row.numBits + ", the library's filter has " + built.numBits());
            }
        }
        if (!problems.isEmpty()) {
            throw new Failure(String.join("; ", problems));
        }
    }

    public static void main(String[] args) throws Exception {
        Path dir = null;
        Path keyDir = null;
        for (int i = 0; i < args.length; i++) {
            if (args[i].equals("--keys") && i + 1 < args.length) {
                keyDir = Paths.get(args[++i]);
            } else if (dir == null && !args[i].startsWith("--")) {
                dir = Paths.get(args[i]);
            } else {
                dir = null;
                break;
            }
        }
        if (dir == null) {
            System.err.println("usage: RoundTrip DIR [--keys KEY_DIR]");
            System.exit(2);
        }
        List<Fixtures.Row> rows;
        try {
            rows = Fixtures.readManifest(dir.resolve("fixtures.tsv"));
        } catch (Exception e) {
            System.out.println("FAIL fixtures.tsv: " + e);
            System.exit(1);
            return;
        }
        if (rows.isEmpty()) {
            System.out.println("FAIL fixtures.tsv: no fixtures");
            System.exit(1);
        }
        RoundTrip rt = new RoundTrip(dir, keyDir);
        List<String> failed = new ArrayList<>();
        for (Fixtures.Row row : rows) {
            try {
                rt.check(row);
                System.out.println("ok " + row.name);
            } catch (Failure e) {
                failed.add(row.name);
                System.out.println("FAIL " + row.name + ": " + e.getMessage());
            } catch (Exception e) {
                failed.add(row.name);
                System.out.println("FAIL " + row.name + ": " + e);
            }
        }
        System.out.println(dir + ": " + (rows.size() - failed.size()) + " of " + rows.size() + " fixtures ok");
        System.exit(failed.isEmpty() ? 0 : 1);
    }
}
