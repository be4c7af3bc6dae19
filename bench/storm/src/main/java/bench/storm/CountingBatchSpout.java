package bench.storm;

import java.util.List;
import java.util.Map;

import org.apache.storm.Config;
import org.apache.storm.trident.testing.FixedBatchSpout;
import org.apache.storm.tuple.Fields;

/**
 * Storm's FixedBatchSpout, cycling, recording the highest batch (txid) acked
 * to it (committed). Each task of the spout is a copy of its own, emitting
 * {@code maxBatchSize} tuples per txid, so a txid holds that many per task.
 */
public class CountingBatchSpout extends FixedBatchSpout {
    private final int maxParallelism;

    /**
     * A spout of up to {@code maxParallelism} tasks: FixedBatchSpout caps
     * its parallelism (topology.max.task.parallelism) at 1, which would
     * also cap the bolt that Trident ties to the spout's tasks.
     */
    @SafeVarargs
    CountingBatchSpout(Fields fields, int maxBatchSize, int maxParallelism, List<Object>... outputs) {
        super(fields, maxBatchSize, outputs);
        this.maxParallelism = maxParallelism;
        setCycle(true);
    }

    @Override
    public Map<String, Object> getComponentConfiguration() {
        Config conf = new Config();
        conf.setMaxTaskParallelism(maxParallelism);
        return conf;
    }

    @Override
    public void ack(long batchId) {
        super.ack(batchId);
        Probe.committedTxid.accumulateAndGet(batchId, Math::max);
    }
}
