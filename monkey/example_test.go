package monkey_test

import (
	"fmt"

	"github.com/bloomery/bloomery/monkey"
)

// A leveled LSM-tree with size ratio 10 and 7 levels, 10 bits per key of
// filter memory overall: uniform allocation against Monkey's.
func ExampleOptimize() {
	levels, _ := monkey.Leveled(7, 10, 1e9)
	budget := 10 * 1e9 // bits
	uni, _ := monkey.Uniform(levels, budget, monkey.Options{})
	opt, _ := monkey.Optimize(levels, budget, monkey.Options{})
	for i, l := range opt.Levels {
		fmt.Printf("L%d %5.2f bits/key  FPR %.3g\n", i+1, l.BitsPerKey, l.FPR)
	}
	fmt.Printf("sum of FPRs: uniform %.3f%%, monkey %.3f%%\n", 100*uni.SumFPR, 100*opt.SumFPR)
	// Output:
	// L1 38.22 bits/key  FPR 1.06e-08
	// L2 33.43 bits/key  FPR 1.06e-07
	// L3 28.64 bits/key  FPR 1.06e-06
	// L4 23.85 bits/key  FPR 1.06e-05
	// L5 19.05 bits/key  FPR 0.000106
	// L6 14.26 bits/key  FPR 0.00106
	// L7  9.47 bits/key  FPR 0.0106
	// sum of FPRs: uniform 5.735%, monkey 1.176%
}

// Weights: on an engine with a block cache, a false positive on a small
// level usually hits a cached block. Here levels 1-5 fit in the cache (a
// wasted read costs 1% of a disk read) and level 6 half does.
func ExampleOptimize_weights() {
	levels, _ := monkey.Leveled(7, 10, 1e9)
	for i := range 5 {
		levels[i].Weight = 0.01
	}
	levels[5].Weight = 0.5
	opt, _ := monkey.Optimize(levels, 10*1e9, monkey.Options{})
	for i, l := range opt.Levels {
		fmt.Printf("L%d %5.2f bits/key\n", i+1, l.BitsPerKey)
	}
	fmt.Printf("expected disk reads per absent key: %.4f\n", opt.Cost)
	// Output:
	// L1 28.86 bits/key
	// L2 24.07 bits/key
	// L3 19.28 bits/key
	// L4 14.49 bits/key
	// L5  9.69 bits/key
	// L6 13.04 bits/key
	// L7  9.69 bits/key
	// expected disk reads per absent key: 0.0105
}
