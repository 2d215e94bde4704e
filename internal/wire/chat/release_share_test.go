package chat

import (
	"bytes"
	"testing"
)

// A canonical stream (only "data:" events, LF framing) whose replay keeps
// every chunk is released as its own buffered bytes, without a copy; a
// stream the replay changes (a usage chunk left out) is copied as before.
func TestReleaseSharesCanonicalBytes(t *testing.T) {
	data := stream200()
	st, err := ReadStream(bytes.NewReader(data), 8<<20, ResponseOptions{})
	if err != nil {
		t.Fatal(err)
	}
	out, err := st.Release(nil, true)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(out, data) {
		t.Fatal("the canonical stream was not released unchanged")
	}
	if &out[0] != &st.raw[0] {
		t.Error("the canonical stream was copied")
	}
	if cap(out) != len(out) {
		t.Error("the shared bytes can be appended to in place")
	}
	out, err = st.Release(nil, false)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(out, data) || &out[0] == &st.raw[0] {
		t.Error("the usage chunk was released, or the changed replay shares the buffer")
	}
}
