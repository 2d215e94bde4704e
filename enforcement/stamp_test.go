package enforcement

import (
	"context"
	"encoding/json"
	"strconv"
	"testing"
	"time"
)

// Build's timestamp, sequence and point members are exactly what
// formatting them afresh gives, across millisecond boundaries, zones and
// the end of the boxed sequence table.
func TestBuildStampsAndSequences(t *testing.T) {
	base := time.Date(2026, 12, 3, 23, 59, 59, 998_700_000, time.FixedZone("x", -5*3600))
	steps := []time.Duration{0, 100 * time.Microsecond, 200 * time.Microsecond, time.Millisecond, 0, 3 * time.Second, -time.Hour, 0}
	now := base
	var clock time.Time
	b := &Builder{Agent: Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &Counter{}, Now: func() time.Time { return clock }}
	for i := range 2 * len(smallSequences) {
		now = now.Add(steps[i%len(steps)])
		clock = now
		p := Points()[i%8]
		c, err := b.Build(context.Background(), p, pointFields(p))
		if err != nil {
			t.Fatal(err)
		}
		if got, want := c["timestamp"], now.UTC().Format(TimestampFormat); got != want {
			t.Fatalf("%d: timestamp %v, want %s", i, got, want)
		}
		if got, want := c["sequence"], json.Number(strconv.Itoa(i)); got != want {
			t.Fatalf("%d: sequence %#v, want %#v", i, got, want)
		}
		if got := c["interception_point"]; got != string(p) {
			t.Fatalf("%d: interception_point %v, want %s", i, got, p)
		}
	}
}

// A Stamps shared by builders gives every context the timestamp formatting
// afresh gives, under concurrent use and across many milliseconds, and
// a stamp handed out earlier never changes when later ones are made.
func TestSharedStamps(t *testing.T) {
	var stamps Stamps
	base := time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC)
	const workers, per = 4, 320
	type got struct {
		at time.Time
		ts string
	}
	results := make([][]got, workers)
	done := make(chan struct{})
	for w := range workers {
		go func() {
			defer func() { done <- struct{}{} }()
			var clock time.Time
			b := &Builder{Agent: Agent{ID: "a", Framework: "f"}, SessionID: "s", Sequence: &Counter{}, Stamps: &stamps,
				Now: func() time.Time { return clock }}
			for i := range per {
				// Workers share some milliseconds and not others.
				clock = base.Add(time.Duration(i*(w%2+1)) * time.Millisecond).Add(time.Duration(w) * 10 * time.Microsecond)
				c, err := b.Build(context.Background(), AgentStartup, pointFields(AgentStartup))
				if err != nil {
					t.Error(err)
					return
				}
				ts, _ := c["timestamp"].(string)
				results[w] = append(results[w], got{clock, ts})
			}
		}()
	}
	for range workers {
		<-done
	}
	for w, rs := range results {
		if len(rs) != per {
			t.Fatalf("worker %d: %d contexts", w, len(rs))
		}
		for i, r := range rs {
			if want := r.at.Format(TimestampFormat); r.ts != want {
				t.Fatalf("worker %d, context %d: timestamp %q, want %q", w, i, r.ts, want)
			}
		}
	}
}
