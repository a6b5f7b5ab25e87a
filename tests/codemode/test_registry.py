"""The registry: modes per scope, restrictions, the reserved transport, the four views,
and system prompt assembly per mode."""

from __future__ import annotations

from typing import Any

import pytest

from codegen.codemode.presentation.languages import UnknownLanguageError
from codegen.codemode.presentation.prompt import PromptSection, RenderedSection
from codegen.codemode.registry import CodeModeError, ToolRegistry, ToolSpec
from codegen.codemode.run_code.definition import run_code_tool
from support.codemode_helpers import ScriptedRuntime, echo_tool, registry_with


def names(definitions: list[dict[str, Any]]) -> list[str]:
    return [d["name"] for d in definitions]


def test_configuration_is_checked() -> None:
    with pytest.raises(ValueError):
        ToolRegistry(mode="sometimes")  # type: ignore[arg-type]
    for bad in (0, -1, 1.5, True):
        with pytest.raises(ValueError):
            ToolRegistry(max_parallel_sub_calls=bad)  # type: ignore[arg-type]
    assert ToolRegistry().max_parallel_sub_calls == 10
    assert ToolRegistry().mode_for(None) == "native"


def test_run_code_is_reserved_everywhere() -> None:
    registry = ToolRegistry(mode="native")
    agent = registry.scope("agent")
    for scope in (None, agent):
        with pytest.raises(CodeModeError, match="reserved"):
            registry.register(ToolSpec("run_code", "mine"), scope)
    with pytest.raises(CodeModeError, match="reserved"):
        registry.restrict(agent, allow=["run_code"])
    with pytest.raises(CodeModeError, match="reserved"):
        registry.restrict(agent, deny=["run_code"])


def test_invalid_schemas_are_refused_at_registration() -> None:
    registry = ToolRegistry()
    with pytest.raises(CodeModeError, match="invalid input schema"):
        registry.register(ToolSpec("bad", "", {"type": "objekt"}))
    with pytest.raises(CodeModeError, match="invalid output schema"):
        registry.register(ToolSpec("bad", "", output_schema={"required": "x"}))


def test_views_per_mode() -> None:
    runtime = ScriptedRuntime()
    for mode, wire in (
        ("native", ["alpha", "echo"]),
        ("code", ["run_code"]),
        ("both", ["alpha", "echo", "run_code"]),
    ):
        registry = registry_with(mode, echo_tool(), echo_tool("alpha"), runtime=runtime)
        assert names(registry.wire_schemas()) == wire
        assert names(registry.sdk_schemas()) == ["alpha", "echo"]
        expected = ["alpha", "echo"] + ([] if mode == "native" else ["run_code"])
        assert names(registry.schemas()) == expected
        assert (registry.get("run_code") is None) == (mode == "native")
        assert registry.get("echo") is not None


def test_views_are_deep_copies_without_callbacks() -> None:
    registry = registry_with("native", echo_tool())
    first = registry.schemas()
    first[0]["inputSchema"]["properties"]["x"]["type"] = "string"
    assert registry.schemas()[0]["inputSchema"]["properties"]["x"]["type"] == "integer"
    assert set(first[0]) == {"name", "description", "inputSchema"}


def test_code_and_both_need_a_runtime_for_the_wire_and_the_prompt() -> None:
    for mode in ("code", "both"):
        registry = registry_with(mode, echo_tool())
        with pytest.raises(CodeModeError, match=f'mode "{mode}" requires a code runtime'):
            registry.wire_schemas()
        with pytest.raises(CodeModeError, match="requires a code runtime"):
            registry.assemble_prompt()
        # Offline harvesting still works, in the TypeScript flavor.
        harvested = registry.schemas()
        assert harvested[-1] == run_code_tool("typescript", checked=False)  # check="off"


def test_an_unknown_runtime_language_fails_loudly() -> None:
    registry = registry_with("code", echo_tool(), runtime=ScriptedRuntime(language="ruby"))
    for view in (registry.wire_schemas, registry.schemas, registry.assemble_prompt):
        with pytest.raises(UnknownLanguageError, match='known: "python", "typescript"'):
            view()


def test_the_run_code_flavor_follows_the_mounted_runtime() -> None:
    registry = registry_with("both", echo_tool(), runtime=ScriptedRuntime(language="python"))
    assert registry.wire_schemas()[-1] == run_code_tool("python", checked=False)
    registry.mount_runtime(ScriptedRuntime(language="typescript"))
    assert registry.wire_schemas()[-1] == run_code_tool("typescript", checked=False)


