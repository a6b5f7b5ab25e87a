// Type-check each declarations file on its own, as `tsc --noEmit --strict FILE` would, in one
// Node process, and list what each file declares as the TypeScript parser reads it.
//
// Usage: node check_isolated.js FILE...
// Prints {"FILE": {"diagnostics": ["FILE(line,col): TSxxxx: message", ...],
//                  "declarations": [{"kind": "interface" | "type" | "class" | "variable" | ...,
//                                    "name", "exported": bool,
//                                    "members": [[key, optional], ...], "index": bool}]}}
// (`members` and `index` for interfaces only).
//
// Why not one tsc program for all files: each file is checked alone, so none passes thanks
// to another (`tests/render/test_typescript_bind.py` checks several of them in one project). Why
// not one tsc process per file: each start-up costs about a second. Here every file gets its
// own program, so it is checked exactly as shipped against the default lib and nothing
// else, while the parsed and bound lib files are shared through the compiler host, which
// keeps each further check to a few tens of milliseconds.
// `types: []` keeps ambient @types packages in node_modules (lodash, ...) out, as a project
// that ships the file would.
"use strict";

const ts = require("typescript");

const options = { strict: true, noEmit: true, types: [] };
const host = ts.createCompilerHost(options, true);
const readSourceFile = host.getSourceFile.bind(host);
const libs = new Map();
const libDir = ts.getDirectoryPath(ts.getDefaultLibFilePath(options));
host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
  if (!fileName.startsWith(libDir)) {
    return readSourceFile(fileName, languageVersion, onError, shouldCreate);
  }
  if (!libs.has(fileName)) {
    libs.set(fileName, readSourceFile(fileName, languageVersion, onError, shouldCreate));
  }
  return libs.get(fileName);
};

function format(diagnostic) {
  const text = ts.flattenDiagnosticMessageText(diagnostic.messageText, "\n");
  if (!diagnostic.file) return `TS${diagnostic.code}: ${text}`;
  const { line, character } = diagnostic.file.getLineAndCharacterOfPosition(diagnostic.start);
  const where = `${diagnostic.file.fileName}(${line + 1},${character + 1})`;
  return `${where}: TS${diagnostic.code}: ${text}`;
}

function diagnostics(program, file, everything) {
  // The first program checks the lib files too, as tsc does; they are the same for every
  // file after it, so later programs check only their own file.
  const scope = everything ? undefined : file;
  return [
    ...program.getOptionsDiagnostics(),
    ...program.getGlobalDiagnostics(),
    ...program.getSyntacticDiagnostics(scope),
    ...program.getSemanticDiagnostics(scope),
  ].map(format);
}

function keyText(name) {
  if (ts.isIdentifier(name) || ts.isStringLiteral(name) || ts.isNumericLiteral(name)) {
    return name.text;
  }
  return name.getText();
}

function kindOf(statement) {
  if (ts.isInterfaceDeclaration(statement)) return "interface";
  if (ts.isTypeAliasDeclaration(statement)) return "type";
  if (ts.isClassDeclaration(statement)) return "class";
  if (ts.isVariableStatement(statement)) return "variable";
  return ts.SyntaxKind[statement.kind];
}

function isExported(statement) {
  const modifiers = ts.canHaveModifiers(statement) ? ts.getModifiers(statement) : undefined;
  return Boolean(modifiers && modifiers.some((m) => m.kind === ts.SyntaxKind.ExportKeyword));
}

function declaration(statement) {
  const kind = kindOf(statement);
  const exported = isExported(statement);
  if (ts.isVariableStatement(statement)) {
    const names = statement.declarationList.declarations.map((d) => d.name.getText());
    return { kind, name: names.join(","), exported };
  }
  const name = statement.name ? statement.name.text : "";
  if (!ts.isInterfaceDeclaration(statement)) return { kind, name, exported };
  return {
    kind,
    name,
    exported,
    members: statement.members
      .filter((m) => ts.isPropertySignature(m))
      .map((m) => [keyText(m.name), Boolean(m.questionToken)]),
    index: statement.members.some((m) => ts.isIndexSignatureDeclaration(m)),
  };
}

const result = {};
process.argv.slice(2).forEach((fileName, index) => {
  const program = ts.createProgram({ rootNames: [fileName], options, host });
  const file = program.getSourceFile(fileName);
  result[fileName] = file
    ? {
        diagnostics: diagnostics(program, file, index === 0),
        declarations: file.statements.map(declaration),
      }
    : { diagnostics: [`${fileName}: not found`], declarations: [] };
});
process.stdout.write(JSON.stringify(result) + "\n");
