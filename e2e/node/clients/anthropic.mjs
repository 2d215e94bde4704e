// The Anthropic JS SDK on the Messages API: messages.create and the SDK's
// stream helper (messages.stream + finalMessage).
import Anthropic from '@anthropic-ai/sdk';
import { run, toolSchemas } from './harness.mjs';

const client = (url) => new Anthropic({ baseURL: url, apiKey: 'unused-with-the-mock', maxRetries: 0 });
const tools = Object.entries(toolSchemas).map(([name, input_schema]) => ({ name, input_schema }));

function result(message) {
  let text = '';
  const calls = [];
  for (const b of message.content) {
    if (b.type === 'text') text += b.text;
    if (b.type === 'tool_use') calls.push({ id: b.id, name: b.name, args: JSON.stringify(b.input) });
  }
  return { text, calls };
}

const params = (messages) => ({ model: 'mock', max_tokens: 1024, messages, tools });

async function streamed(url, messages, onDelta) {
  const s = client(url).messages.stream(params(messages));
  s.on('text', (d) => onDelta(d));
  return result(await s.finalMessage());
}

function conversation(prompt, call, output) {
  return [
    { role: 'user', content: prompt },
    { role: 'assistant', content: [{ type: 'tool_use', id: call.id, name: call.name, input: JSON.parse(call.args) }] },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: call.id, content: output }] },
  ];
}

await run({
  async complete(url, prompt) {
    return result(await client(url).messages.create(params([{ role: 'user', content: prompt }])));
  },
  stream: (url, prompt, onDelta) => streamed(url, [{ role: 'user', content: prompt }], onDelta),
  async answerTool(url, prompt, call, output, stream) {
    const messages = conversation(prompt, call, output);
    const r = stream
      ? await streamed(url, messages, () => {})
      : result(await client(url).messages.create(params(messages)));
    if (r.calls.length) throw new Error('the answer to a tool result is another tool call');
    return r.text;
  },
});
