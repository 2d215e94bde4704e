package rawjson

import (
	"encoding/json"
	"strings"
	"testing"
)

func benchBody() []byte {
	msg := `{"role":"user","content":"Question: what is the status of order 991? Please check the system and reply.","x":[1,2.5e3,true,null]}`
	return []byte(`{"model":"m","input":[` + strings.TrimSuffix(strings.Repeat(msg+",", 16), ",") + `],"temperature":0.2}`)
}

// BenchmarkScanRootValid and BenchmarkJSONValidScanObject compare the
// one-pass validation with the encoding/json.Valid plus ScanObject it
// replaces.
func BenchmarkScanRootValid(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if _, _, ok := ScanRootValid(body); !ok {
			b.Fatal("refused")
		}
	}
}

func BenchmarkJSONValidScanObject(b *testing.B) {
	body := benchBody()
	b.SetBytes(int64(len(body)))
	b.ReportAllocs()
	for b.Loop() {
		if !json.Valid(body) {
			b.Fatal("refused")
		}
		if _, err := ScanObject(body, RootSpan(body)); err != nil {
			b.Fatal(err)
		}
	}
}
