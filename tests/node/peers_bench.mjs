// A long-lived worker running the two Node peers for bench/bench_endtoend.py:
// json-schema-to-typescript's `compile()` (JSTT) and @cloudflare/codemode's
// `generateTypesFromJsonSchema` (the generator behind its Code Mode prompt).
//
// Reads one JSON request per line on stdin:
//   {"peer": "jstt", "schemas": [...], "rounds": n}     one `compile()` per schema, unformatted
//   {"peer": "codemode", "tools": {name: {description, inputSchema, outputSchema}}, "rounds": n}
// and answers one JSON line per request: {"rounds_ns": [...], "rounds_cpu_us": [...], "bytes":
// n}, the wall time and the CPU time (user + system, this process) of each round (every
// schema, or the whole tool map in one call) and the size of the last round's output. Only the generators' calls are timed, so Node start-up and module loading stay out:
// the peers are measured in process, warm, which is their best case. The caller drops the
// first round (it warms the JIT).
//
// codemode's package root imports `cloudflare:workers`, which plain Node cannot load, so the
// generator is imported from the chunk the root itself imports it from (read from the root's
// first import statement, so no hashed file name is written here).
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import { createInterface } from "node:readline";
import { pathToFileURL } from "node:url";

const require = createRequire(import.meta.url);
const { compile } = require("json-schema-to-typescript");

async function loadCodemode() {
  const root = require.resolve("@cloudflare/codemode/browser");
  const index = join(dirname(root), "index.js");
  const source = readFileSync(index, "utf8");
  const found = source.match(/import \{([^}]*)\} from "(\.\/json-schema-types-[^"]+\.js)"/);
  if (!found) throw new Error(`no json-schema-types import in ${index}`);
  const alias = found[1]
    .split(",")
    .map((part) => part.trim().split(/\s+as\s+/))
    .find(([, name]) => name === "generateTypesFromJsonSchema");
  if (!alias) throw new Error(`generateTypesFromJsonSchema is not imported by ${index}`);
  const chunk = await import(pathToFileURL(join(dirname(index), found[2])).href);
  return chunk[alias[0]];
}

const generateTypesFromJsonSchema = await loadCodemode();
const JSTT_OPTIONS = { format: false, bannerComment: "", $refOptions: { resolve: { external: false } } };

function cpuMicroseconds(since) {
  const used = process.cpuUsage(since);
  return used.user + used.system;
}

async function jstt({ schemas, rounds }) {
  const totals = [];
  const cpu = [];
  let bytes = 0;
  for (let round = 0; round < rounds; round++) {
    bytes = 0;
    const start = process.hrtime.bigint();
    const startCpu = process.cpuUsage();
    for (const schema of schemas) {
      try {
        bytes += (await compile(schema, "Args", JSTT_OPTIONS)).length;
      } catch (error) {
        // A schema JSTT rejects still costs what it took to reject it.
      }
    }
    cpu.push(cpuMicroseconds(startCpu));
    totals.push(Number(process.hrtime.bigint() - start));
  }
  return { rounds_ns: totals, rounds_cpu_us: cpu, bytes };
}

function codemode({ tools, rounds }) {
  const totals = [];
  const cpu = [];
  let bytes = 0;
  for (let round = 0; round < rounds; round++) {
    const start = process.hrtime.bigint();
    const startCpu = process.cpuUsage();
    bytes = generateTypesFromJsonSchema(tools).length;
    cpu.push(cpuMicroseconds(startCpu));
    totals.push(Number(process.hrtime.bigint() - start));
  }
  return { rounds_ns: totals, rounds_cpu_us: cpu, bytes };
}

const lines = createInterface({ input: process.stdin });
for await (const line of lines) {
  if (!line.trim()) continue;
  const request = JSON.parse(line);
  const answer = request.peer === "codemode" ? codemode(request) : await jstt(request);
  process.stdout.write(JSON.stringify(answer) + "\n");
}
