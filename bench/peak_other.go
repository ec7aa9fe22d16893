//go:build !amd64 || purego

package bench

// vectorPeak has no vector kernel on this platform: the WVCMC rows are
// reported without a bound.
func vectorPeak() (run func(rounds int), flopsPerRound float64, name string, ok bool) {
	return nil, 0, "", false
}

// divisionPeak has no vector kernel on this platform either.
func divisionPeak() (run func(rounds int), perRound float64, name string, ok bool) {
	return nil, 0, "", false
}
