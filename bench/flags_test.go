package main

import (
	"context"
	"strings"
	"testing"
)

// TestDriveRefusesLengthsThatHang: a zero-length attack would run until
// stopped, so the flags that set one are refused with the flag's name
// before anything starts.
func TestDriveRefusesLengthsThatHang(t *testing.T) {
	for _, tc := range []struct {
		args []string
		flag string
	}{
		{[]string{"--duration", "0s"}, "--duration"},
		{[]string{"--duration", "-1s"}, "--duration"},
		{[]string{"--warmup", "-1s"}, "--warmup"},
		{[]string{"--rounds", "0"}, "--rounds"},
	} {
		err := drive(context.Background(), append(tc.args, "--scenario", "json"))
		if err == nil || !strings.Contains(err.Error(), tc.flag) {
			t.Errorf("%v: %v, want an error naming %s", tc.args, err, tc.flag)
		}
	}
}
