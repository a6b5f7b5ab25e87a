"""The config `codegen serve --print-config-example` prints: every key the reader
(`codegen.mcp.config`) accepts, each setting and limit at its default.

The tables here are plain data; `example_config` lays them out in the order of the reader's
own key tables, so a key the reader takes is in the example (a test loads it back).
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from typing import Any

from .config import HTTP_LIMIT_KEYS, LIMIT_KEYS, SERVER_KEYS, SETTING_KEYS, SETTINGS_KEY

SCHEMA = os.path.join(os.path.dirname(os.path.abspath(__file__)), "serve_config.schema.json")
"""The JSON Schema of the config that ships beside the reader (`serve --print-config-schema`)."""

SETTING_EXAMPLES: Mapping[str, Any] = {
    "mode": "code",
    "lang": "python",
    "sdk": "description",
    "http": None,
    "sandbox": "auto",
    "typescript": None,
    "http_token": None,
    "http_allowed_hosts": [],
    "http_allowed_origins": [],
    "description_budget": 2048,
    "result_tokens": 22000,
    "check_programs": "refuse",
    "policy": {"rules": [], "ask_unannotated": False},
    "ask_timeout": 120,
    "audit_log": None,
    "audit_arguments": False,
}
"""Each setting of the example but the limits, at its default; `null` where the default is
to leave it unset (stdio, not `http`; a token made per run; Node's own `typescript`; no audit
log; a policy of no rules: the defaults alone)."""
LIMIT_EXAMPLES: Mapping[str, Any] = {
    "timeout": 60,
    "cpu_seconds": 30,
    "memory": "1GiB",
    "output": "1MiB",
    "arguments": "1MiB",
    "processes": 64,
    "concurrent_runs": 8,
    "upstream_message": "16MiB",
}
"""Each `LIMIT_KEYS` limit at its default (a test compares them with `RuntimeLimits`)."""
HTTP_LIMIT_EXAMPLES: Mapping[str, Any] = {
    "header_timeout": 10,
    "idle_timeout": 30,
    "body_timeout": 30,
    "body": "4MiB",
    "connections": 256,
}
"""Each `HTTP_LIMIT_KEYS` limit at its default (a test compares them with `HttpLimits`;
`connections` is the default's upper bound: less when the open-file limit is low)."""
SERVER_EXAMPLES: Mapping[str, Mapping[str, Any]] = {
    "everything": {
        "type": "stdio",
        "command": "npx",
        "args": ["-y", "@modelcontextprotocol/server-everything"],
        "env": {"NODE_OPTIONS": "--max-old-space-size=512"},
        "cwd": "${HOME:-/}",
        "deny": ["get-env"],
    },
    "time": {
        "command": "uvx",
        "args": ["mcp-server-time", "--local-timezone", "${TZ:-UTC}"],
        "concurrency_safe": {"convert_time": True},
        "description": "Current time, and times converted between time zones.",
    },
    "remote": {
        "type": "http",
        "url": "https://mcp.example.com/mcp",
        "headers": {"Authorization": "Bearer ${REMOTE_TOKEN}"},
        "allow": ["search"],
        "disabled": True,
    },
}
"""The example's servers: between them, every `SERVER_KEYS` key (a test checks)."""


def example_config() -> dict[str, Any]:
    """What `--print-config-example` prints: every key the reader accepts, laid out from
    its key tables (`SETTING_KEYS`, `LIMIT_KEYS`, `HTTP_LIMIT_KEYS`, `SERVER_KEYS`), so a
    key added there and not here fails the test that loads the example back."""

    limits = {"limits": LIMIT_EXAMPLES, "http_limits": HTTP_LIMIT_EXAMPLES}
    tables = {"limits": LIMIT_KEYS, "http_limits": HTTP_LIMIT_KEYS}
    settings = {
        key: (
            {name: limits[key][name] for name in tables[key]}
            if key in tables
            else SETTING_EXAMPLES[key]
        )
        for key in SETTING_KEYS
    }
    servers = {
        name: {key: entry[key] for key in SERVER_KEYS if key in entry}
        for name, entry in SERVER_EXAMPLES.items()
    }
    return {SETTINGS_KEY: settings, "mcpServers": servers}


def example_text() -> str:
    return json.dumps(example_config(), indent=2) + "\n"
