// Package seed derives independent random streams from one user seed by
// hashing the seed together with fields that name the stream (a protocol
// step, a worker, an experiment ID, a sweep value, a trial).
//
// The mixer is the SplitMix64 finaliser (Steele, Lea & Flood 2014),
//
//	m(z) = f₃₁(c₂ · f₂₇(c₁ · f₃₀(z + γ))),  f_s(x) = x ⊕ (x ≫ s),
//	γ = 0x9e3779b97f4a7c15, c₁ = 0xbf58476d1ce4e5b9, c₂ = 0x94d049bb133111eb,
//
// with arithmetic mod 2⁶⁴: a bijection of 64-bit words in which every
// output bit depends on every input bit. A Hash starts at h = m(seed) and
// absorbs fields in order:
//
//	an integer v:  h ← m(h ⊕ v)  (negative ints as two's complement)
//	a string s:    the integer len(s), then s in 8-byte little-endian
//	               words, the last one zero-padded
//
// The length prefix keeps field boundaries apart: ("ab", "c") and
// ("a", "bc") hash differently. A Hash becomes a PCG generator
// (math/rand/v2) in one of two ways, each pinned by results already
// published with it:
//
//	Rand:       PCG(m(h ⊕ 1), m(h ⊕ 2))                 the root package wcmc
//	ChainRand:  PCG(h₁, m(h₁ ⊕ 2)),  h₁ = m(h ⊕ 1)      the sweep engine (runner)
//
// Inside a task, where one generator is already seeded, Split draws a
// child stream from it, and Hash.Rand over words names streams that must
// not depend on the order of the draws (a protocol's optimiser, a claim's
// bootstrap).
package seed

import (
	"encoding/binary"
	"math/rand/v2"
)

// Mix is the SplitMix64 finaliser m (see the package documentation).
func Mix(z uint64) uint64 {
	z += 0x9e3779b97f4a7c15
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// Hash is the state h of a chain of Mix over a seed and fields. It is a
// value: each Add returns the extended hash and leaves h unchanged.
type Hash uint64

// New returns the hash of seed alone, h = m(seed).
func New(seed uint64) Hash { return Hash(Mix(seed)) }

// AddUint64 absorbs the integer v: h ← m(h ⊕ v).
func (h Hash) AddUint64(v uint64) Hash { return Hash(Mix(uint64(h) ^ v)) }

// AddString absorbs s: its length, then its bytes in 8-byte
// little-endian words, the last zero-padded.
func (h Hash) AddString(s string) Hash {
	h = h.AddUint64(uint64(len(s)))
	var buf [8]byte
	for len(s) > 0 {
		n := copy(buf[:], s)
		clear(buf[n:])
		h = h.AddUint64(binary.LittleEndian.Uint64(buf[:]))
		s = s[n:]
	}
	return h
}

// Rand returns a PCG seeded with (m(h ⊕ 1), m(h ⊕ 2)).
func (h Hash) Rand() *rand.Rand {
	return rand.New(rand.NewPCG(uint64(h.AddUint64(1)), uint64(h.AddUint64(2))))
}

// ChainRand returns a PCG seeded with the next two states of the chain,
// (h₁, m(h₁ ⊕ 2)) with h₁ = m(h ⊕ 1).
func (h Hash) ChainRand() *rand.Rand {
	h1 := h.AddUint64(1)
	return rand.New(rand.NewPCG(uint64(h1), uint64(h1.AddUint64(2))))
}

// Chains returns the generators of n Markov chains on one stream: chain 1
// draws from first (so that the first of n chains draws what a single
// chain draws), chain c ≥ 2 from h.AddUint64(c − 1).Rand().
func (h Hash) Chains(first *rand.Rand, n int) []*rand.Rand {
	rngs := make([]*rand.Rand, n)
	for c := range rngs {
		if c == 0 {
			rngs[c] = first
		} else {
			rngs[c] = h.AddUint64(uint64(c)).Rand()
		}
	}
	return rngs
}

// Split draws an independent child stream from rng: PCG(u₁, u₂) with u₁,
// u₂ the next two words of rng. It advances rng by two draws.
func Split(rng *rand.Rand) *rand.Rand {
	return rand.New(rand.NewPCG(rng.Uint64(), rng.Uint64()))
}

// Words returns the Hash of seed 0 with the given strings absorbed in
// order: a stream named by words alone.
func Words(words ...string) Hash {
	h := New(0)
	for _, w := range words {
		h = h.AddString(w)
	}
	return h
}
