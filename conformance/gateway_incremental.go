package conformance

import (
	"fmt"
	"net/http"
	"time"

	"github.com/hooks-gateway/hooks-gateway/config"
	"github.com/hooks-gateway/hooks-gateway/internal/wire"
)

// GatewayIncrementalDeclaration is the declared surface of the gateway
// harness with streaming.mode incremental on api.
func GatewayIncrementalDeclaration(api wire.API) Declaration {
	d := IncrementalDeclaration(SDKLocalDeclaration())
	d.Name = "gateway-incremental/" + string(api)
	return d
}

// GatewayIncrementalAPIs lists the surfaces the incremental gateway
// harness drives, in report order: every surface of the gateway harness.
func GatewayIncrementalAPIs() []wire.API { return GatewayAPIs() }

// GatewayIncrementalHarness returns the factory of harnesses whose
// production path is the gateway mediating streams incrementally
// (streaming.mode: incremental, every event of text a segment boundary):
// every model call streams, a scripted response's stream chunks are one
// SSE event each (a truncated one is cut after its last chunk), and the
// surface's official streaming client reads what the gateway releases.
func GatewayIncrementalHarness(api wire.API) (HarnessFactory, error) {
	s, err := gatewaySurfaceFor(api)
	if err != nil {
		return nil, fmt.Errorf("the incremental gateway harness: %w", err)
	}
	switch api {
	case wire.ChatCompletions:
		s.newModel = func(root string, hc *http.Client, tools []Tool) modelSeam {
			return &streamingChatModel{gatewayModel: gatewayModel{client: newOpenAIClient(root, hc), tools: openAITools(tools)}}
		}
		s.renderStream = chatStreamEvents
	case wire.Responses:
		s.newModel = func(root string, hc *http.Client, tools []Tool) modelSeam {
			return &streamingResponsesModel{responsesModel: responsesModel{client: newOpenAIClient(root, hc), tools: responsesTools(tools)}}
		}
		s.renderStream = responsesStreamEvents
	case wire.Messages:
		s.newModel = func(root string, hc *http.Client, tools []Tool) modelSeam {
			return &streamingMessagesModel{messagesModel: messagesModel{client: newAnthropicClient(root, hc), tools: anthropicTools(tools)}}
		}
		s.renderStream = messagesStreamEvents
	}
	return func() Harness {
		return &gatewayHarness{surface: s, streaming: incrementalStreaming(), declaration: GatewayIncrementalDeclaration(api)}
	}, nil
}

// incrementalStreaming is the harness's streaming configuration: every
// boundary between events of text closes a segment (CTK.md §2.5: each
// chunk boundary), the first one included (segment.first: boundary, so an
// answer of one chunk is one emission), and neither time nor sentences
// close one.
func incrementalStreaming() config.Streaming {
	return config.Streaming{
		Mode: config.StreamingIncremental,
		Segment: config.Segment{Bytes: 1, Interval: time.Hour, MaxSegments: config.DefaultSegmentMaxSegments,
			First: config.SegmentFirstBoundary},
	}
}

// streamParts are the text chunks a scripted response streams: its
// stream chunks, else its whole string content as one chunk (none for
// null or empty content).
func streamParts(r Response) []string {
	if r.Stream != nil {
		return r.Stream
	}
	if s, ok := r.Content.(string); ok && s != "" {
		return []string{s}
	}
	return nil
}
