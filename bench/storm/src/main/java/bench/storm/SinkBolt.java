package bench.storm;

import java.util.Map;

import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Tuple;

/**
 * Counts its input and acks it (storm-perf's DevNullBolt), or, with ack
 * false, drops it without acking, so that its tree stays pending.
 */
public class SinkBolt extends BaseRichBolt {
    private final boolean ack;
    private transient OutputCollector out;
    private transient long n;

    SinkBolt(boolean ack) {
        this.ack = ack;
    }

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        out = collector;
    }

    @Override
    public void execute(Tuple input) {
        if (ack) {
            out.ack(input);
        }
        n++;
        if (n % Probe.PUBLISH_EVERY == 0) {
            Probe.sunk.getAndAdd(Probe.PUBLISH_EVERY);
        }
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
    }
}
