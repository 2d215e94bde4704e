package mdtable

import (
	"fmt"
	"strings"
)

// CodeBlock returns the body of the first fenced code block (```lang)
// under the heading named heading, at any level, up to the next heading
// of the same or a higher level, so a test can run a documented sample
// as written. It fails when there is no such heading or block.
func CodeBlock(page, heading, lang string) (string, error) {
	var body strings.Builder
	level, inBlock := 0, false
	for line := range strings.Lines(page) {
		trimmed := strings.TrimRight(line, "\r\n")
		switch {
		case inBlock && strings.TrimSpace(trimmed) == "```":
			return body.String(), nil
		case inBlock:
			body.WriteString(trimmed + "\n")
		case strings.HasPrefix(trimmed, "#"):
			n := len(trimmed) - len(strings.TrimLeft(trimmed, "#"))
			if level > 0 && n <= level {
				return "", fmt.Errorf("section %q has no %s code block", heading, lang)
			}
			if level == 0 && strings.TrimSpace(trimmed[n:]) == heading {
				level = n
			}
		case level > 0 && trimmed == "```"+lang:
			inBlock = true
		}
	}
	if level == 0 {
		return "", fmt.Errorf("no section %q", heading)
	}
	return "", fmt.Errorf("section %q has no complete %s code block", heading, lang)
}
