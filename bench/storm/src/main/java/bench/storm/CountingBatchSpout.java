package bench.storm;

import java.util.List;

import org.apache.storm.trident.testing.FixedBatchSpout;
import org.apache.storm.tuple.Fields;

/** Storm's FixedBatchSpout, cycling, counting the batches acked to it (committed). */
public class CountingBatchSpout extends FixedBatchSpout {
    @SafeVarargs
    CountingBatchSpout(Fields fields, int maxBatchSize, List<Object>... outputs) {
        super(fields, maxBatchSize, outputs);
        setCycle(true);
    }

    @Override
    public void ack(long batchId) {
        super.ack(batchId);
        Probe.batches.incrementAndGet();
    }
}
