//go:build cgo

package memlimit

// cgoBuild is whether the binary may link cgo, whose threads reserve
// address space of their own (cgoThreadAddressSpace).
const cgoBuild = true
