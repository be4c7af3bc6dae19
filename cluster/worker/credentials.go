package worker

import (
	"fmt"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/cluster/pki"
)

// checkCredentials returns an exit code (and error) when the worker must
// not run assignment a with its certificate: the assignment is not signed
// by a nimbus of the cluster (exit 1), or the certificate was issued for
// another epoch (meta.ExitReassigned: the supervisor starts the worker
// again with a certificate of the current epoch). It returns -1 when the
// worker may run, and always without a certificate.
func (w *worker) checkCredentials(a *meta.Assignment) (int, error) {
	b := w.cfg.Bundle
	if b == nil {
		return -1, nil
	}
	if _, err := a.Verify(b.Roots(), w.clk.Now()); err != nil {
		return 1, fmt.Errorf("worker: %w", err)
	}
	if got, want := b.Identity().Name, pki.WorkerName(w.cfg.Topology.Name, a.Epoch); got != want {
		w.log.Info("worker: its certificate is for another epoch; exiting to be started with a new one", "certificate", got, "want", want)
		return meta.ExitReassigned, nil
	}
	return -1, nil
}
