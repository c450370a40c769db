"""The spec's minimal workflow as a standalone process, for kill and signal tests.

Usage: python seed_flow.py WORKSPACE RUN_DIR  (the offline model's env comes from os.environ).
Prints the final ctx's _woke and _sessions as JSON on stdout.
"""

import asyncio
import json
import sys

from engine import AgentSpec, Resilience, Runtime, Step, Workflow
from engine.host import install_signal_rescue

terse = AgentSpec(name="terse", instructions="回答极简。", allowed_tools=["Read", "Glob"], max_turns=4)


async def main(workspace: str, run_dir: str) -> None:
    install_signal_rescue()  # a host's choice, as the flower command makes it
    rt = Runtime(workspace=workspace, run_dir=run_dir, resilience=Resilience(base_delay=0.01))
    try:
        ctx = await Workflow([Step("取词", terse, "读 seed.txt,只回文件里那个词。")]).run(rt)
    finally:
        rt.close()
    print(json.dumps({"woke": ctx["_woke"], "sessions": ctx["_sessions"], "ok": ctx["_ok"]}))


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
