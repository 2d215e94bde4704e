package wire

import (
	"strings"
	"testing"
)

func TestMintID(t *testing.T) {
	a, b := MintID("chatcmpl-"), MintID("chatcmpl-")
	if a == b {
		t.Fatal("two minted ids are equal")
	}
	if !strings.HasPrefix(a, "chatcmpl-") || len(a) != len("chatcmpl-")+24 || !IsID(a) {
		t.Fatalf("minted id %q is not prefix + 24 hex digits", a)
	}
}
