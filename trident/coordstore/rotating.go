package coordstore

import (
	"context"

	"github.com/squallstream/squall/txn"
)

// Rotating is Storm's RotatingTransactionalState over a Store: the
// metadata entries of one key, by txid, written by generation Gen of the
// key's owner. It holds no state of its own.
type Rotating struct {
	Store Store
	Key   Key
	Gen   Generation
}

// State returns the entry for txid and whether there is one.
func (r Rotating) State(ctx context.Context, txid txn.TxID) ([]byte, bool, error) {
	return r.Store.GetMeta(ctx, r.Key, txid)
}

// StateOrInit returns the entry for txid, creating it first if there is
// none: with init(prev), where prev is the value of the entry before txid
// (nil if none), when txid is after every entry; with an empty value when a
// later entry exists, which tells an emitter that this txid has nothing
// for the partition. This is Storm's getState(txid, initializer).
func (r Rotating) StateOrInit(ctx context.Context, txid txn.TxID, init func(prev []byte) ([]byte, error)) ([]byte, error) {
	v, ok, err := r.Store.GetMeta(ctx, r.Key, txid)
	if err != nil || ok {
		return v, err
	}
	last, ok, err := r.Last(ctx)
	if err != nil {
		return nil, err
	}
	v = nil
	if !ok || last.TxID < txid {
		var prev []byte
		if ok {
			prev = last.Value
		}
		if v, err = init(prev); err != nil {
			return nil, err
		}
	}
	if err := r.Store.PutMeta(ctx, r.Gen, r.Key, txid, v); err != nil {
		return nil, err
	}
	return v, nil
}

// Previous returns the entry with the greatest txid below txid.
func (r Rotating) Previous(ctx context.Context, txid txn.TxID) (Entry, bool, error) {
	return r.Store.PrevMeta(ctx, r.Key, txid)
}

// Last returns the entry with the greatest txid.
func (r Rotating) Last(ctx context.Context) (Entry, bool, error) {
	return r.Store.PrevMeta(ctx, r.Key, MaxTxID)
}

// Override sets the entry for txid.
func (r Rotating) Override(ctx context.Context, txid txn.TxID, value []byte) error {
	return r.Store.PutMeta(ctx, r.Gen, r.Key, txid, value)
}

// Remove deletes the entry for txid, if any.
func (r Rotating) Remove(ctx context.Context, txid txn.TxID) error {
	return r.Store.RemoveMeta(ctx, r.Gen, r.Key, txid)
}

// CleanupBefore deletes every entry below txid.
func (r Rotating) CleanupBefore(ctx context.Context, txid txn.TxID) error {
	return r.Store.CleanupMetaBefore(ctx, r.Gen, r.Key, txid)
}
