package responses

import (
	"encoding/base64"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/seal"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// Seal kinds: one per member a sealed value travels in, so a seal taken
// from one member does not open in another.
const (
	kindResponseID seal.Kind = "responses.response.id"
	kindItemID     seal.Kind = "responses.item.id"
	kindEncrypted  seal.Kind = "responses.reasoning.encrypted_content"
)

// answerIDs are the ids one answer releases in place of the upstream's:
// the response id (minted, or sealed when server state is allowed, so a
// later previous_response_id opens) and the seals of its item ids. Each
// upstream id is sealed once per answer, so every event that names an
// item and the item itself carry the same seal. It belongs to one answer
// and is only written while that answer is read.
type answerIDs struct {
	keys         *seal.Keyring
	sealResponse bool
	minted       string
	seals        map[seal.Kind]map[string]string
}

func newAnswerIDs(s *Surface) *answerIDs {
	return &answerIDs{keys: s.keys, sealResponse: s.allowServerState}
}

// response returns the released response id for the upstream's id.
func (a *answerIDs) response(upstream string) string {
	if !a.sealResponse {
		if a.minted == "" {
			a.minted = wire.MintID("resp_")
		}
		return a.minted
	}
	return a.sealed(kindResponseID, upstream)
}

// item returns the seal of an upstream item id.
func (a *answerIDs) item(upstream string) string { return a.sealed(kindItemID, upstream) }

func (a *answerIDs) sealed(kind seal.Kind, v string) string {
	if a.seals == nil {
		a.seals = map[seal.Kind]map[string]string{}
	}
	m := a.seals[kind]
	if m == nil {
		m = map[string]string{}
		a.seals[kind] = m
	}
	s, ok := m[v]
	if !ok {
		s = a.keys.SealString(kind, v)
		m[v] = s
	}
	return s
}

// Encrypted reasoning is sealed with a leading format byte: a standard
// base64 string (what OpenAI issues) is sealed decoded, so the seal is
// hardly longer than the blob; any other string is sealed as it is.
const (
	blobText   byte = 0
	blobBase64 byte = 1
)

// sealBlob seals an encrypted_content value.
func sealBlob(keys *seal.Keyring, s string) string {
	enc := base64.StdEncoding.Strict()
	if raw, err := enc.DecodeString(s); err == nil && enc.EncodedLen(len(raw)) == len(s) {
		// Strict decoding and an unchanged length (no skipped line breaks)
		// make encoding raw give back s exactly.
		return string(keys.AppendSeal(nil, kindEncrypted, append([]byte{blobBase64}, raw...)))
	}
	return string(keys.AppendSeal(nil, kindEncrypted, append([]byte{blobText}, s...)))
}

// openBlob returns the encrypted_content a seal holds, or an error
// wrapping seal.ErrNotSealed.
func openBlob(keys *seal.Keyring, s string) (string, error) {
	b, err := keys.Open(kindEncrypted, s)
	if err != nil {
		return "", err
	}
	switch {
	case len(b) > 0 && b[0] == blobBase64:
		return base64.StdEncoding.EncodeToString(b[1:]), nil
	case len(b) > 0 && b[0] == blobText:
		return string(b[1:]), nil
	}
	return "", seal.ErrNotSealed
}

// isSealShaped reports whether s has the form of a gateway seal, which
// then must open: a client cannot present a seal-shaped id as its own.
// The prefix alone decides, not seal.IsSeal (which also wants a valid key
// id): anything that starts like a seal is held to opening.
func isSealShaped(s string) bool { return strings.HasPrefix(s, seal.Prefix) }
