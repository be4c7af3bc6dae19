//go:build !roompresence_mutant && !roompresence_unfenced

package main

import "github.com/squallstream/squall/trident"

// clusterTimelines is the backing of the timelines in a cluster's
// workers: the store's own. (Built with the tag roompresence_mutant, it
// is a broken one that the cluster test must catch: see
// cluster_mutant.go.)
func clusterTimelines(f trident.BackingFactory) trident.BackingFactory { return f }
