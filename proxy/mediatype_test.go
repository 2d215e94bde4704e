package proxy

import (
	"mime"
	"net/http"
	"testing"
)

// The media-type checks answer what mime.ParseMediaType would, fast path
// or not.
func TestMediaTypeChecks(t *testing.T) {
	for _, v := range []string{
		"application/json", "Application/JSON", "application/json; charset=utf-8", " application/json ",
		"application/json;", "application/json; charset", "application/jsonx", "text/json", "", "application/json; a=1; a=2",
		"text/event-stream", "TEXT/EVENT-STREAM", "text/event-stream; charset=utf-8", "text/event-stream; bad",
		"text/event-streams", "text/plain",
	} {
		mt, _, err := mime.ParseMediaType(v)
		if got, want := isJSONMediaType(v), err == nil && mt == "application/json"; got != want {
			t.Errorf("isJSONMediaType(%q) = %v, want %v", v, got, want)
		}
		resp := &http.Response{Header: http.Header{"Content-Type": {v}}}
		if got, want := isEventStream(resp), mt == "text/event-stream"; got != want {
			t.Errorf("isEventStream(%q) = %v, want %v", v, got, want)
		}
	}
}
