package messages

import (
	"bytes"
	"encoding/json"
	"regexp"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// The members a client sends back sealed, found in request text: a
// thinking signature, a redacted_thinking block's data (its type just
// before), a citation's encrypted_index, a container id member.
var sealedMembers = []struct {
	re   *regexp.Regexp
	kind seal.Kind
}{
	{regexp.MustCompile(`("signature"\s*:\s*)("(?:[^"\\]|\\.)*")`), kindSignature},
	{regexp.MustCompile(`("type"\s*:\s*"redacted_thinking"\s*,\s*"data"\s*:\s*)("(?:[^"\\]|\\.)*")`), kindRedactedData},
	{regexp.MustCompile(`("encrypted_index"\s*:\s*)("(?:[^"\\]|\\.)*")`), kindEncryptedIndex},
}

// sealed returns body with every blob a client sends back sealed replaced
// by s's seal of it, as a client that received them from the gateway
// sends them: the body the gateway opens is then body itself.
func sealed(t testing.TB, s *Surface, body []byte) []byte {
	t.Helper()
	for _, m := range sealedMembers {
		body = m.re.ReplaceAllFunc(body, func(match []byte) []byte {
			sub := m.re.FindSubmatch(match)
			var blob string
			if err := json.Unmarshal(sub[2], &blob); err != nil {
				t.Fatalf("sealed: %v", err)
			}
			if blob == "" {
				return match
			}
			return append(append([]byte{}, sub[1]...), s.sealString(m.kind, blob)...)
		})
	}
	return body
}

// sealedFixture is Claude Code's request as a client of s sends it: its
// thinking blobs sealed.
func sealedFixture(t testing.TB, s *Surface) []byte {
	t.Helper()
	b, err := readFixture()
	if err != nil {
		t.Fatal(err)
	}
	return sealed(t, s, b)
}

// sealKinds are every kind the surface seals.
var sealKinds = []seal.Kind{kindSignature, kindRedactedData, kindEncryptedIndex, kindContainerID}

// sealToken matches a seal in JSON text.
var sealToken = regexp.MustCompile(`"` + seal.Prefix + `[A-Za-z0-9]+_[A-Za-z0-9_-]+"`)

// unsealed returns out with every seal s made replaced by the blob it
// seals: what the client's seals stand for.
func unsealed(t testing.TB, s *Surface, out []byte) []byte {
	t.Helper()
	return sealToken.ReplaceAllFunc(out, func(tok []byte) []byte {
		str := string(tok[1 : len(tok)-1])
		for _, k := range sealKinds {
			if blob, err := s.seal.Open(k, str); err == nil {
				return appendString(nil, string(blob))
			}
		}
		t.Fatalf("a seal the surface did not make: %s", tok)
		return nil
	})
}

// normalized is a release of st with its seals opened and its minted id
// replaced by a constant: two releases of one upstream answer differ in
// nothing else.
func normalized(t testing.TB, st wire.Stream, out []byte) []byte {
	t.Helper()
	r := st.Response().(*Response)
	return bytes.ReplaceAll(unsealed(t, r.s, out), []byte(r.ac.id), []byte("msg_minted"))
}
