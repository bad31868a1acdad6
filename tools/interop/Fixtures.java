// Writes the interoperability fixtures of bloomforge-interop with the real libraries:
// Guava's com.google.common.hash.BloomFilter and Spark's
// org.apache.spark.util.sketch.BloomFilter.
//
//   java -cp CLASSES:guava.jar:spark-sketch.jar Fixtures OUT_DIR
//
// The layout is described in crates/interop/tests/data/README.md. Everything is derived
// from fixed seeds, so two runs write the same bytes. The shared pieces (key files, the
// manifest, building a filter from a manifest row) live here and are used by RoundTrip too.

import com.google.common.hash.Funnel;
import com.google.common.hash.Funnels;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.lang.reflect.Field;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.nio.ByteBuffer;
import java.nio.CharBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;

public final class Fixtures {
    // ------------------------------------------------------------------------------------
    // Keys
    // ------------------------------------------------------------------------------------

    /** One typed key: 's' (UTF-8 string), 'b' (byte array) or 'l' (64-bit long). */
    static final class Key {
        final char type;
        final byte[] bytes; // 's' and 'b': the UTF-8 bytes / the array
        final String string; // 's' only
        final long value; // 'l' only

        private Key(char type, byte[] bytes, String string, long value) {
            this.type = type;
            this.bytes = bytes;
            this.string = string;
            this.value = value;
        }

        static Key ofString(String s) {
            return new Key('s', s.getBytes(StandardCharsets.UTF_8), s, 0);
        }

        static Key ofBytes(byte[] b) {
            return new Key('b', b.clone(), null, 0);
        }

        static Key ofLong(long v) {
            return new Key('l', null, null, v);
        }

        /** The line of a key file. */
        String line() {
            return type == 'l' ? "l:" + value : type + ":" + hex(bytes);
        }

        /**
         * What the key is to Spark, where a string is hashed as its UTF-8 bytes: the same
         * identity for `s:` and `b:` keys with the same bytes. Used to keep probes apart
         * from keys. (Stricter than needed for the single-kind files, harmless there.)
         */
        String identity() {
            return type == 'l' ? "l:" + value : "x:" + hex(bytes);
        }

        static Key parse(String line) {
            if (line.length() < 2 || line.charAt(1) != ':') {
                throw new IllegalArgumentException("not a typed key: " + quote(line));
            }
            String body = line.substring(2);
            switch (line.charAt(0)) {
                case 'l':
                    return ofLong(Long.parseLong(body));
                case 'b':
                    return ofBytes(unhex(body));
                case 's': {
                    byte[] utf8 = unhex(body);
                    String s;
                    try {
                        s = StandardCharsets.UTF_8.newDecoder()
                                .onMalformedInput(CodingErrorAction.REPORT)
                                .onUnmappableCharacter(CodingErrorAction.REPORT)
                                .decode(ByteBuffer.wrap(utf8)).toString();
                    } catch (CharacterCodingException e) {
                        throw new IllegalArgumentException("string key is not UTF-8: " + quote(line));
                    }
                    return new Key('s', utf8, s, 0);
                }
                default:
                    throw new IllegalArgumentException("unknown key type: " + quote(line));
            }
        }
    }

    static String quote(String s) {
        return s.length() > 80 ? "'" + s.substring(0, 80) + "...'" : "'" + s + "'";
    }

    static String hex(byte[] b) {
        char[] digits = "0123456789abcdef".toCharArray();
        StringBuilder sb = new StringBuilder(b.length * 2);
        for (byte x : b) {
            sb.append(digits[(x >> 4) & 0xf]).append(digits[x & 0xf]);
        }
        return sb.toString();
    }

    static byte[] unhex(String s) {
        if (s.length() % 2 != 0) {
            throw new IllegalArgumentException("odd number of hex digits: " + quote(s));
        }
        byte[] out = new byte[s.length() / 2];
        for (int i = 0; i < out.length; i++) {
            int hi = Character.digit(s.charAt(2 * i), 16);
            int lo = Character.digit(s.charAt(2 * i + 1), 16);
            if (hi < 0 || lo < 0) {
                throw new IllegalArgumentException("not hex: " + quote(s));
            }
            out[i] = (byte) ((hi << 4) | lo);
        }
        return out;
    }

