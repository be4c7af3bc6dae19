package keyenc

import "math"

// The functions below append msgpack values in their most compact form,
// exactly as msgpack.Encoder does with UseCompactInts(true).

// AppendArrayLen appends an array header for n elements.
func AppendArrayLen(b []byte, n int) []byte {
	switch {
	case n < 16:
		return append(b, 0x90|byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xdc, byte(n>>8), byte(n))
	default:
		return append(b, 0xdd, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendUint appends an unsigned integer.
func AppendUint(b []byte, n uint64) []byte {
	switch {
	case n <= math.MaxInt8:
		return append(b, byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xcc, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xcd, byte(n>>8), byte(n))
	case n <= math.MaxUint32:
		return append(b, 0xce, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return AppendUint64Code(b, 0xcf, n)
	}
}

// AppendInt appends a signed integer.
func AppendInt(b []byte, n int64) []byte {
	switch {
	case n >= 0:
		return AppendUint(b, uint64(n))
	case n >= -32:
		return append(b, byte(n))
	case n >= math.MinInt8:
		return append(b, 0xd0, byte(n))
	case n >= math.MinInt16:
		return append(b, 0xd1, byte(n>>8), byte(n))
	case n >= math.MinInt32:
		return append(b, 0xd2, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	default:
		return AppendUint64Code(b, 0xd3, uint64(n))
	}
}

// AppendUint64Code appends code followed by the 8 big-endian bytes of n.
func AppendUint64Code(b []byte, code byte, n uint64) []byte {
	return append(b, code, byte(n>>56), byte(n>>48), byte(n>>40), byte(n>>32),
		byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
}

// AppendStringHeader appends the header of a str value of n bytes.
func AppendStringHeader(b []byte, n int) []byte {
	switch {
	case n < 32:
		return append(b, 0xa0|byte(n))
	case n <= math.MaxUint8:
		return append(b, 0xd9, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xda, byte(n>>8), byte(n))
	default:
		return append(b, 0xdb, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendString appends a str value.
func AppendString(b []byte, s string) []byte {
	return append(AppendStringHeader(b, len(s)), s...)
}

// AppendBinHeader appends the header of a bin value of n bytes.
func AppendBinHeader(b []byte, n int) []byte {
	switch {
	case n <= math.MaxUint8:
		return append(b, 0xc4, byte(n))
	case n <= math.MaxUint16:
		return append(b, 0xc5, byte(n>>8), byte(n))
	default:
		return append(b, 0xc6, byte(n>>24), byte(n>>16), byte(n>>8), byte(n))
	}
}

// AppendBin appends a bin value.
func AppendBin(b []byte, p []byte) []byte {
	return append(AppendBinHeader(b, len(p)), p...)
}
