package wiretest

import (
	"io"
	"strings"
	"testing/iotest"
)

// Readers open a stream in the ways the buffering tests read it: whole,
// a byte a Read, half of what each Read asks, 7001 bytes a Read, and its
// last bytes with io.EOF.
func Readers() map[string]func(string) io.Reader {
	return map[string]func(string) io.Reader{
		"whole":    func(d string) io.Reader { return strings.NewReader(d) },
		"one byte": func(d string) io.Reader { return iotest.OneByteReader(strings.NewReader(d)) },
		"half":     func(d string) io.Reader { return iotest.HalfReader(strings.NewReader(d)) },
		"7001":     func(d string) io.Reader { return chunkReader{strings.NewReader(d), 7001} },
		"data+err": func(d string) io.Reader { return iotest.DataErrReader(strings.NewReader(d)) },
	}
}

// chunkReader returns at most n bytes a Read.
type chunkReader struct {
	r io.Reader
	n int
}

func (c chunkReader) Read(p []byte) (int, error) { return c.r.Read(p[:min(len(p), c.n)]) }
