//go:build !soak

package trident

// faultSeeds is the number of seeds per flavour of TestExactlyOnceUnderFaults
// in a normal run; `go test -tags soak` runs many more.
const faultSeeds = 200
