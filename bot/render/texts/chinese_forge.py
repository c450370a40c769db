"""The bot's sentences about repositories and the forge (``/repo``, branches, pull requests and
what comes back from them), in Simplified Chinese: part of ``zh.py``'s table, which imports them all."""

from __future__ import annotations

from bot.core.outside_text import Sentence

# -- Channel repositories: /repo, the branch a thread made, Push and Diff --------------------

BOUND_NOW = ":link: *这个频道现在绑定了一个仓库。*"
BOUND = ":link: *这个频道的仓库*"
BINDING = "来源： `{source}`\n基准分支： `{base}`\n路径： `{path}`"
BINDING_FALLBACK = "{head} 来源：{source} · 基准分支 {base} · 路径 {path}"
BINDING_TAIL = "这里的每个新线程都在自己的 worktree 里、用自己的分支工作。"
NOT_BOUND = "这个频道没有绑定仓库：线程在普通文件夹里工作。{how}"
HOW_TO_BIND = "用 `@flower /repo <路径或 git URL> [基准分支]` 绑定一个。"
NO_ADMINS_TO_BIND = "只有管理员（FLOWER_ADMINS）能在 Slack 里绑定仓库；目前一个都没有设置，请添加一个，或者直接编辑 repos.json。"
NO_ADMINS = ("没有人能在 Slack 里绑定仓库：FLOWER_ADMINS 为空。运行这个机器人的人可以把 FLOWER_ADMINS "
             "设为成员 ID，或者手动在 FLOWER_HOME/repos.json 里绑定。")
ADMINS_ONLY = "抱歉 {who}，只有管理员（FLOWER_ADMINS）能给频道绑定仓库。"
NOT_BOUND_ERROR = Sentence(":x: 没有绑定：{error}")
REPO_ERROR = Sentence(":x: {error}")
BRANCH_HEAD = ":seedling: *分支 `{branch}`*"
NO_COMMITS = "_还没有提交_"
EARLIER_COMMITS = "_… 还有 {n} 个更早的提交_"
UNCOMMITTED = ":warning: 有 {n} 个未提交的文件不在分支里。"
BRANCH_FALLBACK = "分支 {branch}：{n} 个提交。{diffstat}"
PUSH_BUTTON = "推送分支"
DIFF_BUTTON = "下载 diff 文件"
WORKTREE_GONE = "这个线程的 worktree 已经不在了（被清理了，或者重新开始过）；它的分支还在仓库里，请在那里用 git 推送。"
NOWHERE_TO_PUSH = "这个频道已经不再绑定仓库，没有地方可以推送。用 `@flower /repo` 重新绑定。"
PUSHED = ":rocket: {who} 把 `{branch}`（提交 `{commit}`）推送到了 `{remote}`。"
PUSH_NAMES_NO_BRANCH = "这个推送按钮没有指明分支（是旧消息）；请在这个线程里最新的分支摘要上点推送。"
DIFF_TITLE = "{branch} 的 diff"

# -- Pull requests: opened from the branch message, kept in step by follow-ups ---------------
# {noun}: FORGE_NOUN's word for the forge; {ref}: "#12" or "!12"

PR_BUTTON = "创建 {noun}"
DRAFT_PR_BUTTON = "创建草稿 {short}"
PR_OPENED = ":link: {who} 为 `{branch}` 创建了 {noun} <{url}|{ref}>，目标分支 `{base}`。"
PR_OPENED_BY_ITSELF = ":link: 已为 `{branch}` 创建 {noun} <{url}|{ref}>，目标分支 `{base}`（FLOWER_AUTO_PR）。"
PR_REUSED = ":link: `{branch}` 已经有 {noun} <{url}|{ref}>：已推送到它上面，这里的后续追加会持续更新它。"
PR_UPDATED = ":arrows_counterclockwise: 向 `{branch}` 推送了 {n} 个新提交，并在 <{url}|{ref}> 上评论了新的结论。"
PR_ENDED = (":information_source: {noun_cap} <{url}|{ref}> 已在 {forge} 上被{state}，这个线程不再更新它。"
            "在这里发 `/new <请求>` 可以开一个新分支和新的 {noun}。")
PR_FAILED = Sentence(":x: 无法创建 {noun}：{error}")
PR_UPDATE_FAILED = Sentence(":warning: 无法更新 {noun} {ref}：{error}")
PR_NAMES_NO_BRANCH = "这个按钮没有指明分支（是旧消息）；请在这个线程里最新的分支摘要上点它。"
PR_NOT_A_FORGE = ("这个频道的仓库不在 flower 认识的代码托管平台上（GitHub 或 GitLab），所以无法在那里创建 PR；"
                  "推送分支仍然可用。")
