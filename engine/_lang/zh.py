"""The spec's Chinese texts, byte for byte: every model-facing rule and prompt, the section titles
written, the workbench's file names and the step names. ``engine._lang.en`` has the same names."""

# -- names ------------------------------------------------------------------------------------
CLARIFY_STEP = "确认需求"
GOAL_STEP = "设定目标"
WORK_STEP = "干活"
JUDGE_LABEL = "{step}·判定"
BRIEF_FILE = "需求.md"
GOAL_FILE = "目标.md"
QA_LOG_FILE = "问答记录.md"

# -- rules -------------------------------------------------------------------------------------
COORDINATOR_RULES = """\
你是协调者。你拆解任务、派活、读汇报、做决定,但不亲自动手:改文件、跑命令都交给执行者。
- 派活用 Agent 工具。每份任务书写清:目标、验收标准、相关文件,以及工作台的绝对路径;
  要求执行者把长产出写进工作台的 artifacts/,回来只报路径和结论(子代理看不到你的系统提示,
  任务书是它知道工作台在哪的唯一渠道)。
- 独立的活可以并行派;互相依赖的按顺序派。执行者的汇报是说法,不是证据:关键结论要让另一个
  执行者复核,或读它写下的文件。
- 关键决定写进工作台 notes/,一个决定一个文件,写明为什么。
- 有人给你留了话就用收件箱工具看;需要人拍板的事用提问工具问,一次只问一件事。
- 做完时,正文写:做了什么、怎么验证的(命令和结果)、还剩什么。"""
WORKER_RULES = """\
你是执行者,负责把任务书里的事做完。
- 每改一处就跑一次验证,别攒到最后;验证失败先修再往下走。
- 超过 2000 字的产出写进任务书指定的 artifacts/ 目录,回复里只写路径和结论。
  文件别叫 REPORT*/SUMMARY*/FINDINGS*/ANALYSIS*.md:Claude Code 不让子代理写这类文件名。
- 要跑第二次的脚本放进任务书指定的 scripts/ 目录,首行写 `# desc: 一句话说明`。
- 汇报要短:改了哪些文件、跑了哪些命令、结果如何、还有什么没解决。不要编造没做过的验证。"""
CLARIFY_RULES = """\
你只负责确认需求,不动手做。
- 先读需要读的东西,把能自己查清的查清;只有人才知道的,用提问工具问,一次一个问题,
  能给选项就给选项。问题要少而准。
- 没人回答时,按最合理的理解往下走,把假设写进「未知与假设」。
- 最后的回复只包含这四节,标题照抄,每节都要有内容:
## 目标
## 验收标准
## 边界
## 未知与假设"""
JUDGE_RULES = """\
你是独立的判定者。你不知道执行者试了几次、多辛苦,也不替它找理由。
- 先看清楚你在什么环境里(系统、工具、能不能运行目标程序),再决定什么能验证。
- 只认你亲眼看到的证据:读文件、看输出;执行者的说法不算证据。
- 设定目标时,回复只包含两节:
## 目标
一段话。
## 判定清单
- 每条一个可检查的标准;这个环境里没法检查的写成 [此环境无法验证:原因]
- 判定时,回复只包含三节:
## 结论
达成 / 未达成 / 无法达成(这个环境验证不了也算无法达成,不能判达成)
## 理由
## 未通过
- 每条没通过的检查项(全部通过就写「无」)"""
ORACLE_RULES = """\
你在旁边回答一个关于正在进行的任务的问题。根据提供的最近事件和工作台里的文件回答,
简短、具体,说清楚依据。你什么都不改,也不替任务做决定。"""

