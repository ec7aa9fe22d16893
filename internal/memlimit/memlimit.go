// Package memlimit bounds the memory a computation may ask for, so that a
// size given on the command line or as a run's parameter that cannot fit
// is refused before anything is allocated, with the bytes it would need,
// rather than ending in an out-of-memory crash.
//
// The limit is WCMC_MAX_MEMORY when set (bytes, or with a suffix K, M, G,
// T: powers of 1024), else the memory of the machine or, when lower, of
// the process's container (the cgroup's memory.max, or
// memory.limit_in_bytes under cgroup v1). Without WCMC_MAX_MEMORY, a
// process whose address space is capped (ulimit -v, RLIMIT_AS) is also
// checked against that cap, counting what the Go runtime reserves beside
// the memory itself (see AddressSpace).
package memlimit

import (
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// Env is the environment variable that sets the limit.
const Env = "WCMC_MAX_MEMORY"

// fallback is the limit where the machine's memory is unknown.
const fallback = 16 << 30

// Limit returns the limit on resident memory in bytes and where it comes
// from.
func Limit() (bytes float64, source string, err error) {
	if v := strings.TrimSpace(os.Getenv(Env)); v != "" {
		b, err := Parse(v)
		if err != nil {
			return 0, "", fmt.Errorf("%s=%q: %w", Env, v, err)
		}
		return b, Env + "=" + v, nil
	}
	if b, src, ok := systemMemory(); ok {
		return b, src, nil
	}
	return fallback, "a default, this machine's memory being unknown", nil
}

// Check returns an error when need bytes exceed the limit, naming what
// needs them: "transmit: m_r = 4096, S = 1e9 needs 30 TiB of memory, more
// than the 24 GiB of this machine". Without WCMC_MAX_MEMORY, under an
// address-space cap (ulimit -v) it also returns an error when need and
// what the process reserves beside it (AddressSpace) exceed the cap.
func Check(what string, need float64) error {
	limit, source, err := Limit()
	if err != nil {
		return err
	}
	if !(need <= limit) {
		if !strings.HasPrefix(source, Env) {
			source += "; " + Env + " sets the limit"
		}
		return fmt.Errorf("%s needs about %s of memory, more than the %s available (%s)", what, Format(need), Format(limit), source)
	}
	if strings.HasPrefix(source, Env) {
		return nil
	}
	asCap, ok := addressLimit()
	if !ok {
		return nil
	}
	overhead, how := AddressSpace()
	if need+overhead <= asCap {
		return nil
	}
	hint := ""
	if cgoBuild {
		hint = "; a build without cgo (CGO_ENABLED=0 go build ./cmd/wcmc) reserves less"
	}
	// The suggestion is rounded up to 64 MiB: the next process's VmSize
	// differs by a little.
	suggest := int64(math.Ceil((need+overhead)/(64<<20))) * (64 << 10)
	return fmt.Errorf("%s needs about %s of memory; with the %s of address space %s, %s, more than the %s that ulimit -v allows (RLIMIT_AS): raise it (ulimit -v %d)%s, or set %s to skip this check",
		what, Format(need), Format(overhead), how, Format(need+overhead), Format(asCap), suggest, hint, Env)
}

// Floats returns the bytes of n float64 values, n a product of sizes
// (computed in floating point, so that it cannot overflow).
func Floats(sizes ...int) float64 {
	n := 8.0
	for _, s := range sizes {
		n *= float64(s)
	}
	return n
}

// Parse reads a byte count: a number, optionally followed by K, M, G or T
// (powers of 1024, with an optional "iB" or "B").
func Parse(s string) (float64, error) {
	t := strings.ToUpper(strings.TrimSpace(s))
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "I")
	mult := 1.0
	if n := len(t); n > 0 {
		if i := strings.IndexByte("KMGT", t[n-1]); i >= 0 {
			mult = math.Pow(1024, float64(i+1))
			t = t[:n-1]
		}
	}
	v, err := strconv.ParseFloat(strings.TrimSpace(t), 64)
	if err != nil || strings.Contains(t, "_") || !(v > 0) || math.IsInf(v, 0) {
		return 0, fmt.Errorf("want a positive number of bytes, e.g. 8G or 512M")
	}
	return v * mult, nil
}

// Format writes a byte count with a binary unit: "1.5 GiB".
func Format(b float64) string {
	units := []string{"bytes", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"}
	i := 0
	for ; b >= 1024 && i < len(units)-1; i++ {
		b /= 1024
	}
	if i == 0 {
		return strconv.FormatFloat(b, 'f', 0, 64) + " bytes"
	}
	return strconv.FormatFloat(b, 'g', 3, 64) + " " + units[i]
}
