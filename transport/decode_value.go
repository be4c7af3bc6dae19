package transport

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"
)

// value decodes one tuple value (see the package comment for the types).
func (d *decoder) value(depth int) (any, error) {
	code, err := d.c.peek()
	if err != nil {
		return nil, err
	}
	switch {
	case code <= codePosFixIntHi || code >= codeNegFixIntLo, code >= codeUint8 && code <= codeInt64:
		u, err := d.c.integer()
		if err == nil {
			err = d.charge(costInt(u))
		}
		return int(int64(u)), err
	case code >= codeFixStrLow && code <= codeFixStrHigh, code >= codeStr8 && code <= codeStr32:
		b, err := d.c.strBytes(false)
		if err == nil {
			err = d.charge(costString(len(b)))
		}
		if err != nil {
			return nil, err
		}
		return d.strs.get(b), nil
	case code == codeFloat64:
		if err := d.charge(costScalar); err != nil {
			return nil, err
		}
		return d.c.float64()
	case code == codeTrue, code == codeFalse:
		d.c.pos++
		return code == codeTrue, nil
	case code == codeNil:
		d.c.pos++
		return nil, nil
	case code >= codeBin8 && code <= codeBin32:
		b, err := d.c.strBytes(true)
		if err == nil {
			err = d.charge(costBin(len(b)))
		}
		if err != nil {
			return nil, err
		}
		return append([]byte{}, b...), nil
	case code == codeFloat32:
		if err := d.charge(costScalar); err != nil {
			return nil, err
		}
		return d.c.float32()
	case code >= codeExt8 && code <= codeExt32, code >= codeFixExt1 && code <= codeFixExt16:
		return d.ext()
	case code >= codeFixArrLow && code <= codeFixArrHigh, code == codeArray16, code == codeArray32:
		return d.array(depth)
	case code >= codeFixMapLow && code <= codeFixMapHigh, code == codeMap16, code == codeMap32:
		return d.mapValue(depth)
	}
	return nil, fmt.Errorf("unexpected code %#x", code)
}

func (d *decoder) array(depth int) (any, error) {
	if depth >= maxDepth {
		return nil, errors.New("values nested too deeply")
	}
	n, err := d.arrayLen(1)
	if err != nil {
		return nil, err
	}
	if err := d.charge(costArray(n)); err != nil {
		return nil, err
	}
	a := make([]any, n)
	for i := range a {
		if a[i], err = d.value(depth + 1); err != nil {
			return nil, err
		}
	}
	return a, nil
}

func (d *decoder) mapValue(depth int) (any, error) {
	if depth >= maxDepth {
		return nil, errors.New("values nested too deeply")
	}
	n, err := d.c.mapHeader()
	if err != nil {
		return nil, err
	}
	if n < 0 || 2*n > d.c.left() {
		return nil, fmt.Errorf("map of %d entries in %d bytes", n, d.c.left())
	}
	if err := d.charge(costMap(n)); err != nil {
		return nil, err
	}
	m := make(map[string]any, n)
	for range n {
		k, err := d.c.strBytes(false)
		if err != nil {
			return nil, fmt.Errorf("map key: %w", err)
		}
		if err := d.charge(costAlloc(len(k))); err != nil {
			return nil, err
		}
		v, err := d.value(depth + 1)
		if err != nil {
			return nil, err
		}
		m[string(k)] = v
	}
	return m, nil
}

func (d *decoder) ext() (any, error) {
	id, n, err := d.c.extHeader()
	if err != nil {
		return nil, err
	}
	data, err := d.c.take(n)
	if err != nil {
		return nil, err
	}
	switch id {
	case extTime:
		if err := d.charge(costTime); err != nil {
			return nil, err
		}
		return decodeTime(data)
	case extSized:
		if err := d.charge(costScalar); err != nil {
			return nil, err
		}
		return decodeSized(data)
	}
	t := d.types.lookupID(id)
	if t == nil {
		return nil, fmt.Errorf("unknown extension %d", id)
	}
	if err := d.charge(costExt(n)); err != nil {
		return nil, err
	}
	v, err := t.dec(data)
	if err != nil {
		return nil, fmt.Errorf("extension %d (%v): %w", id, t.typ, err)
	}
	return v, nil
}

// decodeTime decodes msgpack's timestamp extension, in UTC.
func decodeTime(b []byte) (time.Time, error) {
	var sec, nsec int64
	switch len(b) {
	case 4:
		sec = int64(binary.BigEndian.Uint32(b))
	case 8:
		u := binary.BigEndian.Uint64(b)
		sec, nsec = int64(u&(1<<34-1)), int64(u>>34)
	case 12:
		nsec, sec = int64(binary.BigEndian.Uint32(b)), int64(binary.BigEndian.Uint64(b[4:]))
	default:
		return time.Time{}, fmt.Errorf("timestamp of %d bytes", len(b))
	}
	if nsec >= 1e9 {
		return time.Time{}, fmt.Errorf("timestamp with %d ns", nsec)
	}
	return time.Unix(sec, nsec).UTC(), nil
}

// decodeSized decodes an extSized integer.
func decodeSized(b []byte) (any, error) {
	if len(b) == 0 || len(b) != 1+sizedWidth(b[0]) {
		return nil, fmt.Errorf("sized integer of %d bytes", len(b))
	}
	var u uint64
	for _, c := range b[1:] {
		u = u<<8 | uint64(c)
	}
	switch b[0] {
	case tagInt8:
		return int8(u), nil
	case tagInt16:
		return int16(u), nil
	case tagInt32:
		return int32(u), nil
	case tagInt64:
		return int64(u), nil
	case tagUint:
		return uint(u), nil
	case tagUint8:
		return uint8(u), nil
	case tagUint16:
		return uint16(u), nil
	case tagUint32:
		return uint32(u), nil
	default: // tagUint64; sizedWidth rejected the unknown tags
		return u, nil
	}
}
