// Shared scenario runner for the client scripts beside it.
//
// Each script (one per client or framework) builds an adapter and calls
// run(adapter). The runner plays every scenario the Go test
// (e2e/nodeclients_test.go) asserts on and prints ONE JSON object on
// stdout: scenario name -> what the client observed. It asserts nothing
// itself: the Go side owns the expectations, so a client that behaves
// differently shows up as data, not as a crash.
//
// Environment:
//   GATEWAY_URL            root URL of a gateway (no /v1)
//   GATEWAY_COMMITTED_URL  the same policy with stream keep-alives on
//   GATEWAY_INCREMENTAL_URL  the same policy (plus answer-side redactions)
//                          with streaming.mode: incremental
//   E2E_PROMPTS            JSON object of the scenario prompts (from Go)
//
// Adapter (every method may throw; errors are recorded with describe()):
//   complete(url, prompt)          -> {text, calls:[{id,name,args}]}
//   stream(url, prompt, onDelta)   -> {text, calls}
//   answerTool(url, prompt, call, result, stream) -> final text
//     (raw SDKs: the runner executes the tool between the two requests)
//   agentRun(url, prompt, stream, tools) -> {text}
//     (frameworks that run tools themselves: tools[name](args) is called
//      by the framework; the runner records what each tool received)
//   unsupported: {scenario: reason}
//
// Tool call args are reported as JSON strings; a framework that hands the
// tool a parsed object is reported with JSON.stringify of it.

const prompts = JSON.parse(process.env.E2E_PROMPTS ?? '{}');
const root = process.env.GATEWAY_URL;
const committed = process.env.GATEWAY_COMMITTED_URL;
const incremental = process.env.GATEWAY_INCREMENTAL_URL;

/** Returns what an application learns from err: message, status, code, body. */
export function describe(err) {
  if (err == null) return null;
  const parts = [];
  if (err.status !== undefined) parts.push(String(err.status));
  if (err.statusCode !== undefined) parts.push(String(err.statusCode));
  if (err.code !== undefined) parts.push(String(err.code));
  if (err.name) parts.push(err.name);
  parts.push(String(err.message ?? err));
  for (const body of [err.error, err.responseBody, err.data, err.cause?.message]) {
    if (body !== undefined) parts.push(typeof body === 'string' ? body : JSON.stringify(body));
  }
  return parts.join(' ');
}

/** The JSON schemas of the test's tools. */
export const toolSchemas = {
  get_weather: {
    type: 'object',
    properties: { city: { type: 'string' }, days: { type: 'integer' } },
  },
  search_docs: {
    type: 'object',
    properties: { query: { type: 'string' }, limit: { type: 'integer' }, debug: { type: 'boolean' } },
  },
  shell: { type: 'object', properties: { command: { type: 'string' } } },
};

/** Tools a framework runs: each records the arguments it received. */
function recordingTools(received) {
  const tools = {};
  for (const name of Object.keys(toolSchemas)) {
    tools[name] = async (args) => {
      received.push({ name, args: typeof args === 'string' ? args : JSON.stringify(args) });
      return name === 'get_weather' ? prompts.weatherResult : 'ok';
    };
  }
  return tools;
}

/** Runs fn, returning its observation merged with {error}. */
async function observe(fn) {
  const seen = { deltas: [] };
  try {
    const out = await fn(seen);
    return { ...seen, ...out, error: null };
  } catch (err) {
    return { ...seen, error: describe(err) };
  }
}

/** One tool round: the model's call, the tool run here, the final text. */
async function toolRound(a, stream) {
  if (a.agentRun) {
    return observe(async () => {
      const received = [];
      const { text } = await a.agentRun(root, prompts.weather, stream, recordingTools(received));
      return { calls: received, final: text };
    });
  }
  return observe(async (seen) => {
    const first = stream
      ? await a.stream(root, prompts.weather, (d) => seen.deltas.push(d))
      : await a.complete(root, prompts.weather);
    seen.calls = first.calls;
    if (first.calls.length !== 1) throw new Error(`expected one tool call, got ${first.calls.length}`);
    const final = await a.answerTool(root, prompts.weather, first.calls[0], prompts.weatherResult, stream);
    return { calls: first.calls, final };
  });
}

/** The model's search_docs call as the client (or its tool) received it. */
async function searchCall(a, stream, url = root) {
  if (a.agentRun) {
    return observe(async () => {
      const received = [];
      await a.agentRun(url, prompts.search, stream, recordingTools(received));
      return { calls: received };
    });
  }
  return observe(async (seen) =>
    stream ? a.stream(url, prompts.search, (d) => seen.deltas.push(d)) : a.complete(url, prompts.search));
}

/** Plain completion through complete(), or agentRun without tools use. */
function completeVia(a, url, prompt) {
  return observe(async () => (a.complete ? a.complete(url, prompt) : a.agentRun(url, prompt, false, recordingTools([]))));
}

function streamVia(a, url, prompt) {
  return observe(async (seen) => {
    const onDelta = (d) => seen.deltas.push(d);
    return a.stream ? a.stream(url, prompt, onDelta) : a.agentRun(url, prompt, true, recordingTools([]), onDelta);
  });
}

/**
 * streamVia, timed: first_delta_ms (absent without a delta) and end_ms
 * (the answer or the error) count from the request.
 */
async function timedStream(a, url, prompt) {
  const start = performance.now();
  const o = await observe(async (seen) => {
    const onDelta = (d) => {
      if (seen.first_delta_ms === undefined) seen.first_delta_ms = performance.now() - start;
      seen.deltas.push(d);
    };
    return a.stream ? a.stream(url, prompt, onDelta) : a.agentRun(url, prompt, true, recordingTools([]), onDelta);
  });
  return { ...o, end_ms: performance.now() - start };
}

/** Plays every scenario with adapter a and prints the observations. */
export async function run(a) {
  const out = { unsupported: a.unsupported ?? {} };
  out.plain = await completeVia(a, root, prompts.plain);
  out.stream = await streamVia(a, root, prompts.stream);
  out.tool_round = await toolRound(a, false);
  out.tool_round_streamed = await toolRound(a, true);
  out.deny = await completeVia(a, root, prompts.deny);
  out.deny_streamed = await streamVia(a, root, prompts.deny);
  out.deny_streamed_after_200 = await streamVia(a, committed, prompts.slowDeny);
  out.redaction = await completeVia(a, root, prompts.redact);
  out.redaction_streamed = await streamVia(a, root, prompts.redact);
  out.tool_arguments_rewritten = await searchCall(a, false);
  out.tool_arguments_rewritten_streamed = await searchCall(a, true);
  out.tool_denied = await completeVia(a, root, prompts.shell);
  out.incremental_stream = await timedStream(a, incremental, prompts.incStream);
  out.incremental_deny_midstream = await timedStream(a, incremental, prompts.incDeny);
  out.incremental_redaction = await timedStream(a, incremental, prompts.incRedact);
  out.incremental_output_redaction = await timedStream(a, incremental, prompts.incOutputRedact);
  out.incremental_redaction_after_release = await timedStream(a, incremental, prompts.incLateRedact);
  out.incremental_rewrite_released = await timedStream(a, incremental, prompts.incRewrite);
  out.incremental_tool_arguments_rewritten = await searchCall(a, true, incremental);
  process.stdout.write(JSON.stringify(out) + '\n');
}
