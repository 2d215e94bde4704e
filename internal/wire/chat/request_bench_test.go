package chat

import "testing"

// BenchmarkParseRequest2KiB measures the closed-world parse of a typical
// agent request: member lookup, shape checks and case-collision checks.
func BenchmarkParseRequest2KiB(b *testing.B) {
	body := []byte(request2KiB())
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ParseRequest(body); err != nil {
			b.Fatal(err)
		}
	}
}
