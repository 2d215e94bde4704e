package main

import "testing"

// The search's refinement: refineSteps bisections between the last
// passing quarter step and the failing one land within an eighth of the
// quarter step (plus the rounding to 50 req/s) of a target's true
// capacity, wherever it lies.
func TestBisectRateConverges(t *testing.T) {
	for capacity := 260; capacity < 8000; capacity += 37 {
		passes := func(rate int) bool { return rate <= capacity }
		lo, hi := 0, 250
		for rate := 250; passes(rate); rate = nextRate(rate) {
			lo, hi = rate, nextRate(rate)
		}
		if lo == 0 {
			continue
		}
		quarter := hi - lo
		for range refineSteps {
			mid, ok := bisectRate(lo, hi)
			if !ok {
				break
			}
			if mid%50 != 0 || mid <= lo || mid >= hi {
				t.Fatalf("bisectRate(%d, %d) = %d, not a round rate strictly between", lo, hi, mid)
			}
			if passes(mid) {
				lo = mid
			} else {
				hi = mid
			}
		}
		if lo > capacity || capacity-lo > max(quarter/8+50, 100) {
			t.Errorf("capacity %d: found %d (quarter step %d)", capacity, lo, quarter)
		}
	}
	if _, ok := bisectRate(3000, 3050); ok {
		t.Error("bisectRate found a rate between two adjacent round rates")
	}
}
