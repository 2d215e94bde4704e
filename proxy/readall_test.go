package proxy

import (
	"bytes"
	"errors"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

func TestReadAllSized(t *testing.T) {
	body := strings.Repeat("0123456789", 1000)
	for _, hint := range []int64{-1, 0, 1, 100, int64(len(body)), int64(len(body)) + 7, 1 << 30} {
		for name, r := range map[string]io.Reader{
			"plain":    strings.NewReader(body),
			"one-byte": iotest.OneByteReader(strings.NewReader(body)),
			"data-eof": iotest.DataErrReader(strings.NewReader(body)),
		} {
			got, err := readAllSized(r, hint)
			if err != nil || string(got) != body {
				t.Fatalf("hint %d, %s reader: %d bytes, %v; want the whole body", hint, name, len(got), err)
			}
		}
	}
	boom := errors.New("boom")
	if _, err := readAllSized(io.MultiReader(strings.NewReader("abc"), iotest.ErrReader(boom)), 3); !errors.Is(err, boom) {
		t.Fatalf("read error = %v, want boom", err)
	}
}

func BenchmarkReadAllSized(b *testing.B) {
	body := bytes.Repeat([]byte("x"), 2100)
	b.Run("io.ReadAll", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			io.ReadAll(bytes.NewReader(body))
		}
	})
	b.Run("sized", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			readAllSized(bytes.NewReader(body), int64(len(body)))
		}
	})
}
