// mcp-bind.ts: call the tools of codegen's generated declarations through an MCP client.
//
//   import type { Tools } from "./everything.js"; // everything.d.ts, from `codegen sdk`
//   import { bind, ToolCallError } from "./mcp-bind.js";
//   const tools = bind<Tools>(client); // a connected `Client` of @modelcontextprotocol/sdk
//   await tools.echo({ message: "hi" });
//   await tools["get-sum"]({ a: 2, b: 3 });
//
// The same file serves every generated declarations file: copy it into your sources once
// (`python3 -m codegen.render.typescript.runtime > mcp-bind.ts`). It imports nothing, so it
// compiles under any module setting and with any version of the SDK whose `Client` has
// `callTool({ name, arguments })`, and its syntax is erasable (`erasableSyntaxOnly`).
// Shipped with codegen as `templates/typescript/mcp-bind.ts`.

/** A tool call failed: `toolName` names the tool, `message` says why. The error or value
 * that made it fail, when there is one, is its `cause`. */
export class ToolCallError extends Error {
  override readonly name = "ToolCallError";
  readonly toolName: string;

  constructor(toolName: string, message: string, cause?: unknown) {
    super(message);
    Object.setPrototypeOf(this, new.target.prototype); // `instanceof` when compiled to ES5
    this.toolName = toolName;
    if (cause !== undefined) {
      Object.defineProperty(this, "cause", { value: cause, configurable: true, writable: true });
    }
  }
}

/** The parameters of one `tools/call` request. */
export interface ToolCallParams {
  name: string;
  arguments: { [key: string]: unknown };
}

/** Options passed unchanged to every `callTool` (the SDK's `RequestOptions`: `timeout` in
 * milliseconds, `signal` to abort, `onprogress`, ...). */
export interface CallOptions {
  readonly timeout?: number;
  readonly signal?: { readonly aborted: boolean };
  readonly [option: string]: unknown;
}

/** What `bind` calls: the SDK's `Client`, or anything with the same `callTool`. */
export interface ToolClient {
  callTool(params: ToolCallParams, resultSchema?: undefined, options?: CallOptions): Promise<unknown>;
}

/** The tools of a binding without generated types: any name, any arguments, `unknown`
 * results. `bind<Tools>(client)` types them instead. */
export type UntypedTools = {
  readonly [name: string]: (args?: { readonly [key: string]: unknown }) => Promise<unknown>;
};

type Fields = { readonly [key: string]: unknown };

function fields(value: unknown): Fields | undefined {
  return typeof value === "object" && value !== null ? (value as Fields) : undefined;
}

function kind(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  return typeof value === "object" ? "an object" : `a ${typeof value}`;
}

/** The reason a client's error gives (the SDK's `McpError` already says `MCP error <code>`). */
function describe(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  const name = error.name || "Error";
  if (!error.message) return name;
  return name === "Error" || name === "McpError" ? error.message : `${name}: ${error.message}`;
}

/** A `CallToolResult` as the value the declarations promise, or its error thrown: the
 * structured content when the tool sends some, else its text (text blocks joined by
 * newlines), else its content blocks as they came (images, resources), else `null`. */
function decode(name: string, result: unknown): unknown {
  const found = fields(result);
  const resultType = found?.["resultType"];
  if (found === undefined || !Array.isArray(found["content"])) {
    throw new ToolCallError(name, `expected a tool result, got ${kind(result)}`);
  }
  if (resultType !== undefined && resultType !== "complete") {
    throw new ToolCallError(name, `expected a tool result, got ${JSON.stringify(resultType)}`);
  }
  const content: readonly unknown[] = found["content"];
  const structured = found["structuredContent"];
  if (found["isError"] === true) {
    const said = content.map((block) => fields(block)?.["text"]).filter((t) => typeof t === "string");
    if (said.length > 0) throw new ToolCallError(name, said.join("\n"));
    if (structured !== undefined && structured !== null) {
      throw new ToolCallError(name, JSON.stringify(structured));
    }
    throw new ToolCallError(name, "the tool reported an error without a message");
  }
  if (structured !== undefined && structured !== null) return structured;
  if (content.length === 0) return null;
  const texts: string[] = [];
  for (const block of content) {
    const text = fields(block)?.["text"];
    if (fields(block)?.["type"] !== "text" || typeof text !== "string") break;
    texts.push(text);
  }
  if (texts.length === content.length) return texts.join("\n");
  const odd = content.find((block) => fields(block) === undefined || Array.isArray(block));
  if (odd !== undefined) throw new ToolCallError(name, `not an MCP content block: ${kind(odd)}`);
  return content;
}

/** Call one tool by its exact name and decode its result as `bind`'s tools do. Arguments
 * are an object (`undefined` or `null` send `{}`); a failure rejects with `ToolCallError`,
 * except a call its `signal` aborted, which rejects with what the client rejected with. */
export async function callTool(
  client: ToolClient,
  name: string,
  args?: unknown,
  options?: CallOptions,
): Promise<unknown> {
  if (args !== undefined && args !== null && (typeof args !== "object" || Array.isArray(args))) {
    throw new TypeError(
      `tools[${JSON.stringify(name)}]: arguments must be an object of JSON values, got ${kind(args)}`,
    );
  }
  const params: ToolCallParams = { name, arguments: { ...(args ?? {}) } };
  let result: unknown;
  try {
    result = await (options === undefined
      ? client.callTool(params)
      : client.callTool(params, undefined, options));
  } catch (error) {
    if (error instanceof ToolCallError || options?.signal?.aborted === true) throw error;
    throw new ToolCallError(name, describe(error), error);
  }
  return decode(name, result);
}

const NOT_TOOLS: ReadonlySet<string> = new Set([
  "then", // `await tools` and returning `tools` from an async function must not call a tool
  "toJSON",
  ...Object.getOwnPropertyNames(Object.prototype), // `String(tools)`, `tools.constructor`
]);

/** The generated `Tools`, implemented over `client`: `tools.name(args)` and
 * `tools["exact-name"](args)` send `tools/call` with that name and resolve to the decoded
 * result (see `callTool`). Type it with the generated map: `bind<Tools>(client)`. Tools
 * named `then`, `toJSON` or like a member of every object (`toString`, `constructor`, ...)
 * are reached through `callTool(client, name, args)` instead. `options` go to every call. */
export function bind<T extends object = UntypedTools>(client: ToolClient, options?: CallOptions): T {
  if (typeof fields(client)?.["callTool"] !== "function") {
    throw new TypeError(`bind: expected an MCP client (with callTool), got ${kind(client)}`);
  }
  const bound = new Map<string, (args?: unknown) => Promise<unknown>>();
  const target = Object.freeze({ [Symbol.toStringTag]: "BoundTools" });
  const handler: ProxyHandler<object> = {
    get(_target, key) {
      if (typeof key !== "string" || NOT_TOOLS.has(key)) return Reflect.get(target, key);
      let tool = bound.get(key);
      if (tool === undefined) {
        tool = (args?: unknown) => callTool(client, key, args, options);
        bound.set(key, tool);
      }
      return tool;
    },
    set: () => false,
    defineProperty: () => false,
    deleteProperty: () => false,
  };
  return new Proxy(target, handler) as T;
}
