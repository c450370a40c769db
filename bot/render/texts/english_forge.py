"""The bot's sentences about repositories and the forge (``/repo``, branches, pull requests and
what comes back from them), in English: part of ``en.py``'s table, which imports them all."""

from __future__ import annotations

from bot.core.outside_text import Sentence

# -- Channel repositories: /repo, the branch a thread made, Push and Diff --------------------

BOUND_NOW = ":link: *This channel is now bound to a repository.*"
BOUND = ":link: *This channel's repository*"
BINDING = "Source: `{source}`\nBase branch: `{base}`\nPath: `{path}`"
BINDING_FALLBACK = "{head} Source: {source} · base {base} · path {path}"
BINDING_TAIL = "Each new thread here works on its own branch in its own worktree."
NOT_BOUND = "This channel is not bound to a repository: threads work in plain folders. {how}"
HOW_TO_BIND = "Bind one with `@flower /repo <path or git URL> [base branch]`."
NO_ADMINS_TO_BIND = "Only admins (FLOWER_ADMINS) can bind one from Slack; none are set, so add one, or edit repos.json."
NO_ADMINS = ("Nobody may bind a repository from Slack: FLOWER_ADMINS is empty. Whoever runs this bot can "
             "set FLOWER_ADMINS to member IDs, or bind by hand in FLOWER_HOME/repos.json.")
ADMINS_ONLY = "Sorry {who}, only admins (FLOWER_ADMINS) may bind a repository to a channel."
NOT_BOUND_ERROR = Sentence(":x: Not bound: {error}")
REPO_ERROR = Sentence(":x: {error}")
BRANCH_HEAD = ":seedling: *Branch `{branch}`*"
NO_COMMITS = "_no commits yet_"
EARLIER_COMMITS = "_… {n} earlier commit(s)_"
UNCOMMITTED = ":warning: {n} uncommitted file(s) are not in the branch."
BRANCH_FALLBACK = "Branch {branch}: {n} commit(s). {diffstat}"
PUSH_BUTTON = "Push branch"
DIFF_BUTTON = "Diff as file"
WORKTREE_GONE = ("this thread's worktree is gone (cleaned up, or started over); its branch is "
                 "still in the repository. Push it from there with git.")
NOWHERE_TO_PUSH = ("this channel is no longer bound to a repository, so there is nowhere to push. "
                   "Bind it again with `@flower /repo`.")
PUSHED = ":rocket: {who} pushed `{branch}` (commit `{commit}`) to `{remote}`."
PUSH_NAMES_NO_BRANCH = ("this Push button names no branch (an older message); press Push on the newest "
                        "branch summary in this thread.")
DIFF_TITLE = "Diff of {branch}"

# -- Pull requests: opened from the branch message, kept in step by follow-ups ---------------
# {noun}: "pull request" (GitHub) or "merge request" (GitLab); {ref}: "#12" or "!12"

PR_BUTTON = "Open {noun}"
DRAFT_PR_BUTTON = "Open draft {short}"
PR_OPENED = ":link: {who} opened {noun} <{url}|{ref}> for `{branch}` against `{base}`."
PR_OPENED_BY_ITSELF = ":link: Opened {noun} <{url}|{ref}> for `{branch}` against `{base}` (FLOWER_AUTO_PR)."
PR_REUSED = ":link: `{branch}` already has {noun} <{url}|{ref}>: pushed to it, and follow-ups here keep it updated."
PR_UPDATED = ":arrows_counterclockwise: Pushed {n} new commit(s) to `{branch}` and commented the new verdict on <{url}|{ref}>."
PR_ENDED = (":information_source: {noun_cap} <{url}|{ref}> was {state} on {forge}, so this thread no longer "
            "updates it. Write `/new <request>` here to start a new branch and a new {noun}.")
PR_FAILED = Sentence(":x: Could not open the {noun}: {error}")
PR_UPDATE_FAILED = Sentence(":warning: Could not update {noun} {ref}: {error}")
PR_NAMES_NO_BRANCH = ("this button names no branch (an older message); press it on the newest branch "
                      "summary in this thread.")
PR_NOT_A_FORGE = ("this channel's repository is not on a forge flower knows (GitHub or GitLab), so it cannot "
                  "open a pull request there; Push branch still works.")
