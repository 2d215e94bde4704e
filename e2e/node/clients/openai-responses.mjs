// The openai JS SDK on the Responses API: responses.create and the SDK's
// stream helper (responses.stream + finalResponse). Stateless (store:
// false, the whole conversation in input), as an agent behind a gateway runs.
import OpenAI from 'openai';
import { run, toolSchemas } from './harness.mjs';

const client = (url) => new OpenAI({ baseURL: `${url}/v1`, apiKey: 'unused-with-the-mock', maxRetries: 0 });
const tools = Object.entries(toolSchemas).map(([name, parameters]) => ({ type: 'function', name, parameters, strict: false }));

function result(response) {
  const calls = response.output
    .filter((i) => i.type === 'function_call')
    .map((i) => ({ id: i.call_id, name: i.name, args: i.arguments }));
  return { text: response.output_text ?? '', calls };
}

async function streamed(url, input, onDelta) {
  const s = client(url).responses.stream({ model: 'mock', input, tools, store: false });
  s.on('response.output_text.delta', (e) => onDelta(e.delta));
  return result(await s.finalResponse());
}

function conversation(prompt, call, output) {
  return [
    { role: 'user', content: prompt },
    { type: 'function_call', call_id: call.id, name: call.name, arguments: call.args },
    { type: 'function_call_output', call_id: call.id, output },
  ];
}

await run({
  async complete(url, prompt) {
    return result(await client(url).responses.create({ model: 'mock', input: prompt, tools, store: false }));
  },
  stream: (url, prompt, onDelta) => streamed(url, [{ role: 'user', content: prompt }], onDelta),
  async answerTool(url, prompt, call, output, stream) {
    const input = conversation(prompt, call, output);
    const r = stream
      ? await streamed(url, input, () => {})
      : result(await client(url).responses.create({ model: 'mock', input, tools, store: false }));
    if (r.calls.length) throw new Error('the answer to a tool result is another tool call');
    return r.text;
  },
});
