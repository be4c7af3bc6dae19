package main

import (
	"strings"
	"testing"
)

func TestParseClusterSettings(t *testing.T) {
	t.Setenv(kafkaVar, "")
	t.Setenv(cassandraVar, "")
	env := func(kv map[string]string) func(string) string { return func(k string) string { return kv[k] } }

	s, err := parseClusterSettings(env(map[string]string{
		clusterEnvPrefix + "KAFKA": "k1:9092,k2:9092", clusterEnvPrefix + "CASSANDRA": "c1:9042",
		clusterEnvPrefix + "KEYSPACE": "rp_test", clusterEnvPrefix + "TASKS": "3", clusterEnvPrefix + "BATCH_RECORDS": "50",
		clusterEnvPrefix + "BATCH_INTERVAL": "20ms", clusterEnvPrefix + "TOPIC": "ev",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(s.o.brokers(), ",") != "k1:9092,k2:9092" || s.o.keyspace != "rp_test" || s.tasks != 3 ||
		s.batchRecords != 50 || s.batchEvery.Milliseconds() != 20 || s.o.topic != "ev" || s.o.dlq != "room-events-dlq" {
		t.Errorf("settings %+v", s)
	}

	for _, c := range []struct {
		env  map[string]string
		want string
	}{
		{map[string]string{clusterEnvPrefix + "CASSANDRA": "c1"}, kafkaVar},
		{map[string]string{clusterEnvPrefix + "KAFKA": "k1"}, cassandraVar},
		{map[string]string{clusterEnvPrefix + "KAFKA": "k1", clusterEnvPrefix + "CASSANDRA": "c1", clusterEnvPrefix + "TASKS": "x"}, clusterEnvPrefix + "TASKS"},
		{map[string]string{clusterEnvPrefix + "KAFKA": "k1", clusterEnvPrefix + "CASSANDRA": "c1", clusterEnvPrefix + "BATCH_RECORDS": "0"}, clusterEnvPrefix + "BATCH_RECORDS"},
	} {
		if _, err := parseClusterSettings(env(c.env)); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%v: err %v, want one naming %s", c.env, err, c.want)
		}
	}
}