PR_LINK = "View {ref}"
NO_CHANGES = "(no changes)\n"  # the uploaded diff when the branch changed nothing
DIFF_CUT = "\n[the diff is cut here at {mb} MB; run `git diff` in the thread's worktree for the rest]\n"
DIFF_NOT_UPLOADED = ("the diff could not be uploaded ({error}). Press Diff again in a moment, or run "
                     "`git diff` in the thread's worktree.")

# -- What the forge calls a pull request, and how one ended ----------------------------------

FORGE_NOUN = {"github": "pull request", "gitlab": "merge request"}
PR_STATE = {"merged": "merged", "closed": "closed"}  # {state} of PR_ENDED

# -- A pull request's body and a follow-up's comment, in the forge's markdown (bot.render.pull_request)

PR_BODY_OPENED = "Opened by flower from {link} on branch `{branch}`."
PR_BODY_CHECKS = "## Checks"
PR_BODY_REASON = "## The judge's reason"
PR_BODY_BRIEF = "## Confirmed requirement"
PR_BODY_STATE = {"passed": "passed", "failing": "**failing**", "pending": "not judged yet",
                 "unverifiable": "cannot be verified here"}
PR_BODY_NO_CHECKS = "_The goal has no checks._"
PR_COMMENT_HEAD = "A follow-up in {link} pushed {n} new commit(s):"
PR_COMMENT_NO_COMMITS = "- (none)"
PR_COMMENT_ACHIEVED = "**Verdict: achieved.**"
PR_COMMENT_NOT_YET = "**Verdict: not achieved yet.**"
PR_TOTALS_ACHIEVED = "_Goal achieved after {rounds} judged round(s); cost ${cost:.2f}._"
PR_TOTALS_NOT_ACHIEVED = "_Goal not achieved after {rounds} judged round(s); cost ${cost:.2f}._"
PR_THREAD_LINK = "[the Slack thread]({url})"
PR_THREAD_UNKNOWN = "a Slack thread"  # no permalink

# -- What comes back from an open pull request (bot.render.pr_feedback) ------------------------------

PR_REVIEW_HEAD = ":speech_balloon: New on <{url}|{ref}>:"
PR_REMARK_LINE = "> *{author}* on `{where}`: “{said}”"
PR_REMARK_REVIEW = "> *{author}* {verdict}: “{said}”"
PR_REMARK_REVIEW_BARE = "> *{author}* {verdict}."
PR_REMARK_COMMENT = "> *{author}*: “{said}”"
PR_VERDICT = {"approved": "approved", "changes_requested": "requested changes", "commented": "reviewed"}
PR_REVIEW_AUTO = "Working on it here as a follow-up."
PR_REVIEW_ASK = "Press *Work on this* to have it worked on here."
PR_WORK_BUTTON = "Work on this"
PR_WORK_TAKEN = "This was already taken up."  # a second click, or one after the follow-up began by itself
PR_WORK_GONE = "This can no longer be worked on here: the pull request was closed, or a newer post replaced it."
PR_WORK_NOT_NOW = "Another run is starting in this thread just now; press *Work on this* again in a moment."
PR_IGNORED = (":no_entry_sign: A comment on <{url}|{ref}> by *{author}* was not passed on: only people with write "
              "access to the repository, or named in this channel's policy (`pr_allowed_users`), steer the work "
              "from the pull request. Later ones are ignored without a word.")
PR_CHECKS_FAILED = (":x: A check failed on `{sha}` of <{url}|{ref}>:", ":x: {n} checks failed on `{sha}` of <{url}|{ref}>:")
PR_CHECK_LINE = "> *{name}*: {summary}"
PR_CHECK_DETAILS = " (<{link}|details>)"
PR_CHECKS_PASS = ":white_check_mark: The checks pass on `{sha}` of <{url}|{ref}>."
PR_UNREACHABLE = Sentence(":warning: Could not read the reviews and checks of {noun} {ref}: {error} Trying again later.")
PR_REPLY = "Addressed in {sha} by a follow-up from {link}."
PR_REPLIED = "Worked on the review feedback: {links}."  # the follow-up's comment, when it answered remarks
