// The openai JS SDK on chat completions: chat.completions.create and the
// SDK's own stream helper (chat.completions.stream + finalChatCompletion).
import OpenAI from 'openai';
import { run, toolSchemas } from './harness.mjs';

const client = (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused-with-the-mock', maxRetries: 0 });
const tools = Object.entries(toolSchemas).map(([name, parameters]) => ({ type: 'function', function: { name, parameters } }));

function result(message) {
  const calls = (message.tool_calls ?? []).map((c) => ({ id: c.id, name: c.function.name, args: c.function.arguments }));
  return { text: message.content ?? '', calls };
}

async function streamed(url, messages, onDelta) {
  const s = client(url).chat.completions.stream({ model: 'mock', messages, tools });
  s.on('content', (d) => onDelta(d));
  const done = await s.finalChatCompletion();
  return result(done.choices[0].message);
}

function conversation(prompt, call, output) {
  return [
    { role: 'user', content: prompt },
    { role: 'assistant', content: null, tool_calls: [{ id: call.id, type: 'function', function: { name: call.name, arguments: call.args } }] },
    { role: 'tool', tool_call_id: call.id, content: output },
  ];
}

await run({
  async complete(url, prompt) {
    const r = await client(url).chat.completions.create({ model: 'mock', messages: [{ role: 'user', content: prompt }], tools });
    return result(r.choices[0].message);
  },
  stream: (url, prompt, onDelta) => streamed(url, [{ role: 'user', content: prompt }], onDelta),
  async answerTool(url, prompt, call, output, stream) {
    const messages = conversation(prompt, call, output);
    const r = stream
      ? await streamed(url, messages, () => {})
      : result((await client(url).chat.completions.create({ model: 'mock', messages, tools })).choices[0].message);
    if (r.calls.length) throw new Error('the answer to a tool result is another tool call');
    return r.text;
  },
});
