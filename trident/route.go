package trident

import (
	"fmt"
	"strings"
)

// route is how tuples reach an entry node of a group from another group:
// a partitioning and, for partFields, the fields it hashes.
type route struct {
	how    partitioning
	fields Fields
}

// route returns how the node's group receives its input number side. It
// is the one place that decides the grouping: grouping turns it into the
// tuple-level grouping, and the printed plan shows it.
func (n *node) route(side int) route {
	switch op := n.op.(type) {
	case *mergeOp:
		return route{how: partLocalOrShuffle}
	case *queryOp:
		if op.byKeys {
			return route{how: partFields, fields: op.inSch.fields}
		}
		return route{how: partShuffle}
	case *joinOp:
		return route{how: partFields, fields: op.keys[side]}
	case *partitionOp:
		if op.how == partFields {
			return route{how: partFields, fields: op.fields}
		}
		return route{how: op.how}
	}
	return route{how: partShuffle}
}

func (r route) String() string {
	if r.how == partFields {
		return "fields(" + strings.Join(r.fields, ",") + ")"
	}
	return r.how.String()
}

func (p partitioning) String() string {
	switch p {
	case partShuffle:
		return "shuffle"
	case partFields:
		return "fields"
	case partGlobal:
		return "global"
	case partBroadcast:
		return "broadcast"
	case partBatchGlobal:
		return "batchGlobal"
	case partLocalOrShuffle:
		return "localOrShuffle"
	}
	return fmt.Sprintf("partitioning(%d)", uint8(p))
}
