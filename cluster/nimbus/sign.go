package nimbus

import (
	"github.com/squallstream/squall/cluster/meta"
)

// checkSigned reports an assignment that no nimbus of the cluster signed,
// when the cluster runs with certificates (Config.Bundle); without them
// every assignment passes.
func (n *Nimbus) checkSigned(a meta.Assignment) error {
	if n.cfg.Bundle == nil {
		return nil
	}
	_, err := a.Verify(n.cfg.Bundle.Roots(), n.cfg.Clock.Now())
	return err
}

// encodeSigned encodes an assignment, signed by this nimbus when it has
// certificates.
func (n *Nimbus) encodeSigned(a meta.Assignment) (string, error) {
	if n.cfg.Bundle != nil {
		if err := a.Sign(n.cfg.Bundle); err != nil {
			return "", err
		}
	}
	return meta.Encode(a), nil
}
