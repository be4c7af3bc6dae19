package bench.storm;

import java.io.IOException;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteOrder;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * {@link Probe}'s counters shared between processes: a small file mapped
 * into the driver and into the worker that runs the spout (cluster-acked,
 * where the topology runs in other JVMs). Slots are 64-bit words read and
 * written with volatile semantics.
 *
 * <p>In the worker, a daemon thread ({@link #bridge}) copies the spout's
 * published counts into the file every {@link #POLL_MILLIS} ms, turns
 * latency recording on and off as the driver asks, and writes the
 * quantiles when the driver asks for them; the spout's code is the same as
 * in the single-process workloads.
 */
final class SharedProbe {
    static final String CONF_KEY = "bench.probe.file";
    static final int ACKED = 0;
    static final int FAILED = 1;
    static final int RECORDING = 2;
    static final int REPORT = 3;
    static final int P50 = 4;
    static final int P99 = 5;
    static final int REPORTED = 6;
    static final int OPENED = 7;
    private static final int SLOTS = 8;
    static final long POLL_MILLIS = 1;

    private static final VarHandle LONGS = MethodHandles.byteBufferViewVarHandle(long[].class, ByteOrder.nativeOrder());
    private static boolean bridged;

    private final MappedByteBuffer buf;

    private SharedProbe(MappedByteBuffer buf) {
        this.buf = buf;
    }

    /** Maps the file, creating it (zeroed) with create true. */
    static SharedProbe map(Path file, boolean create) throws IOException {
        try (FileChannel ch = create
            ? FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.TRUNCATE_EXISTING,
                StandardOpenOption.READ, StandardOpenOption.WRITE)
            : FileChannel.open(file, StandardOpenOption.READ, StandardOpenOption.WRITE)) {
            return new SharedProbe(ch.map(FileChannel.MapMode.READ_WRITE, 0, SLOTS * 8L));
        }
    }

    long get(int slot) {
        return (long) LONGS.getVolatile(buf, slot * 8);
    }

    void set(int slot, long v) {
        LONGS.setVolatile(buf, slot * 8, v);
    }

    /** Starts the worker-side thread once per JVM. */
    static synchronized void bridge(String file) {
        if (bridged) {
            return;
        }
        bridged = true;
        SharedProbe p;
        try {
            p = map(Path.of(file), false);
        } catch (IOException e) {
            throw new IllegalStateException("mapping the probe file " + file, e);
        }
        p.set(OPENED, 1);
        Thread t = new Thread(() -> {
            try {
                while (true) {
                    p.set(ACKED, Probe.acked.get());
                    p.set(FAILED, Probe.failed.get());
                    Probe.recording = p.get(RECORDING) != 0;
                    if (p.get(REPORT) != 0 && p.get(REPORTED) == 0) {
                        p.set(P50, Probe.latency.quantile(0.50));
                        p.set(P99, Probe.latency.quantile(0.99));
                        p.set(REPORTED, 1);
                    }
                    Thread.sleep(POLL_MILLIS);
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "bench-probe-bridge");
        t.setDaemon(true);
        t.start();
    }
}
