// Package safepath writes the location of a JSON value into an error
// message without naming anything a payload chose.
//
// A path starts at "$" and has one step per container:
//
//   - "[i]" for the element at index i of an array;
//   - ".name" for an object member whose name is in the gateway's own
//     vocabulary (see Known): the member names of the AGENT-HOOKS context,
//     verdict and record schemas and of the chat-completions wire;
//   - "{member N}" for any other member: N is the member's position among
//     its object's member names sorted by their bytes (the order
//     jsonvalue.Marshal writes them), counting from 0.
//
// So `$.messages[0].content[2]` reads as usual, while a number under a
// member the client or the model named is `$.tool_calls[0].args{member 3}`:
// enough to find the value again in the object, never its name. A payload
// member whose name happens to be in the vocabulary is written by name; that
// tells no more than that the payload uses one of the gateway's own words.
package safepath

import (
	"iter"
	"strconv"
	"strings"
)

// vocabulary is every member name Known accepts. It is fixed text of the
// spec's schemas and of the OpenAI chat-completions wire, never traffic.
var vocabulary = func() map[string]struct{} {
	names := strings.Fields(`
		actor agent agent_init approval args artefact budgets completion_tokens
		composition content content_hash context context_identity cost_usd
		decided_by decision description duration_ms duration_seconds
		elapsed_seconds enforced_identity errors evidence extensions
		finish_reason fold_truncated framework id identity_provider index input
		input_identity interception_point interceptors_registered is_error kind
		message messages mode model name on_approval on_disagreement
		on_transform_conflict outcome output params path profile prompt_tokens
		reason request_id resolved_by response result_labels role schema
		sequence session session_id span_id spec started_at summary target
		tenant timestamp token_count tool_call tool_call_count tool_calls
		tool_result tools tools_registered trace trace_id transform turn usage
		value vendor verdict verdicts verification_pointers version warnings
		raw_arguments reasoning refusal text annotations url_citation url title
		type image_url input_audio file detail
		choices delta function arguments logprobs object created
		system_fingerprint service_tier total_tokens prompt_tokens_details
		completion_tokens_details cached_tokens reasoning_tokens
		stream stream_options include_usage tool_choice parallel_tool_calls
		response_format max_tokens max_completion_tokens temperature top_p n
		stop seed user metadata error code param start_index end_index`)
	m := make(map[string]struct{}, len(names))
	for _, n := range names {
		m[n] = struct{}{}
	}
	return m
}()

// Known reports whether name is one of the gateway's own member names,
// which a path may spell out.
func Known(name string) bool {
	_, ok := vocabulary[name]
	return ok
}

// WriteMember writes the step to the object member name, which sorts at
// rank among its object's member names (see Rank).
func WriteMember(b *strings.Builder, name string, rank int) {
	if Known(name) {
		b.WriteByte('.')
		b.WriteString(name)
		return
	}
	b.WriteString("{member ")
	b.WriteString(strconv.Itoa(rank))
	b.WriteByte('}')
}

// WriteIndex writes the step to the array element at index i.
func WriteIndex(b *strings.Builder, i int) {
	b.WriteByte('[')
	b.WriteString(strconv.Itoa(i))
	b.WriteByte(']')
}

// Member is the step WriteMember writes, as a string.
func Member(name string, rank int) string {
	var b strings.Builder
	WriteMember(&b, name, rank)
	return b.String()
}

// Rank is the position of name among names sorted by their bytes: how many
// of names sort before it. It runs on error paths only, so it counts rather
// than sorts.
func Rank(names iter.Seq[string], name string) int {
	n := 0
	for k := range names {
		if k < name {
			n++
		}
	}
	return n
}
