package bench.storm;

import org.apache.storm.trident.operation.BaseFunction;
import org.apache.storm.trident.operation.TridentCollector;
import org.apache.storm.trident.tuple.TridentTuple;
import org.apache.storm.tuple.Values;

/** Emits each space-separated word of field 0 as one tuple. */
public class Split extends BaseFunction {
    @Override
    public void execute(TridentTuple tuple, TridentCollector collector) {
        for (String word : tuple.getString(0).split(" ")) {
            collector.emit(new Values(word));
        }
    }
}
