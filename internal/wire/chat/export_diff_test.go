package chat

// wireArguments returns each projected tool call's arguments string as it
// was assembled from the wire, in projection order, so the differential
// test compares arguments byte for byte rather than through the parsed args.
func (r *Response) wireArguments() []string {
	out := make([]string, len(r.ans.calls))
	for i, c := range r.ans.calls {
		out[i] = c.arguments
	}
	return out
}
