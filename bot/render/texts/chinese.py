"""Every sentence the bot says in Slack, in Simplified Chinese: the names, shapes and fields of ``en.py``.

Written as a Chinese engineering team writes in Slack: full-width punctuation, English kept for
code, settings, commands and the tools' own names (worktree, diff, PR, API key). Mrkdwn marks and
code spans stand apart from Chinese characters by a space, since Slack only reads ``*bold*``,
``_italic_`` and backticks at a word boundary. A pair ``(one, other)`` stays a pair, both the same.
"""

from __future__ import annotations

from bot.core.outside_text import Sentence
from bot.render.texts.chinese_forge import *  # noqa: F403 (the forge's sentences are this table's too)

# -- Who and where, inside other sentences ---------------------------------------------------

SOMEONE = "某人"
WORKSPACE = "工作区：`{path}`"
EMPTY = "（空）"

# -- The first reply to a request, and a run's last word -------------------------------------

STARTED = "🌱 *已开始。* 有不清楚的地方我会在这里问；进度见下方的状态。"
UNFENCED = ("⚠️ 这个机器人关闭了沙箱（`FLOWER_SANDBOX=off`）：本次运行的命令能读写机器人所在用户能访问的一切，"
            "包括其他线程和机器人自己的文件。")
QUEUED = "🕒 *排队中* —— 第 {position} 位。有任务结束后就开始；状态会显示在这里。"
SUMMARY_ACHIEVED = "🌸 *完成：目标已达成。*"
SUMMARY_NOT_ACHIEVED = "❌ *已结束，目标未达成。*"
ROUNDS = ("{n} 轮", "{n} 轮")
COST_BOTH = "本次请求 {request} · 整个线程 {thread}"
SUMMARY_DONE_HEAD = "*做了什么*"
SUMMARY_CHECKS = ("{mark} *{total} 项检查通过了 {passed} 项*", "{mark} *{total} 项检查通过了 {passed} 项*")
SUMMARY_CHECKLIST_LINK = " · <{link}|检查清单>"
SUMMARY_FILES = "📎 已发到这个线程：{names}"
SUMMARY_HEARD = "💬 你说了“{said}”{when}：{effect}。"
HEARD_WHEN = "（第 {round} 轮）"
HEARD_ROUNDS = ("之后的 {n} 轮都照此进行", "之后的 {n} 轮都照此进行")
HEARD_BEFORE_WORK = "目标按它设定"
SUMMARY_JUDGE_SAID = "_评审：_ "
SUMMARY_LEFT_HEAD = "*还剩什么*"
SUMMARY_BRANCH = "分支 `{branch}`"
CHECK_LINE = "{mark} {n}. {text}{note}"
CHECK_MARK = {"passed": "✅", "failing": "❌", "pending": "⬜", "unverifiable": "⚠️"}
CHECK_NOTE = {"passed": "", "failing": "", "pending": " _（未评判）_", "unverifiable": " _（这里无法验证）_"}
ARCHIVED_NEW = ":recycle: 已归档上一次运行。"
RESTART_OPEN_QUESTION = " 上面的问题还没关闭，仍然可以回答： _{question}_"

# -- How a run ended or waits, said in its thread (bot.runs) ----------------------------------

RUN_QUEUED_BEHIND = ":hourglass: 排队中：前面还有 {place} 个运行。轮到时会自动开始。"
RUN_RESTARTED_CONFIRMING = ":arrows_counterclockwise: 机器人重启了；重新确认需求。"
RUN_RESTARTED_GOING_ON = ":arrows_counterclockwise: 机器人重启了。"
RUN_STOPPED = ":black_square_for_stop: 已停止。在这里回复即可继续，或用 `/new` 重新开始。"
RUN_FAILED = Sentence(":x: 运行失败：{reason}")
RUN_REPO_FAILED = Sentence(":x: 无法准备这个线程的仓库：{reason}")
ROUNDS_RAN_OUT = "评审轮数用完了"
FAILED_AUTH = ("模型拒绝了 API key（401：{detail}）。请在机器人的配置里修正 `ANTHROPIC_API_KEY`（或 "
               "`CLAUDE_CODE_OAUTH_TOKEN`）并重启，然后在这里回复即可继续。")
