package providers

import (
	"errors"
	"net/http"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// maxMockChunks bounds /chunks so one message cannot make the mock build
// an arbitrarily large stream.
const maxMockChunks = 100_000

const defaultCutText = "this reply was cut off before it could finish"

// mockReply is what the mock answers to one request.
type mockReply struct {
	content   string
	toolCalls []mockCall
	chunks    int  // > 0: stream content in exactly this many chunks
	cut       bool // stop part-way, without finish chunk or [DONE]
	status    int  // != 0: answer an error envelope with this status
	message   string
	delay     time.Duration
	drip      time.Duration // > 0: stream one word per delta, this far apart
}

type mockCall struct{ name, args string }

// isDirective reports whether word starts a directive line.
func isDirective(word string) bool {
	switch word {
	case "/tool", "/say", "/error", "/cut", "/chunks", "/sleep", "/drip":
		return true
	}
	return false
}

// findDirective locates the directive in the prompt's segments: the first
// line, in segment order, whose first word (after spaces and tabs) is a
// directive. It returns that line and the rest of its segment; ok is false
// when no line holds a directive.
func findDirective(segments []string) (text string, ok bool) {
	for _, seg := range segments {
		at := 0
		for line := range strings.Lines(seg) {
			trimmed := strings.TrimLeft(line, " \t")
			if word, _ := cutWord(trimmed); isDirective(word) {
				return seg[at+len(line)-len(trimmed):], true
			}
			at += len(line)
		}
	}
	return "", false
}

// decideReply answers a prompt: its directive, or an echo of its text. A
// /tool directive is answered once per conversation: with tool results
// already after the prompt, the reply is text quoting them, so agent loops
// end.
func decideReply(p mockPrompt) (mockReply, error) {
	text, ok := findDirective(p.segments)
	if !ok {
		return mockReply{content: "echo: " + p.text()}, nil
	}
	r, err := parseDirective(text)
	if err == nil && len(r.toolCalls) > 0 && len(p.toolResults) > 0 {
		return mockReply{content: toolResultsText(p.toolResults)}, nil
	}
	return r, err
}

// maxToolResultRunes bounds the quoted tool results of a reply.
const maxToolResultRunes = 200

// toolResultsText is "tool results: " and the results, one per line, cut
// to maxToolResultRunes runes (then ending in "…").
func toolResultsText(results []string) string {
	text := strings.Join(results, "\n")
	if utf8.RuneCountInString(text) > maxToolResultRunes {
		text = string([]rune(text)[:maxToolResultRunes]) + "…"
	}
	return "tool results: " + text
}

// parseDirective turns a directive's text (from its directive word to the
// end of its segment) into a reply.
func parseDirective(text string) (mockReply, error) {
	cmd, rest := cutWord(text)
	switch cmd {
	case "/tool":
		return parseToolLines(text)
	case "/say":
		return mockReply{content: rest}, nil
	case "/error":
		codeText, msg := cutWord(strings.TrimLeftFunc(rest, unicode.IsSpace))
		code, err := strconv.Atoi(codeText)
		if err != nil || code < 200 || code > 599 {
			return mockReply{}, errors.New("mock: /error needs a status code between 200 and 599")
		}
		if msg = strings.TrimSpace(msg); msg == "" {
			msg = "mock error " + codeText
			if t := http.StatusText(code); t != "" {
				msg = t
			}
		}
		return mockReply{status: code, message: msg}, nil
	case "/cut":
		if rest == "" {
			rest = defaultCutText
		}
		return mockReply{content: rest, cut: true}, nil
	case "/chunks":
		nText, body := cutWord(strings.TrimLeftFunc(rest, unicode.IsSpace))
		n, err := strconv.Atoi(nText)
		if err != nil || n < 1 || n > maxMockChunks {
			return mockReply{}, errors.New("mock: /chunks needs a chunk count between 1 and 100000")
		}
		return mockReply{content: body, chunks: n}, nil
	case "/sleep":
		dText, body := cutWord(strings.TrimLeftFunc(rest, unicode.IsSpace))
		d, err := time.ParseDuration(dText)
		if err != nil || d < 0 {
			return mockReply{}, errors.New("mock: /sleep needs a non-negative duration such as 250ms")
		}
		return mockReply{content: body, delay: d}, nil
	case "/drip":
		dText, body := cutWord(strings.TrimLeftFunc(rest, unicode.IsSpace))
		d, err := time.ParseDuration(dText)
		if err != nil || d <= 0 {
			return mockReply{}, errors.New("mock: /drip needs a positive interval such as 100ms")
		}
		return mockReply{content: body, drip: d}, nil
	}
	return mockReply{}, errors.New("mock: unknown directive")
}

// parseToolLines reads one tool call per non-blank line.
func parseToolLines(text string) (mockReply, error) {
	var r mockReply
	for line := range strings.Lines(text) {
		line = strings.TrimLeft(strings.TrimRight(line, "\r\n"), " \t")
		if strings.TrimSpace(line) == "" {
			continue
		}
		cmd, rest := cutWord(line)
		if cmd != "/tool" {
			return mockReply{}, errors.New("mock: every line of a /tool message must be a /tool directive")
		}
		name, args := cutWord(strings.TrimLeftFunc(rest, unicode.IsSpace))
		if name == "" {
			return mockReply{}, errors.New("mock: /tool needs a tool name")
		}
		// Arguments stay verbatim, valid JSON or not: tests of the proxy's
		// raw_arguments handling need malformed ones too.
		if args = strings.TrimSpace(args); args == "" {
			args = "{}"
		}
		r.toolCalls = append(r.toolCalls, mockCall{name: name, args: args})
	}
	return r, nil
}

// finishReason is the reply's OpenAI finish_reason.
func (r mockReply) finishReason() string {
	if len(r.toolCalls) > 0 {
		return "tool_calls"
	}
	return "stop"
}

// usage counts words: completion words are the content's, or each tool
// call's name (one) and argument words.
func (r mockReply) usage(promptWords int) mockUsage {
	completion := len(strings.Fields(r.content))
	for _, c := range r.toolCalls {
		completion += 1 + len(strings.Fields(c.args))
	}
	return mockUsage{PromptTokens: promptWords, CompletionTokens: completion, TotalTokens: promptWords + completion}
}

// contentPieces splits the content into its stream chunks.
func (r mockReply) contentPieces() []string {
	if r.chunks > 0 {
		return splitEven(r.content, r.chunks)
	}
	return splitWords(r.content)
}

// cutWord splits s at its first whitespace character, which is dropped.
func cutWord(s string) (word, rest string) {
	i := strings.IndexFunc(s, unicode.IsSpace)
	if i < 0 {
		return s, ""
	}
	_, size := utf8.DecodeRuneInString(s[i:])
	return s[:i], s[i+size:]
}

// splitWords splits s after each run of whitespace that follows a word, so
// the pieces concatenate back to s: "a b  c" → "a ", "b  ", "c".
func splitWords(s string) []string {
	var out []string
	start, seenWord, afterWord := 0, false, false
	for i, r := range s {
		space := unicode.IsSpace(r)
		if !space && afterWord {
			out = append(out, s[start:i])
			start, afterWord = i, false
		}
		if space && seenWord {
			afterWord = true
		}
		seenWord = seenWord || !space
	}
	if start < len(s) {
		out = append(out, s[start:])
	}
	return out
}

// splitEven splits s into n rune-aligned pieces of near-equal length; some
// are empty when s has fewer than n runes.
func splitEven(s string, n int) []string {
	bounds := make([]int, 0, len(s)+1) // byte offset of each rune, then len(s)
	for i := range s {
		bounds = append(bounds, i)
	}
	bounds = append(bounds, len(s))
	runes := int64(len(bounds) - 1) // int64: runes*n may exceed a 32-bit int
	at := func(i int) int { return bounds[int64(i)*runes/int64(n)] }
	out := make([]string, n)
	for i := range out {
		out[i] = s[at(i):at(i+1)]
	}
	return out
}
