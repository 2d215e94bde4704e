//go:build !unix

package jsonvalue

import "time"

// processCPU is unavailable here; benchmarks then omit cpu-ns/op.
func processCPU() time.Duration { return 0 }
