package conformance

import (
	"context"
	"strings"
	"testing"
)

func TestZZDebug(t *testing.T) {
	src := `{"id":"AH-CTK-906","title":"pre_model_call transform is adopted by the agent","spec_clause":"5.2",
	  "capabilities":["model_calls","tool_calls"],
	  "scenario":{"input":{"content":"what is 2+2","role":"user"},
	    "tools":[{"name":"calculator","behavior":[{"return":"4"}]}],
	    "model_script":[
	      {"respond":{"content":null,"tool_calls":[{"id":"tc-1","name":"calculator","args":{"expr":"2+2"}}],"finish_reason":"tool_calls"}},
	      {"respond":{"content":"4","tool_calls":[],"finish_reason":"stop"}}]},
	  "interceptor_script":[{"at":"pre_model_call","match":{"messages[0].content":"what is 2+2"},
	    "return":{"decision":"transform","reason":"ctk:rewrite","transform":{"path":"$target[0].content","value":"rewritten"}}}],
	  "expect":{"sequence_strict":false,
	    "interceptions":[{"interception_point":"pre_model_call","context":{"messages[0].content":"what is 2+2"}},
	      {"interception_point":"pre_model_call","context":{"messages[0].content":"rewritten"}}],
	    "records":[{"interception_point":"pre_model_call","assert":{"verdict.decision":"transform"}},{"interception_point":"pre_model_call","assert":{"verdict.decision":"allow"}}],
	    "run_outcome":"completed"}}`
	v, err := ParseVector("x.json", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	for name, f := range map[string]HarnessFactory{"sdk-local": NewSDKLocalHarness, "gateway": NewGatewayHarness} {
		r := Run(context.Background(), f, []*Vector{v})
		t.Logf("%s: %s\n  - %s", name, r.Results[0].Status, strings.Join(r.Results[0].Failures, "\n  - "))
	}
}