FAILED_FORBIDDEN = "模型拒绝访问（403：{detail}）：这个 key 可能无权使用该模型或组织。检查 key 的权限后，在这里回复即可继续。"
FAILED_BILLING = "模型账户没有余额了（{detail}）。充值或更换 `ANTHROPIC_API_KEY` 后，在这里回复即可继续。"
FAILED_MODEL = ("模型名称无法识别（{detail}）。请在机器人的配置里修正 `ANTHROPIC_MODEL`（或该角色的模型）"
                "并重启，然后在这里回复即可继续。")
FAILED_CLI = ("Claude Code 无法启动（{detail}）。请在机器人所在的机器上重新安装 "
              "（`pip install --force-reinstall claude-agent-sdk`），然后在这里回复即可继续。")
FAILED_STEP = "步骤 {step} 失败：{detail}"

# -- The status message of a run, edited in place --------------------------------------------

STATUS_STATE = {
    "idle": "💤 空闲", "queued": "🕒 排队中", "running": "⏳ 运行中", "waiting": "💬 等待回答",
    "waiting_api": "⏳ 等待模型 API",
    "done": "✅ 完成", "failed": "❌ 失败", "stopped": "⏹️ 已停止", "parked": "⏸️ 已暂停，等有人回答",
    "limited": "⏸️ 已暂停：到了花费上限",
}
STATUS_QUESTION_LINK = "（<{link}|去回答>）"
STATUS_REASON = "原因：{reason}"
STATUS_DOING = "*{doing}*"
HEARD = "💬 你的话已经传达给运行：“{said}”"
STATUS_LINE = "正在工作：{doing}…"
STATUS_STARTING = "启动中"
STATUS_ROUND = "第 {round} 轮"
DOING = {"clarify": "确认需求", "asking": "向你提问", "goal": "制定计划", "work": "动手实现",
         "judge": "检查成果"}
STOP_BUTTON = "停止"
TERMINAL_BUTTON = "在终端里继续"
TERMINAL = "要在终端里继续这个线程的运行，在 `{host}` 上执行：\n```cd {path} && flower```"
START_OVER_BUTTON = "重新开始"
STOP_CONFIRM = ("停止这次运行？", "已完成的工作会保留：在线程里回复即可继续。", "停止")
START_OVER_CONFIRM = ("重新开始？", "已完成的工作会被归档，这个线程从一个新请求重新开始。", "重新开始")
CONFIRM_DENY = "取消"

# -- A question, and how it closed -----------------------------------------------------------

QUESTION_HEAD = "❓ *问题*"
QUESTION_FROM = " 来自 _{who}_"
QUESTION_FALLBACK = "问题：{text}"
QUESTION_OPTION = "{n}. {option}"
REPLY_HINT = "也可以直接在这个线程里回复，用你自己的话回答"
ANSWER_LEAD = "✅ "
ANSWERED_BY = "{who} 已回答"
ANSWERED_FALLBACK = "问题：{text} —— 回答：{answer}"
CLOSED = "⏱️ {note}"
CLOSED_FALLBACK = "问题：{text} —— {outcome}"
NO_ANSWER_IN_TIME = "没有及时得到回答。"
CLOSED_STARTED_OVER = "已关闭：线程已重新开始。"

# -- A question's deadline: the note under it, and what happens when it passes ---------------

WAIT = "{n:g} {unit}"
WAIT_UNIT = {"hour": ("小时", "小时"), "minute": ("分钟", "分钟"), "second": ("秒", "秒")}
DEADLINE_DEFAULT = "如果 {wait}内没人回答，我就按 {default} 继续。"
DEADLINE_PARKS = "如果 {wait}内没人回答，运行会暂停，直到有人回答。"
WITHIN = " {wait}内"
WITHIN_TIME = "规定时间内"
MOVED_ON_CLOSED = "未回答就关闭了：运行已继续。"
MOVED_ON = "⏱️ 上面的问题未回答就关闭了：运行已继续。在这里回复可以调整方向。"
DEFAULT_TAKEN_CLOSED = "在{within}没有回答：按 {default} 继续。"
DEFAULT_TAKEN = "⏱️ 在{within}没有回答：按 *{default}* 继续。"
PARKED = ("⏸️ 已暂停：上面的问题在{within}没人回答，没有答案运行无法继续。回答它（点按钮，或在这个线程里回复），"
          "运行会从停下的地方接着走；用 `/new` 则重新开始。")

# -- Notes only one person sees: refusals, late clicks ---------------------------------------

