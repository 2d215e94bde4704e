package config

import (
	"reflect"
	"strings"
	"testing"
)

func TestWireDefaultAllowsNothing(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream)
	if !reflect.DeepEqual(c.Wire, Wire{}) {
		t.Errorf("wire = %+v, want nothing allowed", c.Wire)
	}
	if strings.Contains(c.Summary(), "wire") {
		t.Errorf("summary mentions wire without allowances: %s", c.Summary())
	}
}

func TestWireParse(t *testing.T) {
	clearEnv(t)
	c := mustParse(t, mockUpstream+`wire:
  chat:
    allow_request_members: [top_a, x-vendor-flags]
    allow_response_members:
      - provider
      - x_trace
`)
	want := ChatWire{AllowRequestMembers: []string{"top_a", "x-vendor-flags"}, AllowResponseMembers: []string{"provider", "x_trace"}}
	if !reflect.DeepEqual(c.Wire.Chat, want) {
		t.Errorf("wire.chat = %+v\nwant %+v", c.Wire.Chat, want)
	}
	if s := c.Summary(); !strings.HasSuffix(s, "; wire chat allows 2 extra request and 2 extra response members") {
		t.Errorf("summary = %s", s)
	}
}

func TestWireProblems(t *testing.T) {
	clearEnv(t)
	tests := []struct {
		name, src string
		want      []string
	}{
		{"bad request names", mockUpstream + "wire:\n  chat:\n    allow_request_members:\n      - temperature\n      - Messages\n      - \"has space\"\n      - top_a\n      - TOP_A\n", []string{
			`gateway.yaml:7: wire.chat.allow_request_members[0]: is a known request member; the gateway's treatment of it is fixed (got "temperature")`,
			`gateway.yaml:8: wire.chat.allow_request_members[1]: differs from the known member "messages" only in letter case; such members are refused as ambiguous (got "Messages")`,
			`gateway.yaml:9: wire.chat.allow_request_members[2]: must be a plain identifier (ASCII letters, digits, _ and -, at most 64 characters) (got "has space")`,
			"gateway.yaml:11: wire.chat.allow_request_members[4]: repeats wire.chat.allow_request_members[3] (names are compared regardless of letter case)",
		}},
		{"bad response names", mockUpstream + "wire:\n  chat:\n    allow_response_members: [\"a.b\", ok, ok]\n", []string{
			`gateway.yaml:6: wire.chat.allow_response_members[0]: must be a plain identifier (ASCII letters, digits, _ and -, at most 64 characters) (got "a.b")`,
			"gateway.yaml:6: wire.chat.allow_response_members[2]: repeats wire.chat.allow_response_members[1] (names are compared regardless of letter case)",
		}},
		{"responses names", mockUpstream + "wire:\n  responses:\n    allow_request_members: [input, Instructions, x_trace]\n    allow_server_state: yes-please\n", []string{
			`gateway.yaml:6: wire.responses.allow_request_members[0]: is a known request member; the gateway's treatment of it is fixed (got "input")`,
			`gateway.yaml:6: wire.responses.allow_request_members[1]: differs from the known member "instructions" only in letter case; such members are refused as ambiguous (got "Instructions")`,
			`gateway.yaml:7: wire.responses.allow_server_state: must be true or false (got "yes-please")`,
		}},
		{"unknown keys and shapes", mockUpstream + "wire:\n  assistants: {}\n  chat:\n    allow_request_members: top_a\n    allow_members: []\n", []string{
			"gateway.yaml:5: wire.assistants: unknown key (expected one of chat, messages, responses)",
			"gateway.yaml:7: wire.chat.allow_request_members: must be a list",
			"gateway.yaml:8: wire.chat.allow_members: unknown key (expected one of allow_request_members, allow_response_members, unknown_members)",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := problemsOf(t, tt.src)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("problems:\n  %s\nwant:\n  %s", strings.Join(got, "\n  "), strings.Join(tt.want, "\n  "))
			}
		})
	}
}
