"""Agent declarations: ``AgentSpec`` and its compilation into the SDK's ``ClaudeAgentOptions``.

Also the two context policies that travel with a spec or a runtime: ``CompactPolicy`` (the CLI's
own auto-compact switch) and ``HandoffPolicy`` (our replacement for it: write a handoff document
and continue in a new session), and ``default_window()`` which guesses the context window.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from claude_agent_sdk import ClaudeAgentOptions
from claude_agent_sdk.types import SessionStore

# The repository's plugin/ folder, beside engine/ (parents[2] of this file). A pip install may
# not ship it, so build_options checks is_dir() before using it.
PLUGIN_DIR = Path(__file__).resolve().parents[2] / "plugin"
# The largest line the SDK reads from the CLI. Its default (1 MiB) is less than one transcript
# frame of a prompt with a few images (measured: three photos, ~630 KB of base64 each once the CLI
# re-encodes them), and a frame over it ends the run; the Messages API takes 32 MB a request.
MAX_FRAME_BYTES = 64 * 1024 * 1024

CompactMode = Literal["auto", "off"]


@dataclass
class CompactPolicy:
    """The CLI's auto-compact switch, expressed as environment variables for the subprocess.

    The compact algorithm lives in the CLI binary and cannot be changed; only whether and when it
    fires can. ``mode="off"`` disables it (the engine's handoff takes over); ``window`` tells the
    CLI the context window to compute its threshold from.
    """

    mode: CompactMode = "auto"
    window: int | None = None

    def env(self) -> dict[str, str]:
        """The variables to add to the CLI's environment."""
        if self.mode not in ("auto", "off"):
            raise ValueError(f"CompactPolicy.mode must be 'auto' or 'off'; got {self.mode!r}.")
        out: dict[str, str] = {}
        if self.mode == "off":
            out["DISABLE_AUTO_COMPACT"] = "1"
        if self.window:
            out["CLAUDE_CODE_AUTO_COMPACT_WINDOW"] = str(int(self.window))
        return out


_MILLION_MARKERS = ("[1m]", "1m", "-1m", "1000k")


def default_window() -> int:
    """Guess the context window from ``ANTHROPIC_MODEL`` / ``ANTHROPIC_DEFAULT_OPUS_MODEL``.

    1M-context model names map to 1,000,000, others to 200,000; with no model named, the
    aggressive 1,000,000. Guessing high is not fatal: the API answers "prompt is too long", the
    runtime recognizes it and hands off at once (that generation's handoff is degraded).
    """
    names = [os.environ.get(v, "") for v in ("ANTHROPIC_MODEL", "ANTHROPIC_DEFAULT_OPUS_MODEL")]
    names = [n.lower() for n in names if n]
    if not names:
        return 1_000_000
    if any(marker in n for n in names for marker in _MILLION_MARKERS):
        return 1_000_000
    return 200_000


@dataclass
class HandoffPolicy:
    """When the context nearly fills, write a handoff document and continue in a new session.

    Not a compact: the document is readable and editable, so you see what was lost, and the
    context falls periodically instead of climbing to the wall.
    """

    enabled: bool = True
    window: int = field(default_factory=default_window)
    headroom: int = 50_000
    max_generations: int = 8

    @property
    def at(self) -> int:
        """Context size (tokens) at which the step hands off."""
        return max(10_000, self.window - self.headroom)

    @property
    def warn_at(self) -> int:
        """Context size at which the "near" event fires (once per generation)."""
        return max(1_000, self.at - 20_000)


@dataclass
class AgentSpec:
    """The complete declaration of one specialised agent; ``build_options`` compiles it.

    ``allowed_tools`` is the CLI's pre-approval list, not an exclusive whitelist: the runtime adds
    ``whitelist_guard`` to make it exclusive for the four hands-on tools. ``delegate_only`` makes
    the runtime install ``delegate_guard`` (the main thread may not touch Bash/Write/Edit);
    ``workbench`` injects the workbench index into the system prompt; ``glance`` lets a
    delegate-only main thread run ephemeral read-only commands itself.
    """

    name: str
    instructions: str
    allowed_tools: list[str] = field(default_factory=lambda: ["Read", "Glob", "Grep"])
    disallowed_tools: list[str] = field(default_factory=list)
    model: str | None = None
    effort: str | None = None
    max_turns: int | None = None
    max_budget_usd: float | None = None
    permission_mode: str = "default"
    agents: dict[str, Any] | None = None
    mcp_servers: dict[str, Any] = field(default_factory=dict)
    hooks: dict[str, Any] | None = None
    compact: CompactPolicy | None = None
    env: dict[str, str] = field(default_factory=dict)
    glance: bool = False
    workbench: bool = True
    delegate_only: bool = False


FlushMode = Literal["eager", "batched"]


def build_options(
    spec: AgentSpec,
    *,
    cwd: str | Path | None = None,
    session_store: SessionStore | None = None,
    resume: str | None = None,
    fork: bool = False,
    resume_at: str | None = None,
    use_plugin: bool = True,
    portable: bool = True,
    add_dirs: list[str] | None = None,
    flush: FlushMode = "eager",
    prelude: str = "",
) -> ClaudeAgentOptions:
    """Compile ``spec`` into ``ClaudeAgentOptions``; every field of the spec is mapped.

    ``portable`` hands ``session_store`` to the SDK, so transcripts are mirrored into it and a
    resume is materialised from it alone (the CLI's local transcript folder may be gone);
    without it the CLI's local files are used. ``flush`` is the SDK's ``session_store_flush``
    ("eager": entries reach the store as they happen, so a SIGKILL loses at most the last
    frame). ``prelude`` is prepended to the instructions in the system prompt. Guards are not
    added here: the runtime derives them from the spec (``Runtime`` docs).
    """
    if flush not in ("eager", "batched"):
        raise ValueError(f"build_options(flush=...) must be 'eager' or 'batched'; got {flush!r}.")
    append = "\n\n".join(part for part in (prelude.strip(), spec.instructions.strip()) if part)
    env = dict(spec.env)
    if spec.compact is not None:
        env.update(spec.compact.env())
    # The SDK ends a run 10 minutes after a result while background workers still report
    # "running"; a long job's workers legitimately run longer, so wait for them however long.
    env.setdefault("CLAUDE_CODE_PRINT_BG_WAIT_CEILING_MS", "0")
    plugins: list[Any] = []
    if use_plugin and PLUGIN_DIR.is_dir():
        plugins.append({"type": "local", "path": str(PLUGIN_DIR)})
    return ClaudeAgentOptions(
        system_prompt={"type": "preset", "preset": "claude_code", "append": append},
        allowed_tools=list(spec.allowed_tools),
        disallowed_tools=list(spec.disallowed_tools),
        model=spec.model,
        effort=spec.effort,  # type: ignore[arg-type]
        max_turns=spec.max_turns,
        max_budget_usd=spec.max_budget_usd,
        permission_mode=spec.permission_mode,  # type: ignore[arg-type]
        agents=dict(spec.agents) if spec.agents else None,
        mcp_servers=dict(spec.mcp_servers),
        hooks=dict(spec.hooks) if spec.hooks else None,
        env=env,
        cwd=str(cwd) if cwd is not None else None,
        session_store=session_store if portable else None,
        session_store_flush=flush,
        resume=resume,
        fork_session=fork,
        resume_session_at=resume_at,
        plugins=plugins,
        add_dirs=[str(d) for d in (add_dirs or [])],
        max_buffer_size=MAX_FRAME_BYTES,
    )