REFUSED_USER = "抱歉 {who}，你不在这个机器人的允许用户名单里。请让运行它的人把你的成员 ID 加到 FLOWER_ALLOWED_USERS。"
REFUSED_CHANNEL = ("抱歉 {who}，我不在这个频道接收请求。请到允许的频道里提，或者请运行这个机器人的人"
                   "把这个频道的 ID 加到 FLOWER_ALLOWED_CHANNELS。")
ALREADY_ANSWERED = "这个问题已经由 {who} 回答了： *{answer}*"
QUESTION_CLOSED = "这个问题已关闭：运行不再等待回答。"

# -- The thread's answers to what was said (bot.inbound.intake) --------------------------------

EMPTY_MENTION = "用一句话告诉我要做什么，例如 `@flower 写一个把 md 转成 html 的脚本`。"
ASK_WHAT = ":recycle: 已归档上一次运行。接下来做什么？在这里用一句话回复。"

# -- Progress notices: wake banner, verdicts, handoffs, retries, offline ---------------------

WAKE_HEAD = "↩️ *从上次停下的地方继续* —— {facts}"
WAKE_CONFIRMED = "需求已确认"
WAKE_CHECKS = ("目标含 {n} 项检查", "目标含 {n} 项检查")
WAKE_REGOAL = "根据你说的重新设定目标"
WAKE_FOLLOW_UP = "第 {n} 次追加"
WAKE_PICKED_UP = "没有新的话：从停下的地方继续"
VERDICT_HEAD = {
    "achieved": "✅ *第 {round} 轮：目标已达成。*",
    "not_yet": "🔁 *第 {round} 轮：尚未达成。*",
    "unreachable": "⛔ *第 {round} 轮：评审认为目标在这里无法达成或无法验证。*",
}
VERDICT_UNCLEAR = "❔ *第 {round} 轮：没有明确结论，按尚未达成计。*"
FAILED_CHECKS = "未通过的检查："
CHOOSE_BELOW = "请在下方选择下一步。"
CONTEXT_NEAR = "🧠 会话的记忆快满了：满之前会换一个新会话接手。"
CONTEXT_FULL = "📝 会话的记忆满了：先记下工作进展，再换一个新会话接手。"
HANDOFF_DEGRADED = "🔄 已根据磁盘上的内容写好交接（会话没能自己写）；新会话接手。"
HANDOFF_DONE = "🔄 交接已写好；新会话接手。"
RETRY = "⚠️ 模型暂时不可用{why}，第 {attempt}/{max_attempts} 次尝试；{delay} 后用同一个会话重试。"
RETRY_WHY = "（{kind}）"
OFFLINE = "📡 连不上 {host}:{port} —— 已经等了 {waited}；恢复后运行会继续。"
STORM_WAITING = ("⏳ *等待模型 API* ：已连续失败 {failures} 次{why}。我会每隔 {every} 重试一次，"
                 "它恢复后自动继续。")
STORM_BACK = "✅ 模型 API 恢复了；继续。"
UNVERIFIABLE = "⚠️ 目标的 {count}/{total} 项检查在这里无法验证。"
UNVERIFIABLE_SEE = "见 `{path}`"

# -- Durations: two units at most ------------------------------------------------------------

DAYS = "{d}天{h:02d}小时"
HOURS = "{h}小时{m:02d}分"
MINUTES = "{m}分{s:02d}秒"
SECONDS = "{s}秒"

# -- 花费上限：暂停、提醒、``@flower /limit`` 与 ``@flower /policy``（bot.render.limit_notices） -----

LIMIT_WHAT = {"request": "这个请求", "thread": "这个线程", "channel": "这个频道本月", "user": "提出请求的人本月",
              "month": "flower 本月"}
LIMIT_REACHED = "⏸️ *已暂停：* {what}的花费到了上限 {limit}（已花 {spent}）。什么都没有丢。"
LIMIT_RAISE = "{who} 可以用 `@flower /limit {scope} <美元>` 提高上限；之后在这里回复即可继续。"
LIMIT_RAISE_ENV = ("没人能在 Slack 里提高它（`FLOWER_ADMINS` 为空）：运行 flower 的人可以调高 `{env}`；"
                   "之后在这里回复即可继续。")
