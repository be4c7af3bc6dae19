package etcdstore

import (
	"encoding/hex"
	"strconv"
	"strings"

	"github.com/squallstream/squall/trident/coordstore"
	"github.com/squallstream/squall/txn"
)

// Key layout, under the store's prefix P (see the package comment):
//
//	P/<owner>/gen                                  the owner's newest generation, decimal
//	P/<owner>/coord                                the coordinator record
//	P/<owner>/meta/<stream>/<partition>/<txid>     one metadata entry
//
// Names are escaped (escape) so that they contain no '/', which makes the
// layout injective; txids are 16 hexadecimal digits, so etcd's byte order
// of the keys of one metadata sequence is their txid order.

// ownerDir returns "P/<owner>/".
func (st *Store) ownerDir(owner string) string {
	return st.prefix + "/" + escape(owner) + "/"
}

func (st *Store) genKey(owner string) string   { return st.ownerDir(owner) + "gen" }
func (st *Store) coordKey(owner string) string { return st.ownerDir(owner) + "coord" }

// metaDir returns the prefix of every entry of k: "P/<owner>/meta/<stream>/<partition>/".
func (st *Store) metaDir(k coordstore.Key) string {
	return st.ownerDir(k.Owner) + "meta/" + escape(k.Stream) + "/" + escape(k.Partition) + "/"
}

// metaKey returns the key of k's entry for txid. Every key below
// metaKey(k, t) in etcd's order and under metaDir(k) is an entry before t.
func (st *Store) metaKey(k coordstore.Key, txid txn.TxID) string {
	return st.metaDir(k) + txidString(txid)
}

// txidString returns txid as 16 lowercase hexadecimal digits.
func txidString(txid txn.TxID) string {
	const digits = "0000000000000000"
	s := strconv.FormatUint(uint64(txid), 16)
	return digits[len(s):] + s
}

// parseTxID decodes what txidString wrote.
func parseTxID(s string) (txn.TxID, bool) {
	if len(s) != 16 || strings.ToLower(s) != s {
		return 0, false
	}
	n, err := strconv.ParseUint(s, 16, 64)
	return txn.TxID(n), err == nil
}

// escape returns name with every byte that is not a visible ASCII
// character, and '/' and '%' themselves, written as '%' and two
// hexadecimal digits: different names give different strings, none of
// which contains '/'.
func escape(name string) string {
	plain := true
	for i := range len(name) {
		if !keep(name[i]) {
			plain = false
			break
		}
	}
	if plain {
		return name
	}
	var b strings.Builder
	b.Grow(len(name) + 8)
	for i := range len(name) {
		c := name[i]
		if keep(c) {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteString(hex.EncodeToString([]byte{c}))
	}
	return b.String()
}

// keep reports whether escape writes c as it is.
func keep(c byte) bool { return c > ' ' && c < 0x7f && c != '/' && c != '%' }

// genValue returns the stored form of a generation: decimal digits.
func genValue(g coordstore.Generation) string { return strconv.FormatUint(uint64(g), 10) }
