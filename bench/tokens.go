package bench

// TokenIDs is the fixed input of the imported-model cases: t token ids
// below v drawn with SplitMix64 seeded with t (one sequence per length, so
// adding a length changes no other input), id = output mod v. SplitMix64 is
// a few lines in any language, so bench/torch/bench_ig.py draws the very
// same ids for PyTorch without reading a file from the Go side.
func TokenIDs(t, v int) []int {
	if t < 0 || v < 1 {
		return nil
	}
	ids := make([]int, t)
	s := splitMix64{state: uint64(t)}
	for i := range ids {
		ids[i] = int(s.next() % uint64(v))
	}
	return ids
}

// splitMix64 is Vigna's generator (prng.di.unimi.it/splitmix64.c).
type splitMix64 struct{ state uint64 }

func (s *splitMix64) next() uint64 {
	s.state += 0x9e3779b97f4a7c15
	z := s.state
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}
