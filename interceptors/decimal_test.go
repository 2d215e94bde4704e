package interceptors

import "testing"

func TestDecimalCompare(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{
		{"0", "-0", 0},
		{"0", "0.000e5", 0},
		{"1", "1.0", 0},
		{"1", "10e-1", 0},
		{"100", "1e2", 0},
		{"7", "30", -1},
		{"30", "7", 1},
		{"-1", "0", -1},
		{"-30", "-7", -1},
		{"0.1", "0.10001", -1},
		{"9007199254740993", "9007199254740992", 1},
		{"9007199254740992", "9007199254740992.0", 0},
		{"123456789012345678901234567890", "123456789012345678901234567891", -1},
		{"1e400", "7", 1},
		{"-1e400", "-7", -1},
		{"1e-400", "0", 1},
		{"1e99999999999999999999", "1e99999999999999999998", 0}, // saturated, both beyond any bound
		{"12", "120e-1", 0},
		{"12", "1.2", 1},
	} {
		a, ok := parseDecimal(tc.a)
		if !ok {
			t.Fatalf("parseDecimal(%q) failed", tc.a)
		}
		b, ok := parseDecimal(tc.b)
		if !ok {
			t.Fatalf("parseDecimal(%q) failed", tc.b)
		}
		if got := a.cmp(b); got != tc.want {
			t.Errorf("cmp(%s, %s) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
		if got := b.cmp(a); got != -tc.want {
			t.Errorf("cmp(%s, %s) = %d, want %d", tc.b, tc.a, got, -tc.want)
		}
	}
}

func TestDecimalSyntaxAndInteger(t *testing.T) {
	for _, bad := range []string{"", "-", "+1", "01", ".5", "5.", "1e", "1e+", "0x10", "1_000", "NaN", "Infinity", " 1", "1 "} {
		if _, ok := parseDecimal(bad); ok {
			t.Errorf("parseDecimal(%q) accepted", bad)
		}
	}
	for s, want := range map[string]bool{
		"0": true, "-0": true, "7": true, "7.0": true, "1e2": true, "1.5e1": true, "12345678901234567890123": true,
		"1.5": false, "1e-1": false, "0.000001": false, "-2.25": false,
	} {
		d, ok := parseDecimal(s)
		if !ok || d.isInteger() != want {
			t.Errorf("isInteger(%s) = %v (parsed %v), want %v", s, d.isInteger(), ok, want)
		}
	}
}
