package providers

import (
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/anthropics/anthropic-sdk-go/v2"
	anthropicoption "github.com/anthropics/anthropic-sdk-go/v2/option"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/responses"
)

// surfaceCase is one prompt and what every official client must assemble.
type surfaceCase struct {
	name      string
	text      string
	wantText  string
	wantCalls []mockCall
}

var surfaceCases = []surfaceCase{
	{"echo", "hello  there", "echo: hello  there", nil},
	{"say", "/say Hello, <world> & co", "Hello, <world> & co", nil},
	{"directive after a reminder line", "<reminder>be brief</reminder>\n  /say hi", "hi", nil},
	{"chunks", "/chunks 7 " + strings.Repeat("ab ", 20), strings.Repeat("ab ", 20), nil},
	{"tools", "/tool get_weather {\"city\":\"Paris\",\"days\":3}\n/tool lookup {\"q\":\"héllo wörld\"}", "", []mockCall{
		{"get_weather", `{"city":"Paris","days":3}`}, {"lookup", `{"q":"héllo wörld"}`},
	}},
}

func responsesClient(t *testing.T) openai.Client { return officialClient(t) }

func anthropicClient(t *testing.T) anthropic.Client {
	t.Helper()
	return anthropic.NewClient(
		anthropicoption.WithBaseURL(mockServer(t).URL),
		anthropicoption.WithAPIKey("sk-ant-test"),
		anthropicoption.WithMaxRetries(0),
	)
}

func responsesParams(text string) responses.ResponseNewParams {
	return responses.ResponseNewParams{
		Model: "mock",
		Input: responses.ResponseNewParamsInputUnion{OfString: openai.String(text)},
	}
}

// checkResponse compares an assembled Responses API response with tt.
func checkResponse(t *testing.T, r *responses.Response, tt surfaceCase) {
	t.Helper()
	if r.Status != "completed" || !strings.HasPrefix(r.ID, "resp_mock_") || r.Model != "mock" {
		t.Errorf("response = status %q id %q model %q", r.Status, r.ID, r.Model)
	}
	if got := r.OutputText(); got != tt.wantText {
		t.Errorf("output text = %q, want %q", got, tt.wantText)
	}
	var calls []mockCall
	for i, item := range r.Output {
		if item.Type != "function_call" {
			continue
		}
		fc := item.AsFunctionCall()
		calls = append(calls, mockCall{fc.Name, fc.Arguments})
		if fc.CallID != callID(i) || !strings.HasPrefix(fc.ID, "fc_mock_") {
			t.Errorf("call %d ids = %q %q", i, fc.CallID, fc.ID)
		}
	}
	if !equalCalls(calls, tt.wantCalls) {
		t.Errorf("calls = %v, want %v", calls, tt.wantCalls)
	}
	words := len(strings.Fields(tt.text))
	if r.Usage.InputTokens != int64(words) || r.Usage.TotalTokens != r.Usage.InputTokens+r.Usage.OutputTokens {
		t.Errorf("usage = %+v, want %d input tokens", r.Usage, words)
	}
}

func equalCalls(a, b []mockCall) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func TestMockResponsesWithOfficialClient(t *testing.T) {
	client := responsesClient(t)
	for _, tt := range surfaceCases {
		t.Run(tt.name, func(t *testing.T) {
			r, err := client.Responses.New(t.Context(), responsesParams(tt.text))
			if err != nil {
				t.Fatal(err)
			}
			checkResponse(t, r, tt)
		})
		t.Run(tt.name+"/stream", func(t *testing.T) {
			stream := client.Responses.NewStreaming(t.Context(), responsesParams(tt.text))
			var done *responses.Response
			var seq int64
			var deltas strings.Builder
			for stream.Next() {
				ev := stream.Current()
				if ev.SequenceNumber != seq {
					t.Errorf("event %s has sequence_number %d, want %d", ev.Type, ev.SequenceNumber, seq)
				}
				seq++
				switch ev.Type {
				case "response.output_text.delta":
					deltas.WriteString(ev.Delta)
				case "response.completed":
					r := ev.AsResponseCompleted().Response
					done = &r
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if done == nil {
				t.Fatal("no response.completed event")
			}
			if deltas.String() != tt.wantText {
				t.Errorf("deltas assemble %q, want %q", deltas.String(), tt.wantText)
			}
			checkResponse(t, done, tt)
		})
	}
}

func TestMockResponsesToolLoopWithOfficialClient(t *testing.T) {
	client := responsesClient(t)
	first, err := client.Responses.New(t.Context(), responsesParams("/tool get_weather {\"city\":\"Paris\"}"))
	if err != nil {
		t.Fatal(err)
	}
	fc := first.Output[0].AsFunctionCall()
	result := responses.ResponseInputItemParamOfFunctionCallOutput("sunny, 21°C")
	result.OfFunctionCallOutput.CallID = openai.String(fc.CallID)
	input := responses.ResponseInputParam{
		responses.ResponseInputItemParamOfMessage("/tool get_weather {\"city\":\"Paris\"}", responses.EasyInputMessageRoleUser),
		responses.ResponseInputItemParamOfFunctionCall(fc.Arguments, fc.CallID, fc.Name),
		result,
	}
	second, err := client.Responses.New(t.Context(), responses.ResponseNewParams{
		Model: "mock", Input: responses.ResponseNewParamsInputUnion{OfInputItemList: input},
	})
	if err != nil {
		t.Fatal(err)
	}
	if got := second.OutputText(); got != "tool results: sunny, 21°C" {
		t.Errorf("second turn = %q, want the tool results", got)
	}
}

func TestMockResponsesErrorWithOfficialClient(t *testing.T) {
	client := responsesClient(t)
	_, err := client.Responses.New(t.Context(), responsesParams("/error 429 slow down"))
	var apiErr *openai.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != http.StatusTooManyRequests || apiErr.Message != "slow down" || apiErr.Code != "429" {
		t.Fatalf("err = %v, want a 429 the client understands", err)
	}
}

func messagesParams(text string, maxTokens int64) anthropic.MessageNewParams {
	return anthropic.MessageNewParams{
		Model:     "mock",
		MaxTokens: maxTokens,
		System:    []anthropic.TextBlockParam{{Text: "you are a mock"}},
		Messages:  []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock(text))},
	}
}

