package records

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/hooks-gateway/hooks-gateway/enforcement"
	"github.com/hooks-gateway/hooks-gateway/sessions/redistest"
)

// xrange reads a whole stream back.
func xrange(t *testing.T, url, stream string) []redis.XMessage {
	t.Helper()
	opts, err := redis.ParseURL(url)
	if err != nil {
		t.Fatal(err)
	}
	c := redis.NewClient(opts)
	defer c.Close()
	msgs, err := c.XRange(context.Background(), stream, "-", "+").Result()
	if err != nil {
		t.Fatal(err)
	}
	return msgs
}

func TestRedisStreamAddsEachRecordAsOneEntry(t *testing.T) {
	url, _ := redistest.Start(t)
	s, err := NewRedisStream(RedisStreamOptions{URL: url})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var want []string
	for i := range 5 {
		r := sessionRecord("s1", int64(i), enforcement.Input)
		b, _ := r.MarshalJSON()
		want = append(want, string(b))
		if err := s.WriteRecord(context.Background(), r); err != nil {
			t.Fatal(err)
		}
	}
	msgs := xrange(t, url, DefaultStream)
	if len(msgs) != len(want) {
		t.Fatalf("%d entries in %s, want %d", len(msgs), DefaultStream, len(want))
	}
	for i, m := range msgs {
		if len(m.Values) != 1 || m.Values[StreamField] != want[i] {
			t.Errorf("entry %d = %v, want {%s: %s}", i, m.Values, StreamField, want[i])
		}
		var r enforcement.Record
		if err := r.UnmarshalJSON([]byte(m.Values[StreamField].(string))); err != nil || r.Sequence != int64(i) {
			t.Errorf("entry %d does not decode as record %d: %v", i, i, err)
		}
	}
}

func TestRedisStreamTrimsApproximately(t *testing.T) {
	url, _ := redistest.Start(t)
	s, err := NewRedisStream(RedisStreamOptions{URL: url, Stream: "audit:trail", MaxLen: 100})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	for i := range 1000 {
		if err := s.WriteRecord(context.Background(), sessionRecord("s1", int64(i), enforcement.Input)); err != nil {
			t.Fatal(err)
		}
	}
	msgs := xrange(t, url, "audit:trail")
	// MAXLEN ~ trims whole radix-tree nodes (100 entries by default), so
	// the stream keeps at least 100 and well under 1000.
	if len(msgs) < 100 || len(msgs) > 300 {
		t.Fatalf("stream holds %d entries with max_len 100, want 100..300", len(msgs))
	}
	last := msgs[len(msgs)-1].Values[StreamField].(string)
	if !strings.Contains(last, `"sequence":999`) {
		t.Errorf("the newest entry is not the last record: %s", last)
	}
}

func TestRedisStreamFailsFastWhileRedisIsDown(t *testing.T) {
	srv := redistest.StartServer(t)
	s, err := NewRedisStream(RedisStreamOptions{URL: srv.URL(), Timeout: 300 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if err := s.WriteRecord(context.Background(), sessionRecord("s1", 0, enforcement.Input)); err != nil {
		t.Fatal(err)
	}
	srv.Kill()
	start := time.Now()
	err = s.WriteRecord(context.Background(), sessionRecord("s1", 1, enforcement.Input))
	if err == nil {
		t.Fatal("a write with Redis down succeeded")
	}
	if d := time.Since(start); d > 2*time.Second {
		t.Errorf("the failing write took %v, want about the 300ms timeout", d)
	}
	srv.Restart()
	if err := s.WriteRecord(context.Background(), sessionRecord("s1", 2, enforcement.Input)); err != nil {
		t.Fatalf("no recovery after Redis came back: %v", err)
	}
	if got := len(xrange(t, srv.URL(), DefaultStream)); got != 1 {
		t.Errorf("the restarted (empty) Redis holds %d entries, want 1", got)
	}
}

func TestRedisStreamURLErrorsDoNotLeakThePassword(t *testing.T) {
	_, err := NewRedisStream(RedisStreamOptions{URL: "redis://user:hunter2@host:port/0"})
	if err == nil {
		t.Fatal("a bad URL was accepted")
	}
	if strings.Contains(err.Error(), "hunter2") {
		t.Fatalf("the error quotes the password: %v", err)
	}
}
