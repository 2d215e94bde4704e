//go:build !unix

package jcs

import "time"

// processCPU is unavailable here; benchmarks then omit cpu-ns/op.
func processCPU() time.Duration { return 0 }
