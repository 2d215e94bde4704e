// One Claude Agent SDK query, for the gateway's end-to-end tests
// (e2e/cliagents_test.go): node agent-sdk.mjs MODEL PROMPT. Bash is the
// one tool allowed without asking. The SDK runs its bundled Claude Code,
// which reads ANTHROPIC_BASE_URL and the other variables of the
// environment the test gives this script. Every message the query yields
// is printed as one JSON line, as `claude -p --output-format stream-json`
// prints them; the exit status is 1 when the query ends in an error.
import { query } from '@anthropic-ai/claude-agent-sdk';

const [model, prompt] = process.argv.slice(2);
if (!model || !prompt) {
  console.error('usage: node agent-sdk.mjs MODEL PROMPT');
  process.exit(2);
}

let failed = false;
try {
  for await (const message of query({
    prompt,
    options: {
      model,
      allowedTools: ['Bash'],
      cwd: process.cwd(),
      settingSources: [],
      stderr: (data) => process.stderr.write(data),
    },
  })) {
    process.stdout.write(JSON.stringify(message) + '\n');
    if (message.type === 'result' && message.is_error) failed = true;
  }
} catch (err) {
  console.error(err);
  failed = true;
}
process.exit(failed ? 1 : 0);
