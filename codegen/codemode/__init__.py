"""Code Mode: the model gets one tool, `run_code`, and writes a program against the SDK.

This subpackage consumes the renderers; nothing in the generation pipeline imports it.
`languages` holds the two dispatch tables (SDK section renderers and `run_code` flavors),
`transport` the `run_code` tool definition.
"""
