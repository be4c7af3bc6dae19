//go:build !roompresence_unfenced || roompresence_mutant

package main

import (
	"github.com/squallstream/squall"
	"github.com/squallstream/squall/trident/coordstore"
)

// clusterStore is the coordination store of the topology in a cluster's
// workers: nil, the cluster's own (its etcd, fenced by owner
// generation). (Built with the tag roompresence_unfenced, it is a store
// that fences nothing, which the partition harness must catch: see
// cluster_unfenced.go.)
func clusterStore(squall.Env) coordstore.Store { return nil }
