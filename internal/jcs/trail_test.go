package jcs

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// turnWalker identifies a conversation's contexts turn after turn the way
// the enforcement package does: the messages member and the target it
// mirrors written as one Canonical made with the session's memo, the
// identity hashed with the session's trail.
type turnWalker struct {
	memo     *mapMemo
	trail    Trail
	canon    Canonical
	maxDepth int
}

// context is the identity projection of turn seq over messages: the
// member and the target as a Canonical when mirrored, the plain tree
// (what SHA256Identity is checked against) either way.
func (w *turnWalker) context(messages []any, seq int, mirrored bool) (walked, plain any) {
	plainObj := map[string]any{
		"agent":              map[string]any{"id": "a1", "framework": "f"},
		"interception_point": "pre_model_call",
		"messages":           messages,
		"sequence":           json.Number(fmt.Sprint(seq)),
		"target":             messages,
	}
	var member any = messages
	if mirrored {
		if err := w.canon.EncodeMemo(messages, 2, w.maxDepth, w.memo); err == nil {
			member = &w.canon
		}
	}
	walked = Object{
		{Key: "sequence", Value: plainObj["sequence"]},
		{Key: "messages", Value: member},
		{Key: "agent", Value: plainObj["agent"]},
		{Key: "target", Value: member},
		{Key: "interception_point", Value: "pre_model_call"},
	}
	return walked, plainObj
}

// check walks turn seq with the trail and fails t unless the identity
// (or error) is the plain tree's.
func (w *turnWalker) check(t *testing.T, messages []any, seq int, mirrored bool) (total int) {
	t.Helper()
	walked, plain := w.context(messages, seq, mirrored)
	want, wantErr := SHA256Identity(plain, w.maxDepth)
	var got [SHA256IdentitySize]byte
	err := SHA256IdentityTrailInto(&got, walked, w.maxDepth, w.memo, &w.trail)
	if (err == nil) != (wantErr == nil) || err != nil && err.Error() != wantErr.Error() {
		t.Fatalf("turn %d: error %v, want %v", seq, err, wantErr)
	}
	if err == nil && string(got[:]) != want {
		t.Fatalf("turn %d: identity %s, want %s", seq, got, want)
	}
	if err != nil {
		return 0
	}
	b, _ := Canonicalize(plain)
	return len(b)
}

func message(i, size int) map[string]any {
	text := fmt.Sprintf("message %d: ", i) + strings.Repeat("é code output line\n", size/20)
	return map[string]any{"role": "tool", "content": []any{map[string]any{"type": "text", "text": text}}, "n": json.Number(fmt.Sprint(i))}
}

// TestTrailHashesWhatIsNew: turn after turn of a growing conversation,
// the identity is the plain one and the hash covers only what follows
// the history the previous turn already hashed (plus at most one state
// interval and one piece hashed again), in both member forms.
func TestTrailHashesWhatIsNew(t *testing.T) {
	for _, mirrored := range []bool{false, true} {
		t.Run(fmt.Sprintf("mirrored=%v", mirrored), func(t *testing.T) {
			w := &turnWalker{memo: newMapMemo()}
			defer w.canon.Release()
			var messages []any
			historyBytes := 0 // canonical bytes of the messages before this turn's
			for turn := 1; turn <= 30; turn++ {
				m := message(turn, 1500+turn*37)
				w.memo.kept[ptr(m)] = m
				messages = append(messages, m)
				total := w.check(t, messages, turn, mirrored)
				// 8 KiB: a state interval and one message hashed again.
				if turn > 1 && w.trail.Hashed() > total-historyBytes+8<<10 {
					t.Fatalf("turn %d hashed %d of %d bytes; the history before it was %d", turn, w.trail.Hashed(), total, historyBytes)
				}
				if turn == 1 && w.trail.Hashed() != total {
					t.Fatalf("turn 1 hashed %d of %d bytes", w.trail.Hashed(), total)
				}
				b, _ := Canonicalize(messages)
				historyBytes = len(b) - 1 // without the closing bracket
			}
			// The same context again hashes nothing.
			w.check(t, messages, 30, mirrored)
			if w.trail.Hashed() != 0 {
				t.Fatalf("an identical walk hashed %d bytes", w.trail.Hashed())
			}
		})
	}
}

// TestTrailIdentityUnchanged: whatever happens between walks (history
// grown, cut, edited, replaced by equal copies, a memo replaced, values
// the memo does not keep, large strings, failing walks, other depth
// bounds), every identity made with the trail is the one made without.
func TestTrailIdentityUnchanged(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			runTrailOps(t, rand.New(rand.NewPCG(seed, 7)), 60)
		})
	}
}

// FuzzTrail drives the same operations from the fuzzer's seed.
func FuzzTrail(f *testing.F) {
	f.Add(uint64(1), uint64(2))
	f.Add(uint64(99), uint64(3))
	f.Fuzz(func(t *testing.T, a, b uint64) {
		runTrailOps(t, rand.New(rand.NewPCG(a, b)), 40)
	})
}

func runTrailOps(t *testing.T, r *rand.Rand, steps int) {
	w := &turnWalker{memo: newMapMemo()}
	defer w.canon.Release()
	var messages []any
	next := 0
	keep := func(m map[string]any) map[string]any {
		w.memo.kept[ptr(m)] = m
		return m
	}
	size := func() int {
		if r.IntN(8) == 0 {
			return 40 << 10 // beyond a flush of the walk's buffer
		}
		return r.IntN(3000)
	}
	for step := range steps {
		switch op := r.IntN(10); {
		case op < 4 || len(messages) == 0: // a new message, kept
			next++
			messages = append(messages, keep(message(next, size())))
		case op == 4: // an equal copy of a message: the same bytes elsewhere
			k := r.IntN(len(messages))
			if m, ok := messages[k].(map[string]any); ok {
				messages[k] = keep(cloneMessage(m))
			}
		case op == 5: // an edited message
			k := r.IntN(len(messages))
			next++
			messages = append(messages[:k:k], append([]any{keep(message(next, size()))}, messages[k+1:]...)...)
		case op == 6: // history cut
			messages = messages[:r.IntN(len(messages))]
		case op == 7: // a value the memo does not keep
			messages = append(messages, "plain "+strings.Repeat("x", size()))
		case op == 8: // a new memo: every shared piece moves
			old := w.memo
			w.memo = newMapMemo()
			for _, o := range old.kept {
				w.memo.kept[ptr(o)] = o
			}
		default: // a failing walk, then the bound changes
			bad := keep(map[string]any{"id": json.Number("9007199254740993")})
			w.check(t, append(messages[:len(messages):len(messages)], bad), step, r.IntN(2) == 0)
			w.maxDepth = []int{0, 3, 4, 128}[r.IntN(4)]
		}
		w.check(t, messages, step, r.IntN(4) != 0)
	}
}

func cloneMessage(m map[string]any) map[string]any {
	out := make(map[string]any, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}
