package bench.storm;

import java.util.Collections;
import java.util.List;
import java.util.Map;

import org.apache.storm.spout.SpoutOutputCollector;
import org.apache.storm.task.TopologyContext;
import org.apache.storm.topology.OutputFieldsDeclarer;
import org.apache.storm.topology.base.BaseRichSpout;
import org.apache.storm.tuple.Fields;

/**
 * Emits the constant value "some data" in field "value", as storm-perf's
 * ConstSpout does.
 *
 * <p>Modes: untracked (no message id); timed (the message id is the emit
 * time in nanoseconds, so Ack can record the complete latency); limited (the
 * message id is a sequence number, emission starts when {@link Probe#go} is
 * set and stops after {@code limit} tuples).
 */
public class ConstSpout extends BaseRichSpout {
    enum Mode { UNTRACKED, TIMED, LIMITED }

    private static final List<Object> VALUE = Collections.singletonList("some data");

    private final Mode mode;
    private final long limit;
    private transient SpoutOutputCollector out;
    private transient long sent;
    private transient long acked;

    ConstSpout(Mode mode, long limit) {
        this.mode = mode;
        this.limit = limit;
    }

    @Override
    public void open(Map<String, Object> conf, TopologyContext context, SpoutOutputCollector collector) {
        out = collector;
        Probe.opened.set(true);
        Object probeFile = conf.get(SharedProbe.CONF_KEY);
        if (probeFile != null) {
            SharedProbe.bridge((String) probeFile); // the spout runs in a worker process
        }
    }

    @Override
    public void nextTuple() {
        switch (mode) {
            case UNTRACKED:
                out.emit(VALUE);
                return;
            case TIMED:
                out.emit(VALUE, System.nanoTime());
                return;
            default:
                if (sent == limit || !Probe.go.get()) {
                    return;
                }
                sent++;
                out.emit(VALUE, sent);
        }
    }

    @Override
    public void ack(Object msgId) {
        if (mode == Mode.TIMED && Probe.recording) {
            Probe.latency.record((System.nanoTime() - (Long) msgId) / 1000);
        }
        acked++;
        if (acked % Probe.PUBLISH_EVERY == 0) {
            Probe.acked.getAndAdd(Probe.PUBLISH_EVERY);
        }
    }

    @Override
    public void fail(Object msgId) {
        Probe.failed.incrementAndGet();
    }

    @Override
    public void declareOutputFields(OutputFieldsDeclarer declarer) {
        declarer.declare(new Fields("value"));
    }
}
