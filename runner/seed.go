package runner

import (
	"encoding/binary"
	"math/rand/v2"
	"strconv"
)

// splitmix64 is the SplitMix64 finaliser (Steele, Lea & Flood 2014): a
// bijective mixer whose output bits each depend on every input bit.
func splitmix64(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// seedHash chains splitmix64 over a sequence of fields; strings are
// length-prefixed so that field boundaries cannot be confused.
type seedHash uint64

func (h *seedHash) u64(v uint64) { *h = seedHash(splitmix64(uint64(*h) ^ v)) }

func (h *seedHash) str(s string) {
	h.u64(uint64(len(s)))
	var buf [8]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		clear(buf[n:])
		h.u64(binary.LittleEndian.Uint64(buf[:]))
		s = s[n:]
	}
}

func (h seedHash) pcg() *rand.Rand {
	h.u64(1)
	a := uint64(h)
	h.u64(2)
	return rand.New(rand.NewPCG(a, uint64(h)))
}

// FormatX formats a sweep value as it appears in seeds, file rows and
// Task.Params: strconv 'g' with the shortest exact representation.
func FormatX(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }

// TaskRng returns the random source of one task: a PCG seeded by hashing
// (seed, specID, FormatX(x), trial). It depends on the point's value, not
// its index, so adding or removing sweep points leaves other points'
// results unchanged.
func TaskRng(seed uint64, specID string, x float64, trial int) *rand.Rand {
	h := seedHash(splitmix64(seed))
	h.str(specID)
	h.str("task")
	h.str(FormatX(x))
	h.u64(uint64(trial))
	return h.pcg()
}

// SetupRng returns the random source of Spec.Setup: a PCG seeded by
// hashing (seed, specID, "setup").
func SetupRng(seed uint64, specID string) *rand.Rand {
	h := seedHash(splitmix64(seed))
	h.str(specID)
	h.str("setup")
	return h.pcg()
}
