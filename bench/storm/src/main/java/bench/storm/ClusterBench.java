package bench.storm;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarEntry;
import java.util.jar.JarOutputStream;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.apache.storm.Config;
import org.apache.storm.StormSubmitter;
import org.apache.storm.generated.ExecutorSummary;
import org.apache.storm.generated.KillOptions;
import org.apache.storm.generated.TopologyInfo;
import org.apache.storm.topology.TopologyBuilder;
import org.apache.storm.utils.NimbusClient;

/**
 * cluster-acked: the core-acked topology on a real distributed Storm on
 * this machine, with two workers in two JVMs.
 *
 * <p>The driver (this JVM) runs a ZooKeeper bound to loopback, builds a
 * minimal Storm installation under the cluster directory from the jars
 * Maven resolved ({@code lib-worker/}, {@code conf/storm.yaml},
 * {@code log4j2/}), starts a Nimbus and a Supervisor with two slots as
 * separate JVMs (Storm's own main classes), submits the topology jar with
 * {@code topology.workers=2}, and reads the spout's acked count from a
 * file the spout's worker maps ({@link SharedProbe}). The Supervisor
 * launches the workers as Storm does in production: a LogWriter JVM per
 * worker that starts the worker JVM. Everything is stopped and killed at
 * the end, and on a signal.
 */
final class ClusterBench {
    private final StormBench.Options o;
    private final Path dir;
    private final Path lib;
    private final List<Process> daemons = new ArrayList<>();

    ClusterBench(StormBench.Options o) {
        this.o = o;
        this.dir = Path.of(o.clusterDir).toAbsolutePath().normalize();
        this.lib = Path.of(o.lib).toAbsolutePath().normalize();
    }

    String run() throws Exception {
        Thread hook = new Thread(this::killAll, "kill-storm-daemons");
        Runtime.getRuntime().addShutdownHook(hook);
        try (LoopbackZooKeeper zk = new LoopbackZooKeeper()) {
            int nimbusPort = freePort();
            int supervisorPort = freePort();
            int slot1 = freePort();
            int slot2 = freePort();
            layout(zk, nimbusPort, supervisorPort, slot1, slot2);
            daemons.add(daemon("nimbus", "org.apache.storm.daemon.nimbus.Nimbus", "-Xmx1024m"));
            daemons.add(daemon("supervisor", "org.apache.storm.daemon.supervisor.Supervisor", "-Xmx256m"));
            try {
                return measure(zk, nimbusPort);
            } finally {
                killAll();
            }
        }
    }

    private String measure(LoopbackZooKeeper zk, int nimbusPort) throws Exception {
        Path probeFile = dir.resolve("probe.bin");
        SharedProbe probe = SharedProbe.map(probeFile, true);

        Config conf = new Config();
        conf.put(Config.NIMBUS_SEEDS, List.of("127.0.0.1"));
        conf.put(Config.NIMBUS_THRIFT_PORT, nimbusPort);
        conf.put(Config.STORM_ZOOKEEPER_SERVERS, List.of(zk.host()));
        conf.put(Config.STORM_ZOOKEEPER_PORT, zk.port());
        conf.setNumWorkers(2);
        conf.setNumAckers(1);
        conf.setMaxSpoutPending(o.pending);
        conf.put(Config.TOPOLOGY_ENABLE_MESSAGE_TIMEOUTS, true);
        conf.setMessageTimeoutSecs(30);
        conf.put(Config.TOPOLOGY_PRODUCER_BATCH_SIZE, o.batch);
        conf.put(SharedProbe.CONF_KEY, probeFile.toString());

        TopologyBuilder b = new TopologyBuilder();
        b.setSpout("spout", new ConstSpout(ConstSpout.Mode.TIMED, 0), 1);
        b.setBolt("id", new IdBolt(), 1).localOrShuffleGrouping("spout");
        b.setBolt("null", new SinkBolt(true), 1).localOrShuffleGrouping("id");

        System.setProperty("storm.jar", topologyJar().toString());
        submit(conf, b);

        waitFor(() -> probe.get(SharedProbe.ACKED) > 0, 180, "the first acked trees in the workers");
        String placement = placement(conf);
        System.err.println("storm-bench: cluster-acked placement: " + placement);
        Thread.sleep((long) (o.warmup * 1000));
        long c0 = probe.get(SharedProbe.ACKED);
        long t0 = System.nanoTime();
        probe.set(SharedProbe.RECORDING, 1);
        Thread.sleep((long) (o.window * 1000));
        probe.set(SharedProbe.RECORDING, 0);
        long c1 = probe.get(SharedProbe.ACKED);
        long t1 = System.nanoTime();
        probe.set(SharedProbe.REPORT, 1);
        waitFor(() -> probe.get(SharedProbe.REPORTED) != 0, 30, "the spout's latency quantiles");
        double rate = (c1 - c0) / ((t1 - t0) / 1e9);
        return String.format(Locale.ROOT, "tuples_per_s=%.0f p50_us=%d p99_us=%d failed=%d workers=%d window_s=%s",
            rate, probe.get(SharedProbe.P50), probe.get(SharedProbe.P99), probe.get(SharedProbe.FAILED),
            workers(conf), StormBench.trim(o.window));
    }

