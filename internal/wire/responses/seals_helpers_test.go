package responses

import (
	"regexp"
	"strings"

	"github.com/hooks-gateway/hooks-gateway/internal/jsonvalue"
	"github.com/hooks-gateway/hooks-gateway/internal/seal"
)

// testKeys seals and opens for every surface the package's tests build,
// so fixtures can carry the seals a client holds.
var testKeys = seal.Ephemeral()

// sealedID is the seal of an upstream item id, as a client holds it.
func sealedID(id string) string { return testKeys.SealString(kindItemID, id) }

// codexRequest is codexRequestRaw as a client sends it back through the
// gateway: the reasoning and function call items carry the seals of their
// ids and of the encrypted reasoning.
var codexRequest = strings.NewReplacer(
	`"id": "rs_1"`, `"id": "`+sealedID("rs_1")+`"`,
	`"id": "fc_1"`, `"id": "`+sealedID("fc_1")+`"`,
	`"encrypted_content": "gAAAA=="`, `"encrypted_content": "`+sealBlob(testKeys, "gAAAA==")+`"`,
).Replace(codexRequestRaw)

var madeValue = regexp.MustCompile(`hgs1_[A-Za-z0-9]+_[A-Za-z0-9_-]+|(resp|msg)_[0-9a-f]{24}`)

// withoutMade replaces every value the gateway made (seals, minted ids)
// with one placeholder: two readings of one answer make different ones.
func withoutMade[T string | []byte](s T) string {
	return madeValue.ReplaceAllString(string(s), "MADE")
}

// sameAnswer reports whether two projections agree but for the values the
// gateway made.
func sameAnswer(a, b any) bool {
	x, _ := jsonvalue.Marshal(a)
	y, _ := jsonvalue.Marshal(b)
	return withoutMade(x) == withoutMade(y)
}