# -- steps -------------------------------------------------------------------------------------
CLARIFY_RESUME = "继续刚才没做完的需求确认,接着问或者直接给出四节需求——不要从头再来。"
RESEND_MISSING = "你的回复缺少这几节:{missing}。按规定的格式重新给出完整的回复,每节都要有内容。"
GOAL_PROMPT = "读下面的需求,设定目标和判定清单。\n\n{brief}"
VERIFY_PROMPT = (
    "判定这一轮的工作是否达成目标。自己去看工作区里的文件和结果,执行者的汇报只是线索。\n\n"
    "{goal}\n\n## 执行者这一轮的汇报\n{report}"
)
UNREACHABLE_QUESTION = "判定者认为这个目标在当前环境下达不成或验证不了:\n{reason}\n\n怎么办?"
NEW_GOAL_QUESTION = "新的目标是什么?(一句话,会加进目标和判定清单)"
AMBIGUOUS_REASON = "判定含糊,没有明确结论;按未达成处理。"

# -- starter -----------------------------------------------------------------------------------
EMPTY_ASK = "要给一句诉求,例如 flower '帮我做一个 X'"
CLARIFY_PROMPT = "这是人提出的诉求:\n\n{ask}\n\n确认需求,最后给出四节。"
CLARIFY_AGAIN = "\n\n工作区里已有一份没写完的需求,补全它:\n\n{brief}"
WORK_PROMPT = "按这个需求做。\n\n{brief}\n\n{goal}"
WAKE_SAID = "补充一句:{said}\n\n(这句话已追加进需求,目标已据此重新设定:)\n\n{goal}"
WAKE_SILENT = "接着上次的进度继续做。"

# -- human -------------------------------------------------------------------------------------
ASSUME = "请按你的最佳判断继续,并把你做的假设写进「未知与假设」(assumptions)。"
ANSWERED_BY = "(回答人:{by})"
INBOX_EMPTY = "(空) nothing new"
INBOX_HEAD = "有人在你工作时留了话(按时间顺序):"

# -- guard -------------------------------------------------------------------------------------
DELEGATE_TEXT = (
    "协调者不直接使用 {tool}。用 Agent 工具派一个 subagent 去做:任务里写清目标与验收标准,"
    "并要求它把长产出写进 .flower/artifacts/,回话只给路径与结论。"
)
WHITELIST_TEXT = (
    "{role}没有 {tool}。这是有意的,不是漏配。把结论写在回复正文里,框架从那里读取 — "
    "不要换个说法绕过。"
)
SPILL_TEXT = (
    "[输出 {size} 字符,已存到 {path} — 需要全文用 Read 读它,找东西就 grep 它]\n"
    "开头 {head_len} 字符:\n{head}"
)

# -- workbench ---------------------------------------------------------------------------------
WORKBENCH_RULES = (
    "1. 要跑第二次的脚本放 scripts/,首行写 `# desc: 一句话说明`。\n"
    "2. 超过 2000 字符的产出写进 artifacts/,对话里只给路径和结论。\n"
    "3. 关键决定写进 notes/,一个决定一个文件。"
)
WORKBENCH_OUTSIDE = "工作台在仓库之外:一律用绝对路径访问,不要用相对路径。"

# -- handoff -----------------------------------------------------------------------------------
HANDOFF_PROMPT = """上下文快满了(已用约 {used} / {window} tokens)。先停下手头的工作,为接手的新会话写一份交接文档。
接手的是一个全新的会话,看不到我们之前的任何对话,只能看到这份文档和工作区本身。不要再开始新的工作,直接写。

只输出下面五个标题(用 ## 标题,顺序不变):

## 在做什么
这一步的任务是什么,做到哪了。
## 已定的事
已经做出的决定和理由,接手的人不该再推翻的。
## 走不通的路
试过但不行的做法,以及为什么不行。
## 下一步
接手后马上要做的具体事情,按先后顺序。
## 现场
相关文件路径、分支、正在跑的进程、关键命令和它们输出的要点。

「在做什么」和「下一步」必须写;其余三节没有就写"无",不要编造。
(The context window is nearly full: {used} of {window} tokens. Write the handoff now, with
exactly these five headings; a fresh session with none of this conversation continues from it.)"""
HANDOFF_DEGRADED_MARK = "> 降级交接:上一个会话没能写出交接文档,以下为机械生成。"