    /** Submits once Nimbus listens, retrying while it is starting. */
    private void submit(Config conf, TopologyBuilder b) throws Exception {
        int port = (Integer) conf.get(Config.NIMBUS_THRIFT_PORT);
        waitFor(() -> {
            try (java.net.Socket s = new java.net.Socket(InetAddress.getLoopbackAddress(), port)) {
                return true;
            } catch (IOException e) {
                return false;
            }
        }, 120, "Nimbus to listen on port " + port);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (true) {
            checkDaemons();
            try {
                StormSubmitter.submitTopology("bench", conf, b.createTopology());
                return;
            } catch (RuntimeException e) {
                if (System.nanoTime() > deadline) {
                    throw new IllegalStateException("Nimbus did not take the topology within 120 s", e);
                }
                Thread.sleep(1000);
            }
        }
    }

    /** Which components run in which worker (by slot port), for the log. */
    private String placement(Config conf) throws Exception {
        try (NimbusClient c = NimbusClient.getConfiguredClient(conf)) {
            TopologyInfo info = c.getClient().getTopologyInfoByName("bench");
            Map<Integer, TreeSet<String>> byPort = new TreeMap<>();
            for (ExecutorSummary e : info.get_executors()) {
                byPort.computeIfAbsent(e.get_port(), p -> new TreeSet<>()).add(e.get_component_id());
            }
            return byPort.entrySet().stream().map(e -> "worker:" + e.getKey() + "=" + String.join("+", e.getValue()))
                .collect(Collectors.joining(" "));
        }
    }

    private int workers(Config conf) throws Exception {
        try (NimbusClient c = NimbusClient.getConfiguredClient(conf)) {
            TopologyInfo info = c.getClient().getTopologyInfoByName("bench");
            return (int) info.get_executors().stream().map(ExecutorSummary::get_port).distinct().count();
        }
    }

    /** A minimal Storm installation: lib-worker, conf/storm.yaml, log4j2, local and log dirs. */
    private void layout(LoopbackZooKeeper zk, int nimbusPort, int supervisorPort, int slot1, int slot2)
        throws IOException {
        for (String d : new String[] {"local", "logs", "lib-worker", "pids"}) {
            deleteTree(dir.resolve(d));
        }
        Files.createDirectories(dir.resolve("lib-worker"));
        Files.createDirectories(dir.resolve("conf"));
        Files.createDirectories(dir.resolve("log4j2"));
        Files.createDirectories(dir.resolve("logs"));
        Files.createDirectories(dir.resolve("local"));
        Files.createDirectories(dir.resolve("pids"));
        try (Stream<Path> jars = Files.list(lib)) {
            for (Path jar : (Iterable<Path>) jars.filter(p -> p.toString().endsWith(".jar"))::iterator) {
                Files.createSymbolicLink(dir.resolve("lib-worker").resolve(jar.getFileName()), jar);
            }
        }
        String workerOpts = String.join(" ", jvmFlags());
        String yaml = String.join("\n",
            "# Generated by bench/storm ClusterBench for one cluster-acked run.",
            "storm.zookeeper.servers: [\"" + zk.host() + "\"]",
            "storm.zookeeper.port: " + zk.port(),
            "nimbus.seeds: [\"127.0.0.1\"]",
            "nimbus.thrift.port: " + nimbusPort,
            "storm.local.hostname: \"127.0.0.1\"",
            "storm.local.dir: \"" + dir.resolve("local") + "\"",
            "storm.log.dir: \"" + dir.resolve("logs") + "\"",
            "supervisor.slots.ports: [" + slot1 + ", " + slot2 + "]",
            "supervisor.thrift.port: " + supervisorPort,
            "worker.childopts: \"" + workerOpts + "\"",
            "");
        Files.writeString(dir.resolve("conf/storm.yaml"), yaml);
        Files.writeString(dir.resolve("log4j2/cluster.xml"), log4j("${sys:storm.log.dir}/${sys:logfile.name}"));
        Files.writeString(dir.resolve("log4j2/worker.xml"),
            log4j("${sys:workers.artifacts}/${sys:storm.id}/${sys:worker.port}/${sys:logfile.name}"));
    }

