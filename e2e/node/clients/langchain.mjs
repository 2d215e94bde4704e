// LangChain's ChatOpenAI with useResponsesApi: true, tools bound with
// bindTools; invoke and stream (chunks concatenated as LangChain does).
import { ChatOpenAI } from '@langchain/openai';
import { HumanMessage, AIMessage, ToolMessage } from '@langchain/core/messages';
import { run, toolSchemas } from './harness.mjs';

const tools = Object.entries(toolSchemas).map(([name, parameters]) => ({ type: 'function', function: { name, description: name, parameters } }));

const chat = (url) => new ChatOpenAI({
  model: 'mock',
  apiKey: 'unused-with-the-mock',
  useResponsesApi: true,
  maxRetries: 0,
  configuration: { baseURL: `${url}/v1` },
}).bindTools(tools);

function result(ai) {
  const calls = (ai.tool_calls ?? []).map((c) => ({ id: c.id, name: c.name, args: JSON.stringify(c.args) }));
  return { text: ai.text ?? '', calls };
}

async function streamed(url, messages, onDelta) {
  let acc;
  for await (const chunk of await chat(url).stream(messages)) {
    acc = acc ? acc.concat(chunk) : chunk;
    if (chunk.text) onDelta(chunk.text);
  }
  if (!acc) throw new Error('empty stream');
  return result(acc);
}

function conversation(prompt, call, output) {
  return [
    new HumanMessage(prompt),
    new AIMessage({ content: '', tool_calls: [{ id: call.id, name: call.name, args: JSON.parse(call.args), type: 'tool_call' }] }),
    new ToolMessage({ content: output, tool_call_id: call.id }),
  ];
}

await run({
  complete: async (url, prompt) => result(await chat(url).invoke([new HumanMessage(prompt)])),
  stream: (url, prompt, onDelta) => streamed(url, [new HumanMessage(prompt)], onDelta),
  async answerTool(url, prompt, call, output, stream) {
    const messages = conversation(prompt, call, output);
    const r = stream ? await streamed(url, messages, () => {}) : result(await chat(url).invoke(messages));
    if (r.calls.length) throw new Error('the answer to a tool result is another tool call');
    return r.text;
  },
});
