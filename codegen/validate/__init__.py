"""Stage 2, validate: unique names and each schema against its draft's meta-schema
(`checks`), answered for valid schemas by a check compiled from the meta-schema documents
(`meta_schema`), with `jsonschema` reporting the problems of the others."""
