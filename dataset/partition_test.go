package dataset

import (
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// checkCover fails unless shards use every index in [0, n) exactly once.
func checkCover(t *testing.T, shards [][]int, n int) {
	t.Helper()
	seen := make([]int, n)
	for k, sh := range shards {
		for _, i := range sh {
			if i < 0 || i >= n {
				t.Fatalf("shard %d holds index %d outside [0, %d)", k, i, n)
			}
			seen[i]++
		}
	}
	for i, c := range seen {
		if c != 1 {
			t.Fatalf("index %d used %d times, want exactly once", i, c)
		}
	}
}

func TestPartitionEqual(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 3))
	for _, tc := range [][2]int{{8500, 20}, {8501, 20}, {8519, 20}, {15000, 7}, {5, 5}, {1, 1}, {10, 3}} {
		n, k := tc[0], tc[1]
		shards, err := PartitionEqual(rng, n, k)
		if err != nil {
			t.Fatal(err)
		}
		if len(shards) != k {
			t.Fatalf("n=%d k=%d: %d shards", n, k, len(shards))
		}
		checkCover(t, shards, n)
		lo, hi := n, 0
		for _, sh := range shards {
			lo, hi = min(lo, len(sh)), max(hi, len(sh))
		}
		if hi-lo > 1 {
			t.Errorf("n=%d k=%d: shard sizes from %d to %d, want a spread ≤ 1", n, k, lo, hi)
		}
	}
	a, _ := PartitionEqual(rand.New(rand.NewPCG(9, 9)), 100, 7)
	b, _ := PartitionEqual(rand.New(rand.NewPCG(9, 9)), 100, 7)
	for k := range a {
		if !slices.Equal(a[k], b[k]) {
			t.Fatal("same seed, different partition")
		}
	}
}

func TestPartitionEqualErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, tc := range []struct {
		n, k int
		want string
	}{
		{10, 0, "K ≥ 1"},
		{10, -2, "K ≥ 1"},
		{10, 11, "K ≤ N"},
		{0, 1, "K ≤ N"},
	} {
		if _, err := PartitionEqual(rng, tc.n, tc.k); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("n=%d k=%d: error %v, want one mentioning %q", tc.n, tc.k, err, tc.want)
		}
	}
}

// heteroQuota returns the exact (unrounded) class shares of eq. Fig. 7.
func heteroQuota(n1, n0, k int, zeta float64) (q1, q0 []float64) {
	var h float64
	for j := 1; j <= k; j++ {
		h += math.Pow(float64(j), -zeta)
	}
	q1, q0 = make([]float64, k), make([]float64, k)
	for i := range k {
		q1[i] = float64(n1) * math.Pow(float64(i+1), -zeta) / h
		q0[i] = float64(n0) * math.Pow(float64(k-i), -zeta) / h
	}
	return q1, q0
}

func TestPartitionHeterogeneous(t *testing.T) {
	rng := rand.New(rand.NewPCG(5, 5))
	labels := Synthetic(rng, ThetaStar5[:], 8500).V
	var n1 int
	for _, v := range labels {
		n1 += int(v)
	}
	n0 := len(labels) - n1
	const k = 20
	for _, zeta := range []float64{0, 0.5, 1, 2, 3} {
		shards, err := PartitionHeterogeneous(rng, labels, k, zeta)
		if err != nil {
			t.Fatalf("ζ=%v: %v", zeta, err)
		}
		checkCover(t, shards, len(labels))
		q1, q0 := heteroQuota(n1, n0, k, zeta)
		for w, sh := range shards {
			var c1 float64
			for _, i := range sh {
				c1 += labels[i]
			}
			c0 := float64(len(sh)) - c1
			// Largest-remainder rounding moves each share by less than one.
			if math.Abs(c1-q1[w]) >= 1 || math.Abs(c0-q0[w]) >= 1 {
				t.Errorf("ζ=%v worker %d: %v class-1 and %v class-0 points, want %.3f and %.3f rounded", zeta, w+1, c1, c0, q1[w], q0[w])
			}
		}
		first, last := classFraction(labels, shards[0]), classFraction(labels, shards[k-1])
		switch zeta {
		case 0:
			// Homogeneous: every worker has the global class-1 proportion
			// up to the rounding of one point per class.
			p := float64(n1) / float64(len(labels))
			for w, sh := range shards {
				if f := classFraction(labels, sh); math.Abs(f-p) > 2/float64(len(sh)) {
					t.Errorf("ζ=0 worker %d: class-1 fraction %v, want %v", w+1, f, p)
				}
			}
		case 2:
			if first < 0.9 || last > 0.1 {
				t.Errorf("ζ=2: worker 1 class-1 fraction %v (want > 0.9), worker K %v (want < 0.1)", first, last)
			}
		}
	}
}

func classFraction(labels []float64, idx []int) float64 {
	var c float64
	for _, i := range idx {
		c += labels[i]
	}
	return c / float64(len(idx))
}

func TestPartitionHeterogeneousErrors(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	labels := []float64{1, 0, 1, 0, 1, 0, 1, 0, 1, 0}
	for _, tc := range []struct {
		name   string
		labels []float64
		k      int
		zeta   float64
		want   []string
	}{
		{"k0", labels, 0, 1, []string{"K ≥ 1"}},
		{"k>n", labels, 11, 1, []string{"K ≤ N"}},
		{"zeta<0", labels, 2, -1, []string{"ζ"}},
		{"zeta NaN", labels, 2, math.NaN(), []string{"ζ"}},
		{"zeta Inf", labels, 2, math.Inf(1), []string{"ζ"}},
		{"label", []float64{0, 1, 0.5, 1}, 2, 1, []string{"label 2", "0.5"}},
		{"empty worker", labels, 5, 4, []string{"worker 2", "no data", "smaller ζ"}},
		{"empty worker large", make([]float64, 30), 20, 1, []string{"worker 1", "no data"}},
	} {
		_, err := PartitionHeterogeneous(rng, tc.labels, tc.k, tc.zeta)
		errorMentions(t, tc.name, err, tc.want...)
	}
}

func TestLargestRemainder(t *testing.T) {
	for _, tc := range []struct {
		total int
		w     []float64
		want  []int
	}{
		{10, []float64{1, 1, 1}, []int{4, 3, 3}},
		{7, []float64{1, 2, 4}, []int{1, 2, 4}},
		{5, []float64{1, 1, 1, 1, 1, 1}, []int{1, 1, 1, 1, 1, 0}},
		{0, []float64{1, 2}, []int{0, 0}},
		{100, []float64{1, 0.25, 1.0 / 9}, []int{74, 18, 8}}, // quotas 73.47, 18.37, 8.16
	} {
		if got := largestRemainder(tc.total, tc.w); !slices.Equal(got, tc.want) {
			t.Errorf("largestRemainder(%d, %v) = %v, want %v", tc.total, tc.w, got, tc.want)
		}
	}
}
