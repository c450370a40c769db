"""The offline test kit: a fake Anthropic Messages API for running the real Claude Code CLI.

Shipped with the package so users can test their own workflows offline::

    from engine.testing import FakeModel, offline_env, prompt_contains, text, tool_use

    with FakeModel() as fm:
        fm.rule(tool_use("Bash", {"command": "ls"}), text("done"), when=prompt_contains("list"))
        env = offline_env(fm.base_url, config_dir)  # also set CLAUDE_CONFIG_DIR in this process
        async for message in query(prompt="list the files", options=ClaudeAgentOptions(env=env)):
            ...
        assert "README.md" in fm.last_request().shown

Rules are matched in order (fallbacks last); a rule's replies are turn-indexed by default: reply
``n`` answers the request with ``n`` assistant messages since the latest prompt, so concurrent
conversations (coordinator, subagents, a judge) each follow their own script and a retried
request gets the same reply (``engine.testing.rules``). In pytest, the ``fake_model`` fixture
(``engine.testing.pytest_plugin``) starts the server and applies the environment.

``PostgresServer`` (``engine.testing.postgres``) is a throwaway PostgreSQL for store tests; the
plugin's ``postgres_server`` (one per test process) and ``postgres_url`` (a fresh database per
test) fixtures give it to pytest.
"""

from engine.testing.conversation import assistant_turns, offered_tools, prompt_text, system_text, tool_results
from engine.testing.env import FAKE_API_KEY, offline_env
from engine.testing.errors import FakeModelError, PostgresServerError
from engine.testing.fake_model import FakeModel, estimate_tokens
from engine.testing.faults import (
    CutStream,
    Delay,
    Fault,
    Hold,
    HttpError,
    StreamError,
    cut_stream,
    delay,
    hold,
    http_error,
    overloaded,
    prompt_too_long,
    rate_limited,
    stream_error,
    unauthorized,
)
from engine.testing.postgres import PostgresServer
from engine.testing.match import (
    Match,
    all_of,
    any_of,
    compaction,
    has_tool_result,
    last_is_tool_result,
    last_user_contains,
    mentions,
    offers_tool,
    prompt_contains,
    system_contains,
    turn,
    where,
)
from engine.testing.recorded import RecordedRequest, shown
from engine.testing.replies import Reply, reply, text, tool_use
from engine.testing.roles import CLARIFIER, COORDINATOR, JUDGE, WORKER
from engine.testing.rules import Rule, Sequencing

__all__ = [
    # the server
    "FakeModel",
    "FakeModelError",
    "RecordedRequest",
    "Rule",
    "Sequencing",
    "estimate_tokens",
    # a throwaway PostgreSQL (unix socket only) for store tests
    "PostgresServer",
    "PostgresServerError",
    # environment
    "offline_env",
    "FAKE_API_KEY",
    # replies
    "Reply",
    "text",
    "tool_use",
    "reply",
    # matchers
    "Match",
    "system_contains",
    "prompt_contains",
    "last_user_contains",
    "mentions",
    "offers_tool",
    "has_tool_result",
    "last_is_tool_result",
    "turn",
    "where",
    "all_of",
    "any_of",
    "compaction",
    # faults
    "Fault",
    "HttpError",
    "CutStream",
    "StreamError",
    "Delay",
    "Hold",
    "overloaded",
    "rate_limited",
    "unauthorized",
    "prompt_too_long",
    "http_error",
    "cut_stream",
    "stream_error",
    "delay",
    "hold",
    # the engine's roles in a request
    "CLARIFIER",
    "JUDGE",
    "COORDINATOR",
    "WORKER",
    # reading requests
    "shown",
    "system_text",
    "prompt_text",
    "tool_results",
    "offered_tools",
    "assistant_turns",
]
