import com.google.common.hash.Funnels;
import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;

/**
 * Times the real library building a filter of N keys ("https://example.org/item/" + i, the
 * keys of bloomforge-interop's build_speed example), one thread, and checks that its bytes
 * are those of the filter bloomforge wrote for the same keys.
 *
 * Usage: java Bench guava|spark-v1|spark-v2 N EXPECTED_ITEMS FPP OURS.bin
 */
public class Bench {
    static final int CHUNK = 1 << 20;

    public static void main(String[] args) throws Exception {
        String kind = args[0];
        long n = Long.parseLong(args[1]);
        long expected = Long.parseLong(args[2]);
        double fpp = Double.parseDouble(args[3]);
        Path ours = Path.of(args[4]);
        com.google.common.hash.BloomFilter<CharSequence> guava = null;
        org.apache.spark.util.sketch.BloomFilter spark = null;
        switch (kind) {
            case "guava":
                guava = com.google.common.hash.BloomFilter.create(
                        Funnels.stringFunnel(StandardCharsets.UTF_8), expected, fpp);
                break;
            case "spark-v1":
            case "spark-v2":
                org.apache.spark.util.sketch.BloomFilter.Version v = kind.equals("spark-v1")
                        ? org.apache.spark.util.sketch.BloomFilter.Version.V1
                        : org.apache.spark.util.sketch.BloomFilter.Version.V2;
                spark = org.apache.spark.util.sketch.BloomFilter.create(
                        v, expected, org.apache.spark.util.sketch.BloomFilter.optimalNumOfBits(expected, fpp), 0);
                break;
            default:
                throw new IllegalArgumentException(kind);
        }
        String[] keys = new String[CHUNK];
        long nanos = 0;
        for (long start = 0; start < n; start += CHUNK) {
            int len = (int) Math.min(CHUNK, n - start);
            for (int i = 0; i < len; i++) {
                keys[i] = "https://example.org/item/" + (start + i);
            }
            long t0 = System.nanoTime();
            if (guava != null) {
                for (int i = 0; i < len; i++) guava.put(keys[i]);
            } else {
                for (int i = 0; i < len; i++) spark.putString(keys[i]);
            }
            nanos += System.nanoTime() - t0;
        }
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        if (guava != null) guava.writeTo(out); else spark.writeTo(out);
        boolean same = Arrays.equals(out.toByteArray(), Files.readAllBytes(ours));
        System.out.printf("%s\tjvm 1 thread\t%.1f ns/key\t%s%n", kind, (double) nanos / n,
                same ? "same bytes as bloomforge's" : "BYTES DIFFER");
        if (!same) System.exit(1);
    }
}