# -- runtime -----------------------------------------------------------------------------------
INTERRUPT_NOTE = (
    "\n\n(说明:上面是人中途打断你时说的话。打断时正在进行的工具调用返回 interrupted,"
    "是打断的正常副作用,不是环境故障;不用排查,按人说的继续。)"
)
RESUME_PROMPT = "上一轮在中途被打断,没有做完。先看看工作台里已经记下了什么,从中断的地方接着做,不要从头再来。"

# -- base --------------------------------------------------------------------------------------

# -- oracle ------------------------------------------------------------------------------------
ORACLE_PROMPT = "## 最近的事件\n{events}\n\n## 问题\n{question}"

# -- goal --------------------------------------------------------------------------------------
GOAL_AMEND_NOTE = "【人工修改，与下面清单冲突时以此为准】"

# -- stores ------------------------------------------------------------------------------------
EXPIRED_TEXT = "[此命令的结果已过期(第 {age} 轮前),当前状态可能已变。需要请重新执行]"
INTERRUPTED_RESULT = "[上一轮在此中断,这个工具结果没有产生]"

# -- texts written inline before the move (byte for byte) --------------------------------------
TIMEOUT_TEXT = "在 {span} 内没有人回答。" + ASSUME
TIMEOUT_DEFAULT_TEXT = (
    "在 {span} 内没有人回答,按默认选项「{default}」继续,并把这个假设写进「未知与假设」(assumptions)。"
)
NOBODY_TEXT = "现在没有人可以回答这个问题。" + ASSUME
LIMIT_TEXT = "提问次数已用完(最多 {limit} 次),不能再问了:请自己决定。" + ASSUME
EMPTY_ANSWER = "(空回答)"
SPAN_HOURS, SPAN_MINUTES, SPAN_SECONDS = "{n:g} 小时", "{n:g} 分钟", "{n:g} 秒"

ACCEPT = "接受这个结果,就这样往下走"
AMEND_GOAL = "修改目标"
JUDGED_WRONG = "你判错了,继续做"
MISSING_JOIN = "、"
NO_RUNTIME = "拿不到 Runtime,无法判定目标"
NO_REPORT = "(无)"
NO_REASON = "(没有给出理由)"
UNREACHABLE_UNANSWERED = "目标判定为达不成,没人回答怎么办({state});停下。"
NO_NEW_GOAL = "要修改目标,但没拿到新的目标;停下。"
GOAL_AMENDED = "目标已修改:{said}"
JUDGED_WRONG_REASON = "人认为判定有误:{said}"

ASK_RETRY, ASK_CONTINUE, ASK_STOP = "重试这一步", "跳过,继续下一步", "停下"
STEP_FAILED_QUESTION = "步骤「{step}」没有通过:{why}\n怎么办?"

SEE_BRIEF = "(见已有需求)"
AMEND_LABEL = "唤醒时追加"
WORKER_PROMPT = "你负责实现。每改一处就跑一次验证,别攒到最后。"
WORKER_DESCRIPTION = "写代码、跑验证的执行者"
COORDINATOR_NAME = "协调者"
ORACLE_NAME = "旁路问答"
NO_EVENTS = "(还没有事件)"
THIS_ROLE = "这个角色"
INTERRUPTED_SAID = "(继续)"

WORKBENCH_HEAD = "## 工作台\n\n工作台位置:{root}"
INDEX_HEAD = "# 工作台索引"
INDEX_EMPTY = "(空)"
INDEX_MORE = "- …另有 {n} 个较旧的文件未列出"
INDEX_CUT = "- …列表被截断({why}),部分文件未列出"
INDEX_CUT_WHY = {"entries": "超过 {n} 个条目", "depth": "未进入深于 {n} 层的文件夹", "time": "用时超过 {n} 秒"}

