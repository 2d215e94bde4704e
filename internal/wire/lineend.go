package wire

import "bytes"

// lineEndWindow bounds how far past a line's end LineEnd looks: a stream
// whose lines end in CR alone must not make every line's LF search run to
// the end of the buffer.
const lineEndWindow = 512

// LineEnd returns the index of the first CR or LF in b, or -1: where an
// SSE line ends (bytes.IndexAny(b, "\r\n")). Two vectorized byte searches
// per window beat IndexAny's byte-at-a-time set lookup on the long data
// lines of a stream.
func LineEnd(b []byte) int {
	for off := 0; off < len(b); off += lineEndWindow {
		w := b[off:min(off+lineEndWindow, len(b))]
		lf := bytes.IndexByte(w, '\n')
		head := w
		if lf >= 0 {
			head = w[:lf]
		}
		if cr := bytes.IndexByte(head, '\r'); cr >= 0 {
			return off + cr
		}
		if lf >= 0 {
			return off + lf
		}
	}
	return -1
}
