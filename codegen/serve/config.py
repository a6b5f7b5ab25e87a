"""What `codegen serve` fronts and how: the upstream servers and the settings.

The reader lives in `codegen.mcp.config`, which `codegen harvest --config` shares, so a file
means the same to both commands; this module keeps its names where `serve` (and its users)
have always imported them.
"""

from __future__ import annotations

from ..mcp.config import (
    EXAMPLE,
    LIMIT_KEYS,
    MIN_BUDGET,
    MODES,
    SANDBOXES,
    SDK_PLACES,
    SERVER_KEYS,
    SETTING_KEYS,
    SETTINGS_KEY,
    TABLE_KEYS,
    TRANSPORT_TYPES,
    UPSTREAM_MESSAGE,
    ServeConfig,
    ServeSettings,
    Upstream,
    example_text,
    load_servers_file,
    load_table,
    parse_address,
    parse_limit,
    parse_limits,
    parse_servers,
    parse_settings,
    user_config,
)

__all__ = [
    "EXAMPLE",
    "LIMIT_KEYS",
    "MIN_BUDGET",
    "MODES",
    "SANDBOXES",
    "SDK_PLACES",
    "SERVER_KEYS",
    "SETTINGS_KEY",
    "SETTING_KEYS",
    "TABLE_KEYS",
    "TRANSPORT_TYPES",
    "UPSTREAM_MESSAGE",
    "ServeConfig",
    "ServeSettings",
    "Upstream",
    "example_text",
    "load_servers_file",
    "load_table",
    "parse_address",
    "parse_limit",
    "parse_limits",
    "parse_servers",
    "parse_settings",
    "user_config",
]
