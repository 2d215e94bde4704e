//go:build !unix

package cputime

import "time"

// Process is unavailable here: it returns 0, and ReportPerOp reports
// nothing.
func Process() time.Duration { return 0 }
