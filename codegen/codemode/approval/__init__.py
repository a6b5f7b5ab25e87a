"""The user's say over what programs do: MCP annotations read strictly (`hints.py`), the
policy's rules (`rules.py`) and the audit log (`audit.py`). The executor applies the
policy; a host's `ApprovalService` asks the user (serve asks through the MCP client)."""

from .audit import AuditLog, AuditLogError, AuditSettings
from .hints import ToolHints
from .rules import DEFAULT_POLICY, Policy, Rule, Verdict, parse_policy

__all__ = [
    "DEFAULT_POLICY",
    "AuditLog",
    "AuditLogError",
    "AuditSettings",
    "Policy",
    "Rule",
    "ToolHints",
    "Verdict",
    "parse_policy",
]
