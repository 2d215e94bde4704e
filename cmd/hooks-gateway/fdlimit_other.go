//go:build !unix

package main

// fdLimit reports no limit where the platform has no RLIMIT_NOFILE.
func fdLimit() (uint64, bool) { return 0, false }
