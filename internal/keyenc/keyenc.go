// Package keyenc is the canonical encoding of key values, the one
// definition of "the same key" in squall. state.Key is the encoding of its
// values, and fields grouping (topology.ByFields) routes a tuple by the
// hash of the encoding of its grouping values, so values that are the
// same state key always go to the same task.
//
// A value is encoded as msgpack, with these rules:
//
//   - integers use the smallest msgpack representation, so int(5),
//     int64(5) and uint8(5) are the same key;
//   - floats keep their width (float32 or float64) and are never the same
//     key as an integer;
//   - strings and byte slices are different keys even with equal bytes;
//     named types encode as their underlying type (a type RoomID string is
//     the same key as the string);
//   - time.Time uses msgpack's timestamp extension: the instant only, so
//     the same instant in two zones, or with and without a monotonic clock
//     reading, is the same key;
//   - pointers and interfaces encode what they point to (nil as nil);
//   - slices, arrays and structs encode element by element (structs by
//     their exported fields); maps, channels, functions, complex numbers
//     and unsafe pointers are rejected because their encoding is not
//     stable or not meaningful.
//
// The package imports no other squall package, so every layer may use
// it.
package keyenc

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"reflect"
	"time"

	"github.com/vmihailenco/msgpack/v5"
)

// Append appends the canonical encoding of one key value to b. It fails
// for a value with no stable encoding (see the package comment). Common
// scalar types are encoded directly, without allocating; the others go
// through msgpack after a check that their encoding is stable.
func Append(b []byte, v any) ([]byte, error) {
	switch x := v.(type) {
	case nil:
		return append(b, 0xc0), nil
	case bool:
		if x {
			return append(b, 0xc3), nil
		}
		return append(b, 0xc2), nil
	case string:
		return AppendString(b, x), nil
	case []byte:
		return AppendBin(b, x), nil
	case int:
		return AppendInt(b, int64(x)), nil
	case int8:
		return AppendInt(b, int64(x)), nil
	case int16:
		return AppendInt(b, int64(x)), nil
	case int32:
		return AppendInt(b, int64(x)), nil
	case int64:
		return AppendInt(b, x), nil
	case uint:
		return AppendUint(b, uint64(x)), nil
	case uint8:
		return AppendUint(b, uint64(x)), nil
	case uint16:
		return AppendUint(b, uint64(x)), nil
	case uint32:
		return AppendUint(b, uint64(x)), nil
	case uint64:
		return AppendUint(b, x), nil
	case float32:
		u := math.Float32bits(x)
		return append(b, 0xca, byte(u>>24), byte(u>>16), byte(u>>8), byte(u)), nil
	case float64:
		return AppendUint64Code(b, 0xcb, math.Float64bits(x)), nil
	case time.Time:
		return AppendTime(b, x), nil
	}
	if err := checkStable(reflect.ValueOf(v)); err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := msgpack.NewEncoder(&buf)
	enc.UseCompactInts(true)
	enc.SetSortMapKeys(true)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return append(b, buf.Bytes()...), nil
}

// AppendTime appends the msgpack timestamp extension of t, as
// msgpack.Encoder writes it: seconds and nanoseconds of the instant, in 4,
// 8 or 12 bytes; the zone and the monotonic clock reading are not part of
// it.
func AppendTime(b []byte, t time.Time) []byte {
	secs := uint64(t.Unix())
	nsec := uint64(t.Nanosecond())
	if secs>>34 == 0 {
		data := nsec<<34 | secs
		if data>>32 == 0 {
			return binary.BigEndian.AppendUint32(append(b, 0xd6, 0xff), uint32(data)) // fixext4
		}
		return binary.BigEndian.AppendUint64(append(b, 0xd7, 0xff), data) // fixext8
	}
	b = binary.BigEndian.AppendUint32(append(b, 0xc7, 12, 0xff), uint32(nsec)) // ext8 of 12 bytes
	return binary.BigEndian.AppendUint64(b, secs)
}

var timeType = reflect.TypeFor[time.Time]()

// checkStable rejects values whose msgpack encoding is not a function of
// the value: maps (iteration order), channels, functions, complex numbers
// and unsafe pointers.
func checkStable(v reflect.Value) error {
	if !v.IsValid() {
		return nil
	}
	if v.Type() == timeType {
		return nil
	}
	switch v.Kind() {
	case reflect.Map:
		return errors.New("maps have no stable encoding")
	case reflect.Chan, reflect.Func, reflect.UnsafePointer, reflect.Complex64, reflect.Complex128:
		return fmt.Errorf("%s values cannot be keys", v.Kind())
	case reflect.Pointer, reflect.Interface:
		if v.IsNil() {
			return nil
		}
		return checkStable(v.Elem())
	case reflect.Slice, reflect.Array:
		for i := range v.Len() {
			if err := checkStable(v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Struct:
		for i := range v.NumField() {
			if err := checkStable(v.Field(i)); err != nil {
				return err
			}
		}
	}
	return nil
}
