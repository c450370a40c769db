"""One sandboxed run as a standalone process, for the test that kills its host with SIGKILL.

Usage: python sandboxed_flow.py WORKSPACE HIDDEN  (the offline model's env comes from os.environ).
The run's one step calls the tools the test's fake model scripts; HIDDEN is fenced out.
"""

import asyncio
import sys

from engine import AgentSpec, Runtime, Sandbox

hands = AgentSpec(name="hands", instructions="", allowed_tools=["Bash"], permission_mode="acceptEdits",
                  workbench=False, max_turns=6)


async def main(workspace: str, hidden: str) -> None:
    rt = Runtime(workspace=workspace, run_dir=f"{workspace}/runs", sandbox=Sandbox(deny_read=(hidden,)))
    try:
        await rt.run(hands, "start the server")
    finally:
        rt.close()


if __name__ == "__main__":
    asyncio.run(main(sys.argv[1], sys.argv[2]))
