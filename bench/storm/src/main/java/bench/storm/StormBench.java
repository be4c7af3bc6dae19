package bench.storm;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

import org.apache.storm.Config;
import org.apache.storm.LocalCluster;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.StormTopology;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.trident.TridentTopology;
import org.apache.storm.trident.operation.builtin.Count;
import org.apache.storm.trident.testing.MemoryMapState;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Values;
import org.apache.storm.utils.VersionInfo;

/**
 * The Apache Storm side of squall's side-by-side benchmark. It runs one
 * workload on a LocalCluster (one worker, parallelism 1 per component unless
 * --parallelism says otherwise, a ZooKeeper bound to loopback), measures it
 * over a fixed window after a warm-up, and prints one line:
 *
 * <pre>RESULT impl=storm workload=NAME key=value ...</pre>
 *
 * <p>Usage: {@code StormBench WORKLOAD [--window S] [--warmup S] [--batch N]
 * [--pending N] [--trees N] [--sentences N] [--parallelism N]}: --batch is the
 * tuples an executor buffers per send (topology.producer.batch.size),
 * --sentences the sentences per Trident batch and spout task, --parallelism
 * the executors (one task each) of every component but the acker and
 * Trident's coordinators (core-noack, core-acked and trident-wordcount:
 * the core's spout and bolts; Trident's spout executor, the bolt that
 * splits and pre-aggregates, and the grouped aggregation); workloads:
 * core-noack, core-acked, trident-wordcount, acker-memory, and
 * cluster-acked (core-acked on a real
 * distributed Storm with two worker JVMs, see {@link ClusterBench}; its
 * --cluster-dir is where the generated installation goes, --lib the jars
 * Maven resolved). bench/squall takes the same workloads and options and
 * prints the same keys.
 */
public final class StormBench {
    /** The sentences squall's Trident benchmark cycles: 40 words in 5 sentences. */
    static final String[] SENTENCES = {
        "the cow jumped over the moon",
        "an apple a day keeps the doctor away",
        "four score and seven years ago our fathers brought forth",
        "snow white and the seven dwarfs went to work",
        "i am at two with nature said the poet",
    };

    private StormBench() {
    }

    public static void main(String[] args) {
        int status = 0;
        try {
            System.out.println(runAll(Options.parse(args)));
        } catch (Throwable t) {
            System.err.println("storm-bench: " + t);
            t.printStackTrace();
            status = 1;
        }
        System.out.flush();
        System.err.flush();
        // Storm leaves non-daemon threads behind after a LocalCluster closes
        // (and after a failure), so the JVM would not exit by itself.
        Runtime.getRuntime().halt(status);
    }

    private static String runAll(Options o) throws Exception {
        if (o.workload.equals("cluster-acked")) {
            return result(o, new ClusterBench(o).run());
        }
        String line;
        try (LoopbackZooKeeper zk = new LoopbackZooKeeper()) {
            Map<String, Object> daemon = new HashMap<>();
            daemon.put(Config.STORM_ZOOKEEPER_SERVERS, List.of(zk.host()));
            daemon.put(Config.STORM_ZOOKEEPER_PORT, zk.port());
            daemon.put(Config.STORM_LOCAL_HOSTNAME, "127.0.0.1");
            LocalCluster cluster = new LocalCluster.Builder().withSupervisors(1).withDaemonConf(daemon).build();
            try {
                line = run(cluster, o);
            } finally {
                closeWithin(cluster, 10);
            }
        }
        return line;
    }

    private static String run(LocalCluster cluster, Options o) throws Exception {
        Config conf = new Config();
        conf.setNumWorkers(1);
        conf.put(Config.TOPOLOGY_PRODUCER_BATCH_SIZE, o.batch);
        switch (o.workload) {
            case "core-noack": {
                conf.setNumAckers(0);
                cluster.submitTopology("bench", conf, core(ConstSpout.Mode.UNTRACKED, 0, true, o.parallelism));
                Rate r = measureRate(o, Probe.sunk::get);
                logExecutors(cluster);
                return result(o, String.format(Locale.ROOT, "tuples_per_s=%.0f window_s=%s", r.perSecond, trim(o.window)));
            }
            case "core-acked": {
                conf.setNumAckers(1);
                conf.setMaxSpoutPending(o.pending);
                conf.put(Config.TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS, true);
                conf.setMessageTimeoutSecs(30);
                cluster.submitTopology("bench", conf, core(ConstSpout.Mode.TIMED, 0, true, o.parallelism));
                Rate r = measureRate(o, Probe.acked::get);
                logExecutors(cluster);
                return result(o, String.format(Locale.ROOT, "tuples_per_s=%.0f p50_us=%d p99_us=%d failed=%d window_s=%s",
                    r.perSecond, Probe.latency.quantile(0.50), Probe.latency.quantile(0.99), Probe.failed.get(),
                    trim(o.window)));
            }
            case "trident-wordcount":
                return wordCount(cluster, conf, o);
            case "acker-memory":
                return ackerMemory(cluster, conf, o);
            default:
                throw new IllegalArgumentException("unknown workload " + o.workload);
        }
    }