PR_LINK = "查看 {ref}"
NO_CHANGES = "（没有改动）\n"
DIFF_CUT = "\n[diff 在 {mb} MB 处截断；其余部分请在线程的 worktree 里运行 `git diff` 查看]\n"
DIFF_NOT_UPLOADED = "diff 上传失败（{error}）。稍后再点一次 diff，或者在线程的 worktree 里运行 `git diff`。"


# -- What the forge calls a pull request, and how one ended ----------------------------------

FORGE_NOUN = {"github": "PR", "gitlab": "MR"}  # what Chinese teams say for both
PR_STATE = {"merged": "合并", "closed": "关闭"}

# -- A pull request's body and a follow-up's comment, in the forge's markdown (bot.render.pull_request)

PR_BODY_OPENED = "由 flower 从 {link} 创建，分支 `{branch}`。"
PR_BODY_CHECKS = "## 检查项"
PR_BODY_REASON = "## 评审的理由"
PR_BODY_BRIEF = "## 已确认的需求"
PR_BODY_STATE = {"passed": "通过", "failing": "**未通过**", "pending": "尚未评判", "unverifiable": "这里无法验证"}
PR_BODY_NO_CHECKS = "_目标没有检查项。_"
PR_COMMENT_HEAD = "{link}中的一次追加推送了 {n} 个新提交："
PR_COMMENT_NO_COMMITS = "- （无）"
PR_COMMENT_ACHIEVED = "**结论：已达成。**"
PR_COMMENT_NOT_YET = "**结论：尚未达成。**"
PR_TOTALS_ACHIEVED = "_经过 {rounds} 轮评审，目标已达成；花费 ${cost:.2f}。_"
PR_TOTALS_NOT_ACHIEVED = "_经过 {rounds} 轮评审，目标未达成；花费 ${cost:.2f}。_"
PR_THREAD_LINK = "[Slack 线程]({url})"
PR_THREAD_UNKNOWN = "一个 Slack 线程"

# -- 打开的拉取请求上传回来的内容（bot.render.pr_feedback） -----------------------------------------

PR_REVIEW_HEAD = ":speech_balloon: <{url}|{ref}> 上有新内容："
PR_REMARK_LINE = "> *{author}* 在 `{where}`：“{said}”"
PR_REMARK_REVIEW = "> *{author}* {verdict}：“{said}”"
PR_REMARK_REVIEW_BARE = "> *{author}* {verdict}。"
PR_REMARK_COMMENT = "> *{author}*：“{said}”"
PR_VERDICT = {"approved": "批准了", "changes_requested": "要求修改", "commented": "评审了"}
PR_REVIEW_AUTO = "正在这里作为追加请求处理。"
PR_REVIEW_ASK = "点 *处理它*，就在这里处理这些意见。"
PR_WORK_BUTTON = "处理它"
PR_WORK_TAKEN = "这些意见已经有人开始处理了。"
PR_WORK_GONE = "这些意见已无法在这里处理：拉取请求已关闭，或有更新的消息取代了它。"
PR_WORK_NOT_NOW = "这个线程里正有另一个运行在启动；请稍后再点一次 *处理它*。"
PR_IGNORED = (":no_entry_sign: <{url}|{ref}> 上 *{author}* 的评论没有转达：只有对仓库有写权限、或在本频道策略"
              "（`pr_allowed_users`）中列出的人，才能从拉取请求指导这项工作。之后的此类评论将直接忽略，不再提示。")
PR_CHECKS_FAILED = (":x: <{url}|{ref}> 的 `{sha}` 上有一项检查失败：", ":x: <{url}|{ref}> 的 `{sha}` 上有 {n} 项检查失败：")
PR_CHECK_LINE = "> *{name}*：{summary}"
PR_CHECK_DETAILS = "（<{link}|详情>）"
PR_CHECKS_PASS = ":white_check_mark: <{url}|{ref}> 的 `{sha}` 上检查全部通过。"
PR_UNREACHABLE = Sentence(":warning: 无法读取 {noun} {ref} 的评审和检查：{error} 稍后再试。")
PR_REPLY = "已在 {sha} 中处理，来自 {link} 的一次追加。"
PR_REPLIED = "已处理评审意见：{links}。"