GO_ON_BUTTON = "继续"  # under the pause: once the limit is raised
NEAR_LIMIT = "⚠️ {what}已经花了 {spent}，上限是 {limit}。"
LIMITS_HEAD = "*这里的花费上限*"
LIMIT_LINE = "• {what}：已花 {spent}，上限 {limit}"
NO_LIMIT = "没有上限"
LIMITS_HOW = "管理员用 `@flower /limit <request|thread|channel|user|month> <美元|off>` 修改。"
LIMIT_SET = ":white_check_mark: {who} 把这个频道里{what}的上限设为 {limit}。"
LIMIT_REMOVED = ":white_check_mark: {who} 去掉了这个频道自己的{what}上限：改用默认值（{limit}）。"
LIMIT_ADMINS_ONLY = "抱歉 {who}，只有管理员（FLOWER_ADMINS）能修改花费上限。"
LIMIT_BAD = "这个上限我设不了：{why}。请写 `@flower /limit <request|thread|channel|user|month> <美元|off>`。"
LIMIT_BAD_SCOPE = "没有 {scope!r} 这个范围"
LIMIT_OPERATORS_ONLY = ("抱歉 {who}，`{scope}` 上限计的是所有频道的花费：只有 flower 自己的管理员（`FLOWER_ADMINS`，"
                        "或策略文件 `[defaults]` 下的 `admins`）能提高或去掉它。它仍是 {limit}；频道的管理员只能在这里"
                        "把它调低（{limit} 或更低）。")
HOME_MINE = "*你的运行*"
HOME_NONE = "你还没有发起过运行：在频道里 @flower，用一句话说要做什么。"
HOME_RUN = "{state} · <{link}|{ask}> · {cost}"
HOME_RUN_PLAIN = "{state} · {ask} · {cost}"
HOME_MONTH = "*本月花费*"
HOME_BY_CHANNEL = "按频道"
HOME_BY_PERSON = "按人"
HOME_SPENT = "• {who}：{spent}{limit}"
HOME_OF_LIMIT = "，上限 {limit}"
HOME_NOTHING_SPENT = "本月还没有花费。"
POLICY_HEAD = "*这个频道当前生效的设置*"
POLICY_LINE = "• `{key}`：{value}"
POLICY_UNSET = "无"
POLICY_EVERYONE = "机器人放行的所有人"
POLICY_DEFAULT_MODEL = "Claude Code 的默认模型"
POLICY_AS_SET = "机器人的 FLOWER_AGENT_ENV"
POLICY_REFUSED = "⚠️ 策略文件最近一次修改被拒绝，生效的仍是上一版：{error}"
POLICY_ADMINS_ONLY = "抱歉 {who}，只有管理员（FLOWER_ADMINS，或频道的策略）能查看这些设置。"

# -- Long text cut for Slack -----------------------------------------------------------------

MORE_NOT_SHOWN = "_… 还有 {left:,} 个字符未显示。_"

# -- Words the bot could not record: bot.db or the workspaces folder refused (bot.inbound.gate) --

CANNOT_TAKE = ":warning: 我现在接不了这条：{why}。它没有被记录；请过一分钟再试（机器人的日志里有详情）。"
CANNOT_TAKE_WHY = {  # (where, fault) of bot.store.faults.StorageFault
    ("database", "busy"): "机器人的数据库正忙",
    ("database", "full"): "机器人数据库所在的磁盘满了",
    ("database", "read-only"): "机器人的数据库是只读的",
    ("database", "gone"): "机器人的数据库文件不见了，机器人正在重启",
    ("database", "broken"): "机器人的数据库无法写入",
    ("workspaces", "full"): "工作区文件夹所在的磁盘满了",
    ("workspaces", "read-only"): "工作区文件夹是只读的",
    ("files", "full"): "磁盘满了",
    ("files", "read-only"): "机器人要写入的某个文件夹是只读的",
}
CANNOT_TAKE_ANY = "机器人的存储无法写入"
# a command stopped by a link or FIFO a run made, which the bot does not follow (bot.render.failures)
REFUSED = {"archive": "⚠️ 我没能归档上一次运行：{reason}", "other": "⚠️ 我没能做这件事：{reason}"}
REFUSED_REASON = "这个线程的工作区里有一个文件{why}。请删掉它（`{entry}`），或者开一个新线程。"  # a run's too
REFUSED_REASON_UNNAMED = "这个线程的工作区里有东西{why}。请删掉它，或者开一个新线程。"
REFUSED_WHY = {"link": "是链接，我不跟随链接", "fifo": "是 FIFO（命名管道），我从不打开它",
               "other": "不是该在那里的东西（特殊文件，或占了文件夹位置的文件）",
               "slow": "读起来太久（也许是极大或极深的文件夹树）"}

