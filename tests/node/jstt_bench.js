// A long-lived json-schema-to-typescript (JSTT) worker for bench/bench_typescript.py.
//
// Reads one JSON request per line on stdin: {"schemas": [...], "format": bool, "rounds": n}.
// For each round it compiles every schema in turn (as separate `compile()` calls, the way a
// per-tool generator would) and answers one JSON line: {"rounds_ns": [total of each round]}.
// Only the `compile()` calls are timed, so Node start-up and `require` (about 150 ms) stay
// out of the comparison; the first round of each request warms the JIT and is dropped by the
// caller.
"use strict";

const readline = require("readline");
const { compile } = require("json-schema-to-typescript");

async function run({ schemas, format, rounds }) {
  const options = { format, bannerComment: "", $refOptions: { resolve: { external: false } } };
  const totals = [];
  for (let round = 0; round < rounds; round++) {
    let total = 0n;
    for (const schema of schemas) {
      const start = process.hrtime.bigint();
      try {
        await compile(schema, "Args", options);
      } catch (error) {
        // A schema JSTT rejects still costs what it took to reject it.
      }
      total += process.hrtime.bigint() - start;
    }
    totals.push(Number(total));
  }
  return { rounds_ns: totals };
}

async function main() {
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    if (!line.trim()) continue;
    const answer = await run(JSON.parse(line));
    process.stdout.write(JSON.stringify(answer) + "\n");
  }
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
