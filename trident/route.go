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
	switch n.kind {
	case kindMerge:
		return route{how: partLocalOrShuffle}
	case kindQuery:
		if n.byKeys {
			return route{how: partFields, fields: n.inSch.fields}
		}
		return route{how: partShuffle}
	case kindJoin:
		return route{how: partFields, fields: n.joinKeys[side]}
	case kindPartition:
		if n.part == partFields {
			return route{how: partFields, fields: n.inSch.fields}
		}
		return route{how: n.part}
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
