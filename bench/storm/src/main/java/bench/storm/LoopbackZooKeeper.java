package bench.storm;

import java.io.File;
import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.util.Comparator;
import java.util.stream.Stream;

import org.apache.storm.shade.org.apache.zookeeper.server.NIOServerCnxnFactory;
import org.apache.storm.shade.org.apache.zookeeper.server.ZooKeeperServer;

/**
 * An in-process ZooKeeper bound to the loopback address only. Storm's
 * LocalCluster would otherwise start its own in-process ZooKeeper on all
 * interfaces; when storm.zookeeper.servers is set it uses this one instead.
 */
final class LoopbackZooKeeper implements AutoCloseable {
    private final File dir;
    private final NIOServerCnxnFactory factory;

    LoopbackZooKeeper() throws IOException, InterruptedException {
        dir = Files.createTempDirectory("storm-bench-zk").toFile();
        ZooKeeperServer server = new ZooKeeperServer(dir, dir, 2000);
        factory = new NIOServerCnxnFactory();
        factory.configure(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0), 0);
        factory.startup(server);
    }

    int port() {
        return factory.getLocalPort();
    }

    String host() {
        return factory.getLocalAddress().getAddress().getHostAddress();
    }

    @Override
    public void close() throws IOException {
        factory.shutdown();
        try (Stream<java.nio.file.Path> paths = Files.walk(dir.toPath())) {
            paths.sorted(Comparator.reverseOrder()).map(java.nio.file.Path::toFile).forEach(File::delete);
        }
    }
}