def test_modes_inherit_down_the_scope_chain_nearest_wins() -> None:
    registry = registry_with("native", echo_tool(), runtime=ScriptedRuntime())
    agent = registry.scope("agent")
    session = registry.scope("session", agent)
    sibling = registry.scope("sibling")
    registry.set_mode("code", agent)
    assert registry.mode_for(session) == "code"
    assert registry.mode_for(sibling) == "native"
    registry.set_mode("both", session)
    assert registry.mode_for(session) == "both" and registry.mode_for(agent) == "code"
    registry.set_mode(None, session)
    assert registry.mode_for(session) == "code"
    assert names(registry.wire_schemas(session)) == ["run_code"]
    assert names(registry.wire_schemas(sibling)) == ["echo"]
    with pytest.raises(ValueError):
        registry.set_mode(None)


def test_restrictions_and_scope_tools() -> None:
    registry = registry_with("native", echo_tool(), echo_tool("read"), echo_tool("write"))
    agent = registry.scope("agent")
    registry.restrict(agent, deny=["write"])
    session = registry.scope("session", agent)
    registry.register(echo_tool("local"), session)
    registry.restrict(session, allow=["echo"])
    assert names(registry.sdk_schemas(agent)) == ["echo", "read"]
    # A scope's own tools are exempt from its own restrictions.
    assert names(registry.sdk_schemas(session)) == ["echo", "local"]
    # The nearest definition shadows an inherited one.
    shadow = echo_tool("echo", description="Session echo.")
    registry.register(shadow, session)
    assert registry.get("echo", session) is shadow
    assert registry.get("echo", agent) is not shadow


def test_unregister() -> None:
    registry = ToolRegistry()
    remove = registry.register(echo_tool())
    assert registry.get("echo") is not None
    remove()
    assert registry.get("echo") is None
    with pytest.raises(CodeModeError, match="already registered"):
        registry.register(echo_tool())
        registry.register(echo_tool())


def guidance(registry: ToolRegistry) -> None:
    registry.add_section(PromptSection("intro", 10, "You are a careful assistant."))
    registry.add_section(
        PromptSection("tool:echo", 120, "Call echo directly to repeat text.", direct_call=True)
    )
    registry.add_section(
        PromptSection(
            "tool:structured_output", 130, "Answer in JSON when asked for structured output."
        )
    )


@pytest.mark.parametrize("mode", ["native", "code", "both"])
@pytest.mark.parametrize("language", ["python", "typescript"])
def test_prompt_sections_per_mode(mode: str, language: str, golden: Any) -> None:
    registry = registry_with(
        mode, echo_tool(), echo_tool("alpha"), runtime=ScriptedRuntime(language=language)
    )
    guidance(registry)
    ids = [s.id for s in registry.prompt.sections(registry.root)]
    expected = {
        "native": ["intro", "tool:echo", "tool:structured_output"],
        "code": ["intro", "tools:code-only", "tool:structured_output", "tools:sdk"],
        "both": ["intro", "tool:echo", "tool:structured_output", "tools:sdk"],
    }[mode]
    assert ids == expected
    text = registry.assemble_prompt()
    assert text == registry.assemble_prompt(), "byte-identical when nothing changed"
    assert text == golden("codemode", "md", f"prompt-{mode}-{language}")


def test_assemble_listeners_are_authoritative() -> None:
    registry = registry_with("code", echo_tool(), runtime=ScriptedRuntime())

    def drop_sdk(sections: list[RenderedSection], context: Any) -> list[RenderedSection]:
        return [s for s in sections if s.id != "tools:sdk"]

    registry.prompt.add_listener(drop_sdk)
    assert "Writing code for run_code" not in registry.assemble_prompt()


def test_a_scope_section_shadows_the_global_one() -> None:
    registry = registry_with("code", echo_tool(), runtime=ScriptedRuntime())
    agent = registry.scope("agent")
    registry.add_section(PromptSection("tools:sdk", 150, "custom sdk text"), agent)
    assert "custom sdk text" in registry.assemble_prompt(agent)
    assert "custom sdk text" not in registry.assemble_prompt()


def test_the_sdk_section_follows_the_scope() -> None:
    registry = registry_with("code", echo_tool(), echo_tool("secret"), runtime=ScriptedRuntime())
    agent = registry.scope("agent")
    registry.restrict(agent, deny=["secret"])
    assert "async def secret" in registry.assemble_prompt()
    assert "async def secret" not in registry.assemble_prompt(agent)
