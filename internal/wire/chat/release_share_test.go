package chat

import (
	"bytes"
	"strings"
	"testing"
)

// An allowed stream is replayed as the upstream's chunks with their
// metadata replaced by the gateway's head: the minted id, the request's
// model, no fingerprint, and every other byte of each chunk as it came.
func TestReleaseEditsChunkHeads(t *testing.T) {
	data := stream200()
	st, err := ReadStream(bytes.NewReader(data), 8<<20, ResponseOptions{id: testID, Model: "asked"})
	if err != nil {
		t.Fatal(err)
	}
	if !st.Replayable() {
		t.Fatal("stream200 is not replayed")
	}
	out, err := st.Release(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	want := strings.NewReplacer(`"id":"chatcmpl-B"`, `"id":"`+testID+`"`, `"model":"gpt-4o-2024-08-06"`, `"model":"asked"`,
		`,"system_fingerprint":"fp_b"`, "").Replace(string(data))
	if string(out) != want {
		t.Fatalf("released\n%.600s\nwant\n%.600s", out, want)
	}
	checkReleasedMeta(t, out, testID, "asked")
}

// A chunk whose metadata follows another member cannot have it replaced
// by the head: the stream is re-synthesized instead.
func TestReleaseMetadataAfterChoices(t *testing.T) {
	s := "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"hi\"}}],\"id\":\"" + secret + "\",\"system_fingerprint\":\"fp\"}\n\n" +
		"data: {\"id\":\"x\",\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n"
	for _, treeOnly := range []bool{false, true} {
		st, err := readStream(strings.NewReader(s), 1<<20, ResponseOptions{id: testID, Model: "asked"}, treeOnly)
		if err != nil {
			t.Fatal(err)
		}
		out, err := st.Release(nil, false)
		if err != nil {
			t.Fatal(err)
		}
		if st.Replayable() || strings.Contains(string(out), secret) || strings.Count(string(out), `"content":"hi"`) != 1 {
			t.Errorf("tree only %v: replayable %v, released\n%s", treeOnly, st.Replayable(), out)
		}
		checkReleasedMeta(t, out, testID, "asked")
	}
}
