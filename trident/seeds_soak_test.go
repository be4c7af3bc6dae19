//go:build soak

package trident

// faultSeeds under -tags soak: 10,000 runs over the three flavours.
const faultSeeds = 3334
