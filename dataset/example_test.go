package dataset_test

import (
	"fmt"
	"math/rand/v2"

	"github.com/wcmc-project/wcmc/dataset"
)

// Four workers share 60 class-1 and 40 class-0 points with skew ζ = 1:
// worker 1 gets most of class 1, worker 4 most of class 0.
func ExamplePartitionHeterogeneous() {
	labels := make([]float64, 100)
	for i := range 60 {
		labels[i] = 1
	}
	shards, err := dataset.PartitionHeterogeneous(rand.New(rand.NewPCG(1, 2)), labels, 4, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	for k, sh := range shards {
		var ones int
		for _, i := range sh {
			ones += int(labels[i])
		}
		fmt.Printf("worker %d: %2d class-1, %2d class-0\n", k+1, ones, len(sh)-ones)
	}
	// Output:
	// worker 1: 29 class-1,  5 class-0
	// worker 2: 14 class-1,  6 class-0
	// worker 3: 10 class-1, 10 class-0
	// worker 4:  7 class-1, 19 class-0
}