    /**
     * Constant spout -> id bolt -> sink, local-or-shuffle groupings, p
     * executors (one task each) per component.
     */
    private static StormTopology core(ConstSpout.Mode mode, long limit, boolean ack, int p) {
        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("spout", new ConstSpout(mode, limit), p);
        b.setBolt("id", new IdBolt(), p).localOrShuffleGrouping("spout");
        b.setBolt("null", new SinkBolt(ack), p).localOrShuffleGrouping("id");
        return b.createTopology();
    }

    /**
     * Logs each component's executors and tasks as Nimbus assigned them
     * (ackers and Storm's system components included) to stderr, for
     * checking a run's parallelism.
     */
    private static void logExecutors(LocalCluster cluster) {
        try {
            TopologyInfo info = cluster.getTopologyInfoByName("bench");
            Map<String, int[]> byComponent = new TreeMap<>();
            for (ExecutorSummary e : info.get_executors()) {
                int[] n = byComponent.computeIfAbsent(e.get_component_id(), k -> new int[2]);
                n[0]++;
                n[1] += e.get_executor_info().get_task_end() - e.get_executor_info().get_task_start() + 1;
            }
            StringBuilder sb = new StringBuilder("components (executors/tasks):");
            byComponent.forEach((id, n) -> sb.append(' ').append(id).append('=').append(n[0]).append('/').append(n[1]));
            System.err.println(sb);
        } catch (Exception e) {
            System.err.println("storm-bench: reading the topology's executors: " + e);
        }
    }

    private static String wordCount(LocalCluster cluster, Config conf, Options o) throws Exception {
        conf.setNumAckers(1);
        conf.setMaxSpoutPending(2);
        conf.put(Config.TOPOLOGY_TRIDENT_BATCH_EMIT_INTERVAL_MILLIS, 1);
        List<Object>[] outputs = sentences(o.sentences);
        int wordsPerTask = 0;
        for (List<Object> v : outputs) {
            wordsPerTask += ((String) v.get(0)).split(" ").length;
        }
        // Every task of the spout emits o.sentences sentences per txid.
        int wordsPerBatch = wordsPerTask * o.parallelism;
        TridentTopology t = new TridentTopology();
        // The hint on the spout's stream sets the spout executor's
        // parallelism and, through the identity partitioning between them,
        // that of the bolt that splits and pre-aggregates; the hint on the
        // state sets the grouped aggregation's.
        t.newStream("sentences", new CountingBatchSpout(new Fields("sentence"), o.sentences, o.parallelism, outputs))
            .parallelismHint(o.parallelism)
            .each(new Fields("sentence"), new Split(), new Fields("word"))
            .groupBy(new Fields("word"))
            .persistentAggregate(new MemoryMapState.Factory(), new Count(), new Fields("count"))
            .parallelismHint(o.parallelism);
        cluster.submitTopology("bench", conf, t.build());

        waitFor(() -> Probe.committedTxid.get() > 0, 120, "the first committed batch");
        sleepSeconds(o.warmup);
        long[] start = nextBatch();
        sleepSeconds(o.window);
        long[] end = nextBatch();
        logExecutors(cluster);
        double seconds = (end[1] - start[1]) / 1e9;
        long batches = end[0] - start[0];
        return result(o, String.format(Locale.ROOT, "words_per_s=%.0f batches=%d words_per_batch=%d window_s=%s",
            batches * (double) wordsPerBatch / seconds, batches, wordsPerBatch, trim(o.window)));
    }

