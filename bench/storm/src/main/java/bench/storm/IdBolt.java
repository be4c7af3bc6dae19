package bench.storm;

import java.util.Map;

import org.apache.storm.task.OutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichBolt;
import org.apache.storm.tuple.Fields;
import org.apache.storm.tuple.Tuple;

/** Re-emits its input anchored to it, then acks it (storm-perf's IdBolt). */
public class IdBolt extends BaseRichBolt {
    private transient OutputCollector out;

    @Override
    public void prepare(Map<String, Object> conf, TopologyContext context, OutputCollector collector) {
        out = collector;
    }

    @Override
    public void execute(Tuple input) {
        out.emit(input, input.getValues());
        out.ack(input);
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("value"));
    }
}
