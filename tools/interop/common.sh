# Sourced by make-fixtures and roundtrip: goes to the repository root, finds Guava and
# Spark's sketch jar (downloading the latter once), and compiles Fixtures.java and
# RoundTrip.java into target/interop/classes. Sets CLASSPATH_INTEROP.
#
#   GUAVA_JAR         Guava's jar (default /usr/share/java/guava.jar, Debian's libguava-java)
#   SPARK_SKETCH_JAR  spark-sketch_2.13-4.3.0.jar (default target/interop/spark-sketch_2.13-4.3.0.jar,
#                     taken from the pyspark 4.3.0 source distribution on PyPI when missing)

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(git -C "$here" rev-parse --show-toplevel 2>/dev/null || (cd "$here/../.." && pwd))"
cd "$root"

work=target/interop
mkdir -p "$work"

for tool in java javac; do
    if ! command -v "$tool" >/dev/null; then
        echo "error: $tool not found; a JDK 17 or later is needed" >&2
        exit 1
    fi
done

guava="${GUAVA_JAR:-/usr/share/java/guava.jar}"
if [[ ! -f "$guava" ]]; then
    echo "error: Guava not found at $guava; set GUAVA_JAR (or install libguava-java)" >&2
    exit 1
fi

spark_version=4.3.0
spark_jar_name="spark-sketch_2.13-$spark_version.jar"
spark="${SPARK_SKETCH_JAR:-$work/$spark_jar_name}"
if [[ ! -f "$spark" ]]; then
    if [[ -n "${SPARK_SKETCH_JAR:-}" ]]; then
        echo "error: SPARK_SKETCH_JAR=$SPARK_SKETCH_JAR does not exist" >&2
        exit 1
    fi
    # Spark's sketch module is a small self-contained jar; pyspark's source distribution
    # carries it. Only that jar is kept.
    sdist="$work/pyspark-$spark_version.tar.gz"
    if [[ ! -f "$sdist" ]]; then
        echo "downloading pyspark $spark_version (source distribution, about 460 MB) for $spark_jar_name" >&2
        python3 -m pip download --no-deps "pyspark==$spark_version" -d "$work" >&2
    fi
    tar -xzf "$sdist" -C "$work" --strip-components=3 "pyspark-$spark_version/deps/jars/$spark_jar_name"
    rm -f "$sdist"
    spark="$work/$spark_jar_name"
fi

CLASSPATH_INTEROP="$work/classes:$guava:$spark"
rm -rf "$work/classes"
mkdir -p "$work/classes"
javac -nowarn -d "$work/classes" -cp "$guava:$spark" tools/interop/Fixtures.java tools/interop/RoundTrip.java 2> "$work/javac.log" || {
    cat "$work/javac.log" >&2
    exit 1
}