// checkMessage compares an assembled Messages API message with tt.
func checkMessage(t *testing.T, m *anthropic.Message, tt surfaceCase) {
	t.Helper()
	if !strings.HasPrefix(m.ID, "msg_mock_") || m.Role != "assistant" || m.Model != "mock" {
		t.Errorf("message = id %q role %q model %q", m.ID, m.Role, m.Model)
	}
	var text strings.Builder
	var calls []mockCall
	for i, b := range m.Content {
		switch b.Type {
		case "text":
			text.WriteString(b.Text)
		case "tool_use":
			calls = append(calls, mockCall{b.Name, string(b.Input)})
			if b.ID != toolUseID(i) {
				t.Errorf("tool_use %d id = %q", i, b.ID)
			}
		}
	}
	if text.String() != tt.wantText {
		t.Errorf("text = %q, want %q", text.String(), tt.wantText)
	}
	if !equalCalls(calls, tt.wantCalls) {
		t.Errorf("calls = %v, want %v", calls, tt.wantCalls)
	}
	wantStop := anthropic.StopReasonEndTurn
	if len(tt.wantCalls) > 0 {
		wantStop = anthropic.StopReasonToolUse
	}
	if m.StopReason != wantStop {
		t.Errorf("stop_reason = %q, want %q", m.StopReason, wantStop)
	}
	if words := int64(4 + len(strings.Fields(tt.text))); m.Usage.InputTokens != words || m.Usage.OutputTokens < 1 {
		t.Errorf("usage = %+v, want %d input tokens", m.Usage, words)
	}
}

func TestMockMessagesWithOfficialClient(t *testing.T) {
	client := anthropicClient(t)
	for _, tt := range surfaceCases {
		t.Run(tt.name, func(t *testing.T) {
			m, err := client.Messages.New(t.Context(), messagesParams(tt.text, 1024))
			if err != nil {
				t.Fatal(err)
			}
			checkMessage(t, m, tt)
		})
		t.Run(tt.name+"/stream", func(t *testing.T) {
			stream := client.Messages.NewStreaming(t.Context(), messagesParams(tt.text, 1024))
			var m anthropic.Message
			var events []string
			for stream.Next() {
				ev := stream.Current()
				events = append(events, ev.Type)
				if err := m.Accumulate(ev); err != nil {
					t.Fatal(err)
				}
			}
			if err := stream.Err(); err != nil {
				t.Fatal(err)
			}
			if len(events) < 5 || events[0] != "message_start" || events[len(events)-1] != "message_stop" || events[len(events)-2] != "message_delta" {
				t.Errorf("events = %v", events)
			}
			checkMessage(t, &m, tt)
		})
	}
}

func TestMockMessagesToolLoopWithOfficialClient(t *testing.T) {
	client := anthropicClient(t)
	prompt := "/tool get_weather {\"city\":\"Paris\"}"
	first, err := client.Messages.New(t.Context(), messagesParams(prompt, 1024))
	if err != nil {
		t.Fatal(err)
	}
	p := messagesParams(prompt, 1024)
	p.Messages = append(p.Messages, first.ToParam(), anthropic.NewUserMessage(
		anthropic.NewToolResultBlock(first.Content[0].ID, "sunny, 21°C", false),
		anthropic.NewTextBlock("<system-reminder>keep going</system-reminder>"),
	))
	second, err := client.Messages.New(t.Context(), p)
	if err != nil {
		t.Fatal(err)
	}
	if len(second.Content) != 1 || second.Content[0].Text != "tool results: sunny, 21°C" || second.StopReason != anthropic.StopReasonEndTurn {
		t.Errorf("second turn = %+v, want the tool results as text", second.Content)
	}
}

func TestMockMessagesMaxTokensWithOfficialClient(t *testing.T) {
	client := anthropicClient(t)
	m, err := client.Messages.New(t.Context(), messagesParams("/say one two three four", 2))
	if err != nil {
		t.Fatal(err)
	}
	if m.StopReason != anthropic.StopReasonMaxTokens || m.Content[0].Text != "one two " || m.Usage.OutputTokens != 2 {
		t.Errorf("message = %q %q %+v", m.StopReason, m.Content[0].Text, m.Usage)
	}
}

func TestMockMessagesErrorsWithOfficialClient(t *testing.T) {
	client := anthropicClient(t)
	_, err := client.Messages.New(t.Context(), messagesParams("/error 529 busy", 16))
	var apiErr *anthropic.Error
	if !errors.As(err, &apiErr) || apiErr.StatusCode != 529 || !strings.Contains(apiErr.RawJSON(), `"overloaded_error"`) {
		t.Fatalf("err = %v, want a 529 overloaded_error", err)
	}
	count, err := client.Messages.CountTokens(t.Context(), anthropic.MessageCountTokensParams{
		Model:    "mock",
		System:   anthropic.MessageCountTokensParamsSystemUnion{OfString: anthropic.String("you are a mock")},
		Messages: []anthropic.MessageParam{anthropic.NewUserMessage(anthropic.NewTextBlock("/error 500 not read here"))},
	})
	if err != nil || count.InputTokens != 9 {
		t.Errorf("count_tokens = %+v, %v; want 9 input tokens and no directive", count, err)
	}
}
