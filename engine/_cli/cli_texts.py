"""Every text the ``flower`` command itself prints, once per language it speaks.

``ZH`` keeps the command's Chinese texts as they were, byte for byte; ``EN`` says the same in
plain English. Both tables have the same keys and the same ``{placeholders}`` (a unit test checks
it). ``say`` picks the table of the language in effect (``engine.lang.speaking``), the one the
run speaks. Names the engine owns (step names, verdict reasons, the question's text) are passed
in as placeholders and never written here.
"""

from __future__ import annotations

from engine.lang import current_language

# The help's end and the exit codes are English in both tables (the help always was).
_HELP_END = (
    "In a terminal, Ctrl-C once asks for a word for the coordinator; a second Ctrl-C exits, and\n"
    "the next flower in the folder continues. Language: --lang, else FLOWER_LANGUAGE, else the\n"
    "locale (zh_* is Chinese, anything else English)."
)
_EXIT_CODES = ("exit codes: 0 the goal was achieved, 1 the run ended without achieving it (or failed), "
               "2 bad usage, 130 interrupted (Ctrl-C twice)")

ZH: dict[str, str] = {
    # -- help (argparse) --
    "help": (
        "The flower command: the starter workflow in a terminal, continuing where it left off.\n\n"
        "    flower \"写个 md 转 html 的脚本\"     first time: confirm, set the goal, work\n"
        "    flower \"顺便支持代码块高亮\"         same folder again: one more sentence, same conversation\n"
        "    flower                              say nothing: continue (asks first when run in a terminal)\n"
        "    flower --new \"另一件事\"             archive brief, goal and lineage; start fresh\n"
        "    flower once \"prompt\" [--resume ID]  a single agent, no workflow and no lineage\n\n"
        + _HELP_END),
    "exit_codes": _EXIT_CODES,
    # -- before a run (engine._cli.command) --
    "wake_question": "接着上次? 直接回车 = 接着做;也可以说点新的;/new = 重开一件事(Ctrl-C 退出)",
    "new_question": "要做什么? 一句话就够,回车开始(Ctrl-C 退出)",
    "empty_ask": "要给一句诉求,例如 flower '帮我做一个 X'",
    "wake_eof": "\nflower: 没有输入(Ctrl-D),什么也没做。要接着做,直接回车;要说点新的,输入后回车。",
    "prompt_ctrl_c": "\nflower: 已取消(Ctrl-C),什么也没做;下次在这里运行 flower 还能接着做。",
    "once_needs_prompt": "flower once needs a prompt, e.g. flower once \"list the files\"",
    "gone": ("flower: the current folder no longer exists (deleted or moved while this shell was in it). "
             "cd into the workspace again (or pass -C <folder>) and run flower there."),
    # -- Ctrl-C during a run (engine._cli.command) --
    "interrupt_question": "\n已打断。想补充什么?回车 = 照原样继续;再按一次 Ctrl-C 退出",
    "hold_question": ("\n{step}正在进行,不打断它。想对干活的协调者说什么?它下一轮一开始就会收到;"
                      "回车 = 不说;再按一次 Ctrl-C 退出"),
    "this_step": "这一步",
    "nothing_said": "  (什么也没说,接着做)",
    "go_on": "继续",  # what the coordinator is told when Enter was pressed at the Ctrl-C prompt
    "exited": "\n已退出;下次在这里运行 flower 会接着做。",
    "wake_again": "\n<- 这一轮结束了,你的话还没交给干活的协调者;带着它再唤醒一次:{said}",
    "archived": "<- 上一件事已归档到 {path},这次从头开始",
    "archived_nothing": "<- 这里还没有上一件事可归档,从头开始",
    # -- words for the coordinator (engine._cli.words) --
    "sent": "  -> 交给干活的协调者:它在下一个消息边界停下,带着这句话接着做",
    "held": "  -> 记下了:{step}结束后,干活的协调者下一轮一开始就会收到这句话",
    "given": "  -> 交给干活的协调者:{said}",
    "restored": "<- 上次 Ctrl-C 后说的话还没交给干活的协调者,这次它一开始就会收到:{said}",
    "kept": "  ! 这些话还没交给干活的协调者,已记下,下次在这里运行 flower 会先交给它:{said}",
    "dropped": "  (上次没交出去的话不再交给协调者(--new 重开了一件事):{said})",
    # -- banners and event lines (engine._cli.view) --
    "wake_head": "<- 在 {where} 接上上次  ",
    "wake_confirmed": "需求已确认",
    "wake_checks": "目标 {n} 条",
    "wake_context": "{work}上下文 {size}",
    "wake_count": "第 {n} 次唤醒",
    "step_resumed": "  <- 接上次 · 第 {woke} 次唤醒",
    "retry": "  ! 模型暂时不可用,第 {attempt}/{max_attempts} 次失败,{delay}s 后接着同一会话重试",
    "offline": "  ! 连不上 {host}:{port},已等 {waited}s,继续等",
    "storm": "  ! 模型的 API 连续失败 {failures} 次({error}),每 {every}s 再试一次,一直等它回来",
    "storm_back": "  <- 模型的 API 又能用了,接着做",
    "handoff_near": "  ~ 上下文 {used}{due}",
    "handoff_due": ",接近交接线 {due_at}",
    "handoff_writing": "  ~ 上下文满了({used}),正在写交接文档",
    "handoff_done": "  ~ 交接完成{tag},新会话接手",
    "handoff_degraded": "(降级)",
    "handoff_path": ":{path}",
    "verdict": "  判定 #{round}: {state}  {reason}",
    "verdict_failed": "\n    - {check}",
    "state_achieved": "达成",
    "state_not_yet": "未达成",
    "state_unreachable": "无法达成",
    "state_unclear": "没有读出结论",
    "unverifiable": "  ! 目标里有 {count}/{total} 条在这个环境无法验证,见 {path}",
    "interrupted": "  <- 收到:{said}",
    "ask_cancelled": "  (这个问题撤回了:这一步被打断,带着你的话接着做)",
    # -- the live progress line (engine._cli.progress) --
    "progress": "  ~ {who} · {elapsed}",
    "progress_context": "上下文 {size}",
    "progress_cost": "${cost}",
    "progress_api": "在等模型的 API",
    # -- the last lines (engine._cli.view, engine._cli.cli_failure) --
    "done_achieved": "== 结束:达成 · ${cost}",
    "done_not_achieved": "== 结束:没有达成 · ${cost}",
    "why": "   原因:{reason}",
    "next": "   下一步:{next}",
    "rounds_ran_out": "判定者给的 {rounds} 轮用完了,目标还没达成",
    "rounds_ran_out_any": "判定者给的轮数用完了,目标还没达成",
    "failed_auth": "模型拒绝了 API key(401:{detail})",
    "failed_billing": "这个账号的额度用完了({detail})",
    "failed_forbidden": "这个 key 没有权限用这个模型或这个操作(403:{detail})",
    "failed_model": "模型名不对或者这个账号用不了它({detail})",
    "failed_cli": "找不到 Claude Code CLI({detail})",
    "failed_step": "{step} 这一步失败了:{detail}",
    "next_auth": ("在 shell 或工作区的 .env 里改好 ANTHROPIC_API_KEY(或 CLAUDE_CODE_OAUTH_TOKEN),"
                  "再运行 flower 接着做"),
    "next_billing": "给账号充值(或换一个有额度的 key),再运行 flower 接着做",
    "next_forbidden": "换一个有权限的 key(或让管理员开通),再运行 flower 接着做",
    "next_model": "检查 ANTHROPIC_MODEL(或去掉它用默认模型),再运行 flower 接着做",
    "next_cli": "重新安装 claude-agent-sdk(它带着 Claude Code CLI),再运行 flower 接着做",
    "next_rounds": ("运行 flower 再给它几轮(从停下的地方接着做,--rounds N 改轮数);"
                    "也可以 flower \"补充一句\" 说清楚,或 flower --new 重开一件事"),
    "next_aborted": "用 flower \"补充一句\" 把需求说清楚再试,或 flower --new 重开一件事",
    "next_retry": "运行 flower 从停下的地方接着做;要重开一件事用 flower --new",
}