# -- documents: the titles written (the parsers accept both languages' titles and aliases) -----
PLACEHOLDER = "(未填)"
BRIEF_TITLES = {"goal": "目标", "accept": "验收标准", "bounds": "边界", "unknowns": "未知与假设"}
GOAL_TITLES = {"statement": "目标", "checks": "判定清单"}
VERDICT_TITLES = {"state": "结论", "reason": "理由", "failed": "未通过"}
VERDICT_LABELS = {"achieved": "达成", "not_yet": "未达成", "unreachable": "无法达成"}
HANDOFF_TITLES = {"doing": "在做什么", "decided": "已定的事", "deadends": "走不通的路", "next": "下一步", "scene": "现场"}
GOAL_AMEND_CHECK = "符合人工修改：{said}"

FEEDBACK_HEADS = {
    "not_yet": "独立判定者认为目标还没有达成。",
    "unreachable": "独立判定者认为目标无法达成或在此环境无法验证，但已确认继续。",
    "achieved": "独立判定者认为目标已达成，但这一轮仍被要求继续。",
    "": "独立判定者没有给出明确结论，按未达成处理。",
}
FEEDBACK_GO_ON = "请在当前会话里接着做，针对下面的问题补齐，不要从头重来；做完自己先验证一遍。"
FEEDBACK_REASON = "理由：\n{reason}"
FEEDBACK_FAILED = "没通过的检查项：\n{failed}"

HANDOFF_FILE_TITLE = "# 交接 · {step}"
HANDOFF_FILE_UNTITLED = "# 交接"
HANDOFF_THIS_STEP = "步骤「{step}」"
HANDOFF_SOME_STEP = "这一步"
HANDOFF_CONTINUE = (
    "这是接续:上一个会话在做{step}时上下文满了,换成了你这个新会话。"
    "你看不到它的对话记录,只有下面这份它留下的交接文档和工作区本身。"
    "先核对「现场」,再从「下一步」接着做,不要从头重来,也不要推翻「已定的事」。"
)
HANDOFF_CONTINUE_NOTE = (
    "(Continuation: the previous session of step {step} filled its context "
    "window; continue from its handoff below, do not start over.)"
)
HANDOFF_DEGRADED_NOTE = "注意:这份交接是机械生成的,上一个会话没能自己写。动手前先看清工作区现状。"
DEGRADED_CUT = "\n…(原任务更长,已截断)"
DEGRADED_WHY = "(原因:{why})"
DEGRADED_DOING = "继续步骤「{step}」的原任务。上一个会话的上下文满了,没能写出交接文档{reason}。"
DEGRADED_NEXT = (
    "先看工作区现状(git status / git log、最近改过的文件、notes/ 下的笔记),"
    "弄清做到了哪里,再接着完成下面「现场」里的原任务;已经做完的不要重做。"
)
DEGRADED_SCENE = "原任务{cut}:\n\n{fence}text\n{excerpt}\n{fence}"
DEGRADED_SCENE_CUT = "(前 1200 字)"
HANDOFF_NOTE_FILE = "交接-{step}.md"
HANDOFF_ARCHIVE = "交接"

# -- images and files people share (new texts: the spec has none) ------------------------------
IMAGE_LABEL = "图片:{name}"
IMAGE_LEFT_OUT = "[这里原有图片 {name},恢复会话时省略了:需要时用 Read 重新打开这个文件]"
IMAGE_LEFT_OUT_UNNAMED = "[这里原有一张图片,恢复会话时省略了。人分享的文件在工作台的 inbox/(默认 .flower/inbox/):需要时用 Read 重新打开]"
SHARED_IMAGES = "\n\n(随这段话分享的文件:{names}。用 Read 工具打开。)"
SHARED_FILES_RULES = """\
人给的文件和要交给人的文件:
- 人分享给你的文件(截图、日志、文档)在 {inbox};图片用 Read 工具打开查看。
- 要交给人的文件(图表、截图、报告)放进 {outbox}:请求结束时会发给对方(最多 10 个文件,不能是符号链接)。"""
