package bench.storm;

import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Counters the topology's components publish and the driver reads. In local
 * mode every component runs in this JVM, so static fields are shared.
 * Components count locally and publish every {@link #PUBLISH_EVERY} events
 * by adding that many to the shared counter, so that the counters sum over
 * a component's tasks, as the Go side does.
 */
final class Probe {
    static final int PUBLISH_EVERY = 256;

    /** Tuples reached the null bolt (core-noack) or the drop bolt (acker-memory), all tasks. */
    static final AtomicLong sunk = new AtomicLong();
    /** Trees acked at the spout (core-acked), all tasks. */
    static final AtomicLong acked = new AtomicLong();
    /**
     * The highest Trident txid acked to a batch spout task (committed). Every
     * task of the spout is acked every txid, so this counts txids, not acks.
     */
    static final AtomicLong committedTxid = new AtomicLong();
    /** Tuple trees failed (must stay 0). */
    static final AtomicLong failed = new AtomicLong();
    /** The spout has been opened. */
    static final AtomicBoolean opened = new AtomicBoolean();
    /** acker-memory: the spout may start emitting. */
    static final AtomicBoolean go = new AtomicBoolean();
    /** core-acked: record complete latencies while set. */
    static volatile boolean recording;
    /** core-acked: complete latencies recorded while recording. */
    static final LatencyHistogram latency = new LatencyHistogram();

    private Probe() {
    }
}
