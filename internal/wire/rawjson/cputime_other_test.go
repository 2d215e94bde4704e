//go:build !unix

package rawjson

import "time"

// processCPU is unavailable here; benchmarks then omit cpu-ns/op.
func processCPU() time.Duration { return 0 }
