package nimbus

import (
	"errors"
	"fmt"

	"github.com/squallstream/squall/cluster/meta"
	"github.com/squallstream/squall/internal/httpguard"
)

// Action is what a request asks of a nimbus, as a Policy sees it.
type Action string

// The actions of the API.
const (
	ActionRead       Action = "read"       // list, the cluster view, metrics
	ActionSubmit     Action = "submit"     // a new topology, or an upgrade
	ActionKill       Action = "kill"       //
	ActionActivate   Action = "activate"   //
	ActionDeactivate Action = "deactivate" //
	ActionRebalance  Action = "rebalance"  //
	ActionCode       Action = "code"       // download an artifact
)

// ErrForbidden is wrapped by a Policy's refusals.
var ErrForbidden = errors.New("nimbus: forbidden")

// Policy decides whether an identity may take an action on a topology.
// spec is the topology's current spec, nil for a topology not submitted
// (and for actions on no topology).
type Policy interface {
	Allow(id httpguard.Identity, action Action, spec *meta.Spec) error
}

// PolicyFunc adapts a function to a Policy.
type PolicyFunc func(id httpguard.Identity, action Action, spec *meta.Spec) error

// Allow calls f.
func (f PolicyFunc) Allow(id httpguard.Identity, action Action, spec *meta.Spec) error {
	return f(id, action, spec)
}

// DefaultPolicy is the policy of a nimbus whose Config names none:
//   - reads: any identity of the cluster (and, on loopback, a request
//     without a certificate);
//   - code: nimbuses and supervisors only;
//   - submitting a new topology: clients and admins;
//   - upgrading, killing, activating, deactivating and rebalancing a
//     topology: its owner (the identity that first submitted it) and
//     admins.
var DefaultPolicy Policy = PolicyFunc(defaultPolicy)

func defaultPolicy(id httpguard.Identity, action Action, spec *meta.Spec) error {
	switch action {
	case ActionRead:
		return nil
	case ActionCode:
		if id.Role == httpguard.RoleNimbus || id.Role == httpguard.RoleSupervisor {
			return nil
		}
		return fmt.Errorf("%w: %s may not download code (nimbuses and supervisors only)", ErrForbidden, id)
	}
	if id.IsAnonymous() {
		return fmt.Errorf("%w: %s needs a client or admin certificate", ErrForbidden, action)
	}
	if id.Role == httpguard.RoleAdmin {
		return nil
	}
	if id.Role != httpguard.RoleClient {
		return fmt.Errorf("%w: %s may not %s topologies (clients and admins only)", ErrForbidden, id, action)
	}
	if spec == nil || spec.Topology == "" {
		return nil // a new topology (submit), or none (the action answers 404)
	}
	if spec.Owner != "" && spec.Owner != id.String() {
		return fmt.Errorf("%w: topology %s belongs to %s; %s may not %s it (its owner or an admin may)", ErrForbidden,
			spec.Topology, spec.Owner, id, action)
	}
	return nil
}
