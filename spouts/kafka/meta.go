package kafka

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/squallstream/squall/trident/spout"
	"github.com/squallstream/squall/txn"
)

// Meta is the stored metadata of one partition's batch: the batch holds
// the Count records at offsets [First, Next). An empty batch is
// {First: p, Next: p, Count: 0} and keeps the position p. Count can be
// less than Next-First where the log has no record at some offsets
// (transaction markers, compaction).
type Meta struct {
	First      int64    `json:"first"`
	Next       int64    `json:"next"`
	Count      int      `json:"count"`
	TopologyID string   `json:"topology"`
	TxID       txn.TxID `json:"txid"`
}

// String describes the batch, for errors and logs.
func (m Meta) String() string {
	return fmt.Sprintf("offsets [%d, %d) (%d records) of topology %q txid %d", m.First, m.Next, m.Count, m.TopologyID, m.TxID)
}

// topicPartition is a partition of a topic.
type topicPartition struct {
	topic     string
	partition int
}

func (tp topicPartition) String() string { return tp.topic + "@" + strconv.Itoa(tp.partition) }

// name returns the spout partition name, "topic@partition" (Storm's
// KafkaTridentSpoutTopicPartition id).
func (tp topicPartition) name() spout.Partition { return spout.Partition(tp.String()) }

// parsePartition reads a name made by topicPartition.name.
func parsePartition(p spout.Partition) (topicPartition, error) {
	s := string(p)
	i := strings.LastIndexByte(s, '@')
	if i <= 0 {
		return topicPartition{}, fmt.Errorf("kafka: partition name %q is not topic@partition", s)
	}
	n, err := strconv.Atoi(s[i+1:])
	if err != nil || n < 0 {
		return topicPartition{}, fmt.Errorf("kafka: partition name %q is not topic@partition", s)
	}
	return topicPartition{topic: s[:i], partition: n}, nil
}
