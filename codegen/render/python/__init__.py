"""The build-time Python SDK: `sdk` spells IR types and lays out each tool's chunk,
`protocol` the `Tools` protocol, `strings` escapes literals, comments and docstrings,
`black_layout` lays statements out as `black` leaves them (with `widths`, its table of
double-width characters)."""
