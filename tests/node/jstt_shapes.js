// The shape json-schema-to-typescript (JSTT) gives each schema's top-level type, for the
// differential test in tests/render/test_typescript_sdk.py.
//
// Reads a JSON list of schemas (objects) on stdin; prints a JSON list, one entry per schema:
//   {"object": bool, "properties": [[key, optional], ...], "index": bool} or {"error": "..."}.
// `object` says whether the top-level type is an interface or an object type literal (rather
// than a union or another alias); `index` whether it has an index signature.
// JSTT runs with `format: false` and no banner, its other options at their defaults. Its
// output is read back with the TypeScript parser rather than regular expressions, so quoted,
// escaped and Unicode keys come back exactly. One process handles every schema: Node and
// JSTT take far longer to start than to compile one schema.
"use strict";

const ts = require("typescript");
const { compile } = require("json-schema-to-typescript");

function propertyName(name) {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) {
    return name.text;
  }
  return name.getText();
}

// The caller's schema root is marked with this keyword; `customName` gives that node a fixed
// name, so the root is found even when JSTT first declares aliases named after titles.
const ROOT_MARK = "x-codegen-root";
const ROOT_NAME = "CodegenRoot";

function shape(source) {
  const file = ts.createSourceFile("out.ts", source, ts.ScriptTarget.Latest, true);
  const root = file.statements.find(
    (s) =>
      (ts.isInterfaceDeclaration(s) || ts.isTypeAliasDeclaration(s)) &&
      s.name.text === ROOT_NAME,
  );
  let members = null;
  if (root && ts.isInterfaceDeclaration(root)) {
    members = root.members;
  } else if (root && ts.isTypeLiteralNode(root.type)) {
    members = root.type.members;
  }
  if (!members) return { object: false, properties: [], index: false };
  return {
    object: true,
    properties: members
      .filter((m) => ts.isPropertySignature(m))
      .map((m) => [propertyName(m.name), Boolean(m.questionToken)]),
    index: members.some((m) => ts.isIndexSignatureDeclaration(m)),
  };
}

async function main() {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const schemas = JSON.parse(Buffer.concat(chunks).toString("utf8"));
  const results = [];
  for (const schema of schemas) {
    try {
      const marked = { ...schema, [ROOT_MARK]: true };
      const source = await compile(marked, ROOT_NAME, {
        customName: (node) => (node && node[ROOT_MARK] === true ? ROOT_NAME : undefined),
        format: false,
        bannerComment: "",
        $refOptions: { resolve: { external: false } },
      });
      results.push(shape(source));
    } catch (error) {
      results.push({ error: String(error && error.message ? error.message : error) });
    }
  }
  process.stdout.write(JSON.stringify(results) + "\n");
}

main().catch((error) => {
  process.stderr.write(String(error && error.stack ? error.stack : error) + "\n");
  process.exit(1);
});