# -- The goal's checklist message (bot.render.plan) ------------------------------------------

PLAN_TITLE = "目标的检查项（{n}）"
PLAN_TITLE_JUDGED = "目标的检查项：{passed}/{n} 通过"
PLAN_FIRST_SHOWN = "（只显示前 {shown} 项）"
PLAN_CHECK = "检查项 {n}"
PLAN_STATE = {"pending": "尚未评判", "passed": "通过", "failing": "未通过", "unverifiable": "这里无法验证"}
PLAN_STOPPED = "评判前已停止"

# -- Feedback buttons under the final message (bot.render.controls) --------------------------

FEEDBACK_LABEL = {"positive": "👍", "negative": "👎"}
FEEDBACK_SAY = {"positive": "结果不错", "negative": "结果不好"}
FEEDBACK_THANKS = "感谢反馈 {label}：已记录。"
FEEDBACK_CHANGED = "反馈已改为 {label}。谢谢告诉我们。"
FEEDBACK_NOT_RECORDED = "你的反馈没能记录下来（机器人的数据库拒绝了它）。请过一分钟再点一次。"

# -- 线程里分享的文件，以及运行留在发件箱里的文件（bot.outbound.files_in、files_out） -------------------------

FILES_NOT_OPENED = "📎 没有打开："
FILES_NOT_POSTED = "📎 发件箱里没有发出的文件："
FILE_LINE = "• `{name}` {reason}"
FILES_MORE = "• ……还有 {n:,} 个"
FILE_TOO_MANY = "超出了这条消息的前 {max} 个文件；flower 每条消息最多打开 {max} 个"
FILE_TOO_BIG = "有 {size}，上限是 {limit}（`FLOWER_FILE_MAX_MB`）"
FILE_GREW = "超过了 {limit} 的上限（`FLOWER_FILE_MAX_MB`），比它声称的大"
FILE_KIND = Sentence("是 flower 不打开的文件类型（{kind}）")
FILE_NOT_AS_SAID = "声称是{kind}，内容却不是"
FILE_KIND_NAMES = {"image": "图片", "pdf": "PDF", "archive": "压缩包", "text": "文本"}
FILE_PROGRAM = "是一个程序，flower 不打开程序"
FILE_NO_LINK = "在 Slack 上没有下载链接"
FILE_NO_INFO = Sentence("无法在 Slack 上查到（`files.info`：{error}）")
FILE_FOREIGN = Sentence("不在 Slack 的文件服务器上（{host}），flower 没有去取")
FILE_HTTP = "无法下载：Slack 返回了 HTTP {status}"
FILE_SCOPE_HINT = "（应用可能缺少 `files:read` 权限）"
FILE_SIGN_IN = "下载得到的是 Slack 的登录页，而不是文件（应用可能缺少 `files:read` 权限）"
FILE_UNREACHABLE = Sentence("无法下载：{error}")
FILE_NOT_SAVED = "无法保存：工作区的 `.flower/inbox` 是链接或不是文件夹"
FILE_SAVE_FAILED = Sentence("无法保存到工作区：{error}")
FILE_IS_LINK = "是一个链接；只发送普通文件"
FILE_IS_FOLDER = "是一个文件夹；只发送直接放在发件箱里的文件"
FILE_NOT_PLAIN = "不是普通文件"
FILE_HARD_LINKED = "还有其他硬链接，可能是别处的文件；请改放一份副本"
FILE_HIDDEN = "是隐藏文件（名字以点开头）"
FILE_EMPTY = "是空文件"
FILE_TOO_MANY_OUT = "超出了前 {max} 个文件；下次再发"
FILE_PAST_LOOKED = "超出了发件箱的前 {max} 个文件，flower 不会打开更多，所以没有发送（请把已经发过的文件移出发件箱）"
FILE_OUTBOX_UNSAFE = "是链接或不是文件夹，所以里面的文件都没有发送"
FILE_UPLOAD_FAILED = Sentence("无法上传：{error}")
FILE_UNREADABLE = Sentence("无法读取：{error}")
