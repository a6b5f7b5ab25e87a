// The TypeScript program checker: one Node process kept warm for one declarations text.
//
// Started by `checkers.typescript_server` as `node FLAGS <this file> KIND PACKAGE [TSC]`, where
// KIND is `script` (a TypeScript 5 or 6 package: its compiler API, in this process) or
// `native` (TypeScript 7: its `tsc --api`, a child of this process, through the package's
// own client). It speaks JSON-RPC with LSP's `Content-Length` framing on stdin and stdout,
// one request at a time:
//
// - `initialize` {declarations}: the checkable declarations (`typescript_declarations.py`)
//   are parsed once; the answer names the compiler.
// - `check` {program}: the program, wrapped as the worker runs it (the body of an async
//   function, line 1 its first), is checked against them; only the program's file is
//   parsed and checked again. The answer is its diagnostics, each classified from the
//   syntax tree: what it is about (an unknown tool, an unknown or missing argument, a wrong
//   type, a value outside the allowed ones, a wrong arity, or something else) and whether
//   it is certain, which needs a call of a tool `tools` declares, written out in the
//   program: the argument, or the part of it the checker points at, is a literal reached
//   through object and array literals only. Anything computed, spread or found at run time
//   is never certain.
//
// It reads no file but the compiler's own and writes none; the host contains it.
(() => {
  "use strict";

  const fs = require("node:fs");
  const path = require("node:path");
  const { pathToFileURL } = require("node:url");

  const [kind, packageDir, tsc] = process.argv.slice(2);

  const ROOT = "/codegen-check";
  const DECLARATIONS = `${ROOT}/declarations.d.ts`;
  const PROGRAM = `${ROOT}/program.ts`;
  const CONFIG = `${ROOT}/tsconfig.json`;
  const TOOLS_TYPE = "CodegenTools"; // `typescript_declarations.TOOLS_TYPE`
  // `native_emit.PROGRAM_HEAD` without the parameters: `tools` is the declared global
  const HEAD = '(async function () {"use strict";\n';
  const TAIL = "\n})";

  // Strict (null checks: `null` for a string is a mistake) but not about what a model leaves
  // untyped: an untyped helper's parameter is `any`, a caught error too.
  const SETTINGS = {
    strict: true,
    noImplicitAny: false,
    noImplicitThis: false,
    useUnknownInCatchVariables: false,
    noEmit: true,
    skipLibCheck: true,
    types: [],
  };

  // --- the two compilers -------------------------------------------------------------------

  // TypeScript 5 or 6 in this process. A program is made per check from the source files of
  // the last one (the declarations and the libraries are parsed once).
  function scriptCompiler() {
    const ts = require(path.join(packageDir, "lib", "typescript.js"));
    const libraries = path.join(packageDir, "lib");
    const options = {
      ...SETTINGS,
      target: ts.ScriptTarget.ES2022,
      lib: ["lib.esnext.d.ts"],
      noResolve: true,
    };
    const parsed = new Map();
    let declarations = "";
    let program = "";
    let previous;

    function library(name) {
      if (path.dirname(name) !== libraries || !/^lib\.[\w.]+\.d\.ts$/.test(path.basename(name))) {
        return undefined;
      }
      try {
        return fs.readFileSync(name, "utf8");
      } catch {
        return undefined;
      }
    }
    function text(name) {
      if (name === PROGRAM) return program;
      if (name === DECLARATIONS) return declarations;
      return library(name);
    }
    const host = {
      getSourceFile(name, version) {
        if (name === PROGRAM) {
          return ts.createSourceFile(name, program, version, true, ts.ScriptKind.TS);
        }
        let file = parsed.get(name);
        if (file === undefined) {
          const found = text(name);
          if (found === undefined) return undefined;
          file = ts.createSourceFile(name, found, version, false, ts.ScriptKind.TS);
          parsed.set(name, file);
        }
        return file;
      },
      getDefaultLibFileName: (settings) => path.join(libraries, ts.getDefaultLibFileName(settings)),
      getDefaultLibLocation: () => libraries,
      writeFile: () => {},
      getCurrentDirectory: () => ROOT,
      getCanonicalFileName: (name) => name,
      useCaseSensitiveFileNames: () => true,
      getNewLine: () => "\n",
      fileExists: (name) => text(name) !== undefined,
      readFile: (name) => text(name),
      directoryExists: (name) => name === ROOT || name === libraries,
      getDirectories: () => [],
    };
    function diagnostics(made, file) {
      const syntax = made.getSyntacticDiagnostics(file);
      const found = syntax.length ? syntax : made.getSemanticDiagnostics(file);
      return found.map((item) => ({
        start: item.start,
        code: item.code,
        text: ts.flattenDiagnosticMessageText(item.messageText, "\n"),
      }));
    }
    return {
      version: ts.version,
      SyntaxKind: ts.SyntaxKind,
      children: (node, visit) => ts.forEachChild(node, visit),
      load(text) {
        declarations = text;
        parsed.clear();
        program = "";
        previous = ts.createProgram([DECLARATIONS, PROGRAM], options, host);
        const file = previous.getSourceFile(DECLARATIONS);
        return { file, problems: diagnostics(previous, file) };
      },
      check(text) {
        program = text;
        previous = ts.createProgram([DECLARATIONS, PROGRAM], options, host, previous);
        const file = previous.getSourceFile(PROGRAM);
        return { file, diagnostics: diagnostics(previous, file) };
      },
    };
  }

  // TypeScript 7: `tsc --api` keeps the project (the declarations parsed once); each check is
  // a new snapshot in which only the program's file changed. The files are this process's,
  // given to the compiler through the client's file-system callbacks; the libraries are the
  // compiler's own, beside it.
  async function nativeCompiler() {
    const api = await import(
      pathToFileURL(path.join(packageDir, "dist", "api", "sync", "api.js")).href
    );
    const ast = await import(pathToFileURL(path.join(packageDir, "dist", "ast", "index.js")).href);
    const files = new Map();
    files.set(
      CONFIG,
      JSON.stringify({
        compilerOptions: { ...SETTINGS, target: "es2022", lib: ["esnext"], noResolve: true },
        files: ["declarations.d.ts", "program.ts"],
      }),
    );
    // The compiler reads nothing of the file system but its libraries: a
    // `/// <reference path>` in a program names a file that is not there.
    const libraries = path.dirname(tsc);
    const real = (name) => name === libraries || name.startsWith(`${libraries}/`);
    const nothing = { files: [], directories: [] };
    const client = new api.API({
      tsserverPath: tsc,
      cwd: ROOT,
      fs: {
        readFile: (name) => (files.has(name) ? files.get(name) : real(name) ? undefined : null),
        fileExists: (name) => (files.has(name) ? true : real(name) ? undefined : false),
        directoryExists: (name) => (name === ROOT ? true : real(name) ? undefined : false),
        getAccessibleEntries: (name) =>
          name === ROOT
            ? { files: [...files.keys()].map((file) => path.basename(file)), directories: [] }
            : real(name)
              ? undefined
              : nothing,
        realpath: (name) => (real(name) ? undefined : name),
      },
    });
    let snapshot;
    function replace(next) {
      if (snapshot !== undefined) snapshot.dispose();
      snapshot = next;
      return snapshot.getProjects()[0];
    }
    function diagnostics(project, name) {
      const syntax = project.program.getSyntacticDiagnostics(name);
      const found = syntax.length ? syntax : project.program.getSemanticDiagnostics(name);
      return found.map((item) => ({ start: item.pos, code: item.code, text: String(item.text) }));
    }
    return {
      version: JSON.parse(fs.readFileSync(path.join(packageDir, "package.json"), "utf8")).version,
      SyntaxKind: ast.SyntaxKind,
      children: (node, visit) => node.forEachChild(visit),
      load(text) {
        files.set(DECLARATIONS, text);
        files.set(PROGRAM, "");
        const project = replace(client.updateSnapshot({ openProjects: [CONFIG] }));
        return {
          file: project.program.getSourceFile(DECLARATIONS),
          problems: diagnostics(project, DECLARATIONS),
        };
      },
      check(text) {
        files.set(PROGRAM, text);
        const project = replace(client.updateSnapshot({ fileChanges: { changed: [PROGRAM] } }));
        return {
          file: project.program.getSourceFile(PROGRAM),
          diagnostics: diagnostics(project, PROGRAM),
        };
      },
    };
  }

  // --- the syntax tree ---------------------------------------------------------------------

  let compiler = null;
  let K = null; // the compiler's SyntaxKind
  let toolNames = new Set();
  const needs = new Map(); // tool name -> whether `{}` leaves out a required argument

  function innermost(file, position) {
    let found = file;
    let deeper = true;
    while (deeper) {
      deeper = false;
      compiler.children(found, (child) => {
        if (child.getStart(file) <= position && position < child.end) {
          found = child;
          deeper = true;
          return true;
        }
        return undefined;
      });
    }
    return found;
  }

  function nameText(node) {
    if (!node) return null;
    if (node.kind === K.Identifier || node.kind === K.PrivateIdentifier) return node.text;
    if (node.kind === K.StringLiteral || node.kind === K.NoSubstitutionTemplateLiteral)
      return node.text;
    if (node.kind === K.NumericLiteral) return node.text;
    return null;
  }

  // The same node: TypeScript 7's client may give two objects for one node.
  function same(a, b) {
    return (
      a === b ||
      (Boolean(a) && Boolean(b) && a.kind === b.kind && a.pos === b.pos && a.end === b.end)
    );
  }

  function indexIn(list, node) {
    for (let index = 0; index < list.length; index++) if (same(list[index], node)) return index;
    return -1;
  }

  function unwrapped(node) {
    while (node && node.kind === K.ParenthesizedExpression) node = node.expression;
    return node;
  }

  // The tool names `tools` declares: the members of the tools interface.
  function declaredTools(file) {
    const names = new Set();
    for (const statement of file.statements) {
      if (statement.kind === K.InterfaceDeclaration && nameText(statement.name) === TOOLS_TYPE) {
        for (const member of statement.members) {
          const name = nameText(member.name);
          if (name !== null) names.add(name);
        }
      }
    }
    return names;
  }

  const DECLARING = () => [
    K.VariableDeclaration,
    K.Parameter,
    K.BindingElement,
    K.FunctionDeclaration,
    K.FunctionExpression,
    K.ClassDeclaration,
    K.ClassExpression,
    K.ImportClause,
    K.ImportSpecifier,
    K.NamespaceImport,
    K.ImportEqualsDeclaration,
    K.EnumDeclaration,
    K.ModuleDeclaration,
  ];

  // Whether the program gives the name `tools` a meaning of its own anywhere: then no `tools`
  // in it is known to be the declared one.
  function shadowsTools(file) {
    const declaring = new Set(DECLARING());
    let found = false;
    function visit(node) {
      if (found) return;
      if (
        node.kind === K.Identifier &&
        node.text === "tools" &&
        node.parent &&
        declaring.has(node.parent.kind) &&
        same(node.parent.name, node)
      ) {
        found = true;
        return;
      }
      compiler.children(node, visit);
    }
    visit(file);
    return found;
  }

  // `tools.name` or `tools["name"]` (the declared `tools`): the tool's name, else null.
  function toolAccessed(node, shadowed) {
    node = unwrapped(node);
    if (shadowed || !node) return null;
    if (node.kind === K.PropertyAccessExpression) {
      const object = unwrapped(node.expression);
      if (object.kind === K.Identifier && object.text === "tools") return nameText(node.name);
    }
    if (node.kind === K.ElementAccessExpression) {
      const object = unwrapped(node.expression);
      const key = unwrapped(node.argumentExpression);
      if (
        object.kind === K.Identifier &&
        object.text === "tools" &&
        key &&
        (key.kind === K.StringLiteral || key.kind === K.NoSubstitutionTemplateLiteral)
      ) {
        return key.text;
      }
    }
    return null;
  }

  // Where `node` sits in a call of a declared tool, reached from the call's first argument
  // through object literals, array literals and parentheses only: {call, tool, path,
  // overridable}, the path the keys and indexes from the argument down, `overridable` when
  // a spread after one of its keys may replace its value at run time. Null anywhere else.
  function literalSite(node, shadowed) {
    const path = [];
    let overridable = false;
    let here = node;
    for (;;) {
      const parent = here.parent;
      if (!parent) return null;
      if (parent.kind === K.ParenthesizedExpression) {
        here = parent;
        continue;
      }
      if (parent.kind === K.PropertyAssignment && same(parent.initializer, here)) {
        const key = nameText(parent.name);
        if (key === null) return null; // a computed key
        path.unshift(key);
        overridable = overridable || spreadAfter(parent);
        here = parent.parent; // the object literal
        continue;
      }
      if (parent.kind === K.ArrayLiteralExpression) {
        path.unshift(indexIn(parent.elements, here));
        here = parent;
        continue;
      }
      if (parent.kind === K.CallExpression && same(parent.arguments[0], here)) {
        const tool = toolAccessed(parent.expression, shadowed);
        if (tool === null || !toolNames.has(tool)) return null;
        return { call: parent, tool, path, overridable };
      }
      return null;
    }
  }

  function spreadAfter(member) {
    const members = member.parent.properties;
    const at = indexIn(members, member);
    for (let index = at + 1; index < members.length; index++) {
      if (members[index].kind === K.SpreadAssignment) return true;
    }
    return false;
  }

  // The value written out in full: a string, number, boolean or null literal, or an object
  // or array literal of such values (no spread, no computed key, no name, no call).
  function isLiteral(node) {
    node = unwrapped(node);
    if (!node) return false;
    switch (node.kind) {
      case K.StringLiteral:
      case K.NoSubstitutionTemplateLiteral:
      case K.NumericLiteral:
      case K.BigIntLiteral:
      case K.TrueKeyword:
      case K.FalseKeyword:
      case K.NullKeyword:
        return true;
      case K.PrefixUnaryExpression:
        return (
          (node.operator === K.MinusToken || node.operator === K.PlusToken) &&
          unwrapped(node.operand).kind === K.NumericLiteral
        );
      case K.ArrayLiteralExpression:
        return Array.prototype.every.call(node.elements, isLiteral);
      case K.ObjectLiteralExpression:
        return Array.prototype.every.call(
          node.properties,
          (item) =>
            item.kind === K.PropertyAssignment &&
            nameText(item.name) !== null &&
            isLiteral(item.initializer),
        );
      default:
        return false;
    }
  }

  // An object literal whose keys are all written out: what it lacks, it lacks for sure.
  function isClosedObject(node) {
    node = unwrapped(node);
    return (
      node.kind === K.ObjectLiteralExpression &&
      Array.prototype.every.call(
        node.properties,
        (item) =>
          (item.kind === K.PropertyAssignment ||
            item.kind === K.ShorthandPropertyAssignment ||
            item.kind === K.MethodDeclaration) &&
          nameText(item.name) !== null,
      )
    );
  }

  // The expression a diagnostic is about: the value of a property whose name it points at,
  // else the expression itself.
  function sourceOf(node) {
    const parent = node.parent;
    if (parent && parent.kind === K.PropertyAssignment && same(parent.name, node))
      return parent.initializer;
    return node;
  }

  function enclosing(node, kinds) {
    let here = node;
    while (here && !kinds.includes(here.kind)) here = here.parent;
    return here || null;
  }

  function written(node, file) {
    const text = node.getText(file);
    return text.length > 80 ? `${text.slice(0, 77)}...` : text;
  }

  // --- what a diagnostic is about ----------------------------------------------------------

  const MISSING =
    /Property '([^']+)' is missing in type|missing the following properties from type '[^']*': ([^.]+)/;
  const LITERAL_TARGET =
    /to type '((?:"(?:[^"\\]|\\.)*"|-?\d[\d.e+-]*|true|false|null)(?: \| (?:"(?:[^"\\]|\\.)*"|-?\d[\d.e+-]*|true|false|null|undefined))*)'/;

  const NO_KEY = /is not assignable to type 'never'\.$/;

  function missingNames(text) {
    const found = MISSING.exec(text);
    if (!found) return null;
    if (found[1] !== undefined) return [found[1]];
    return found[2]
      .split(/, | and /)
      .map((name) => name.trim())
      .filter((name) => name && !/^\d+ more$/.test(name));
  }

  function classify(item, file, shadowed) {
    const node = innermost(file, item.start);
    const said = { kind: "other", certain: false, tool: null, name: null, path: [], found: null };
    switch (item.code) {
      case 2339: // Property 'x' does not exist on type ...
      case 2551: {
        // ... Did you mean 'y'?
        const access = node.parent;
        if (
          access &&
          access.kind === K.PropertyAccessExpression &&
          same(access.name, node) &&
          !shadowed &&
          unwrapped(access.expression).kind === K.Identifier &&
          unwrapped(access.expression).text === "tools"
        ) {
          const call = access.parent;
          const called =
            call && call.kind === K.CallExpression && same(unwrapped(call.expression), access);
          return { ...said, kind: "unknown-tool", certain: Boolean(called), name: node.text };
        }
        return said;
      }
      case 2353: // Object literal may only specify known properties, and 'x' does not exist
      case 2561: {
        // ... Did you mean to write 'y'?
        const member = enclosing(node, [
          K.PropertyAssignment,
          K.ShorthandPropertyAssignment,
          K.MethodDeclaration,
        ]);
        if (!member || !member.parent || member.parent.kind !== K.ObjectLiteralExpression)
          return said;
        const site = literalSite(member.parent, shadowed);
        const name = nameText(member.name);
        if (!site) return { ...said, kind: "unknown-argument", name };
        // a key the tool's arguments do not declare is a mistake; one deeper down may be
        // taken by an object the declarations show as open or closed alike
        return {
          ...said,
          kind: "unknown-argument",
          certain: site.path.length === 0,
          tool: site.tool,
          name,
          path: site.path,
        };
      }
      case 2554: // Expected 1 arguments, but got N.
      case 2555: {
        const call = enclosing(node, [K.CallExpression]);
        if (!call) return said;
        const tool = toolAccessed(call.expression, shadowed);
        if (tool === null || !toolNames.has(tool)) return { ...said, kind: "arity" };
        const count = call.arguments.length;
        const spread = Array.prototype.some.call(
          call.arguments,
          (each) => each.kind === K.SpreadElement,
        );
        if (count > 1)
          return { ...said, kind: "arity", certain: !spread, tool, found: String(count) };
        // no argument: the worker passes `{}`, a mistake only when the tool needs one
        if (needs.get(tool) !== true) return null;
        return { ...said, kind: "missing-argument", certain: true, tool, name: null, found: "0" };
      }
      default:
        break;
    }
    if (![2322, 2345, 2741, 2739, 2740, 2820, 2559].includes(item.code)) return said;
    const source = sourceOf(node);
    const missing = missingNames(item.text);
    if (missing !== null) {
      // reported on the object that lacks the key, that object's keys must all be written
      // out; reported higher up (the chain of a whole argument), all of it
      const site = literalSite(source, shadowed);
      const direct = [2741, 2739, 2740].includes(item.code);
      const sure = site !== null && (direct ? isClosedObject(source) : isLiteral(source));
      return {
        ...said,
        kind: "missing-argument",
        certain: sure,
        tool: site && site.tool,
        name: missing.join(", "),
        path: site ? site.path : [],
      };
    }
    const site = literalSite(source, shadowed);
    if (NO_KEY.test(item.text) && node.parent && node.parent.kind === K.PropertyAssignment) {
      // `Record<string, never>`: arguments that take no key at all
      const path = site ? site.path.slice(0, -1) : [];
      const name = nameText(node.parent.name);
      return {
        ...said,
        kind: "unknown-argument",
        certain: site !== null && path.length === 0,
        tool: site && site.tool,
        name,
        path,
      };
    }
    const literal = site !== null && !site.overridable && isLiteral(source);
    const allowed = outsideAllowed(item.text, source);
    return {
      ...said,
      kind: allowed ? "not-allowed-value" : "wrong-type",
      certain: literal,
      tool: site && site.tool,
      path: site ? site.path : [],
      found: written(source, file),
    };
  }

  // A literal of a kind the target's literals have, which is none of them: a value outside an
  // enum or a const, rather than a value of the wrong type.
  function outsideAllowed(text, node) {
    const target = LITERAL_TARGET.exec(text);
    if (!target) return false;
    const kinds = new Set(target[1].split(" | ").map(literalKind));
    node = unwrapped(node);
    const own = {
      [K.StringLiteral]: "string",
      [K.NoSubstitutionTemplateLiteral]: "string",
      [K.NumericLiteral]: "number",
      [K.PrefixUnaryExpression]: "number",
      [K.TrueKeyword]: "boolean",
      [K.FalseKeyword]: "boolean",
    }[node.kind];
    return own !== undefined && kinds.has(own);
  }

  function literalKind(spelled) {
    if (spelled.startsWith('"')) return "string";
    if (spelled === "true" || spelled === "false") return "boolean";
    if (spelled === "null" || spelled === "undefined") return spelled;
    return "number";
  }

  // Calls of a declared tool with no argument, and `tools["name"]` naming no declared tool.
  function calls(file, shadowed) {
    const bare = [];
    const unknown = [];
    function visit(node) {
      if (node.kind === K.CallExpression && node.arguments.length === 0) {
        const tool = toolAccessed(node.expression, shadowed);
        if (tool !== null && toolNames.has(tool)) bare.push(tool);
      }
      if (node.kind === K.ElementAccessExpression) {
        const tool = toolAccessed(node, shadowed);
        if (tool !== null && !toolNames.has(tool)) {
          const call = node.parent;
          const called =
            call && call.kind === K.CallExpression && same(unwrapped(call.expression), node);
          unknown.push({ node: node.argumentExpression, tool, called: Boolean(called) });
        }
      }
      compiler.children(node, visit);
    }
    visit(file);
    return { bare, unknown };
  }

  // Whether each tool needs an argument `{}` leaves out: `tools["name"]({})` checked on its
  // own line, once per tool.
  function learnNeeds(tools) {
    const asked = [...new Set(tools)].filter((tool) => !needs.has(tool));
    if (!asked.length) return false;
    const lines = asked.map((tool) => `tools[${JSON.stringify(tool)}]({});`);
    const text = `${HEAD}${lines.join("\n")}${TAIL}`;
    const { file, diagnostics } = compiler.check(text);
    const starts = lineStarts(file.text);
    for (const tool of asked) needs.set(tool, false);
    for (const item of diagnostics) {
      const line = lineOf(starts, item.start) - 1; // line 0 is the head
      if (line >= 0 && line < asked.length && missingNames(item.text) !== null)
        needs.set(asked[line], true);
    }
    return true;
  }

  // --- positions ---------------------------------------------------------------------------

  function lineStarts(text) {
    const starts = [0];
    for (let at = text.indexOf("\n"); at !== -1; at = text.indexOf("\n", at + 1))
      starts.push(at + 1);
    return starts;
  }

  function lineOf(starts, position) {
    let low = 0;
    let high = starts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (starts[middle] <= position) low = middle;
      else high = middle - 1;
    }
    return low;
  }

  // 1-based line and column (in code points) of the program as written.
  function programPosition(text, starts, position, lines) {
    const line = lineOf(starts, position);
    const column = [...text.slice(starts[line], position)].length + 1;
    if (line < 1) return { line: 1, column: 0 }; // the head
    if (line > lines) return { line: lines, column: 0 }; // the tail
    return { line, column };
  }

  // --- requests ----------------------------------------------------------------------------

  async function initialize(params) {
    compiler = kind === "native" ? await nativeCompiler() : scriptCompiler();
    K = compiler.SyntaxKind;
    const { file, problems } = compiler.load(String(params.declarations));
    if (problems.length) {
      const first = problems[0];
      const line = lineOf(lineStarts(file.text), first.start) + 1;
      throw new Error(`the declarations do not parse (line ${line}: ${first.text})`);
    }
    toolNames = declaredTools(file);
    return { version: compiler.version, kind, tools: toolNames.size };
  }

  function check(params) {
    const program = String(params.program);
    const text = HEAD + program + TAIL;
    let { file, diagnostics } = compiler.check(text);
    const shadowed = shadowsTools(file);
    const { bare, unknown } = calls(file, shadowed);
    if (learnNeeds(bare)) ({ file, diagnostics } = compiler.check(text)); // the probe's tree is gone
    const starts = lineStarts(text);
    const lines = program.split("\n").length;
    const found = [];
    for (const item of diagnostics) {
      const about = classify(item, file, shadowed);
      if (about === null) continue; // no mistake where the worker runs it
      found.push({
        ...programPosition(text, starts, item.start, lines),
        code: item.code,
        message: item.text,
        ...about,
      });
    }
    for (const each of unknown) {
      found.push({
        ...programPosition(text, starts, each.node.getStart(file), lines),
        code: 0,
        message: `Property '${each.tool}' does not exist on type '${TOOLS_TYPE}'.`,
        kind: "unknown-tool",
        certain: each.called,
        tool: null,
        name: each.tool,
        path: [],
        found: null,
      });
    }
    found.sort((a, b) => a.line - b.line || a.column - b.column);
    return { diagnostics: found };
  }

  const METHODS = { initialize, check, shutdown: () => null };

  // --- the channel -------------------------------------------------------------------------

  function send(message) {
    const body = Buffer.from(JSON.stringify(message), "utf8");
    const data = Buffer.concat([
      Buffer.from(`Content-Length: ${body.length}\r\n\r\n`, "ascii"),
      body,
    ]);
    let offset = 0;
    while (offset < data.length) {
      try {
        offset += fs.writeSync(1, data, offset, data.length - offset);
      } catch (error) {
        if (error && error.code === "EAGAIN") continue;
        process.exit(0); // the host is gone
      }
    }
  }

  // What has arrived of the next message: its chunks, joined once it is whole (a
  // declarations text of megabytes comes in many).
  let chunks = [];
  let size = 0;
  let bodyStart = -1;
  let wanted = -1;
  let busy = Promise.resolve();

  function received(chunk) {
    chunks.push(chunk);
    size += chunk.length;
    for (;;) {
      if (wanted === -1) {
        const data = Buffer.concat(chunks);
        chunks = [data];
        const end = data.indexOf("\r\n\r\n");
        if (end === -1) {
          if (size > 8192) process.exit(2); // no header: not the host
          return;
        }
        const match = /content-length:\s*(\d+)/i.exec(data.subarray(0, end).toString("ascii"));
        if (!match) process.exit(2);
        bodyStart = end + 4;
        wanted = bodyStart + Number(match[1]);
      }
      if (size < wanted) return;
      const data = Buffer.concat(chunks);
      const body = data.subarray(bodyStart, wanted).toString("utf8");
      const rest = data.subarray(wanted);
      chunks = rest.length ? [rest] : [];
      size = rest.length;
      wanted = -1;
      busy = busy.then(() => answer(body));
    }
  }

  async function answer(body) {
    let message;
    try {
      message = JSON.parse(body);
    } catch {
      process.exit(2); // not the host
    }
    if (message.id === undefined) {
      if (message.method === "exit") process.exit(0);
      return;
    }
    const method = METHODS[message.method];
    try {
      if (!method) throw new Error(`no method ${message.method}`);
      send({ jsonrpc: "2.0", id: message.id, result: await method(message.params || {}) });
    } catch (error) {
      const text = error instanceof Error ? error.message : String(error);
      send({
        jsonrpc: "2.0",
        id: message.id,
        error: { code: -32000, message: text.slice(0, 2000) },
      });
    }
  }

  process.stdin.on("data", received);
  process.stdin.on("end", () => process.exit(0));
})();
