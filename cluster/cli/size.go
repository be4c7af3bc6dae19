package cli

import (
	"fmt"
	"math"
	"strconv"
	"strings"
)

// byteUnits are the suffixes parseByteSize accepts, upper-cased: the
// binary ones (KiB, and K as systemd and the kernel read it) are powers
// of 1024, the decimal ones (KB) powers of 1000.
var byteUnits = map[string]int64{
	"": 1, "B": 1,
	"K": 1 << 10, "KIB": 1 << 10, "KB": 1e3,
	"M": 1 << 20, "MIB": 1 << 20, "MB": 1e6,
	"G": 1 << 30, "GIB": 1 << 30, "GB": 1e9,
	"T": 1 << 40, "TIB": 1 << 40, "TB": 1e12,
}

// parseByteSize reads a size in bytes: a whole number with an optional
// unit, case-insensitive, maybe after a space: "1073741824", "512MiB",
// "2 GiB", "2G" (= 2GiB), "1GB" (= 10^9). It refuses negative sizes,
// fractions and sizes beyond math.MaxInt64.
func parseByteSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && t[i] >= '0' && t[i] <= '9' {
		i++
	}
	if i == 0 {
		return 0, fmt.Errorf("bad size %q: want a whole number of bytes with an optional unit (512MiB, 2GiB, 1073741824)", s)
	}
	unit := strings.ToUpper(strings.TrimSpace(t[i:]))
	mult, ok := byteUnits[unit]
	if !ok {
		return 0, fmt.Errorf("bad size %q: unknown unit %q (want B, KiB, MiB, GiB, TiB, K, M, G, T, KB, MB, GB or TB)", s, t[i:])
	}
	n, err := strconv.ParseInt(t[:i], 10, 64)
	if err != nil || n > math.MaxInt64/mult {
		return 0, fmt.Errorf("bad size %q: too large", s)
	}
	return n * mult, nil
}

// byteSize is a flag.Value of a size in bytes (parseByteSize).
type byteSize int64

func (b *byteSize) String() string {
	if b == nil {
		return "0"
	}
	return strconv.FormatInt(int64(*b), 10)
}

func (b *byteSize) Set(s string) error {
	n, err := parseByteSize(s)
	if err != nil {
		return err
	}
	*b = byteSize(n)
	return nil
}