EN: dict[str, str] = {
    "help": (
        "The flower command: the starter workflow in a terminal, continuing where it left off.\n\n"
        "    flower \"write a script that turns md into html\"   first time: confirm, set the goal, work\n"
        "    flower \"also highlight code blocks\"               same folder again: one more sentence\n"
        "    flower                                            say nothing: continue (asks first in a terminal)\n"
        "    flower --new \"something else\"                     archive brief, goal and lineage; start fresh\n"
        "    flower once \"prompt\" [--resume ID]                a single agent, no workflow and no lineage\n\n"
        + _HELP_END),
    "exit_codes": _EXIT_CODES,
    "wake_question": ("Continue where it left off? Enter = continue; or type something new; "
                      "/new = start something else (Ctrl-C quits)"),
    "new_question": "What should be done? One sentence is enough; Enter starts (Ctrl-C quits)",
    "empty_ask": "Give a request, for example: flower 'make me an X'",
    "wake_eof": ("\nflower: no input (Ctrl-D), nothing was done. To continue, press Enter; "
                 "to say something new, type it and press Enter."),
    "prompt_ctrl_c": "\nflower: cancelled (Ctrl-C), nothing was done; run flower here again to continue.",
    "once_needs_prompt": "flower once needs a prompt, e.g. flower once \"list the files\"",
    "gone": ("flower: the current folder no longer exists (deleted or moved while this shell was in it). "
             "cd into the workspace again (or pass -C <folder>) and run flower there."),
    "interrupt_question": "\nInterrupted. Anything to add? Enter = go on as before; Ctrl-C again quits",
    "hold_question": ("\n{step} is running; it is not interrupted. Anything for the coordinator doing "
                      "the work? It gets it as its next round starts; Enter = nothing; Ctrl-C again quits"),
    "this_step": "this step",
    "nothing_said": "  (nothing said, going on)",
    "go_on": "continue",
    "exited": "\nExited; run flower here again to continue.",
    "wake_again": ("\n<- This round ended before the coordinator got your words; "
                   "waking the run once more with them: {said}"),
    "archived": "<- The last run was archived to {path}; starting fresh",
    "archived_nothing": "<- Nothing here to archive yet; starting fresh",
    "sent": "  -> Given to the coordinator: it stops at the next message boundary and goes on with it",
    "held": "  -> Noted: when {step} ends, the coordinator gets this as its next round starts",
    "given": "  -> Given to the coordinator: {said}",
    "restored": "<- Words said after the last Ctrl-C never reached the coordinator; it gets them first now: {said}",
    "kept": "  ! These words have not reached the coordinator yet; kept, the next flower here gives them first: {said}",
    "dropped": "  (Words left from last time are no longer given to the coordinator (--new started over): {said})",
    "wake_head": "<- Continuing in {where}  ",
    "wake_confirmed": "request confirmed",
    "wake_checks": "goal with {n} checks",
    "wake_context": "{work} context {size}",
    "wake_count": "wake #{n}",
    "step_resumed": "  <- continued · wake #{woke}",
    "retry": ("  ! The model is unavailable for now: attempt {attempt}/{max_attempts} failed, "
              "retrying the same session in {delay}s"),
    "offline": "  ! Cannot reach {host}:{port}; waited {waited}s, still waiting",
    "storm": ("  ! The model's API failed {failures} times in a row ({error}); "
              "trying again every {every}s until it answers"),
    "storm_back": "  <- The model's API answers again; going on",
    "handoff_near": "  ~ context {used}{due}",
    "handoff_due": ", close to the handoff line at {due_at}",
    "handoff_writing": "  ~ The context is full ({used}); writing the handoff document",
    "handoff_done": "  ~ Handoff done{tag}; a new session takes over",
    "handoff_degraded": " (degraded)",
    "handoff_path": ": {path}",
    "verdict": "  verdict #{round}: {state}  {reason}",
    "verdict_failed": "\n    - {check}",
    "state_achieved": "goal achieved",
    "state_not_yet": "not yet",
    "state_unreachable": "cannot be achieved",
    "state_unclear": "no verdict could be read",
    "unverifiable": "  ! {count}/{total} checks of the goal cannot be verified here; see {path}",
    "interrupted": "  <- Got it: {said}",
    "ask_cancelled": "  (The question was withdrawn: the step was interrupted and goes on with your words)",
    "progress": "  ~ {who} · {elapsed}",
    "progress_context": "context {size}",
    "progress_cost": "${cost}",
    "progress_api": "waiting for the model's API",
    "done_achieved": "== Done: goal achieved · ${cost}",
    "done_not_achieved": "== Done: goal not achieved · ${cost}",
    "why": "   Why: {reason}",
    "next": "   Next: {next}",
    "rounds_ran_out": "the judge's {rounds} rounds ran out before the goal was achieved",
    "rounds_ran_out_any": "the judge's rounds ran out before the goal was achieved",
    "failed_auth": "the model refused the API key (401: {detail})",
    "failed_billing": "the account is out of credit ({detail})",
    "failed_forbidden": "the key may not use this model or action (403: {detail})",
    "failed_model": "the model name is wrong or this account cannot use it ({detail})",
    "failed_cli": "the Claude Code CLI was not found ({detail})",
    "failed_step": "the step {step} failed: {detail}",
    "next_auth": ("fix ANTHROPIC_API_KEY (or CLAUDE_CODE_OAUTH_TOKEN) in your shell or the workspace's .env, "
                  "then run flower again to continue"),
    "next_billing": "add credit to the account (or use a key that has some), then run flower again to continue",
    "next_forbidden": "use a key with access (or ask an admin to grant it), then run flower again to continue",
    "next_model": "check ANTHROPIC_MODEL (or unset it for the default model), then run flower again to continue",
    "next_cli": "reinstall claude-agent-sdk (it ships the Claude Code CLI), then run flower again to continue",
    "next_rounds": ("run flower again to give it more rounds (it continues where it stopped; --rounds N sets "
                    "how many), say more with flower \"one more sentence\", or start over with flower --new"),
    "next_aborted": "say more with flower \"one more sentence\" and try again, or start over with flower --new",
    "next_retry": "run flower again to continue where it stopped, or start over with flower --new",
}

TABLES: dict[str, dict[str, str]] = {"zh": ZH, "en": EN}


def say(key: str, **values: object) -> str:
    """The text ``key`` in the language in effect, with ``values`` filled in."""
    return TABLES[current_language()][key].format(**values)