    /** Waits for the next committed batch; returns {highest committed txid, time}. */
    private static long[] nextBatch() throws InterruptedException {
        long b = Probe.committedTxid.get();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (Probe.committedTxid.get() == b) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("no batch committed for 120 s");
            }
            Thread.sleep(0, 200_000);
        }
        return new long[] {Probe.committedTxid.get(), System.nanoTime()};
    }

    @SuppressWarnings("unchecked")
    static List<Object>[] sentences(int n) {
        List<Object>[] out = new List[n];
        for (int i = 0; i < n; i++) {
            out[i] = new Values(SENTENCES[i % SENTENCES.length]);
        }
        return out;
    }

    private static String ackerMemory(LocalCluster cluster, Config conf, Options o) throws Exception {
        conf.setNumAckers(1);
        conf.put(Config.TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS, false);
        cluster.submitTopology("bench", conf, core(ConstSpout.Mode.LIMITED, o.trees, false, 1));
        waitFor(Probe.opened::get, 120, "the spout to open");
        sleepSeconds(2);
        long before = liveHeap();
        Probe.go.set(true);
        long want = o.trees - o.trees % Probe.PUBLISH_EVERY;
        waitFor(() -> Probe.sunk.get() >= want, 300,
            () -> o.trees + " tuples at the sink (" + Probe.sunk.get() + " arrived)");
        sleepSeconds(2); // let the acker take the last inits
        long after = liveHeap();
        return result(o, String.format(Locale.ROOT, "pending=%d bytes_per_tree=%.1f heap_before=%d heap_after=%d",
            o.trees, (after - before) / (double) o.trees, before, after));
    }

    /** Heap in use after full collections (G1's System.gc is a full, compacting GC). */
    static long liveHeap() throws InterruptedException {
        long used = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            System.gc();
            Thread.sleep(200);
            used = Math.min(used, ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed());
        }
        return used;
    }

    private static final class Rate {
        double perSecond;
    }

    /** Waits for the first event, warms up, then counts events over the window. */
    private static Rate measureRate(Options o, LongSupplier counter) throws InterruptedException {
        waitFor(() -> counter.getAsLong() > 0, 120, "the first tuples");
        sleepSeconds(o.warmup);
        long c0 = counter.getAsLong();
        long t0 = System.nanoTime();
        Probe.recording = true;
        sleepSeconds(o.window);
        Probe.recording = false;
        long c1 = counter.getAsLong();
        long t1 = System.nanoTime();
        Rate r = new Rate();
        r.perSecond = (c1 - c0) / ((t1 - t0) / 1e9);
        return r;
    }

    private static String result(Options o, String figures) {
        return String.format(Locale.ROOT, "RESULT impl=storm workload=%s %s batch=%d parallelism=%d version=%s",
            o.workload, figures, o.batch, o.parallelism, VersionInfo.getVersion());
    }

    static String trim(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }

    interface Check {
        boolean ok();
    }

    private static void waitFor(Check c, int seconds, String what) throws InterruptedException {
        waitFor(c, seconds, () -> what);
    }

    private static void waitFor(Check c, int seconds, java.util.function.Supplier<String> what)
        throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!c.ok()) {
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + seconds + " s waiting for " + what.get());
            }
            Thread.sleep(10);
        }
    }

    private static void sleepSeconds(double s) throws InterruptedException {
        Thread.sleep((long) (s * 1000));
    }

    private static void closeWithin(LocalCluster cluster, int seconds) {
        Thread t = new Thread(() -> {
            try {
                cluster.close();
            } catch (Exception e) {
                System.err.println("storm-bench: closing the local cluster: " + e);
            }
        }, "close-cluster");
        t.setDaemon(true);
        t.start();
        try {
            t.join(TimeUnit.SECONDS.toMillis(seconds));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Command-line options; the defaults match bench/squall's. */
    static final class Options {
        String workload;
        double window = 30;
        double warmup = 10;
        int batch = 256;
        int sentences = 10_000;
        int pending = 1024;
        long trees = 1_000_000;
        /** Executors per component, the acker and Trident's coordinators excepted. */
        int parallelism = 1;
        /** cluster-acked: where the Storm installation, its logs and local state go. */
        String clusterDir = "../out/storm-cluster";
        /** cluster-acked: the jars Maven resolved (copy-dependencies). */
        String lib = "target/lib";

        static Options parse(String[] args) {
            Options o = new Options();
            List<String> rest = new ArrayList<>();
            for (int i = 0; i < args.length; i++) {
                String a = args[i];
                if (!a.startsWith("--")) {
                    rest.add(a);
                    continue;
                }
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(a + " needs a value");
                }
                String v = args[++i];
                switch (a) {
                    case "--window": o.window = seconds(v); break;
                    case "--warmup": o.warmup = seconds(v); break;
                    case "--batch": o.batch = Integer.parseInt(v); break;
                    case "--sentences": o.sentences = Integer.parseInt(v); break;
                    case "--pending": o.pending = Integer.parseInt(v); break;
                    case "--trees": o.trees = Long.parseLong(v); break;
                    case "--parallelism": o.parallelism = Integer.parseInt(v); break;
                    case "--cluster-dir": o.clusterDir = v; break;
                    case "--lib": o.lib = v; break;
                    default: throw new IllegalArgumentException("unknown option " + a);
                }
            }
            if (rest.size() != 1) {
                throw new IllegalArgumentException(
                    "usage: StormBench core-noack|core-acked|trident-wordcount|acker-memory|cluster-acked "
                        + "[--window S] [--warmup S] [--batch N] [--pending N] [--trees N] [--sentences N] "
                        + "[--parallelism N] [--cluster-dir D] [--lib D]");
            }
            o.workload = rest.get(0);
            if (o.parallelism < 1) {
                throw new IllegalArgumentException("--parallelism must be positive");
            }
            if (o.parallelism != 1 && (o.workload.equals("acker-memory") || o.workload.equals("cluster-acked"))) {
                throw new IllegalArgumentException(o.workload + " runs with parallelism 1 only");
            }
            return o;
        }

        /** Parses "30", "30s", "1.5s" or "500ms" as seconds. */
        static double seconds(String v) {
            if (v.endsWith("ms")) {
                return Double.parseDouble(v.substring(0, v.length() - 2)) / 1000;
            }
            if (v.endsWith("s")) {
                return Double.parseDouble(v.substring(0, v.length() - 1));
            }
            return Double.parseDouble(v);
        }
    }
}
