package bench.storm;

/**
 * A log-linear histogram of microsecond values: exact below 64 us, then 64
 * buckets per power of two (quantiles within 1.6%). The Go side
 * (bench/squall) uses the same bucket layout.
 */
final class LatencyHistogram {
    private static final int SUB = 64;
    private final long[] counts = new long[SUB + 57 * SUB]; // e <= 56 for long values
    private long total;

    static int index(long us) {
        if (us < SUB) {
            return (int) Math.max(us, 0);
        }
        int e = 64 - Long.numberOfLeadingZeros(us) - 7; // us >> e is in [64, 128)
        return SUB + e * SUB + (int) ((us >> e) - SUB);
    }

    static long lowerBound(int idx) {
        if (idx < SUB) {
            return idx;
        }
        int e = (idx - SUB) / SUB;
        return ((long) ((idx - SUB) % SUB) + SUB) << e;
    }

    synchronized void record(long us) {
        counts[index(us)]++;
        total++;
    }

    synchronized long count() {
        return total;
    }

    /** The q-quantile (0 < q <= 1) in microseconds, or 0 with no values. */
    synchronized long quantile(double q) {
        if (total == 0) {
            return 0;
        }
        long rank = (long) Math.ceil(q * total);
        long seen = 0;
        for (int i = 0; i < counts.length; i++) {
            seen += counts[i];
            if (seen >= rank) {
                return lowerBound(i);
            }
        }
        return lowerBound(counts.length - 1);
    }
}
