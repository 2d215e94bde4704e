// accumulate-chat.mjs DIR
//
// Feeds every DIR/*.sse file, byte for byte, to the openai JS SDK as the body
// of a chat-completions streaming response, and prints one JSON object
// mapping file name to what the SDK assembled:
//
//   {content, refusal, reasoning, tool_calls: [{index, id, name, arguments}],
//    finish_reason, streamed: {content, refusal, reasoning}}
//
// or {error, streamed} when the SDK throws. The SDK runs its own code on the
// bytes: the client's fetch is replaced by one that answers with the file,
// so the request path, the SSE decoder (Stream.fromSSEResponse) and the
// accumulator (ChatCompletionStream, via client.chat.completions.stream)
// are the ones an application uses.
//
// Normalization, so the Go side can compare exactly:
// - content, refusal and reasoning are null when absent or empty;
// - reasoning is what the final message keeps of the reasoning_content and
//   reasoning delta fields (the SDK copies unknown delta fields onto the
//   message snapshot, so each holds the LAST fragment, not the
//   concatenation), joined in that order;
// - a tool-call id the stream never sent is "" (the SDK would invent a
//   random call_<uuid> at finalization);
// - streamed is the concatenation of every delta the SDK's decoder
//   delivered for choice 0, in order: what an application printing deltas
//   shows, whatever the accumulator keeps.
import OpenAI from 'openai';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Returns s, or null when s is absent or empty. */
function text(s) {
  return typeof s === 'string' && s !== '' ? s : null;
}

/** Concatenates the present, non-empty strings, or returns null. */
function join2(a, b) {
  return text((text(a) ?? '') + (text(b) ?? ''));
}

/** Collects the text of every delta of choice 0 as the decoder delivered it. */
function deltaCollector() {
  const parts = { content: '', refusal: '', reasoning: '' };
  return {
    add(chunk) {
      for (const choice of chunk?.choices ?? []) {
        const d = choice?.delta;
        if (choice?.index !== 0 || !d) continue;
        parts.content += typeof d.content === 'string' ? d.content : '';
        parts.refusal += typeof d.refusal === 'string' ? d.refusal : '';
        parts.reasoning += typeof d.reasoning_content === 'string' ? d.reasoning_content : '';
        parts.reasoning += typeof d.reasoning === 'string' ? d.reasoning : '';
      }
    },
    result() {
      return { content: text(parts.content), refusal: text(parts.refusal), reasoning: text(parts.reasoning) };
    },
  };
}

/** Projects the SDK's final message onto the normalized shape. */
function normalize(completion, snapshot) {
  const choice = completion.choices?.find((c) => c.index === 0);
  const message = choice?.message ?? {};
  const wireCalls = snapshot?.choices?.[0]?.message?.tool_calls ?? [];
  const calls = (message.tool_calls ?? []).map((call, index) => ({
    index,
    id: typeof wireCalls[index]?.id === 'string' ? wireCalls[index].id : '',
    name: call.function?.name ?? '',
    arguments: call.function?.arguments ?? '',
  }));
  return {
    content: text(message.content),
    refusal: text(message.refusal),
    reasoning: join2(message.reasoning_content, message.reasoning),
    tool_calls: calls,
    finish_reason: choice?.finish_reason ?? null,
  };
}

/** Runs the SDK's streaming chat helper over raw, the upstream response body. */
async function accumulate(raw) {
  const client = new OpenAI({
    apiKey: 'unused',
    baseURL: 'http://upstream.invalid/v1',
    maxRetries: 0,
    fetch: async () => new Response(raw, { status: 200, headers: { 'content-type': 'text/event-stream' } }),
  });
  const deltas = deltaCollector();
  let snapshot;
  const stream = client.chat.completions.stream({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] });
  stream.on('chunk', (chunk, snap) => {
    deltas.add(chunk);
    snapshot = snap;
  });
  try {
    const completion = await stream.finalChatCompletion();
    return { ...normalize(completion, snapshot), streamed: deltas.result() };
  } catch (err) {
    return { error: String(err?.message ?? err), streamed: deltas.result() };
  }
}

async function main() {
  const dir = process.argv[2];
  if (!dir) {
    process.stderr.write('usage: node accumulate-chat.mjs DIR\n');
    process.exit(2);
  }
  const files = (await readdir(dir)).filter((f) => f.endsWith('.sse')).sort();
  const out = {};
  for (const file of files) {
    out[file] = await accumulate(await readFile(join(dir, file)));
  }
  process.stdout.write(JSON.stringify(out, null, 1) + '\n');
}

await main();
