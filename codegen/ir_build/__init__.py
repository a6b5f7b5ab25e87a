"""Stage 4, build: normalized schemas to the frozen IR (`codegen.ir`).

`builder` holds the entry points and `walk` the walk, with its combinators (`combining`) and
shapes (`shaping`); one job per helper module beside them: `unions` (union algebra),
`merge` (`allOf` and keywords beside a union), `leaves` (the fast path for plain
primitives), `limits` (size limits and their measures), `refs` (`$ref` resolution),
`identity` (the walk's per-node memory), `name_hints` (the name a type takes from where it
sits) and `doc_keywords` (descriptions, defaults and notes read from a schema). Names are
made unique by `codegen.identifiers`, which the renderers share.
"""
