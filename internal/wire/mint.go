package wire

import (
	"crypto/rand"
	"encoding/hex"
)

// MintID returns an identifier the gateway made: prefix followed by 24
// random hexadecimal digits. Answers carry minted ids in place of the
// upstream's where the client only reads them (a chat completion's id, a
// message's id): an upstream-chosen token is bytes no verdict saw.
func MintID(prefix string) string {
	var b [12]byte
	rand.Read(b[:]) // never fails (crypto/rand panics on failure since Go 1.24)
	out := make([]byte, len(prefix)+2*len(b))
	copy(out, prefix)
	hex.Encode(out[len(prefix):], b[:])
	return string(out)
}
