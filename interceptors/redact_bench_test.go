package interceptors

import (
	"fmt"
	"strings"
	"testing"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/enforcement"
)

// benchMessages returns a messages array of about size bytes of text:
// ordinary prose with digits, dates and versions, and one e-mail address
// and one card number per 1 KiB message, so every detector runs and some
// match.
func benchMessages(size int) []any {
	return benchMessagesOf(size, "Release 1.26.3 shipped on 2024-01-15 with 42 fixes; order 112-4578123-9912345 "+
		"cost $1,299.99 and the request id db5b5fab-8f4d-3e27-dda1-494c73cf256d was logged at "+
		"10.0.0.1:8080. Please review commit 80508e3cec5f22b3fee2e539b99b59327d295333 before Friday. ",
		"Contact ann%d@example.com, card 4111 1111 1111 1111.")
}

// benchMessagesOf builds user messages of about 1 KiB each, para repeated
// and then tail (formatted with the message's index), until they hold
// about size bytes of text.
func benchMessagesOf(size int, para, tail string) []any {
	var msgs []any
	for total := 0; total < size; {
		var b strings.Builder
		for b.Len() < 1024-120 {
			b.WriteString(para)
		}
		fmt.Fprintf(&b, tail, len(msgs))
		msgs = append(msgs, map[string]any{"role": "user", "content": b.String()})
		total += b.Len()
	}
	return msgs
}

// contentBytes is the text size of benchMessagesOf's messages.
func contentBytes(msgs []any) int {
	n := 0
	for _, m := range msgs {
		n += len(m.(map[string]any)["content"].(string))
	}
	return n
}

// BenchmarkRedact measures a full scan with every built-in detector and the
// rewrite of the matches, on 1 KiB and 64 KiB message arrays.
func BenchmarkRedact(b *testing.B) {
	cfg, err := config.Parse("bench.yaml", []byte("upstreams:\n  - {name: mock, type: mock}\ninterceptors:\n  - name: r\n    type: redact\n"))
	if err != nil {
		b.Fatal(err)
	}
	ic, err := newRedact(cfg.Interceptors[0], Env{})
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{1 << 10, 64 << 10} {
		msgs := benchMessages(size)
		n := contentBytes(msgs)
		c := at(enforcement.PreModelCall, msgs)
		b.Run(fmt.Sprintf("%dKiB", size>>10), func(b *testing.B) {
			benchIntercept(b, ic, c, n, enforcement.DecisionTransform)
		})
	}
}
