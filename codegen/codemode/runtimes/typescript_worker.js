// The TypeScript run_code worker: runs one program in a fresh Node process.
//
// Started by `runtimes.typescript` as `node FLAGS <this file> READ_FD WRITE_FD STRIPPER`,
// where STRIPPER is `node` (Node's own type stripping, `module.stripTypeScriptTypes`), the
// directory of a `typescript` package (TypeScript 5's `transpileModule`), or `compiled` (the
// host sends the program as JavaScript, wrapped as HEADER does, its source map inline:
// TypeScript 7's native `tsc` emitted it, `native_emit.py`). It needs nothing else. The
// protocol is the Python worker's: JSON lines on two pipes. From the host: `start` (program,
// tool names, limits), then `result` for each call. To the host: `ready` (started, the type
// stripper loaded, waiting for its program), `log` (a printed line), `call` (a tool call: id,
// name, arguments), `discover` (a question to `catalog`: id, op, arguments; answered like a
// call), and finally `done` (with the returned value, if any) or `error` (kind and message).
//
// The program is the body of an async function, so top-level `await` and `return` work,
// with exactly three names of its own in scope: `tools`, `catalog` (discovery: search,
// describe, servers, names) and `ToolCallError`. A name no tool has is still sent: the host
// answers with the closest tools by search (the worker holds names, not the index). Calls start as
// soon as they are made, so `Promise.all` overlaps them and a call never awaited still
// reaches the host (and its failure is no unhandled rejection). The worker is no security
// boundary; the host sets its rlimits and the sandbox contains it.
(() => {
  "use strict";

  const load = require;
  const fs = load("node:fs");
  const net = load("node:net");
  const nodeModule = load("node:module");
  const util = load("node:util");
  const vm = load("node:vm");
  const { Writable } = load("node:stream");

  const readFd = Number(process.argv[2]);
  const writeFd = Number(process.argv[3]);
  const stripper = process.argv[4];

  const MAX_DEPTH = 256; // containers a value may nest (`[[1]]` nests 2), as the host checks
  const FILENAME = "program.ts";
  // `native_emit.PROGRAM_HEAD` wraps a program the host compiles the same way
  const HEADER = '(async function (tools, catalog, ToolCallError) {"use strict";\n';
  const INLINE_MAP = /\n\/\/# sourceMappingURL=data:application\/json;base64,([A-Za-z0-9+/=]*)\s*$/;

  // Taken before the program runs: it may replace the globals, never these.
  const stringify = JSON.stringify;
  const parse = JSON.parse;
  const writeSync = fs.writeSync;
  const byteLength = Buffer.byteLength;
  const fromString = Buffer.from.bind(Buffer);
  const exit = process.exit.bind(process);
  const inspect = util.inspect;
  const replaceMatches = Function.prototype.call.bind(RegExp.prototype[Symbol.replace]);
  // A lone surrogate as `JSON.stringify` escapes it (`\ud83d`), after an even run of
  // backslashes (so not the text `\\ud83d`); a well-formed pair is written as it is.
  const LONE_SURROGATE = /(?<!\\)((?:\\\\)*)\\ud[89a-f][0-9a-f]{2}/g;

  // --- the channel -------------------------------------------------------------------------

  function send(message) {
    sendText(stringify(message));
  }

  // A program's strings may hold lone surrogates (`JSON.parse('"\\ud83d"')`), which the
  // host refuses (UTF-8 cannot carry them): each is sent as U+FFFD, as Node prints it.
  function sendText(text) {
    const data = fromString(replaceMatches(LONE_SURROGATE, text, "$1\\ufffd") + "\n", "utf8");
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += writeSync(writeFd, data, offset, data.length - offset);
      } catch (error) {
        if (error && error.code === "EAGAIN") continue;
        exit(0); // the host is gone: nobody is left to tell
      }
    }
  }

  const pending = new Map();
  let nextId = 0;
  let onStart = null;

  // Ask the host (a tool call or a question to `catalog`): `message(id)` is the line sent
  // under a fresh id; the promise its answer settles (a failure's stack points at `site`).
  function request(site, message) {
    const id = ++nextId;
    const promise = new Promise((resolve, reject) => {
      pending.set(id, { resolve, reject, site });
    });
    promise.catch(() => {}); // a call never awaited is not an unhandled rejection
    sendText(message(id));
    return promise;
  }

  function receive(line) {
    const message = parse(line.toString("utf8"));
    if (onStart !== null) {
      const start = onStart;
      onStart = null;
      start(message); // nothing but `start` can come first: no call has been made yet
      return;
    }
    const waiting = pending.get(message.id);
    if (waiting === undefined) return;
    pending.delete(message.id);
    if (message.ok) waiting.resolve(message.value);
    else waiting.reject(failed(message.name, message.message, waiting.site));
  }

  function listen() {
    const input = new net.Socket({ fd: readFd, readable: true, writable: false });
    let pieces = []; // the pieces of a line not finished yet: each byte is copied once
    input.on("data", (chunk) => {
      let start = 0;
      let end = chunk.indexOf(10);
      while (end >= 0) {
        pieces.push(chunk.subarray(start, end));
        const line = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
        pieces = [];
        receive(line);
        start = end + 1;
        end = chunk.indexOf(10, start);
      }
      if (start < chunk.length) pieces.push(chunk.subarray(start));
    });
    // The host closes the channel only when the run is over (or it died): end at once.
    input.on("end", () => exit(0));
    input.on("error", () => exit(0));
  }

  // --- values crossing the channel -----------------------------------------------------------

  function kindOf(value) {
    if (value === undefined) return "undefined";
    if (typeof value === "bigint") return "BigInt";
    if (typeof value === "function") return "function";
    if (typeof value === "symbol") return "symbol";
    const prototype = Object.getPrototypeOf(value);
    const name = prototype && prototype.constructor && prototype.constructor.name;
    return name || "object";
  }

  // Refuse anything that does not survive a JSON round trip: non-finite numbers, anything but
  // plain arrays and objects, deeper than MAX_DEPTH. An object property whose value is
  // `undefined` is left out, as JSON.stringify does; a lone surrogate becomes U+FFFD
  // (`sendText`).
  function checkJson(value, path, depth) {
    if (value === null || typeof value === "boolean" || typeof value === "string") return;
    if (typeof value === "number") {
      if (!Number.isFinite(value)) throw new TypeError(`${path}: ${value} is not a finite number`);
      return;
    }
    const isArray = Array.isArray(value);
    const plain =
      isArray ||
      (typeof value === "object" &&
        [Object.prototype, null].includes(Object.getPrototypeOf(value)));
    if (!plain) throw new TypeError(`${path}: ${kindOf(value)} is not a JSON value`);
    if (depth >= MAX_DEPTH) {
      throw new TypeError(`${path}: nested too deeply (more than ${MAX_DEPTH} levels)`);
    }
    if (isArray) {
      for (let index = 0; index < value.length; index++) {
        checkJson(value[index], `${path}[${index}]`, depth + 1);
      }
      return;
    }
    for (const key of Object.keys(value)) {
      if (value[key] !== undefined) checkJson(value[key], `${path}.${key}`, depth + 1);
    }
  }

  // --- what the program sees -----------------------------------------------------------------

  class ToolCallError extends Error {
    constructor(toolName, message) {
      super(message);
      Object.defineProperty(this, "toolName", { value: toolName, enumerable: true });
    }
  }
  Object.defineProperty(ToolCallError.prototype, "name", { value: "ToolCallError" });

  function failed(name, message, site) {
    const error = new ToolCallError(name, message);
    const frames = String(site.stack).split("\n").slice(1).join("\n");
    Object.defineProperty(error, "stack", { value: `${error.name}: ${message}\n${frames}` });
    return error;
  }

  function makeTools(names) {
    const known = new Set(names);
    const listed = [...known].sort();
    const bindings = new Map();

    function call(name) {
      return function bound(args) {
        if (arguments.length > 1) throw new TypeError(`${name}: pass one object of arguments`);
        const value = args === undefined ? {} : args;
        const site = {}; // where the program called: a failure's stack points there
        Error.captureStackTrace(site, bound);
        // the size first: a call that is too large is refused before any walk
        let encoded;
        try {
          encoded = stringify(value);
        } catch {
          encoded = undefined; // not JSON: the check below says where
        }
        let size = encoded === undefined ? 0 : byteLength(encoded, "utf8");
        if (!(argumentLimit && size > argumentLimit)) {
          checkJson(value, "$", 0);
          if (encoded === undefined) encoded = stringify(value);
          size = byteLength(encoded, "utf8");
        }
        if (argumentLimit && size > argumentLimit) {
          const message =
            `the arguments are ${size} bytes of JSON; a tool call may carry at most ` +
            `${argumentLimit} (pass a smaller value, or split the work)`;
          throw failed(name, message, site);
        }
        return request(
          site,
          (id) => `{"type":"call","id":${id},"name":${stringify(name)},"args":${encoded}}`,
        );
      };
    }

    function binding(name) {
      if (name === "run_code") throw new TypeError("run_code cannot be called from a program");
      let bound = bindings.get(name);
      if (bound === undefined) {
        bound = call(name);
        bindings.set(name, bound);
      }
      return bound;
    }

    const readOnly = () => {
      throw new TypeError("tools is read-only");
    };
    return new Proxy(Object.create(null), {
      get(_, key) {
        if (typeof key === "symbol") {
          if (key === inspect.custom) return () => `[tools: ${listed.join(", ")}]`;
          if (key === Symbol.toStringTag) return "Tools";
          return undefined;
        }
        // `await tools` and JSON.stringify(tools) look these up; they are not calls
        if (!known.has(key) && (key === "then" || key === "toJSON")) return undefined;
        return binding(key);
      },
      has: (_, key) => typeof key === "string" && known.has(key),
      ownKeys: () => listed,
      getOwnPropertyDescriptor: (_, key) =>
        typeof key === "string" && known.has(key)
          ? { value: binding(key), enumerable: true, configurable: true, writable: false }
          : undefined,
      set: readOnly,
      defineProperty: readOnly,
      deleteProperty: readOnly,
      setPrototypeOf: readOnly,
    });
  }

  // What `catalog.search` returns: the hits as text when logged or serialized, with
  // `names` (best first), `matched` and `cut`.
  class SearchHits {
    constructor(answer) {
      Object.defineProperty(this, "text", { value: String(answer.text), enumerable: false });
      this.names = answer.names;
      this.matched = answer.matched;
      this.cut = answer.cut;
      Object.freeze(this);
    }
    toString() {
      return this.text;
    }
    toJSON() {
      return this.text;
    }
    [inspect.custom]() {
      return this.text;
    }
  }

  // The tools, found from inside a program. A name of its own beside `tools`, so no tool can
  // shadow it and it shadows no tool.
  function makeCatalog() {
    function ask(op, args) {
      checkJson(args, "$", 0);
      const site = {};
      Error.captureStackTrace(site, ask);
      return request(site, (id) => stringify({ type: "discover", id, op, args }));
    }
    const catalog = {
      search(query, options) {
        const chosen = typeof options === "number" ? { k: options } : options || {};
        const args = { query, k: chosen.k === undefined ? 8 : chosen.k, server: chosen.server ?? null };
        const hits = ask("search", args).then((answer) => new SearchHits(answer));
        hits.catch(() => {}); // as a call's: a search never awaited is no unhandled rejection
        return hits;
      },
      describe: (name) => ask("describe", { name }),
      servers: () => ask("servers", {}),
      names: (server) => ask("names", { server: server ?? null }),
      [inspect.custom]: () => "[catalog: search(query, { k, server }), describe(name), servers(), names(server)]",
    };
    return Object.freeze(catalog);
  }

  // --- printed output ----------------------------------------------------------------------

  let outputLimit = 0;
  let argumentLimit = 0;

  // At most `limit` bytes of UTF-8 (0: no limit), with a note of what was cut.
  function cut(text, limit) {
    if (!limit || text.length <= limit / 4) return text;
    const data = fromString(text, "utf8");
    if (data.length <= limit) return text;
    const kept = data.subarray(0, Math.max(0, limit - 64)).toString("utf8").replace(/\uFFFD$/, "");
    const more = data.length - byteLength(kept, "utf8");
    return `${kept}... [cut: ${more.toLocaleString("en-US")} more bytes]`;
  }
  let printed = 0;
  let partial = [];

  // stdout and stderr (console.log, console.error, process.stdout.write): every complete
  // line goes to the host as a log. Past the output limit the program stops at once: a huge
  // print must not travel to the host first.
  function print(chunk) {
    const text = typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8");
    printed += byteLength(text, "utf8");
    if (outputLimit && printed > outputLimit) {
      const message = `the program printed more than ${outputLimit} bytes`;
      send({ type: "error", kind: "output-limit", message });
      exit(0);
    }
    const lines = text.split("\n");
    for (let index = 0; index < lines.length - 1; index++) {
      partial.push(lines[index]);
      send({ type: "log", text: partial.join("").toWellFormed() });
      partial = [];
    }
    partial.push(lines[lines.length - 1]);
  }

  function flush() {
    const rest = partial.join("");
    partial = [];
    if (rest) send({ type: "log", text: rest.toWellFormed() });
  }

  // process.stdout and process.stderr are replaced before anything touches them, so Node
  // never wraps descriptors 1 and 2 (it would make 2, the host's drained pipe, non-blocking:
  // a raw write to it would fail instead of waiting); the console binds to them lazily.
  function capture() {
    for (const name of ["stdout", "stderr"]) {
      const stream = new Writable({
        decodeStrings: false,
        write(chunk, encoding, callback) {
          print(chunk);
          callback();
        },
      });
      Object.defineProperty(process, name, { value: stream, configurable: true, enumerable: true });
    }
  }

  // --- types stripped, the program compiled ----------------------------------------------

  let typescript = null;
  const strip = { map: null };

  function loadStripper() {
    if (stripper === "compiled") return; // the host compiled the program: nothing to load
    if (stripper === "node") {
      if (typeof nodeModule.stripTypeScriptTypes !== "function") {
        throw new Error(`Node ${process.version} has no module.stripTypeScriptTypes`);
      }
    } else {
      typescript = load(stripper);
    }
    toJavaScript("const warm: number = 1;"); // loaded and compiled before the program comes
  }

  // A program the host compiled: its JavaScript, the inline source map read and cut off.
  function compiled(program) {
    const inline = INLINE_MAP.exec(program);
    if (inline === null) {
      strip.map = null;
      return program;
    }
    strip.map = new nodeModule.SourceMap(parse(fromString(inline[1], "base64").toString("utf8")));
    return program.slice(0, inline.index) + "\n";
  }

  function toJavaScript(program) {
    if (stripper === "compiled") return compiled(program);
    const source = HEADER + program + "\n})";
    if (typescript === null) {
      strip.map = null; // type stripping keeps every position
      return nodeModule.stripTypeScriptTypes(source, { mode: "strip", sourceUrl: FILENAME });
    }
    const output = typescript.transpileModule(source, {
      compilerOptions: {
        target: typescript.ScriptTarget.ESNext,
        module: typescript.ModuleKind.None,
        sourceMap: true,
        inlineSources: false,
      },
      fileName: FILENAME,
      reportDiagnostics: true,
    });
    const problem = output.diagnostics.find(
      (item) => item.category === typescript.DiagnosticCategory.Error,
    );
    if (problem !== undefined) {
      const text = typescript.flattenDiagnosticMessageText(problem.messageText, "\n");
      const where = problem.file
        ? ` (line ${problem.file.getLineAndCharacterOfPosition(problem.start).line})`
        : "";
      throw Object.assign(new SyntaxError(text + where), { reported: true });
    }
    strip.map = new nodeModule.SourceMap(parse(output.sourceMapText));
    return output.outputText.replace(/\n\/\/# sourceMappingURL=.*\s*$/, "\n");
  }

  // A line of the compiled program as a line of the program (the header is line 0).
  function programLine(line, column) {
    if (strip.map !== null) {
      const entry = strip.map.findEntry(line - 1, Math.max(0, column - 1));
      if (entry && typeof entry.originalLine === "number") return entry.originalLine;
    }
    return line - 1;
  }

  function describe(error) {
    if (!(error instanceof Error)) return cut(`Uncaught ${inspect(error)}`, outputLimit);
    let head = cut(error.message ? `${error.name}: ${error.message}` : error.name, outputLimit);
    if (error.code === "ERR_ACCESS_DENIED") {
      const refused = "run_code programs may not start processes, worker threads or addons";
      head += ` (${error.permission}: ${refused})`;
    }
    const frames = [];
    for (const match of String(error.stack).matchAll(/program\.ts:(\d+)(?::(\d+))?/g)) {
      const line = programLine(Number(match[1]), Number(match[2] || 0));
      if (line >= 1 && frames.length < 20) frames.push(`  at line ${line} of the program`);
    }
    if (error instanceof SyntaxError && !error.reported && frames.length) {
      return `${head} (${frames[0].trim().slice(3)})`;
    }
    return [head, ...frames].join("\n");
  }

  function compile(program) {
    const script = new vm.Script(toJavaScript(program), {
      filename: FILENAME,
      // `await import("node:fs")`: Node's own loader, as for any script of the main context
      importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
    });
    typescript = null; // the compiler's heap is the program's from now on
    for (const key of Object.keys(load.cache)) delete load.cache[key];
    return script.runInThisContext();
  }

  // --- one run -------------------------------------------------------------------------------

  let finished = false;

  function finish(message, text) {
    if (finished) return;
    finished = true;
    flush();
    if (text === undefined) send(message);
    else sendText(text);
    exit(0);
  }

  function fail(error) {
    finish({ type: "error", kind: "exception", message: describe(error) });
  }

  function run(start) {
    outputLimit = Number((start.limits || {}).output_bytes) || 0;
    argumentLimit = Number((start.limits || {}).argument_bytes) || 0;
    capture();
    process.on("uncaughtException", fail);
    process.on("unhandledRejection", fail);
    let program;
    try {
      program = compile(String(start.program));
    } catch (error) {
      fail(error);
      return;
    }
    Promise.resolve()
      .then(() => program(makeTools(start.tools || []), makeCatalog(), ToolCallError))
      .then((value) => {
        if (value === undefined) return finish({ type: "done" });
        try {
          checkJson(value, "$", 0);
        } catch (problem) {
          const message = `the program returned a value that is not JSON: ${problem.message}`;
          return finish({ type: "error", kind: "invalid-output", message });
        }
        const encoded = stringify(value);
        if (outputLimit && printed + byteLength(encoded, "utf8") > outputLimit) {
          const message = `the program printed and returned more than ${outputLimit} bytes`;
          return finish({ type: "error", kind: "output-limit", message });
        }
        finish(null, `{"type":"done","result":${encoded}}`);
      }, fail);
  }

  function main() {
    try {
      loadStripper();
    } catch (error) {
      writeSync(2, `the TypeScript stripper could not load: ${describe(error)}\n`);
      exit(1);
    }
    onStart = run;
    listen();
    // Started ahead of its run (a spare), the worker says when it is ready, in the exact
    // bytes the host waits for: from here on a run costs only its program.
    writeSync(writeFd, '{"type": "ready"}\n');
  }

  main();
})();
