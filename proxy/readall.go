package proxy

import (
	"errors"
	"io"
)

// readAllSized reads r to EOF like io.ReadAll, starting from a buffer
// sized for a body that declared its length (size > 0), so a known body is
// read into one allocation instead of a doubling series. size is only a
// hint: a body longer or shorter than declared is read all the same.
func readAllSized(r io.Reader, size int64) ([]byte, error) {
	const maxHint = 16 << 20 // a hint, not a promise: do not trust huge ones
	if size <= 0 || size > maxHint {
		return io.ReadAll(r)
	}
	// One spare byte lets the read that sees EOF land without a regrowth.
	b := make([]byte, 0, size+1)
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err != nil {
			if errors.Is(err, io.EOF) {
				return b, nil
			}
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // grow as append does
		}
	}
}