    static List<Key> readKeys(Path file) throws IOException {
        List<Key> keys = new ArrayList<>();
        int lineNo = 0;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            lineNo++;
            try {
                keys.add(Key.parse(line));
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(file.getFileName() + ":" + lineNo + ": " + e.getMessage());
            }
        }
        return keys;
    }

    static void writeKeys(Path file, List<Key> keys) throws IOException {
        StringBuilder sb = new StringBuilder();
        for (Key k : keys) {
            sb.append(k.line()).append('\n');
        }
        Files.write(file, sb.toString().getBytes(StandardCharsets.UTF_8));
    }

    // ------------------------------------------------------------------------------------
    // The manifest
    // ------------------------------------------------------------------------------------

    static final String[] COLUMNS = {
        "name", "system", "version", "expected_items", "fpp", "num_bits", "seed", "keys", "probes"
    };

    /** One row of fixtures.tsv. */
    static final class Row {
        final String name;
        final String system; // "guava" or "spark"
        final String version; // guava: strategy name; spark: "1" or "2"
        final long expectedItems;
        final double fpp;
        long numBits; // informational; filled in when the filter is built
        final int seed;
        final String keys;
        final String probes;

        Row(String name, String system, String version, long expectedItems, double fpp,
                long numBits, int seed, String keys, String probes) {
            this.name = name;
            this.system = system;
            this.version = version;
            this.expectedItems = expectedItems;
            this.fpp = fpp;
            this.numBits = numBits;
            this.seed = seed;
            this.keys = keys;
            this.probes = probes;
        }

        String line() {
            return String.join("\t", name, system, version, Long.toString(expectedItems),
                    Double.toString(fpp), Long.toString(numBits), Integer.toString(seed), keys, probes);
        }
    }

    static List<Row> readManifest(Path file) throws IOException {
        List<String> lines = Files.readAllLines(file, StandardCharsets.UTF_8);
        if (lines.isEmpty()) {
            throw new IllegalArgumentException(file + ": empty (no header)");
        }
        List<String> header = Arrays.asList(lines.get(0).split("\t", -1));
        Map<String, Integer> at = new LinkedHashMap<>();
        for (String c : COLUMNS) {
            int i = header.indexOf(c);
            if (i < 0) {
                throw new IllegalArgumentException(file + ": header lacks column " + c + ": " + header);
            }
            at.put(c, i);
        }
        List<Row> rows = new ArrayList<>();
        for (int n = 1; n < lines.size(); n++) {
            String line = lines.get(n);
            if (line.isEmpty()) {
                continue;
            }
            String[] f = line.split("\t", -1);
            if (f.length != header.size()) {
                throw new IllegalArgumentException(file + ":" + (n + 1) + ": " + f.length
                        + " fields, the header has " + header.size());
            }
            try {
                rows.add(new Row(f[at.get("name")], f[at.get("system")], f[at.get("version")],
                        Long.parseLong(f[at.get("expected_items")]),
                        Double.parseDouble(f[at.get("fpp")]),
                        Long.parseLong(f[at.get("num_bits")]),
                        Integer.parseInt(f[at.get("seed")]),
                        f[at.get("keys")], f[at.get("probes")]));
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(file + ":" + (n + 1) + ": " + e.getMessage());
            }
        }
        return rows;
    }

    // ------------------------------------------------------------------------------------
    // Filters: one interface over Guava and Spark
    // ------------------------------------------------------------------------------------

    interface Filter {
        void put(Key k);

        boolean mightContain(Key k);

        byte[] bytes() throws IOException;

        /** The size in bits, as the library reports it. */
        long numBits();
    }

    /** A new, empty filter for a manifest row, made as the library makes it. */
    static Filter create(Row row, List<Key> keys) throws Exception {
        switch (row.system) {
            case "guava":
                return GuavaFilter.create(row, funnelKind(row, keys));
            case "spark":
                return SparkFilter.create(row);
            default:
                throw new IllegalArgumentException("unknown system '" + row.system + "'");
        }
    }

    /** The filter stored in `bytes` by the library's readFrom. */
    static Filter read(Row row, List<Key> keys, byte[] bytes) throws Exception {
        switch (row.system) {
            case "guava":
                return GuavaFilter.read(funnelKind(row, keys), bytes);
            case "spark":
                return SparkFilter.read(bytes);
            default:
                throw new IllegalArgumentException("unknown system '" + row.system + "'");
        }
    }

    /** Guava's filters are typed: all keys of a Guava fixture have one type. */
    static char funnelKind(Row row, List<Key> keys) {
        if (keys.isEmpty()) {
            throw new IllegalArgumentException("a Guava fixture needs keys to know its funnel");
        }
        char t = keys.get(0).type;
        for (Key k : keys) {
            if (k.type != t) {
                throw new IllegalArgumentException("a Guava filter is typed, but " + row.keys
                        + " mixes '" + t + "' and '" + k.type + "' keys");
            }
        }
        return t;
    }

    static final class GuavaFilter implements Filter {
        final com.google.common.hash.BloomFilter<Object> f;
        final char kind;

        GuavaFilter(com.google.common.hash.BloomFilter<Object> f, char kind) {
            this.f = f;
            this.kind = kind;
        }

        @SuppressWarnings({"unchecked", "rawtypes"})
        static Funnel<Object> funnel(char kind) {
            switch (kind) {
                case 's':
                    return (Funnel) Funnels.stringFunnel(StandardCharsets.UTF_8);
                case 'l':
                    return (Funnel) Funnels.longFunnel();
                case 'b':
                    return (Funnel) Funnels.byteArrayFunnel();
                default:
                    throw new IllegalArgumentException("no funnel for '" + kind + "'");
            }
        }

        @SuppressWarnings("unchecked")
        static GuavaFilter create(Row row, char kind) throws Exception {
            if (row.seed != 0) {
                throw new IllegalArgumentException("Guava filters have no seed, the row says " + row.seed);
            }
            Funnel<Object> funnel = funnel(kind);
            if (row.version.equals("MURMUR128_MITZ_64")) {
                // The public factory: always MURMUR128_MITZ_64.
                return new GuavaFilter(
                        com.google.common.hash.BloomFilter.create(funnel, row.expectedItems, row.fpp), kind);
            }
            // Any other strategy: the package-private create(Funnel, long, double, Strategy),
            // with the BloomFilterStrategies constant of that name.
            Class<?> strategies = Class.forName("com.google.common.hash.BloomFilterStrategies");
            Field constant;
            try {
                constant = strategies.getDeclaredField(row.version);
            } catch (NoSuchFieldException e) {
                throw new IllegalArgumentException("Guava has no strategy '" + row.version + "'");
            }
            constant.setAccessible(true);
            Object strategy = constant.get(null);
            Class<?> strategyType = Class.forName("com.google.common.hash.BloomFilter$Strategy");
            Method m = com.google.common.hash.BloomFilter.class.getDeclaredMethod(
                    "create", Funnel.class, long.class, double.class, strategyType);
            m.setAccessible(true);
            try {
                return new GuavaFilter((com.google.common.hash.BloomFilter<Object>)
                        m.invoke(null, funnel, row.expectedItems, row.fpp, strategy), kind);
            } catch (InvocationTargetException e) {
                throw e.getCause() instanceof Exception ? (Exception) e.getCause() : e;
            }
        }

        static GuavaFilter read(char kind, byte[] bytes) throws IOException {
            return new GuavaFilter(com.google.common.hash.BloomFilter.readFrom(
                    new java.io.ByteArrayInputStream(bytes), funnel(kind)), kind);
        }

        private Object value(Key k) {
            if (k.type != kind) {
                throw new IllegalArgumentException("a '" + kind + "' Guava filter given key " + k.line());
            }
            switch (k.type) {
                case 's':
                    return k.string;
                case 'l':
                    return k.value;
                default:
                    return k.bytes;
            }
        }

        @Override
        public void put(Key k) {
            f.put(value(k));
        }

        @Override
        public boolean mightContain(Key k) {
            return f.mightContain(value(k));
        }

        @Override
        public byte[] bytes() throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            f.writeTo(out);
            return out.toByteArray();
        }

        @Override
        public long numBits() {
            // bitSize() is package-private; the serialized form says it: byte strategy,
            // byte number of hash functions, int number of 64-bit words, the words.
            try {
                return guavaNumBits(bytes());
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        }
    }

    static long guavaNumBits(byte[] bytes) {
        if (bytes.length < 6) {
            throw new IllegalArgumentException("a Guava filter of " + bytes.length + " bytes");
        }
        return 64L * ByteBuffer.wrap(bytes, 2, 4).getInt();
    }

    static final class SparkFilter implements Filter {
        final org.apache.spark.util.sketch.BloomFilter f;

        SparkFilter(org.apache.spark.util.sketch.BloomFilter f) {
            this.f = f;
        }

        static SparkFilter create(Row row) {
            org.apache.spark.util.sketch.BloomFilter.Version version;
            switch (row.version) {
                case "1":
                    version = org.apache.spark.util.sketch.BloomFilter.Version.V1;
                    if (row.seed != 0) {
                        throw new IllegalArgumentException("Spark version 1 has no seed, the row says " + row.seed);
                    }
                    break;
                case "2":
                    version = org.apache.spark.util.sketch.BloomFilter.Version.V2;
                    break;
                default:
                    throw new IllegalArgumentException("unknown Spark version '" + row.version + "'");
            }
            // Spark's own sizing, as BloomFilter.create(n, fpp) does it.
            long numBits = org.apache.spark.util.sketch.BloomFilter.optimalNumOfBits(row.expectedItems, row.fpp);
            return new SparkFilter(org.apache.spark.util.sketch.BloomFilter.create(
                    version, row.expectedItems, numBits, row.seed));
        }

        static SparkFilter read(byte[] bytes) throws IOException {
            return new SparkFilter(org.apache.spark.util.sketch.BloomFilter.readFrom(
                    new java.io.ByteArrayInputStream(bytes)));
        }

        @Override
        public void put(Key k) {
            switch (k.type) {
                case 's':
                    f.putString(k.string);
                    break;
                case 'l':
                    f.putLong(k.value);
                    break;
                default:
                    f.putBinary(k.bytes);
            }
        }

        @Override
        public boolean mightContain(Key k) {
            switch (k.type) {
                case 's':
                    return f.mightContainString(k.string);
                case 'l':
                    return f.mightContainLong(k.value);
                default:
                    return f.mightContainBinary(k.bytes);
            }
        }

        @Override
        public byte[] bytes() throws IOException {
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            f.writeTo(out);
            return out.toByteArray();
        }

        @Override
        public long numBits() {
            return f.bitSize();
        }
    }

    static String answers(Filter f, List<Key> probes) {
        StringBuilder sb = new StringBuilder(probes.size());
        for (Key k : probes) {
            sb.append(f.mightContain(k) ? '1' : '0');
        }
        return sb.toString();
    }

    // ------------------------------------------------------------------------------------
    // Key generation (fixed seeds)
    // ------------------------------------------------------------------------------------

    static final int KEYS = 2000;
    static final int PROBES = 4000;

    // Code points by UTF-8 length: 1 (ASCII), 2 (accents, Greek, Cyrillic), 3 (CJK, kana,
    // U+FFFF), 4 (emoji, U+10FFFF).
    static final int[] ASCII = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./?=&%:~"
            .codePoints().toArray();
    static final int[] TWO = "éèêëàâäçñöüßøåæœÉÀÇÑÖÜαβγδλπΩжзийкл".codePoints().toArray();
    static final int[] THREE = "中文字日本語東京한국어漢字かなカナ€™…\uFFFF\uFFFD".codePoints().toArray();
    static final int[] FOUR = {0x1F600, 0x1F680, 0x1F44D, 0x1F389, 0x1F4A9, 0x1F9E0, 0x20BB7, 0x2A6D6, 0x10FFFF, 0x10000};
    static final String[] HOSTS = {"example.org", "example.com", "www.wikipedia.org", "api.bloomforge.dev",
        "cdn.example.net", "localhost:8080", "xn--bcher-kva.example"};
    static final String[] WORDS = {"index", "search", "a", "b", "users", "items", "2024", "static", "img",
        "v1", "v2", "docs", "page", "x", "bloom", "filter"};

    /** A string of exactly `len` UTF-8 bytes, ASCII only. */
    static String asciiOfLength(Random rnd, int len) {
        StringBuilder sb = new StringBuilder(len);
        for (int i = 0; i < len; i++) {
            sb.appendCodePoint(ASCII[rnd.nextInt(ASCII.length)]);
        }
        return sb.toString();
    }

    static String url(Random rnd) {
        StringBuilder sb = new StringBuilder(rnd.nextBoolean() ? "https://" : "http://");
        sb.append(HOSTS[rnd.nextInt(HOSTS.length)]).append('/');
        int segments = rnd.nextInt(3);
        for (int i = 0; i < segments; i++) {
            sb.append(WORDS[rnd.nextInt(WORDS.length)]).append('/');
        }
        if (rnd.nextBoolean()) {
            sb.append(rnd.nextInt(100000));
        }
        if (rnd.nextInt(4) == 0) {
            sb.append("?q=").append(WORDS[rnd.nextInt(WORDS.length)]);
        }
        return sb.toString();
    }

    /** Up to `maxBytes` UTF-8 bytes of code points of mixed widths. */
    static String multiByte(Random rnd, int maxBytes) {
        int target = rnd.nextInt(maxBytes + 1);
        StringBuilder sb = new StringBuilder();
        int bytes = 0;
        while (true) {
            int[] pool;
            int w = rnd.nextInt(4);
            pool = w == 0 ? ASCII : w == 1 ? TWO : w == 2 ? THREE : FOUR;
            int cp = pool[rnd.nextInt(pool.length)];
            int n = new String(Character.toChars(cp)).getBytes(StandardCharsets.UTF_8).length;
            if (bytes + n > target) {
                break;
            }
            sb.appendCodePoint(cp);
            bytes += n;
        }
        return sb.toString();
    }

    static String randomString(Random rnd) {
        switch (rnd.nextInt(3)) {
            case 0:
                return asciiOfLength(rnd, rnd.nextInt(41));
            case 1:
                return url(rnd);
            default:
                return multiByte(rnd, 40);
        }
    }

    static byte[] randomBytes(Random rnd, int minLen, int maxLen) {
        byte[] b = new byte[minLen + rnd.nextInt(maxLen - minLen + 1)];
        rnd.nextBytes(b);
        return b;
    }

    static long randomLong(Random rnd) {
        switch (rnd.nextInt(4)) {
            case 0:
                return rnd.nextInt(2001) - 1000; // small, either sign
            case 1:
                return rnd.nextInt(); // 32-bit, sign-extended
            default:
                return rnd.nextLong();
        }
    }

    interface Gen {
        Key next(Random rnd);
    }

    static final Gen STRINGS = rnd -> Key.ofString(randomString(rnd));
    static final Gen LONGS = rnd -> Key.ofLong(randomLong(rnd));
    static final Gen BYTES = rnd -> Key.ofBytes(randomBytes(rnd, 0, 40));
    static final Gen MIXED = new Gen() {
        int i;

        @Override
        public Key next(Random rnd) {
            // Interleaved: string, long, byte array, string, ...
            switch (i++ % 3) {
                case 0:
                    return STRINGS.next(rnd);
                case 1:
                    return LONGS.next(rnd);
                default:
                    return BYTES.next(rnd);
            }
        }
    };

    /** `fixed` first (duplicates dropped), then `gen` until `count` distinct keys. */
    static List<Key> distinct(List<Key> fixed, Gen gen, Random rnd, int count, Set<String> avoid) {
        Map<String, Key> out = new LinkedHashMap<>();
        for (Key k : fixed) {
            if (!avoid.contains(k.identity())) {
                out.putIfAbsent(k.identity(), k);
            }
        }
        while (out.size() < count) {
            Key k = gen.next(rnd);
            if (!avoid.contains(k.identity())) {
                out.putIfAbsent(k.identity(), k);
            }
        }
        return new ArrayList<>(out.values());
    }

    static Set<String> identities(List<Key> keys) {
        Set<String> s = new LinkedHashSet<>();
        for (Key k : keys) {
            s.add(k.identity());
        }
        return s;
    }

    static List<Key> stringKeys(Random rnd) {
        List<Key> fixed = new ArrayList<>();
        for (String s : new String[] {"", "a", "é", "中", "😀", "a😀", "\u0000", "\n", "\t", " ", "\uFFFF",
            new String(Character.toChars(0x10FFFF)), "e\u0301", "https://example.org/",
            "https://example.org/index.html", "Grüße aus Köln", "東京都", "🎉🎉🎉", "naïve café"}) {
            fixed.add(Key.ofString(s));
        }
        // Every UTF-8 length from 0 to 40, several times each (every tail mod 4 and mod 16).
        for (int len = 0; len <= 40; len++) {
            for (int i = 0; i < 8; i++) {
                fixed.add(Key.ofString(asciiOfLength(rnd, len)));
            }
        }
        return fixed;
    }

    static List<Key> longKeys() {
        List<Key> fixed = new ArrayList<>();
        long[] special = {0, 1, -1, Long.MIN_VALUE, Long.MAX_VALUE, Long.MIN_VALUE + 1, Long.MAX_VALUE - 1,
            Integer.MIN_VALUE, Integer.MAX_VALUE, 0xFFFFFFFFL, 0x80000000L, 0x100000000L, 0xFF, 0x80, 0x7F};
        for (long v : special) {
            fixed.add(Key.ofLong(v));
        }
        for (long v = -64; v <= 64; v++) {
            fixed.add(Key.ofLong(v));
        }
        for (int s = 0; s < 64; s++) {
            fixed.add(Key.ofLong(1L << s));
            fixed.add(Key.ofLong(-(1L << s)));
            fixed.add(Key.ofLong((1L << s) - 1));
        }
        return fixed;
    }

    static List<Key> byteKeys() {
        List<Key> fixed = new ArrayList<>();
        fixed.add(Key.ofBytes(new byte[0]));
        for (int v = 0; v < 256; v++) {
            fixed.add(Key.ofBytes(new byte[] {(byte) v}));
        }
        for (int len = 1; len <= 40; len++) {
            for (byte fill : new byte[] {(byte) 0xFF, (byte) 0x80, 0x00, 0x7F}) {
                byte[] b = new byte[len];
                Arrays.fill(b, fill);
                fixed.add(Key.ofBytes(b));
            }
        }
        return fixed;
    }

    // ------------------------------------------------------------------------------------
    // The fixtures
    // ------------------------------------------------------------------------------------

    static Row guava(String strategy, String kind, long n, double fpp) {
        String prefix = strategy.equals("MURMUR128_MITZ_64") ? "guava" : "guava-mitz32";
        return new Row(prefix + "-" + kind + "-" + n + "-" + fpp, "guava", strategy, n, fpp, 0, 0,
                "keys-" + kind + ".txt", "probes-" + kind + ".txt");
    }

    static Row spark(int version, int seed, String kind, long n, double fpp) {
        String name = "spark" + version + (seed != 0 ? "-seed" + seed : "") + "-" + kind + "-" + n + "-" + fpp;
        return new Row(name, "spark", Integer.toString(version), n, fpp, 0, seed,
                "keys-" + kind + ".txt", "probes-" + kind + ".txt");
    }

    static List<Row> rows() {
        List<Row> rows = new ArrayList<>();
        rows.add(guava("MURMUR128_MITZ_64", "strings", 1000, 0.01));
        rows.add(guava("MURMUR128_MITZ_64", "strings", 10000, 0.001));
        rows.add(guava("MURMUR128_MITZ_64", "longs", 2000, 0.03));
        rows.add(guava("MURMUR128_MITZ_64", "bytes", 500, 0.01)); // overfilled: 2000 keys
        rows.add(guava("MURMUR128_MITZ_64", "strings", 1, 0.5)); // tiny: one word
        // A tiny fpp: 133 hash functions, stored as an unsigned byte (Guava refuses more than 255).
        rows.add(guava("MURMUR128_MITZ_64", "longs", 300, 1e-40));
        rows.add(guava("MURMUR128_MITZ_32", "strings", 1000, 0.01));
        rows.add(guava("MURMUR128_MITZ_32", "longs", 2000, 0.03));
        for (int version = 1; version <= 2; version++) {
            for (String kind : new String[] {"strings", "longs", "bytes", "mixed"}) {
                rows.add(spark(version, 0, kind, 2000, 0.03));
            }
        }
        rows.add(spark(1, 0, "strings", 2000, 0.001));
        rows.add(spark(2, 0, "longs", 2000, 0.001));
        rows.add(spark(2, 42, "strings", 2000, 0.03));
        rows.add(spark(2, 42, "mixed", 2000, 0.03));
        rows.add(spark(1, 0, "bytes", 500, 0.01)); // overfilled
        rows.add(spark(2, 0, "bytes", 500, 0.01)); // overfilled
        rows.add(spark(2, 0, "strings", 1, 0.5)); // tiny: one word
        return rows;
    }

    static void clean(Path dir) throws IOException {
        try (DirectoryStream<Path> entries = Files.newDirectoryStream(dir,
                "{fixtures.tsv,*.bin,*.answers,keys-*.txt,probes-*.txt}")) {
            for (Path p : entries) {
                Files.delete(p);
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: Fixtures OUT_DIR");
            System.exit(2);
        }
        Path dir = Paths.get(args[0]);
        Files.createDirectories(dir);
        clean(dir);

        // Keys, then probes that are none of the keys; each kind from its own seed.
        Map<String, List<Key>> keys = new LinkedHashMap<>();
        Map<String, List<Key>> probes = new LinkedHashMap<>();
        Object[][] kinds = {
            {"strings", STRINGS, 0x5EED_0001L},
            {"longs", LONGS, 0x5EED_0002L},
            {"bytes", BYTES, 0x5EED_0003L},
            {"mixed", MIXED, 0x5EED_0004L},
        };
        for (Object[] kind : kinds) {
            String name = (String) kind[0];
            Gen gen = (Gen) kind[1];
            Random rnd = new Random((Long) kind[2]);
            List<Key> fixed;
            switch (name) {
                case "strings":
                    fixed = stringKeys(rnd);
                    break;
                case "longs":
                    fixed = longKeys();
                    break;
                case "bytes":
                    fixed = byteKeys();
                    break;
                default:
                    // A few of each type's special keys, interleaved.
                    List<Key> s = stringKeys(rnd), l = longKeys(), b = byteKeys();
                    fixed = new ArrayList<>();
                    for (int i = 0; i < 20; i++) {
                        fixed.add(s.get(i));
                        fixed.add(l.get(i));
                        fixed.add(b.get(i * 13 % b.size()));
                    }
            }
            List<Key> k = distinct(fixed, gen, rnd, KEYS, Set.of());
            // Probes: near misses of keys (a key with one more byte / one more), then random.
            List<Key> near = new ArrayList<>();
            for (int i = 0; i < k.size(); i += 8) {
                Key key = k.get(i);
                if (key.type == 'l') {
                    near.add(Key.ofLong(key.value + 1));
                } else if (key.type == 's') {
                    near.add(Key.ofString(key.string + "x"));
                } else {
                    byte[] b = Arrays.copyOf(key.bytes, key.bytes.length + 1);
                    b[b.length - 1] = (byte) 0x80;
                    near.add(Key.ofBytes(b));
                }
            }
            List<Key> p = distinct(near, gen, rnd, PROBES, identities(k));
            keys.put(name, k);
            probes.put(name, p);
            writeKeys(dir.resolve("keys-" + name + ".txt"), k);
            writeKeys(dir.resolve("probes-" + name + ".txt"), p);
        }

        // Sanity of the claim in the README: Spark's BloomFilter.create(n, fpp) is
        // create(V2, n, optimalNumOfBits(n, fpp), 0).
        {
            org.apache.spark.util.sketch.BloomFilter a = org.apache.spark.util.sketch.BloomFilter.create(2000, 0.03);
            Row r = spark(2, 0, "strings", 2000, 0.03);
            SparkFilter b = SparkFilter.create(r);
            for (Key k : keys.get("strings")) {
                a.putString(k.string);
                b.put(k);
            }
            ByteArrayOutputStream out = new ByteArrayOutputStream();
            a.writeTo(out);
            if (!Arrays.equals(out.toByteArray(), b.bytes())) {
                throw new IllegalStateException("Spark's create(n, fpp) is not create(V2, n, optimalNumOfBits(n, fpp), 0)");
            }
        }

        StringBuilder manifest = new StringBuilder(String.join("\t", COLUMNS)).append('\n');
        for (Row row : rows()) {
            String kind = row.keys.substring("keys-".length(), row.keys.length() - ".txt".length());
            List<Key> k = keys.get(kind);
            List<Key> p = probes.get(kind);
            Filter f = create(row, k);
            for (Key key : k) {
                f.put(key); // all keys, whatever expected_items says
            }
            byte[] bytes = f.bytes();
            row.numBits = f.numBits();
            Files.write(dir.resolve(row.name + ".bin"), bytes);
            String a = answers(f, p);
            Files.write(dir.resolve(row.name + ".answers"), (a + "\n").getBytes(StandardCharsets.US_ASCII));
            manifest.append(row.line()).append('\n');
            long ones = a.chars().filter(c -> c == '1').count();
            System.out.printf("wrote %s: %d bytes, %d bits, %d keys, %d of %d probes positive%n",
                    row.name, bytes.length, row.numBits, k.size(), ones, p.size());
        }
        Files.write(dir.resolve("fixtures.tsv"), manifest.toString().getBytes(StandardCharsets.UTF_8));
    }
}
