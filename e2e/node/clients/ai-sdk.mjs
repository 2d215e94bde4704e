// The AI SDK (ai + @ai-sdk/openai) with the default openai(model), which
// speaks the Responses API. generateText / streamText run the tools
// themselves over up to three steps.
import { generateText, streamText, tool, jsonSchema, stepCountIs } from 'ai';
import { createOpenAI } from '@ai-sdk/openai';
import { run, toolSchemas } from './harness.mjs';

const model = (url) => createOpenAI({ baseURL: `${url}/v1`, apiKey: 'unused-with-the-mock' })('mock');

function sdkTools(tools) {
  return Object.fromEntries(Object.entries(toolSchemas).map(([name, schema]) =>
    [name, tool({ description: name, inputSchema: jsonSchema(schema), execute: async (input) => tools[name](input) })]));
}

await run({
  async agentRun(url, prompt, stream, tools, onDelta = () => {}) {
    const params = { model: model(url), prompt, tools: sdkTools(tools), stopWhen: stepCountIs(3), maxRetries: 0 };
    if (!stream) {
      const r = await generateText(params);
      return { text: r.text };
    }
    // streamText reports failures as stream parts, not exceptions.
    const r = streamText({ ...params, onError: () => {} });
    let text = '';
    for await (const part of r.fullStream) {
      if (part.type === 'text-delta') {
        const d = part.text ?? part.delta;
        text += d;
        onDelta(d);
      }
      if (part.type === 'error') throw part.error;
    }
    return { text: await r.text };
  },
});
