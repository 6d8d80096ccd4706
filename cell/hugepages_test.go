package cell

import "testing"

// bigFloats is make([]float64, n): the length asked, every value zero,
// whatever the size and wherever the huge pages fall.
func TestBigFloats(t *testing.T) {
	for _, n := range []int{0, 1, 1000, hugeFloatsMin - 1, hugeFloatsMin, hugeFloatsMin + 12345, 3 * hugeFloatsMin} {
		v := bigFloats(n)
		if len(v) != n {
			t.Fatalf("bigFloats(%d): length %d", n, len(v))
		}
		for i, x := range v {
			if x != 0 {
				t.Fatalf("bigFloats(%d)[%d] = %v", n, i, x)
			}
		}
		for i := range v { // every page writable
			v[i] = float64(i)
		}
	}
}
