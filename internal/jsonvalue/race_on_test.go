//go:build race

package jsonvalue

// raceEnabled reports whether the race detector is on; it changes
// allocation counts.
const raceEnabled = true