    /** A log4j2 configuration: INFO and above to one file. */
    private static String log4j(String file) {
        return String.join("\n",
            "<?xml version=\"1.0\" encoding=\"UTF-8\"?>",
            "<Configuration status=\"WARN\">",
            "  <Appenders>",
            "    <File name=\"A1\" fileName=\"" + file + "\">",
            "      <PatternLayout pattern=\"%d{HH:mm:ss.SSS} %-5level %c{1} [%t] - %msg%n\"/>",
            "    </File>",
            "  </Appenders>",
            "  <Loggers>",
            "    <Root level=\"info\"><AppenderRef ref=\"A1\"/></Root>",
            "  </Loggers>",
            "</Configuration>",
            "");
    }

    /** The driver's own heap and GC flags, which the workers get too. */
    private static List<String> jvmFlags() {
        return ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
            .filter(a -> a.startsWith("-Xm") || a.startsWith("-XX:")).collect(Collectors.toList());
    }

    private Path topologyJar() throws IOException {
        Path classes = Path.of(ClusterBench.class.getProtectionDomain().getCodeSource().getLocation().getPath());
        Path jar = dir.resolve("bench-topology.jar");
        try (OutputStream out = Files.newOutputStream(jar); JarOutputStream j = new JarOutputStream(out);
             Stream<Path> files = Files.walk(classes)) {
            for (Path f : (Iterable<Path>) files.filter(Files::isRegularFile).sorted()::iterator) {
                String name = classes.relativize(f).toString().replace(File.separatorChar, '/');
                if (name.equals("log4j2.xml")) {
                    continue;
                }
                j.putNextEntry(new JarEntry(name));
                Files.copy(f, j);
                j.closeEntry();
            }
        }
        return jar;
    }

    private Process daemon(String name, String main, String heap) throws IOException {
        String java = Path.of(System.getProperty("java.home"), "bin", "java").toString();
        List<String> cmd = new ArrayList<>(List.of(java, "-server", heap,
            "-Dstorm.home=" + dir, "-Dstorm.log.dir=" + dir.resolve("logs"), "-Dlogfile.name=" + name + ".log",
            "-Dlog4j.configurationFile=" + dir.resolve("log4j2/cluster.xml"),
            "-Djava.io.tmpdir=" + dir.resolve("local"),
            "-cp", dir.resolve("conf") + File.pathSeparator + lib + File.separator + "*", main));
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectErrorStream(true)
            .redirectOutput(dir.resolve("logs/" + name + ".out").toFile());
        pb.environment().put("JAVA_HOME", System.getProperty("java.home"));
        pb.environment().remove("STORM_CONF_DIR");
        Process p = pb.start();
        Files.writeString(dir.resolve("pids/" + name), p.pid() + "\n", StandardCharsets.UTF_8);
        return p;
    }

    private void checkDaemons() {
        for (Process p : daemons) {
            if (!p.isAlive()) {
                throw new IllegalStateException("a Storm daemon exited with status " + p.exitValue()
                    + " (logs: " + dir.resolve("logs") + ")");
            }
        }
    }

    /**
     * Kills the daemons and everything they started (LogWriters and
     * workers) at once: the measurement is over, nothing needs draining.
     */
    private synchronized void killAll() {
        List<ProcessHandle> all = new ArrayList<>();
        for (Process p : daemons) {
            p.descendants().forEach(all::add);
            all.add(p.toHandle());
        }
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle h : all) {
            try {
                h.onExit().get(10, TimeUnit.SECONDS);
            } catch (Exception e) {
                System.err.println("storm-bench: process " + h.pid() + " did not exit: " + e);
            }
        }
        daemons.clear();
    }

    private void waitFor(StormBench.Check c, int seconds, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);
        while (!c.ok()) {
            checkDaemons();
            if (System.nanoTime() > deadline) {
                throw new IllegalStateException("timed out after " + seconds + " s waiting for " + what
                    + " (logs: " + dir.resolve("logs") + ")");
            }
            Thread.sleep(10);
        }
    }

    /** A port free on every interface (Storm's servers bind the wildcard address). */
    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket()) {
            s.setReuseAddress(false);
            s.bind(new InetSocketAddress((InetAddress) null, 0));
            return s.getLocalPort();
        }
    }

    private static void deleteTree(Path p) throws IOException {
        if (!Files.exists(p, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
            return;
        }
        try (Stream<Path> paths = Files.walk(p)) {
            for (Path f : (Iterable<Path>) paths.sorted(Comparator.reverseOrder())::iterator) {
                Files.delete(f);
            }
        }
    }
}
